"""How ``ggp.rl`` observes Bomberman: planes (8, 8, 11): own player, other player, the barrier north of a cell, the
barrier east of it, bombs by countdown (3, 2, 1, 0: four planes), fire, whether it is this role's turn
(always 1 in ``bomberman2p``), the step (step / 50).

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


# --- bomberman -----------------------------------------------------------------------------------
_BM_N, _BM_STEPS = 8, 50


def _bomberman_blank() -> np.ndarray:
    """The planes of an empty board, flat: the barriers set, every other channel 0 (copied, then filled in)."""
    from . import rules as bm

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


@nb.njit(cache=True)
def _bomberman_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _bomberman_one(s, role, aux[0], aux[1], aux[2], out)


# --- bomberman: (8, 8, 11) = own, other, barriers N and E, bombs 3..0, fire, turn, step ----------------------
@nb.njit(cache=True, inline="always")
def _bm_at(c):  # type: ignore[no-untyped-def]
    return 11 * ((_BM_N - 1 - c // _BM_N) * _BM_N + c % _BM_N)


@nb.njit(cache=True)
def _bomberman_update(old, new, role, aux, out):  # type: ignore[no-untyped-def]
    alternating, scale = aux[1], aux[2]
    if old[2] != new[2]:
        step = _fraction(new[2], _BM_STEPS, scale)
        mine = scale if (not alternating) or ((new[2] % 2 == 1) == (role == 0)) else 0.0
        was = scale if (not alternating) or ((old[2] % 2 == 1) == (role == 0)) else 0.0
        if mine != was:
            for p in range(_BM_N * _BM_N):
                out[11 * p + 9] = mine
                out[11 * p + 10] = step
        else:
            for p in range(_BM_N * _BM_N):
                out[11 * p + 10] = step
    for who in range(2):  # own player in channel 0, the other in channel 1
        r = role if who == 0 else 1 - role
        if old[r] != new[r]:
            out[_bm_at(old[r]) + who] = 0.0
            out[_bm_at(new[r]) + who] = scale
    for k in range(5):  # bomb3, bomb2, bomb1, bomb0, fire: state entries 3..7, channels 4..8
        changed = old[3 + k] ^ new[3 + k]
        bits = new[3 + k]
        for b in range(8):  # by bytes: a bitboard holds a few bits, most bytes are 0
            if (changed >> (8 * b)) & 255:
                for c in range(8 * b, 8 * b + 8):
                    if (changed >> c) & 1:
                        out[_bm_at(c) + 4 + k] = scale * ((bits >> c) & 1)


def planes(game: Any) -> Planes:
    """Bomberman's planes (either variant)."""
    return Planes(
        shape=(_BM_N, _BM_N, 11),
        tables=(_bomberman_blank(), bool(getattr(game, "alternating", False))),
        one=_bomberman_one,
        batch=_bomberman_batch,
        encode=_bomberman_enc,
        update=_bomberman_update,
        palette=[
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
    )
