"""Observations: what a learning agent sees of a state, as float32 arrays a network can take (or bytes).

Each game gets an :class:`Observer` (:func:`observer_for`), which turns a state
array (the kernel's, see :class:`~ggp.core.native.KernelGame`) into the
observation of one role, one state at a time (:meth:`Observer.observe`) or a
whole batch at once (:meth:`Observer.observe_batch`, for the vector env).
Observations are *egocentric*: "own" and "other" planes follow the role asked
about, so one network can play either side.

A game family may give planes, ``(rows, columns, channels)`` like PettingZoo's
classic games, row 0 being the top of the board as ggp draws it (the highest
``y``), column 0 its left (``x = 1``): its :class:`~ggp.core.family.Planes`,
written in the family's own ``planes`` module, which says what each channel
means (``ggp.games.wallmaze.planes``: (9, 13, 5); Bomberman (8, 8, 11);
Amazons (N, N, 6)). Any other kernel game gives its state array, as numbers.

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

from ..core.family import Planes
from ..core.native import KernelGame
from ..gdl.grid import MAX_BOARD as MAX_BOARD
from ..gdl.grid import Grid, grid_of
from ..gdl.grid import find_grid as find_grid
from ..registry import family_of, part


# --- one signature for compiled loops: encode(s, role, aux, out), aux the game's constant tables ---------------
# (the last entry of every aux is the scale: 1.0 for float32 observations, 255.0 for bytes)
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
        self._args: tuple[Any, ...]
        self._one: Any
        self._batch: Any
        #: The observation as one compiled call ``encoder(s, role, aux, out)`` (``aux`` is :meth:`aux_for` out's dtype).
        self.encoder: Any = _flat_enc
        #: Whether every value lies in [0, 1], so that bytes (``dtype=np.uint8``) can carry it.
        self.unit = True
        family = family_of(game)
        spec = part(family, family.planes)(game) if family is not None and family.planes else None
        #: The family's planes (None: a rule sheet's or an unknown kernel game's flat vector).
        self.planes: Planes | None = spec
        if spec is not None:
            self.shape: tuple[int, ...] = spec.shape
            self._one, self._batch = spec.one, spec.batch
            self._args = spec.tables
            self.encoder = spec.encode
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
