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
the state it last saw, kept up to date by the differential evaluator of
:mod:`ggp.gdl.evaluate` (``dn_set``): asked about another state, it propagates
only the base propositions that differ, and a move only the inputs it sets.
Consecutive states in a playout or a search path differ in a handful of
propositions, so a step costs a small part of a sweep over the network. A
context is not shared between threads; each search owns one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np

from ..core.kernels import Kernel, rng_below
from .evaluate import _dn_init as dn_init
from .evaluate import _dn_set as dn_set
from .evaluate import _eval as pn_eval
from .evaluate import _read_goals as read_goals
from .network import H_NBASE, H_NNODES, H_NROLES, H_TERMINAL, Propnet

#: A random playout gives up after this many steps (a rule sheet's game may never end).
MAX_ROLLOUT_STEPS = 100_000


def context(propnet: Propnet) -> tuple[Any, ...]:
    """A fresh evaluation context for ``propnet``.

    (net, values, true-literal counts, loaded state, [loaded?], the joint move's input nodes,
    goal counts, next-state scratch, propagation stack, dirty blocks).
    """
    net = propnet.net
    header = net.header
    nnodes = int(header[H_NNODES])
    nbase = int(header[H_NBASE])
    nroles = int(header[H_NROLES])
    return (
        net,
        np.zeros(nnodes, dtype=np.uint8),
        np.zeros(nnodes, dtype=np.int32),
        np.zeros(nbase, dtype=np.uint8),
        np.zeros(1, dtype=np.uint8),
        np.full(nroles, -1, dtype=np.int32),
        np.zeros(nroles, dtype=np.int64),
        np.zeros(nbase, dtype=np.uint8),
        np.empty(4 * nnodes + 64, dtype=np.int32),
        np.zeros(2 * (net.blocks.shape[0] // 3) + 1, dtype=np.int32),
    )


@nb.njit(cache=True)
def _ensure(ctx, s):  # type: ignore[no-untyped-def]
    # Make the values hold state s: propagate only the base propositions that differ from the
    # state they hold now (a step or two in a search or a playout changes a handful).
    net, vals, cnt, loaded, flags, stack, dirty = ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[8], ctx[9]
    if flags[0] == 1:
        ok = True
        for i in range(s.shape[0]):
            if s[i] != loaded[i]:
                if not dn_set(net, vals, cnt, stack, dirty, 2 + i, s[i]):
                    ok = False  # the propagation stack ran out: evaluate from scratch
                    break
                loaded[i] = s[i]
        if ok:
            return
    dn_init(net, vals, cnt, s)
    loaded[:] = s
    flags[0] = 1


@nb.njit(cache=True)
def legal(ctx, s, role, out):  # type: ignore[no-untyped-def]
    """Write ``role``'s legal actions in ``s`` into ``out``; return how many."""
    _ensure(ctx, s)
    net, vals = ctx[0], ctx[1]
    lptr = net.legal_ptr
    lnode = net.legal_node
    lo = lptr[role]
    n = 0
    for k in range(lo, lptr[role + 1]):
        if vals[lnode[k]] == 1:
            out[n] = k - lo
            n += 1
    return n


@nb.njit(cache=True)
def apply(ctx, s, joint):  # type: ignore[no-untyped-def]
    """Play ``joint`` (one action per role) in ``s``, in place."""
    _ensure(ctx, s)
    net, vals, cnt, flags, does, nxt, stack, dirty = ctx[0], ctx[1], ctx[2], ctx[4], ctx[5], ctx[7], ctx[8], ctx[9]
    lptr = net.legal_ptr
    ldoes = net.legal_does
    nxt_node = net.next
    ok = True
    for r in range(does.shape[0]):
        does[r] = ldoes[lptr[r] + joint[r]]
        if does[r] >= 0:
            ok = ok and dn_set(net, vals, cnt, stack, dirty, does[r], 1)
    if not ok:  # out of stack space: a full evaluation of this step
        dn_init(net, vals, cnt, s)
        for r in range(does.shape[0]):
            if does[r] >= 0:
                vals[does[r]] = 1
        pn_eval(net, vals, 2)
    for i in range(nxt.shape[0]):
        nxt[i] = vals[nxt_node[i]]
    if ok:
        for r in range(does.shape[0]):
            if does[r] >= 0:
                ok = ok and dn_set(net, vals, cnt, stack, dirty, does[r], 0)
    if not ok:
        flags[0] = 0  # the values no longer hold a state: the next question loads from scratch
    s[:] = nxt
    _ensure(ctx, s)


@nb.njit(cache=True)
def terminal(ctx, s):  # type: ignore[no-untyped-def]
    """Whether ``s`` is terminal."""
    _ensure(ctx, s)
    return ctx[1][ctx[0][0][H_TERMINAL]] == 1


@nb.njit(cache=True)
def goals(ctx, s, out):  # type: ignore[no-untyped-def]
    """Write each role's goal in ``s`` into ``out`` (the highest true value; 0 where none is true)."""
    _ensure(ctx, s)
    read_goals(ctx[0], ctx[1], out, ctx[6])
    for r in range(out.shape[0]):
        if out[r] < 0:
            out[r] = 0


@nb.njit(cache=True)
def rollout(ctx, s, rng):  # type: ignore[no-untyped-def]
    """Play ``s`` to the end by uniformly random joint moves (in place).

    Stops early, leaving ``s`` non-terminal, if a role has no legal move (a
    broken rule sheet) or after :data:`MAX_ROLLOUT_STEPS` steps.
    """
    net = ctx[0]
    nroles = net.header[H_NROLES]
    lptr = net.legal_ptr
    width = 1
    for r in range(nroles):
        width = max(width, lptr[r + 1] - lptr[r])
    buf = np.empty(width, dtype=np.int64)
    joint = np.empty(nroles, dtype=np.int64)
    for _ in range(MAX_ROLLOUT_STEPS):
        if terminal(ctx, s):
            return
        for r in range(nroles):
            n = legal(ctx, s, r, buf)
            if n == 0:
                return
            joint[r] = buf[rng_below(rng, n)]
        apply(ctx, s, joint)


_DIGEST = hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:10]


def gdl_kernel(propnet: Propnet) -> Kernel:
    """The kernel of a rule sheet's game: the functions above, with ``propnet`` in every context.

    Actions of role r are indices into ``propnet.move_texts[r]``. Every sheet
    with the same number of roles shares one set of compiled loops.
    """
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
        make_context=lambda: context(propnet),
        check=lambda s: _check(propnet, s),
    )


def _check(propnet: Propnet, s: np.ndarray) -> None:
    from ..core.errors import StateFormatError

    nbase = int(propnet.net.header[H_NBASE])
    if s.shape != (nbase,) or s.dtype != np.uint8 or (nbase and int(s.max()) > 1):
        raise StateFormatError(f"a state array of this rule sheet is {nbase} uint8 entries, each 0 or 1")
