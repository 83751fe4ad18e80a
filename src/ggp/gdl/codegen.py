"""A network compiled to straight-line machine code (the kernel's COMPILED mode).

The sweep evaluator of :mod:`ggp.gdl.evaluate` interprets the network: per
gate it reads the gate's kind and literal range, then loops over literal
indices. Here each phase's gates become machine code with the node indices as
constants: a gate is a few byte loads, ANDs and ORs, and a gate's value lives
in a register until its last reader, so only the values something outside the
phase reads (legal, terminal, goal and next nodes, and gates of phase ``A``
that the other phases read) are stored in ``vals``; the next state is gathered in a
scratch array and copied over the base propositions at the end (a run of base
propositions that copies another run, as one block). Networks up to a size then
go through LLVM's optimiser and SLP vectoriser (:func:`vectorised`). A cyclic block is a loop
to its least fixpoint over its gates' bytes in ``vals``.

One function per network, ``void f(uint8 *vals, int32 *legal, int32 op)``:
``op`` 0 phase ``A`` (legal moves and terminal), 1 phase ``G`` (goals), 3 a
whole step (phase ``C``, the next state written into the base propositions,
then phase ``A``). Phase ``A`` also
lists each role's legal moves in ``legal`` (a count per role, then the moves'
indices per role), so that no loop scans the legal nodes again. The LLVM IR is generated from the
network's integer arrays only, every index checked against the node count
first (the code is never bounds-checked), compiled with llvmlite (numba's own
LLVM) and the object code kept on disk per network, so that a later load of
the sheet costs no compile. The compiled loops of :mod:`ggp.gdl.kernel` call it
through :func:`call_network`, an address kept in the context: they stay shared
by all sheets.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from llvmlite import ir as llir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic

from ..core.cache import cache_folder, write_whole
from .network import H_A0, H_A1, H_C0, H_C1, H_G0, H_G1, H_NBASE, H_NDOES, H_NNODES, H_NROLES, H_TERMINAL, Network

#: The ops of a compiled network's function.
OP_A, OP_G, OP_STEP = 0, 1, 3

#: Networks with more literals than this stay interpreted: compiling takes about 0.1 s per 1,000 literals
#: here (corpus sheets: 0.03 s for 400, 1.1 s for 10,000, 2.4 s for amazons_8x8's 28,000; 23 s for
#: amazonsTorus_10x10's 109,000 in 800 cyclic blocks), paid at a sheet's first use on a machine (then read
#: from the disk cache), and a sheet's load must stay well under 30 s. ``$GGP_COMPILE_LIMIT`` overrides it.
MAX_LITERALS = 40_000
#: Nor are networks with more legal entries (all roles) than this: every legal gate is stored as it is computed
#: and listed at the end of phase A, and the scheduler orders those memory operations at a cost that grows
#: faster than their number (amazons_8x8: 6,080 entries in 28,000 literals compile in 11-18 s on a busy
#: machine, where 23,000 literals with few moves take 1.3 s).
MAX_LEGAL_ENTRIES = 2_000

#: Straight-line code is cut into basic blocks of about this many instructions: instruction selection,
#: scheduling and register allocation cost more than linearly in a block's length (amazons_8x8's 28,000
#: literals: 15 s in one block, 2.5 s in blocks of 2,000), and the code runs as fast.
CHUNK = 2000
#: The legal lists' entries a block holds.
LIST_CHUNK = 300
#: Runs of at least this many next values that copy a run of base propositions are copied as a block.
COPY_RUN = 4


#: Networks up to this many literals are vectorised (:func:`vectorised`).
VECTORISE_LITERALS = 6_500


def vectorised(net: Network) -> bool:
    """Whether the network's code goes through LLVM's optimiser and vectoriser: up to
    :data:`VECTORISE_LITERALS` literals, where it costs at most a few seconds (once per machine: the object
    code is kept on disk)."""
    return len(net.lits) <= VECTORISE_LITERALS


def compile_limit() -> int:
    """The largest network (in literals) compiled to machine code: :data:`MAX_LITERALS`, or ``$GGP_COMPILE_LIMIT``."""
    text = os.environ.get("GGP_COMPILE_LIMIT", "")
    try:
        return int(text) if text else MAX_LITERALS
    except ValueError:
        return MAX_LITERALS


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
    header = net.header
    nbase = int(header[H_NBASE])
    nroles = int(header[H_NROLES])
    first_gate = 2 + nbase + int(header[H_NDOES])
    kind = [int(k) for k in net.kind]
    ptr = [int(p) for p in net.ptr]
    lits = [int(x) for x in net.lits]
    order = [int(g) for g in net.order]
    blocks = [tuple(int(x) for x in net.blocks[3 * b : 3 * b + 3]) for b in range(len(net.blocks) // 3)]
    phases = [range(int(header[h0]), int(header[h1])) for h0, h1 in ((H_A0, H_A1), (H_G0, H_G1), (H_C0, H_C1))]
    phase_of: dict[int, int] = {}
    cyclic: set[int] = set()
    for p, bs in enumerate(phases):
        for b in bs:
            start, end, cyc = blocks[b]
            for k in range(start, end):
                phase_of.setdefault(order[k], p)
                if cyc:
                    cyclic.add(order[k])
    # Gates whose value must be in memory: what the kernel reads, and phase A's gates that G or C read.
    stored = {n for n in [int(header[H_TERMINAL]), *map(int, net.legal_node)] if n >= first_gate}
    goal_stored = {int(n) for n in net.goal_node if n >= first_gate}
    # A next-state or goal node may itself be a gate of phase A (the next value of ``(visible ?x)`` is
    # ``(reach ?x)``, which the terminal test needs too): phases C and G read it from memory.
    stored |= {n for n in [*map(int, net.next), *goal_stored] if n >= first_gate and phase_of.get(n) == 0}
    for p in (1, 2):
        for b in phases[p]:
            start, end, _ = blocks[b]
            for k in range(start, end):
                g = order[k]
                for j in range(ptr[g], ptr[g + 1]):
                    m = lits[j] >> 1
                    if m >= first_gate and phase_of.get(m) == 0:
                        stored.add(m)

    def schedule(p: int, roots: list[int]) -> list[tuple[list[int], bool]]:
        # The phase's gates (a cyclic block as one unit) depth first from its outputs, each after what it
        # reads: any topological order computes the same values, and this one uses a value soon after it is
        # computed: the code runs 1.4-1.75x faster than in node order (wallmaze, bomberman, bomberman2p).
        units: list[tuple[list[int], bool]] = []
        unit_of: dict[int, int] = {}
        for b in phases[p]:
            start, end, cyc = blocks[b]
            members = [order[k] for k in range(start, end)]
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

    roots = [
        [int(header[H_TERMINAL]), *map(int, net.legal_node)],
        [int(n) for n in net.goal_node],
        [int(n) for n in net.next],
    ]

    out: list[str] = [
        f"define void @{name}(ptr noalias nocapture %v, ptr noalias nocapture %l, i32 %op) nounwind {{",
        "entry:",
        f"  %nx = alloca [{max(1, nbase)} x i8]",
        "  %isA = icmp eq i32 %op, 0",
        "  br i1 %isA, label %A, label %notA",
        "notA:",
        "  %isG = icmp eq i32 %op, 1",
        "  br i1 %isG, label %G, label %C",  # (any other op: the whole step)
    ]
    emit = out.append
    tmp = [0]
    last = [0]

    def fresh() -> str:
        tmp[0] += 1
        return f"%t{tmp[0]}"

    def region(
        label: str, p: int, keep: set[int], extra: set[int], sink: dict[int, list[int]] | None = None
    ) -> Callable[[int], str]:
        # The gates of phase p, from block label; returns the reader of node values after it. A gate in
        # ``sink`` is the next value of those base propositions: stored into the scratch ``%nx`` at once.
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

        for b, (gates, cyc) in enumerate(schedule(p, roots[p])):
            if not cyc:
                for g in gates:
                    x = val[g] = gate(g)
                    if g in keep or g in extra:
                        store(g, x)
                    if sink is not None and g in sink:
                        for i in sink.pop(g):
                            put_next(i, x)
                    if tmp[0] - last[0] > CHUNK:  # (LLVM's code generator is superlinear in a block's length)
                        last[0] = tmp[0]
                        emit(f"  br label %{label}S{tmp[0]}")
                        emit(f"{label}S{tmp[0]}:")
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

    read_a = region("A", 0, stored, set())
    # Each role's legal moves listed: legal[r] how many, then at legal[nroles + legal_ptr[r]:] their
    # indices in the role's list, in order. Branch-free: every entry is written at the next free place and
    # the count goes up by its value, tested against 0 (so it rises by 0 or 1 whatever the bytes hold, and
    # no index exceeds nroles + legal_ptr[r + 1] - 1).
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
            if tmp[0] - last[0] > LIST_CHUNK:
                last[0] = tmp[0]
                emit(f"  br label %AL{tmp[0]}")
                emit(f"AL{tmp[0]}:")
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
    emit("  ret void")
    region("G", 1, set(), goal_stored)
    emit("  ret void")
    # Each next value goes into the scratch %nx as soon as it is computed, and the scratch is copied over the
    # base propositions at the end (a next value may be a base proposition the copy overwrites). Holding them
    # all in registers until the stores spilled most of them: a store and a load each, and worse code around.
    nbase_self = [int(n) == 2 + i for i, n in enumerate(net.next)]
    sink: dict[int, list[int]] = {}
    for i, n in enumerate(net.next):
        if not nbase_self[i] and int(n) >= first_gate and int(n) not in cyclic and phase_of.get(int(n)) == 2:
            sink.setdefault(int(n), []).append(i)

    put: set[int] = set()

    def put_next(i: int, x: str) -> None:
        put.add(i)
        t = fresh()
        emit(f"  {t}p = getelementptr inbounds i8, ptr %nx, i64 {i}")
        emit(f"  store i8 {x}, ptr {t}p")

    read_c = region("C", 2, set(), set(), sink)
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
    emit("  br label %A")
    emit("}")
    emit(
        "declare void @llvm.memcpy.p0.p0.i64(ptr noalias nocapture writeonly, ptr noalias nocapture readonly, i64, i1)"
    )
    return "\n".join(out) + "\n"


# --- compiling and caching -----------------------------------------------------------------------

_LOCK = threading.Lock()


@dataclass
class Compiled:
    """A network's machine code, loaded: the function's address, and the engine that holds the code."""

    address: int
    engine: Any
    #: Seconds of processor time the compile took (0 when the code came from the disk cache).
    compile_seconds: float
    #: Whether the object code was read from the disk cache.
    cached: bool
    #: How many contexts use the address now (the engine is freed when none does).
    users: int = 0


#: The loaded networks by digest, while a context uses them.
_LOADED: dict[str, Compiled] = {}
#: Networks no context uses any more, kept loaded (the last :data:`KEEP_RECENT`, oldest first).
_RECENT: dict[str, Compiled] = {}
KEEP_RECENT = 4
#: Digests of networks a context stopped using (appended by finalizers, counted by :func:`_drain`).
_PENDING: list[str] = []
#: Per digest, how its code was last loaded in this process: (compile seconds, read from the disk cache?).
_HISTORY: dict[str, tuple[float, bool]] = {}


def history(packed: np.ndarray) -> tuple[float, bool] | None:
    """How the network's code was last loaded in this process (compile seconds, from the cache?), or None."""
    with _LOCK:
        return _HISTORY.get(network_digest(packed))


