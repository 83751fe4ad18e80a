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
network's integer arrays only (:mod:`ggp.gdl.codegen_ir`), every index checked against the node count
first (the code is never bounds-checked), compiled with llvmlite (numba's own
LLVM) and the object code kept on disk per network, so that a later load of
the sheet costs no compile. The compiled loops of :mod:`ggp.gdl.contexts` call it
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from llvmlite import ir as llir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic

from ..core.cache import cache_folder, write_whole
from .codegen_ir import (
    CodegenError,
    network_ir,
)
from .network import Network

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
            builder.sext(addr, llir.IntType(64)) if addr.type.width < 64 else addr,
            fnty.as_pointer(),
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
