"""Grid detection (ggp.gdl.grid) on the public corpus: every grid it finds is sound, and known boards are found.

Sound, for each sheet, along a seeded random game: every fact of the grid's
relation lands on a cell inside the grid (and on the board tensor's entry
that its base proposition sets), the generic view (``ggp.web.ui``) draws the
state as well-formed SVG with one rectangle per cell and each such fact on
its cell, and every cell a legal move names is inside the grid. A sheet
without a grid shows its facts as a list.

As ``tests/test_corpus.py`` does, CI runs a fixed third of the sheets (every
third by name, leaving out those only the prover plays and the three slowest
to load), and ``GGP_CORPUS=all``
(``make test-corpus``) all of them.
"""

from __future__ import annotations

import os
import random
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

import ggp
from conftest import SHARED
from ggp.core.game import Game
from ggp.core.kif import parse_term
from ggp.gdl import ProverGame, rules_text
from ggp.gdl.game import from_text, load_text
from ggp.gdl.grid import Grid, find_grid, grid_of
from ggp.web import notation, ui
from ggp.web.views import page_family
from test_corpus import ALL, NOT_IN_CI

CORPUS = SHARED / "corpus" / "kif"
#: Left out of the CI third: 15 to 40 s each to load (tests/test_corpus.py's CI third loads them).
SLOW = {"chineseCheckers3", "checkers-mustjump-torus", "gt_two_thirds_6p"}
SHEETS = (
    ALL
    if os.environ.get("GGP_CORPUS", "").lower() == "all"
    else [n for n in ALL[::3] if n not in NOT_IN_CI and n not in SLOW]
)
#: Steps of the random game each sheet is checked along.
STEPS = 20


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """Games are not kept in ggp's load cache after their test (as in tests/test_corpus.py)."""
    yield
    from_text.cache_clear()
    load_text.cache_clear()


def _relation(grid: Grid, fact: str) -> bool:
    """Whether ``fact`` is of the grid's relation (its name, any letter case, and arity), flat."""
    term = parse_term(fact)
    return (
        isinstance(term, tuple)
        and len(term) == grid.arity + 1
        and str(term[0]).lower() == grid.relation.lower()
        and all(isinstance(a, str) for a in term[1:])
    )


def check_grid(game: Game, steps: int = STEPS, seed: int = 0) -> Grid | None:
    """Check ``game``'s grid (or its facts list) along a random game; returns the grid."""
    grid = grid_of(game)
    base = getattr(game, "base_facts", None)
    if grid is not None and base is not None:
        # each base proposition of the relation has its board entry, the one locate() gives, inside the tensor
        mine = [i for i, f in enumerate(base) if _relation(grid, f)]
        assert sorted(grid.index.tolist()) == mine
        for k, i in enumerate(grid.index.tolist()):
            where = (int(grid.col[k]), int(grid.row[k]), int(grid.channel[k]))
            assert grid.locate(base[i]) == where
            assert all(
                0 <= v < n for v, n in zip(where, (len(grid.columns), len(grid.rows), len(grid.channels)), strict=True)
            )
    rng = random.Random(seed)
    state = game.initial_state()
    for _ in range(steps):
        facts = game.state_facts(state)
        svg, rest = ui.generic_svg(game, state)
        if grid is None:
            assert page_family(game) == "facts" and svg == "" and rest == facts
        else:
            assert page_family(game) == "grid"
            _check_state(game, grid, facts, svg, rest)
        if game.is_terminal(state):
            break
        joint = []
        for role in game.roles:
            moves = list(game.legal_moves(state, role))
            for m in ui.annotate_generic(game, moves):
                for cell in m["cells"]:
                    i, j = map(int, cell.split())
                    assert 0 <= i < len(grid.columns) and 0 <= j < len(grid.rows), (m["move"], cell)  # type: ignore[union-attr]
            joint.append(rng.choice(moves))
        state = game.next_state(state, joint)
    return grid