def _binding() -> Any:
    # llvmlite's binding layer (imported when first needed: the kernels that never compile do without it)
    import llvmlite.binding as llvm  # type: ignore[import-untyped]

    return llvm


#: x86: vectors of 128 bits. With 512 (AVX-512 hosts), the vectoriser took 5-30x longer on some networks
#: (factoringMediumTurtleBrain: 6.5 s against 1.1 s) for code no faster than with 128.
_VECTOR_WIDTH = "+prefer-128-bit" if platform.machine().lower() in ("x86_64", "amd64") else ""


def _target_machine() -> Any:
    llvm = _binding()
    from numba.core.codegen import initialize_llvm

    initialize_llvm()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=",".join(f for f in (llvm.get_host_cpu_features().flatten(), _VECTOR_WIDTH) if f),
        opt=2,  # (opt=0 compiles 10-20x faster, but its code runs at 0.55-0.7x the speed)
        reloc="pic",
        jit=True,
    )


@functools.lru_cache(maxsize=1)
def _host_key() -> str:
    import llvmlite

    llvm = _binding()
    return f"{llvmlite.__version__}-{llvm.get_host_cpu_name()}-{llvm.get_host_cpu_features().flatten()}"


def network_digest(packed: np.ndarray) -> str:
    """The digest that names a network's compiled code: the packed network, the generator and the host CPU."""
    h = hashlib.sha1(packed.tobytes())
    h.update(f"{_SOURCE}-{_host_key()}".encode())
    return h.hexdigest()[:24]


