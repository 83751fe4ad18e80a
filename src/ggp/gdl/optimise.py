"""Optimising a propositional network's gates: the same outputs from fewer gates and fewer levels.

:mod:`ggp.gdl.propnet` builds a ground program's network and hands its gates
to :func:`optimise_network` (unless told not to); the evaluators run the result.
"""

from __future__ import annotations

import heapq

from .network import AND, FALSE, TRUE

# --- optimising -----------------------------------------------------------------------------------
# A ground program's network is full of gates that do nothing useful: rules whose body folds to one
# literal (a NOT, an alias), the same conjunction written by several rules, chains of ANDs inside
# ANDs. Every gate removed is work saved at every step by both evaluators, and every level removed
# is a propagation step saved by the differential one. Gates are lists of literals ``2 * node +
# negated`` over nodes numbered from ``first_gate``; gates of a cyclic block (``cyclic_of`` not 0)
# are kept as they are, with their inputs renamed.


#: Networks with more literals than this (once dead gates are dropped) are not simplified further: the
#: passes are Python, a few seconds for hex's 232,000 literals (which they do not shrink), while on the
#: seed games' networks (up to 57,000) they pay at most a few percent in speed.
MAX_OPTIMISE_LITERALS = 100_000


def optimise_network(
    first_gate: int,
    kind: list[int],
    gate_lits: list[list[int]],
    cyclic_of: list[int],
    outputs: list[int],
    flatten: bool = True,
    factor: bool = True,
) -> tuple[list[int], list[list[int]], list[int], list[int]]:
    """An equivalent, smaller network: the same ``outputs`` (nodes, renumbered), gates in topological order.

    Constants are folded (and a gate reading a literal and its negation), single-literal gates
    become the literal they read, equal gates (De Morgan duals too) become one, a gate read only
    by a gate of its own kind is merged into its reader (``flatten``; an OR read negated by an AND
    merges as its negated literals), and gates no output needs are dropped (only that, past
    :data:`MAX_OPTIMISE_LITERALS`).
    """
    # (dead gates first: large sheets have many, and every pass costs Python time per literal)
    kind, gate_lits, cyclic_of, outputs = _reachable(first_gate, kind, gate_lits, cyclic_of, outputs)
    if sum(map(len, gate_lits)) > MAX_OPTIMISE_LITERALS:
        return kind, gate_lits, cyclic_of, outputs
    kind, gate_lits, cyclic_of, outputs = _canonical(first_gate, kind, gate_lits, cyclic_of, outputs)
    if flatten:
        flat = _flatten(first_gate, kind, gate_lits, cyclic_of, outputs)
        if flat is not gate_lits:
            kind, gate_lits, cyclic_of, outputs = _canonical(first_gate, kind, flat, cyclic_of, outputs)
    if factor:
        factored = _factor(first_gate, kind, gate_lits, cyclic_of, outputs)
        if factored is not None:
            kind, gate_lits, cyclic_of, outputs = _canonical(first_gate, *factored)
    return _reachable(first_gate, kind, gate_lits, cyclic_of, outputs)


#: A literal read by at least this many gates of one kind is factored: paired with the literal it most
#: often shares a gate with, the pair becomes a gate of its own (see :func:`_factor`). (Factoring literals
#: read less widely made some networks slower: breakthroughSmall's differential evaluation by 10-15%.)
FACTOR_READERS = 128
#: ... while that pair is shared by at least this many gates.
FACTOR_SHARED = 4


