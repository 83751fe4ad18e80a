"""Agents: the Agent interface, RandomAgent and make_agent's spec strings."""

from __future__ import annotations

import doctest

import pytest

import ggp
import ggp.agents
import ggp.agents.base
import ggp.agents.uniform
from conftest import GAME_NAMES
from ggp.agents import AGENTS, Agent, RandomAgent, agent_options, make_agent


def play_out(game: ggp.Game, agents: dict[str, Agent]) -> list[tuple[ggp.Move, ...]]:
    """Play one game with ``agents``; every move must be legal. Returns the joint moves."""
    for role, agent in agents.items():
        agent.start(game, role)
    state = game.initial_state()
    history = []
    while not game.is_terminal(state):
        joint = []
        for role in game.roles:
            move = agents[role].select_move(state)
            assert move in game.legal_moves(state, role), f"{game.name}: {role} chose illegal {move}"
            joint.append(move)
        history.append(tuple(joint))
        state = game.next_state(state, joint)
        assert len(history) < 10_000, "the game does not end"
    for agent in agents.values():
        agent.stop(state, game.goals(state))
    return history


# --- make_agent -----------------------------------------------------------------------------------
def test_make_agent_plain_name() -> None:
    agent = make_agent("random")
    assert type(agent) is RandomAgent
    assert agent.seed is None


def test_make_agent_with_option() -> None:
    agent = make_agent("random:seed=3")
    assert isinstance(agent, RandomAgent)
    assert agent.seed == 3


def test_make_agent_is_lenient_about_case_and_spaces() -> None:
    agent = make_agent(" Random : seed = 12 ")
    assert isinstance(agent, RandomAgent)
    assert agent.seed == 12


def test_make_agent_seed_none_text() -> None:
    agent = make_agent("random:seed=none")
    assert isinstance(agent, RandomAgent)
    assert agent.seed is None


def test_make_agent_defaults_fill_unset_options_only() -> None:
    a = make_agent("random", seed=5)
    b = make_agent("random:seed=2", seed=5)
    c = make_agent("random", depth=3)  # an option random does not take: ignored
    assert isinstance(a, RandomAgent) and a.seed == 5
    assert isinstance(b, RandomAgent) and b.seed == 2
    assert isinstance(c, RandomAgent) and c.seed is None


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (
            "minimax",
            "the known agents are: amazons (options: time, sims, c, seed, reuse,",
        ),
        ("", "empty agent spec"),
        (":seed=1", "empty agent spec"),
        ("random:depth=3", "its options are: seed"),
        ("random:seed", "not of the form key=value"),
        ("random:=3", "not of the form key=value"),
        ("random:seed=abc", "random: seed must be an int from 0 to 9223372036854775807, or none, got 'abc'"),
        ("random:seed=1.5", "random: seed must be an int from 0 to 9223372036854775807, or none, got 1.5"),
        ("random:seed=1,seed=2", "given twice"),
    ],
)
def test_make_agent_errors(spec: str, needle: str) -> None:
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    assert needle in str(info.value)


def test_make_agent_rejects_non_strings() -> None:
    with pytest.raises(ValueError, match="agent spec is a string"):
        make_agent(3)  # type: ignore[arg-type]


class _Tunable(Agent):
    """A test agent with options of several types."""

    name = "tunable"

    def __init__(self, depth: int = 1, c: float = 1.4, greedy: bool = False, label: str | None = None) -> None:
        super().__init__()
        self.depth, self.c, self.greedy, self.label = depth, c, greedy, label

    def select_move(self, state: ggp.State, time_limit: float | None = None) -> ggp.Move:
        return self.game.legal_moves(state, self.role)[0]


def test_registry_plugs_in_new_agents_with_typed_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(AGENTS, "tunable", _Tunable)
    assert agent_options("tunable") == {"depth": int, "c": float, "greedy": bool, "label": str | None}
    agent = make_agent("tunable:depth=4,c=0.5,greedy=yes,label=x1")
    assert isinstance(agent, _Tunable)
    assert (agent.depth, agent.c, agent.greedy, agent.label) == (4, 0.5, True, "x1")
    agent = make_agent("tunable:greedy=off,label=none")
    assert isinstance(agent, _Tunable)
    assert (agent.depth, agent.greedy, agent.label) == (1, False, None)
    with pytest.raises(ValueError, match="tunable: greedy must be true or false, got 'maybe'"):
        make_agent("tunable:greedy=maybe")
    with pytest.raises(ValueError, match=r"random .*tunable"):
        make_agent("nope")


# --- the Agent interface ----------------------------------------------------------------------------
def test_agent_is_abstract() -> None:
    with pytest.raises(TypeError):
        Agent()  # type: ignore[abstract]


def test_agent_needs_start_before_moving() -> None:
    game = ggp.load("wallmaze")
    agent = RandomAgent(seed=1)
    with pytest.raises(RuntimeError, match="start"):
        agent.select_move(game.initial_state())
    with pytest.raises(RuntimeError, match="start"):
        _ = agent.role


