"""Observations: what a learning agent sees of a state, as float32 arrays a network can take.

Each game gets an :class:`Observer` (:func:`observer_for`), which turns a state
array (the kernel's, see :class:`~ggp.core.native.KernelGame`) into the
observation of one role, one state at a time (:meth:`Observer.observe`) or a
whole batch at once (:meth:`Observer.observe_batch`, for the vector env).
Observations are *egocentric*: "own" and "other" planes follow the role asked
about, so one network can play either side.

Built-in games give planes, ``(rows, columns, channels)`` like PettingZoo's
classic games, row 0 being the top of the board as ggp draws it (the highest
``y``), column 0 its left (``x = 1``):

* ``wallmaze`` (9, 13, 5): walls, own marker, other marker, own target, the
  step (step / 30 in every cell);
* ``bomberman``, ``bomberman2p`` (8, 8, 11): own player, other player, the
  barrier north of a cell, the barrier east of it, bombs by countdown (3, 2, 1,
  0: four planes), fire, whether it is this role's turn (always 1 in
  ``bomberman2p``), the step (step / 50);
* ``amazons_8x8``, ``amazons_10x10`` (N, N, 6): own amazons, opponent amazons,
  arrows, whether it is this role's turn, the phase (1 in the fire phase), the
  amazon that must fire (one cell set in the fire phase).

A rule sheet's game gives its base propositions as a flat 0/1 vector, in the
order of :attr:`GDLGame.base_facts <ggp.gdl.GDLGame.base_facts>`, and, when
its state is a grid of cells, a board tensor too (:class:`GridLayout`, found
by :func:`find_grid`).

>>> import ggp
>>> obs = observer_for(ggp.load("wallmaze"))
>>> o = obs.observe(ggp.load("wallmaze").initial_array(), 0)
>>> o.shape, o.dtype, int(o[4, 1, 1]), int(o[4, 11, 2])  # white at (2,5), black at (12,5)
((9, 13, 5), dtype('float32'), 1, 1)
"""

from __future__ import annotations

import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from ..core.kif import parse_term
from ..core.native import KernelGame

# --- wall maze ----------------------------------------------------------------------------------
_WM_W, _WM_H, _WM_STEPS = 13, 9, 30


