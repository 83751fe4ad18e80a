"""Building the propositional network of a ground program (see :mod:`ggp.gdl.network` for its shape)."""

from __future__ import annotations

import numpy as np

from .grounder import GroundProgram
from .network import AND, FALSE, OR, TRUE, Network, Propnet
from .parser import Atom, GDLError, Program, show, strongly_connected

# --- building -----------------------------------------------------------------------------------


class _Builder:
    def __init__(self, gp: GroundProgram, program: Program) -> None:
        self.gp = gp
        self.program = program
        self.sp = program.spelling
        self.where = f"{program.name}: "

    def build(self) -> Propnet:
        gp, sp = self.gp, self.sp
        # every atom gets an int id once; the rest works on ints
        atom_id: dict[Atom, int] = {}
        atoms: list[Atom] = []

        def aid(a: Atom) -> int:
            i = atom_id.get(a)
            if i is None:
                i = atom_id[a] = len(atoms)
                atoms.append(a)
            return i

        heads: list[int] = []
        bodies: list[list[int]] = []  # literals 2 * atom id + negated
        for gr in gp.rules:
            heads.append(aid(gr.head))
            bodies.append([2 * aid(a) for a in gr.pos] + [2 * aid(a) + 1 for a in gr.neg])
        n_atoms = len(atoms)
        inst: list[list[list[int]]] = [[] for _ in range(n_atoms)]
        for h, body in zip(heads, bodies, strict=True):
            inst[h].append(body)
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

        n_gates = len(kind)
        n_nodes = first_gate + n_gates
        # phases: the gates each output needs, by backward reachability
        ptr_arr = np.array(ptr, dtype=np.int64)
        lits_arr = np.array(lits, dtype=np.int64)

        def ancestors(outputs: list[int], exclude: set[int]) -> list[int]:
            seen: set[int] = set()
            stack = [n for n in outputs if n >= first_gate]
            while stack:
                n = stack.pop()
                if n in seen or n in exclude:
                    continue
                seen.add(n)
                g = n - first_gate
                for lit in lits_arr[ptr_arr[g] : ptr_arr[g + 1]]:
                    m = int(lit) >> 1
                    if m >= first_gate and m not in seen:
                        stack.append(m)
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
            *_fanout(n_nodes, first_gate, order, blocks, full_ptr, lits, kind),
        )
        return Propnet(net, roles, base_texts, base_terms, move_texts, n_gates, len(lits))


def _fanout(
    n_nodes: int,
    first_gate: int,
    order: list[int],
    blocks: list[int],
    full_ptr: list[int],
    lits: list[int],
    kinds_of_gates: list[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For incremental evaluation: each node's readers (``2 * gate + negated``) and each gate's cyclic block."""
    used = sorted(set(order))
    readers: list[list[int]] = [[] for _ in range(n_nodes)]
    for g in used:
        lo, hi = full_ptr[g], full_ptr[g + 1]
        for lit in lits[lo:hi]:
            readers[lit >> 1].append(2 * g + (lit & 1))
    fo_ptr = [0]
    fo: list[int] = []
    for n in range(n_nodes):
        if n >= 2:  # the constants never change
            fo.extend(readers[n])
        fo_ptr.append(len(fo))
    cyclic = [-1] * n_nodes
    for b in range(len(blocks) // 3):
        start, end, cyc = blocks[3 * b : 3 * b + 3]
        if cyc:
            for k in range(start, end):
                cyclic[order[k]] = b
    # a gate is true when its count of true literals reaches its threshold: all (AND) or one (OR)
    kinds = [0] * first_gate + kinds_of_gates
    threshold = [full_ptr[n + 1] - full_ptr[n] if kinds[n] == AND else 1 for n in range(first_gate, n_nodes)]
    i32 = np.int32
    return (
        np.array(fo_ptr, dtype=i32),
        np.array(fo, dtype=i32),
        np.array(cyclic, dtype=i32),
        np.array([0] * first_gate + threshold, dtype=i32),
    )


def build_propnet(gp: GroundProgram, program: Program) -> Propnet:
    """The propnet of a ground program."""
    return _Builder(gp, program).build()
