"""How ``ggp.rl`` observes Amazons: planes (N, N, 6): own amazons, opponent amazons, arrows, whether it is this
role's turn, the phase (1 in the fire phase), the amazon that must fire (one cell set in the fire phase).

Egocentric ("own" and "other" follow the role asked about), row 0 the top of the board as ggp draws it
(the highest ``y``), column 0 its left. The encoder writes a whole observation; the update rewrites only what
changed between two states (see :mod:`ggp.rl.planes`); the tests compare the two on every game.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ...core.family import Planes


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


@nb.njit(cache=True)
def _amazons_enc(s, role, aux, out):  # type: ignore[no-untyped-def]
    _amazons_one(s, role, aux[0], aux[1], out)


# --- amazons: (N, N, 6) = own amazons, opponent's, arrows, turn, fire phase, the amazon that must fire ------
@nb.njit(cache=True)
def _amazons_update(old, new, role, aux, out):  # type: ignore[no-untyped-def]
    n, scale = aux[0], aux[1]
    one = np.float32(scale)
    nn = n * n
    own = role + 1
    for c in range(nn):  # a move changes two cells, an arrow one
        v = new[c]
        if old[c] != v:
            j = 6 * ((n - 1 - c // n) * n + c % n)
            mine = one * (v == own)
            arrow = one * (v == 3)
            out[j] = mine
            out[j + 1] = one * (v != 0) - mine - arrow
            out[j + 2] = arrow
    turn_changed = (old[nn] == role) != (new[nn] == role)
    phase_changed = old[nn + 1] != new[nn + 1]
    if turn_changed or phase_changed:
        turn = scale if new[nn] == role else 0.0
        phase = scale if new[nn + 1] == 1 else 0.0
        for p in range(nn):
            out[6 * p + 3] = turn
            out[6 * p + 4] = phase
    if old[nn + 1] == 1:  # the amazon that had to fire
        c = old[nn + 2]
        out[6 * ((n - 1 - c // n) * n + c % n) + 5] = 0.0
    if new[nn + 1] == 1:
        c = new[nn + 2]
        out[6 * ((n - 1 - c // n) * n + c % n) + 5] = scale


def planes(game: Any) -> Planes:
    """Amazons' planes, on a board of either size."""
    n = round((len(game.initial_array()) - 3) ** 0.5)
    return Planes(
        shape=(n, n, 6),
        tables=(n,),
        one=_amazons_one,
        batch=_amazons_batch,
        encode=_amazons_enc,
        update=_amazons_update,
        palette=[(70, 130, 230), (30, 30, 30), (150, 110, 70), None, None, (90, 200, 90)],
    )
