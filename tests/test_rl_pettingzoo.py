"""ggp.rl's PettingZoo environments pass PettingZoo's own checks, for every built-in game and three rule sheets.

PettingZoo's ``max_cycles_test`` and ``parallel_seed_test`` draw actions
without reading the masks, so they run with ``illegal="random"`` (an illegal
action is replaced by a seeded random legal one); every other check reads the
masks and runs with the default ``illegal="raise"``, so an illegal action
would fail it.
"""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, seed_test
from pettingzoo.test.seed_test import parallel_seed_test
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec, turn_based_aec_to_parallel

import ggp
import ggp.rl as rl
from conftest import SHARED
from ggp.core.errors import IllegalMoveError
from ggp.rl.observe import find_grid

SRC = Path(ggp.__file__).resolve().parent
TICTACTOE = str(SRC / "gdl" / "tictactoe.kif")
CONNECT_FOUR = str(SHARED / "corpus" / "kif" / "connectFour.kif")
CONNECT_FOUR_SIM = str(SHARED / "corpus" / "kif" / "connectFourSimultaneous.kif")
GAMES = [*ggp.game_names()[:5], TICTACTOE, CONNECT_FOUR, CONNECT_FOUR_SIM]
CYCLES = 60


# PettingZoo warns about style (agent names like player_0, all-zero masks at the end): not failures
pytestmark = pytest.mark.filterwarnings("ignore")


def _id(g: str) -> str:
    return Path(g).stem


@pytest.mark.parametrize("game", GAMES, ids=_id)
def test_pettingzoo_checks_pass(game: str) -> None:
    api_test(rl.aec_env(game), num_cycles=CYCLES)
    api_test(rl.aec_env(game, skip_idle=False), num_cycles=CYCLES)
    parallel_api_test(rl.parallel_env(game), num_cycles=CYCLES)
    seed_test(lambda: rl.aec_env(game), num_cycles=CYCLES)
    parallel_seed_test(lambda: rl.parallel_env(game, illegal="random"), num_cycles=CYCLES)
    mod = types.SimpleNamespace(
        env=lambda **kw: rl.aec_env(game, skip_idle=False, illegal="random", **kw),
        parallel_env=lambda **kw: rl.parallel_env(game, illegal="random", **kw),
    )
    max_cycles_test(mod)


@pytest.mark.parametrize("game", GAMES, ids=_id)
def test_conversions_between_aec_and_parallel_pass(game: str) -> None:
    api_test(parallel_to_aec(rl.parallel_env(game)), num_cycles=CYCLES)
    parallel_api_test(aec_to_parallel(rl.aec_env(game, skip_idle=False)), num_cycles=CYCLES)
    parallel_api_test(turn_based_aec_to_parallel(rl.aec_env(game)), num_cycles=CYCLES)


def _play_aec(game: str, seed: int) -> tuple[list[str], dict[str, float]]:
    """A random game through the AEC env: the agents selected in turn and the rewards they collected."""
    env = rl.aec_env(game)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    selected: list[str] = []
    total: dict[str, float] = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(10_000):
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        selected.append(agent)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return selected, total


@pytest.mark.parametrize("game", ["amazons_8x8", "bomberman", TICTACTOE, CONNECT_FOUR], ids=_id)
def test_turn_based_aec_selects_only_the_role_to_move(game: str) -> None:
    env = rl.aec_env(game)
    env.reset(seed=0)
    g = env.game
    rng = np.random.default_rng(1)
    for agent in env.agent_iter(400):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        state = env.game_state()
        idle = [r for r in g.roles if [str(m) for m in g.legal_moves(state, r)] == ["noop"]]
        assert agent not in idle, f"{agent} was selected with only noop to play"
        assert len(idle) == len(g.roles) - 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("game", ["wallmaze", "bomberman2p", "amazons_8x8", TICTACTOE, CONNECT_FOUR_SIM], ids=_id)
def test_a_game_through_the_parallel_env_is_the_game_api_s_game(game: str) -> None:
    """Masks, terminal flags and rewards agree with ggp's Game API along random games."""
    env = rl.parallel_env(game)
    g = env.game
    rng = np.random.default_rng(7)
    for episode in range(3):
        obs, _ = env.reset(seed=episode)
        state = g.initial_state()
        while env.agents:
            for role in g.roles:
                legal = sorted(int(a) for a in g.legal_actions(state, role))
                assert np.flatnonzero(obs[role]["action_mask"]).tolist() == legal
            actions = {role: int(rng.choice(np.flatnonzero(obs[role]["action_mask"]))) for role in g.roles}
            obs, rewards, terms, _, _ = env.step(actions)
            state = g.apply_actions(state, [actions[r] for r in g.roles])
            assert all(t == g.is_terminal(state) for t in terms.values())
            if g.is_terminal(state):
                assert rewards == {r: (v - 50) / 50 for r, v in zip(g.roles, g.goals(state), strict=True)}
        assert env.game_state() == state


