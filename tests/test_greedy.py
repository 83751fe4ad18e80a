"""Greedy rollouts: a win in one is taken, a threat of one is answered, and which moves end games is learnt."""

from __future__ import annotations

import numpy as np
import pytest

import ggp
from conftest import SHARED, play, sheet_text
from ggp.agents.greedy import greedy_params, greedy_rollout
from ggp.agents.mcts import MCTSAgent
from ggp.agents.uct import UCTSearch
from ggp.agents.uct_loop import _rollout_value_template
from ggp.core.kernels import rng_state
from ggp.gdl.game import from_text

BREAKTHROUGH = SHARED / "corpus" / "kif" / "breakthroughSmall.kif"


def _tictactoe(*marks: str) -> tuple[ggp.Game, object]:
    """ggp's tic-tac-toe after ``marks`` ("r c", x first, then o, in turn)."""
    game = from_text(*sheet_text("tictactoe"))
    joints = []
    for i, rc in enumerate(marks):
        mark = f"(mark {rc})"
        joints.append([mark, "noop"] if i % 2 == 0 else ["noop", mark])
    return game, play(game, game.initial_state(), *joints)


def _values(game, state, leaf, params, seeds=range(20)):  # type: ignore[no-untyped-def]
    ctx = game.kernel.context()
    out = np.zeros(2)
    seen = set()
    for seed in seeds:
        leaf(ctx, game.array_of(state).copy(), rng_state(seed), out, params)
        seen.add(tuple(out))
    return seen


def _every_move_ends_games(game) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.ones(len(greedy_params(game)) + 1)  # (UCTSearch's trailing 0 is never read as a flag)


def test_a_win_in_one_is_taken_where_a_random_playout_may_miss_it() -> None:
    # x x . / o o . : x to move wins at (1 3) (o's threat at (2 3) never comes)
    game, state = _tictactoe("1 1", "2 1", "1 2", "2 2")
    greedy = _values(game, state, greedy_rollout(game), _every_move_ends_games(game))
    assert greedy == {(1.0, 0.0)}
    plain = _values(game, state, game.kernel.specialise(_rollout_value_template), np.zeros(1))
    assert plain != {(1.0, 0.0)}  # o wins some of them


def test_a_threat_of_one_is_answered_where_an_answer_exists() -> None:
    # x o x / o x x / o . . with o to move: x threatens (3 3); o's block there leaves a draw, (3 2) loses
    game, state = _tictactoe("1 1", "1 2", "1 3", "2 1", "2 2", "3 1", "2 3")
    greedy = _values(game, state, greedy_rollout(game), _every_move_ends_games(game))
    assert greedy == {(0.5, 0.5)}
    plain = _values(game, state, game.kernel.specialise(_rollout_value_template), np.zeros(1))
    assert plain == {(0.5, 0.5), (1.0, 0.0)}


def test_moves_that_end_games_are_learnt_in_params() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    params = np.array([*greedy_params(game), 0.0])
    leaf = greedy_rollout(game)
    _values(game, game.initial_state(), leaf, params, seeds=range(300))
    learnt = np.flatnonzero(params[:-1])
    per_role = game.kernel.num_actions
    texts = [game.action_to_move(game.initial_state(), game.roles[i // per_role], i % per_role) for i in learnt]
    # a move ends breakthrough by reaching the far row (white's 6, black's 1) or by taking the last piece (a
    # diagonal move): never straight ahead short of the far row
    far = []
    for i, text in zip(learnt, texts, strict=True):
        x1, _, x2, y2 = (int(v) for v in str(text).strip("()").split()[1:])
        far.append(y2 == (6 if i < per_role else 1))
        assert far[-1] or x1 != x2, text
    assert any(far), "no move reaching the far row seen ending a game in 300 playouts"


def test_the_general_player_searches_with_greedy_rollouts_when_asked() -> None:
    game, state = _tictactoe("1 1", "1 2", "1 3", "2 1", "2 2", "3 1", "2 3")
    agent = MCTSAgent(sims=300, seed=0, greedy=True, threads=1, ponder=False, dfs=False)
    agent.start(game, "oplayer")
    assert agent.select_move(state) == game.parse_move("(mark 3 3)")  # the block (decisive moves find it too)
    assert agent._tree is not None and agent._tree.params[:-1].any()  # its leaves were greedy: they learnt


def test_the_search_builds_the_greedy_rollouts_params_itself() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    tree = UCTSearch(game, capacity=1000, greedy=True)
    assert tree.params.shape == (len(greedy_params(game)) + 1,)  # the one length the compiled rollout may read
    with pytest.raises(ValueError, match="greedy rollouts are a leaf value of their own"):
        UCTSearch(game, capacity=1000, greedy=True, leaf_value=greedy_rollout(game))


def test_simultaneous_moves_are_played_uniformly_at_random() -> None:
    # both roles choose at once every step: the greedy rollout is the random one, and it ends the game
    sheet = (
        "(role a) (role b) (init (step 0)) (succ 0 1) (succ 1 2) "
        "(<= (legal ?r x) (role ?r)) (<= (legal ?r y) (role ?r)) "
        "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n)) (<= (next (saidx ?r)) (does ?r x)) "
        "(<= terminal (true (step 2))) (<= (goal a 100) (true (saidx a))) (<= (goal a 0) (not (true (saidx a)))) "
        "(goal b 50)"
    )
    game = from_text(sheet, "simul")
    seen = _values(game, game.initial_state(), greedy_rollout(game), _every_move_ends_games(game), seeds=range(40))
    assert seen == {(1.0, 0.5), (0.0, 0.5)}
