"""Building the propositional network of a ground program (see :mod:`ggp.gdl.network` for its shape)."""

from __future__ import annotations

import heapq

import numpy as np

from .grounder import GroundProgram
from .network import AND, FALSE, OR, TRUE, Network, Propnet
from .sheet import Atom, GDLError, Program, show
from .validity import strongly_connected

# --- building -----------------------------------------------------------------------------------


class _Builder:
    def __init__(self, gp: GroundProgram, program: Program, optimise: bool = True) -> None:
        self.optimise = optimise
        self.gp = gp
        self.program = program
        self.sp = program.spelling
        self.where = f"{program.name}: "

    def build(self) -> Propnet:
        gp, sp = self.gp, self.sp
        # Every atom gets an int id once, the rest works on ints. Ids and each atom's rules go in a canonical
        # order: the grounder's order follows Python's string hashing, which differs from process to process,
        # and node numbers follow atom ids. So a sheet gives the same network in every process, and what is kept
        # per network on disk (the evaluator's choice, the compiled code) is found again. (The atoms are sorted,
        # not the rules: racer4 has 169,000 atoms in 1.2 million rules, 0.2 s against 3.5 s.)
        seen: set[Atom] = set()
        for gr in gp.rules:
            seen.add(gr.head)
            seen.update(gr.pos)
            seen.update(gr.neg)
        atoms: list[Atom] = sorted(seen, key=repr)
        del seen
        atom_id: dict[Atom, int] = {a: i for i, a in enumerate(atoms)}
        n_atoms = len(atoms)
        inst: list[list[list[int]]] = [[] for _ in range(n_atoms)]
        for gr in gp.rules:
            inst[atom_id[gr.head]].append([2 * atom_id[a] for a in gr.pos] + [2 * atom_id[a] + 1 for a in gr.neg])
        for bodies in inst:
            if len(bodies) > 1:
                bodies.sort()
        # inputs
        base_terms = sorted((row[0] for row in gp.dynamic.get("true", ())), key=lambda t: show(t, sp))
        base_texts = [show(t, sp) for t in base_terms]
        node = [-1] * n_atoms  # atom id -> node, once decided
        for i, t in enumerate(base_terms):
            j = atom_id.get(("true", t))
            if j is not None:
                node[j] = 2 + i
        does_atoms = sorted((a for a in atoms if a[0] == "does"), key=lambda a: show(a, sp))
        first_does = 2 + len(base_terms)
        for i, does_atom in enumerate(does_atoms):
            node[atom_id[does_atom]] = first_does + i
        first_gate = first_does + len(does_atoms)
        for j in range(n_atoms):  # inputs that can never hold
            if node[j] < 0 and not inst[j]:
                node[j] = FALSE
        derived = [j for j in range(n_atoms) if inst[j]]
        edges = [sorted({lit >> 1 for body in inst[j] for lit in body if inst[lit >> 1]}) for j in range(n_atoms)]
        comps = strongly_connected(derived, dict(enumerate(edges)))

        kind: list[int] = []
        ptr: list[int] = [0]
        lits: list[int] = []
        cyclic_of: list[int] = []  # per gate: 0, or an id of its cyclic component

        def new_gate(k: int, literals: list[int], comp_id: int) -> int:
            kind.append(k)
            lits.extend(literals)
            ptr.append(len(lits))
            cyclic_of.append(comp_id)
            return first_gate + len(kind) - 1

        T_POS, T_NEG, F_POS, F_NEG = 2 * TRUE, 2 * TRUE + 1, 2 * FALSE, 2 * FALSE + 1

        def simplify(body: list[int], pending_ok: bool) -> list[int] | None:
            """The body's literals over nodes, constants folded; None if it can never hold.

            Literals on atoms not decided yet (the same cyclic component) stay as ``-1 - 2 * atom``.
            """
            out: list[int] = []
            for lit in body:
                n = node[lit >> 1]
                if n < 0:
                    assert pending_ok
                    out.append(-1 - lit)
                    continue
                nl = 2 * n + (lit & 1)
                if nl in (T_POS, F_NEG):
                    continue
                if nl in (F_POS, T_NEG):
                    return None
                out.append(nl)
            return out

        for ci, comp in enumerate(comps):
            first = comp[0]
            cyc = len(comp) > 1 or first in edges[first]
            if cyc:
                comp_id = ci + 1
                pending: dict[int, list[list[int]]] = {}
                for a in comp:
                    kept_bodies = []
                    for body in inst[a]:
                        sb = simplify(body, True)
                        if sb is not None:
                            kept_bodies.append(sb)
                    pending[a] = kept_bodies
                # layout: the AND gates first, then one OR gate per atom of the component
                n_and = sum(1 for a in comp for body in pending[a] if len(body) != 1)
                base_id = first_gate + len(kind)
                gate_ids = {a: base_id + n_and + i for i, a in enumerate(comp)}
                or_inputs: dict[int, list[int]] = {a: [] for a in comp}
                and_gates: list[tuple[int, list[int]]] = []
                for a in comp:
                    for body in pending[a]:
                        resolved = [x if x >= 0 else 2 * gate_ids[(-1 - x) >> 1] + ((-1 - x) & 1) for x in body]
                        if len(resolved) == 1:
                            or_inputs[a].append(resolved[0])
                        else:
                            and_gates.append((a, resolved))
                for a, resolved in and_gates:
                    or_inputs[a].append(2 * new_gate(AND, resolved, comp_id))
                for a in comp:
                    gid = new_gate(OR, or_inputs[a], comp_id)
                    assert gid == gate_ids[a]
                    node[a] = gid
                continue
            a = first
            uniq: set[tuple[int, ...]] = set()
            always = False
            for body in inst[a]:
                sb = simplify(body, False)
                if sb is None:
                    continue
                if not sb:
                    always = True
                    break
                uniq.add(tuple(sorted(set(sb))))
            if always:
                node[a] = TRUE
            elif not uniq:
                node[a] = FALSE
            elif len(uniq) == 1:
                (only,) = uniq
                if len(only) == 1 and only[0] % 2 == 0:
                    node[a] = only[0] >> 1  # an alias
                else:
                    node[a] = new_gate(AND, list(only), 0)
            else:
                inputs = []
                for body_t in sorted(uniq):
                    if len(body_t) == 1:
                        inputs.append(body_t[0])
                    else:
                        inputs.append(2 * new_gate(AND, list(body_t), 0))
                node[a] = new_gate(OR, sorted(set(inputs)), 0)

        def out_node(atom: Atom) -> int:
            j = atom_id.get(atom)
            if j is not None:
                return node[j]
            if gp.holds_statically(atom):
                return TRUE
            return FALSE

        roles = gp.roles
        # legal moves
        legal_ptr = [0]
        legal_node: list[int] = []
        legal_does: list[int] = []
        move_texts: list[list[str]] = []
        legal_rows = gp.rows("legal")
        for r in roles:
            entries = []
            for row in legal_rows:
                if row[0] != r:
                    continue
                n = out_node(("legal", r, row[1]))
                if n == FALSE:
                    continue
                dj = atom_id.get(("does", r, row[1]))
                d = node[dj] if dj is not None and node[dj] >= first_does else -1
                entries.append((show(row[1], sp), n, d))
            entries.sort()
            move_texts.append([e[0] for e in entries])
            legal_node.extend(e[1] for e in entries)
            legal_does.extend(e[2] for e in entries)
            legal_ptr.append(len(legal_node))
        max_legal = max((legal_ptr[i + 1] - legal_ptr[i] for i in range(len(roles))), default=0)
        terminal = out_node(("terminal",))
        # goals
        goal_ptr = [0]
        goal_node: list[int] = []
        goal_value: list[int] = []
        goal_rows = gp.rows("goal")
        for r in roles:
            for row in sorted(goal_rows, key=lambda rw: show(rw[1], sp)):
                if row[0] != r:
                    continue
                n = out_node(("goal", r, row[1]))
                if n == FALSE:
                    continue
                value = row[1]
                if not (isinstance(value, str) and value.isdigit() and 0 <= int(value) <= 100):
                    line = next((g.line for g in gp.rules if g.head == ("goal", r, value)), None)
                    line = line or self.program.defined_at.get("goal")
                    at = f"line {line}: " if line else ""
                    raise GDLError(
                        f"{self.where}{at}goal value {show(value, sp)} of role {sp.get(r, r)} is not an integer "
                        "from 0 to 100",
                        line,
                    )
                goal_node.append(n)
                goal_value.append(int(value))
            goal_ptr.append(len(goal_node))
        next_node = [out_node(("next", t)) for t in base_terms]
        init_rows = gp.static.get("init", set())
        init = [1 if (t,) in init_rows else 0 for t in base_terms]

        if self.optimise:
            outputs = [*legal_node, terminal, *goal_node, *next_node]
            gate_lits = [lits[ptr[g] : ptr[g + 1]] for g in range(len(kind))]
            kind, gate_lits, cyclic_of, outputs = optimise_network(first_gate, kind, gate_lits, cyclic_of, outputs)
            ptr = [0]
            lits = []
            for gl in gate_lits:
                lits.extend(gl)
                ptr.append(len(lits))
            nl, ng = len(legal_node), len(goal_node)
            legal_node, terminal = outputs[:nl], outputs[nl]
            goal_node, next_node = outputs[nl + 1 : nl + 1 + ng], outputs[nl + 1 + ng :]
        n_gates = len(kind)
        n_nodes = first_gate + n_gates
        # phases: the gates each output needs, by backward reachability
        gate_nodes = [[lit >> 1 for lit in lits[ptr[g] : ptr[g + 1]]] for g in range(n_gates)]

        def ancestors(outputs: list[int], exclude: set[int]) -> list[int]:
            seen: set[int] = set()
            stack = [n for n in outputs if n >= first_gate]
            while stack:
                n = stack.pop()
                if n in seen or n in exclude:
                    continue
                seen.add(n)
                stack.extend(m for m in gate_nodes[n - first_gate] if m >= first_gate and m not in seen)
            return sorted(seen)

        phase_a = ancestors([*legal_node, terminal], set())
        set_a = set(phase_a)
        phase_g = ancestors(goal_node, set_a)
        phase_c = ancestors(next_node, set_a)
        order: list[int] = []
        blocks: list[int] = []
        bounds: list[int] = []
        for gates in (phase_a, phase_g, phase_c):
            bounds.append(len(blocks) // 3)
            k = 0
            while k < len(gates):
                cid = cyclic_of[gates[k] - first_gate]
                j = k
                while j < len(gates) and cyclic_of[gates[j] - first_gate] == cid:
                    j += 1
                blocks.extend([len(order), len(order) + (j - k), 1 if cid else 0])
                order.extend(gates[k:j])
                k = j
            bounds.append(len(blocks) // 3)
        full_kind = [0] * first_gate + kind
        full_ptr = [0] * (first_gate + 1) + ptr[1:]
        header = [
            n_nodes,
            len(base_terms),
            len(does_atoms),
            len(roles),
            terminal,
            *bounds,
            max_legal,
        ]
        i32 = np.int32
        fanout = _fanout(n_nodes, first_gate, order, blocks, full_ptr, lits, kind)
        net = Network(
            np.array(header, dtype=i32),
            np.array(full_kind, dtype=i32),
            np.array(full_ptr, dtype=i32),
            np.array(lits, dtype=i32),
            np.array(order, dtype=i32),
            np.array(blocks, dtype=i32),
            np.array(legal_ptr, dtype=i32),
            np.array(legal_node, dtype=i32),
            np.array(legal_does, dtype=i32),
            np.array(goal_ptr, dtype=i32),
            np.array(goal_node, dtype=i32),
            np.array(goal_value, dtype=i32),
            np.array(next_node, dtype=i32),
            np.array(init, dtype=i32),
            *fanout[:4],
            *_watches(n_nodes, legal_ptr, legal_node, next_node),
            *fanout[4:],
        )
        return Propnet(net, roles, base_texts, base_terms, move_texts, n_gates, len(lits))


#: An input of an AND gate read by at least this many gates becomes the gate's guard (see ``Network.guard``):
#: its changes then set only the gates whose counts stand at the threshold (the evaluator's armed lists), and
#: update no count.
GUARD_READERS = 64


def _fanout(
    n_nodes: int,
    first_gate: int,
    order: list[int],
    blocks: list[int],
    full_ptr: list[int],
    lits: list[int],
    kinds_of_gates: list[int],
) -> tuple[np.ndarray, ...]:
    """For incremental evaluation: each node's readers (``4 * gate + 2 * cyclic + negated``), each gate's cyclic
    block and threshold; each gate's guard and each node's guarded gates."""
    cyclic = np.full(n_nodes, -1, dtype=np.int64)
    for b in range(len(blocks) // 3):
        start, end, cyc = blocks[3 * b : 3 * b + 3]
        if cyc:
            cyclic[order[start:end]] = b
    # (in numpy: a Python loop over every literal took 3 s of racer4's load, 3 million literals)
    ptr = np.asarray(full_ptr, dtype=np.int64)
    used = np.unique(np.asarray(order, dtype=np.int64))  # the gates of some phase, in node order
    starts, lens = ptr[used], ptr[used + 1] - ptr[used]
    gate = np.repeat(used, lens)
    at = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
    lit = np.asarray(lits, dtype=np.int64)[at] if at.size else np.zeros(0, dtype=np.int64)
    node = lit >> 1
    entry = 4 * gate + np.where(cyclic[gate] >= 0, 2, 0) + (lit & 1)
    read = node >= 2  # the constants never change
    gate, lit, node, entry = gate[read], lit[read], node[read], entry[read]
    # a gate is true when its count of true literals reaches its threshold: all (AND) or one (OR)
    gates = np.arange(first_gate, n_nodes)
    kinds = np.zeros(n_nodes, dtype=np.int64)
    kinds[first_gate:] = np.asarray(kinds_of_gates, dtype=np.int64)
    threshold = np.zeros(n_nodes, dtype=np.int64)
    threshold[first_gate:] = np.where(kinds[first_gate:] == AND, ptr[gates + 1] - ptr[gates], 1)
    # guards: per acyclic AND gate, its positive input read most widely, if by GUARD_READERS gates or more
    readers = np.bincount(node, minlength=n_nodes)
    can = np.nonzero((kinds[gate] == AND) & (cyclic[gate] < 0) & ((lit & 1) == 0) & (readers[node] >= GUARD_READERS))[0]
    can = can[np.lexsort((node[can], -readers[node[can]], gate[can]))]
    can = can[np.unique(gate[can], return_index=True)[1]]  # the first, most read, per gate
    guard = np.ones(n_nodes, dtype=np.int64)
    guard[gate[can]] = node[can]
    threshold[gate[can]] -= 1
    keep = np.ones(node.size, dtype=bool)
    keep[can] = False
    g_node, g_gate = node[can], gate[can]
    node, entry = node[keep], entry[keep]
    fo = entry[np.argsort(node, kind="stable")]  # per node, its readers in gate order
    fo_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    fo_ptr[1:] = np.cumsum(np.bincount(node, minlength=n_nodes))
    gd_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    gd_ptr[1:] = np.cumsum(np.bincount(g_node, minlength=n_nodes))
    gd = g_gate[np.argsort(g_node, kind="stable")]
    i32 = np.int32
    return (
        fo_ptr.astype(i32),
        fo.astype(i32),
        cyclic.astype(i32),
        threshold.astype(i32),
        guard.astype(i32),
        gd_ptr.astype(i32),
        gd.astype(i32),
    )


def _watches(n_nodes: int, legal_ptr: list[int], legal_node: list[int], next_node: list[int]) -> tuple[np.ndarray, ...]:
    """Per node, the legal entries whose legality it is and the base propositions that watch it; per entry, its role."""
    i32 = np.int32

    def csr(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts = np.bincount(keys, minlength=n_nodes) if keys.size else np.zeros(n_nodes, dtype=np.int64)
        ptr = np.zeros(n_nodes + 1, dtype=i32)
        ptr[1:] = np.cumsum(counts)
        return ptr, values[np.argsort(keys, kind="stable")].astype(i32), counts

    lnode = np.asarray(legal_node, dtype=np.int64)
    lptr, lflat, lcounts = csr(lnode, np.arange(lnode.size))
    role = np.repeat(np.arange(len(legal_ptr) - 1), np.diff(np.asarray(legal_ptr))).astype(i32)
    nxt = np.asarray(next_node, dtype=np.int64)
    bases = np.arange(nxt.size)
    moved = nxt != 2 + bases  # a base proposition watches itself, and its next-state node when that is another
    nptr, nflat, ncounts = csr(np.concatenate([2 + bases, nxt[moved]]), np.concatenate([bases, bases[moved]]))
    watch = ((lcounts > 0) * 1 + (ncounts > 0) * 2).astype(i32)
    return lptr, lflat, role, nptr, nflat, watch


def build_propnet(gp: GroundProgram, program: Program, optimise: bool = True) -> Propnet:
    """The propnet of a ground program (``optimise``: simplified by :func:`optimise_network`)."""
    return _Builder(gp, program, optimise).build()


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
