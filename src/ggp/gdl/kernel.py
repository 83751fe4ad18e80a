"""A rule sheet's game as a kernel: the compiled rules every search and batch loop runs on.

A built-in game's kernel works on a few bytes of state; a GDL game's state is
its base propositions (one byte each, 0 or 1), and its rules are the
propositional network of :mod:`ggp.gdl.propnet`. The functions below give the
network the same shape as a built-in game's rules:

* ``legal(ctx, s, role, out) -> n`` writes role's legal actions into ``out[:n]``;
  an action is the index of the move in the role's list of possible moves
  (:attr:`Propnet.move_texts`), so it means the same move in every state;
* ``apply(ctx, s, joint)`` plays one action per role, in place;
* ``terminal(ctx, s)``, ``goals(ctx, s, out)`` and ``rollout(ctx, s, rng)``.

``ctx`` is a :func:`context`: the network and a scratch copy of its values.
Evaluating a state's legal moves and terminal test is one sweep over the
network, shared by every question asked about the same state: the context
remembers which state its values hold, so asking each role's legal moves and
the terminal test costs one sweep, not three. A context is not shared between
threads; each search owns one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numba as nb
import numpy as np

from ..core.kernels import Kernel, rng_below
from .propnet import H_NBASE, H_NNODES, H_NROLES, H_TERMINAL, N_LEGAL_DOES, N_LEGAL_NODE, N_LEGAL_PTR, Propnet
from .propnet import _eval as pn_eval
from .propnet import _load as pn_load
from .propnet import _next as pn_next
from .propnet import _read_goals as read_goals

#: A random playout gives up after this many steps (a rule sheet's game may never end).
MAX_ROLLOUT_STEPS = 100_000

GDLContext = tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def context(propnet: Propnet) -> GDLContext:
    """A fresh evaluation context for ``propnet``: (net, values, loaded state, flags, does, goal counts)."""
    header = propnet.net[0]
    return (
        propnet.net,
        np.zeros(int(header[H_NNODES]), dtype=np.uint8),  # every node's value for the loaded state
        np.zeros(int(header[H_NBASE]), dtype=np.uint8),  # the state those values are for
        np.zeros(2, dtype=np.uint8),  # [values hold the loaded state's phase A, goals evaluated too]
        np.full(int(header[H_NROLES]), -1, dtype=np.int32),  # the joint move's input nodes
        np.zeros(int(header[H_NROLES]), dtype=np.int64),  # goal values found per role
    )


@nb.njit(cache=True)
def _ensure(ctx, s):  # type: ignore[no-untyped-def]
    # Load s unless the values already hold it: one compare against a full sweep.
    net, vals, loaded, flags = ctx[0], ctx[1], ctx[2], ctx[3]
    if flags[0] == 1:
        same = True
        for i in range(s.shape[0]):
            if s[i] != loaded[i]:
                same = False
                break
        if same:
            return
    pn_load(net, vals, s)
    loaded[:] = s
    flags[0] = 1
    flags[1] = 0


@nb.njit(cache=True)
def legal(ctx, s, role, out):  # type: ignore[no-untyped-def]
    """Write ``role``'s legal actions in ``s`` into ``out``; return how many."""
    _ensure(ctx, s)
    net, vals = ctx[0], ctx[1]
    lptr = net[N_LEGAL_PTR]
    lnode = net[N_LEGAL_NODE]
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
    net, vals, loaded, flags, does = ctx[0], ctx[1], ctx[2], ctx[3], ctx[4]
    lptr = net[N_LEGAL_PTR]
    ldoes = net[N_LEGAL_DOES]
    for r in range(does.shape[0]):
        does[r] = ldoes[lptr[r] + joint[r]]
    pn_next(net, vals, does, s)
    # The next question is almost always about the new state: load it now.
    pn_load(net, vals, s)
    loaded[:] = s
    flags[0] = 1
    flags[1] = 0


@nb.njit(cache=True)
def terminal(ctx, s):  # type: ignore[no-untyped-def]
    """Whether ``s`` is terminal."""
    _ensure(ctx, s)
    return ctx[1][ctx[0][0][H_TERMINAL]] == 1


@nb.njit(cache=True)
def goals(ctx, s, out):  # type: ignore[no-untyped-def]
    """Write each role's goal in ``s`` into ``out`` (the highest true value; 0 where none is true)."""
    _ensure(ctx, s)
    net, vals, flags, count = ctx[0], ctx[1], ctx[3], ctx[5]
    if flags[1] == 0:
        pn_eval(net, vals, 1)
        flags[1] = 1
    read_goals(net, vals, out, count)
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
    nroles = net[0][H_NROLES]
    lptr = net[N_LEGAL_PTR]
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
    header = propnet.net[0]
    nroles = int(header[H_NROLES])
    lptr = propnet.net[N_LEGAL_PTR]
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

    nbase = int(propnet.net[0][H_NBASE])
    if s.shape != (nbase,) or s.dtype != np.uint8 or (nbase and int(s.max()) > 1):
        raise StateFormatError(f"a state array of this rule sheet is {nbase} uint8 entries, each 0 or 1")
