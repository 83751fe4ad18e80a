"""A GDL kernel's context and the compiled rules that run on it (gathered by :mod:`ggp.gdl.kernel`).

``legal``, ``apply``, ``terminal``, ``goals``, ``rollout``, ``rollouts`` and
``playout`` take a context (:func:`ggp.gdl.kernel.context`): the network and the values of all its
nodes for the state it last saw, packed into three arrays. Its mode says which
evaluator keeps the values: the differential one (:mod:`ggp.gdl.differential`,
:mod:`ggp.gdl.differential_step`), the sweep (:mod:`ggp.gdl.evaluate`), or the
sweep compiled to machine code (:mod:`ggp.gdl.codegen`); which mode a sheet's
kernel uses is measured and chosen in :mod:`ggp.gdl.kernel`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .codegen import OP_A, OP_G, OP_STEP, call_network
from .differential import (
    DN_BLOCKS,
    DN_CHANGED,
    DN_COUNT,
    DN_IN,
    DN_VALS,
    dn_reset,
)
from .differential_step import dn_load, dn_step, legal_pick
from .evaluate import legal_count, legal_does_at, sweep_load, sweep_next, sweep_phase
from .lanes import lane_rollouts, traced_lane_rollouts
from .network import H_TERMINAL, Network

#: A random playout gives up after this many steps (a rule sheet's game may never end).
MAX_ROLLOUT_STEPS = 100_000

#: The ways a context evaluates the network (``flags[F_MODE]``): sweeps of the interpreted network, differential
#: propagation, or sweeps of the network compiled to machine code (:mod:`ggp.gdl.codegen`).
SWEEP, DIFFERENTIAL, COMPILED = 0, 1, 2
MODE_NAMES = {SWEEP: "sweep", DIFFERENTIAL: "differential", COMPILED: "compiled"}
# flags: are the values loaded for the state in vals[2 : 2 + nbase]; the mode; (sweeps) are the goals evaluated;
# (compiled) the low and high 32 bits of the compiled network's address
F_LOADED, F_MODE, F_GOALS, F_ADDR_LO, F_ADDR_HI = range(5)


# A context is three arrays, since every call from Python into compiled code types its arguments,
# at about 1.6 us per array of a tuple: the network packed into one int32 array (shared by the
# contexts of a sheet), the evaluation state's int32 arrays packed into another, its uint8 arrays
# into a third. Each compiled entry point unpacks them into views (a few instructions).
#: The int32 state's slots (after the network's, in the same numbering of starts).
_NET = len(Network._fields)
(
    S_CNT,
    S_STACK,
    S_DIRTY,
    S_BLOCKS,
    S_LCOUNT,
    S_TLIST,
    S_TCOUNT,
    S_CHANGED,
    S_CUR,
    S_FLAGS,
    S_DOES,
    S_GCOUNT,
    S_USTARTS,
) = range(13)
#: (compiled) each role's legal moves as phase A lists them: a count per role, then per role its moves' indices.
S_LEGAL = 13
#: The differential evaluator's armed lists (see :func:`ggp.gdl.differential.dn_alloc`).
S_ARMED, S_ACOUNT, S_APOS = 14, 15, 16
#: The uint8 state's slots: values, legal-set membership, touched flags, next-state scratch.
U_VALS, U_IN, U_TFLAG, U_NXT = range(4)


@nb.njit(cache=True, inline="always")
def _slot(a, k):  # type: ignore[no-untyped-def]
    return a[a[k] : a[k + 1]]


@nb.njit(cache=True, inline="always")
def _uslot(i, u, k):  # type: ignore[no-untyped-def]
    starts = _slot(i, S_USTARTS)
    return u[starts[k] : starts[k + 1]]


@nb.njit(cache=True, inline="always")
def _network(p):  # type: ignore[no-untyped-def]
    return Network(
        _slot(p, 0), _slot(p, 1), _slot(p, 2), _slot(p, 3), _slot(p, 4), _slot(p, 5),
        _slot(p, 6), _slot(p, 7), _slot(p, 8), _slot(p, 9), _slot(p, 10), _slot(p, 11),
        _slot(p, 12), _slot(p, 13), _slot(p, 14), _slot(p, 15), _slot(p, 16), _slot(p, 17),
        _slot(p, 18), _slot(p, 19), _slot(p, 20), _slot(p, 21), _slot(p, 22), _slot(p, 23),
        _slot(p, 24), _slot(p, 25), _slot(p, 26),
    )  # fmt: skip


@nb.njit(cache=True, inline="always")
def _unpack(ctx):  # type: ignore[no-untyped-def]
    p, i, u = ctx[0], ctx[1], ctx[2]
    net = _network(p)
    dn = (
        _uslot(i, u, U_VALS),
        _slot(i, S_CNT),
        _slot(i, S_STACK),
        _slot(i, S_DIRTY),
        _uslot(i, u, U_IN),
        _slot(i, S_BLOCKS),
        _slot(i, S_LCOUNT),
        _uslot(i, u, U_TFLAG),
        _slot(i, S_TLIST),
        _slot(i, S_TCOUNT),
        _slot(i, S_CHANGED),
        _slot(i, S_CUR),
        _slot(i, S_ARMED),
        _slot(i, S_ACOUNT),
        _slot(i, S_APOS),
    )
    return net, dn, _slot(i, S_FLAGS), _slot(i, S_DOES), _slot(i, S_GCOUNT), _uslot(i, u, U_NXT), _slot(i, S_LEGAL)


# positions of the network's arrays in its pack, for the entry points that read only a few
_HEADER, _LEGAL_PTR, _LEGAL_NODE, _LEGAL_DOES, _GOAL_PTR, _GOAL_NODE, _GOAL_VALUE = (
    Network._fields.index(f)
    for f in ("header", "legal_ptr", "legal_node", "legal_does", "goal_ptr", "goal_node", "goal_value")
)


@nb.njit(cache=True, inline="always")
def _loaded(ctx, s):  # type: ignore[no-untyped-def]
    # Whether the values hold s already, checked on the values alone: the questions asked of one
    # state after another (terminal? legal moves? after a move) then unpack no more than they read.
    i, u = ctx[1], ctx[2]
    if _slot(i, S_FLAGS)[F_LOADED] == 0:
        return False
    return _holds(_uslot(i, u, U_VALS), s)


@nb.njit(cache=True, inline="always")
def _holds(vals, s):  # type: ignore[no-untyped-def]
    # Whether the values' base propositions are s. No early exit: the loop compiles to vector code, 20-40x
    # faster than one byte at a time (a check of 562 bytes took 0.7 us, most of a short game's overhead).
    d = np.uint8(0)
    for k in range(s.shape[0]):
        d |= vals[2 + k] ^ s[k]
    return d == 0


@nb.njit(cache=True, inline="always")
def _address(flags):  # type: ignore[no-untyped-def]
    return (np.int64(flags[F_ADDR_HI]) << 32) | (np.int64(flags[F_ADDR_LO]) & 0xFFFFFFFF)


@nb.njit(cache=True, inline="always")
def _compiled_step(flags, vals, lst, does):  # type: ignore[no-untyped-def]
    # The compiled network's whole step: next state into the base propositions, then its legal moves (listed
    # in lst) and terminal test (the moves are set for the step only: no legal, goal or terminal node reads them).
    for r in range(does.shape[0]):
        if does[r] >= 0:
            vals[does[r]] = 1
    call_network(_address(flags), vals, lst, OP_STEP)
    for r in range(does.shape[0]):
        if does[r] >= 0:
            vals[does[r]] = 0
    flags[F_GOALS] = 0


@nb.njit(cache=True, inline="always")
def _ensure(v, s):  # type: ignore[no-untyped-def]
    # Make the values hold state s. Differentially: propagate only the base propositions that
    # differ from the state they hold now (a step or two in a search or a playout changes a
    # handful). By sweep: evaluate the legal moves and the terminal test afresh, unless s is
    # the state already loaded. (v: an unpacked context.)
    net, dn, flags = v[0], v[1], v[2]
    vals = dn[DN_VALS]
    if flags[F_MODE] == DIFFERENTIAL:
        if flags[F_LOADED] == 1:
            dn_load(net, dn, s)
        else:
            dn_reset(net, dn, s)
            flags[F_LOADED] = 1
        return
    if flags[F_MODE] == COMPILED:
        _c_ensure((flags, vals, v[6]), s)
        return
    if flags[F_LOADED] == 1 and _holds(vals, s):
        return
    sweep_load(net, vals, s)
    flags[F_LOADED] = 1
    flags[F_GOALS] = 0


# The compiled evaluator's entry points take from the context only the few arrays they use: every array taken
# out of the packs is a view whose reference count goes up and down (atomically), and unpacking the whole
# context cost 2-3 us a call, more than a short game's steps (bomberman2p: 8 steps of 0.7 us).


@nb.njit(cache=True, inline="always")
def _cview(ctx):  # type: ignore[no-untyped-def]
    # (flags, values, legal lists, does nodes, legal_ptr, legal_does, the terminal node)
    p, i, u = ctx[0], ctx[1], ctx[2]
    return (
        _slot(i, S_FLAGS),
        _uslot(i, u, U_VALS),
        _slot(i, S_LEGAL),
        _slot(i, S_DOES),
        _slot(p, _LEGAL_PTR),
        _slot(p, _LEGAL_DOES),
        _slot(p, _HEADER)[H_TERMINAL],
    )


@nb.njit(cache=True, inline="always")
def _c_ensure(c, s):  # type: ignore[no-untyped-def]
    # _ensure on the compiled evaluator's view: load s and run phase A, unless the values hold s already.
    flags, vals = c[0], c[1]
    if flags[F_LOADED] == 1 and _holds(vals, s):
        return
    vals[0] = 0
    vals[1] = 1
    vals[2 : 2 + s.shape[0]] = s
    call_network(_address(flags), vals, c[2], OP_A)
    flags[F_LOADED] = 1
    flags[F_GOALS] = 0


@nb.njit(cache=True, inline="always")
def _c_joint(c, rng):  # type: ignore[no-untyped-def]
    # A random legal move per role into the does nodes, from the compiled code's legal lists (drawn by
    # rng_below(rng, n) with an rng state, else np.random.randint(n), as the other evaluators' loops draw);
    # False if a role has none.
    lst, does, lptr, ldoes = c[2], c[3], c[4], c[5]
    nroles = does.shape[0]
    for r in range(nroles):
        n = lst[r]
        if n == 0:  # a role without a move: the game cannot go on
            return False
        j = np.random.randint(n) if rng is None else rng_below(rng, n)
        does[r] = ldoes[lptr[r] + lst[nroles + lptr[r] + j]]
    return True


@nb.njit(cache=True)
def _c_playout(c, s, max_steps, rng):  # type: ignore[no-untyped-def]
    # The random playout on the compiled network from the loaded s: the state stays in the values until the end.
    flags, vals, lst, does, term = c[0], c[1], c[2], c[3], c[6]
    steps = 0
    while vals[term] == 0 and steps < max_steps:
        if not _c_joint(c, rng):
            break
        _compiled_step(flags, vals, lst, does)
        steps += 1
    s[:] = vals[2 : 2 + s.shape[0]]
    return steps


@nb.njit(cache=True, inline="always")
def _ensure_ctx(ctx, s):  # type: ignore[no-untyped-def]
    # Make the context's values hold s, unpacking no more than the evaluator needs.
    if _slot(ctx[1], S_FLAGS)[F_MODE] == COMPILED:
        _c_ensure(_cview(ctx), s)
    elif not _loaded(ctx, s):
        _ensure(_unpack(ctx), s)


@nb.njit(cache=True)
def legal(ctx, s, role, out):  # type: ignore[no-untyped-def]
    """Write ``role``'s legal actions in ``s`` into ``out``; return how many."""
    _ensure_ctx(ctx, s)
    p, i, u = ctx[0], ctx[1], ctx[2]
    lptr = _slot(p, _LEGAL_PTR)
    lo = lptr[role]
    n = 0
    mode = _slot(i, S_FLAGS)[F_MODE]
    if mode == COMPILED:  # listed by the code, in order
        lst = _slot(i, S_LEGAL)
        n = lst[role]
        at = lptr.shape[0] - 1 + lo
        for k in range(n):
            out[k] = lst[at + k]
        return n
    if mode == DIFFERENTIAL:  # the legal sets hold the answer, entry by entry
        lin = _uslot(i, u, U_IN)
        for k in range(lo, lptr[role + 1]):
            if lin[k] == 1:
                out[n] = k - lo
                n += 1
        return n
    vals = _uslot(i, u, U_VALS)
    lnode = _slot(p, _LEGAL_NODE)
    for k in range(lo, lptr[role + 1]):
        if vals[lnode[k]] == 1:
            out[n] = k - lo
            n += 1
    return n


