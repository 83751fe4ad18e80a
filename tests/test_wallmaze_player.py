"""The wall maze player: its table of best replies to a random opponent is exact, it tells a
random opponent from a racer by their moves, and it plays legal moves whichever it meets."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

import ggp
from ggp.agents import make_agent
from ggp.core.game import State
from ggp.games.wallmaze.player import RACER_GREED, OpponentModel, move_chances, reply_values, table
from ggp.games.wallmaze.rules import apply as apply_moves
from ggp.games.wallmaze.rules import cell, legal

GAME = ggp.load("wallmaze")


def reference_value(start: State, role: int) -> float:
    """Role's best expected goal against uniformly random play, by plain recursion over the Game API."""
    me, other = GAME.roles[role], GAME.roles[1 - role]

    @functools.cache
    def value(state: State) -> float:
        if GAME.is_terminal(state):
            return GAME.goals(state)[role]
        theirs = GAME.legal_moves(state, other)
        best = 0.0
        for mine in GAME.legal_moves(state, me):
            joints = [(mine, t) if role == 0 else (t, mine) for t in theirs]
            best = max(best, sum(value(GAME.next_state(state, list(j))) for j in joints) / len(theirs))
        return best

    return value(start)


def reference_hold(start: State, role: int) -> float:
    """The least goal of ``role`` the other can make sure of, moving first, by recursion over the Game API."""
    me, other = GAME.roles[role], GAME.roles[1 - role]

    @functools.cache
    def value(state: State) -> float:
        if GAME.is_terminal(state):
            return GAME.goals(state)[role]
        least = 100.0
        for first in GAME.legal_moves(state, other):
            joints = [(first, m) if role == 1 else (m, first) for m in GAME.legal_moves(state, me)]
            least = min(least, max(value(GAME.next_state(state, list(j))) for j in joints))
        return least

    return value(start)


def position(white: tuple[int, int], black: tuple[int, int], step: int, white_arrived: int = 0) -> State:
    doc = {"white": list(white), "black": list(black), "step": step, "white_arrived": white_arrived}
    return GAME.state_from_dict(doc)


def test_the_table_starts_at_the_published_bound_for_either_role() -> None:
    value = table(0.0)
    s = GAME.initial_state().array  # type: ignore[attr-defined]
    assert round(value[0, 1, s[0], s[1]], 2) == round(value[1, 1, s[0], s[1]], 2) == 92.25


@pytest.mark.parametrize(
    ("white", "black", "step", "white_arrived"),
    [
        ((10, 5), (4, 5), 25, 0),  # both can arrive, in either order or together
        ((12, 5), (3, 5), 26, 20),  # white is home: black plays for 25 against 0
        ((7, 5), (9, 5), 23, 0),  # face to face in the lane
        ((11, 5), (4, 4), 26, 0),
    ],
)
def test_the_table_matches_a_plain_search_near_the_end(
    white: tuple[int, int], black: tuple[int, int], step: int, white_arrived: int
) -> None:
    value = table(0.0)
    state = position(white, black, step, white_arrived)
    for role in (0, 1):
        assert value[role, step, cell(*white), cell(*black)] == pytest.approx(reference_value(state, role))


@pytest.mark.parametrize(
    ("white", "black", "step"),
    [((4, 5), (7, 5), 25), ((9, 5), (6, 5), 25), ((4, 7), (5, 8), 24), ((10, 4), (7, 5), 25)],
)
def test_the_hold_table_matches_a_plain_search_near_the_end(
    white: tuple[int, int], black: tuple[int, int], step: int
) -> None:
    hold = table(None)
    state = position(white, black, step)
    for role in (0, 1):
        assert hold[role, step, cell(*white), cell(*black)] == pytest.approx(reference_hold(state, role))


@pytest.mark.parametrize("opponent", ["random", "racer"])
def test_a_player_that_cannot_arrive_keeps_the_opponent_out_of_its_lane(opponent: str) -> None:
    for seed in range(5):
        rng = random.Random(seed)
        agent = make_agent("wallmaze:sims=30", seed=seed)
        agent.start(GAME, "white")
        agent._opponent.p_random = 0.0  # type: ignore[attr-defined]  # searching, and so unsure what to do
        state = position((4, 6), (6, 5), 23)  # white cannot arrive; black can, past (4, 5)
        buf, chances = np.empty(5, dtype=np.int64), np.empty(5)
        while not GAME.is_terminal(state):
            s = state.array  # type: ignore[attr-defined]
            n = move_chances(s, 1, 0.0 if opponent == "random" else 1.0, buf, chances)
            theirs = GAME.action_text(s, 1, int(rng.choices(buf[:n], weights=chances[:n])[0]))  # type: ignore[attr-defined]
            state = GAME.next_state(state, [agent.select_move(state), theirs])
        assert GAME.goals(state) == (0, 0)