def _factor(
    first_gate: int, kind: list[int], gate_lits: list[list[int]], cyclic_of: list[int], outputs: list[int]
) -> tuple[list[int], list[list[int]], list[int], list[int]] | None:
    """Shared pairs of literals taken out of the gates that read them into gates of their own (None: no pair
    is shared enough).

    A literal read by many gates costs the differential evaluator a counter update per reader each time it
    changes: Amazons' ``(true (turn white move))`` is read by all 1,456 of white's queen moves, each with the
    queen's square, and it changes at every step. Paired with the square, it is read by 64 gates, of which
    the 4 under white's queens change. Greedy, most-read literal first (as in the kernel extraction of logic
    synthesis); the gates come back in topological order, each pair just before its first reader.
    """
    n = len(kind)
    lits = [set(gl) for gl in gate_lits]
    readers: dict[tuple[int, int], set[int]] = {}  # (kind, literal) -> gates of that kind reading it
    for g in range(n):
        if cyclic_of[g] or len(lits[g]) < 3:
            continue
        for lit in lits[g]:
            readers.setdefault((kind[g], lit), set()).add(g)
    pairs: list[tuple[int, int, int]] = []  # (kind, literal, literal), node first_gate + n + index
    queue = sorted(
        (key for key, gs in readers.items() if len(gs) >= FACTOR_READERS), key=lambda key: -len(readers[key])
    )
    for key in queue:
        k, lit = key
        # How many of lit's readers each other literal shares; a heap of (-count, literal) entries, of which an
        # entry whose count has dropped since is stale (counts only drop), so each pair costs a few heap steps.
        shared: dict[int, int] = {}
        for g in readers[key]:
            for m in lits[g]:
                if m != lit:
                    shared[m] = shared.get(m, 0) + 1
        heap = [(-c, m) for m, c in shared.items() if c >= FACTOR_SHARED]
        heapq.heapify(heap)
        while heap:
            count, other = heapq.heappop(heap)
            if -count != shared[other]:
                if shared[other] >= FACTOR_SHARED:
                    heapq.heappush(heap, (-shared[other], other))
                continue
            x = 2 * (first_gate + n + len(pairs))
            pairs.append((k, lit, other))
            both = readers[key] & readers[(k, other)]
            for g in both:
                lits[g] -= {lit, other}
                for m in lits[g]:
                    shared[m] -= 1
                lits[g].add(x)
            readers[(k, x)] = both
            readers[key] -= both
            readers[(k, other)] -= both
            shared[other] = 0
    if not pairs:
        return None
    # Topological order: each pair gate just before the first gate that reads it (its inputs come before it).
    placed: list[int] = []  # old node numbers (pairs: first_gate + n + index), in the new order
    seen: set[int] = set()

    def place(root: int) -> None:
        # Depth first, a node after the pairs it reads; with a stack of its own, since pairs nest (a pair
        # may read an earlier pair) as deep as a gate has literals.
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if ready:
                placed.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            if node >= first_gate + n:
                _, a, b = pairs[node - first_gate - n]
                stack.extend((lit >> 1, False) for lit in (b, a) if (lit >> 1) >= first_gate + n)

    for g in range(n):
        for lit in lits[g]:
            if (lit >> 1) >= first_gate + n:
                place(lit >> 1)
        place(first_gate + g)
    new_id = {node: first_gate + i for i, node in enumerate(placed)}

    def rename(lit: int) -> int:
        node = lit >> 1
        return lit if node < first_gate else 2 * new_id[node] + (lit & 1)

    new_kind: list[int] = []
    new_lits: list[list[int]] = []
    new_cyc: list[int] = []
    for node in placed:
        if node >= first_gate + n:
            k, a, b = pairs[node - first_gate - n]
            new_kind.append(k)
            new_lits.append(sorted([rename(a), rename(b)]))
            new_cyc.append(0)
        else:
            g = node - first_gate
            new_kind.append(kind[g])
            # (a cyclic block keeps its literals' order, as every pass does)
            new_lits.append([rename(lit) for lit in gate_lits[g]] if cyclic_of[g] else sorted(map(rename, lits[g])))
            new_cyc.append(cyclic_of[g])
    return new_kind, new_lits, new_cyc, [rename(2 * node) >> 1 for node in outputs]