@nb.njit(cache=True)
def _step(v, s):  # type: ignore[no-untyped-def]
    # Play the joint move in v[3] (does nodes) from the loaded state s, into s.
    net, dn, flags, does, nxt = v[0], v[1], v[2], v[3], v[5]
    if flags[F_MODE] == DIFFERENTIAL:
        changed = dn[DN_CHANGED]
        for q in range(dn_step(net, dn, does)):  # and the values hold the next state
            i = changed[q]
            s[i] = 1 - s[i]
    else:
        sweep_next(net, dn[DN_VALS], does, nxt)  # the values still hold s's legal moves: reloaded when asked
        s[:] = nxt


@nb.njit(cache=True)
def apply(ctx, s, joint):  # type: ignore[no-untyped-def]
    """Play ``joint`` (one action per role) in ``s``, in place."""
    if _slot(ctx[1], S_FLAGS)[F_MODE] == COMPILED:
        c = _cview(ctx)
        _c_ensure(c, s)
        does, lptr, ldoes = c[3], c[4], c[5]
        for r in range(does.shape[0]):
            does[r] = ldoes[lptr[r] + joint[r]]
        _compiled_step(c[0], c[1], c[2], does)
        s[:] = c[1][2 : 2 + s.shape[0]]
        return
    v = _unpack(ctx)
    _ensure(v, s)
    net, does = v[0], v[3]
    lptr = net.legal_ptr
    ldoes = net.legal_does
    for r in range(does.shape[0]):
        does[r] = ldoes[lptr[r] + joint[r]]
    _step(v, s)


