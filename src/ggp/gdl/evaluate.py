"""The compiled functions that run a :class:`~ggp.gdl.network.Network`.

One set of numba functions, compiled once and cached on disk, serves every
game: the network is data. A transition is three sweeps over parts of the
network: phase ``A`` computes the legal moves and the terminal test from the
state, phase ``G`` the goals (only when needed), phase ``C`` the next state
from the state and the chosen moves (``pn_*``). The differential evaluator
(``dn_*``) keeps a loaded state's values up to date by propagating only what
changes. Public names check their arguments; the ``_`` twins trust them and
serve the compiled loops.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .network import H_NBASE, H_NDOES, H_NNODES, H_NROLES, H_TERMINAL, Network

# --- compiled evaluation -------------------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _gate(vals: np.ndarray, kind: np.ndarray, ptr: np.ndarray, lits: np.ndarray, g: int) -> np.uint8:
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
    _eval(net, vals, phase)


@nb.njit(cache=True)
def _eval(net: Network, vals: np.ndarray, phase: int) -> None:
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
                vals[g] = _gate(vals, kind, ptr, lits, g)
        else:  # a positive cycle: least fixpoint from all false
            for k in range(start, end):
                vals[order[k]] = 0
            changed = True
            while changed:
                changed = False
                for k in range(start, end):
                    g = order[k]
                    v = _gate(vals, kind, ptr, lits, g)
                    if v != vals[g]:
                        vals[g] = v
                        changed = True


@nb.njit(cache=True)
def pn_load(net: Network, vals: np.ndarray, base: np.ndarray) -> None:
    """Put a state (base bits) into ``vals`` and compute legality and termination (phase A)."""
    if base.shape[0] != net.header[H_NBASE] or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_load: base holds one bit per base proposition and vals a value per node")
    _load(net, vals, base)


@nb.njit(cache=True)
def _load(net: Network, vals: np.ndarray, base: np.ndarray) -> None:
    nbase = net.header[H_NBASE]
    vals[0] = 0
    vals[1] = 1
    for i in range(nbase):
        vals[2 + i] = base[i]
    _eval(net, vals, 0)


@nb.njit(cache=True)
def pn_next(net: Network, vals: np.ndarray, does: np.ndarray, base_out: np.ndarray) -> None:
    """The next state's base bits, from loaded ``vals`` and the ``does`` nodes of the joint move (-1: none)."""
    nbase = net.header[H_NBASE]
    if base_out.shape[0] < nbase or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_next: base_out holds one bit per base proposition and vals a value per node")
    for i in range(does.shape[0]):
        if does[i] >= 2 + nbase + net.header[H_NDOES] or (does[i] >= 0 and does[i] < 2 + nbase):
            raise ValueError("pn_next: does holds does-nodes of the network (or -1)")
    _next(net, vals, does, base_out)


@nb.njit(cache=True)
def _next(net: Network, vals: np.ndarray, does: np.ndarray, base_out: np.ndarray) -> None:
    nbase = net.header[H_NBASE]
    nxt = net.next
    for i in range(does.shape[0]):
        if does[i] >= 0:
            vals[does[i]] = 1
    _eval(net, vals, 2)
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
    _read_goals(net, vals, out, count)