def _canonical(
    first_gate: int, kind: list[int], gate_lits: list[list[int]], cyclic_of: list[int], outputs: list[int]
) -> tuple[list[int], list[list[int]], list[int], list[int]]:
    n = len(kind)
    # rep: per old node, the literal over new nodes that has its value
    rep = [2 * i for i in range(first_gate)] + [0] * n
    new_kind: list[int] = []
    new_lits: list[list[int]] = []
    new_cyc: list[int] = []
    table: dict[tuple[int, ...], tuple[int, int]] = {}  # AND form -> (node, kind)

    def gate(k: int, literals: list[int], comp: int) -> int:
        new_kind.append(k)
        new_lits.append(literals)
        new_cyc.append(comp)
        return first_gate + len(new_kind) - 1

    g = 0
    while g < n:
        if cyclic_of[g]:
            h = g
            while h < n and cyclic_of[h] == cyclic_of[g]:
                h += 1
            base = first_gate + len(new_kind)
            for j in range(g, h):
                rep[first_gate + j] = 2 * (base + j - g)
            for j in range(g, h):
                gate(kind[j], [rep[lit >> 1] ^ (lit & 1) for lit in gate_lits[j]], cyclic_of[j])
            g = h
            continue
        k = kind[g]
        seen: set[int] = set()
        value = -1  # a constant value, once known
        for lit in gate_lits[g]:
            m = rep[lit >> 1] ^ (lit & 1)
            if m < 2 * 2:  # a literal on the constant nodes FALSE (0) or TRUE (1)
                truth = (m >> 1) ^ (m & 1)
                if truth == (0 if k == AND else 1):
                    value = truth
                    break
                continue
            if m ^ 1 in seen:  # x and not x
                value = 0 if k == AND else 1
                break
            seen.add(m)
        if value < 0 and not seen:
            value = 1 if k == AND else 0
        if value >= 0:
            rep[first_gate + g] = 2 * (TRUE if value else FALSE)
        elif len(seen) == 1:
            (rep[first_gate + g],) = seen
        else:
            # an OR is the negation of the AND of the negated literals: one table for both kinds
            key = tuple(sorted(seen)) if k == AND else tuple(sorted(m ^ 1 for m in seen))
            found = table.get(key)
            if found is None:
                found = table[key] = (gate(k, sorted(seen), 0), k)
            rep[first_gate + g] = 2 * found[0] + (found[1] != k)
        g += 1
    out: list[int] = []
    for node in outputs:
        m = rep[node]
        if m & 1:  # an output must be a node: a NOT gate for a negated literal
            key = (m,)
            found = table.get(key)
            if found is None:
                found = table[key] = (gate(AND, [m], 0), AND)
            out.append(found[0])
        else:
            out.append(m >> 1)
    return new_kind, new_lits, new_cyc, out


def _flatten(
    first_gate: int, kind: list[int], gate_lits: list[list[int]], cyclic_of: list[int], outputs: list[int]
) -> list[list[int]]:
    """Gates merged into their only reader of the same kind (``gate_lits`` itself if none is)."""
    readers = [0] * (first_gate + len(kind))
    for gl in gate_lits:
        for lit in gl:
            readers[lit >> 1] += 1
    for node in outputs:
        readers[node] += 1
    flat: list[list[int]] = []
    merged = False
    for g, gl in enumerate(gate_lits):
        if cyclic_of[g]:
            flat.append(gl)
            continue
        k = kind[g]
        out: list[int] = []
        for lit in gl:
            c = (lit >> 1) - first_gate
            if c >= 0 and readers[lit >> 1] == 1 and not cyclic_of[c]:
                if kind[c] == k and not lit & 1:
                    out.extend(flat[c])
                    merged = True
                    continue
                if kind[c] != k and lit & 1:  # not (a or b) = not a and not b, and its dual
                    out.extend(m ^ 1 for m in flat[c])
                    merged = True
                    continue
            out.append(lit)
        flat.append(out)
    return flat if merged else gate_lits


def _reachable(
    first_gate: int, kind: list[int], gate_lits: list[list[int]], cyclic_of: list[int], outputs: list[int]
) -> tuple[list[int], list[list[int]], list[int], list[int]]:
    keep = [False] * len(kind)
    stack = [node - first_gate for node in outputs if node >= first_gate]
    while stack:
        g = stack.pop()
        if keep[g]:
            continue
        keep[g] = True
        stack.extend(lit // 2 - first_gate for lit in gate_lits[g] if lit // 2 >= first_gate)
    if all(keep):  # nothing to drop: the numbers stay (a large network is often all live)
        return kind, gate_lits, cyclic_of, outputs
    new_id = list(range(first_gate)) + [0] * len(kind)
    count = 0
    for g in range(len(kind)):
        if keep[g]:
            new_id[first_gate + g] = first_gate + count
            count += 1
    kept = [g for g in range(len(kind)) if keep[g]]
    return (
        [kind[g] for g in kept],
        [[2 * new_id[lit >> 1] + (lit & 1) for lit in gate_lits[g]] for g in kept],
        [cyclic_of[g] for g in kept],
        [new_id[node] for node in outputs],
    )