def test_agent_start_records_game_role_and_clocks() -> None:
    game = ggp.load("bomberman2p")
    agent = RandomAgent()
    agent.start(game, "bomberwoman", start_clock=30.0, play_clock=5.0)
    assert agent.game is game
    assert agent.role == "bomberwoman"
    assert (agent.start_clock, agent.play_clock) == (30.0, 5.0)


def test_agent_start_rejects_unknown_role() -> None:
    with pytest.raises(ValueError, match="its roles are white, black"):
        RandomAgent().start(ggp.load("wallmaze"), "red")


@pytest.mark.parametrize("module", [ggp.agents, ggp.agents.base, ggp.agents.uniform])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module, verbose=False)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0


# --- RandomAgent -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", GAME_NAMES)
def test_random_agent_plays_only_legal_moves(name: str) -> None:
    game = ggp.load(name)
    for seed in range(3):
        history = play_out(game, {role: RandomAgent(seed=10 * seed + i) for i, role in enumerate(game.roles)})
        assert len(history) > 0


@pytest.mark.parametrize("name", GAME_NAMES)
def test_random_agent_same_seed_same_moves(name: str) -> None:
    game = ggp.load(name)
    first = play_out(game, {role: RandomAgent(seed=7 + i) for i, role in enumerate(game.roles)})
    second = play_out(game, {role: RandomAgent(seed=7 + i) for i, role in enumerate(game.roles)})
    other = play_out(game, {role: RandomAgent(seed=1000 + i) for i, role in enumerate(game.roles)})
    assert first == second
    assert first != other


def test_random_agent_covers_all_moves() -> None:
    game = ggp.load("amazons_8x8")
    state = game.initial_state()
    agent = RandomAgent(seed=0)
    agent.start(game, "white")
    legal = set(game.legal_moves(state, "white"))
    seen = {agent.select_move(state) for _ in range(2000)}
    assert seen == legal  # 60 moves, 2000 draws: uniform choice reaches them all


def test_random_agent_plays_noop_when_idle() -> None:
    game = ggp.load("amazons_8x8")
    agent = RandomAgent(seed=3)
    agent.start(game, "black")
    assert str(agent.select_move(game.initial_state())) == "noop"


# --- choose: a Limit in, a Choice out ------------------------------------------------------------------------
def test_an_agent_that_only_selects_moves_answers_choose_with_its_move() -> None:
    game = ggp.load("wallmaze")
    agent = RandomAgent(seed=1)
    agent.start(game, "white")
    choice = agent.choose(game.initial_state(), ggp.agents.Limit(time=1.0))
    assert choice.move in game.legal_moves(game.initial_state(), "white")
    assert choice.policy == () and dict(choice.info) == {}


def test_mcts_chooses_with_the_visits_of_every_legal_move_and_its_figures() -> None:
    game = ggp.load("wallmaze")
    agent = make_agent("mcts:sims=300,seed=2,threads=1")
    agent.start(game, "white")
    state = game.initial_state()
    choice = agent.choose(state, ggp.agents.Limit())
    legal = game.legal_moves(state, "white")
    assert sorted(m for m, _ in choice.policy) == sorted(legal)  # one entry per legal move
    assert sum(v for _, v in choice.policy) <= choice.info["simulations"] and choice.info["simulations"] >= 300
    assert choice.move in legal and 0.0 <= choice.info["value"] <= 100.0
    # one legal move (black waits while white moves in Amazons): nothing to decide, no search, no policy
    amazons = ggp.load("amazons_8x8")
    agent.start(amazons, "black")
    waiting = agent.choose(amazons.initial_state())
    assert waiting.move.text == "noop" and waiting.policy == ()


def test_the_caller_plays_a_choice_and_judges_what_else_an_agent_answers() -> None:
    import random

    from ggp.match.calls import Caller

    game = ggp.load("wallmaze")
    state = game.initial_state()

    class Answers(Agent):
        def __init__(self, answer: object) -> None:
            super().__init__()
            self.answer = answer

        def select_move(self, state: ggp.State, time_limit: float | None = None) -> ggp.Move:
            raise AssertionError("the caller asks choose")

        def choose(self, state: ggp.State, limit: ggp.agents.Limit = ggp.agents.Limit()) -> ggp.agents.Choice:  # type: ignore[override]  # noqa: B008
            return self.answer  # type: ignore[return-value]

    east = game.parse_move("(move 2 5 3 5)")
    for answer, kind in [
        (ggp.agents.Choice(east), None),
        (ggp.agents.Choice(game.parse_move("(move 2 5 2 6)")), "illegal"),
        ("(move 2 5 3 5)", "not_a_move"),
    ]:
        agent = Answers(answer)
        agent.start(game, "white")
        move, _, fault, _ = Caller().ask(agent, game, state, "white", clock=None, rng=random.Random(1))
        assert (fault.kind if fault else None) == kind
        assert move in game.legal_moves(state, "white") and (kind is not None or move == east)
