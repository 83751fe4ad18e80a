"""A rule sheet's game as a kernel: the compiled rules every search and batch loop runs on.

A built-in game's kernel works on a few bytes of state; a GDL game's state is
its base propositions (one byte each, 0 or 1), and its rules are the
propositional network of :mod:`ggp.gdl.network`. The functions below give the
network the same shape as a built-in game's rules:

* ``legal(ctx, s, role, out) -> n`` writes role's legal actions into ``out[:n]``;
  an action is the index of the move in the role's list of possible moves
  (:attr:`Propnet.move_texts`), so it means the same move in every state;
* ``apply(ctx, s, joint)`` plays one action per role, in place;
* ``terminal(ctx, s)``, ``goals(ctx, s, out)`` and ``rollout(ctx, s, rng)``.

``ctx`` is a :func:`context`: the network and the values of all its nodes for
the state it last saw, packed into three arrays (a call from Python types each
array it is given, so a context of a few dozen arrays cost 70 us a call). Its mode says how they are kept: differentially (asked
about another state, it propagates only the base propositions that differ, and
a move only the inputs it sets; consecutive states in a playout or a search
path differ in a handful of propositions, so a step costs a small part of a
sweep), by sweeping the network's phases (faster for small networks and for
those that change all over at every step), or by running those sweeps as the
network compiled to straight-line machine code (:mod:`ggp.gdl.codegen`; up to
a size, since compiling costs load time). :func:`fastest_mode` picks one per
sheet by a short measurement when its kernel's first context is made, and
:func:`chosen_mode` keeps the choice on disk, so that it is made once per network. A context is not shared
between threads; each search owns one.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

import numba as nb
import numpy as np

from ..core.cache import cache_folder, write_whole
from ..core.kernels import Kernel, rng_below, rng_state
from . import codegen
from .codegen import OP_A, OP_G, OP_STEP, call_network
from .evaluate import (
    DN_ACOUNT,
    DN_APOS,
    DN_ARMED,
    DN_BLOCKS,
    DN_CHANGED,
    DN_CNT,
    DN_COUNT,
    DN_DIRTY,
    DN_DOES,
    DN_IN,
    DN_STACK,
    DN_TCOUNT,
    DN_TFLAG,
    DN_TLIST,
    DN_VALS,
    _dn_init,
    _dn_load,
    _dn_step,
    _eval,
    _load,
    _next,
    dn_alloc,
    legal_count,
    legal_does_at,
    legal_pick,
)
from .lanes import LANES, lane_rollouts
from .network import H_NBASE, H_NNODES, H_NROLES, H_TERMINAL, Network, Propnet

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
#: The differential evaluator's armed lists (see :func:`ggp.gdl.evaluate.dn_alloc`).
S_ARMED, S_ACOUNT, S_APOS = 14, 15, 16
#: The uint8 state's slots: values, legal-set membership, touched flags, next-state scratch.
U_VALS, U_IN, U_TFLAG, U_NXT = range(4)


def _pack(arrays: list[np.ndarray]) -> np.ndarray:
    # starts of each array (and the end) first, then the arrays
    head = len(arrays) + 1
    starts = [head]
    for arr in arrays:
        starts.append(starts[-1] + len(arr))
    out: np.ndarray = np.zeros(starts[-1], dtype=np.int32)
    out[:head] = starts
    for arr, start in zip(arrays, starts, strict=False):
        out[start : start + len(arr)] = arr
    return out


def packed_network(propnet: Propnet) -> np.ndarray:
    """The network's arrays in one int32 array (made once per propnet)."""
    packed = propnet.__dict__.get("_packed")
    if packed is None:
        packed = propnet.__dict__["_packed"] = _pack([np.asarray(a, dtype=np.int32) for a in propnet.net])
    return packed


