"""Many random playouts at once: the network evaluated bit-parallel.

A node's value in 64 games is one ``uint64`` word, bit ``b`` for game ``b``, so
one sweep of the network (an AND or OR of words per gate) steps all of them; a
node has two words here, 128 games. A sweep costs little more for 128 games than
for one: where the differential evaluator of :mod:`ggp.gdl.differential` pays per
change (Amazons 8x8: some 324 counter visits a step, 1.7 us), Amazons' sweep is
shared by 128 games. The next state is not swept but scattered from the moves
made (:func:`_next_program`). Search uses this to score a batch of leaves in one
call (:func:`ggp.gdl.kernel.rollouts`).

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
from .network import H_A0, H_A1, H_MAXLEGAL, H_NBASE, H_NDOES, H_NROLES, H_TERMINAL, Network

#: Words per node: each game's value is a bit of one of them (two words: memory is the sweep's cost, and the
#: second word of a node shares the first one's cache line, so 128 games cost about 1.4 times 64).
WORDS = 2
#: Games per batch.
LANES = 64 * WORDS

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
    # a gate's two words: the AND or OR of its literals' words (a negated literal's words flipped)
    j0 = _U(ptr[g])
    j1 = _U(ptr[g + _U(1)])
    if kind[g] == 0:
        a0 = _ALL
        a1 = _ALL
        for j in range(j0, j1):
            lit = _U(lits[j])
            at = (lit >> _U(1)) << _U(1)
            m = _U(0) - (lit & _U(1))
            a0 &= words[at] ^ m
            a1 &= words[at + _U(1)] ^ m
        return a0, a1
    a0 = _U(0)
    a1 = _U(0)
    for j in range(j0, j1):
        lit = _U(lits[j])
        at = (lit >> _U(1)) << _U(1)
        m = _U(0) - (lit & _U(1))
        a0 |= words[at] ^ m
        a1 |= words[at + _U(1)] ^ m
    return a0, a1


@nb.njit(cache=True, inline="always")
def _sweep(net: Network, words: np.ndarray, phase: int) -> None:
    """Evaluate the gates of ``phase`` (0 legal and terminal, 1 goals, 2 next) in every game: node ``n``'s
    words are ``words[2 * n]`` (games 0-63) and ``words[2 * n + 1]`` (games 64-127)."""
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
                a0, a1 = _gate(words, kind, ptr, lits, g)
                words[g << _U(1)] = a0
                words[(g << _U(1)) + _U(1)] = a1
            continue
        # a positive cycle: its least fixpoint from all false, in every game at once
        for k in range(start, end):
            g = _U(order[k])
            words[g << _U(1)] = 0
            words[(g << _U(1)) + _U(1)] = 0
        changed = True
        while changed:
            changed = False
            for k in range(start, end):
                g = _U(order[k])
                a0, a1 = _gate(words, kind, ptr, lits, g)
                if a0 != words[g << _U(1)] or a1 != words[(g << _U(1)) + _U(1)]:
                    words[g << _U(1)] = a0
                    words[(g << _U(1)) + _U(1)] = a1
                    changed = True


@nb.njit(cache=True)
def _next_program(net: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The next-state phase split for a step of many games: the moves' part of each OR gate is scattered from
    the moves the games make (each move's ``does`` node to the OR gates reading it: ``(ptr, gates)``, a
    node's readers ``gates[ptr[d - first]:ptr[d - first + 1]]``; ``targets``: those gates, once each), the
    rest swept as ``program``: per gate its node, ``4 * literals + 2 * (moves scattered into it) + kind``,
    then its literals other than those moves.

    Most of the phase is moves (Amazons 10x10: 17,840 of its 18,740 literals, the next state's ORs over the
    moves that move an amazon to or from a square), of which a step of 128 games sets at most 256.
    Built per batch: its cost, a pass over the phase, is small beside a batch's steps.
    """
    blocks, order, ptr, lits, kind = net.blocks, net.order, net.ptr, net.lits, net.kind
    first = 2 + net.header[H_NBASE]
    last = first + net.header[H_NDOES]
    b0 = net.header[H_A0 + 4]
    b1 = net.header[H_A1 + 4]
    cyclic = False
    size = 0
    for b in range(b0, b1):
        cyclic = cyclic or blocks[3 * b + 2] != 0
        for k in range(blocks[3 * b], blocks[3 * b + 1]):
            size += 2 + ptr[order[k] + 1] - ptr[order[k]]
    counts = np.zeros(last - first + 1, dtype=np.int64)
    program = np.empty(size, dtype=np.int64)
    targets = np.empty(size, dtype=np.int64)
    if cyclic:  # (a least fixpoint is swept whole: the program is empty)
        return counts, targets[:0], targets[:0], program[:0]

    def scattered(g: int, lit: int) -> bool:
        return kind[g] == 1 and lit & 1 == 0 and first <= (lit >> 1) < last

    for b in range(b0, b1):
        for k in range(blocks[3 * b], blocks[3 * b + 1]):
            g = order[k]
            for j in range(ptr[g], ptr[g + 1]):
                if scattered(g, lits[j]):
                    counts[(lits[j] >> 1) - first + 1] += 1
    for d in range(1, counts.shape[0]):
        counts[d] += counts[d - 1]
    gates = np.empty(counts[-1], dtype=np.int64)
    fill = counts.copy()
    at = 0
    nt = 0
    for b in range(b0, b1):
        for k in range(blocks[3 * b], blocks[3 * b + 1]):
            g = order[k]
            head = at
            at += 2
            moves = 0
            for j in range(ptr[g], ptr[g + 1]):
                lit = lits[j]
                if scattered(g, lit):
                    d = (lit >> 1) - first
                    gates[fill[d]] = g
                    fill[d] += 1
                    moves = 1
                else:
                    program[at] = lit
                    at += 1
            program[head] = g
            program[head + 1] = 4 * (at - head - 2) + 2 * moves + kind[g]
            targets[nt] = g
            nt += moves
    return counts, gates, targets[:nt], program[:at]


