"""Observation updates: rewrite only what changed between two states, for the vector env's own buffer.

An encoder of :mod:`ggp.rl.observe` writes a whole observation (every float
of every plane); most of those floats are the same as in the state before
(walls, barriers, the untouched cells of a board). :func:`updater_for` gives,
for a game's :class:`~ggp.rl.observe.Observer`, a compiled function
``update(old, new, role, aux, out)`` that turns ``out``, the observation of
state array ``old``, into the observation of state array ``new``: it compares
the two states field by field and rewrites the planes of the fields that
differ. ``old`` and ``new`` may be any two states of the game (a restarted row
goes from its final state straight back to the initial one), so the result
never depends on the buffer having followed every step.

>>> import numpy as np
>>> import ggp
>>> from ggp.rl.observe import observer_for
>>> game = ggp.load("wallmaze")
>>> obs = observer_for(game)
>>> a = game.initial_array()
>>> b = a.copy(); b[0] += 1; b[2] += 1  # white one cell east, one step later
>>> out = obs.observe(a, 0).reshape(-1)
>>> updater_for(obs)(a, b, 0, obs.aux, out)
>>> bool(np.array_equal(out, obs.observe(b, 0).reshape(-1)))
True
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from .observe import (
    _BM_N,
    _BM_STEPS,
    _WM_H,
    _WM_STEPS,
    _WM_W,
    Observer,
    _amazons_enc,
    _bomberman_enc,
    _wallmaze_enc,
)


@nb.njit(cache=True, inline="always")
def _fraction(k, total, scale):  # type: ignore[no-untyped-def]
    # observe's _fraction, written again here: numba's cache of a compiled function checks its own file
    # only, so calling observe's would leave these updates compiled against an old copy after a change there
    # (the tests compare the two on every game)
    v = k * scale / total
    return v if scale == 1.0 else np.floor(v + 0.5)


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


# --- anything else: the state array itself --------------------------------------------------------------------
@nb.njit(cache=True)
def _flat_update(old, new, role, aux, out):  # type: ignore[no-untyped-def]
    scale = aux[0]
    for j in range(new.shape[0]):
        if old[j] != new[j]:
            out[j] = new[j] * scale


_UPDATERS = {_wallmaze_enc: _wallmaze_update, _bomberman_enc: _bomberman_update, _amazons_enc: _amazons_update}


def updater_for(observer: Observer) -> Any:
    """The compiled ``update(old, new, role, aux, out)`` that matches ``observer.encoder`` (see the module docstring)."""
    return _UPDATERS.get(observer.encoder, _flat_update)