def test_an_illegal_action_is_refused_with_the_legal_ones_named_or_ends_the_game() -> None:
    env = rl.aec_env("wallmaze")
    env.reset()
    with pytest.raises(IllegalMoveError, match=r"2 is not a legal action for white; legal actions: 3 \(move 2 5 3 5\)"):
        env.step(2)
    assert env.agent_selection == "white"  # nothing changed: the same role still chooses
    lose = rl.aec_env("wallmaze", illegal="lose")
    lose.reset()
    lose.step(2)
    assert lose.terminations == {"white": True, "black": True}
    assert lose.rewards == {"white": -1.0, "black": 0.0}
    par = rl.parallel_env("amazons_8x8")
    par.reset()
    with pytest.raises(ValueError, match="no action for white"):
        par.step({"black": 0})
    with pytest.raises(ValueError, match="render_mode must be"):
        rl.parallel_env("wallmaze", render_mode="human")
    with pytest.raises(ValueError, match="max_cycles must be"):
        rl.parallel_env("wallmaze", max_cycles=0)


def test_a_step_limit_truncates() -> None:
    env = rl.parallel_env("wallmaze", max_cycles=3)
    env.reset()
    for _ in range(3):
        _, rewards, terms, truncs, _ = env.step({"white": 0, "black": 0})
    assert truncs == {"white": True, "black": True} and terms == {"white": False, "black": False}
    assert rewards == {"white": 0.0, "black": 0.0} and env.agents == []


@pytest.mark.parametrize("game", [*ggp.game_names()[:5], TICTACTOE, CONNECT_FOUR_SIM], ids=_id)
def test_render_ansi_and_rgb_array(game: str) -> None:
    text = rl.parallel_env(game, render_mode="ansi")
    text.reset()
    assert text.render() == text.game.render(text.game.initial_state())
    env = rl.aec_env(game, render_mode="rgb_array")
    env.reset()
    before = env.render()
    assert before.dtype == np.uint8 and before.ndim == 3 and before.shape[2] == 3
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    if not env.terminations[env.agent_selection]:
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert not np.array_equal(env.render(), before), "a move changes the picture"


def test_observation_planes_of_the_built_in_games() -> None:
    env = rl.parallel_env("amazons_8x8")
    obs, _ = env.reset()
    white = obs["white"]["observation"]
    assert white.shape == (8, 8, 6)
    assert white[..., 0].sum() == 4 and white[..., 1].sum() == 4 and white[..., 2].sum() == 0
    assert np.array_equal(obs["black"]["observation"][..., 0], white[..., 1])  # egocentric
    assert white[..., 3].all() and not obs["black"]["observation"][..., 3].any()  # white to move
    move = int(np.flatnonzero(obs["white"]["action_mask"])[0])
    obs, *_ = env.step({"white": move, "black": 0})
    white = obs["white"]["observation"]
    assert white[..., 4].all() and white[..., 5].sum() == 1  # fire phase; the amazon that moved fires
    assert np.array_equal(white[..., 5] * white[..., 0], white[..., 5])
    from ggp.games.bomberman.rules import BLOCKED_EAST, BLOCKED_NORTH
    from ggp.games.wallmaze.rules import MAP

    wm = rl.parallel_env("wallmaze")
    obs, _ = wm.reset()
    white, black = obs["white"]["observation"], obs["black"]["observation"]
    assert white.shape == (9, 13, 5)
    assert white[..., 0].tolist() == [[float(ch == "#") for ch in line] for line in MAP]  # row 0 is y = 9
    assert np.allclose(white[..., 4], 1 / 30)  # step 1 of 30
    assert (
        white[4, 1, 1] == white[4, 11, 2] == white[4, 11, 3] == 1
    )  # white at (2,5), black and white's target at (12,5)
    assert black[4, 11, 1] == black[4, 1, 2] == black[4, 1, 3] == 1
    assert white[..., 1:4].sum() == black[..., 1:4].sum() == 3
    bm = rl.parallel_env("bomberman2p")
    obs, _ = bm.reset()
    planes = obs["bomberman"]["observation"]
    north = [[float((x, y) in BLOCKED_NORTH) for x in range(1, 9)] for y in range(8, 0, -1)]
    east = [[float((x, y) in BLOCKED_EAST) for x in range(1, 9)] for y in range(8, 0, -1)]
    assert planes[..., 2].tolist() == north and planes[..., 3].tolist() == east
    assert planes[..., 9].all() and np.allclose(planes[..., 10], 1 / 50) and planes[..., 4:9].sum() == 0
    obs, *_ = bm.step({"bomberman": 6, "bomberwoman": 5})  # bomberman drops a bomb where he stands
    planes = obs["bomberman"]["observation"]
    assert planes[7, 0, 0] == 1 and planes[7, 0, 4] == 1 and planes[0, 7, 1] == 1  # (1,1) bottom left


