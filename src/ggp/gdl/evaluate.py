"""The sweep evaluator: compiled functions that run a :class:`~ggp.gdl.network.Network` phase by phase.

One set of numba functions, compiled once and cached on disk, serves every
game: the network is data. A transition is three sweeps over parts of the
network: phase ``A`` computes the legal moves and the terminal test from the
state, phase ``G`` the goals (only when needed), phase ``C`` the next state
from the state and the chosen moves (``pn_*``). The differential evaluator
(:mod:`ggp.gdl.differential`) keeps a loaded state's values up to date by
propagating only what changes; it shares this module's gate, goal reading and
playout bookkeeping, so that both play the same games.

Public ``pn_*`` names check their arguments. :func:`sweep_phase`,
:func:`sweep_load` and :func:`sweep_next` are their unchecked twins, for the
compiled loops (:mod:`ggp.gdl.kernel`, :mod:`ggp.gdl.differential`) whose
arrays are sized by construction: they trust what they are given.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .network import H_NBASE, H_NDOES, H_NNODES, H_NROLES, H_TERMINAL, Network

# --- compiled evaluation -------------------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def gate(vals: np.ndarray, kind: np.ndarray, ptr: np.ndarray, lits: np.ndarray, g: int) -> np.uint8:
    """Gate ``g``'s value from its literals' values in ``vals`` (an AND or an OR, by ``kind``)."""
    lo = ptr[g]
    hi = ptr[g + 1]
    if kind[g] == 0:  # AND: false as soon as one literal is false
        for k in range(lo, hi):
            lit = lits[k]
            if vals[lit >> 1] == (lit & 1):
                return np.uint8(0)
        return np.uint8(1)
    for k in range(lo, hi):  # OR
        lit = lits[k]
        if vals[lit >> 1] != (lit & 1):
            return np.uint8(1)
    return np.uint8(0)


# The public functions below check the sizes of what they are given, then call an unchecked
# twin; the loops of this module call the twins, so the checks stay out of the hot paths.


@nb.njit(cache=True)
def pn_eval(net: Network, vals: np.ndarray, phase: int) -> None:
    """Evaluate the gates of ``phase`` (0 legal+terminal, 1 goals, 2 next) into ``vals``."""
    if phase < 0 or phase > 2 or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_eval: phase is 0, 1 or 2 and vals holds a value per node")
    sweep_phase(net, vals, phase)


@nb.njit(cache=True)
def sweep_phase(net: Network, vals: np.ndarray, phase: int) -> None:
    """:func:`pn_eval` unchecked: ``phase`` is 0, 1 or 2 and ``vals`` holds a value per node."""
    header = net.header
    kind = net.kind
    ptr = net.ptr
    lits = net.lits
    order = net.order
    blocks = net.blocks
    b0 = header[5 + 2 * phase]
    b1 = header[6 + 2 * phase]
    for b in range(b0, b1):
        start = blocks[3 * b]
        end = blocks[3 * b + 1]
        if blocks[3 * b + 2] == 0:
            for k in range(start, end):
                g = order[k]
                vals[g] = gate(vals, kind, ptr, lits, g)
        else:  # a positive cycle: least fixpoint from all false
            for k in range(start, end):
                vals[order[k]] = 0
            changed = True
            while changed:
                changed = False
                for k in range(start, end):
                    g = order[k]
                    v = gate(vals, kind, ptr, lits, g)
                    if v != vals[g]:
                        vals[g] = v
                        changed = True


@nb.njit(cache=True)
def pn_load(net: Network, vals: np.ndarray, base: np.ndarray) -> None:
    """Put a state (base bits) into ``vals`` and compute legality and termination (phase A)."""
    if base.shape[0] != net.header[H_NBASE] or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_load: base holds one bit per base proposition and vals a value per node")
    sweep_load(net, vals, base)


@nb.njit(cache=True)
def sweep_load(net: Network, vals: np.ndarray, base: np.ndarray) -> None:
    """:func:`pn_load` unchecked: ``base`` holds a bit per base proposition, ``vals`` a value per node."""
    nbase = net.header[H_NBASE]
    vals[0] = 0
    vals[1] = 1
    for i in range(nbase):
        vals[2 + i] = base[i]
    sweep_phase(net, vals, 0)


@nb.njit(cache=True)
def pn_next(net: Network, vals: np.ndarray, does: np.ndarray, base_out: np.ndarray) -> None:
    """The next state's base bits, from loaded ``vals`` and the ``does`` nodes of the joint move (-1: none)."""
    nbase = net.header[H_NBASE]
    if base_out.shape[0] < nbase or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_next: base_out holds one bit per base proposition and vals a value per node")
    for i in range(does.shape[0]):
        if does[i] >= 2 + nbase + net.header[H_NDOES] or (does[i] >= 0 and does[i] < 2 + nbase):
            raise ValueError("pn_next: does holds does-nodes of the network (or -1)")
    sweep_next(net, vals, does, base_out)


@nb.njit(cache=True)
def sweep_next(net: Network, vals: np.ndarray, does: np.ndarray, base_out: np.ndarray) -> None:
    """:func:`pn_next` unchecked: ``does`` holds does nodes of the network (or -1), ``base_out`` a bit per base
    proposition."""
    nbase = net.header[H_NBASE]
    nxt = net.next
    for i in range(does.shape[0]):
        if does[i] >= 0:
            vals[does[i]] = 1
    sweep_phase(net, vals, 2)
    for i in range(nbase):
        base_out[i] = vals[nxt[i]]
    for i in range(does.shape[0]):
        if does[i] >= 0:
            vals[does[i]] = 0


