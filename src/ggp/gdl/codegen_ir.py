"""The LLVM IR of a network compiled to straight-line code (see :mod:`ggp.gdl.codegen`, which compiles it).

:func:`network_ir` writes one function per network from its integer arrays
alone, every index checked against the node count first (the code is never
bounds-checked), in stages: the network's layout (:class:`_Layout`), the gates
whose values must be stored, then per phase the gates in a schedule that uses
each value soon after it is computed (:meth:`_Emitter.region`), phase ``A``'s
legal lists, and phase ``C``'s next state, gathered in a scratch array and
copied over the base propositions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .network import (
    H_A0,
    H_A1,
    H_C0,
    H_C1,
    H_G0,
    H_G1,
    H_NBASE,
    H_NDOES,
    H_NNODES,
    H_NROLES,
    H_TERMINAL,
    Network,
)

#: Straight-line code is cut into basic blocks of about this many instructions: instruction selection,
#: scheduling and register allocation cost more than linearly in a block's length (amazons_8x8's 28,000
#: literals: 15 s in one block, 2.5 s in blocks of 2,000), and the code runs as fast.
CHUNK = 2000
#: The legal lists' entries a block holds.
LIST_CHUNK = 300
#: Runs of at least this many next values that copy a run of base propositions are copied as a block.
COPY_RUN = 4


class CodegenError(ValueError):
    """The network's arrays are not what the generator can prove safe (an index out of range)."""


def _check(net: Network) -> None:
    # Every index the generated code will hold is checked here: the code has no bounds checks.
    header = net.header
    nnodes = int(header[H_NNODES])
    nbase = int(header[H_NBASE])
    ndoes = int(header[H_NDOES])
    first_gate = 2 + nbase + ndoes
    if not (0 <= first_gate <= nnodes) or nnodes >= 1 << 31:
        raise CodegenError("header: node counts out of range")
    if len(net.kind) < nnodes or len(net.ptr) < nnodes + 1:
        raise CodegenError("kind and ptr hold an entry per node")
    lits = np.asarray(net.lits, dtype=np.int64)
    if lits.size and (lits.min() < 0 or (lits >> 1).max() >= nnodes):
        raise CodegenError("a literal names no node")
    order = np.asarray(net.order, dtype=np.int64)
    if order.size and (order.min() < first_gate or order.max() >= nnodes):
        raise CodegenError("the evaluation order names a node that is not a gate")
    ptr = np.asarray(net.ptr, dtype=np.int64)
    if order.size and (ptr[order].min() < 0 or ptr[order + 1].max() > lits.size or (ptr[order + 1] < ptr[order]).any()):
        raise CodegenError("a gate's literals lie outside the literal array")
    blocks = np.asarray(net.blocks, dtype=np.int64).reshape(-1, 3)
    if blocks.size and (
        blocks[:, 0].min() < 0 or blocks[:, 1].max() > order.size or (blocks[:, 1] < blocks[:, 0]).any()
    ):
        raise CodegenError("a block lies outside the evaluation order")
    for h0, h1 in ((H_A0, H_A1), (H_G0, H_G1), (H_C0, H_C1)):
        if not (0 <= int(header[h0]) <= int(header[h1]) <= len(blocks)):
            raise CodegenError("a phase's blocks lie outside the block array")
    nroles = int(header[H_NROLES])
    lptr = np.asarray(net.legal_ptr, dtype=np.int64)
    if nroles < 0 or len(lptr) < nroles + 1 or (np.diff(lptr[: nroles + 1]) < 0).any() or (nroles and lptr[0] != 0):
        raise CodegenError("legal_ptr holds a start per role and the end")
    if len(net.legal_node) < (lptr[nroles] if nroles else 0):
        raise CodegenError("legal_node holds an entry per legal entry")
    outputs = [int(header[H_TERMINAL]), *net.legal_node, *net.goal_node, *net.next]
    if len(net.next) != nbase or any(not (0 <= n < nnodes) for n in outputs):
        raise CodegenError("an output names no node")


def network_ir(net: Network, name: str) -> str:
    """The LLVM IR of the network's function ``name`` (see the module's description), from its integers alone."""
    _check(net)
    lay = _Layout(net)
    header = net.header
    roots = [
        [int(header[H_TERMINAL]), *map(int, net.legal_node)],
        [int(n) for n in net.goal_node],
        [int(n) for n in net.next],
    ]
    stored, goal_stored = _stored_gates(net, lay)
    em = _Emitter(lay, roots)
    em.emit_all(
        f"define void @{name}(ptr noalias nocapture %v, ptr noalias nocapture %l, i32 %op) nounwind {{",
        "entry:",
        f"  %nx = alloca [{max(1, lay.nbase)} x i8]",
        "  %isA = icmp eq i32 %op, 0",
        "  br i1 %isA, label %A, label %notA",
        "notA:",
        "  %isG = icmp eq i32 %op, 1",
        "  br i1 %isG, label %G, label %C",  # (any other op: the whole step)
    )
    read_a = em.region("A", 0, stored, set())
    _emit_legal_lists(em, net, read_a)
    em.emit("  ret void")
    em.region("G", 1, set(), goal_stored)
    em.emit("  ret void")
    _emit_next_state(em, net)
    em.emit("  br label %A")
    em.emit("}")
    em.emit(
        "declare void @llvm.memcpy.p0.p0.i64(ptr noalias nocapture writeonly, ptr noalias nocapture readonly, i64, i1)"
    )
    return "\n".join(em.out) + "\n"


class _Layout:
    """The network's gates as the generated code sees them: its arrays as ints, each phase's blocks, the phase
    each gate is first computed in, and the gates of cyclic blocks."""

    def __init__(self, net: Network) -> None:
        header = net.header
        self.nbase = int(header[H_NBASE])
        self.nroles = int(header[H_NROLES])
        self.first_gate = 2 + self.nbase + int(header[H_NDOES])
        self.kind = [int(k) for k in net.kind]
        self.ptr = [int(p) for p in net.ptr]
        self.lits = [int(x) for x in net.lits]
        self.order = [int(g) for g in net.order]
        self.blocks = [tuple(int(x) for x in net.blocks[3 * b : 3 * b + 3]) for b in range(len(net.blocks) // 3)]
        self.phases = [range(int(header[h0]), int(header[h1])) for h0, h1 in ((H_A0, H_A1), (H_G0, H_G1), (H_C0, H_C1))]
        self.phase_of: dict[int, int] = {}
        self.cyclic: set[int] = set()
        for p, bs in enumerate(self.phases):
            for b in bs:
                start, end, cyc = self.blocks[b]
                for k in range(start, end):
                    self.phase_of.setdefault(self.order[k], p)
                    if cyc:
                        self.cyclic.add(self.order[k])

    def schedule(self, p: int, roots: list[int]) -> list[tuple[list[int], bool]]:
        """Phase ``p``'s gates (a cyclic block as one unit) depth first from its outputs ``roots``, each after
        what it reads."""
        # Any topological order computes the same values, and this one uses a value soon after it is computed:
        # the code runs 1.4-1.75x faster than in node order (wallmaze, bomberman, bomberman2p).
        lits, ptr = self.lits, self.ptr
        units: list[tuple[list[int], bool]] = []
        unit_of: dict[int, int] = {}
        for b in self.phases[p]:
            start, end, cyc = self.blocks[b]
            members = [self.order[k] for k in range(start, end)]
            for part in [members] if cyc else [[g] for g in members]:
                for g in part:
                    unit_of[g] = len(units)
                units.append((part, bool(cyc)))

        def reads(u: int) -> list[int]:
            found = {unit_of.get(lits[j] >> 1, u) for g in units[u][0] for j in range(ptr[g], ptr[g + 1])}
            found.discard(u)
            return sorted(found)

        entered = [False] * len(units)
        out: list[tuple[list[int], bool]] = []
        starts = [unit_of[n] for n in roots if n in unit_of] + list(range(len(units)))
        for root in starts:
            if entered[root]:
                continue
            entered[root] = True
            stack = [(root, reads(root), 0)]
            while stack:
                u, deps, i = stack[-1]
                while i < len(deps) and entered[deps[i]]:
                    i += 1  # (entered and not placed would be a cycle between units: there is none)
                if i < len(deps):
                    d = deps[i]
                    stack[-1] = (u, deps, i + 1)
                    entered[d] = True
                    stack.append((d, reads(d), 0))
                    continue
                stack.pop()
                out.append(units[u])
        return out


def _stored_gates(net: Network, lay: _Layout) -> tuple[set[int], set[int]]:
    """Gates whose value must be in memory: what the kernel reads, and phase A's gates that G or C read (the
    first set); the goal gates (the second)."""
    header = net.header
    first_gate, phase_of = lay.first_gate, lay.phase_of
    stored = {n for n in [int(header[H_TERMINAL]), *map(int, net.legal_node)] if n >= first_gate}
    goal_stored = {int(n) for n in net.goal_node if n >= first_gate}
    # A next-state or goal node may itself be a gate of phase A (the next value of ``(visible ?x)`` is
    # ``(reach ?x)``, which the terminal test needs too): phases C and G read it from memory.
    stored |= {n for n in [*map(int, net.next), *goal_stored] if n >= first_gate and phase_of.get(n) == 0}
    for p in (1, 2):
        for b in lay.phases[p]:
            start, end, _ = lay.blocks[b]
            for k in range(start, end):
                g = lay.order[k]
                for j in range(lay.ptr[g], lay.ptr[g + 1]):
                    m = lay.lits[j] >> 1
                    if m >= first_gate and phase_of.get(m) == 0:
                        stored.add(m)
    return stored, goal_stored


class _Emitter:
    """The function's lines as they are written, and the counter that names its temporaries."""

    def __init__(self, lay: _Layout, roots: list[list[int]]) -> None:
        self.lay = lay
        self.roots = roots
        self.out: list[str] = []
        self.emit = self.out.append
        self.tmp = 0
        self.last = 0  # the temporary where the current basic block began (see CHUNK)

    def emit_all(self, *lines: str) -> None:
        self.out.extend(lines)

    def fresh(self) -> str:
        self.tmp += 1
        return f"%t{self.tmp}"

    def region(
        self,
        label: str,
        p: int,
        keep: set[int],
        extra: set[int],
        sink: dict[int, list[int]] | None = None,
        put_next: Callable[[int, str], None] | None = None,
    ) -> Callable[[int], str]:
        """The gates of phase ``p``, from block ``label``; returns the reader of node values after it. A gate in
        ``sink`` is the next value of those base propositions: handed to ``put_next`` at once."""
        emit, fresh = self.emit, self.fresh
        kind, ptr, lits = self.lay.kind, self.lay.ptr, self.lay.lits
        emit(f"{label}:")
        val: dict[int, str] = {0: "0", 1: "1"}
        inside: set[int] = set()  # the gates of the cyclic block being looped over: always read from memory

        def load(n: int) -> str:
            t = fresh()
            emit(f"  {t}p = getelementptr inbounds i8, ptr %v, i64 {n}")
            emit(f"  {t} = load i8, ptr {t}p")
            return t

        def read(n: int) -> str:
            if n in inside:
                return load(n)
            v = val.get(n)
            if v is None:
                v = val[n] = load(n)
            return v

        def fold(op: str, values: list[str], unit: str) -> str:
            zero = "1" if unit == "0" else "0"  # the absorbing value
            acc = unit
            for x in values:
                if x == zero:
                    return zero
                if x == unit:
                    continue
                if acc == unit:
                    acc = x
                else:
                    t = fresh()
                    emit(f"  {t} = {op} i8 {acc}, {x}")
                    acc = t
            return acc

        def negate(x: str) -> str:
            if x in ("0", "1"):
                return "1" if x == "0" else "0"
            t = fresh()
            emit(f"  {t} = xor i8 {x}, 1")
            return t

        def gate(g: int) -> str:
            pos = [read(lits[j] >> 1) for j in range(ptr[g], ptr[g + 1]) if not lits[j] & 1]
            neg = [read(lits[j] >> 1) for j in range(ptr[g], ptr[g + 1]) if lits[j] & 1]
            if kind[g] == 0:  # AND: every positive literal, no negative one
                return fold("and", [fold("and", pos, "1"), negate(fold("or", neg, "0"))], "1")
            return fold("or", [fold("or", pos, "0"), negate(fold("and", neg, "1"))], "0")

        def store(n: int, x: str) -> None:
            t = fresh()
            emit(f"  {t}p = getelementptr inbounds i8, ptr %v, i64 {n}")
            emit(f"  store i8 {x}, ptr {t}p")

        for b, (gates, cyc) in enumerate(self.lay.schedule(p, self.roots[p])):
            if not cyc:
                for g in gates:
                    x = val[g] = gate(g)
                    if g in keep or g in extra:
                        store(g, x)
                    if sink is not None and put_next is not None and g in sink:
                        for i in sink.pop(g):
                            put_next(i, x)
                    if self.tmp - self.last > CHUNK:  # (LLVM's code generator is superlinear in a block's length)
                        self.last = self.tmp
                        emit(f"  br label %{label}S{self.tmp}")
                        emit(f"{label}S{self.tmp}:")
                continue
            # a positive cycle: from all false, evaluate the block's gates in order until none changes
            for g in gates:
                store(g, "0")
            loop = f"{label}L{b}"
            emit(f"  br label %{loop}")
            emit(f"{loop}:")
            inside.update(gates)
            changed = "false"
            for g in gates:
                x = gate(g)
                old = load(g)
                store(g, x)
                c = fresh()
                emit(f"  {c} = icmp ne i8 {old}, {x}")
                if changed != "false":
                    t = fresh()
                    emit(f"  {t} = or i1 {changed}, {c}")
                    c = t
                changed = c
            inside.difference_update(gates)
            emit(f"  br i1 {changed}, label %{loop}, label %{loop}x")
            emit(f"{loop}x:")
        return read


def _emit_legal_lists(em: _Emitter, net: Network, read_a: Callable[[int], str]) -> None:
    """Each role's legal moves listed: legal[r] how many, then at legal[nroles + legal_ptr[r]:] their indices in
    the role's list, in order."""
    # Branch-free: every entry is written at the next free place and the count goes up by its value, tested
    # against 0 (so it rises by 0 or 1 whatever the bytes hold, and no index exceeds nroles + legal_ptr[r + 1] - 1).
    emit, fresh = em.emit, em.fresh
    nroles, first_gate = em.lay.nroles, em.lay.first_gate
    lptr = [int(x) for x in net.legal_ptr]

    def legal_value(n: int) -> str:
        # A legal node that is a gate is read back from memory (stored when computed): its register would
        # otherwise live from its gate to here, and thousands of such (amazons) made the scheduler take 15 s.
        if n < first_gate:
            return read_a(n)
        t = fresh()
        emit(f"  {t}p = getelementptr inbounds i8, ptr %v, i64 {n}")
        emit(f"  {t} = load i8, ptr {t}p")
        return t

    for r in range(nroles):
        cnt = "0"
        for k in range(lptr[r], lptr[r + 1]):
            if em.tmp - em.last > LIST_CHUNK:
                em.last = em.tmp
                emit(f"  br label %AL{em.tmp}")
                emit(f"AL{em.tmp}:")
            t = fresh()
            at = f"{t}i"
            emit(f"  {at} = add i64 {cnt}, {nroles + lptr[r]}")
            emit(f"  {t}p = getelementptr inbounds i32, ptr %l, i64 {at}")
            emit(f"  store i32 {k - lptr[r]}, ptr {t}p")
            emit(f"  {t}b = icmp ne i8 {legal_value(int(net.legal_node[k]))}, 0")
            emit(f"  {t}z = zext i1 {t}b to i64")
            emit(f"  {t} = add i64 {cnt}, {t}z")
            cnt = t
        t = fresh()
        emit(f"  {t}c = trunc i64 {cnt} to i32")
        emit(f"  {t}p = getelementptr inbounds i32, ptr %l, i64 {r}")
        emit(f"  store i32 {t}c, ptr {t}p")


def _emit_next_state(em: _Emitter, net: Network) -> None:
    """Phase C, from block ``C``, and the next state copied over the base propositions."""
    # Each next value goes into the scratch %nx as soon as it is computed, and the scratch is copied over the
    # base propositions at the end (a next value may be a base proposition the copy overwrites). Holding them
    # all in registers until the stores spilled most of them: a store and a load each, and worse code around.
    emit, fresh = em.emit, em.fresh
    nbase, first_gate = em.lay.nbase, em.lay.first_gate
    nbase_self = [int(n) == 2 + i for i, n in enumerate(net.next)]
    sink: dict[int, list[int]] = {}
    for i, n in enumerate(net.next):
        if (
            not nbase_self[i]
            and int(n) >= first_gate
            and int(n) not in em.lay.cyclic
            and em.lay.phase_of.get(int(n)) == 2
        ):
            sink.setdefault(int(n), []).append(i)

    put: set[int] = set()

    def put_next(i: int, x: str) -> None:
        put.add(i)
        t = fresh()
        emit(f"  {t}p = getelementptr inbounds i8, ptr %nx, i64 {i}")
        emit(f"  store i8 {x}, ptr {t}p")

    read_c = em.region("C", 2, set(), set(), sink, put_next)
    # Runs of base propositions whose next values are a run of other base propositions (a bomb's fuse: each
    # cell's timer moves down one, over the whole board) are copied as one block.
    nexts = [int(n) for n in net.next]
    i = 0
    while i < nbase:
        j = i
        while j < nbase and 2 <= nexts[j] < 2 + nbase and not nbase_self[j] and nexts[j] == nexts[i] + j - i:
            j += 1
        if j - i >= COPY_RUN:
            t = fresh()
            emit(f"  {t}s = getelementptr inbounds i8, ptr %v, i64 {nexts[i]}")
            emit(f"  {t}d = getelementptr inbounds i8, ptr %nx, i64 {i}")
            emit(f"  call void @llvm.memcpy.p0.p0.i64(ptr {t}d, ptr {t}s, i64 {j - i}, i1 false)")
            put.update(range(i, j))
        i = max(j, i + 1)
    for i, n in enumerate(net.next):  # the rest: base and input propositions, phase A's and cyclic gates
        if not nbase_self[i] and i not in put:
            put_next(i, read_c(int(n)))
    # the copy, run by run of base propositions that are not their own next value
    i = 0
    while i < nbase:
        if nbase_self[i]:
            i += 1
            continue
        j = i
        while j < nbase and not nbase_self[j]:
            j += 1
        t = fresh()
        emit(f"  {t}s = getelementptr inbounds i8, ptr %nx, i64 {i}")
        emit(f"  {t}d = getelementptr inbounds i8, ptr %v, i64 {2 + i}")
        emit(f"  call void @llvm.memcpy.p0.p0.i64(ptr {t}d, ptr {t}s, i64 {j - i}, i1 false)")
        i = j