def test_a_player_that_cannot_arrive_stays_in_the_opponents_way() -> None:
    agent = make_agent("wallmaze:sims=30", seed=1)
    agent.start(GAME, "white")
    state = position((4, 6), (5, 5), 24)  # white cannot arrive; black needs 3 steps, through (4, 5)
    s = state.array  # type: ignore[attr-defined]
    spoil = agent._spoil  # type: ignore[attr-defined]
    for given in ("noop", "(move 4 6 4 7)", "(move 4 6 4 5)"):  # waiting or leaving lets black by
        assert spoil(s, 0, GAME.parse_move(given)).text == "(move 4 6 4 5)"
    state = position((4, 5), (5, 5), 24)  # in the lane itself, every move keeps black out: any is kept
    for given in ("noop", "(move 4 5 4 6)", "(move 4 5 3 5)"):
        assert spoil(state.array, 0, GAME.parse_move(given)).text == given  # type: ignore[attr-defined]


def test_reply_values_average_the_table_over_random_replies() -> None:
    value = table(0.0)
    s = position((6, 5), (8, 5), 24).array  # type: ignore[attr-defined]
    actions, values = np.empty(5, dtype=np.int64), np.empty(5)
    n = reply_values(value, 0.0, s, 0, actions, values)
    assert max(values[:n]) == pytest.approx(value[0, 24, s[0], s[1]])


def test_racer_chances_favour_the_steps_home() -> None:
    s = position((6, 5), (8, 5), 10).array  # type: ignore[attr-defined]
    actions, chances = np.empty(5, dtype=np.int64), np.empty(5)
    n = move_chances(s, 1, RACER_GREED, actions, chances)
    assert n == 3 and chances[:n].sum() == pytest.approx(1.0)  # east, west, noop: north and south are walls
    west = list(actions[:n]).index(4)
    assert chances[west] == pytest.approx(RACER_GREED + (1 - RACER_GREED) / 3)
    n = move_chances(s, 1, 0.0, actions, chances)
    assert np.allclose(chances[:n], 1 / n)


def play_moves(opponent: str, seed: int, steps: int = 10) -> float:
    """P(random) after ``steps`` steps in which white wanders and black moves as ``opponent`` says."""
    rng = random.Random(seed)
    s = GAME.initial_state().array.copy()  # type: ignore[attr-defined]
    model = OpponentModel(1)
    buf, chances = np.empty(5, dtype=np.int64), np.empty(5)
    for _ in range(steps):
        mine = int(buf[rng.randrange(legal(s, 0, buf))])
        n = move_chances(s, 1, 0.0 if opponent == "random" else 1.0, buf, chances)
        theirs = int(rng.choices(buf[:n], weights=chances[:n])[0])
        before = s.copy()
        apply_moves(s, mine, theirs)
        model.observe(before, s, mine)
    return model.p_random


def test_the_posterior_tells_a_random_opponent_from_a_racer() -> None:
    walkers = [play_moves("random", seed) for seed in range(30)]
    racers = [play_moves("racer", seed) for seed in range(30)]
    assert sum(p > 0.9 for p in walkers) >= 20
    assert all(p < 0.1 for p in racers)


def test_a_collision_is_told_from_a_wait_by_our_own_move() -> None:
    before = position((5, 5), (7, 5), 10).array  # type: ignore[attr-defined]
    after = before.copy()
    apply_moves(after, 3, 4)  # both step into (6, 5): neither moves
    assert list(after[:2]) == list(before[:2])
    # Black has 5 legal moves; a racer steps west (home) with chance RACER_GREED + 0.15 / 5.
    west, wait = RACER_GREED + (1 - RACER_GREED) / 5, (1 - RACER_GREED) / 5
    knowing = OpponentModel(1, p_random=0.5)
    knowing.observe(before, after, 3)  # our step east: only black's step west stopped it
    assert knowing.p_random == pytest.approx(0.2 / (0.2 + west))
    guessing = OpponentModel(1, p_random=0.5)
    guessing.observe(before, after, None)  # both waited, or both stepped into (6, 5)
    assert guessing.p_random == pytest.approx(0.4 / (0.4 + west + wait))
    knowing.observe(before, position((2, 5), (7, 5), 11).array, 3)  # type: ignore[attr-defined]
    assert knowing.p_random == pytest.approx(0.2 / (0.2 + west))  # no such step: no evidence


@pytest.mark.parametrize("opponent", ["random", "mcts:sims=30"])
def test_the_player_moves_legally_through_whole_games(opponent: str) -> None:
    for seat in (0, 1):
        agents = [make_agent("wallmaze:sims=30", seed=seat), make_agent(opponent, seed=seat)]
        if seat:
            agents.reverse()
        for agent, role in zip(agents, GAME.roles, strict=True):
            agent.start(GAME, role)
        state = GAME.initial_state()
        while not GAME.is_terminal(state):
            joint = [agent.select_move(state) for agent in agents]
            assert joint[seat] in GAME.legal_moves(state, GAME.roles[seat])
            state = GAME.next_state(state, joint)


def test_a_player_sure_of_a_random_opponent_plays_the_best_reply() -> None:
    agent = make_agent("wallmaze:sims=30", seed=1)
    agent.start(GAME, "black")
    agent._opponent.p_random = 1.0  # type: ignore[attr-defined]
    state = position((6, 5), (8, 5), 24)
    s = state.array  # type: ignore[attr-defined]
    actions, values = np.empty(5, dtype=np.int64), np.empty(5)
    n = reply_values(table(0.0), 0.0, s, 1, actions, values)
    best = {GAME.action_text(s, 1, int(actions[i])) for i in range(n) if values[i] == max(values[:n])}  # type: ignore[attr-defined]
    assert agent.select_move(state).text in best
