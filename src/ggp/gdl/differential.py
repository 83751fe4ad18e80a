"""The differential evaluator: compiled functions that keep a loaded state's values up to date by propagation.

Where the sweep evaluator (:mod:`ggp.gdl.evaluate`) evaluates whole phases of
the network, this one holds every node's value and every gate's count of true
literals for the state it last saw, and propagates only the inputs that change
(``dn_*``): consecutive states differ in a handful of base propositions, so a
step costs a small part of a sweep. Both play the same games for the same
random numbers.

This module holds the differential state: its layout, how it is made and
loaded from scratch, and the propagation that keeps it consistent;
:mod:`ggp.gdl.differential_step` plays moves and games on it. Public names
that take loose arrays (:func:`dn_init`, :func:`dn_set`) check them.
:func:`dn_alloc` makes a differential state; :func:`dn_reset` and
:func:`dn_propagate` work on one and trust their arguments, for the compiled
loops of :mod:`ggp.gdl.differential_step` and :mod:`ggp.gdl.kernel`.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from .evaluate import gate, sweep_phase
from .network import H_NBASE, H_NNODES, H_NROLES, Network

#: For the differential evaluator's step and what it calls: numba without its reference counts. Numba counts a
#: reference up and down for every array of every tuple a function is given, with atomic instructions, at each
#: call; these functions are called a few times a step with the network (24 arrays) and the state (12), which
#: was a third of Amazons' step time. They allocate no array (numba refuses to compile one that does).
uncounted: Any = nb.njit(cache=True, _nrt=False)  # type: ignore[call-overload]
#: The same, inlined into the caller (numba's IR): the parts of the hottest loop, named, at no cost of a call.
_inlined: Any = nb.njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
#: Indices of the hottest loop are made unsigned: numba gives every signed index a test for Python's negative
#: indexing (from the end), several instructions an access, which an unsigned one does not need.
_U = np.uint64


# --- incremental evaluation ----------------------------------------------------------------------
# ``vals`` holds every node's value and ``cnt`` every acyclic gate's number of true literals minus
# its threshold (all of them for AND, one for OR), so a gate is true when its count is not negative
# and it flips exactly when an update takes the count to 0 (up) or to -1 (down): one read-modify-write
# per reader, no look-up of the threshold or the old value. Changed inputs are set and pushed on a
# stack together (``2 * node + value``) and propagated in one pass; counts commute, so a batch gives
# the same values as one input at a time, and a call costs its arguments once, not once per input.
# A transition in a typical game changes a handful of base propositions, so this does far less work
# than a sweep over the whole network.


# The differential state ``dn`` is a tuple of arrays: (values, counts, stack, dirty blocks, per
# legal entry whether it is in its role's legal set, per role its legal entries counted per block
# of LEGAL_BLOCK, per role how many are legal, per base proposition whether it is touched, the
# touched ones and how many, the base propositions a step changed, per role the does node set now).
# The legal sets change with the gates that flip, a count each (a Fenwick tree, tried before, cost
# a dozen counts per flip, and Amazons flips about 30 legal entries a step: 1.1-1.6x slower), and a
# random legal move costs a scan of the role's block counts and of one block, not of every move
# the role might ever make (Amazons: thousands); the scan picks the same move as a whole scan would
# for the same random number, so both evaluators play the same games. A base proposition is
# touched when it or its next-state node changes; a step compares only the touched ones (hex: a few of 7,052).

#: Each role's legal entries are counted per block of this many (a power of two): a change costs one count, a pick
#: scans the counts of a role's blocks, then one block's entries.
LEGAL_SHIFT = 5
LEGAL_BLOCK = 1 << LEGAL_SHIFT
(
    DN_VALS,
    DN_CNT,
    DN_STACK,
    DN_DIRTY,
    DN_IN,
    DN_BLOCKS,
    DN_COUNT,
    DN_TFLAG,
    DN_TLIST,
    DN_TCOUNT,
    DN_CHANGED,
    DN_DOES,
    DN_ARMED,
    DN_ACOUNT,
    DN_APOS,
) = range(15)


@nb.njit(cache=True)
def dn_alloc(net: Network, scratch: int) -> tuple[np.ndarray, ...]:
    """A differential state for ``net``; ``scratch`` sizes the propagation stack (0: ample)."""
    header = net.header
    nnodes = header[H_NNODES]
    nroles = header[H_NROLES]
    nlegal = net.legal_ptr[nroles]
    return (
        np.zeros(nnodes, dtype=np.uint8),
        np.zeros(nnodes, dtype=np.int32),
        np.zeros(scratch if scratch > 0 else 4 * nnodes + 64, dtype=np.int32),
        np.zeros(2 * (net.blocks.shape[0] // 3) + 1, dtype=np.int32),
        np.zeros(nlegal, dtype=np.uint8),
        np.zeros((nlegal >> LEGAL_SHIFT) + nroles + 1, dtype=np.int32),
        np.zeros(nroles, dtype=np.int32),
        np.zeros(header[H_NBASE], dtype=np.uint8),
        np.zeros(header[H_NBASE], dtype=np.int32),
        np.zeros(1, dtype=np.int32),
        np.zeros(header[H_NBASE], dtype=np.int32),
        np.full(nroles, -1, dtype=np.int32),
        # the armed gates: per guard, its guarded gates whose count is at the threshold (in its range of
        # ``guarded``), how many, and per gate where it sits
        np.zeros(max(1, net.guarded.shape[0]), dtype=np.int32),
        np.zeros(nnodes, dtype=np.int32),
        np.zeros(nnodes, dtype=np.int32),
    )


@nb.njit(cache=True)
def dn_init(net: Network, vals: np.ndarray, cnt: np.ndarray, base: np.ndarray) -> None:
    """Load ``base`` from scratch into ``vals`` and ``cnt``: every gate evaluated (no move made) and counted."""
    header = net.header
    if base.shape[0] != header[1] or vals.shape[0] < header[0] or cnt.shape[0] < header[0]:
        raise ValueError("dn_init: base holds one bit per base proposition, vals and cnt an entry per node")
    dn = dn_alloc(net, 1)
    dn_reset(net, (vals, cnt, *dn[2:]), base)


@nb.njit(cache=True)
def dn_reset(net: Network, dn: tuple[np.ndarray, ...], base: np.ndarray) -> None:
    """Load ``base`` from scratch into the differential state ``dn`` (of :func:`dn_alloc`): every gate evaluated
    and counted, the legal sets, touched and armed lists made, no move set."""
    vals = dn[DN_VALS]
    for i in range(net.header[H_NBASE]):
        vals[2 + i] = base[i]
    dn_reset_loaded(net, dn)


@nb.njit(cache=True)
def dn_reset_loaded(net: Network, dn: tuple[np.ndarray, ...]) -> None:
    """:func:`dn_reset` for the base propositions the values hold already."""
    vals, cnt, lin, lblocks, lcount = dn[DN_VALS], dn[DN_CNT], dn[DN_IN], dn[DN_BLOCKS], dn[DN_COUNT]
    header = net.header
    nbase = header[1]
    ptr = net.ptr
    lits = net.lits
    order = net.order
    thr = net.threshold
    guard = net.guard
    vals[0] = 0
    vals[1] = 1
    vals[2 + nbase :] = 0
    dn[DN_DOES][:] = -1
    sweep_phase(net, vals, 0)
    sweep_phase(net, vals, 1)
    sweep_phase(net, vals, 2)
    for k in range(order.shape[0]):
        g = order[k]
        c = 0
        skip = 2 * guard[g] if guard[g] >= 2 else -1  # (the guard is not counted)
        for j in range(ptr[g], ptr[g + 1]):
            lit = lits[j]
            if vals[lit >> 1] != (lit & 1) and lit != skip:
                c += 1
        cnt[g] = c - thr[g]
    _arm_all(net, dn)
    # the legal sets: each role's entries counted per block of LEGAL_BLOCK
    lptr = net.legal_ptr
    lnode = net.legal_node
    for r in range(header[H_NROLES]):
        lo = lptr[r]
        hi = lptr[r + 1]
        b0 = (lo >> LEGAL_SHIFT) + r
        for b in range(b0, b0 + ((hi - lo + LEGAL_BLOCK - 1) >> LEGAL_SHIFT)):
            lblocks[b] = 0
        n = 0
        for k in range(lo, hi):
            v = vals[lnode[k]]
            lin[k] = v
            n += v
            lblocks[b0 + ((k - lo) >> LEGAL_SHIFT)] += v
        lcount[r] = n
    # every base proposition touched: the next step compares them all
    tflag, tlist = dn[DN_TFLAG], dn[DN_TLIST]
    for i in range(nbase):
        tflag[i] = 1
        tlist[i] = i
    dn[DN_TCOUNT][0] = nbase


@nb.njit(cache=True)
def _arm_all(net: Network, dn: tuple[np.ndarray, ...]) -> None:
    """Every guard's armed list from the counts: its guarded gates whose count is at the threshold.

    (At or above it: a count passes the threshold for a moment while a propagation runs, and the lists must
    stay in their ranges even for counts a failed :func:`dn_set` left behind.)
    """
    cnt, armed, acount, apos = dn[DN_CNT], dn[DN_ARMED], dn[DN_ACOUNT], dn[DN_APOS]
    gd_ptr = net.guarded_ptr
    gd = net.guarded
    for n in range(gd_ptr.shape[0] - 1):
        lo = gd_ptr[n]
        a = lo
        for q in range(lo, gd_ptr[n + 1]):
            g = gd[q]
            if cnt[g] >= 0:
                armed[a] = g
                apos[g] = a
                a += 1
        acount[n] = a - lo


@uncounted
def _recompute_block(net: Network, vals: np.ndarray, b: int, stack: np.ndarray, top: int) -> int:
    """Re-evaluate cyclic block ``b`` to its least fixpoint; push its gates that changed. Returns the new top.

    The stack must have room for the block's gates above ``top``: their old values are kept there (a gate
    pushed at the end goes where an old value was read already).
    """
    kind = net.kind
    ptr = net.ptr
    lits = net.lits
    order = net.order
    blocks = net.blocks
    start = blocks[3 * b]
    end = blocks[3 * b + 1]
    old = stack[top : top + (end - start)]
    for k in range(start, end):
        old[k - start] = vals[order[k]]
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
    for k in range(start, end):
        g = order[k]
        if vals[g] != old[k - start]:
            stack[top] = 2 * g + vals[g]
            top += 1
    return top


@_inlined
def _follow_legal(n, now, lin, lblocks, lcount, lof_ptr, lof, lptr, lrole):  # type: ignore[no-untyped-def]
    """Bring the legal entries node ``n`` decides to its value ``now``: membership, block counts and counts."""
    for q in range(_U(lof_ptr[n]), _U(lof_ptr[n + _U(1)])):
        k = _U(lof[q])
        if lin[k] == now:
            continue
        lin[k] = now
        r = _U(lrole[k])
        lo = _U(lptr[r])
        d = 1 if now == 1 else -1
        lcount[r] += d
        lblocks[(lo >> _U(LEGAL_SHIFT)) + r + ((k - lo) >> _U(LEGAL_SHIFT))] += d


@_inlined
def _touch(n, tflag, tlist, touched, nof_ptr, nof):  # type: ignore[no-untyped-def]
    """List the base propositions whose next value reads node ``n`` (each once until compared); the new count."""
    for q in range(_U(nof_ptr[n]), _U(nof_ptr[n + _U(1)])):
        i = _U(nof[q])
        if tflag[i] == 0:
            tflag[i] = 1
            tlist[_U(touched)] = i
            touched += 1
    return touched


@_inlined
def _arm(armed, acount, apos, gd_ptr, u, g):  # type: ignore[no-untyped-def]
    """Add gate ``g`` to the armed list of its guard ``u`` (its count reached the threshold)."""
    a = _U(gd_ptr[u]) + _U(acount[u])
    armed[a] = g
    apos[g] = a
    acount[u] += 1


@_inlined
def _disarm(armed, acount, apos, gd_ptr, u, g):  # type: ignore[no-untyped-def]
    """Take gate ``g`` off the armed list of its guard ``u``: the list's last gate takes its place."""
    last = _U(gd_ptr[u]) + _U(acount[u]) - _U(1)
    h = armed[last]
    a = apos[g]
    armed[_U(a)] = h
    apos[_U(h)] = a
    acount[u] -= 1


