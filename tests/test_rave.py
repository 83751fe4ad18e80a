"""RAVE (UCTSearch's ``rave``): a move's value in the selection mixes in its all-moves-as-first value, the
mean of the simulations through its node in which its role made the move at any later step, in the tree or
in the rollout (the rollouts of a rule sheet's batches mark the moves they make).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ggp
from ggp.agents.mcts import MCTSAgent
from ggp.agents.uct import UCTSearch
from ggp.agents.uct_tree import Options
from ggp.gdl import from_text
from ggp.gdl.lanes import LANES

TICTACTOE = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()


def _game():  # type: ignore[no-untyped-def]
    return from_text(TICTACTOE, "tictactoe")


def _play(game, texts):  # type: ignore[no-untyped-def]
    state = game.initial_state()
    for i, text in enumerate(texts):
        mover = i % 2
        joint = [
            next(m for m in game.legal_moves(state, role) if str(m) == (text if r == mover else "noop"))
            for r, role in enumerate(game.roles)
        ]
        state = game.next_state(state, joint)
    return state


def test_a_move_made_lower_down_counts_at_every_node_above_as_if_made_there() -> None:
    # A hand-made path of three steps: at node 0, x marks (1 1); at node 1, o marks (1 2); at node 2, x marks
    # (3 3); the leaf is a game x has won (so its rollout makes no move). At node 0, (1 1) and (3 3) get an
    # all-moves-as-first sample worth x's win, (2 2), never made, none; at node 1, o's move gets one worth its loss.
    game = _game()
    texts = game.propnet.move_texts
    x, o = {t: i for i, t in enumerate(texts[0])}, {t: i for i, t in enumerate(texts[1])}
    tree = UCTSearch(game, capacity=100, rave=0.05, batch=LANES)
    won = _play(game, ["(mark 1 1)", "(mark 1 2)", "(mark 2 2)", "(mark 1 3)", "(mark 3 3)"])
    assert game.is_terminal(won) and list(game.goals(won)) == [100, 0]
    # each node's moves: x's then o's, in the action pool one after another
    lists = [
        ([x["(mark 1 1)"], x["(mark 2 2)"], x["(mark 3 3)"]], [o["noop"]]),
        ([x["noop"]], [o["(mark 1 2)"], o["(mark 2 1)"]]),
        ([x["(mark 3 3)"], x["(mark 3 1)"]], [o["noop"]]),
    ]
    a = 0
    for node, moves in enumerate(lists):
        for r, acts in enumerate(moves):
            tree.offsets[node, r], tree.counts[node, r] = a, len(acts)
            tree.act[a : a + len(acts)] = acts
            a += len(acts)
    tree.amaf_visits[:a], tree.amaf_value[:a], tree.act_value[:a] = 0, 0.0, 0.0
    tree.bstates[0] = game.array_of(won)
    tree.bpath[:3] = [[0, 0, 0, 1], [1, 0, 0, 2], [2, 0, 0, 3]]
    tree.bstart[:2], tree.bdepth[0] = (0, 3), 3
    opts = Options(0.7, True, False, False, 0.0, False, 1, 0.05)
    tree._score_batch(tree.ctx, tree.rng, tree.params, 1, tree._tree, tree._waiting, opts)
    assert list(tree.amaf_visits[0:3]) == [1, 0, 1] and list(tree.amaf_value[0:3]) == [1.0, 0.0, 1.0]
    assert tree.amaf_visits[3] == 0  # o's one move at node 0: no choice, no statistics
    assert list(tree.amaf_visits[5:7]) == [1, 0] and tree.amaf_value[5] == 0.0  # o's lost move at node 1
    assert list(tree.amaf_visits[7:9]) == [1, 0]  # x's move at node 2, made there
    assert tree.act_value[0] == 1.0 and tree.act_value[5] == 0.0  # the moves' own values, as without RAVE


def test_the_statistics_of_the_position_reached_are_kept_with_its_subtree() -> None:
    game = _game()
    tree = UCTSearch(game, capacity=20_000, seed=3, rave=0.05, batch=LANES)
    result = tree.search(game.initial_state(), sims=4000)
    best = int(np.argmax(result.visits[0]))
    child = tree.child_of(best)
    assert child > 0 and tree.expanded[child]
    before = [(tree.amaf_visits[tree.offsets[child, r] :][: tree.counts[child, r]].copy()) for r in (0, 1)]
    assert sum(int(b.sum()) for b in before) > 0
    assert tree.advance(_play(game, [str(result.moves[0][best])]))
    after = [(tree.amaf_visits[tree.offsets[0, r] :][: tree.counts[0, r]]) for r in (0, 1)]
    assert [list(b) for b in before] == [list(b) for b in after]


def test_a_search_with_rave_is_reproducible_and_finds_the_block() -> None:
    # o to move must block x's two in a row on the top line at (1 3); every other move loses
    game = _game()
    state = _play(game, ["(mark 1 1)", "(mark 2 2)", "(mark 1 2)"])
    results = [
        UCTSearch(game, capacity=20_000, seed=5, rave=0.05, batch=LANES).search(state, sims=6000) for _ in range(2)
    ]
    assert [list(v) for v in results[0].visits] == [list(v) for v in results[1].visits]
    assert str(results[0].best("oplayer")) == "(mark 1 3)"


def test_rave_needs_batched_random_rollouts() -> None:
    with pytest.raises(ValueError, match="RAVE"):
        UCTSearch(ggp.load("wallmaze"), capacity=100, rave=0.05)  # a built-in game: its own rollouts
    with pytest.raises(ValueError, match="RAVE"):
        UCTSearch(_game(), capacity=100, rave=0.05, batch=1)
    with pytest.raises(ValueError, match="rave"):
        UCTSearch(_game(), capacity=100, rave=-1.0, batch=LANES)


def test_the_general_player_searches_with_rave_where_leaves_are_scored_in_batches_and_not_elsewhere() -> None:
    agent = MCTSAgent(sims=500, seed=1, threads=1, rave=0.05)
    # (RAVE reads the batched rollouts' moves: a sheet whose leaves are scored one at a time has none)
    sheet = agent._make_tree(_game(), 1)
    assert sheet.rave == (0.05 if sheet.batch > 1 else 0.0)
    assert agent._make_tree(ggp.load("wallmaze"), 1).rave == 0.0  # a built-in game's own rollouts mark nothing