def _cache_file(digest: str) -> Path:
    return cache_folder() / f"gdl-code-{digest}.o"


_MAGIC = b"ggp-gdl-code\n"
#: This module's own digest: cached code of another version of the generator is not used.
_SOURCE = hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:10]


def _read_cached(path: Path) -> bytes | None:
    # The file: magic, the sha256 of the object code, the object code. Anything else is rebuilt.
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 32:
        return None
    check = data[len(_MAGIC) : len(_MAGIC) + 32]
    obj = data[len(_MAGIC) + 32 :]
    return obj if hashlib.sha256(obj).digest() == check else None


def _write_cached(path: Path, obj: bytes) -> None:
    write_whole(path, _MAGIC + hashlib.sha256(obj).digest() + obj)


def object_code(net: Network, name: str) -> bytes:
    """The network's function compiled to object code for this machine."""
    llvm = _binding()
    tm = _target_machine()
    module = llvm.parse_assembly(network_ir(net, name))
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    module.verify()
    if vectorised(net):
        # LLVM's optimisation pipeline with its SLP vectoriser: runs of next values of the same shape over
        # neighbouring propositions (a board's cells) become vector instructions. Bomberman's step: 452 ns
        # to 133 ns here, against 2-8x the compile time (the vectoriser's cost grows with the network).
        tuning = llvm.create_pipeline_tuning_options(speed_level=2)
        tuning.slp_vectorization = True
        tuning.loop_vectorization = False
        builder = llvm.create_pass_builder(tm, tuning)
        builder.getModulePassManager().run(module, builder)
    return bytes(tm.emit_object(module))


