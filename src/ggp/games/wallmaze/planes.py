"""How ``ggp.rl`` observes the wall maze: planes (9, 13, 5): walls, own marker, other marker, own target, the
step (step / 30 in every cell).

Egocentric ("own" and "other" follow the role asked about), row 0 the top of the board as ggp draws it
(the highest ``y``), column 0 its left. The encoder writes a whole observation; the update rewrites only what
changed between two states (see :mod:`ggp.rl.planes`); the tests compare the two on every game.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ...core.family import Planes


@nb.njit(cache=True, inline="always")
def _fraction(k, total, scale):  # type: ignore[no-untyped-def]
    # k / total in the observation's units: as is in floats (scale 1), rounded to the nearest byte value
    v = k * scale / total
    return v if scale == 1.0 else np.floor(v + 0.5)


# --- wall maze ----------------------------------------------------------------------------------
_WM_W, _WM_H, _WM_STEPS = 13, 9, 30


def _wallmaze_blank() -> np.ndarray:
    """The planes of an empty maze, flat: the walls set, every other channel 0 (copied, then filled in)."""
    from . import rules as wm

    planes = np.zeros((_WM_H, _WM_W, 5), dtype=np.float32)
    for c in range(_WM_W * _WM_H):
        if not wm.OPEN[c]:
            planes[_WM_H - 1 - c // _WM_W, c % _WM_W, 0] = 1.0
    return planes.reshape(-1)


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


@nb.njit(cache=True)
def _wallmaze_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _wallmaze_one(s, role, aux[0], aux[1], aux[2], out)


# --- wall maze: (9, 13, 5) = walls, own marker, other marker, own target, step ------------------------------
@nb.njit(cache=True, inline="always")
def _wm_at(c):  # type: ignore[no-untyped-def]
    # the flat offset of cell c's channel 0 (row 0 is the top, y = 9)
    return 5 * ((_WM_H - 1 - c // _WM_W) * _WM_W + c % _WM_W)


@nb.njit(cache=True)
def _wallmaze_update(old, new, role, aux, out):  # type: ignore[no-untyped-def]
    scale = aux[2]
    if old[2] != new[2]:
        step = _fraction(new[2], _WM_STEPS, scale)
        for p in range(_WM_H * _WM_W):
            out[5 * p + 4] = step
    for who in range(2):  # own marker in channel 1, the other's in channel 2
        r = role if who == 0 else 1 - role
        if old[r] != new[r]:
            out[_wm_at(old[r]) + 1 + who] = 0.0
            out[_wm_at(new[r]) + 1 + who] = scale


def planes(game: Any) -> Planes:
    """The wall maze's planes."""
    from . import rules as wm

    return Planes(
        shape=(_WM_H, _WM_W, 5),
        tables=(_wallmaze_blank(), np.asarray(wm.TARGET, dtype=np.int64)),
        one=_wallmaze_one,
        batch=_wallmaze_batch,
        encode=_wallmaze_enc,
        update=_wallmaze_update,
        palette=[(60, 66, 80), (70, 130, 230), (230, 90, 90), (250, 210, 120), None],
        under=(0, 3),  # the targets lie under the markers
    )