@nb.njit(cache=True)
def terminal(ctx, s):  # type: ignore[no-untyped-def]
    """Whether ``s`` is terminal."""
    _ensure_ctx(ctx, s)
    return _uslot(ctx[1], ctx[2], U_VALS)[_slot(ctx[0], _HEADER)[H_TERMINAL]] == 1


@nb.njit(cache=True)
def goals(ctx, s, out):  # type: ignore[no-untyped-def]
    """Write each role's goal in ``s`` into ``out`` (the highest true value; 0 where none is true)."""
    if _slot(ctx[1], S_FLAGS)[F_MODE] == COMPILED:
        c = _cview(ctx)
        _c_ensure(c, s)
        flags = c[0]
        if flags[F_GOALS] == 0:
            call_network(_address(flags), c[1], c[2], OP_G)
            flags[F_GOALS] = 1
        p = ctx[0]
        _best_goals(_slot(p, _GOAL_PTR), _slot(p, _GOAL_NODE), _slot(p, _GOAL_VALUE), c[1], out)
        return
    v = _unpack(ctx)
    _ensure(v, s)
    flags = v[2]
    vals = v[1][DN_VALS]
    if flags[F_MODE] == SWEEP and flags[F_GOALS] == 0:
        sweep_phase(v[0], vals, 1)
        flags[F_GOALS] = 1
    net = v[0]
    _best_goals(net.goal_ptr, net.goal_node, net.goal_value, vals, out)