@nb.njit(cache=True)
def pn_goals(net: Network, vals: np.ndarray, out: np.ndarray, count: np.ndarray) -> None:
    """Each role's goal (phase G): ``out[r]`` the highest true goal value, ``count[r]`` how many distinct are true."""
    if out.shape[0] < net.header[H_NROLES] or count.shape[0] < net.header[H_NROLES]:
        raise ValueError("pn_goals: out and count hold an entry per role")
    pn_eval(net, vals, 1)
    read_goals(net, vals, out, count)


@nb.njit(cache=True)
def playout_over(
    net: Network,
    vals: np.ndarray,
    goals_evaluated: bool,
    g: int,
    steps: int,
    max_steps: int,
    out_goals: np.ndarray,
    error: np.ndarray,
) -> bool:
    """Whether playout ``g`` ends at the state in ``vals``: its goals (or -1s past ``max_steps``)
    go to ``out_goals[g]``; a terminal state without a goal for some role sets ``error``."""
    nroles = net.header[H_NROLES]
    if vals[net.header[H_TERMINAL]] == 1:
        if not goals_evaluated:
            sweep_phase(net, vals, 1)
        goals = np.empty(nroles, dtype=np.int64)
        ngoals = np.empty(nroles, dtype=np.int64)
        read_goals(net, vals, goals, ngoals)
        for r in range(nroles):
            if ngoals[r] == 0:
                error[0] = 2
                error[1] = r
                return True
            out_goals[g, r] = goals[r]
        return True
    if steps >= max_steps:
        for r in range(nroles):
            out_goals[g, r] = -1
        return True
    return False


@nb.njit(cache=True)
def _random_joint(net: Network, vals: np.ndarray, rng: np.ndarray, does: np.ndarray, error: np.ndarray) -> bool:
    """A uniformly random legal move for each role into ``does``; False, with ``error`` set, if a role has none.

    Both evaluators draw through this, so they play the same games for the same ``rng``.
    """
    for r in range(net.header[H_NROLES]):
        n = legal_count(net, vals, r)
        if n == 0:
            error[0] = 1
            error[1] = r
            return False
        does[r] = legal_does_at(net, vals, r, rng_below(rng, n))
    return True


@nb.njit(cache=True)
def legal_count(net: Network, vals: np.ndarray, r: int) -> int:
    """How many legal moves role ``r`` has in the loaded values ``vals`` (the sweep evaluator's)."""
    lnode = net.legal_node
    n = 0
    for k in range(net.legal_ptr[r], net.legal_ptr[r + 1]):
        n += vals[lnode[k]]
    return n


@nb.njit(cache=True)
def legal_does_at(net: Network, vals: np.ndarray, r: int, j: int | np.integer[Any]) -> int:
    """The input proposition of role ``r``'s ``j``-th legal move (from 0, in :func:`legal`'s order) in ``vals``."""
    lnode = net.legal_node
    for k in range(net.legal_ptr[r], net.legal_ptr[r + 1]):
        if vals[lnode[k]] == 1:
            if j == 0:
                return int(net.legal_does[k])
            j -= 1
    return -1  # j is below legal_count: not reached


@nb.njit(cache=True)
def check_playout_arrays(
    net: Network,
    base0: np.ndarray,
    count: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
) -> None:
    """Raise ValueError unless a playout loop's arrays fit ``net`` and ``count`` games."""
    if base0.shape[0] != net.header[H_NBASE] or count < 0:
        raise ValueError("playouts: base0 holds one bit per base proposition and count is not negative")
    if out_goals.shape[0] < count or out_goals.shape[1] < net.header[H_NROLES] or out_lengths.shape[0] < count:
        raise ValueError("playouts: out_goals holds (count, roles) entries and out_lengths count")
    if error.shape[0] < 2:
        raise ValueError("playouts: error holds two entries")


@nb.njit(cache=True)
def pn_playouts(
    net: Network,
    base0: np.ndarray,
    count: int,
    rng: np.ndarray,
    max_steps: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
) -> int:
    """Play ``count`` uniformly random games from ``base0``; returns the number of transitions.

    A transition is the legal moves of every role, the terminal test and the
    next state. ``error`` gets ``[1, role]`` when a role has no legal move in a
    non-terminal state and ``[2, role]`` when a terminal state gives a role no
    goal; the playouts stop there.
    """
    header = net.header
    nbase = header[1]
    check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    vals = np.zeros(header[0], dtype=np.uint8)
    base = np.empty(nbase, dtype=np.uint8)
    nxt = np.empty(nbase, dtype=np.uint8)
    does = np.full(header[3], -1, dtype=np.int32)
    transitions = 0
    for g in range(count):
        base[:] = base0
        steps = 0
        while True:
            sweep_load(net, vals, base)
            if playout_over(net, vals, False, g, steps, max_steps, out_goals, error):
                break
            if not _random_joint(net, vals, rng, does, error):
                return transitions
            sweep_next(net, vals, does, nxt)
            base[:] = nxt
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions


@nb.njit(cache=True)
def read_goals(net: Network, vals: np.ndarray, out: np.ndarray, count: np.ndarray) -> None:
    """Each role's goal from evaluated goal nodes: ``out[r]`` the highest true value, ``count[r]`` how many
    distinct are true."""
    nroles = net.header[H_NROLES]
    gptr = net.goal_ptr
    gnode = net.goal_node
    gval = net.goal_value
    seen = np.zeros(101, dtype=np.uint8)
    for r in range(nroles):
        best = -1
        n = 0
        seen[:] = 0
        for k in range(gptr[r], gptr[r + 1]):
            if vals[gnode[k]] == 1:
                v = gval[k]
                if seen[v] == 0:
                    seen[v] = 1
                    n += 1
                if v > best:
                    best = v
        out[r] = best
        count[r] = n