def _engine(obj: bytes, name: str) -> tuple[Any, int]:
    llvm = _binding()
    tm = _target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    address = int(engine.get_function_address(name))
    if address == 0:
        raise CodegenError(f"the compiled network has no function {name}")
    return engine, address


def acquire(net: Network, packed: np.ndarray) -> Compiled:
    """The network's compiled function, loaded (from this process's engines, the disk cache, or compiled now)
    and counted as used, until :func:`hold`'s owner is collected."""
    digest = network_digest(packed)
    name = f"ggp_net_{digest}"
    with _LOCK:
        _drain()
        done = _LOADED.get(digest) or _RECENT.pop(digest, None)
        if done is not None:
            _LOADED[digest] = done
        else:
            path = _cache_file(digest)
            obj = _read_cached(path)
            began = time.thread_time()
            cached = obj is not None
            if obj is None:
                obj = object_code(net, name)
            try:
                engine, address = _engine(obj, name)
            except Exception:
                if not cached:
                    raise
                # a cache file that passed its checksum but does not load: compiled afresh
                cached = False
                obj = object_code(net, name)
                engine, address = _engine(obj, name)
            spent = 0.0 if cached else time.thread_time() - began
            if not cached:
                _write_cached(path, obj)
            done = _LOADED[digest] = Compiled(address, engine, spent, cached)
            if not cached or digest not in _HISTORY:  # (a compile in this process is what ggp info reports)
                _HISTORY[digest] = (spent, cached)
        done.users += 1
        return done


def _drain() -> None:
    # Count the releases the collector reported (under the lock). A finalizer only appends to _PENDING: it may
    # run at any allocation, inside acquire too, where changing the tables would corrupt them.
    while _PENDING:
        digest = _PENDING.pop()
        done = _LOADED.get(digest)
        if done is None:
            continue
        done.users -= 1
        if done.users <= 0:
            del _LOADED[digest]  # the engine (and its code) goes with its last reference, after a while:
            _RECENT[digest] = done  # contexts come and go (a measurement, a search), and a reload costs a link
            while len(_RECENT) > KEEP_RECENT:
                _RECENT.pop(next(iter(_RECENT)))


def hold(owner: object, net: Network, packed: np.ndarray) -> Compiled:
    """:func:`acquire`, released when ``owner`` (the context array that holds the address) is collected."""
    done = acquire(net, packed)
    weakref.finalize(owner, _PENDING.append, network_digest(packed))
    return done


def loaded_count() -> int:
    """How many networks' engines this process holds (used by a context, or kept as recently used)."""
    with _LOCK:
        _drain()
        return len(_LOADED) + len(_RECENT)


# --- the call from compiled code -----------------------------------------------------------------


def _call_network(typingctx: Any, address: Any, vals: Any, legal: Any, op: Any) -> Any:
    """Call the compiled network at ``address`` (an int64) on ``vals`` (a contiguous uint8 array) and ``legal``
    (a contiguous int32 array, for the legal lists of phase A) with ``op``.

    The caller vouches that the address is a network compiled for arrays of these sizes (one value per node;
    roles + legal entries): the context that holds the address was made with them (see
    :func:`ggp.gdl.kernel.context`).
    """
    if not (
        isinstance(address, types.Integer)
        and isinstance(op, types.Integer)
        and isinstance(vals, types.Array)
        and vals.dtype == types.uint8
        and vals.ndim == 1
        and isinstance(legal, types.Array)
        and legal.dtype == types.int32
        and legal.ndim == 1
    ):
        return None
    sig = types.void(address, vals, legal, op)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        addr, arr, lst, code = args
        data = context.make_array(signature.args[1])(context, builder, arr).data
        ldata = context.make_array(signature.args[2])(context, builder, lst).data
        fnty = llir.FunctionType(llir.VoidType(), [data.type, ldata.type, llir.IntType(32)])
        target = builder.inttoptr(
            builder.sext(addr, llir.IntType(64)) if addr.type.width < 64 else addr, fnty.as_pointer()
        )
        width = code.type.width
        if width > 32:
            code = builder.trunc(code, llir.IntType(32))
        elif width < 32:
            code = builder.sext(code, llir.IntType(32))
        builder.call(target, [data, ldata, code])
        return context.get_dummy_value()

    return sig, codegen


#: ``call_network(address, vals, legal, op)`` in compiled code: see :func:`_call_network`.
call_network: Any = intrinsic(_call_network)