@nb.njit(cache=True, inline="always")
def _best_goals(gptr, gnode, gval, vals, out):  # type: ignore[no-untyped-def]
    for r in range(out.shape[0]):  # the highest true goal value (a role with none: 0)
        best = 0
        for k in range(gptr[r], gptr[r + 1]):
            if vals[gnode[k]] == 1 and gval[k] > best:
                best = gval[k]
        out[r] = best


@nb.njit(cache=True)
def rollout_steps(ctx, s, rng, max_steps):  # type: ignore[no-untyped-def]
    """The random playout, at most ``max_steps`` joint moves drawn by ``rng_below(rng, n)`` (``rng`` None:
    numpy's ``np.random.randint(n)``); returns how many it made."""
    # One loop per evaluator, each calling only functions without reference counts: a step through _step, which takes the network's arrays out of the context
    # tuple, counted some forty arrays up and down (atomically) per step, 0.5 us of Amazons' 2.8.
    if _slot(ctx[1], S_FLAGS)[F_MODE] == COMPILED:
        c = _cview(ctx)
        _c_ensure(c, s)
        return _c_playout(c, s, max_steps, rng)
    v = _unpack(ctx)
    _ensure(v, s)
    if v[2][F_MODE] == DIFFERENTIAL:
        return _dn_playout(v, s, max_steps, rng)
    return _sweep_playout(v, s, max_steps, rng)