def _wallmaze_blank() -> np.ndarray:
    """The planes of an empty maze, flat: the walls set, every other channel 0 (copied, then filled in)."""
    from ..games import wallmaze as wm

    planes = np.zeros((_WM_H, _WM_W, 5), dtype=np.float32)
    for c in range(_WM_W * _WM_H):
        if not wm.OPEN[c]:
            planes[_WM_H - 1 - c // _WM_W, c % _WM_W, 0] = 1.0
    return planes.reshape(-1)


@nb.njit(cache=True)
def _wallmaze_one(s, role, blank, targets, out):  # type: ignore[no-untyped-def]
    # copy the empty maze (a contiguous copy, at memory speed), then the step plane and the three cells set
    flat = out  # one row, flat: (rows * columns * channels,), channels last
    for j in range(blank.shape[0]):  # an explicit loop: numba's slice assignment is three times slower here
        flat[j] = blank[j]
    step = s[2] / _WM_STEPS
    for p in range(_WM_H * _WM_W):
        flat[5 * p + 4] = step
    me, other, t = s[role], s[1 - role], targets[role]
    flat[5 * ((_WM_H - 1 - me // _WM_W) * _WM_W + me % _WM_W) + 1] = 1.0
    flat[5 * ((_WM_H - 1 - other // _WM_W) * _WM_W + other % _WM_W) + 2] = 1.0
    flat[5 * ((_WM_H - 1 - t // _WM_W) * _WM_W + t % _WM_W) + 3] = 1.0


@nb.njit(cache=True)
def _wallmaze_batch(states, role, walls, targets, out):  # type: ignore[no-untyped-def]
    for i in range(states.shape[0]):
        _wallmaze_one(states[i], role, walls, targets, out[i])


# --- bomberman -----------------------------------------------------------------------------------
_BM_N, _BM_STEPS = 8, 50


def _bomberman_blank() -> np.ndarray:
    """The planes of an empty board, flat: the barriers set, every other channel 0 (copied, then filled in)."""
    from ..games import bomberman as bm

    planes = np.zeros((_BM_N, _BM_N, 11), dtype=np.float32)
    for x in range(1, _BM_N + 1):
        for y in range(1, _BM_N + 1):
            planes[_BM_N - y, x - 1, 2] = (x, y) in bm.BLOCKED_NORTH
            planes[_BM_N - y, x - 1, 3] = (x, y) in bm.BLOCKED_EAST
    return planes.reshape(-1)


@nb.njit(cache=True)
def _bomberman_one(s, role, blank, alternating, out):  # type: ignore[no-untyped-def]
    # copy the empty board (a contiguous copy), then the two whole-board channels, the players and the set
    # bits of the bomb and fire bitboards (a handful at most)
    flat = out  # one row, flat: (rows * columns * channels,), channels last
    for j in range(blank.shape[0]):  # an explicit loop: numba's slice assignment is three times slower here
        flat[j] = blank[j]
    mine = 1.0 if (not alternating) or ((s[2] % 2 == 1) == (role == 0)) else 0.0
    step = s[2] / _BM_STEPS
    for p in range(64):
        flat[11 * p + 9] = mine
        flat[11 * p + 10] = step
    me, other = s[role], s[1 - role]
    flat[11 * ((_BM_N - 1 - me // _BM_N) * _BM_N + me % _BM_N)] = 1.0
    flat[11 * ((_BM_N - 1 - other // _BM_N) * _BM_N + other % _BM_N) + 1] = 1.0
    for k in range(5):  # bomb3, bomb2, bomb1, bomb0, fire: state entries 3..7
        bits = s[3 + k]
        if bits != 0:
            for c in range(64):
                if (bits >> c) & 1:
                    flat[11 * ((_BM_N - 1 - c // _BM_N) * _BM_N + c % _BM_N) + 4 + k] = 1.0


@nb.njit(cache=True)
def _bomberman_batch(states, role, barriers, alternating, out):  # type: ignore[no-untyped-def]
    for i in range(states.shape[0]):
        _bomberman_one(states[i], role, barriers, alternating, out[i])


# --- amazons -------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _amazons_one(s, role, n, out):  # type: ignore[no-untyped-def]
    # one contiguous pass, row by row (no division per cell: n is not a compile-time constant)
    flat = out  # one row, flat: (rows * columns * channels,), channels last
    nn = n * n
    own = role + 1
    turn = 1.0 if s[nn] == role else 0.0
    fire = s[nn + 1] == 1
    phase = 1.0 if fire else 0.0
    for y in range(n):
        j = 6 * (n - 1 - y) * n
        c = y * n
        for _ in range(n):
            v = s[c]
            flat[j] = 1.0 if v == own else 0.0
            flat[j + 1] = 1.0 if v != 0 and v != 3 and v != own else 0.0
            flat[j + 2] = 1.0 if v == 3 else 0.0
            flat[j + 3] = turn
            flat[j + 4] = phase
            flat[j + 5] = 0.0
            j += 6
            c += 1
    if fire:
        c = s[nn + 2]
        flat[6 * ((n - 1 - c // n) * n + c % n) + 5] = 1.0


@nb.njit(cache=True)
def _amazons_batch(states, role, n, out):  # type: ignore[no-untyped-def]
    for i in range(states.shape[0]):
        _amazons_one(states[i], role, n, out[i])


# --- one signature for compiled loops: encode(s, role, aux, out), aux the game's constant tables ---------------
@nb.njit(cache=True)
def _wallmaze_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _wallmaze_one(s, role, aux[0], aux[1], out)


@nb.njit(cache=True)
def _bomberman_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _bomberman_one(s, role, aux[0], aux[1], out)


@nb.njit(cache=True)
def _amazons_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _amazons_one(s, role, aux[0], out)


@nb.njit(cache=True)
def _flat_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    for j in range(s.shape[0]):
        out[j] = s[j]


# --- rule sheets ---------------------------------------------------------------------------------
#: A grid axis has at least this many values, so that a relation like (score ?player ?points) is no board.
MIN_AXIS = 3
#: The largest board tensor built (cells times channels).
MAX_BOARD = 1 << 20


@dataclass(frozen=True)
class GridLayout:
    """Where a rule sheet's grid relation puts each base proposition in the board tensor.

    ``relation`` is the relation's name and arity; ``axes`` the two argument
    positions read as (column, row); ``columns``, ``rows`` and ``channels`` the
    values along each (a channel is the tuple of the other arguments, the
    piece); ``index``, ``row``, ``col``, ``channel`` say that base proposition
    ``index[k]`` sets ``board[row[k], col[k], channel[k]]``.
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

    @property
    def shape(self) -> tuple[int, int, int]:
        return (len(self.rows), len(self.columns), len(self.channels))


def _ordered(values: set[str]) -> tuple[str, ...]:
    if all(v.lstrip("-").isdigit() for v in values):
        return tuple(sorted(values, key=int))
    return tuple(sorted(values))


def find_grid(base_facts: list[str]) -> GridLayout | None:
    """The board a rule sheet's state forms, if it forms one: the grid relation's layout, or None.

    How it is found: the base propositions are grouped by relation name and
    arity; a relation with two or more arguments of plain symbols is a
    candidate. Its last argument is the piece (the content of the cell) when
    it has three or more arguments; of the others, the two with the most
    distinct values are the column and the row (the earlier argument is the
    column: ``(cell ?x ?y ?piece)`` gives ``board[y, x, piece]``), and any
    others join the piece to make the channel (``(cell ?board ?x ?y ?piece)``
    has a channel per board and piece). A relation of two arguments is an
    occupancy grid of one channel. Values are ordered as numbers when they
    all are, else as text. The candidate must have at least 3 values on each
    axis and cover at least half of the cells; of the candidates, the one with
    the most propositions wins.

    >>> layout = find_grid(["(cell 1 1 x)", "(cell 1 1 b)", "(cell 2 1 b)", "(cell 3 1 b)", "(cell 1 2 b)",
    ...                     "(cell 2 2 b)", "(cell 3 2 b)", "(cell 1 3 b)", "(cell 2 3 o)", "(cell 3 3 b)",
    ...                     "(control white)"])
    >>> layout.relation, layout.shape, layout.channels
    ('cell', (3, 3, 3), (('b',), ('o',), ('x',)))
    """
    groups: dict[tuple[str, int], list[tuple[int, tuple[str, ...]]]] = {}
    for i, text in enumerate(base_facts):
        try:
            term = parse_term(text)
        except ValueError:
            continue
        if isinstance(term, str) or len(term) < 3 or not all(isinstance(a, str) for a in term):
            continue
        name, args = term[0], tuple(str(a) for a in term[1:])
        groups.setdefault((str(name).lower(), len(args)), []).append((i, args))
    best: GridLayout | None = None
    for (name, arity), members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if best is not None and len(members) <= len(best.index):
            break
        layout = _layout(name, arity, members)
        if layout is not None:
            best = layout
    return best


def _layout(name: str, arity: int, members: list[tuple[int, tuple[str, ...]]]) -> GridLayout | None:
    coords = list(range(arity - 1)) if arity >= 3 else [0, 1]
    distinct = [len({args[p] for _, args in members}) for p in range(arity)]
    # the two coordinates with the most values; a tie goes to the later one, nearer the piece
    ax = sorted(sorted(coords, key=lambda p: (distinct[p], p))[-2:])
    if min(distinct[ax[0]], distinct[ax[1]]) < MIN_AXIS:
        return None
    columns = _ordered({args[ax[0]] for _, args in members})
    rows = _ordered({args[ax[1]] for _, args in members})
    rest = [p for p in range(arity) if p not in ax]
    channels = tuple(sorted(Counter(tuple(args[p] for p in rest) for _, args in members)))
    cells = {(args[ax[0]], args[ax[1]]) for _, args in members}
    if 2 * len(cells) < len(columns) * len(rows) or len(columns) * len(rows) * len(channels) > MAX_BOARD:
        return None
    ci = {v: k for k, v in enumerate(columns)}
    ri = {v: k for k, v in enumerate(rows)}
    chi = {v: k for k, v in enumerate(channels)}
    index = np.array([i for i, _ in members], dtype=np.int64)
    col = np.array([ci[args[ax[0]]] for _, args in members], dtype=np.int64)
    row = np.array([ri[args[ax[1]]] for _, args in members], dtype=np.int64)
    channel = np.array([chi[tuple(args[p] for p in rest)] for _, args in members], dtype=np.int64)
    return GridLayout(name, arity, (ax[0], ax[1]), columns, rows, channels, index, row, col, channel)


# --- the observer --------------------------------------------------------------------------------
class Observer:
    """A game's observations: :attr:`shape` for each role, and :attr:`board_shape` (rule sheets with a grid).

    Built by :func:`observer_for`; see the module docstring for what each channel means.
    """

    def __init__(self, game: KernelGame) -> None:
        self.game = game
        self.board: GridLayout | None = None
        self.board_shape: tuple[int, ...] | None = None
        name = game.name
        kind = type(game).__module__
        self._args: tuple[Any, ...]
        self._one: Any
        self._batch: Any
        #: The observation as one compiled call ``encoder(s, role, aux, out)`` (``aux`` is :attr:`aux`).
        self.encoder: Any = _flat_enc
        if kind == "ggp.games.wallmaze":
            from ..games import wallmaze as wm

            self.shape: tuple[int, ...] = (_WM_H, _WM_W, 5)
            self._one, self._batch = _wallmaze_one, _wallmaze_batch
            self._args = (_wallmaze_blank(), np.asarray(wm.TARGET, dtype=np.int64))
            self.encoder = _wallmaze_enc
        elif kind == "ggp.games.bomberman":
            self.shape = (_BM_N, _BM_N, 11)
            self._one, self._batch = _bomberman_one, _bomberman_batch
            self._args = (_bomberman_blank(), bool(getattr(game, "alternating", False)))
            self.encoder = _bomberman_enc
        elif kind == "ggp.games.amazons":
            n = round((len(game.initial_array()) - 3) ** 0.5)
            self.shape = (n, n, 6)
            self._one, self._batch = _amazons_one, _amazons_batch
            self._args = (n,)
            self.encoder = _amazons_enc
        elif hasattr(game, "propnet"):
            self.shape = (len(game.initial_array()),)
            self._one = self._batch = None
            self._args = ()
            self.board = find_grid(list(game.base_facts))  # type: ignore[attr-defined]
            self.board_shape = self.board.shape if self.board is not None else None
        else:  # a kernel game ggp.rl does not know: its state array, as numbers
            self.shape = (len(game.initial_array()),)
            self._one = self._batch = None
            self._args = ()
        self.name = name
        self.aux: tuple[Any, ...] = self._args if self._args else (0,)

    def observe(self, s: np.ndarray, role: int) -> np.ndarray:
        """The observation of role number ``role`` in state array ``s``: a new float32 array of :attr:`shape`."""
        out = np.empty(self.shape, dtype=np.float32)
        if self._one is not None:
            self._one(s, role, *self._args, out.reshape(-1))  # encoders write a flat row: no view per cell
        else:
            out[:] = s
        return out

    def observe_batch(self, states: np.ndarray, role: int, out: np.ndarray | None = None) -> np.ndarray:
        """The observations of ``role`` in each row of ``states`` (B, L): float32 (B, *shape), into ``out`` if given."""
        if out is None:
            out = np.empty((states.shape[0], *self.shape), dtype=np.float32)
        elif out.shape != (states.shape[0], *self.shape) or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape {(states.shape[0], *self.shape)}")
        if self._batch is not None:
            self._batch(states, role, *self._args, out.reshape(states.shape[0], -1))
        else:
            out[:] = states
        return out

    def board_of(self, s: np.ndarray) -> np.ndarray:
        """A rule sheet's board tensor for state array ``s``: float32 of :attr:`board_shape` (see :func:`find_grid`)."""
        if self.board is None:
            raise ValueError(f"{self.name}: no grid was found in this rule sheet's state, so it has no board tensor")
        b = self.board
        out = np.zeros(b.shape, dtype=np.float32)
        out[b.row, b.col, b.channel] = s[b.index]
        return out

    def board_batch(self, states: np.ndarray) -> np.ndarray:
        """:meth:`board_of` for every row of ``states``."""
        if self.board is None:
            raise ValueError(f"{self.name}: no grid was found in this rule sheet's state, so it has no board tensor")
        b = self.board
        out = np.zeros((states.shape[0], *b.shape), dtype=np.float32)
        out[:, b.row, b.col, b.channel] = states[:, b.index]
        return out


def observer_for(game: KernelGame) -> Observer:
    """The :class:`Observer` of ``game`` (any game :func:`ggp.load` returns)."""
    if not isinstance(game, KernelGame):
        raise TypeError(f"ggp.rl needs a game with a compiled kernel (any game ggp.load returns), not {game!r}")
    cached = _OBSERVERS.get(game)
    if cached is None:
        cached = _OBSERVERS[game] = Observer(game)
    return cached


# One observer per game object, dropped with the game.
_OBSERVERS: weakref.WeakKeyDictionary[KernelGame, Observer] = weakref.WeakKeyDictionary()