def test_rule_sheets_give_base_propositions_and_a_board() -> None:
    env = rl.parallel_env(TICTACTOE)
    obs, _ = env.reset()
    o = obs["xplayer"]
    facts = env.game.base_facts
    assert o["observation"].shape == (len(facts),)
    assert [facts[i] for i in np.flatnonzero(o["observation"])] == env.game.state_facts(env.game.initial_state())
    assert o["board"].shape == (3, 3, 3) and o["board"][..., 0].all()  # every cell blank: channel 'b'
    assert find_grid(["(control x)", "(step 1)", "(score a 10)", "(score b 10)"]) is None
    sim = rl.parallel_env(CONNECT_FOUR_SIM)
    obs, _ = sim.reset()
    layout = sim._rg.observer.board
    assert layout is not None and layout.channels == (("1", "black"), ("1", "red"), ("2", "black"), ("2", "red"))


def test_import_ggp_does_not_import_ggp_rl() -> None:
    import subprocess
    import sys

    code = "import sys, ggp; ggp.load('wallmaze'); print(sorted(m for m in sys.modules if m.startswith(('ggp.rl', 'pettingzoo', 'gymnasium', 'pyspiel'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_random_games_through_the_aec_env_end_with_goal_rewards() -> None:
    selected, total = _play_aec("bomberman", 3)
    assert selected[:4] == ["bomberman", "bomberwoman", "bomberman", "bomberwoman"]
    assert sorted(total.values()) in ([-1.0, 1.0], [0.0, 0.0])


@pytest.mark.parametrize("skip_idle", [True, False], ids=["skip_idle", "every_role"])
@pytest.mark.parametrize("game", [*ggp.game_names()[:5], TICTACTOE, CONNECT_FOUR, CONNECT_FOUR_SIM], ids=_id)
def test_the_aec_env_s_compiled_turn_is_the_game_api_s_game(game: str, skip_idle: bool) -> None:
    """Along random games, every agent's mask, observation and board agree with ggp's Game API and the
    observer, the selected agent is a role with a choice, and the end's rewards are the goals."""
    env = rl.aec_env(game, skip_idle=skip_idle)
    g = env.game
    observer = env._rg.observer
    rng = np.random.default_rng(11)
    for episode in range(3):
        env.reset(seed=episode)
        state = g.initial_state()
        chosen: dict[str, int] = {}
        for agent in env.agent_iter(2_000):
            obs, reward, term, trunc, _ = env.last()
            if term or trunc:
                assert g.is_terminal(state) and not obs["action_mask"].any()
                assert reward == (g.goals(state)[g.roles.index(agent)] - 50) / 50
                env.step(None)
                continue
            s = g.array_of(state)
            for r, role in enumerate(g.roles):
                seen = env.observe(role)
                assert np.flatnonzero(seen["action_mask"]).tolist() == sorted(
                    int(a) for a in g.legal_actions(state, role)
                )
                assert np.array_equal(seen["observation"], observer.observe(s, r))
                if observer.board is not None:
                    assert np.array_equal(seen["board"], observer.board_of(s))
            legal = g.legal_actions(state, agent)
            if skip_idle:
                assert (
                    len(legal) > 1
                    or str(g.legal_moves(state, agent)[0]) != "noop"
                    or all([str(m) for m in g.legal_moves(state, role)] == ["noop"] for role in g.roles)
                ), f"{agent} was selected with only noop to play"
            chosen[agent] = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            played = env._steps
            env.step(chosen[agent])
            if env._steps > played:  # every mover has chosen: the joint move was played
                joint = [chosen.get(role, int(g.legal_actions(state, role)[0])) for role in g.roles]
                state = g.apply_actions(state, joint)
                chosen = {}
        assert not env.agents
        assert env.game_state() == state


def test_observations_are_the_caller_s_to_keep() -> None:
    """What last() and observe() return is never rewritten by the env, and writing to it changes nothing there."""
    env = rl.aec_env(TICTACTOE)
    env.reset(seed=0)
    kept = []
    for _ in range(4):
        obs, *_ = env.last()
        kept.append((obs, {k: v.copy() for k, v in obs.items()}))
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    for obs, copy in kept:
        assert all(np.array_equal(obs[k], copy[k]) for k in copy)
    again = env.observe(env.agent_selection)
    mine = env.observe(env.agent_selection)
    for k in mine:
        mine[k][...] = 1
    assert all(np.array_equal(env.observe(env.agent_selection)[k], again[k]) for k in again)


def test_a_role_without_a_legal_action_before_the_end_is_a_clear_error(tmp_path: Path) -> None:
    sheet = tmp_path / "stuck.kif"
    sheet.write_text(
        "(role a) (role b) (init (step 0))"
        " (<= (next (step 1)) (true (step 0))) (<= (next (step 2)) (true (step 1)))"
        " (<= (legal a go) (true (step 0))) (<= (legal a go) (true (step 1))) (<= (legal b wait) (true (step 0)))"
        " (<= terminal (true (step 2))) (goal a 100) (goal b 0)"
    )
    env = rl.aec_env(str(sheet))
    env.reset()
    assert env.agent_selection == "a"
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.agent_selection == "b"  # both have one move, neither noop: both choose
    with pytest.raises(ggp.GGPError, match="b has no legal action in a state that is not terminal"):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
