"""``render_mode="rgb_array"``: a small raster picture of a state, drawn from its observation planes.

Each cell of the board is a square filled with the colour of the last
channel set in it (so pieces paint over walls and bombs over barriers),
seen by the first role (its pieces blue, the other's red or black);
channels that fill the whole board (the step, whose turn it is) are not
drawn. A rule sheet's game is drawn from its board tensor when it has one,
else as its base propositions, one square each, row by row.

>>> import ggp
>>> from ggp.rl.core import RLGame
>>> rg = RLGame.of("wallmaze")
>>> rgb_array(rg, rg.initial()).shape
(216, 312, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .core import RLGame

#: Pixels per cell.
CELL = 24
_GRID = np.array([200, 204, 212], dtype=np.uint8)
_EMPTY = np.array([245, 246, 248], dtype=np.uint8)
_CYCLE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75)]


def _paint(
    planes: np.ndarray, palette: Sequence[tuple[int, int, int] | None], under: tuple[int, ...] = ()
) -> np.ndarray:
    """The planes as a picture: each channel in its palette colour (None: not drawn), ``under`` first."""
    h, w, c = planes.shape
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = _EMPTY
    for k in [*under, *(k for k in range(c) if k not in under)]:
        colour = palette[k] if k < len(palette) else _CYCLE[k % len(_CYCLE)]
        if colour is not None:
            img[planes[:, :, k] > 0] = colour
    big = np.repeat(np.repeat(img, CELL, axis=0), CELL, axis=1)
    big[::CELL, :] = _GRID
    big[:, ::CELL] = _GRID
    return big


def rgb_array(rg: RLGame, s: np.ndarray) -> np.ndarray:
    """State array ``s`` of ``rg``'s game as an ``(height, width, 3)`` uint8 picture (first role's view)."""
    obs = rg.observer
    if obs.planes is not None:  # a family's planes, in the colours it gives
        return _paint(obs.observe(s, 0), obs.planes.palette, obs.planes.under)
    if obs.board is not None:
        board = obs.board_of(s)
        return _paint(board, [_CYCLE[k % len(_CYCLE)] for k in range(board.shape[2])])
    flat = obs.observe(s, 0)
    side = max(1, math.ceil(math.sqrt(flat.size)))
    grid = np.zeros(side * side, dtype=np.float32)
    grid[: flat.size] = flat
    return _paint(grid.reshape(side, side, 1), [_CYCLE[0]])
