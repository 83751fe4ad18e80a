"""A game's shape from random games (:mod:`ggp.agents.shape`), and the general player's RAVE chosen by it: on
for a marking game (two roles in turn, more moves than a game has steps, facts that latch) of many moves a
turn, off elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import ggp
from ggp.agents.mcts import SHAPE_RAVE, MCTSAgent
from ggp.agents.shape import measure_shape
from ggp.gdl import from_text
from ggp.gdl.lanes import LANES
from ggp.protocol.warmup import _at_once, with_batch

TICTACTOE = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()

# Two roles taking turns to add one to a counter, ten times: two moves each, a game ten steps long.
COUNTER = (
    "(role a) (role b) (init (control a)) (init (count 0)) "
    + " ".join(f"(succ {i} {i + 1})" for i in range(10))
    + " (<= (legal ?r inc) (true (control ?r))) (<= (legal ?r add) (true (control ?r))) "
    "(<= (legal a noop) (true (control b))) (<= (legal b noop) (true (control a))) "
    "(<= (next (control b)) (true (control a))) (<= (next (control a)) (true (control b))) "
    "(<= (next (count ?n)) (true (count ?m)) (succ ?m ?n)) "
    "(<= terminal (true (count 10))) (<= (goal ?r 50) (role ?r))"
)


def _marking(n: int) -> str:
    """Two roles taking turns to mark any unmarked cell of an n x n board until it is full: n * n steps, n * n
    moves a role (and noop)."""
    return " ".join(f"(index {i})" for i in range(1, n + 1)) + (
        " (role a) (role b) (init (control a)) "
        "(<= (legal ?r (mark ?x ?y)) (true (control ?r)) (index ?x) (index ?y) (not (true (marked ?x ?y)))) "
        "(<= (legal a noop) (true (control b))) (<= (legal b noop) (true (control a))) "
        "(<= (next (marked ?x ?y)) (does ?r (mark ?x ?y))) (<= (next (marked ?x ?y)) (true (marked ?x ?y))) "
        "(<= (next (control b)) (true (control a))) (<= (next (control a)) (true (control b))) "
        "(<= open (index ?x) (index ?y) (not (true (marked ?x ?y)))) (<= terminal (not open)) "
        "(<= (goal ?r 50) (role ?r))"
    )


SIX = _marking(6)  # 19 moves a turn on average where there is a choice (36, 35, ..., 2)
WIDE = _marking(12)  # 73 (144, 143, ..., 2), a board as wide as gomoku's


def test_tictactoe_is_a_marking_game() -> None:
    # a mark stays where it is put: the marked cells' facts latch on, the blank ones off
    shape = measure_shape(from_text(TICTACTOE, "tictactoe"), seconds=None)
    assert shape.roles == 2 and shape.in_turn and shape.games > 0
    assert shape.moves == 9 + 1  # nine cells and noop, each role
    assert 5 <= shape.longest <= 9 and shape.latches >= 9
    assert shape.marking
    assert not shape.suits_rave  # five moves a turn on average: too few to be worth RAVE


def test_a_marking_game_suits_rave_where_a_turn_has_many_moves() -> None:
    six = measure_shape(from_text(SIX, "six"), seconds=None)
    assert six.longest == 36 and six.moves == 37 and six.latches >= 36
    assert six.branching == 19.0  # 36, 35, ..., 2 moves where there is a choice
    assert six.marking and not six.suits_rave  # too few to be worth RAVE
    wide = measure_shape(from_text(WIDE, "wide"), seconds=None)
    assert wide.longest == 144 and wide.branching == 73.0
    assert wide.marking and wide.suits_rave


def test_a_game_longer_than_its_moves_is_not() -> None:
    shape = measure_shape(from_text(COUNTER, "counter"), seconds=None)
    assert shape.in_turn and shape.longest == 10 and shape.moves == 3
    assert not shape.marking


def test_roles_choosing_at_once_are_not_in_turn() -> None:
    shape = measure_shape(from_text(_at_once(2), "at_once"), seconds=None)
    assert not shape.in_turn and not shape.marking


def test_a_game_with_no_kernel_or_no_time_has_no_shape() -> None:
    assert measure_shape(from_text(TICTACTOE, "tictactoe"), seconds=0.0).games == 0
    assert not measure_shape(from_text(TICTACTOE, "tictactoe"), seconds=0.0).marking


def test_the_general_player_asked_for_rave_by_the_shape_turns_it_on_where_the_shape_suits() -> None:
    game = with_batch(from_text(WIDE, "wide"), LANES)  # (RAVE reads batched rollouts)
    for rave, expected in ((None, SHAPE_RAVE), (0.0, 0.0), (0.2, 0.2)):  # none: by the game's shape
        agent = MCTSAgent(sims=50, seed=1, threads=1, rave=rave)
        agent.start(game, game.roles[0])
        assert agent._tree is not None and agent._tree.rave == expected
    assert MCTSAgent().rave is None  # by the game's shape, unless asked otherwise
    for other in (COUNTER, TICTACTOE, SIX):
        agent = MCTSAgent(sims=50, seed=1, threads=1, rave=None)
        agent.start(with_batch(from_text(other, "other"), LANES), "xplayer" if other == TICTACTOE else "a")
        assert agent._tree is not None and agent._tree.rave == 0.0
    agent = MCTSAgent(sims=50, seed=1, threads=1, rave=None)
    agent.start(ggp.load("wallmaze"), "white")  # a built-in game: its own rollouts, nothing traced
    assert agent._tree is not None and agent._tree.rave == 0.0
