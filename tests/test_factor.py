"""Independent sub-games of a rule sheet (:mod:`ggp.gdl.factor`) and the general player that searches the one
where its role moves now (:mod:`ggp.agents.factor`): connectFourSimultaneous is two boards of connect four,
red dropping on one while black drops on the other, and each board is a turn-taking game of its own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import ggp
from conftest import SHARED
from ggp.agents.factor import PASS, factor_games
from ggp.agents.mcts import MCTSAgent
from ggp.gdl import from_text
from ggp.gdl.factor import find_factors, network_splits
from ggp.gdl.grounder import ground

KIF = SHARED / "corpus" / "kif"
TICTACTOE = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()

# Two counters side by side, and a role that may add to either: its moves are in both sub-games at once.
EITHER = (
    "(role a) (role b) (init (x 0)) (init (y 0)) (succ 0 1) (succ 1 2) "
    "(<= (legal a incx) (true (x ?n)) (succ ?n ?m)) (<= (legal a incy) (true (y ?n)) (succ ?n ?m)) "
    "(<= (legal b waitx) (true (x ?n))) (<= (legal b waity) (true (y ?n))) "
    "(<= (next (x ?m)) (does a incx) (true (x ?n)) (succ ?n ?m)) (<= (next (x ?n)) (not (does a incx)) (true (x ?n))) "
    "(<= (next (y ?m)) (does a incy) (true (y ?n)) (succ ?n ?m)) (<= (next (y ?n)) (not (does a incy)) (true (y ?n))) "
    "(<= terminal (true (x 2))) (<= terminal (true (y 2))) (<= (goal ?r 50) (role ?r))"
)


@pytest.fixture(scope="module")
def c4s() -> ggp.Game:
    return ggp.load(KIF / "connectFourSimultaneous.kif")


def drop(game: ggp.Game, column: int, board: int) -> ggp.Move:
    return game.parse_move(f"(drop {column} {board})")


def test_the_two_boards_are_two_factors_each_with_its_own_cells_and_drops(c4s: ggp.Game) -> None:
    factors = find_factors(ground(c4s.program))
    assert factors is not None and len(factors.groups) == 2
    for group in factors.groups:
        boards = {str(f[3]) for f in group.facts if f[0] == "cell"} | {
            str(f[2]) for f in group.facts if f[0] == "control"
        }
        assert len(boards) == 1  # every fact of a factor is of one board
        assert {str(m[2]) for _, m in group.moves} == boards  # and so is every drop
    assert network_splits(c4s.propnet)


def test_a_single_board_is_no_factorisation() -> None:
    game = from_text(TICTACTOE, "tictactoe")
    assert find_factors(ground(game.program)) is None
    assert not network_splits(game.propnet)
    assert factor_games(game, seconds=None) is None


def test_a_role_that_may_move_in_either_sub_game_is_searched_whole() -> None:
    game = from_text(EITHER, "either")
    assert find_factors(ground(game.program)) is not None  # two counters: two factors
    assert factor_games(game, seconds=None) is None  # but a's moves are in both at once


def test_each_board_is_a_turn_taking_game_where_the_other_board_stands_still(c4s: ggp.Game) -> None:
    split = factor_games(c4s, seconds=None)
    assert split is not None
    s = c4s.initial_state()
    one, two = split.part_of(s, "red"), split.part_of(s, "black")
    assert one is not None and two is not None and one != two  # red drops on board 1, black on board 2
    board = split.games[one]
    t = split.project(s, one)
    assert board.state_facts(t) == c4s.state_facts(s)  # a state of the game is a state of each board's
    assert [m.text for m in board.legal_moves(t, "black")] == [PASS]
    assert {m.text for m in board.legal_moves(t, "red")} == {f"(drop {x} 1)" for x in range(1, 9)}
    t = board.next_state(t, [drop(c4s, 3, 1), board.parse_move(PASS)])
    # black answers on board 1 and red waits; board 2 has not moved on (black still has it)
    assert [m.text for m in board.legal_moves(t, "red")] == [PASS]
    assert {m.text for m in board.legal_moves(t, "black")} == {f"(drop {x} 1)" for x in range(1, 9)}
    assert board.state_facts(t) == ["(cell 3 1 1 red)", "(control black 1)", "(control black 2)"]
    # in the whole game both boards moved: board 2's game, from there, keeps board 1's piece as it is
    whole = c4s.next_state(s, [drop(c4s, 3, 1), drop(c4s, 5, 2)])
    assert split.part_of(whole, "red") == two
    other = split.games[two]
    u = other.next_state(split.project(whole, two), [drop(c4s, 5, 2), other.parse_move(PASS)])
    assert other.state_facts(u) == [
        "(cell 3 1 1 red)",
        "(cell 5 1 2 black)",
        "(cell 5 2 2 red)",
        "(control black 1)",
        "(control black 2)",
    ]


# Two boards of one cell each: p marks board 1 while q marks board 2, and the game ends with both marked.
CELLS = (
    "(role p) (role q) (init (control p 1)) (init (control q 2)) "
    "(<= (legal ?r (mark ?b)) (true (control ?r ?b)) (not (true (marked ?b)))) "
    "(<= (next (marked ?b)) (does ?r (mark ?b))) (<= (next (marked ?b)) (true (marked ?b))) "
    "(<= (next (control q ?b)) (true (control p ?b))) (<= (next (control p ?b)) (true (control q ?b))) "
    "(<= terminal (true (marked 1)) (true (marked 2))) (<= (goal p 100) (true (marked 1))) "
    "(<= (goal p 0) (not (true (marked 1)))) (<= (goal q 0) (role q))"
)


def test_a_board_ends_when_neither_role_has_a_move_there() -> None:
    game = from_text(CELLS, "cells")
    split = factor_games(game, seconds=None)
    assert split is not None
    s = game.initial_state()
    i = split.part_of(s, "p")
    assert i is not None
    board = split.games[i]
    t = board.next_state(split.project(s, i), [game.parse_move("(mark 1)"), board.parse_move(PASS)])
    assert board.is_terminal(t)  # board 2 is not marked, but nobody has a move left on board 1
    assert board.goals(t) == (100, 0)


def test_the_general_player_searches_the_board_where_it_drops(c4s: ggp.Game) -> None:
    agent = MCTSAgent(sims=300, seed=1, ponder=False)
    agent.start(c4s, "red")
    s = c4s.initial_state()
    choice = agent.choose(s)
    assert choice.move in c4s.legal_moves(s, "red")
    assert choice.policy and {m for m, _ in choice.policy} == set(c4s.legal_moves(s, "red"))
    assert sum(v for _, v in choice.policy) >= 300 - 1
    whole = MCTSAgent(sims=300, seed=1, ponder=False, factor=False)
    whole.start(c4s, "red")
    assert whole.choose(s).move in c4s.legal_moves(s, "red")
    assert whole._factors is None and agent._factors is not None


def test_a_win_in_one_on_the_board_it_drops_on_is_taken(c4s: ggp.Game) -> None:
    # red builds three in a row at the bottom of board 1; black spreads out on board 2; the boards swap each step
    steps = [(1, 1, 1, 2), (8, 2, 8, 1), (2, 1, 3, 2), (8, 2, 8, 1), (3, 1, 5, 2), (8, 2, 8, 1)]
    s = c4s.initial_state()
    for red_column, red_board, black_column, black_board in steps:
        s = c4s.next_state(s, [drop(c4s, red_column, red_board), drop(c4s, black_column, black_board)])
    assert not c4s.is_terminal(s)
    agent = MCTSAgent(sims=500, seed=2, ponder=False)
    agent.start(c4s, "red")
    move = agent.select_move(s)
    assert move == drop(c4s, 4, 1)
    t = c4s.next_state(s, [move, c4s.legal_moves(s, "black")[0]])
    assert c4s.is_terminal(t) and c4s.goals(t) == (100, 0)


def on_board(fact: str, board: int) -> bool:
    words = fact.strip("()").split()  # (cell x y board player), (control player board)
    return words[3 if words[0] == "cell" else 2] == str(board)


def test_a_boards_tree_is_kept_from_one_of_its_moves_to_the_next(c4s: ggp.Game) -> None:
    agent = MCTSAgent(sims=300, seed=3, ponder=False)
    agent.start(c4s, "red")
    start = s = c4s.initial_state()
    split = agent._factors
    assert split is not None and split.part_of(s, "red") == 0
    first = agent.select_move(s)  # on board 1
    s = c4s.next_state(s, [first, drop(c4s, 1, 2)])
    second = agent.select_move(s)  # on board 2
    s = c4s.next_state(s, [second, drop(c4s, 1, 1)])
    assert split.part_of(s, "red") == 0
    sub = agent._part_state(0, s)
    # board 1 as it stands now; board 2 as it stood when board 1's tree was rooted, before anyone dropped there
    expected = {f for f in c4s.state_facts(s) if on_board(f, 1)} | {f for f in c4s.state_facts(start) if on_board(f, 2)}
    assert set(split.games[0].state_facts(sub)) == expected
    tree = agent._parts[0]._tree
    assert tree is not None and tree._find_below(sub) >= 0  # two steps below its root: the tree is kept
    # without reuse, each move is searched from the state as it is
    fresh = MCTSAgent(sims=300, seed=3, ponder=False, reuse=False)
    fresh.start(c4s, "red")
    assert split.games[0].state_facts(fresh._part_state(0, s)) == c4s.state_facts(s)


def test_a_player_of_sub_games_starts_afresh_on_the_next_match(c4s: ggp.Game) -> None:
    agent = MCTSAgent(sims=200, seed=4, ponder=False)
    agent.start(c4s, "red")
    s = c4s.initial_state()
    s = c4s.next_state(s, [agent.select_move(s), drop(c4s, 1, 2)])
    tictactoe = from_text(TICTACTOE, "tictactoe")
    agent.start(tictactoe, "xplayer")  # a game that does not split: the whole game is searched
    assert agent._factors is None and agent._parts == [] and agent._ponder_part is None
    t = tictactoe.initial_state()
    assert agent.select_move(t) in tictactoe.legal_moves(t, "xplayer")
    agent.start(c4s, "black")
    assert agent._factors is not None and agent._trees == []
    s = c4s.initial_state()
    assert agent.select_move(s) in c4s.legal_moves(s, "black")


def test_where_a_roles_moves_span_sub_games_the_whole_game_is_searched(c4s: ggp.Game) -> None:
    agent = MCTSAgent(sims=200, seed=5, ponder=False)
    agent.start(c4s, "red")
    split = agent._factors
    assert split is not None
    # pretend red's moves are no sub-game's: the player falls back to searching the whole game
    agent._factors = dataclasses.replace(split, moves=(frozenset(), frozenset()))
    s = c4s.initial_state()
    assert agent.select_move(s) in c4s.legal_moves(s, "red")
    assert agent._factors is None and agent._trees  # searched whole from now on


def test_a_sheet_whose_sub_game_ends_where_the_game_has_no_goal_is_searched_whole() -> None:
    # p's goal is written for the game's end alone (both cells marked): board 2's sub-game ends with board 1
    # unmarked, where p has none
    sheet = CELLS.replace("(<= (goal p 0) (not (true (marked 1)))) ", "")
    game = from_text(sheet, "cells-goal")
    assert find_factors(ground(game.program)) is not None
    assert factor_games(game, seconds=None) is None
