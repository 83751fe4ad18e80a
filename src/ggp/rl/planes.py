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

from .observe import Observer


# --- anything else: the state array itself --------------------------------------------------------------------
@nb.njit(cache=True)
def _flat_update(old, new, role, aux, out):  # type: ignore[no-untyped-def]
    scale = aux[0]
    for j in range(new.shape[0]):
        if old[j] != new[j]:
            out[j] = new[j] * scale


def updater_for(observer: Observer) -> Any:
    """The compiled ``update(old, new, role, aux, out)`` that matches ``observer.encoder`` (see the module docstring):
    the family's own (its :class:`~ggp.core.family.Planes`), else one over the state array itself."""
    return observer.planes.update if observer.planes is not None else _flat_update