@nb.njit(cache=True)
def rollout(ctx, s, rng):  # type: ignore[no-untyped-def]
    """Play ``s`` to the end by uniformly random joint moves (in place).

    Stops early, leaving ``s`` non-terminal, if a role has no legal move (a
    broken rule sheet) or after :data:`MAX_ROLLOUT_STEPS` steps.
    """
    rollout_steps(ctx, s, rng, MAX_ROLLOUT_STEPS)


@nb.njit(cache=True)
def rollouts(ctx, states, n, rng, out):  # type: ignore[no-untyped-def]
    """Play the first ``n`` (1 to :data:`~ggp.gdl.lanes.LANES`) rows of ``states`` to the end at random, in
    place, in one bit-parallel pass (:mod:`ggp.gdl.lanes`); write each game's goals into ``out[:n]``.

    Each game stops as :func:`rollout`'s does. Only the network is read from ``ctx``: its values stay as
    they were.
    """
    return lane_rollouts(_network(ctx[0]), states, n, rng, MAX_ROLLOUT_STEPS, out)


@nb.njit(cache=True)
def traced_rollouts(ctx, states, n, rng, out, played):  # type: ignore[no-untyped-def]
    """:func:`rollouts`, marking in ``played[b, r, i]`` each move ``i`` role ``r`` made in game ``b`` (see
    :func:`~ggp.gdl.lanes.traced_lane_rollouts`)."""
    return traced_lane_rollouts(_network(ctx[0]), states, n, rng, MAX_ROLLOUT_STEPS, out, played)


@nb.njit(cache=True)
def _dn_playout(v, s, max_steps, rng):  # type: ignore[no-untyped-def]
    # the playout loop on the differential evaluator (one loop per mode: a loop holding both runs slower)
    net, dn, does = v[0], v[1], v[3]
    vals, lcount, lblocks, changed, lin = dn[DN_VALS], dn[DN_COUNT], dn[DN_BLOCKS], dn[DN_CHANGED], dn[DN_IN]
    lptr = net.legal_ptr
    ldoes = net.legal_does
    term = net.header[H_TERMINAL]
    steps = 0
    while vals[term] == 0 and steps < max_steps:
        for r in range(does.shape[0]):
            n = lcount[r]
            if n == 0:  # a role without a move: the game cannot go on
                return steps
            # legal() lists the set entries in order: the j-th, found by the role's block counts
            j = np.random.randint(n) if rng is None else rng_below(rng, n)
            does[r] = ldoes[lptr[r] + legal_pick(net, lblocks, lin, r, j)]
        for q in range(dn_step(net, dn, does)):  # and the values hold the next state
            i = changed[q]
            s[i] = 1 - s[i]
        steps += 1
    return steps


@nb.njit(cache=True)
def _sweep_playout(v, s, max_steps, rng):  # type: ignore[no-untyped-def]
    # the playout loop on the sweep evaluator
    net, dn, flags, does, nxt = v[0], v[1], v[2], v[3], v[5]
    vals = dn[DN_VALS]
    term = net.header[H_TERMINAL]
    flags[F_GOALS] = 0  # (every step loads a new state; the goals are evaluated when asked)
    steps = 0
    while vals[term] == 0 and steps < max_steps:
        for r in range(does.shape[0]):
            n = legal_count(net, vals, r)
            if n == 0:
                return steps
            does[r] = legal_does_at(net, vals, r, np.random.randint(n) if rng is None else rng_below(rng, n))
        sweep_next(net, vals, does, nxt)
        s[:] = nxt
        sweep_load(net, vals, s)
        steps += 1
    return steps


@nb.njit(cache=True)
def playout(ctx, s, max_steps):  # type: ignore[no-untyped-def]
    """Play ``s`` on by uniformly random joint moves, in place, in one compiled loop; returns the joint moves made.

    The moves are drawn with numpy's generator (``np.random.randint``, seeded by the caller) exactly as the
    generic loop of :func:`ggp.core.kernels.random_playouts` draws them over :func:`legal`, so both play the
    same games for the same seed; this loop asks the network once per step instead of once per call (the
    generic loop's four calls a step each check the whole state against the loaded one, and list every
    role's legal moves by scanning all its possible moves). Stops at a terminal state, after ``max_steps``,
    or where a role has no legal move (``s`` then stays non-terminal).
    """
    return rollout_steps(ctx, s, None, max_steps)
