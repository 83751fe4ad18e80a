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

from typing import Any

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .network import H_NBASE, H_NDOES, H_NNODES, H_NROLES, H_TERMINAL, Network

# --- compiled evaluation -------------------------------------------------------------------------

#: For the differential evaluator's step and what it calls: numba without its reference counts. Numba counts a
#: reference up and down for every array of every tuple a function is given, with atomic instructions, at each
#: call; these functions are called a few times a step with the network (24 arrays) and the state (12), which
#: was a third of Amazons' step time. They allocate no array (numba refuses to compile one that does).
_uncounted: Any = nb.njit(cache=True, _nrt=False)  # type: ignore[call-overload]
#: Indices of the hottest loop are made unsigned: numba gives every signed index a test for Python's negative
#: indexing (from the end), several instructions an access, which an unsigned one does not need.
_U = np.uint64


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
    _dn_init(net, (vals, cnt, *dn[2:]), base)


@nb.njit(cache=True)
def _dn_init(net: Network, dn: tuple[np.ndarray, ...], base: np.ndarray) -> None:
    vals = dn[DN_VALS]
    for i in range(net.header[H_NBASE]):
        vals[2 + i] = base[i]
    _dn_init_loaded(net, dn)


@nb.njit(cache=True)
def _dn_init_loaded(net: Network, dn: tuple[np.ndarray, ...]) -> None:
    """:func:`_dn_init` for the base propositions the values hold already."""
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
    _eval(net, vals, 0)
    _eval(net, vals, 1)
    _eval(net, vals, 2)
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


@_uncounted
def _dn_random_joint(
    net: Network, dn: tuple[np.ndarray, ...], rng: np.ndarray, does: np.ndarray, error: np.ndarray
) -> bool:
    """:func:`_random_joint` from the legal sets: the same moves for the same ``rng``."""
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


@_uncounted
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


@_uncounted
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
            v = _gate(vals, kind, ptr, lits, g)
            if v != vals[g]:
                vals[g] = v
                changed = True
    for k in range(start, end):
        g = order[k]
        if vals[g] != old[k - start]:
            stack[top] = 2 * g + vals[g]
            top += 1
    return top


@_uncounted
def _dn_propagate(net: Network, dn: tuple[np.ndarray, ...], top: int) -> bool:
    """Propagate the ``top`` changes on the stack (inputs already set in the values) to every gate they affect;
    legal entries that change are brought into their role's legal set, and base propositions whose next
    value may have changed are listed (touched).

    Returns False if the stack ran out: the state is then inconsistent and the caller reloads
    with :func:`_dn_init`.
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
                    now = vals[n]
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
                if w & 2:  # the base propositions that watch n may differ from their next value now
                    for q in range(_U(nof_ptr[n]), _U(nof_ptr[n + _U(1)])):
                        i = _U(nof[q])
                        if tflag[i] == 0:
                            tflag[i] = 1
                            tlist[_U(touched)] = i
                            touched += 1
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
                        a = _U(gd_ptr[u]) + _U(acount[u])
                        armed[a] = g
                        apos[g] = a
                        acount[u] += 1
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
                        last = _U(gd_ptr[u]) + _U(acount[u]) - _U(1)
                        h = armed[last]
                        a = apos[g]
                        armed[_U(a)] = h
                        apos[_U(h)] = a
                        acount[u] -= 1
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
    return _dn_propagate(net, dn, 1)


@nb.njit(cache=True, inline="always")
def _dn_load(net: Network, dn: tuple[np.ndarray, ...], base: np.ndarray) -> None:
    """Bring a loaded state (no move made) to state ``base`` by propagating the base propositions that differ."""
    vals, stack = dn[DN_VALS], dn[DN_STACK]
    nbase = net.header[H_NBASE]
    capacity = stack.shape[0]
    top = 0
    for i in range(nbase):
        if vals[2 + i] != base[i]:
            if top >= capacity:
                _dn_init(net, dn, base)
                return
            vals[2 + i] = base[i]
            stack[top] = 2 * (2 + i) + base[i]
            top += 1
    if top > 0 and not _dn_propagate(net, dn, top):
        _dn_init(net, dn, base)


@_uncounted
def _dn_step(net: Network, dn: tuple[np.ndarray, ...], does: np.ndarray) -> int:
    """From a loaded state, play ``does`` (a does node per role, -1: none) and load the next state (the moves
    stay set in the values, which no legal, goal or terminal node reads).

    Returns how many base propositions changed; they are the first entries of ``dn[DN_CHANGED]``.
    """
    n = _dn_step_propagated(net, dn, does)
    if n < 0:  # out of scratch space (rare): the step from scratch
        n = _dn_step_from_scratch(net, dn, does, n)
    return n


@_uncounted
def _dn_step_propagated(net: Network, dn: tuple[np.ndarray, ...], does: np.ndarray) -> int:
    """:func:`_dn_step` by propagation: how many base propositions changed, or, if the stack ran out, -1
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
    if not _dn_propagate(net, dn, top):
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
    if not _dn_propagate(net, dn, nch):
        return -2 - nch
    return nch


@_uncounted
def _dn_step_from_scratch(net: Network, dn: tuple[np.ndarray, ...], does: np.ndarray, failed: int) -> int:
    """The step :func:`_dn_step_propagated` ran out of stack on (``failed``), made by evaluating every gate."""
    if failed <= -2:  # the next state is in the values' base propositions already
        _dn_init_loaded(net, dn)
        return -2 - failed
    vals, changed = dn[DN_VALS], dn[DN_CHANGED]
    _dn_init_loaded(net, dn)
    for r in range(does.shape[0]):
        if does[r] >= 0:
            vals[does[r]] = 1
    _eval(net, vals, 2)
    nxt_node = net.next
    nch = 0
    for i in range(net.header[H_NBASE]):  # (read all before flipping any: a next node may be a base node)
        if vals[nxt_node[i]] != vals[2 + i]:
            changed[nch] = i
            nch += 1
    for q in range(nch):
        vals[2 + changed[q]] = 1 - vals[2 + changed[q]]
    _dn_init_loaded(net, dn)
    return nch


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
    nroles = header[3]
    _check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    dn = dn_alloc(net, scratch)
    vals = dn[DN_VALS]
    term = header[H_TERMINAL]
    does = np.full(nroles, -1, dtype=np.int32)
    _dn_init(net, dn, base0)
    transitions = 0
    for g in range(count):
        if g > 0:
            _dn_load(net, dn, base0)
        steps = 0
        while True:
            if (vals[term] == 1 or steps >= max_steps) and _game_over(
                net, vals, True, g, steps, max_steps, out_goals, error
            ):
                break
            if not _dn_random_joint(net, dn, rng, does, error):
                return transitions
            _dn_step(net, dn, does)
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions
