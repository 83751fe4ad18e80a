"""Building the propositional network of a ground program (see :mod:`ggp.gdl.network` for its shape;
:mod:`ggp.gdl.optimise` simplifies its gates)."""

from __future__ import annotations

import numpy as np

from .grounder import GroundProgram
from .memory import no_cyclic_gc
from .network import AND, FALSE, OR, TRUE, Network, Propnet
from .optimise import optimise_network
from .sheet import Atom, GDLError, Program, show
from .validity import strongly_connected

# --- building -----------------------------------------------------------------------------------


class _Builder:
    """One ground program's network, built in stages: atoms numbered, inputs placed, gates made, outputs read,
    the network optimised, its gates ordered into phases, and the arrays assembled."""

    def __init__(self, gp: GroundProgram, program: Program, optimise: bool = True) -> None:
        self.optimise = optimise
        self.gp = gp
        self.program = program
        self.sp = program.spelling
        self.where = f"{program.name}: "

    def build(self) -> Propnet:
        self._number_atoms()
        self._place_inputs()
        self.kind: list[int] = []
        self.ptr: list[int] = [0]
        self.lits: list[int] = []
        self.cyclic_of: list[int] = []  # per gate: 0, or an id of its cyclic component
        self._make_gates()
        legal_ptr, legal_node, legal_does, move_texts = self._legal_moves()
        terminal = self._out_node(("terminal",))
        goal_ptr, goal_node, goal_value = self._goals()
        next_node = [self._out_node(("next", t)) for t in self.base_terms]
        init_rows = self.gp.static.get("init", set())
        init = [1 if (t,) in init_rows else 0 for t in self.base_terms]
        if self.optimise:
            outputs = self._optimised([*legal_node, terminal, *goal_node, *next_node])
            nl, ng = len(legal_node), len(goal_node)
            legal_node, terminal = outputs[:nl], outputs[nl]
            goal_node, next_node = outputs[nl + 1 : nl + 1 + ng], outputs[nl + 1 + ng :]
        kind, ptr, lits, first_gate = self.kind, self.ptr, self.lits, self.first_gate
        n_gates = len(kind)
        n_nodes = first_gate + n_gates
        order, blocks, bounds = self._phases([*legal_node, terminal], goal_node, next_node)
        max_legal = max((legal_ptr[i + 1] - legal_ptr[i] for i in range(len(self.gp.roles))), default=0)
        full_kind = [0] * first_gate + kind
        full_ptr = [0] * (first_gate + 1) + ptr[1:]
        header = [
            n_nodes,
            len(self.base_terms),
            len(self.does_atoms),
            len(self.gp.roles),
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
        return Propnet(net, self.gp.roles, self.base_texts, self.base_terms, move_texts, n_gates, len(lits))

    def _number_atoms(self) -> None:
        # Every atom gets an int id once, the rest works on ints. Ids and each atom's rules go in a canonical
        # order: the grounder's order follows Python's string hashing, which differs from process to process,
        # and node numbers follow atom ids. So a sheet gives the same network in every process, and what is kept
        # per network on disk (the evaluator's choice, the compiled code) is found again. (The atoms are sorted,
        # not the rules: racer4 has 169,000 atoms in 1.2 million rules, 0.2 s against 3.5 s.)
        gp = self.gp
        seen: set[Atom] = set()
        for gr in gp.rules:
            seen.add(gr.head)
            seen.update(gr.pos)
            seen.update(gr.neg)
        atoms: list[Atom] = sorted(seen, key=repr)
        del seen
        atom_id: dict[Atom, int] = {a: i for i, a in enumerate(atoms)}
        inst: list[list[list[int]]] = [[] for _ in range(len(atoms))]
        for gr in gp.rules:
            inst[atom_id[gr.head]].append([2 * atom_id[a] for a in gr.pos] + [2 * atom_id[a] + 1 for a in gr.neg])
        for bodies in inst:
            if len(bodies) > 1:
                bodies.sort()
        self.atoms, self.atom_id, self.inst = atoms, atom_id, inst

    def _place_inputs(self) -> None:
        # The input nodes: constants, then the base propositions, then the moves; atoms that are never
        # derived and are no input can never hold.
        gp, sp, atoms, atom_id, inst = self.gp, self.sp, self.atoms, self.atom_id, self.inst
        n_atoms = len(atoms)
        base_terms = sorted((row[0] for row in gp.dynamic.get("true", ())), key=lambda t: show(t, sp))
        node = [-1] * n_atoms  # atom id -> node, once decided
        for i, t in enumerate(base_terms):
            j = atom_id.get(("true", t))
            if j is not None:
                node[j] = 2 + i
        does_atoms = sorted((a for a in atoms if a[0] == "does"), key=lambda a: show(a, sp))
        first_does = 2 + len(base_terms)
        for i, does_atom in enumerate(does_atoms):
            node[atom_id[does_atom]] = first_does + i
        for j in range(n_atoms):  # inputs that can never hold
            if node[j] < 0 and not inst[j]:
                node[j] = FALSE
        self.base_terms = base_terms
        self.base_texts = [show(t, sp) for t in base_terms]
        self.node = node
        self.does_atoms = does_atoms
        self.first_does = first_does
        self.first_gate = first_does + len(does_atoms)

    def _new_gate(self, k: int, literals: list[int], comp_id: int) -> int:
        self.kind.append(k)
        self.lits.extend(literals)
        self.ptr.append(len(self.lits))
        self.cyclic_of.append(comp_id)
        return self.first_gate + len(self.kind) - 1

    def _simplify(self, body: list[int], pending_ok: bool) -> list[int] | None:
        """The body's literals over nodes, constants folded; None if it can never hold.

        Literals on atoms not decided yet (the same cyclic component) stay as ``-1 - 2 * atom``.
        """
        node = self.node
        out: list[int] = []
        for lit in body:
            n = node[lit >> 1]
            if n < 0:
                assert pending_ok
                out.append(-1 - lit)
                continue
            nl = 2 * n + (lit & 1)
            if nl in (_T_POS, _F_NEG):
                continue
            if nl in (_F_POS, _T_NEG):
                return None
            out.append(nl)
        return out

    def _make_gates(self) -> None:
        # The derived atoms' gates, component by component, each after the components it reads.
        inst = self.inst
        derived = [j for j in range(len(inst)) if inst[j]]
        edges = [sorted({lit >> 1 for body in inst[j] for lit in body if inst[lit >> 1]}) for j in range(len(inst))]
        for ci, comp in enumerate(strongly_connected(derived, dict(enumerate(edges)))):
            first = comp[0]
            if len(comp) > 1 or first in edges[first]:
                self._cyclic_gates(comp, ci + 1)
            else:
                self._acyclic_gate(first)

    def _cyclic_gates(self, comp: list[int], comp_id: int) -> None:
        # A cyclic component's gates. Layout: the AND gates first, then one OR gate per atom of the component.
        pending: dict[int, list[list[int]]] = {}
        for a in comp:
            kept_bodies = []
            for body in self.inst[a]:
                sb = self._simplify(body, True)
                if sb is not None:
                    kept_bodies.append(sb)
            pending[a] = kept_bodies
        n_and = sum(1 for a in comp for body in pending[a] if len(body) != 1)
        base_id = self.first_gate + len(self.kind)
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
            or_inputs[a].append(2 * self._new_gate(AND, resolved, comp_id))
        for a in comp:
            gid = self._new_gate(OR, or_inputs[a], comp_id)
            assert gid == gate_ids[a]
            self.node[a] = gid

    def _acyclic_gate(self, a: int) -> None:
        # An atom outside any cycle: a constant, an alias of another node, an AND of one body, or an OR of bodies.
        node = self.node
        uniq: set[tuple[int, ...]] = set()
        always = False
        for body in self.inst[a]:
            sb = self._simplify(body, False)
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
                node[a] = self._new_gate(AND, list(only), 0)
        else:
            inputs = []
            for body_t in sorted(uniq):
                if len(body_t) == 1:
                    inputs.append(body_t[0])
                else:
                    inputs.append(2 * self._new_gate(AND, list(body_t), 0))
            node[a] = self._new_gate(OR, sorted(set(inputs)), 0)

    def _out_node(self, atom: Atom) -> int:
        j = self.atom_id.get(atom)
        if j is not None:
            return self.node[j]
        if self.gp.holds_statically(atom):
            return TRUE
        return FALSE

    def _legal_moves(self) -> tuple[list[int], list[int], list[int], list[list[str]]]:
        # Each role's possible moves, in the order of their texts: legal node and does node of each.
        gp, sp, node = self.gp, self.sp, self.node
        legal_ptr = [0]
        legal_node: list[int] = []
        legal_does: list[int] = []
        move_texts: list[list[str]] = []
        legal_rows = gp.rows("legal")
        for r in gp.roles:
            entries = []
            for row in legal_rows:
                if row[0] != r:
                    continue
                n = self._out_node(("legal", r, row[1]))
                if n == FALSE:
                    continue
                dj = self.atom_id.get(("does", r, row[1]))
                d = node[dj] if dj is not None and node[dj] >= self.first_does else -1
                entries.append((show(row[1], sp), n, d))
            entries.sort()
            move_texts.append([e[0] for e in entries])
            legal_node.extend(e[1] for e in entries)
            legal_does.extend(e[2] for e in entries)
            legal_ptr.append(len(legal_node))
        return legal_ptr, legal_node, legal_does, move_texts

    def _goals(self) -> tuple[list[int], list[int], list[int]]:
        # Each role's goal nodes and their values (an integer from 0 to 100, or the sheet is refused).
        gp, sp = self.gp, self.sp
        goal_ptr = [0]
        goal_node: list[int] = []
        goal_value: list[int] = []
        goal_rows = gp.rows("goal")
        for r in gp.roles:
            for row in sorted(goal_rows, key=lambda rw: show(rw[1], sp)):
                if row[0] != r:
                    continue
                n = self._out_node(("goal", r, row[1]))
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
        return goal_ptr, goal_node, goal_value

    def _optimised(self, outputs: list[int]) -> list[int]:
        # The gates replaced by :func:`optimise_network`'s; returns the outputs' nodes in the new network.
        kind, ptr, lits = self.kind, self.ptr, self.lits
        gate_lits = [lits[ptr[g] : ptr[g + 1]] for g in range(len(kind))]
        self.kind, gate_lits, self.cyclic_of, outputs = optimise_network(
            self.first_gate, kind, gate_lits, self.cyclic_of, outputs
        )
        self.ptr = [0]
        self.lits = []
        for gl in gate_lits:
            self.lits.extend(gl)
            self.ptr.append(len(self.lits))
        return outputs

    def _phases(
        self, a_outputs: list[int], goal_node: list[int], next_node: list[int]
    ) -> tuple[list[int], list[int], list[int]]:
        # The gates each phase's outputs need, by backward reachability (phase A's are not repeated in G or C),
        # in blocks of a cyclic component each or of acyclic gates; the order, blocks and each phase's bounds.
        kind, ptr, lits, first_gate, cyclic_of = self.kind, self.ptr, self.lits, self.first_gate, self.cyclic_of
        gate_nodes = [[lit >> 1 for lit in lits[ptr[g] : ptr[g + 1]]] for g in range(len(kind))]

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

        phase_a = ancestors(a_outputs, set())
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
        return order, blocks, bounds


#: The literals of the constant nodes: TRUE and FALSE, positive and negated.
_T_POS, _T_NEG, _F_POS, _F_NEG = 2 * TRUE, 2 * TRUE + 1, 2 * FALSE, 2 * FALSE + 1


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
    with no_cyclic_gc():
        return _Builder(gp, program, optimise).build()
