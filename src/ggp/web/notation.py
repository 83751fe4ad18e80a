"""Readable moves for any rule sheet whose facts lay out a grid, derived from the sheet itself.

A move that names cells of the sheet's grid reads as the squares it names, in the board's own labels: numbered
columns are lettered, as chess boards are (``(move 1 2 1 3)`` is ``a2-a3``; ``(move knight b 1 a 3)`` is
``knight b1-a3``); a move naming a column (Connect Four's ``(drop 3)``) is ``column c``; a pass (``noop``) is
``pass``. The other words of the move stay (``knight``, a promotion's piece), its verb if it is not a plain
one (``move``, ``mark``, ``drop``...). A move that names no cell keeps its rule text.
``tests/test_web_notation.py`` walks every corpus sheet with a grid.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.game import Game
from ..core.kif import KifSyntaxError, parse_term, term_text
from ..gdl.grid import Grid, grid_of

#: Verbs that say nothing a square does not: left out.
PLAIN = {"move", "mark", "drop", "place", "play", "put", "moveto", "step", "go", "select"}


def lettered(grid: Grid) -> bool:
    """Whether the board's columns are shown as letters: numbered columns and rows, at most 26 columns."""
    numeric = all(c.lstrip("-").isdigit() for c in grid.columns) and all(r.lstrip("-").isdigit() for r in grid.rows)
    return numeric and len(grid.columns) <= 26


def column_label(grid: Grid, i: int) -> str:
    """Column ``i``'s label on the board: a letter for numbered columns (see :func:`lettered`), else its value."""
    return chr(97 + i) if lettered(grid) else grid.columns[i]


def square(grid: Grid, i: int, j: int) -> str:
    """Cell (i, j) as a person names it: ``b3``; ``x,3`` where the column is not one letter."""
    col, row = column_label(grid, i), grid.rows[j]
    return f"{col}{row}" if len(col) == 1 and row.lstrip("-").isdigit() else f"{col},{row}"


def readable(game: Game, move: str) -> str:
    """``move`` of ``game`` as a person reads it (see the module docstring); its text where no grid helps."""
    text = move.strip()
    if text.lower() == "noop":
        return "pass"
    grid = grid_of(game)
    if grid is None:
        return text
    cells = grid.move_cells(text)
    if not cells:
        return text
    try:
        term = parse_term(text)
    except KifSyntaxError:
        return text
    if not isinstance(term, tuple):
        return text
    head, args = str(term[0]), [a if isinstance(a, str) else term_text(a) for a in term[1:]]
    column = len(cells) > 1 and len(args) == 1
    if column:
        squares = f"column {column_label(grid, cells[0][0])}"
        rest = []
    else:
        squares = "-".join(square(grid, i, j) for i, j in cells)
        rest = _others(grid, args)
    words = ([] if head.lower() in PLAIN else [head]) + rest + [squares]
    return " ".join(words)


def _others(grid: Grid, args: Sequence[str]) -> list[str]:
    """The arguments that are not a cell's coordinates (a piece, a promotion)."""
    columns, rows = set(grid.columns), set(grid.rows)
    out, k = [], 0
    while k < len(args):
        if k + 1 < len(args) and args[k] in columns and args[k + 1] in rows:
            k += 2
            continue
        out.append(args[k])
        k += 1
    return out


def readable_set(game: Game, moves: Sequence[str]) -> list[str]:
    """The readable texts of ``moves`` (one role's legal moves), each unique: two moves that would read the
    same keep their rule text."""
    said = [readable(game, m) for m in moves]
    seen: dict[str, int] = {}
    for s in said:
        seen[s] = seen.get(s, 0) + 1
    return [s if seen[s] == 1 else m for s, m in zip(said, moves, strict=True)]