def context(propnet: Propnet, mode: int = DIFFERENTIAL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fresh evaluation context for ``propnet``, evaluating by ``mode`` (:data:`SWEEP`, :data:`DIFFERENTIAL`
    or :data:`COMPILED`: the network compiled now, or read from the disk cache).

    (the packed network, the packed int32 state, the packed uint8 state): the network, the
    differential state (see :func:`ggp.gdl.evaluate.dn_alloc`; a sweep uses its values), flags,
    the joint move's input nodes, goal counts and next-state scratch.
    """
    if mode not in MODE_NAMES:
        raise ValueError(
            f"a GDL kernel context evaluates by sweep ({SWEEP}), differentially ({DIFFERENTIAL}) or compiled ({COMPILED})"
        )
    net = propnet.net
    header = net.header
    nbase = int(header[H_NBASE])
    nroles = int(header[H_NROLES])
    dn = dn_alloc(net, 0)
    flags = np.zeros(5, dtype=np.int32)
    flags[F_MODE] = mode
    ints = [dn[DN_CNT], dn[DN_STACK], dn[DN_DIRTY], dn[DN_BLOCKS], dn[DN_COUNT], dn[DN_TLIST], dn[DN_TCOUNT]]
    ints += [dn[DN_CHANGED], dn[DN_DOES], flags, np.full(nroles, -1, dtype=np.int32), np.zeros(nroles, dtype=np.int32)]
    uints = [dn[DN_VALS], dn[DN_IN], dn[DN_TFLAG], np.zeros(nbase, dtype=np.uint8)]
    ustarts = np.cumsum([0] + [len(a) for a in uints]).astype(np.int32)
    packed = packed_network(propnet)
    legal_list = np.zeros(nroles + int(net.legal_ptr[nroles]), dtype=np.int32)
    ints_packed = _pack([*ints, ustarts, legal_list, dn[DN_ARMED], dn[DN_ACOUNT], dn[DN_APOS]])
    if mode == COMPILED:
        # The generated code indexes the values with the network's node numbers, and the legal lists with
        # roles and legal entries, unchecked: this context hands it exactly those sizes (and the code was
        # generated for this network).
        if len(dn[DN_VALS]) != int(header[H_NNODES]) or len(legal_list) != nroles + int(net.legal_ptr[nroles]):
            raise ValueError("a compiled network's context holds one value per node and a legal list per role")
        # the engine that holds the code stays loaded while this context's int32 array lives
        address = codegen.hold(ints_packed, net, packed).address
        at = int(ints_packed[S_FLAGS])
        ints_packed[at + F_ADDR_LO] = np.int64(address & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        ints_packed[at + F_ADDR_HI] = np.int32(address >> 32)
    return packed, ints_packed, np.concatenate(uints)


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
            _dn_load(net, dn, s)
        else:
            _dn_init(net, dn, s)
            flags[F_LOADED] = 1
        return
    if flags[F_MODE] == COMPILED:
        _c_ensure((flags, vals, v[6]), s)
        return
    if flags[F_LOADED] == 1 and _holds(vals, s):
        return
    _load(net, vals, s)
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
        for q in range(_dn_step(net, dn, does)):  # and the values hold the next state
            i = changed[q]
            s[i] = 1 - s[i]
    else:
        _next(net, dn[DN_VALS], does, nxt)  # the values still hold s's legal moves: reloaded when asked
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
        _eval(v[0], vals, 1)
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
def _rollout_steps(ctx, s, rng, max_steps):  # type: ignore[no-untyped-def]
    # The random playout, at most max_steps joint moves drawn by rng_below(rng, n) (rng None: numpy's
    # np.random.randint(n)); returns how many it made. One loop per evaluator, each calling only functions
    # without reference counts: a step through _step, which takes the network's arrays out of the context
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
    _rollout_steps(ctx, s, rng, MAX_ROLLOUT_STEPS)


@nb.njit(cache=True)
def rollouts(ctx, states, n, rng, out):  # type: ignore[no-untyped-def]
    """Play the first ``n`` (1 to :data:`~ggp.gdl.lanes.LANES`) rows of ``states`` to the end at random, in
    place, in one bit-parallel pass (:mod:`ggp.gdl.lanes`); write each game's goals into ``out[:n]``.

    Each game stops as :func:`rollout`'s does. Only the network is read from ``ctx``: its values stay as
    they were.
    """
    return lane_rollouts(_network(ctx[0]), states, n, rng, MAX_ROLLOUT_STEPS, out)


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
        for q in range(_dn_step(net, dn, does)):  # and the values hold the next state
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
        _next(net, vals, does, nxt)
        s[:] = nxt
        _load(net, vals, s)
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
    return _rollout_steps(ctx, s, None, max_steps)


def compilable(propnet: Propnet) -> bool:
    """Whether the network is small enough to compile to machine code (:func:`ggp.gdl.codegen.compile_limit`
    literals and :data:`ggp.gdl.codegen.MAX_LEGAL_ENTRIES` legal entries: compile time grows with them, and
    is part of a sheet's first use)."""
    net = propnet.net
    return len(net.lits) <= codegen.compile_limit() and len(net.legal_node) <= codegen.MAX_LEGAL_ENTRIES


#: The compiled sweep is measured only where the differential evaluator is less than this many times as fast
#: as the interpreted sweep: compiling makes a sweep 7-19x faster (wallmaze 18.6x, bomberman2p 10.5x,
#: connectFour 13.1x, knightThrough 7.3x, sheepAndWolf 17.2x), where the differential evaluator leads the
#: interpreted sweep by 2-4x, so where it leads by more than this, the compile (seconds, on a large network)
#: would buy nothing. (At 4, a faster differential evaluator took wallmaze's compiled code away from it.)
COMPILE_IF_DIFFERENTIAL_BELOW = 12.0


def _compiled_context(propnet: Propnet) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    # A failure to compile costs the speed, not the game: the interpreters are exact.
    try:
        return context(propnet, COMPILED)
    except Exception as exc:  # (whatever LLVM raises)
        warnings.warn(f"the rule sheet's network did not compile ({exc}); it is interpreted", stacklevel=3)
        return None


def _time_modes(propnet: Propnet, contexts: Mapping[int, tuple[np.ndarray, ...]], budget: float) -> dict[int, float]:
    # Processor seconds per transition of each context's evaluator, playing the same random games from the
    # start, in rounds of doubling length until about ``budget`` seconds are spent.
    init = np.asarray(propnet.net.init, dtype=np.uint8)
    for ctx in contexts.values():
        # (outside the clock: the first call in a process whose numba cache is cold compiles the loop, seconds
        # that, counted, made the sweep look slow, the compiled code unmeasured and the choice differential)
        _rollout_steps(ctx, init.copy(), rng_state(0), 1)
    steps = 16
    best = {mode: float("inf") for mode in contexts}
    spent = 0.0
    while True:
        for mode, ctx in contexts.items():
            s = init.copy()
            began = time.process_time()
            done = 0
            rng = rng_state(1)
            while done < steps:
                made = _rollout_steps(ctx, s, rng, steps - done)
                if made == 0:  # the game ended (or cannot go on): play it again
                    if s.tobytes() == init.tobytes():
                        break
                    s[:] = init
                done += made
            elapsed = time.process_time() - began
            spent += elapsed
            best[mode] = min(best[mode], elapsed / max(done, 1))
        if spent >= budget or steps >= 1 << 16:
            return best
        steps *= 2


def fastest_mode(propnet: Propnet, budget: float = 0.05) -> int:
    """:data:`SWEEP`, :data:`DIFFERENTIAL` or :data:`COMPILED`, whichever plays random games from the start
    faster here.

    Differential evaluation wins when a step changes a small part of the network; a small network, or one
    where most gates change every step (a step counter read by every rule), is faster swept, and a sweep is
    faster compiled than interpreted. The interpreters are measured first; the network is compiled and
    measured too when it is small enough (:func:`compilable`) and the differential evaluator does not lead by
    :data:`COMPILE_IF_DIFFERENTIAL_BELOW` or more. All modes play the same games for the same generator, so
    the timing compares equal work; about ``budget`` seconds of processor time per round (processor time, so
    that other processes on a busy machine do not decide it), plus the compile.
    """
    contexts = {SWEEP: context(propnet, SWEEP), DIFFERENTIAL: context(propnet, DIFFERENTIAL)}
    best = _time_modes(propnet, contexts, budget)
    if compilable(propnet) and best[SWEEP] < COMPILE_IF_DIFFERENTIAL_BELOW * best[DIFFERENTIAL]:
        compiled = _compiled_context(propnet)
        if compiled is not None:
            # all three timed again together: figures from two moments of a shared machine (another process
            # starting beside this one) once chose the differential evaluator at a third of the compiled speed
            best = _time_modes(propnet, {**contexts, COMPILED: compiled}, budget)
    return min(best, key=lambda mode: best[mode])


_DIGEST = hashlib.sha1(Path(__file__).read_bytes() + Path(__file__).with_name("lanes.py").read_bytes()).hexdigest()[:10]


def _mode_file(propnet: Propnet) -> Path:
    # one file per network and version of this module, in ggp's cache folder
    digest = hashlib.sha1(packed_network(propnet).tobytes()).hexdigest()[:20]
    # A process with numba's bounds checks on (make test, for the tests of compiled code) runs the interpreters several times slower
    # than the compiled network's code: its choice is its own, or it would stay with the user's later runs.
    checked = "-boundscheck" if getattr(nb.config, "BOUNDSCHECK", None) else ""
    return cache_folder() / f"gdl-mode3-{digest}-{_DIGEST}{checked}"  # (mode3: the choice among three evaluators)


def chosen_mode(propnet: Propnet) -> int:
    """:func:`fastest_mode` for ``propnet``, measured once per network and kept in ggp's cache folder
    (``$GGP_CACHE``, else ``~/.cache/ggp``): a later process, or another load of the same sheet, reads the
    choice instead of measuring both evaluators again. A cache that cannot be read or written is measured
    around (the choice is only ever a matter of speed)."""
    path = _mode_file(propnet)
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if text in (str(SWEEP), str(DIFFERENTIAL)) or (text == str(COMPILED) and compilable(propnet)):
        return int(text)
    mode = fastest_mode(propnet)
    write_whole(path, str(mode).encode("ascii"))
    return mode


#: Rollouts are played in batches (:mod:`ggp.gdl.lanes`) where a batch plays a game's step at least this many
#: times faster than one game at a time does, and a whole batch from the start takes at most
#: BATCH_CALL_SECONDS: a search's clock is kept between calls (an agent keeps back 10% of its clock and 30 ms).
BATCH_IF_FASTER = 1.5
BATCH_CALL_SECONDS = 0.03


def _time_lanes(propnet: Propnet, budget: float) -> tuple[float, float]:
    # Processor seconds per game step of a batch of LANES games from the start, in rounds of doubling length
    # until about ``budget`` seconds are spent (as _time_modes times one game at a time); and the seconds of
    # the whole batch, played to the end (inf: not over within the budget).
    net = propnet.net
    init = np.asarray(net.init, dtype=np.uint8)
    out = np.zeros((LANES, int(net.header[H_NROLES])), dtype=np.int64)
    lane_rollouts(net, init[None, :].copy(), 1, rng_state(0), 1, out)  # (a cold cache compiles: not timed)
    steps = 4
    best = float("inf")
    spent = 0.0
    while True:
        states = np.tile(init, (LANES, 1))
        began = time.process_time()
        made = lane_rollouts(net, states, LANES, rng_state(1), steps, out)
        elapsed = time.process_time() - began
        spent += elapsed
        best = min(best, elapsed / max(made, 1))
        if made < LANES * steps:  # every game has ended
            return best, elapsed
        if spent >= budget or steps >= 1 << 16:
            return best, float("inf")
        steps *= 2


def batch_pays(propnet: Propnet, mode: int, budget: float = 0.05) -> bool:
    """Whether a batch of :data:`~ggp.gdl.lanes.LANES` bit-parallel rollouts plays a step of each game
    :data:`BATCH_IF_FASTER` times faster than evaluator ``mode`` plays one game's, from the start, and plays
    its games to the end within :data:`BATCH_CALL_SECONDS`.

    A sweep of the whole network is shared by the batch: large networks whose steps change little of them
    (the differential evaluator's best case) may still be faster one game at a time.
    """
    one = _time_modes(propnet, {mode: context(propnet, mode)}, budget)[mode]
    per_step, whole = _time_lanes(propnet, max(budget, 2 * BATCH_CALL_SECONDS))
    return per_step * BATCH_IF_FASTER <= one and whole <= BATCH_CALL_SECONDS


def chosen_batch(propnet: Propnet, mode: int) -> int:
    """:data:`~ggp.gdl.lanes.LANES` where :func:`batch_pays` for ``propnet``, else 1; measured once per network
    and kept beside :func:`chosen_mode`'s choice."""
    modes = _mode_file(propnet)
    path = modes.with_name(modes.name.replace("gdl-mode3-", "gdl-batch-"))
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if text in ("1", str(LANES)):
        return int(text)
    batch = LANES if batch_pays(propnet, mode) else 1
    write_whole(path, str(batch).encode("ascii"))
    return batch


def gdl_kernel(propnet: Propnet, mode: int | None = None) -> Kernel:
    """The kernel of a rule sheet's game: the functions above, with ``propnet`` in every context.

    Actions of role r are indices into ``propnet.move_texts[r]``. Every sheet
    with the same number of roles shares one set of compiled loops. ``mode``
    says how contexts evaluate the network (None: :func:`chosen_mode`, measured once per network
    and kept on disk, read when the first context is made).
    """
    # The measurement runs when the first context is made, not when the sheet loads: a fresh
    # process would otherwise load the compiled rollout from numba's cache (most of a second)
    # for every sheet it merely reads.
    chosen = [] if mode is None else [mode]

    def evaluator() -> int:
        if not chosen:
            chosen.append(chosen_mode(propnet))
        return chosen[0]

    def make_context() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return context(propnet, evaluator())

    batch: list[int] = []

    def rollout_batch() -> int:
        if not batch:
            batch.append(chosen_batch(propnet, evaluator()))
        return batch[0]

    header = propnet.net.header
    nroles = int(header[H_NROLES])
    lptr = propnet.net.legal_ptr
    width = max([int(lptr[r + 1] - lptr[r]) for r in range(nroles)] + [1])
    namespace = {
        "_tag": f"gdl{nroles}",
        "_digest": _DIGEST,
        "kernel_legal": legal,
        "kernel_apply": apply,
        "kernel_terminal": terminal,
        "kernel_goals": goals,
        "kernel_rollout": rollout,
        "kernel_playout": playout,
        "kernel_rollouts": rollouts,
        "num_roles": nroles,
    }
    return Kernel(
        legal,
        apply,
        terminal,
        goals,
        rollout,
        num_roles=nroles,
        num_actions=width,
        max_actions=width,
        dtype=np.dtype(np.uint8),
        namespace=namespace,
        make_context=make_context,
        check=lambda s: _check(propnet, s),
        rollout_batch=rollout_batch,
    )


def compile_report(propnet: Propnet) -> str:
    """How the network's machine code came to this process: compiled (in how long) or read from the disk cache."""
    got = codegen.history(packed_network(propnet))
    if got is None:
        return "not compiled in this process"
    seconds, cached = got
    return "object code read from the cache" if cached else f"compiled in {seconds:.2f} s"


def evaluation_mode(kernel: Kernel) -> str:
    """How a rule sheet's kernel evaluates its network: "sweep", "differential" or "compiled"."""
    i = kernel.context()[1]
    return MODE_NAMES[int(i[i[S_FLAGS] + F_MODE])]


def _check(propnet: Propnet, s: np.ndarray) -> None:
    from ..core.errors import StateFormatError

    nbase = int(propnet.net.header[H_NBASE])
    if s.shape != (nbase,) or s.dtype != np.uint8 or (nbase and int(s.max()) > 1):
        raise StateFormatError(f"a state array of this rule sheet is {nbase} uint8 entries, each 0 or 1")
