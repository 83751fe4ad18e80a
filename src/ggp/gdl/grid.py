"""The board in a rule sheet's state: which relation of its facts lays pieces out on a grid of cells.

A GDL state is a set of facts, and most board games keep their board as one
relation of them, ``(cell ?x ?y ?piece)`` or the like. :func:`find_grid` finds
that relation from the facts a state may hold, and the :class:`Grid` it
returns says where each of them goes: the web app draws the cells from it
(:mod:`ggp.web.ui`), and ggp.rl builds a board tensor from it
(:mod:`ggp.rl.observe`). Both read the same grid, found by the same rules.

How the grid is found (:func:`find_grid` has the details):

1. The facts are grouped by relation name (ignoring letter case) and arity;
   a relation of two or more plain-symbol arguments is a candidate.
2. With three or more arguments, the last is what the cell holds (the piece),
   or the first when it is a symbol and the last a number (``(location
   ?piece ?x ?y)``); of the others, the two with the most distinct values
   are the axes (of equals, the earlier), the earlier argument the column
   and the later the row, and any others join the piece to make the cell's
   content, its *channel* (``(cell ?board ?x ?y ?piece)`` has a channel per
   board and piece). A two-argument relation over numbers says that the
   cell is occupied: its one channel is the relation itself.
3. A two-argument relation that holds exactly once for each first argument in
   the initial state is a set of values (``(heap a 3)``, ``(score red 10)``),
   not a board, and is left out.
4. Values are ordered as numbers when they all are (a numeric axis is filled
   in to a run of consecutive numbers, so that gaps show), else as text.
5. Each axis has 2 to :data:`MAX_AXIS` values, and the relation's facts
   cover at least half of the cells (a state shows only its pieces, so when
   the facts are one state's, as for a sheet played by the prover, a relation
   of three or more arguments over numeric axes need not).
6. Of the candidates, one with three or more arguments wins over any with
   two; then the one covering the most cells, then the one with the most
   facts in the initial state (the board is set up), then the one with the
   fewest channels (a board's cells hold a few kinds of piece).

>>> grid = find_grid(["(cell 1 1 x)", "(cell 1 1 b)", "(cell 2 1 b)", "(cell 3 1 b)", "(cell 1 2 b)",
...                   "(cell 2 2 b)", "(cell 3 2 b)", "(cell 1 3 b)", "(cell 2 3 o)", "(cell 3 3 b)",
...                   "(control white)"])
>>> grid.relation, grid.shape, grid.channels
('cell', (3, 3, 3), (('b',), ('o',), ('x',)))
>>> grid.locate("(cell 2 3 o)"), grid.locate("(control white)")
((1, 2, 1), None)
>>> grid.move_cells("(mark 2 3)")
[(1, 2)]
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.kif import KifSyntaxError, Term, parse_term, term_text

#: The most values an axis takes (a board of more than 32 columns or rows is not drawn as one).
MAX_AXIS = 32
#: The largest board tensor a grid gives (cells times channels).
MAX_BOARD = 1 << 20


#: What a cell holds when it is empty, in the sheets' own words: not drawn.
BLANK = {"b", "blank", "empty", "e", "none"}


def is_blank(content: str) -> bool:
    """Whether a cell's content says it is empty, in the sheets' own words: ``b``, ``blank``, and so on, also
    as the last word (``(cell 1 1 2 b)``: layer 1 of cell (1, 2) is empty).

    >>> is_blank("b"), is_blank("1 1 blank"), is_blank("x"), is_blank("bk")
    (True, True, False, False)
    """
    words = content.split()
    return bool(words) and words[-1].lower() in BLANK


@dataclass(frozen=True)
class Grid:
    """A sheet's board: the relation whose facts put pieces on cells, and where each of its facts goes.

    ``relation`` is the relation's name (as the sheet spells it) and ``arity`` its number of arguments;
    ``axes`` are the two argument positions read as (column, row); ``columns``, ``rows`` and ``channels``
    the values along each, in order (a channel is the tuple of the arguments that are not axes, the
    piece; a two-argument relation has the one channel ``()``). ``index``, ``row``, ``col``, ``channel``
    say that fact ``index[k]`` of the facts the grid was found in (a sheet's base propositions) sets
    ``board[row[k], col[k], channel[k]]``. ``complete`` is False for a grid found in one state's facts
    (a sheet on the prover): the four arrays are empty then, and pieces not in that state may turn up later
    (:meth:`place` puts them on their cells).
    """

    relation: str
    arity: int
    axes: tuple[int, int]
    columns: tuple[str, ...]
    rows: tuple[str, ...]
    channels: tuple[tuple[str, ...], ...]
    index: np.ndarray
    row: np.ndarray
    col: np.ndarray
    channel: np.ndarray
    complete: bool = True
    _where: dict[str, tuple[int, int, int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(rows, columns, channels)``: the shape of the board tensor."""
        return (len(self.rows), len(self.columns), len(self.channels))

    def content(self, channel: int) -> str:
        """What channel number ``channel`` holds, as text: its values, or the relation's name for an
        occupancy grid (``(chocolate 3 4)``: ``chocolate``)."""
        return " ".join(self.channels[channel]) or self.relation

    def locate(self, fact: str) -> tuple[int, int, int] | None:
        """Where ``fact`` goes: ``(column, row, channel)`` indexes, or None for a fact that is not of the grid
        (another relation, or values off its axes or channels)."""
        found = self._where.get(fact)
        if found is not None:
            return found
        try:
            term = parse_term(fact)
        except KifSyntaxError:
            return None
        return self._place(term)

    def place(self, fact: str) -> tuple[int, int, str] | None:
        """Where ``fact`` goes and what it puts there: ``(column, row, content)`` (see :meth:`content`), or
        None for a fact that is not of the grid. In a grid found in one state, any content goes."""
        found = self.locate(fact)
        if found is not None:
            return found[0], found[1], self.content(found[2])
        if self.complete:
            return None
        try:
            term = parse_term(fact)
        except KifSyntaxError:
            return None
        split = self._split(term)
        if split is None or split[0] not in self.columns or split[1] not in self.rows:
            return None
        return self.columns.index(split[0]), self.rows.index(split[1]), " ".join(split[2]) or self.relation

    def _split(self, term: Term) -> tuple[str, str, tuple[str, ...]] | None:
        """A fact of the relation as its column value, row value and channel; None for any other."""
        if isinstance(term, str) or len(term) != self.arity + 1 or not isinstance(term[0], str):
            return None
        if term[0].lower() != self.relation.lower() or not all(isinstance(a, str) for a in term[1:]):
            return None
        args = [str(a) for a in term[1:]]
        return args[self.axes[0]], args[self.axes[1]], tuple(a for p, a in enumerate(args) if p not in self.axes)

    def _place(self, term: Term) -> tuple[int, int, int] | None:
        split = self._split(term)
        if split is None or split[0] not in self.columns or split[1] not in self.rows or split[2] not in self.channels:
            return None
        return self.columns.index(split[0]), self.rows.index(split[1]), self.channels.index(split[2])

    def cells(self, facts: list[str]) -> tuple[dict[tuple[int, int], list[str]], list[str]]:
        """What each cell holds in a state with ``facts`` (``(column, row)`` -> contents, see :meth:`place`),
        and the facts that are not of the grid, in their order."""
        held: dict[tuple[int, int], list[str]] = {}
        rest = []
        for fact in facts:
            where = self.place(fact)
            if where is None:
                rest.append(fact)
            else:
                held.setdefault((where[0], where[1]), []).append(where[2])
        return held, rest

    def move_cells(self, move: str) -> list[tuple[int, int]]:
        """The cells, ``(column, row)``, a move names: each column value followed by a row value among its
        arguments (``(move 1 2 1 3)`` names two); a move whose one argument is a column value names that
        column's cells (connect four's ``(drop 3)``)."""
        try:
            term = parse_term(move)
        except KifSyntaxError:
            return []
        args = [a if isinstance(a, str) else term_text(a) for a in term[1:]] if isinstance(term, tuple) else []
        ci = {x: i for i, x in enumerate(self.columns)}
        ri = {y: j for j, y in enumerate(self.rows)}
        found = []
        k = 0
        while k + 1 < len(args):
            if args[k] in ci and args[k + 1] in ri:
                found.append((ci[args[k]], ri[args[k + 1]]))
                k += 2
            else:
                k += 1
        if not found and len(args) == 1 and args[0] in ci:
            found = [(ci[args[0]], j) for j in range(len(self.rows))]
        return found


def _numeric(values: set[str]) -> bool:
    return all(v.lstrip("-").isdigit() for v in values)


def _ordered(values: set[str]) -> tuple[str, ...]:
    """An axis's values in order: numbers as numbers, filled in to a run without gaps; else as text."""
    if _numeric(values):
        nums = sorted({int(v) for v in values})
        if len(values) == len(nums) and nums[-1] - nums[0] < MAX_AXIS:  # each number spelt once: no "01"
            return tuple(str(n) for n in range(nums[0], nums[-1] + 1))
        return tuple(sorted(values, key=int))
    return tuple(sorted(values))


def find_grid(facts: list[str], initial: list[str] | None = None, *, complete: bool = True) -> Grid | None:
    """The grid ``facts`` lay out, or None (the module docstring says how it is found).

    ``facts`` are every fact a state may hold (a sheet's base propositions, ``complete=True``; the grid's
    ``index`` then refers to them) or the facts of one state (``complete=False``: cells may be empty, so
    coverage is not asked of numeric boards). ``initial``, the initial state's facts, tells a two-argument
    relation that is a set of values (once per first argument) from a board.

    >>> find_grid(["(control x)", "(step 1)", "(score a 10)", "(score b 10)"]) is None
    True
    >>> find_grid(["(heap a 3)", "(heap b 4)", "(heap c 5)", "(heap a 2)", "(heap b 3)", "(heap c 4)"],
    ...           ["(heap a 3)", "(heap b 4)", "(heap c 5)"]) is None
    True
    """
    groups: dict[tuple[str, int], list[tuple[int, tuple[str, ...]]]] = {}
    spelling: dict[str, str] = {}
    for i, text in enumerate(facts):
        try:
            term = parse_term(text)
        except KifSyntaxError:
            continue
        if isinstance(term, str) or len(term) < 3 or not all(isinstance(a, str) for a in term):
            continue
        name = str(term[0])
        spelling.setdefault(name.lower(), name)
        groups.setdefault((name.lower(), len(term) - 1), []).append((i, tuple(str(a) for a in term[1:])))
    values, placed = _initial_counts(initial or [])
    best: Grid | None = None
    best_score: tuple[int, int, int, int] = (0, 0, 0, -MAX_BOARD)
    for (name, arity), members in sorted(groups.items()):
        if arity == 2 and name in values:
            continue
        grid = _layout(spelling[name], arity, members, facts, complete)
        if grid is None:
            continue
        cells = len({(c, r) for c, r, _ in grid._where.values()})
        # of relations over as many cells, the one the game sets up ((cell_small ?x ?y b) over (inhibit_small
        # ?x ?y ?role)), then the one of fewest channels ((cell ?x ?y ?stone) over (group ?x ?y ?x2 ?y2))
        score = (1 if arity >= 3 else 0, cells, placed.get((name, arity), 0), -len(grid.channels))
        if score > best_score:
            best, best_score = grid, score
    return best


def _initial_counts(initial: list[str]) -> tuple[set[str], dict[tuple[str, int], int]]:
    """The two-argument relations that hold exactly once for each of two or more first arguments in
    ``initial`` (values, not cells), and how many facts of each relation (name, arity) ``initial`` holds."""
    keys: dict[str, list[str]] = {}
    placed: dict[tuple[str, int], int] = {}
    for text in initial:
        try:
            term = parse_term(text)
        except KifSyntaxError:
            continue
        if isinstance(term, tuple) and isinstance(term[0], str):
            name = term[0].lower()
            placed[(name, len(term) - 1)] = placed.get((name, len(term) - 1), 0) + 1
            if len(term) == 3 and all(isinstance(a, str) for a in term):
                keys.setdefault(name, []).append(str(term[1]))
    values = {name for name, firsts in keys.items() if len(firsts) > 1 and len(set(firsts)) == len(firsts)}
    return values, placed


def _layout(
    name: str, arity: int, members: list[tuple[int, tuple[str, ...]]], facts: list[str], complete: bool
) -> Grid | None:
    distinct = [len({args[p] for _, args in members}) for p in range(arity)]
    coords = [0, 1]
    if arity >= 3:
        first = {args[0] for _, args in members}
        last = {args[-1] for _, args in members}
        piece = 0 if not _numeric(first) and _numeric(last) else arity - 1  # (location ?piece ?x ?y)
        coords = [p for p in range(arity) if p != piece]
    # the two coordinates with the most values; a tie goes to the earlier one ((group ?x ?y ?x2 ?y2))
    ax = sorted(sorted(coords, key=lambda p: (-distinct[p], p))[:2])
    columns = _ordered({args[ax[0]] for _, args in members})
    rows = _ordered({args[ax[1]] for _, args in members})
    if not (2 <= len(columns) <= MAX_AXIS and 2 <= len(rows) <= MAX_AXIS):
        return None
    rest = [p for p in range(arity) if p not in ax]
    channels = tuple(sorted({tuple(args[p] for p in rest) for _, args in members}))
    if len(columns) * len(rows) * len(channels) > MAX_BOARD:
        return None
    cells = {(args[ax[0]], args[ax[1]]) for _, args in members}
    numeric = _numeric(set(columns + rows))
    if arity == 2 and not numeric:  # (on a b), (cell x1 black): a relation between things, not cells
        return None
    if 2 * len(cells) < len(columns) * len(rows) and (complete or arity < 3 or not numeric):
        return None
    ci = {v: k for k, v in enumerate(columns)}
    ri = {v: k for k, v in enumerate(rows)}
    chi = {v: k for k, v in enumerate(channels)}
    # the facts' own texts are looked up first: a state's facts are spelt as its game's base propositions
    where = {facts[i]: (ci[args[ax[0]]], ri[args[ax[1]]], chi[tuple(args[p] for p in rest)]) for i, args in members}
    if not complete:
        empty = np.zeros(0, dtype=np.int64)
        return Grid(name, arity, (ax[0], ax[1]), columns, rows, channels, empty, empty, empty, empty, False, where)
    index = np.array([i for i, _ in members], dtype=np.int64)
    col = np.array([ci[args[ax[0]]] for _, args in members], dtype=np.int64)
    row = np.array([ri[args[ax[1]]] for _, args in members], dtype=np.int64)
    channel = np.array([chi[tuple(args[p] for p in rest)] for _, args in members], dtype=np.int64)
    return Grid(name, arity, (ax[0], ax[1]), columns, rows, channels, index, row, col, channel, True, where)


def grid_of(game: Any) -> Grid | None:
    """The grid of a game's states (None if they have none), found once per game object.

    A game with ``base_facts`` (a :class:`~ggp.gdl.GDLGame`) is read from them; any other game (a sheet on
    the top-down prover, which does not know them) from its initial state's facts.

    >>> from ggp.gdl import builtin
    >>> grid = grid_of(builtin("wallmaze"))  # ggp's own sheet: (cell ?x ?y ?what), w a wall, o open
    >>> grid.shape, grid.channels
    ((9, 13, 4), (('a',), ('b',), ('o',), ('w',)))
    """
    try:
        return _GRIDS[game]
    except KeyError:
        pass
    except TypeError:  # not weakly referable: found each time
        return _find(game)
    found = _GRIDS[game] = _find(game)
    return found


def _find(game: Any) -> Grid | None:
    initial = list(game.state_facts(game.initial_state()))
    base = getattr(game, "base_facts", None)
    if base is not None:
        return find_grid(list(base), initial)
    return find_grid(initial, initial, complete=False)


_GRIDS: weakref.WeakKeyDictionary[Any, Grid | None] = weakref.WeakKeyDictionary()
