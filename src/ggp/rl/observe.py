"""Observations: what a learning agent sees of a state, as float32 arrays a network can take (or bytes).

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
from typing import Any

import numba as nb
import numpy as np

from ..core.native import KernelGame
from ..gdl.grid import MAX_BOARD as MAX_BOARD
from ..gdl.grid import Grid, grid_of
from ..gdl.grid import find_grid as find_grid

# --- wall maze ----------------------------------------------------------------------------------
_WM_W, _WM_H, _WM_STEPS = 13, 9, 30


def _wallmaze_blank() -> np.ndarray:
    """The planes of an empty maze, flat: the walls set, every other channel 0 (copied, then filled in)."""
    from ..games.wallmaze import rules as wm

    planes = np.zeros((_WM_H, _WM_W, 5), dtype=np.float32)
    for c in range(_WM_W * _WM_H):
        if not wm.OPEN[c]:
            planes[_WM_H - 1 - c // _WM_W, c % _WM_W, 0] = 1.0
    return planes.reshape(-1)


@nb.njit(cache=True, inline="always")
def _fraction(k, total, scale):  # type: ignore[no-untyped-def]
    # k / total in the observation's units: as is in floats (scale 1), rounded to the nearest byte value
    v = k * scale / total
    return v if scale == 1.0 else np.floor(v + 0.5)


@nb.njit(cache=True)
def _wallmaze_one(s, role, blank, targets, scale, out):  # type: ignore[no-untyped-def]
    # copy the empty maze (a contiguous copy, at memory speed), then the step plane and the three cells set
    flat = out  # one row, flat: (rows * columns * channels,), channels last
    for j in range(blank.shape[0]):  # an explicit loop: numba's slice assignment is three times slower here
        flat[j] = blank[j]
    step = _fraction(s[2], _WM_STEPS, scale)
    for p in range(_WM_H * _WM_W):
        flat[5 * p + 4] = step
    me, other, t = s[role], s[1 - role], targets[role]
    flat[5 * ((_WM_H - 1 - me // _WM_W) * _WM_W + me % _WM_W) + 1] = scale
    flat[5 * ((_WM_H - 1 - other // _WM_W) * _WM_W + other % _WM_W) + 2] = scale
    flat[5 * ((_WM_H - 1 - t // _WM_W) * _WM_W + t % _WM_W) + 3] = scale


@nb.njit(cache=True)
def _wallmaze_batch(states, role, walls, targets, scale, out):  # type: ignore[no-untyped-def]
    for i in range(states.shape[0]):
        _wallmaze_one(states[i], role, walls, targets, scale, out[i])


# --- bomberman -----------------------------------------------------------------------------------
_BM_N, _BM_STEPS = 8, 50


def _bomberman_blank() -> np.ndarray:
    """The planes of an empty board, flat: the barriers set, every other channel 0 (copied, then filled in)."""
    from ..games.bomberman import rules as bm

    planes = np.zeros((_BM_N, _BM_N, 11), dtype=np.float32)
    for x in range(1, _BM_N + 1):
        for y in range(1, _BM_N + 1):
            planes[_BM_N - y, x - 1, 2] = (x, y) in bm.BLOCKED_NORTH
            planes[_BM_N - y, x - 1, 3] = (x, y) in bm.BLOCKED_EAST
    return planes.reshape(-1)


@nb.njit(cache=True)
def _bomberman_one(s, role, blank, alternating, scale, out):  # type: ignore[no-untyped-def]
    # copy the empty board (a contiguous copy), then the two whole-board channels, the players and the set
    # bits of the bomb and fire bitboards (a handful at most)
    flat = out  # one row, flat: (rows * columns * channels,), channels last
    for j in range(blank.shape[0]):  # an explicit loop: numba's slice assignment is three times slower here
        flat[j] = blank[j]
    mine = scale if (not alternating) or ((s[2] % 2 == 1) == (role == 0)) else 0.0
    step = _fraction(s[2], _BM_STEPS, scale)
    for p in range(64):
        flat[11 * p + 9] = mine
        flat[11 * p + 10] = step
    me, other = s[role], s[1 - role]
    flat[11 * ((_BM_N - 1 - me // _BM_N) * _BM_N + me % _BM_N)] = scale
    flat[11 * ((_BM_N - 1 - other // _BM_N) * _BM_N + other % _BM_N) + 1] = scale
    for k in range(5):  # bomb3, bomb2, bomb1, bomb0, fire: state entries 3..7
        bits = s[3 + k]
        for b in range(8):  # by bytes: a bitboard holds a few bits, most of its bytes are 0
            if (bits >> (8 * b)) & 255:
                for c in range(8 * b, 8 * b + 8):
                    if (bits >> c) & 1:
                        flat[11 * ((_BM_N - 1 - c // _BM_N) * _BM_N + c % _BM_N) + 4 + k] = scale


@nb.njit(cache=True)
def _bomberman_batch(states, role, barriers, alternating, scale, out):  # type: ignore[no-untyped-def]
    for i in range(states.shape[0]):
        _bomberman_one(states[i], role, barriers, alternating, scale, out[i])


# --- amazons -------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _amazons_one(s, role, n, scale, out):  # type: ignore[no-untyped-def]
    # one contiguous pass, row by row (no division per cell: n is not a compile-time constant); the piece
    # channels are comparisons turned into numbers, not branches: a board's cells are too mixed to predict
    flat = out  # one row, flat: (rows * columns * channels,), channels last
    nn = n * n
    own = role + 1
    one = np.float32(scale)
    turn = one * (s[nn] == role)
    fire = s[nn + 1] == 1
    phase = one * fire
    for y in range(n):
        j = 6 * (n - 1 - y) * n
        c = y * n
        for _ in range(n):
            v = s[c]
            mine = one * (v == own)
            arrow = one * (v == 3)
            flat[j] = mine
            flat[j + 1] = one * (v != 0) - mine - arrow  # the opponent's: occupied, not own, not an arrow
            flat[j + 2] = arrow
            flat[j + 3] = turn
            flat[j + 4] = phase
            flat[j + 5] = 0.0
            j += 6
            c += 1
    if fire:
        c = s[nn + 2]
        flat[6 * ((n - 1 - c // n) * n + c % n) + 5] = scale


@nb.njit(cache=True)
def _amazons_batch(states, role, n, scale, out):  # type: ignore[no-untyped-def]
    for i in range(states.shape[0]):
        _amazons_one(states[i], role, n, scale, out[i])


# --- one signature for compiled loops: encode(s, role, aux, out), aux the game's constant tables ---------------
# (the last entry of every aux is the scale: 1.0 for float32 observations, 255.0 for bytes)
@nb.njit(cache=True)
def _wallmaze_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _wallmaze_one(s, role, aux[0], aux[1], aux[2], out)


@nb.njit(cache=True)
def _bomberman_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _bomberman_one(s, role, aux[0], aux[1], aux[2], out)


@nb.njit(cache=True)
def _amazons_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _amazons_one(s, role, aux[0], aux[1], out)


@nb.njit(cache=True)
def _flat_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    scale = aux[0]
    for j in range(s.shape[0]):
        out[j] = s[j] * scale


# --- rule sheets ---------------------------------------------------------------------------------
# A sheet's board tensor is laid out by the grid the web app draws too: found once, in ggp.gdl.grid.
GridLayout = Grid


# --- the observer --------------------------------------------------------------------------------
class Observer:
    """A game's observations: :attr:`shape` for each role, and :attr:`board_shape` (rule sheets with a grid).

    Built by :func:`observer_for`; see the module docstring for what each channel means. Observations are
    float32 by default; ``dtype=np.uint8`` gives the same planes as bytes, every value times 255 (rounded):
    a quarter of the memory, and ``obs / 255`` is the float observation (to 1/510 on fractional planes).
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
        #: The observation as one compiled call ``encoder(s, role, aux, out)`` (``aux`` is :meth:`aux_for` out's dtype).
        self.encoder: Any = _flat_enc
        #: Whether every value lies in [0, 1], so that bytes (``dtype=np.uint8``) can carry it.
        self.unit = True
        if kind == "ggp.games.wallmaze.rules":
            from ..games.wallmaze import rules as wm

            self.shape: tuple[int, ...] = (_WM_H, _WM_W, 5)
            self._one, self._batch = _wallmaze_one, _wallmaze_batch
            self._args = (_wallmaze_blank(), np.asarray(wm.TARGET, dtype=np.int64))
            self.encoder = _wallmaze_enc
        elif kind == "ggp.games.bomberman.rules":
            self.shape = (_BM_N, _BM_N, 11)
            self._one, self._batch = _bomberman_one, _bomberman_batch
            self._args = (_bomberman_blank(), bool(getattr(game, "alternating", False)))
            self.encoder = _bomberman_enc
        elif kind == "ggp.games.amazons.rules":
            n = round((len(game.initial_array()) - 3) ** 0.5)
            self.shape = (n, n, 6)
            self._one, self._batch = _amazons_one, _amazons_batch
            self._args = (n,)
            self.encoder = _amazons_enc
        elif hasattr(game, "propnet"):
            self.shape = (len(game.initial_array()),)
            self._one = self._batch = None
            self._args = ()
            self.board = grid_of(game)
            self.board_shape = self.board.shape if self.board is not None else None
        else:  # a kernel game ggp.rl does not know: its state array, as numbers
            self.shape = (len(game.initial_array()),)
            self._one = self._batch = None
            self._args = ()
            self.unit = False
        self.name = name
        self._aux = {np.dtype(np.float32): self._tables(1.0), np.dtype(np.uint8): self._tables(255.0)}
        #: The float32 observations' ``aux``.
        self.aux: tuple[Any, ...] = self._aux[np.dtype(np.float32)]

    def _tables(self, scale: float) -> tuple[Any, ...]:
        # the blank planes (the first table of wall maze and Bomberman) in the observation's units
        args = self._args
        if args and isinstance(args[0], np.ndarray) and scale != 1.0:
            args = (np.asarray(args[0] * scale, dtype=np.uint8), *args[1:])
        return (*args, scale)

    def aux_for(self, dtype: Any) -> tuple[Any, ...]:
        """The encoder's constant tables for observations of ``dtype`` (float32 or uint8); ValueError otherwise."""
        key = np.dtype(dtype)
        aux = self._aux.get(key)
        if aux is None:
            raise ValueError(f"observations are float32 or uint8, not {key}")
        if key == np.uint8 and not self.unit:
            raise ValueError(f"{self.name}: its observation (a state array ggp.rl does not know) does not fit in bytes")
        return aux

    def observe(self, s: np.ndarray, role: int, dtype: Any = np.float32) -> np.ndarray:
        """The observation of role number ``role`` in state array ``s``: a new array of :attr:`shape` (float32, or uint8)."""
        aux = self.aux if dtype is np.float32 else self.aux_for(dtype)  # the float case at every env step
        out = np.empty(self.shape, dtype=dtype)
        if self._one is not None:
            self._one(s, role, *aux, out.reshape(-1))  # encoders write a flat row: no view per cell
        else:
            out[:] = s * aux[-1]
        return out

    def observe_batch(self, states: np.ndarray, role: int, out: np.ndarray | None = None) -> np.ndarray:
        """The observations of ``role`` in each row of ``states`` (B, L): float32 (B, *shape), or into ``out``
        (C-contiguous, float32 or uint8)."""
        if out is None:
            out = np.empty((states.shape[0], *self.shape), dtype=np.float32)
        elif out.shape != (states.shape[0], *self.shape) or out.dtype not in self._aux or not out.flags.c_contiguous:
            raise ValueError(
                f"out must be a C-contiguous float32 or uint8 array of shape {(states.shape[0], *self.shape)}"
            )
        aux = self.aux_for(out.dtype)
        if self._batch is not None:
            self._batch(states, role, *aux, out.reshape(states.shape[0], -1))
        else:
            out[:] = states * aux[-1]
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
