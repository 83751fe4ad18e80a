"""A rule sheet's game as a kernel: the compiled rules every search and batch loop runs on.

A built-in game's kernel works on a few bytes of state; a GDL game's state is
its base propositions (one byte each, 0 or 1), and its rules are the
propositional network of :mod:`ggp.gdl.network`. The compiled functions of
:mod:`ggp.gdl.contexts`, which :func:`gdl_kernel` gathers into a
:class:`~ggp.core.kernels.Kernel`, give the network the same shape as a
built-in game's rules:

* ``legal(ctx, s, role, out) -> n`` writes role's legal actions into ``out[:n]``;
  an action is the index of the move in the role's list of possible moves
  (:attr:`Propnet.move_texts`), so it means the same move in every state;
* ``apply(ctx, s, joint)`` plays one action per role, in place;
* ``terminal(ctx, s)``, ``goals(ctx, s, out)`` and ``rollout(ctx, s, rng)``.

``ctx`` is a :func:`context`: the network and the values of all its nodes for
the state it last saw, packed into three arrays (a call from Python types each
array it is given, so a context of a few dozen arrays cost 70 us a call). Its mode says how they are kept: differentially (asked
about another state, it propagates only the base propositions that differ, and
a move only the inputs it sets; consecutive states in a playout or a search
path differ in a handful of propositions, so a step costs a small part of a
sweep), by sweeping the network's phases (faster for small networks and for
those that change all over at every step), or by running those sweeps as the
network compiled to straight-line machine code (:mod:`ggp.gdl.codegen`; up to
a size, since compiling costs load time). :func:`fastest_mode` picks one per
sheet by a short measurement when its kernel's first context is made, and
:func:`chosen_mode` keeps the choice on disk, so that it is made once per network. A context is not shared
between threads; each search owns one.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

import numba as nb
import numpy as np

from ..core.cache import cache_folder, write_whole
from ..core.kernels import Kernel, rng_state
from . import aside, codegen
from .contexts import (
    COMPILED,
    DIFFERENTIAL,
    F_ADDR_HI,
    F_ADDR_LO,
    F_MODE,
    MODE_NAMES,
    S_FLAGS,
    SWEEP,
    apply,
    goals,
    legal,
    playout,
    rollout,
    rollout_steps,
    rollouts,
    terminal,
    traced_rollouts,
)
from .differential import (
    DN_ACOUNT,
    DN_APOS,
    DN_ARMED,
    DN_BLOCKS,
    DN_CHANGED,
    DN_CNT,
    DN_COUNT,
    DN_DIRTY,
    DN_DOES,
    DN_IN,
    DN_STACK,
    DN_TCOUNT,
    DN_TFLAG,
    DN_TLIST,
    DN_VALS,
    dn_alloc,
)
from .lanes import LANES, lane_rollouts
from .network import H_NBASE, H_NNODES, H_NROLES, Propnet


def _pack(arrays: list[np.ndarray]) -> np.ndarray:
    # starts of each array (and the end) first, then the arrays
    head = len(arrays) + 1
    starts = [head]
    for arr in arrays:
        starts.append(starts[-1] + len(arr))
    out: np.ndarray = np.zeros(starts[-1], dtype=np.int32)
    out[:head] = starts
    for arr, start in zip(arrays, starts, strict=False):
        out[start : start + len(arr)] = arr
    return out


def packed_network(propnet: Propnet) -> np.ndarray:
    """The network's arrays in one int32 array (made once per propnet)."""
    packed = propnet.__dict__.get("_packed")
    if packed is None:
        packed = propnet.__dict__["_packed"] = _pack([np.asarray(a, dtype=np.int32) for a in propnet.net])
    return packed


