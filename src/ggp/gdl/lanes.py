"""Sixty-four random playouts at once: the network evaluated bit-parallel.

A node's value in 64 games is one ``uint64`` word, bit ``b`` for game ``b``, so
one sweep of the network (an AND or OR of words per gate) steps all 64 games.
A sweep costs the same for one game as for 64; where the differential evaluator
of :mod:`ggp.gdl.evaluate` pays per change (Amazons: some 324 counter visits a
step, 1.7 us), a sweep of Amazons' 25,000 literals shared by 64 games costs
about 0.4 us a game. Search uses it to score a batch of leaves in one call
(:func:`ggp.gdl.kernel.rollouts`).

Each game draws its joint moves as :func:`ggp.gdl.kernel.rollout` does: a
uniformly random legal move per role, from one ``rng`` shared by the batch.
A game stops at a terminal state, where a role has no legal move, or after
``max_steps``; it then stays as it is while the others play on, and its goals
are read from where it stopped (the highest true value per role, 0 where none).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .network import H_A0, H_A1, H_NBASE, H_NROLES, H_TERMINAL, Network

#: Games per batch: the bits of a word.
LANES = 64

_U = np.uint64
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
# the lowest set bit's index by de Bruijn multiplication (numba has no count-trailing-zeros)
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_BIT_OF = np.zeros(64, dtype=np.int64)
for _b in range(64):
    _BIT_OF[((int(1 << _b) * int(_DEBRUIJN)) % (1 << 64)) >> 58] = _b


@nb.njit(cache=True, inline="always")
def _lowest(t):  # type: ignore[no-untyped-def]
    # the index of t's only set bit
    return _BIT_OF[(t * _DEBRUIJN) >> _U(58)]


@nb.njit(cache=True, inline="always")
def _gate(words, kind, ptr, lits, g):  # type: ignore[no-untyped-def]
    # a gate's word: the AND or OR of its literals' words (a negated literal's word flipped)
    j0 = _U(ptr[g])
    j1 = _U(ptr[g + _U(1)])
    if kind[g] == 0:
        acc = _ALL
        for j in range(j0, j1):
            lit = _U(lits[j])
            acc &= words[lit >> _U(1)] ^ (_U(0) - (lit & _U(1)))
        return acc
    acc = _U(0)
    for j in range(j0, j1):
        lit = _U(lits[j])
        acc |= words[lit >> _U(1)] ^ (_U(0) - (lit & _U(1)))
    return acc


@nb.njit(cache=True, inline="always")
def _sweep(net: Network, words: np.ndarray, phase: int) -> None:
    """Evaluate the gates of ``phase`` (0 legal and terminal, 1 goals, 2 next) in all 64 games."""
    header = net.header
    blocks = net.blocks
    order = net.order
    ptr = net.ptr
    lits = net.lits
    kind = net.kind
    # (unsigned indices: numba tests every signed one for Python's indexing from the end)
    for b in range(header[H_A0 + 2 * phase], header[H_A1 + 2 * phase]):
        start = _U(blocks[3 * b])
        end = _U(blocks[3 * b + 1])
        if blocks[3 * b + 2] == 0:
            for k in range(start, end):
                g = _U(order[k])
                words[g] = _gate(words, kind, ptr, lits, g)
            continue
        # a positive cycle: its least fixpoint from all false, in every game at once
        for k in range(start, end):
            words[_U(order[k])] = 0
        changed = True
        while changed:
            changed = False
            for k in range(start, end):
                g = _U(order[k])
                acc = _gate(words, kind, ptr, lits, g)
                if acc != words[g]:
                    words[g] = acc
                    changed = True


@nb.njit(cache=True)
def lane_rollouts(net: Network, states: np.ndarray, n: int, rng: np.ndarray, max_steps: int, out: np.ndarray) -> int:
    """Play the first ``n`` (1 to 64) of ``states`` (rows of base bits) to the end at random, in place; write
    each game's goals into ``out[:n]``. Returns the joint moves made, summed over the games."""
    header = net.header
    nbase = header[H_NBASE]
    nroles = header[H_NROLES]
    term = header[H_TERMINAL]
    lptr = net.legal_ptr
    lnode = net.legal_node
    ldoes = net.legal_does
    nxt = net.next
    width = 1
    for r in range(nroles):
        width = max(width, lptr[r + 1] - lptr[r])
    words = np.zeros(header[0], dtype=np.uint64)
    lists = np.empty((LANES, width), dtype=np.int32)
    counts = np.zeros(LANES, dtype=np.int64)
    does = np.zeros((LANES, max(nroles, 1)), dtype=np.int64)
    nextw = np.empty(nbase, dtype=np.uint64)
    words[1] = _ALL
    for i in range(nbase):
        w = _U(0)
        for b in range(n):
            w |= _U(states[b, i]) << _U(b)
        words[2 + i] = w
    active = _ALL if n >= LANES else (_U(1) << _U(n)) - _U(1)
    made = 0
    steps = 0
    _sweep(net, words, 0)
    while True:
        active &= ~words[term]
        if active == 0 or steps >= max_steps:
            break
        # each game's legal moves per role, then one of them at random; a game where a role has none stops
        for r in range(nroles):
            counts[:] = 0
            for k in range(lptr[r], lptr[r + 1]):
                w = words[lnode[k]] & active
                while w != 0:
                    t = w & (_U(0) - w)
                    b = _lowest(t)
                    lists[b, counts[b]] = k
                    counts[b] += 1
                    w ^= t
            w = active
            while w != 0:
                t = w & (_U(0) - w)
                w ^= t
                b = _lowest(t)
                if counts[b] == 0:
                    active &= ~t
                    continue
                does[b, r] = ldoes[lists[b, rng_below(rng, counts[b])]]
        if active == 0:
            break
        w = active
        while w != 0:
            t = w & (_U(0) - w)
            w ^= t
            b = _lowest(t)
            for r in range(nroles):
                if does[b, r] >= 0:
                    words[does[b, r]] |= t
        _sweep(net, words, 2)
        # (read every next value before writing any: a next node may be a base node)
        for i in range(nbase):
            nextw[i] = (words[nxt[i]] & active) | (words[2 + i] & ~active)
        for i in range(nbase):
            words[2 + i] = nextw[i]
        w = active
        while w != 0:
            t = w & (_U(0) - w)
            w ^= t
            b = _lowest(t)
            made += 1
            for r in range(nroles):
                if does[b, r] >= 0:
                    words[does[b, r]] = 0
        steps += 1
        _sweep(net, words, 0)
    _sweep(net, words, 1)
    gptr = net.goal_ptr
    gnode = net.goal_node
    gval = net.goal_value
    for b in range(n):
        bit = _U(1) << _U(b)
        for i in range(nbase):
            states[b, i] = 1 if words[2 + i] & bit else 0
        for r in range(nroles):  # the highest true goal value (a role with none: 0)
            best = 0
            for k in range(gptr[r], gptr[r + 1]):
                if words[gnode[k]] & bit and gval[k] > best:
                    best = gval[k]
            out[b, r] = best
    return made