def _check_state(game: Game, grid: Grid, facts: list[str], svg: str, rest: list[str]) -> None:
    nx, ny = len(grid.columns), len(grid.rows)
    held, off = grid.cells(facts)
    assert off == rest == [f for f in facts if grid.place(f) is None]
    for fact in facts:
        if _relation(grid, fact):  # every fact of the relation is on the board, none left in the list
            where = grid.place(fact)
            assert where is not None and 0 <= where[0] < nx and 0 <= where[1] < ny, fact
    root = ET.fromstring(svg)  # well-formed
    cells = {r.get("data-gcell"): r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-gcell")}
    assert len(cells) == nx * ny
    for (i, j), contents in held.items():
        title = cells[f"{i} {j}"].findtext("{http://www.w3.org/2000/svg}title") or ""
        assert title.startswith(f"{notation.square(grid, i, j)}:")  # the square as the moves name it
        for content in contents:  # placed on its cell, blanks (b, empty, ...) being the cell's empty state
            assert content in title or ui.is_blank(content), (content, title)


@pytest.mark.corpus
@pytest.mark.usefixtures("fresh_cache")
@pytest.mark.parametrize("name", SHEETS)
def test_the_grid_found_in_a_corpus_sheet_is_sound(name: str) -> None:
    game = ggp.load(CORPUS / f"{name}.kif")
    check_grid(game)


@pytest.mark.parametrize(
    ("sheet", "relation", "shape"),
    [
        ("tictactoe2", "mark", (3, 3, 2)),  # (mark ?x ?y ?player): only the marks made
        ("connectFour", "cell", (6, 8, 2)),  # rows, columns, channels: 8 columns of 6
        ("speedChess", "cell", (8, 8, 12)),  # (cell ?file ?rank ?colour ?piece): a channel per colour and piece
        ("minichess", "cell", (4, 4, 4)),
        ("skirmishFinal1", "location", (8, 8, 10)),
        ("ghostMaze2p", "location", (8, 8, 4)),  # (location ?piece ?x ?y): the piece named first
        ("breakthroughSmall", "cell", (6, 6, 2)),
        ("hex", "cell", (9, 9, 2)),
        ("chomp", "chocolate", (7, 8, 1)),  # cells present or eaten: the relation itself is the piece
        ("atariGo_7x7", "cell", (7, 7, 2)),  # not (group ?x ?y ?x2 ?y2), over as many cells
        ("ticTacHeavenFC", "cell_small", (3, 3, 3)),  # the board set up, not (inhibit_small ?x ?y ?role)
        ("nim1", None, None),  # (heap a 3) is a heap's size, not a board
        ("gt_prisoner", None, None),
        ("buttons", None, None),
        ("hanoi", None, None),
        ("blocksWorld", None, None),  # (on a b): blocks on blocks
        ("kalaha6x2x4", None, None),
    ],
)
@pytest.mark.usefixtures("fresh_cache")
def test_known_boards_are_found_and_others_are_not(
    sheet: str, relation: str | None, shape: tuple[int, int, int] | None
) -> None:
    game = ggp.load(CORPUS / f"{sheet}.kif")
    grid = check_grid(game, steps=3)
    if relation is None:
        assert grid is None
        return
    assert grid is not None and (grid.relation, grid.shape) == (relation, shape)
    svg, rest = ui.generic_svg(game, game.initial_state())
    assert svg.count("data-gcell=") == shape[0] * shape[1]  # type: ignore[index]
    assert not any(_relation(grid, f) for f in rest)  # the board's facts are drawn, not listed
    # a first move names squares to click (ghost maze's explorer moves by direction: (move east))
    moves = ui.annotate_generic(game, list(game.legal_moves(game.initial_state(), game.roles[0])))
    assert any(m["cells"] for m in moves) is (sheet != "ghostMaze2p")


def test_a_sheet_on_the_prover_is_read_from_its_states() -> None:
    """The prover knows no base propositions: the grid comes from the initial state's facts (gaps filled)."""
    sheet = ProverGame(rules_text("amazons_8x8"), "amazons_8x8")
    grid = check_grid(sheet, steps=3)
    assert grid is not None and grid.relation == "cell" and grid.shape[:2] == (8, 8) and len(grid.index) == 0
    sparse = find_grid(["(location 1 4 white)", "(location 4 1 white)", "(location 7 10 black)"], complete=False)
    assert sparse is not None and sparse.columns == tuple(str(n) for n in range(1, 8)) and sparse.shape[:2] == (10, 7)


def test_found_once_per_game_and_the_same_for_the_web_and_rl() -> None:
    from ggp.rl import observe as rl

    game = from_text((Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), "tictactoe")
    assert grid_of(game) is grid_of(game) is ui.grid_of(game) is rl.observer_for(game).board