def context(propnet: Propnet, mode: int = DIFFERENTIAL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fresh evaluation context for ``propnet``, evaluating by ``mode`` (:data:`SWEEP`, :data:`DIFFERENTIAL`
    or :data:`COMPILED`: the network compiled now, or read from the disk cache).

    (the packed network, the packed int32 state, the packed uint8 state): the network, the
    differential state (see :func:`ggp.gdl.differential.dn_alloc`; a sweep uses its values), flags,
    the joint move's input nodes, goal counts and next-state scratch.
    """
    if mode not in MODE_NAMES:
        raise ValueError(
            f"a GDL kernel context evaluates by sweep ({SWEEP}), differentially ({DIFFERENTIAL}) or compiled ({COMPILED})"
        )
    net = propnet.net
    header = net.header
    nbase = int(header[H_NBASE])
    nroles = int(header[H_NROLES])
    dn = dn_alloc(net, 0)
    flags = np.zeros(5, dtype=np.int32)
    flags[F_MODE] = mode
    ints = [dn[DN_CNT], dn[DN_STACK], dn[DN_DIRTY], dn[DN_BLOCKS], dn[DN_COUNT], dn[DN_TLIST], dn[DN_TCOUNT]]
    ints += [dn[DN_CHANGED], dn[DN_DOES], flags, np.full(nroles, -1, dtype=np.int32), np.zeros(nroles, dtype=np.int32)]
    uints = [dn[DN_VALS], dn[DN_IN], dn[DN_TFLAG], np.zeros(nbase, dtype=np.uint8)]
    ustarts = np.cumsum([0] + [len(a) for a in uints]).astype(np.int32)
    packed = packed_network(propnet)
    legal_list = np.zeros(nroles + int(net.legal_ptr[nroles]), dtype=np.int32)
    ints_packed = _pack([*ints, ustarts, legal_list, dn[DN_ARMED], dn[DN_ACOUNT], dn[DN_APOS]])
    if mode == COMPILED:
        # The generated code indexes the values with the network's node numbers, and the legal lists with
        # roles and legal entries, unchecked: this context hands it exactly those sizes (and the code was
        # generated for this network).
        if len(dn[DN_VALS]) != int(header[H_NNODES]) or len(legal_list) != nroles + int(net.legal_ptr[nroles]):
            raise ValueError("a compiled network's context holds one value per node and a legal list per role")
        # the engine that holds the code stays loaded while this context's int32 array lives
        address = codegen.hold(ints_packed, net, packed).address
        at = int(ints_packed[S_FLAGS])
        ints_packed[at + F_ADDR_LO] = np.int64(address & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        ints_packed[at + F_ADDR_HI] = np.int32(address >> 32)
    return packed, ints_packed, np.concatenate(uints)


def compilable(propnet: Propnet) -> bool:
    """Whether the network is small enough to compile to machine code (:func:`ggp.gdl.codegen.compile_limit`
    literals and :data:`ggp.gdl.codegen.MAX_LEGAL_ENTRIES` legal entries: compile time grows with them, and
    is part of a sheet's first use)."""
    net = propnet.net
    return len(net.lits) <= codegen.compile_limit() and len(net.legal_node) <= codegen.MAX_LEGAL_ENTRIES


#: The compiled sweep is measured only where the differential evaluator is less than this many times as fast
#: as the interpreted sweep: compiling makes a sweep 7-19x faster (wallmaze 18.6x, bomberman2p 10.5x,
#: connectFour 13.1x, knightThrough 7.3x, sheepAndWolf 17.2x), where the differential evaluator leads the
#: interpreted sweep by 2-4x, so where it leads by more than this, the compile (seconds, on a large network)
#: would buy nothing. (At 4, a faster differential evaluator took wallmaze's compiled code away from it.)
COMPILE_IF_DIFFERENTIAL_BELOW = 12.0


def _compiled_context(propnet: Propnet) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    # A failure to compile costs the speed, not the game: the interpreters are exact.
    try:
        return context(propnet, COMPILED)
    except Exception as exc:  # (whatever LLVM raises)
        warnings.warn(f"the rule sheet's network did not compile ({exc}); it is interpreted", stacklevel=3)
        return None


def _time_modes(propnet: Propnet, contexts: Mapping[int, tuple[np.ndarray, ...]], budget: float) -> dict[int, float]:
    # Processor seconds per transition of each context's evaluator, playing the same random games from the
    # start, in rounds of doubling length until about ``budget`` seconds are spent.
    init = np.asarray(propnet.net.init, dtype=np.uint8)
    for ctx in contexts.values():
        # (outside the clock: the first call in a process whose numba cache is cold compiles the loop, seconds
        # that, counted, made the sweep look slow, the compiled code unmeasured and the choice differential)
        rollout_steps(ctx, init.copy(), rng_state(0), 1)
    steps = 16
    best = {mode: float("inf") for mode in contexts}
    spent = 0.0
    while True:
        for mode, ctx in contexts.items():
            s = init.copy()
            began = time.process_time()
            done = 0
            rng = rng_state(1)
            while done < steps:
                made = rollout_steps(ctx, s, rng, steps - done)
                if made == 0:  # the game ended (or cannot go on): play it again
                    if s.tobytes() == init.tobytes():
                        break
                    s[:] = init
                done += made
            elapsed = time.process_time() - began
            spent += elapsed
            best[mode] = min(best[mode], elapsed / max(done, 1))
        if spent >= budget or steps >= 1 << 16:
            return best
        steps *= 2


def _interpreted(propnet: Propnet, budget: float) -> tuple[dict[int, tuple[np.ndarray, ...]], dict[int, float]]:
    contexts: dict[int, tuple[np.ndarray, ...]] = {
        SWEEP: context(propnet, SWEEP),
        DIFFERENTIAL: context(propnet, DIFFERENTIAL),
    }
    return contexts, _time_modes(propnet, contexts, budget)


def _worth_compiling(propnet: Propnet, best: Mapping[int, float]) -> bool:
    return compilable(propnet) and best[SWEEP] < COMPILE_IF_DIFFERENTIAL_BELOW * best[DIFFERENTIAL]


def fastest_mode(propnet: Propnet, budget: float = 0.05) -> int:
    """:data:`SWEEP`, :data:`DIFFERENTIAL` or :data:`COMPILED`, whichever plays random games from the start
    faster here.

    Differential evaluation wins when a step changes a small part of the network; a small network, or one
    where most gates change every step (a step counter read by every rule), is faster swept, and a sweep is
    faster compiled than interpreted. The interpreters are measured first; the network is compiled and
    measured too when it is small enough (:func:`compilable`) and the differential evaluator does not lead by
    :data:`COMPILE_IF_DIFFERENTIAL_BELOW` or more. All modes play the same games for the same generator, so
    the timing compares equal work; about ``budget`` seconds of processor time per round (processor time, so
    that other processes on a busy machine do not decide it), plus the compile.
    """
    contexts, best = _interpreted(propnet, budget)
    if _worth_compiling(propnet, best):
        compiled = _compiled_context(propnet)
        if compiled is not None:
            # all three timed again together: figures from two moments of a shared machine (another process
            # starting beside this one) once chose the differential evaluator at a third of the compiled speed
            best = _time_modes(propnet, {**contexts, COMPILED: compiled}, budget)
    return min(best, key=lambda mode: best[mode])


#: The version of the kernel's code (this module, its compiled rules and the batch playouts) in the names of what
#: it keeps on disk: a new version measures again.
_DIGEST = hashlib.sha1(
    b"".join(Path(__file__).with_name(name).read_bytes() for name in ("kernel.py", "contexts.py", "lanes.py"))
).hexdigest()[:10]


def _mode_file(propnet: Propnet) -> Path:
    # one file per network and version of this module, in ggp's cache folder
    digest = hashlib.sha1(packed_network(propnet).tobytes()).hexdigest()[:20]
    # A process with numba's bounds checks on (make test, for the tests of compiled code) runs the interpreters several times slower
    # than the compiled network's code: its choice is its own, or it would stay with the user's later runs.
    checked = "-boundscheck" if getattr(nb.config, "BOUNDSCHECK", None) else ""
    return cache_folder() / f"gdl-mode3-{digest}-{_DIGEST}{checked}"  # (mode3: the choice among three evaluators)


def chosen_mode(propnet: Propnet) -> int:
    """:func:`fastest_mode` for ``propnet``, measured once per network and kept in ggp's cache folder
    (``$GGP_CACHE``, else ``~/.cache/ggp``): a later process, or another load of the same sheet, reads the
    choice instead of measuring both evaluators again. A cache that cannot be read or written is measured
    around (the choice is only ever a matter of speed)."""
    return _choose(propnet)[0]


def _choose(propnet: Propnet) -> tuple[int, bool]:
    # (the mode, and whether it is the network's final choice: False while a child compiles it aside)
    kept = recorded_mode(propnet)
    if kept is not None:
        return kept, True
    if aside.aside():
        # (the choice is written by the child, or here if the network is not worth compiling)
        _, best = _interpreted(propnet, 0.05)
        mode = min(best, key=lambda m: best[m])
        if _worth_compiling(propnet, best):
            aside.start(propnet, str(_mode_file(propnet)))
            return mode, False
    else:
        mode = fastest_mode(propnet)
    write_whole(_mode_file(propnet), str(mode).encode("ascii"))
    return mode, True


def recorded_mode(propnet: Propnet) -> int | None:
    """The evaluator chosen for ``propnet`` and kept in ggp's cache folder, if it is there (see :func:`chosen_mode`)."""
    try:
        text = _mode_file(propnet).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if text in (str(SWEEP), str(DIFFERENTIAL)) or (text == str(COMPILED) and compilable(propnet)):
        return int(text)
    return None


#: Rollouts are played in batches (:mod:`ggp.gdl.lanes`) where a batch plays a game's step at least this many
#: times faster than one game at a time does, and a whole batch from the start takes at most
#: BATCH_CALL_SECONDS: a search's clock is kept between calls (an agent keeps back 10% of its clock and 30 ms).
BATCH_IF_FASTER = 1.5
BATCH_CALL_SECONDS = 0.03


def _time_lanes(propnet: Propnet, budget: float) -> tuple[float, float]:
    # Processor seconds per game step of a batch of LANES games from the start, in rounds of doubling length
    # until about ``budget`` seconds are spent (as _time_modes times one game at a time); and the seconds of
    # the whole batch, played to the end (inf: not over within the budget).
    net = propnet.net
    init = np.asarray(net.init, dtype=np.uint8)
    out = np.zeros((LANES, int(net.header[H_NROLES])), dtype=np.int64)
    lane_rollouts(net, init[None, :].copy(), 1, rng_state(0), 1, out)  # (a cold cache compiles: not timed)
    steps = 4
    best = float("inf")
    spent = 0.0
    while True:
        states = np.tile(init, (LANES, 1))
        began = time.process_time()
        made = lane_rollouts(net, states, LANES, rng_state(1), steps, out)
        elapsed = time.process_time() - began
        spent += elapsed
        best = min(best, elapsed / max(made, 1))
        if made < LANES * steps:  # every game has ended
            return best, elapsed
        if spent >= budget or steps >= 1 << 16:
            return best, float("inf")
        steps *= 2


def batch_pays(propnet: Propnet, mode: int, budget: float = 0.05) -> bool:
    """Whether a batch of :data:`~ggp.gdl.lanes.LANES` bit-parallel rollouts plays a step of each game
    :data:`BATCH_IF_FASTER` times faster than evaluator ``mode`` plays one game's, from the start, and plays
    its games to the end within :data:`BATCH_CALL_SECONDS`.

    A sweep of the whole network is shared by the batch: large networks whose steps change little of them
    (the differential evaluator's best case) may still be faster one game at a time.
    """
    one = _time_modes(propnet, {mode: context(propnet, mode)}, budget)[mode]
    per_step, whole = _time_lanes(propnet, max(budget, 2 * BATCH_CALL_SECONDS))
    return per_step * BATCH_IF_FASTER <= one and whole <= BATCH_CALL_SECONDS


def chosen_batch(propnet: Propnet, mode: int) -> int:
    """:data:`~ggp.gdl.lanes.LANES` where :func:`batch_pays` for ``propnet``, else 1; measured once per network
    and kept beside :func:`chosen_mode`'s choice."""
    modes = _mode_file(propnet)
    path = modes.with_name(modes.name.replace("gdl-mode3-", "gdl-batch-"))
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if text in ("1", str(LANES)):
        return int(text)
    batch = LANES if batch_pays(propnet, mode) else 1
    write_whole(path, str(batch).encode("ascii"))
    return batch


def gdl_kernel(propnet: Propnet, mode: int | None = None) -> Kernel:
    """The kernel of a rule sheet's game: the functions of :mod:`ggp.gdl.contexts`, with ``propnet`` in every context.

    Actions of role r are indices into ``propnet.move_texts[r]``. Every sheet
    with the same number of roles shares one set of compiled loops. ``mode``
    says how contexts evaluate the network (None: :func:`chosen_mode`, measured once per network
    and kept on disk, read when the first context is made).
    """
    # The measurement runs when the first context is made, not when the sheet loads: a fresh
    # process would otherwise load the compiled rollout from numba's cache (most of a second)
    # for every sheet it merely reads.
    chosen = [] if mode is None else [mode]
    provisional: list[int] = []

    def evaluator() -> int:
        if not chosen:
            if provisional:
                # chosen while the network compiles aside (:mod:`ggp.gdl.aside`): a later context takes the
                # compiled code once the child has written the choice
                kept = recorded_mode(propnet)
                if kept is None:
                    return provisional[0]
                chosen.append(kept)
            else:
                got, final = _choose(propnet)
                (chosen if final else provisional).append(got)
                if not final:
                    return got
        return chosen[0]

    def make_context() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return context(propnet, evaluator())

    batch: list[int] = []
    provisional_batch: list[int] = []

    def rollout_batch() -> int:
        if not batch:
            mode = evaluator()
            if not chosen:  # measured against a provisional evaluator: kept in memory, not on disk
                if not provisional_batch:
                    provisional_batch.append(LANES if batch_pays(propnet, mode) else 1)
                return provisional_batch[0]
            batch.append(chosen_batch(propnet, mode))
        return batch[0]

    header = propnet.net.header
    nroles = int(header[H_NROLES])
    lptr = propnet.net.legal_ptr
    width = max([int(lptr[r + 1] - lptr[r]) for r in range(nroles)] + [1])
    namespace = {
        "_tag": f"gdl{nroles}",
        "_digest": _DIGEST,
        "kernel_legal": legal,
        "kernel_apply": apply,
        "kernel_terminal": terminal,
        "kernel_goals": goals,
        "kernel_rollout": rollout,
        "kernel_playout": playout,
        "kernel_rollouts": rollouts,
        "kernel_traced_rollouts": traced_rollouts,
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
        make_context=make_context,
        check=lambda s: _check(propnet, s),
        rollout_batch=rollout_batch,
    )


def compile_report(propnet: Propnet) -> str:
    """How the network's machine code came to this process: compiled (in how long) or read from the disk cache."""
    got = codegen.history(packed_network(propnet))
    if got is None:
        return "not compiled in this process"
    seconds, cached = got
    return "object code read from the cache" if cached else f"compiled in {seconds:.2f} s"


def evaluation_mode(kernel: Kernel) -> str:
    """How a rule sheet's kernel evaluates its network: "sweep", "differential" or "compiled"."""
    i = kernel.context()[1]
    return MODE_NAMES[int(i[i[S_FLAGS] + F_MODE])]


def _check(propnet: Propnet, s: np.ndarray) -> None:
    from ..core.errors import StateFormatError

    nbase = int(propnet.net.header[H_NBASE])
    if s.shape != (nbase,) or s.dtype != np.uint8 or (nbase and int(s.max()) > 1):
        raise StateFormatError(f"a state array of this rule sheet is {nbase} uint8 entries, each 0 or 1")