@nb.njit(cache=True, inline="always")
def _run_next(program: np.ndarray, words: np.ndarray) -> None:
    """Sweep the next-state program (:func:`_next_program`), the moves' part of its gates already scattered.

    (Its loops are :func:`_gate`'s, written out again: one helper for both measured 20% slower.)"""
    i = _U(0)
    end = _U(program.shape[0])
    while i < end:
        g = _U(program[i])
        h = _U(program[i + _U(1)])
        j1 = i + _U(2) + (h >> _U(2))
        at = g << _U(1)
        if h & _U(1) == 0:
            a0 = _ALL
            a1 = _ALL
            for j in range(i + _U(2), j1):
                lit = _U(program[j])
                x = (lit >> _U(1)) << _U(1)
                m = _U(0) - (lit & _U(1))
                a0 &= words[x] ^ m
                a1 &= words[x + _U(1)] ^ m
        else:
            if h & _U(2):
                a0 = words[at]
                a1 = words[at + _U(1)]
            else:
                a0 = _U(0)
                a1 = _U(0)
            for j in range(i + _U(2), j1):
                lit = _U(program[j])
                x = (lit >> _U(1)) << _U(1)
                m = _U(0) - (lit & _U(1))
                a0 |= words[x] ^ m
                a1 |= words[x + _U(1)] ^ m
        words[at] = a0
        words[at + _U(1)] = a1
        i = j1


@nb.njit(cache=True)
def _next(
    net: Network,
    split: tuple[np.ndarray, ...],
    words: np.ndarray,
    does: np.ndarray,
    active: np.ndarray,
    made: np.ndarray,
) -> int:
    """The next-state phase in every active game, ``does[b]`` its moves (``does`` nodes, -1: none): the
    moves set in the words, and the gates computed (by :func:`_next_program`'s ``split``, or a sweep).
    Returns how many games moved; the ``does`` nodes set are listed in ``made`` (once per game and role)."""
    scatter_ptr, scatter, targets, program = split
    swept = program.shape[0] == 0
    first = 2 + net.header[H_NBASE]
    if not swept:  # the moves' part of the next state's ORs, from zero
        for e in range(targets.shape[0]):
            words[WORDS * targets[e]] = 0
            words[WORDS * targets[e] + 1] = 0
    games = 0
    listed = 0
    for q in range(WORDS):
        w = active[q]
        while w != 0:
            t = w & (_U(0) - w)
            w ^= t
            b = 64 * q + _lowest(t)
            games += 1
            for r in range(does.shape[1]):
                d = does[b, r]
                if d >= 0:
                    made[listed] = d
                    listed += 1
                    words[WORDS * d + q] |= t
                    if not swept:
                        for e in range(scatter_ptr[d - first], scatter_ptr[d - first + 1]):
                            words[WORDS * scatter[e] + q] |= t
    if swept:
        _sweep(net, words, 2)
    else:
        _run_next(program, words)
    made[listed] = -1
    return games


@nb.njit(cache=True)
def lane_rollouts(net: Network, states: np.ndarray, n: int, rng: np.ndarray, max_steps: int, out: np.ndarray) -> int:
    """Play the first ``n`` (1 to :data:`LANES`) of ``states`` (rows of base bits) to the end at random, in
    place; write each game's goals into ``out[:n]``. Returns the joint moves made, summed over the games."""
    return traced_lane_rollouts(net, states, n, rng, max_steps, out, np.zeros((0, 1, 1), dtype=np.bool_))


@nb.njit(cache=True)
def traced_lane_rollouts(
    net: Network, states: np.ndarray, n: int, rng: np.ndarray, max_steps: int, out: np.ndarray, played: np.ndarray
) -> int:
    """:func:`lane_rollouts`, and where ``played`` has rows (one per game, a column per role, one per move of
    the role: its index among the role's legal entries), each move a game's role made is marked True in its
    row (the rows cleared first). What all-moves-as-first statistics (RAVE) read."""
    trace = played.shape[0] > 0
    if trace and (played.shape[0] < n or played.shape[1] < net.header[H_NROLES]):
        raise ValueError("traced_lane_rollouts: played holds a row per game and a column per role")
    if trace:
        for r in range(net.header[H_NROLES]):
            if played.shape[2] < net.legal_ptr[r + 1] - net.legal_ptr[r]:
                raise ValueError("traced_lane_rollouts: played holds a column per move of each role")
        played[:n] = False
    header = net.header
    nbase = header[H_NBASE]
    nroles = header[H_NROLES]
    if not 1 <= n <= min(LANES, states.shape[0]) or states.shape[1] != nbase or max_steps < 0:
        raise ValueError("lane_rollouts: n from 1 to 128 rows of states, each a state's base bits; max_steps >= 0")
    if out.shape[0] < n or out.shape[1] < nroles:
        raise ValueError("lane_rollouts: out holds a row per game and a column per role")
    term = header[H_TERMINAL]
    lptr = net.legal_ptr
    lnode = net.legal_node
    ldoes = net.legal_does
    nxt = net.next
    width = max(1, header[H_MAXLEGAL])  # (a role's possible moves, the most of any role)
    words = np.zeros(WORDS * header[0], dtype=np.uint64)
    lists = np.empty((LANES, width), dtype=np.int32)
    some = np.empty(width + 1, dtype=np.int32)
    counts = np.zeros(LANES, dtype=np.int64)
    does = np.zeros((LANES, max(nroles, 1)), dtype=np.int64)
    nextw = np.empty(WORDS * nbase, dtype=np.uint64)
    active = np.zeros(WORDS, dtype=np.uint64)
    moves = np.empty(LANES * max(nroles, 1) + 1, dtype=np.int64)
    for q in range(WORDS):
        words[WORDS + q] = _ALL  # node 1: true
        lo = 64 * q
        for i in range(nbase):
            w = _U(0)
            for b in range(lo, min(n, lo + 64)):
                w |= _U(states[b, i]) << _U(b - lo)
            words[WORDS * (2 + i) + q] = w
        k = min(max(n - lo, 0), 64)
        active[q] = _ALL if k == 64 else (_U(1) << _U(k)) - _U(1)
    scatter_ptr, scatter, targets, program = _next_program(net)
    made = 0
    steps = 0
    _sweep(net, words, 0)
    while True:
        alive = _U(0)
        for q in range(WORDS):
            active[q] &= ~words[WORDS * term + q]
            alive |= active[q]
        if alive == 0 or steps >= max_steps:
            break
        # each game's legal moves per role, then one of them at random; a game where a role has none stops
        for r in range(nroles):
            counts[:] = 0
            for q in range(WORDS):
                a = active[q]
                # the entries legal in some game, listed without a branch (most entries are legal in none:
                # the idle role's, the squares without an amazon), then each one's games
                m = 0
                for k in range(lptr[r], lptr[r + 1]):
                    some[m] = k
                    m += (words[_U(WORDS * lnode[k] + q)] & a) != 0
                for e in range(m):
                    k = some[e]
                    w = words[_U(WORDS * lnode[k] + q)] & a
                    while w != 0:
                        t = w & (_U(0) - w)
                        b = 64 * q + _lowest(t)
                        lists[b, counts[b]] = k
                        counts[b] += 1
                        w ^= t
                w = a
                while w != 0:
                    t = w & (_U(0) - w)
                    w ^= t
                    b = 64 * q + _lowest(t)
                    if counts[b] == 0:
                        active[q] &= ~t
                        continue
                    k = lists[b, rng_below(rng, counts[b])]
                    does[b, r] = ldoes[k]
                    if trace:
                        played[b, r, k - lptr[r]] = True
        made += _next(net, (scatter_ptr, scatter, targets, program), words, does, active, moves)
        # (read every next value before writing any: a next node may be a base node)
        for i in range(nbase):
            for q in range(WORDS):
                a = active[q]
                nextw[WORDS * i + q] = (words[WORDS * nxt[i] + q] & a) | (words[WORDS * (2 + i) + q] & ~a)
        for i in range(WORDS * nbase):
            words[WORDS * 2 + i] = nextw[i]
        e = 0
        while moves[e] >= 0:  # the moves unset for the next step
            words[WORDS * moves[e]] = 0
            words[WORDS * moves[e] + 1] = 0
            e += 1
        steps += 1
        _sweep(net, words, 0)
    _sweep(net, words, 1)
    gptr = net.goal_ptr
    gnode = net.goal_node
    gval = net.goal_value
    for b in range(n):
        q = b >> 6
        bit = _U(1) << _U(b & 63)
        for i in range(nbase):
            states[b, i] = 1 if words[WORDS * (2 + i) + q] & bit else 0
        for r in range(nroles):  # the highest true goal value (a role with none: 0)
            best = 0
            for k in range(gptr[r], gptr[r + 1]):
                if words[WORDS * gnode[k] + q] & bit and gval[k] > best:
                    best = gval[k]
            out[b, r] = best
    return made