@uncounted
def dn_propagate(net: Network, dn: tuple[np.ndarray, ...], top: int) -> bool:
    """Propagate the ``top`` changes on the stack (inputs already set in the values) to every gate they affect;
    legal entries that change are brought into their role's legal set, and base propositions whose next
    value may have changed are listed (touched).

    Returns False if the stack ran out: the state is then inconsistent and the caller reloads
    with :func:`dn_reset`.
    """
    # Every array is taken out of its tuple once, here, not in the loop (as the helper functions it inlined
    # did): the loop then holds no tuple access at all.
    vals, cnt, stack, dirty = dn[DN_VALS], dn[DN_CNT], dn[DN_STACK], dn[DN_DIRTY]
    lin, lblocks, lcount = dn[DN_IN], dn[DN_BLOCKS], dn[DN_COUNT]
    tflag, tlist, tcount = dn[DN_TFLAG], dn[DN_TLIST], dn[DN_TCOUNT]
    fo_ptr = net.fanout_ptr
    fo = net.fanout
    cyc = net.cyclic
    watch = net.watch
    blocks = net.blocks
    lof_ptr = net.legal_of_ptr
    lof = net.legal_of
    lptr = net.legal_ptr
    lrole = net.legal_role
    nof_ptr = net.next_of_ptr
    nof = net.next_of
    guard = net.guard
    gd_ptr = net.guarded_ptr
    armed, acount, apos = dn[DN_ARMED], dn[DN_ACOUNT], dn[DN_APOS]
    nblocks = blocks.shape[0] // 3
    ndirty = 0
    capacity = stack.shape[0]
    touched = tcount[0]
    while True:
        while top > 0:
            top -= 1
            e = stack[_U(top)]
            n = _U(e) >> _U(1)
            v = e & 1
            w = watch[n]
            if w != 0:
                if w & 1:  # the legal entries n decides
                    # (by n's value now, not the entry's: n may have changed again since this entry was pushed,
                    # and its entries come off the stack last first; a count adds up the changes in any order,
                    # a legal set must end with the last)
                    _follow_legal(n, vals[n], lin, lblocks, lcount, lof_ptr, lof, lptr, lrole)
                if w & 2:  # the base propositions that watch n may differ from their next value now
                    touched = _touch(n, tflag, tlist, touched, nof_ptr, nof)
            # the gates n guards: each is n AND its count at the threshold, so only the armed ones (at the
            # threshold) follow n, and a turn that changes looks at the few squares holding the mover's pieces
            lo = _U(gd_ptr[n])
            now = vals[n]  # (n may have changed again since this entry was pushed)
            for q in range(lo, lo + _U(acount[n])):
                g = _U(armed[q])
                if vals[g] == now:
                    continue
                vals[g] = now
                if top >= capacity:
                    dirty[:] = 0
                    tcount[0] = touched
                    return False
                stack[_U(top)] = 2 * g + now
                top += 1
            for f in range(_U(fo_ptr[n]), _U(fo_ptr[n + _U(1)])):
                r = fo[f]
                g = _U(r) >> _U(2)
                if r & 2:  # a gate of a cyclic block: re-evaluated with its block below
                    b = cyc[g]
                    if b != cyc[n] and dirty[_U(b)] == 0:
                        dirty[_U(b)] = 1
                        dirty[_U(nblocks + ndirty)] = b
                        ndirty += 1
                    continue
                if v != (r & 1):
                    c = cnt[g] + 1
                    cnt[g] = c
                    if c != 0:
                        continue
                    u = _U(guard[g])
                    if u != 1:  # a guarded gate at its threshold: armed
                        _arm(armed, acount, apos, gd_ptr, u, g)
                        if vals[u] == 0:  # (a gate whose guard is false stays false)
                            continue
                    vals[g] = 1
                    e = 2 * (r >> 2) + 1
                else:
                    c = cnt[g] - 1
                    cnt[g] = c
                    if c != -1:
                        continue
                    u = _U(guard[g])
                    if u != 1:  # disarmed: the last armed gate takes its place
                        _disarm(armed, acount, apos, gd_ptr, u, g)
                    if vals[g] == 0:
                        continue
                    vals[g] = 0
                    e = 2 * (r >> 2)
                if top >= capacity:
                    dirty[:] = 0
                    tcount[0] = touched
                    return False
                stack[_U(top)] = e
                top += 1
        if ndirty == 0:
            tcount[0] = touched
            return True
        ndirty -= 1
        b = dirty[nblocks + ndirty]
        dirty[b] = 0
        if top + (blocks[3 * b + 1] - blocks[3 * b]) > capacity:
            dirty[:] = 0
            tcount[0] = touched
            return False
        top = _recompute_block(net, vals, b, stack, top)


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
    if vals[node] == value:
        return True
    if stack.shape[0] < 1:
        return False
    vals[node] = value
    stack[0] = 2 * node + value
    sets = dn_alloc(net, 1)  # (legal sets, touched and armed lists of their own: these arrays hold values and counts)
    dn = (vals, cnt, stack, dirty, *sets[4:])
    _arm_all(net, dn)
    return dn_propagate(net, dn, 1)
