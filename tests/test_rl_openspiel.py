"""ggp.rl's OpenSpiel games: random walks agree with ggp's engine, OpenSpiel's own checks and algorithms run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ggp
import ggp.rl as rl
from conftest import SHARED
from ggp.gdl.game import from_text

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python.algorithms import cfr, evaluate_bots, exploitability, mcts  # noqa: E402

TICTACTOE = str(Path(ggp.__file__).resolve().parent / "gdl" / "tictactoe.kif")
CONNECT_FOUR_SIM = str(SHARED / "corpus" / "kif" / "connectFourSimultaneous.kif")
GAMES = [*ggp.game_names()[:5], TICTACTOE, CONNECT_FOUR_SIM]

# Four sticks; take one or two in turn; who takes the last wins. The first player wins by taking one.
NIM = """
(role first) (role second)
(init (sticks 4)) (init (control first))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(<= (legal ?p (take 1)) (true (control ?p)) (true (sticks ?n)) (succ ?m ?n))
(<= (legal ?p (take 2)) (true (control ?p)) (true (sticks ?n)) (succ ?m ?n) (succ ?k ?m))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (next (sticks ?m)) (does ?p (take 1)) (true (sticks ?n)) (succ ?m ?n))
(<= (next (sticks ?k)) (does ?p (take 2)) (true (sticks ?n)) (succ ?m ?n) (succ ?k ?m))
(<= (next (control second)) (true (control first)))
(<= (next (control first)) (true (control second)))
(<= (next (last ?p)) (does ?p (take ?x)))
(<= terminal (true (sticks 0)))
(<= (goal ?p 100) (true (last ?p)))
(<= (goal ?p 0) (role ?p) (not (true (last ?p))))
"""


def _id(g: str) -> str:
    return Path(g).stem


@pytest.mark.parametrize("game", GAMES, ids=_id)
def test_random_walks_agree_with_ggp(game: str) -> None:
    spiel = rl.openspiel_game(game)
    g = ggp.load(game)
    rng = np.random.default_rng(5)
    simultaneous = spiel.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    assert simultaneous == (g.name in ("wallmaze", "bomberman2p", "connectFourSimultaneous"))
    for _ in range(3):
        state = spiel.new_initial_state()
        ours = g.initial_state()
        while not state.is_terminal():
            assert not g.is_terminal(ours)
            for p, role in enumerate(g.roles):
                assert state.legal_actions(p) == sorted(int(a) for a in g.legal_actions(ours, role)) or (
                    state.current_player() not in (p, pyspiel.PlayerId.SIMULTANEOUS)
                )
            if state.current_player() == pyspiel.PlayerId.SIMULTANEOUS:
                joint = [int(rng.choice(state.legal_actions(p))) for p in range(len(g.roles))]
                state.apply_actions(joint)
            else:
                p = state.current_player()
                idle = [r for r in range(len(g.roles)) if r != p]
                assert all([str(m) for m in g.legal_moves(ours, g.roles[r])] == ["noop"] for r in idle) or simultaneous
                a = int(rng.choice(state.legal_actions(p)))
                joint = [a if r == p else int(g.legal_actions(ours, g.roles[r])[0]) for r in range(len(g.roles))]
                state.apply_action(a)
            ours = g.apply_actions(ours, joint)
            assert state.game_state() == ours
        assert g.is_terminal(ours)
        assert state.returns() == [(v - 50) / 50 for v in g.goals(ours)]


@pytest.mark.parametrize("game", GAMES, ids=_id)
def test_openspiel_random_sim_test_passes_and_the_game_loads_by_name(game: str) -> None:
    spiel = rl.openspiel_game(game)
    pyspiel.random_sim_test(spiel, num_sims=2, serialize=True, verbose=False)  # states round-trip too
    again = pyspiel.load_game(spiel.get_type().short_name)
    assert again.num_distinct_actions() == spiel.num_distinct_actions()
    assert again.new_initial_state().legal_actions() == spiel.new_initial_state().legal_actions()


@pytest.mark.parametrize("game", [TICTACTOE, "amazons_8x8"], ids=_id)
def test_openspiel_mcts_bot_plays_a_full_game(game: str) -> None:
    spiel = rl.openspiel_game(game)
    rng = np.random.RandomState(3)
    bot = mcts.MCTSBot(spiel, 1.4, 20, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    state = spiel.new_initial_state()
    moves = 0
    while not state.is_terminal() and moves < 12:
        state.apply_action(bot.step(state))
        moves += 1
    while not state.is_terminal():  # amazons is long: random moves finish it
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


@pytest.mark.parametrize("game", ["wallmaze", TICTACTOE, CONNECT_FOUR_SIM], ids=_id)
def test_openspiel_evaluate_bots_plays_random_bots_in_sequential_and_simultaneous_games(game: str) -> None:
    spiel = rl.openspiel_game(game)
    rng = np.random.RandomState(2)
    bots = [pyspiel.make_uniform_random_bot(p, seed) for p, seed in ((0, 11), (1, 12))]
    returns = evaluate_bots.evaluate_bots(spiel.new_initial_state(), bots, rng)
    g = ggp.load(game)
    possible = {(v - 50) / 50 for v in range(0, 101)}
    assert len(returns) == len(g.roles) and all(r in possible for r in returns)


def test_every_built_in_game_registers_by_name() -> None:
    from ggp.rl.openspiel import register_builtin_games

    names = register_builtin_games()
    assert names == [f"ggp_{g}" for g in ggp.game_names()]
    assert set(names) <= set(pyspiel.registered_names())
    assert pyspiel.load_game("ggp_bomberman").num_players() == 2


def test_cfr_solves_a_small_rule_sheet() -> None:
    spiel = rl.openspiel_game(from_text(NIM, "nim4_rl"))
    solver = cfr.CFRSolver(spiel)
    for _ in range(60):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    assert exploitability.nash_conv(spiel, policy) < 0.05
    root = spiel.new_initial_state()
    probs = policy.action_probabilities(root)
    game = from_text(NIM, "nim4_rl")
    one = game.move_to_action(game.initial_state(), "first", "(take 1)")
    assert probs[one] > 0.9, "taking one stick (leaving three) wins"
