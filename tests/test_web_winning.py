"""A finished game on a grid shows the line that won: asked of the rules, not guessed from the pieces."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import ggp.gdl
from ggp.core.game import Game, State
from ggp.gdl import load_file
from ggp.web import notation, ui
from ggp.web.winning import SHORTEST, winning_line

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "kif"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the GDL corpus (../shared/corpus) is not beside the repo")


def drops(game: Game, columns: list[int]) -> State:
    """Connect Four: red and black drop in turn into the given columns (1-based)."""
    state = game.initial_state()
    for k, x in enumerate(columns):
        mover = game.roles[k % 2]
        state = game.next_state(state, [f"(drop {x})" if r == mover else "noop" for r in game.roles])
    return state


def test_connect_fours_four_is_ringed_on_the_board() -> None:
    game = load_file(CORPUS / "connectFour.kif")
    grid = ui.grid_of(game)
    assert grid is not None
    state = drops(game, [1, 2, 1, 2, 1, 2, 1])  # red's four in column a; black's three beside it in column b
    assert game.is_terminal(state) and game.goals(state) == (100, 0)
    line = winning_line(game, state)
    assert sorted(notation.square(grid, i, j) for i, j in line) == ["a1", "a2", "a3", "a4"]
    svg = ui.board_svg(game, state)
    assert svg.count('class="won"') == 4
    # one drop earlier the game goes on: nothing is ringed, though red already has three in a row
    before = drops(game, [1, 2, 1, 2, 1, 2])
    assert not game.is_terminal(before) and winning_line(game, before) == frozenset()
    assert 'class="won"' not in ui.board_svg(game, before)


def test_a_diagonal_wins_too_and_only_the_winners_pieces_are_ringed() -> None:
    game = load_file(CORPUS / "connectFour.kif")
    grid = ui.grid_of(game)
    assert grid is not None
    state = drops(game, [1, 2, 2, 3, 3, 4, 3, 4, 4, 7, 4])  # red: a1 b2 c3 d4
    assert game.is_terminal(state) and game.goals(state) == (100, 0)
    assert sorted(notation.square(grid, i, j) for i, j in winning_line(game, state)) == ["a1", "b2", "c3", "d4"]


def test_pieces_in_a_row_that_did_not_decide_the_game_are_not_a_line() -> None:
    # Breakthrough ends when a pawn arrives: its full back rows are runs of pawns, but taking one off changes
    # nothing, so no line is shown
    game = load_file(CORPUS / "breakthroughSmall.kif")
    grid = ui.grid_of(game)
    assert grid is not None

    def runs_at_end(seed: int) -> tuple[State, list[tuple[int, int]]]:
        rng = random.Random(seed)
        state = game.initial_state()
        while not game.is_terminal(state):
            state = game.next_state(state, [rng.choice(list(game.legal_moves(state, r))) for r in game.roles])
        held, _ = grid.cells(game.state_facts(state))
        starts = [  # three of one colour side by side along a row
            (i, j)
            for (i, j), ps in held.items()
            for p in ps
            if p in held.get((i + 1, j), []) + held.get((i + 2, j), [])
            and p in held.get((i + 1, j), [])
            and p in held.get((i + 2, j), [])
        ]
        return state, starts

    # the first of the seeded random games that ends with three pawns of one colour side by side
    state, in_rows = next(found for seed in range(200) if (found := runs_at_end(seed))[1])
    assert in_rows and game.is_terminal(state)  # three pawns side by side at the end, one of them may have arrived
    assert SHORTEST == 3 and winning_line(game, state) == frozenset()


def test_a_draw_has_no_line() -> None:
    game = load_file(Path(ggp.gdl.__file__).parent / "tictactoe.kif")
    state = game.initial_state()
    # x: 1 1, 1 2, 2 3, 3 1, 3 3 ; o: 2 2, 1 3, 2 1, 3 2: a full board, no three in a row
    for k, (x, y) in enumerate([(1, 1), (2, 2), (1, 2), (1, 3), (2, 3), (2, 1), (3, 1), (3, 2), (3, 3)]):
        who = game.roles[k % 2]
        state = game.next_state(state, [f"(mark {x} {y})" if r == who else "noop" for r in game.roles])
    assert game.is_terminal(state) and len(set(game.goals(state))) == 1
    assert winning_line(game, state) == frozenset()


def tictactoe(marks: list[tuple[int, int]]) -> tuple[Game, State]:
    game = load_file(Path(ggp.gdl.__file__).parent / "tictactoe.kif")
    state = game.initial_state()
    for k, (x, y) in enumerate(marks):
        who = game.roles[k % 2]
        state = game.next_state(state, [f"(mark {x} {y})" if r == who else "noop" for r in game.roles])
    return game, state


def test_a_row_and_a_column_completed_by_one_mark_are_both_ringed() -> None:
    # x's last mark, (1, 1), completes the row y = 1 and the column x = 1 at once
    game, state = tictactoe([(2, 1), (2, 2), (3, 1), (3, 3), (1, 2), (2, 3), (1, 3), (3, 2), (1, 1)])
    assert game.is_terminal(state) and game.goals(state) == (100, 0)
    assert sorted(winning_line(game, state)) == [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)]


def test_a_run_longer_than_needed_is_the_line_that_won() -> None:
    game = load_file(CORPUS / "connectFour.kif")
    grid = ui.grid_of(game)
    assert grid is not None
    state = drops(game, [1, 1, 2, 2, 4, 4, 5, 5, 3])  # red's fifth disc, c1, joins a1 b1 and d1 e1
    assert game.is_terminal(state) and game.goals(state) == (100, 0)
    line = sorted(notation.square(grid, i, j) for i, j in winning_line(game, state))
    assert line == ["a1", "b1", "c1", "d1", "e1"]
