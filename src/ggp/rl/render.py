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
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .core import RLGame

#: Pixels per cell.
CELL = 24
_GRID = np.array([200, 204, 212], dtype=np.uint8)
_EMPTY = np.array([245, 246, 248], dtype=np.uint8)
#: Colours of the channels that are drawn, by observer kind; None: a whole-board channel, not drawn.
_PALETTES: dict[int, list[tuple[int, int, int] | None]] = {
    5: [(60, 66, 80), (70, 130, 230), (230, 90, 90), (250, 210, 120), None],  # wall maze
    11: [  # bomberman
        (70, 130, 230),
        (230, 90, 90),
        None,
        None,
        (255, 220, 120),
        (255, 180, 80),
        (255, 130, 50),
        (230, 70, 30),
        (255, 60, 0),
        None,
        None,
    ],
    6: [(70, 130, 230), (30, 30, 30), (150, 110, 70), None, None, (90, 200, 90)],  # amazons
}
_CYCLE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75)]


#: Channels painted first (under the others), by observer kind: wall maze's targets lie under the markers.
_UNDER = {5: (0, 3)}


def _paint(planes: np.ndarray, palette: list[tuple[int, int, int] | None]) -> np.ndarray:
    h, w, c = planes.shape
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = _EMPTY
    under = _UNDER.get(c, ()) if palette is _PALETTES.get(c) else ()
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
    if len(obs.shape) == 3:
        planes = obs.observe(s, 0)
        palette = _PALETTES.get(planes.shape[2], [])
        return _paint(planes, palette)
    if obs.board is not None:
        board = obs.board_of(s)
        return _paint(board, [_CYCLE[k % len(_CYCLE)] for k in range(board.shape[2])])
    flat = obs.observe(s, 0)
    side = max(1, math.ceil(math.sqrt(flat.size)))
    grid = np.zeros(side * side, dtype=np.float32)
    grid[: flat.size] = flat
    return _paint(grid.reshape(side, side, 1), [_CYCLE[0]])