@nb.njit(cache=True)
def _game_over(
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
            _eval(net, vals, 1)
        goals = np.empty(nroles, dtype=np.int64)
        ngoals = np.empty(nroles, dtype=np.int64)
        _read_goals(net, vals, goals, ngoals)
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
    lptr = net.legal_ptr
    lnode = net.legal_node
    ldoes = net.legal_does
    for r in range(net.header[H_NROLES]):
        n = 0
        for k in range(lptr[r], lptr[r + 1]):
            n += vals[lnode[k]]
        if n == 0:
            error[0] = 1
            error[1] = r
            return False
        j = rng_below(rng, n)
        for k in range(lptr[r], lptr[r + 1]):
            if vals[lnode[k]] == 1:
                if j == 0:
                    does[r] = ldoes[k]
                    break
                j -= 1
    return True


@nb.njit(cache=True)
def _check_playout_arrays(
    net: Network,
    base0: np.ndarray,
    count: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
) -> None:
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
    _check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    vals = np.zeros(header[0], dtype=np.uint8)
    base = np.empty(nbase, dtype=np.uint8)
    nxt = np.empty(nbase, dtype=np.uint8)
    does = np.full(header[3], -1, dtype=np.int32)
    transitions = 0
    for g in range(count):
        base[:] = base0
        steps = 0
        while True:
            _load(net, vals, base)
            if _game_over(net, vals, False, g, steps, max_steps, out_goals, error):
                break
            if not _random_joint(net, vals, rng, does, error):
                return transitions
            _next(net, vals, does, nxt)
            base[:] = nxt
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions


# --- incremental evaluation ----------------------------------------------------------------------
# ``vals`` holds every node's value and ``cnt`` every gate's number of true literals; changing an
# input propagates only along the readers of what changed. A transition in a typical game changes a
# handful of base propositions, so this does far less work than a sweep over the whole network.


@nb.njit(cache=True)
def dn_init(net: Network, vals: np.ndarray, cnt: np.ndarray, base: np.ndarray) -> None:
    """Load ``base`` from scratch: every gate evaluated (no move made) and counted."""
    header = net.header
    if base.shape[0] != header[1] or vals.shape[0] < header[0] or cnt.shape[0] < header[0]:
        raise ValueError("dn_init: base holds one bit per base proposition, vals and cnt an entry per node")
    _dn_init(net, vals, cnt, base)


@nb.njit(cache=True)
def _dn_init(net: Network, vals: np.ndarray, cnt: np.ndarray, base: np.ndarray) -> None:
    header = net.header
    nbase = header[1]
    ptr = net.ptr
    lits = net.lits
    order = net.order
    vals[:] = 0
    vals[1] = 1
    for i in range(nbase):
        vals[2 + i] = base[i]
    _eval(net, vals, 0)
    _eval(net, vals, 1)
    _eval(net, vals, 2)
    for k in range(order.shape[0]):
        g = order[k]
        c = 0
        for j in range(ptr[g], ptr[g + 1]):
            lit = lits[j]
            if vals[lit >> 1] != (lit & 1):
                c += 1
        cnt[g] = c


@nb.njit(cache=True)
def _recompute_block(net: Network, vals: np.ndarray, b: int, stack: np.ndarray, top: int) -> int:
    """Re-evaluate cyclic block ``b`` to its least fixpoint; push its gates that changed. Returns the new top."""
    kind = net.kind
    ptr = net.ptr
    lits = net.lits
    order = net.order
    blocks = net.blocks
    start = blocks[3 * b]
    end = blocks[3 * b + 1]
    old = np.empty(end - start, dtype=np.uint8)
    for k in range(start, end):
        old[k - start] = vals[order[k]]
        vals[order[k]] = 0
    changed = True
    while changed:
        changed = False
        for k in range(start, end):
            g = order[k]
            v = _gate(vals, kind, ptr, lits, g)
            if v != vals[g]:
                vals[g] = v
                changed = True
    for k in range(start, end):
        g = order[k]
        if vals[g] != old[k - start]:
            stack[2 * top] = g
            stack[2 * top + 1] = vals[g]
            top += 1
    return top


@nb.njit(cache=True)
def dn_set(
    net: Network,
    vals: np.ndarray,
    cnt: np.ndarray,
    stack: np.ndarray,
    dirty: np.ndarray,
    node: int,
    value: int,
) -> bool:
    """Set input ``node`` (a base or does node) to ``value`` and update every gate it affects.

    ``stack`` is scratch space (int32, ``4 * nodes`` is ample) and ``dirty`` an int32 array of
    ``2 * blocks + 1`` zeros. Returns False if the stack ran out: ``vals`` and ``cnt`` are then
    inconsistent and the caller reloads with :func:`dn_init`.
    """
    if (
        node < 0
        or node >= net.header[H_NNODES]
        or vals.shape[0] < net.header[H_NNODES]
        or cnt.shape[0] < net.header[H_NNODES]
    ):
        raise ValueError("dn_set: node is a node of the network; vals and cnt hold an entry per node")
    if dirty.shape[0] < 2 * (net.blocks.shape[0] // 3) + 1:
        raise ValueError("dn_set: dirty holds 2 * blocks + 1 entries")
    return _dn_set(net, vals, cnt, stack, dirty, node, value)


@nb.njit(cache=True)
def _dn_set(
    net: Network,
    vals: np.ndarray,
    cnt: np.ndarray,
    stack: np.ndarray,
    dirty: np.ndarray,
    node: int,
    value: int,
) -> bool:
    if vals[node] == value:
        return True
    fo_ptr = net.fanout_ptr
    fo = net.fanout
    cyc = net.cyclic
    thr = net.threshold
    nblocks = net.blocks.shape[0] // 3
    ndirty = 0
    capacity = stack.shape[0] // 2
    if capacity < 1:
        return False
    vals[node] = value
    stack[0] = node
    stack[1] = value
    top = 1
    while True:
        while top > 0:
            top -= 1
            n = stack[2 * top]
            v = stack[2 * top + 1]
            own = cyc[n]
            for k in range(fo_ptr[n], fo_ptr[n + 1]):
                r = fo[k]
                g = r >> 1
                c = cnt[g] + 1 if v != (r & 1) else cnt[g] - 1
                cnt[g] = c
                b = cyc[g]
                if b >= 0:
                    if b != own and dirty[b] == 0:
                        dirty[b] = 1
                        dirty[nblocks + ndirty] = b
                        ndirty += 1
                    continue
                new = 1 if c >= thr[g] else 0
                if new != vals[g]:
                    if top >= capacity:
                        dirty[:] = 0
                        return False
                    vals[g] = new
                    stack[2 * top] = g
                    stack[2 * top + 1] = new
                    top += 1
        if ndirty == 0:
            return True
        ndirty -= 1
        b = dirty[nblocks + ndirty]
        dirty[b] = 0
        if top + (net.blocks[3 * b + 1] - net.blocks[3 * b]) >= capacity:
            dirty[:] = 0
            return False
        top = _recompute_block(net, vals, b, stack, top)


@nb.njit(cache=True)
def _read_goals(net: Network, vals: np.ndarray, out: np.ndarray, count: np.ndarray) -> None:
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
    nnodes = header[0]
    nbase = header[1]
    nroles = header[3]
    nxt_node = net.next
    _check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    vals = np.zeros(nnodes, dtype=np.uint8)
    cnt = np.zeros(nnodes, dtype=np.int32)
    stack = np.empty(scratch if scratch > 0 else 4 * nnodes + 64, dtype=np.int32)
    dirty = np.zeros(2 * (net.blocks.shape[0] // 3) + 1, dtype=np.int32)
    nxt = np.empty(nbase, dtype=np.uint8)
    does = np.full(nroles, -1, dtype=np.int32)
    _dn_init(net, vals, cnt, base0)
    transitions = 0
    for g in range(count):
        if g > 0:
            for i in range(nbase):
                if not _dn_set(net, vals, cnt, stack, dirty, 2 + i, base0[i]):
                    _dn_init(net, vals, cnt, base0)
                    break
        steps = 0
        while True:
            if _game_over(net, vals, True, g, steps, max_steps, out_goals, error):
                break
            if not _random_joint(net, vals, rng, does, error):
                return transitions
            ok = True
            for r in range(nroles):
                if does[r] >= 0:
                    ok = ok and _dn_set(net, vals, cnt, stack, dirty, does[r], 1)
            if not ok:  # scratch space ran out: evaluate this step from scratch
                nxt[:] = vals[2 : 2 + nbase]
                _dn_init(net, vals, cnt, nxt)
                for r in range(nroles):
                    if does[r] >= 0:
                        vals[does[r]] = 1
                _eval(net, vals, 2)
            for i in range(nbase):
                nxt[i] = vals[nxt_node[i]]
            if ok:
                for r in range(nroles):
                    if does[r] >= 0:
                        ok = ok and _dn_set(net, vals, cnt, stack, dirty, does[r], 0)
            for i in range(nbase):
                if ok and vals[2 + i] != nxt[i]:
                    ok = _dn_set(net, vals, cnt, stack, dirty, 2 + i, nxt[i])
            if not ok:
                _dn_init(net, vals, cnt, nxt)
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions
