"""Moves and games on the differential evaluator's state (:mod:`ggp.gdl.differential`).

From a loaded state, :func:`dn_load` brings the values to another state and
:func:`dn_step` to the next state of a joint move, both by propagating only
what differs (from scratch when the propagation stack runs out); a random
legal move is drawn from the legal sets (:func:`legal_pick`) as the sweep
evaluator draws it from the values, so :func:`dn_playouts` plays the same
games as :func:`ggp.gdl.evaluate.pn_playouts`. These functions trust their
arguments: they serve the compiled loops of :mod:`ggp.gdl.kernel`.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .differential import (
    DN_BLOCKS,
    DN_CHANGED,
    DN_COUNT,
    DN_DOES,
    DN_IN,
    DN_STACK,
    DN_TCOUNT,
    DN_TFLAG,
    DN_TLIST,
    DN_VALS,
    LEGAL_SHIFT,
    dn_alloc,
    dn_propagate,
    dn_reset,
    dn_reset_loaded,
    uncounted,
)
from .evaluate import check_playout_arrays, playout_over, sweep_phase
from .network import H_NBASE, H_NROLES, H_TERMINAL, Network


@uncounted
def _dn_random_joint(
    net: Network, dn: tuple[np.ndarray, ...], rng: np.ndarray, does: np.ndarray, error: np.ndarray
) -> bool:
    """:func:`ggp.gdl.evaluate._random_joint` from the legal sets: the same moves for the same ``rng``."""
    lblocks, lcount, lin = dn[DN_BLOCKS], dn[DN_COUNT], dn[DN_IN]
    lptr = net.legal_ptr
    ldoes = net.legal_does
    for r in range(net.header[H_NROLES]):
        n = lcount[r]
        if n == 0:
            error[0] = 1
            error[1] = r
            return False
        does[r] = ldoes[lptr[r] + legal_pick(net, lblocks, lin, r, rng_below(rng, n))]
    return True


@uncounted
def legal_pick(net: Network, lblocks: np.ndarray, lin: np.ndarray, r: int, j: int | np.integer[Any]) -> int:
    """Where role ``r``'s ``j``-th legal move (from 0, in :func:`legal`'s order) sits in its legal list.

    The role's block counts are skipped until the block holding it, whose entries are then read.
    """
    lo = net.legal_ptr[r]
    b0 = (lo >> LEGAL_SHIFT) + r
    b = b0
    rem = j
    while lblocks[b] <= rem:
        rem -= lblocks[b]
        b += 1
    k = lo + ((b - b0) << LEGAL_SHIFT)
    while lin[k] == 0 or rem > 0:
        rem -= lin[k]
        k += 1
    return k - lo


@nb.njit(cache=True, inline="always")
def dn_load(net: Network, dn: tuple[np.ndarray, ...], base: np.ndarray) -> None:
    """Bring a loaded state (no move made) to state ``base`` by propagating the base propositions that differ."""
    vals, stack = dn[DN_VALS], dn[DN_STACK]
    nbase = net.header[H_NBASE]
    capacity = stack.shape[0]
    top = 0
    for i in range(nbase):
        if vals[2 + i] != base[i]:
            if top >= capacity:
                dn_reset(net, dn, base)
                return
            vals[2 + i] = base[i]
            stack[top] = 2 * (2 + i) + base[i]
            top += 1
    if top > 0 and not dn_propagate(net, dn, top):
        dn_reset(net, dn, base)


@uncounted
def dn_step(net: Network, dn: tuple[np.ndarray, ...], does: np.ndarray) -> int:
    """From a loaded state, play ``does`` (a does node per role, -1: none) and load the next state (the moves
    stay set in the values, which no legal, goal or terminal node reads).

    Returns how many base propositions changed; they are the first entries of ``dn[DN_CHANGED]``.
    """
    n = _dn_step_propagated(net, dn, does)
    if n < 0:  # out of scratch space (rare): the step from scratch
        n = _dn_step_from_scratch(net, dn, does, n)
    return n


@uncounted
def _dn_step_propagated(net: Network, dn: tuple[np.ndarray, ...], does: np.ndarray) -> int:
    """:func:`dn_step` by propagation: how many base propositions changed, or, if the stack ran out, -1
    (moves half made: the values hold the state before) or ``-2 - changed`` (the values hold the next
    state's base propositions, not propagated)."""
    vals, stack, current = dn[DN_VALS], dn[DN_STACK], dn[DN_DOES]
    tflag, tlist, tcount, changed = dn[DN_TFLAG], dn[DN_TLIST], dn[DN_TCOUNT], dn[DN_CHANGED]
    nxt_node = net.next
    capacity = stack.shape[0]
    # The moves stay set after the step: legality, goals and termination never depend on them
    # (the parser sees to it), so only the next step's moves need to change, and a role that
    # repeats its move (the idle role's noop) costs nothing.
    top = 0
    for r in range(does.shape[0]):
        d = does[r]
        c = current[r]
        if d == c:
            continue
        if top + 2 > capacity:
            return -1
        if c >= 0:
            vals[c] = 0
            stack[top] = 2 * c
            top += 1
        if d >= 0:
            vals[d] = 1
            stack[top] = 2 * d + 1
            top += 1
        current[r] = d
    if not dn_propagate(net, dn, top):
        return -1
    # only a touched base proposition can differ from its next value
    nch = 0
    for q in range(tcount[0]):
        i = tlist[q]
        tflag[i] = 0
        if vals[nxt_node[i]] != vals[2 + i]:
            changed[nch] = i
            nch += 1
    tcount[0] = 0
    if nch > capacity:
        for q in range(nch):
            vals[2 + changed[q]] = 1 - vals[2 + changed[q]]
        return -2 - nch
    for q in range(nch):
        i = changed[q]
        v = 1 - vals[2 + i]
        vals[2 + i] = v
        stack[q] = 2 * (2 + i) + v
    if not dn_propagate(net, dn, nch):
        return -2 - nch
    return nch


@uncounted
def _dn_step_from_scratch(net: Network, dn: tuple[np.ndarray, ...], does: np.ndarray, failed: int) -> int:
    """The step :func:`_dn_step_propagated` ran out of stack on (``failed``), made by evaluating every gate."""
    if failed <= -2:  # the next state is in the values' base propositions already
        dn_reset_loaded(net, dn)
        return -2 - failed
    vals, changed = dn[DN_VALS], dn[DN_CHANGED]
    dn_reset_loaded(net, dn)
    for r in range(does.shape[0]):
        if does[r] >= 0:
            vals[does[r]] = 1
    sweep_phase(net, vals, 2)
    nxt_node = net.next
    nch = 0
    for i in range(net.header[H_NBASE]):  # (read all before flipping any: a next node may be a base node)
        if vals[nxt_node[i]] != vals[2 + i]:
            changed[nch] = i
            nch += 1
    for q in range(nch):
        vals[2 + changed[q]] = 1 - vals[2 + changed[q]]
    dn_reset_loaded(net, dn)
    return nch


@nb.njit(cache=True)
def dn_playouts(
    net: Network,
    base0: np.ndarray,
    count: int,
    rng: np.ndarray,
    max_steps: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
    scratch: int,
) -> int:
    """:func:`pn_playouts` on the incremental evaluator: the same games for the same ``rng``, faster.

    ``scratch`` is the size of the propagation stack (0: ample); when it runs out, the step is
    evaluated from scratch instead.
    """
    header = net.header
    nroles = header[3]
    check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    dn = dn_alloc(net, scratch)
    vals = dn[DN_VALS]
    term = header[H_TERMINAL]
    does = np.full(nroles, -1, dtype=np.int32)
    dn_reset(net, dn, base0)
    transitions = 0
    for g in range(count):
        if g > 0:
            dn_load(net, dn, base0)
        steps = 0
        while True:
            if (vals[term] == 1 or steps >= max_steps) and playout_over(
                net, vals, True, g, steps, max_steps, out_goals, error
            ):
                break
            if not _dn_random_joint(net, dn, rng, does, error):
                return transitions
            dn_step(net, dn, does)
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions
