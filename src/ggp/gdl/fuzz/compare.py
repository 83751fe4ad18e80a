"""Every engine of a rule sheet asked the same questions along random walks, the top-down prover the reference.

The engines: the prover (:mod:`ggp.gdl.prover`, the reference), and the grounded propnet: its network
unoptimised (``raw``) and optimised (``pn``) evaluated by the interpreted sweep with every goal value read, the
kernel in each of its modes (``sweep``, ``differential``, ``compiled``), and the bit-parallel lanes
(:mod:`ggp.gdl.lanes`) on a batch of the walks' states. At each state: every role's legal moves (as a set of
texts), the terminal flag, the goal values (each role's set of true values; the kernels give the highest),
and, for the joint move the walk takes, the next state (as a set of fact texts). The walk follows the
prover's answers, so one engine's mistake is reported where it happens and the walk goes on.

An engine that raises where the prover answers is a disagreement too (``crash``). A sheet the parser rejects
is ``invalid``; one that a bound stops (grounding too large, a proof past its limits) is ``skipped``.
"""

from __future__ import annotations

import contextlib
import random
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.kernels import rng_state
from ..differential_step import dn_playouts
from ..evaluate import pn_load, pn_next, pn_playouts, sweep_phase
from ..grounder import GroundingTooLarge, ground
from ..kernel import COMPILED, DIFFERENTIAL, SWEEP, compilable, gdl_kernel
from ..lanes import LANES, WORDS, _next, _next_program, _sweep
from ..network import H_NBASE, H_NNODES, H_NROLES, H_TERMINAL, Propnet
from ..parser import parse_program
from ..propnet import build_propnet
from ..prover import _Context
from ..prover_game import ProverGame
from ..sheet import GDLError, GDLLimitError, bounded, show

#: The kernel modes compared, by name.
KERNEL_MODES = {"sweep": SWEEP, "differential": DIFFERENTIAL, "compiled": COMPILED}
#: Every engine compared with the prover.
ENGINES = ("raw", "pn", "sweep", "differential", "compiled", "lanes", "playouts")


@dataclass(frozen=True)
class Disagreement:
    """One answer of one engine that is not the prover's."""

    engine: str
    question: str  # init, legal, terminal, goals, next, crash
    detail: str
    walk: int = -1
    step: int = -1

    @property
    def key(self) -> tuple[str, str]:
        return (self.engine, self.question)

    def __str__(self) -> str:
        where = f" (walk {self.walk}, step {self.step})" if self.walk >= 0 else ""
        if self.walk == -2:
            where = f" (asked again out of order: state {self.step} of the walks)"
        return f"{self.engine}: {self.question}{where}: {self.detail}"


@dataclass
class Outcome:
    """What comparing the engines on one sheet found."""

    status: str  # agreed, disagreed, invalid, skipped
    disagreements: list[Disagreement] = field(default_factory=list)
    states: int = 0
    reason: str = ""
    engines: tuple[str, ...] = ()

    @property
    def keys(self) -> set[tuple[str, str]]:
        return {d.key for d in self.disagreements}


class _Abort(Exception):
    pass


@dataclass
class _Ref:
    """The prover's answers at one state."""

    facts: frozenset[str]
    legal: list[list[str]]
    terminal: bool
    goals: list[list[int]]
    joint: list[str] | None = None
    next_facts: frozenset[str] | None = None


class _Propnet:
    """The grounded engines over one network (``raw`` or optimised)."""

    def __init__(self, propnet: Propnet) -> None:
        self.propnet = propnet
        self.net = propnet.net
        self.base_index = {t: i for i, t in enumerate(propnet.base_texts)}
        self.nroles = int(self.net.header[H_NROLES])
        lptr = self.net.legal_ptr
        self.moves = [{t: k for k, t in enumerate(propnet.move_texts[r])} for r in range(self.nroles)]
        self.lptr = [int(x) for x in lptr]

    def bits(self, facts: frozenset[str]) -> np.ndarray | None:
        out = np.zeros(len(self.base_index), dtype=np.uint8)
        for f in facts:
            i = self.base_index.get(f)
            if i is None:
                return None
            out[i] = 1
        return out

    def facts(self, bits: np.ndarray) -> frozenset[str]:
        texts = self.propnet.base_texts
        return frozenset(texts[i] for i in np.flatnonzero(bits))

    def legal_texts(self, r: int, actions: Any) -> list[str]:
        return sorted(self.propnet.move_texts[r][int(a)] for a in actions)

    def joint_actions(self, joint: list[str]) -> list[int] | None:
        out = []
        for r, text in enumerate(joint):
            k = self.moves[r].get(text)
            if k is None:
                return None
            out.append(k)
        return out


def _short(x: Any, limit: int = 300) -> str:
    text = str(x)
    return text if len(text) <= limit else text[:limit] + "..."


def _diff_sets(want: frozenset[str], got: frozenset[str]) -> str:
    missing, extra = sorted(want - got), sorted(got - want)
    return _short(f"missing {missing}, extra {extra}")


class Comparer:
    """Compare the engines on one sheet (see the module)."""

    def __init__(
        self,
        text: str,
        *,
        seed: int = 0,
        walks: int = 3,
        max_steps: int = 12,
        engines: tuple[str, ...] = ENGINES,
        seconds: float = 20.0,
        kernel_factory: Callable[[Propnet, int], Any] | None = None,
    ) -> None:
        self.text = text
        self.seed = seed
        self.walks = walks
        self.max_steps = max_steps
        self.engines = engines
        self.seconds = seconds
        self.kernel_factory = kernel_factory or gdl_kernel
        self.found: list[Disagreement] = []
        self.seen: set[tuple[str, str]] = set()

    def report(self, engine: str, question: str, detail: str, walk: int = -1, step: int = -1) -> None:
        # one report per engine and question: the first is where it went wrong
        if (engine, question) in self.seen:
            return
        self.seen.add((engine, question))
        self.found.append(Disagreement(engine, question, detail, walk, step))

    def run(self) -> Outcome:
        try:
            program = parse_program(self.text, "fuzz")
        except GDLError as exc:
            return Outcome("invalid", reason=_short(exc))
        except RecursionError:
            return Outcome("invalid", reason="the parser recursed too deeply")
        # Processor time of this thread, not wall time: a sheet's outcome must not depend on how busy the
        # machine is (compiling a sheet's network on a loaded machine took longer than the budget in wall time).
        try:
            with bounded(cpu_deadline=self._deadline()):
                return self._run(program)
        except GDLLimitError as exc:
            return Outcome("skipped", reason=_short(exc))
        except _Abort as exc:
            return Outcome("skipped", reason=str(exc))

    # --- the engines ------------------------------------------------------------------------------
    def _load(self, program: Any) -> tuple[ProverGame, dict[str, _Propnet]]:
        prover = ProverGame(self.text, "fuzz", program=program)
        grounded = ground(program)
        nets = {}
        if "raw" in self.engines:
            nets["raw"] = _Propnet(build_propnet(grounded, program, optimise=False))
        nets["pn"] = _Propnet(build_propnet(grounded, program))
        return prover, nets

    def _run(self, program: Any) -> Outcome:
        try:
            prover, nets = self._load(program)
        except (GroundingTooLarge, GDLLimitError) as exc:
            return Outcome("skipped", reason=_short(exc))
        except GDLError as exc:
            # the propnet refuses the sheet (a goal value that is not a number, say): the prover may still play it
            return Outcome("skipped", reason=_short(exc))
        pn = nets["pn"]
        kernels: dict[str, tuple[Any, Any]] = {}
        for name, mode in KERNEL_MODES.items():
            if name not in self.engines or (mode == COMPILED and not compilable(pn.propnet)):
                continue
            try:
                kernel = self.kernel_factory(pn.propnet, mode)
                kernels[name] = (kernel, kernel.context())
            except Exception as exc:  # (a crash is a finding)
                self.report(name, "crash", _crash(exc))
        engines = tuple(e for e in self.engines if e in nets or e in kernels or e in ("lanes", "playouts"))
        try:
            init = self._prover_init(prover)
        except GDLError as exc:
            return Outcome("skipped", reason=f"the prover: {_short(exc)}")
        for name, net in nets.items():
            got = net.facts(np.asarray(net.net.init, dtype=np.uint8))
            if got != init:
                self.report(name, "init", _diff_sets(init, got))
        rng = random.Random(self.seed)
        refs: list[_Ref] = []
        states = 0
        for w in range(self.walks):
            facts = init
            for step in range(self.max_steps + 1):
                if time.thread_time() > self._deadline():
                    raise GDLLimitError("the walks took longer than allowed")
                try:
                    ref = self._prover_state(prover, facts)
                except RecursionError:
                    raise _Abort("the prover recursed too deeply") from None
                states += 1
                over = ref.terminal or any(not m for m in ref.legal) or step == self.max_steps
                if not over:
                    ref.joint = [rng.choice(m) for m in ref.legal]
                    ref.next_facts = self._prover_next(prover, facts, ref.joint)
                refs.append(ref)
                self._check_state(ref, nets, kernels, w, step)
                if over:
                    break
                assert ref.next_facts is not None
                facts = ref.next_facts
        # the kernels' contexts asked again about the walks' states in another order (a search's jumps)
        order = list(range(len(refs)))
        rng.shuffle(order)
        for j in order[: max(4, len(order) // 2)]:
            for name, (kernel, ctx) in kernels.items():
                try:
                    self._check_kernel(name, pn, kernel, ctx, refs[j], -2, j)
                except Exception as exc:
                    self.report(name, "crash", _crash(exc), -2, j)
        if "playouts" in self.engines:
            try:
                self._check_playouts(pn)
            except Exception as exc:
                self.report("playouts", "crash", _crash(exc))
        if "lanes" in self.engines:
            try:
                self._check_lanes(pn, refs)
            except Exception as exc:
                self.report("lanes", "crash", _crash(exc))
        status = "disagreed" if self.found else "agreed"
        return Outcome(status, list(self.found), states, engines=engines)

    def _deadline(self) -> float:
        if not hasattr(self, "_until"):
            self._until = time.thread_time() + self.seconds
        return self._until

    # --- the prover -------------------------------------------------------------------------------
    def _prover_init(self, prover: ProverGame) -> frozenset[str]:
        sp = prover.program.spelling
        self.sp = sp
        return frozenset(show(f, sp) for f in prover.initial_state().facts)

    def _prover_state(self, prover: ProverGame, facts: frozenset[str]) -> _Ref:
        sp = self.sp
        terms = self._terms(facts)
        ctx = _Context(terms, None)
        legal = []
        self.move_terms: list[dict[str, Any]] = []
        for role in prover.program.roles:
            found = {show(a[2], sp): a[2] for a in prover.prover.ask(("legal", role, "?m"), ctx)}
            self.move_terms.append(found)
            legal.append(sorted(found))
        terminal = bool(prover.prover.ask(("terminal",), ctx))
        goals = []
        for role in prover.program.roles:
            values = {int(str(a[2])) for a in prover.prover.ask(("goal", role, "?v"), ctx) if str(a[2]).isdigit()}
            goals.append(sorted(values))
        self._ctx_terms = terms
        return _Ref(facts, legal, terminal, goals)

    def _terms(self, facts: frozenset[str]) -> frozenset[Any]:
        from ...core.kif import parse_term
        from ..prover_game import _lower

        cache = self.__dict__.setdefault("_term_cache", {})
        out = []
        for f in facts:
            t = cache.get(f)
            if t is None:
                t = cache[f] = _lower(parse_term(f))
            out.append(t)
        return frozenset(out)

    def _prover_next(self, prover: ProverGame, facts: frozenset[str], joint: list[str]) -> frozenset[str]:
        does = {role: self.move_terms[r][joint[r]] for r, role in enumerate(prover.program.roles)}
        answers = prover.prover.ask(("next", "?x"), _Context(self._ctx_terms, does))
        return frozenset(show(a[1], self.sp) for a in answers)

    # --- the grounded engines ---------------------------------------------------------------------
    def _check_state(
        self, ref: _Ref, nets: dict[str, _Propnet], kernels: dict[str, tuple[Any, Any]], w: int, step: int
    ) -> None:
        pn = nets["pn"]
        for name, net in nets.items():
            if name not in self.engines:
                continue
            try:
                self._check_interpreted(name, net, ref, w, step)
            except Exception as exc:
                self.report(name, "crash", _crash(exc), w, step)
        for name, (kernel, ctx) in kernels.items():
            try:
                self._check_kernel(name, pn, kernel, ctx, ref, w, step)
            except Exception as exc:
                self.report(name, "crash", _crash(exc), w, step)

    def _check_interpreted(self, name: str, net: _Propnet, ref: _Ref, w: int, step: int) -> None:
        bits = net.bits(ref.facts)
        if bits is None:
            self.report(name, "next", f"the state {sorted(ref.facts)} has facts the network does not know", w, step)
            return
        n = net.net
        vals = np.zeros(int(n.header[H_NNODES]), dtype=np.uint8)
        pn_load(n, vals, bits)
        for r in range(net.nroles):
            lo, hi = net.lptr[r], net.lptr[r + 1]
            got = net.legal_texts(r, [k - lo for k in range(lo, hi) if vals[n.legal_node[k]]])
            if got != ref.legal[r]:
                self.report(name, "legal", f"role {r}: want {ref.legal[r]}, got {_short(got)}", w, step)
        if bool(vals[n.header[H_TERMINAL]]) != ref.terminal:
            self.report(name, "terminal", f"want {ref.terminal}", w, step)
        goal_vals = vals.copy()
        sweep_phase(n, goal_vals, 1)
        for r in range(net.nroles):
            got_goals = sorted(
                {int(n.goal_value[k]) for k in range(n.goal_ptr[r], n.goal_ptr[r + 1]) if goal_vals[n.goal_node[k]]}
            )
            if got_goals != ref.goals[r]:
                self.report(name, "goals", f"role {r}: want {ref.goals[r]}, got {got_goals}", w, step)
        if ref.joint is None or ref.next_facts is None:
            return
        actions = net.joint_actions(ref.joint)
        if actions is None:
            return  # (a legal disagreement, reported)
        does = np.array([int(n.legal_does[net.lptr[r] + a]) for r, a in enumerate(actions)], dtype=np.int64)
        out = np.zeros(len(bits), dtype=np.uint8)
        pn_next(n, vals, does, out)
        got_next = net.facts(out)
        if got_next != ref.next_facts:
            self.report(name, "next", f"joint {ref.joint}: {_diff_sets(ref.next_facts, got_next)}", w, step)

    def _check_kernel(self, name: str, pn: _Propnet, kernel: Any, ctx: Any, ref: _Ref, w: int, step: int) -> None:
        bits = pn.bits(ref.facts)
        if bits is None:
            return  # (reported by pn)
        width = max(1, kernel.max_actions)
        out = np.empty(width, dtype=np.int64)
        for r in range(pn.nroles):
            k = kernel.legal(ctx, bits, r, out)
            got = pn.legal_texts(r, out[:k])
            if got != ref.legal[r]:
                self.report(name, "legal", f"role {r}: want {ref.legal[r]}, got {_short(got)}", w, step)
        if bool(kernel.terminal(ctx, bits)) != ref.terminal:
            self.report(name, "terminal", f"want {ref.terminal}", w, step)
        goals = np.zeros(pn.nroles, dtype=np.int64)
        kernel.goals(ctx, bits, goals)
        want = [max(g) if g else 0 for g in ref.goals]
        if goals.tolist() != want:
            self.report(name, "goals", f"want highest {want}, got {goals.tolist()}", w, step)
        if ref.joint is None or ref.next_facts is None:
            return
        actions = pn.joint_actions(ref.joint)
        if actions is None:
            return
        after = bits.copy()
        kernel.apply(ctx, after, np.array(actions, dtype=np.int64))
        got_next = pn.facts(after)
        if got_next != ref.next_facts:
            self.report(name, "next", f"joint {ref.joint}: {_diff_sets(ref.next_facts, got_next)}", w, step)

    def _check_playouts(self, pn: _Propnet) -> None:
        """Whole random games in one compiled call: the sweeping and the incremental loop (also with a stack
        so small that it falls back to evaluating steps from scratch) must play the same games."""
        n = pn.net
        roles = max(pn.nroles, 1)
        results = []
        for incremental, scratch in ((False, 0), (True, 0), (True, 3)):
            goals = np.zeros((6, roles), dtype=np.int64)
            lengths = np.zeros(6, dtype=np.int64)
            error = np.zeros(2, dtype=np.int64)
            args = (n, np.asarray(n.init, dtype=np.uint8).copy(), 6, rng_state(self.seed), 40, goals, lengths, error)
            made = dn_playouts(*args, scratch) if incremental else pn_playouts(*args)
            results.append((goals.tolist(), lengths.tolist(), int(made), error.tolist()))
        for scratch, got in zip((0, 3), results[1:], strict=True):
            if got != results[0]:
                self.report(
                    "playouts", "games", f"incremental (scratch {scratch}) {_short(got)} but sweep {_short(results[0])}"
                )

    def _check_lanes(self, pn: _Propnet, refs: list[_Ref]) -> None:
        n = pn.net
        nnodes, nbase = int(n.header[H_NNODES]), int(n.header[H_NBASE])
        rows: list[tuple[_Ref, np.ndarray]] = []
        for ref in refs:
            bits = pn.bits(ref.facts)
            if bits is not None:
                rows.append((ref, bits))
        split = _next_program(n)
        for start in range(0, len(rows), LANES):
            chunk = rows[start : start + LANES]
            words = np.zeros(WORDS * nnodes, dtype=np.uint64)
            words[WORDS : 2 * WORDS] = np.uint64(0xFFFFFFFFFFFFFFFF)
            states = np.zeros((LANES, nbase), dtype=np.uint8)
            for b, (_, bits) in enumerate(chunk):
                states[b] = bits
            for i in range(nbase):
                for q in range(WORDS):
                    column = states[64 * q : 64 * q + 64, i].astype(np.uint64)
                    words[WORDS * (2 + i) + q] = np.bitwise_or.reduce(column << np.arange(64, dtype=np.uint64))
            _sweep(n, words, 0)
            goal_words = words.copy()
            _sweep(n, goal_words, 1)

            def lane(ws: np.ndarray, node: int, b: int) -> bool:
                return bool((int(ws[WORDS * node + b // 64]) >> (b % 64)) & 1)

            does = np.full((LANES, max(pn.nroles, 1)), -1, dtype=np.int64)
            active = np.zeros(WORDS, dtype=np.uint64)
            for b, (ref, _) in enumerate(chunk):
                where = f"(lane {b} of a batch)"
                for r in range(pn.nroles):
                    lo, hi = pn.lptr[r], pn.lptr[r + 1]
                    got = pn.legal_texts(r, [k - lo for k in range(lo, hi) if lane(words, int(n.legal_node[k]), b)])
                    if got != ref.legal[r]:
                        self.report("lanes", "legal", f"role {r}: want {ref.legal[r]}, got {_short(got)} {where}")
                if lane(words, int(n.header[H_TERMINAL]), b) != ref.terminal:
                    self.report("lanes", "terminal", f"want {ref.terminal} {where}")
                for r in range(pn.nroles):
                    got_goals = sorted(
                        {
                            int(n.goal_value[k])
                            for k in range(n.goal_ptr[r], n.goal_ptr[r + 1])
                            if lane(goal_words, int(n.goal_node[k]), b)
                        }
                    )
                    if got_goals != ref.goals[r]:
                        self.report("lanes", "goals", f"role {r}: want {ref.goals[r]}, got {got_goals} {where}")
                actions = pn.joint_actions(ref.joint) if ref.joint is not None else None
                if actions is not None:
                    for r, a in enumerate(actions):
                        does[b, r] = int(n.legal_does[pn.lptr[r] + a])
                    active[b // 64] |= np.uint64(1) << np.uint64(b % 64)
            made = np.zeros(LANES * max(pn.nroles, 1) + 1, dtype=np.int64)
            _next(n, split, words, does, active, made)
            for b, (ref, _) in enumerate(chunk):
                if ref.joint is None or ref.next_facts is None or not (int(active[b // 64]) >> (b % 64)) & 1:
                    continue
                got_bits = np.array([lane(words, int(n.next[i]), b) for i in range(nbase)], dtype=np.uint8)
                got_next = pn.facts(got_bits)
                if got_next != ref.next_facts:
                    self.report("lanes", "next", f"joint {ref.joint}: {_diff_sets(ref.next_facts, got_next)}")


def _crash(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    where = f" at {last.filename.rsplit('/', 1)[-1]}:{last.lineno}" if last else ""
    return _short(f"{type(exc).__name__}: {exc}{where}")


def compare(text: str, **options: Any) -> Outcome:
    """Compare every engine with the prover on the sheet ``text`` (options: see :class:`Comparer`)."""
    return Comparer(text, **options).run()


#: Thresholds lowered so that small sheets take the paths large ones take (``--stress``): static relations
#: computed on demand, foreseen grounding sizes, guarded and factored gates, compiled code cut into short blocks.
STRESS = {
    ("grounder", "DEFER_ROWS"): 4,
    ("grounder", "_FORESEE_FROM"): 2,
    ("propnet", "GUARD_READERS"): 2,
    ("optimise", "FACTOR_READERS"): 2,
    ("optimise", "FACTOR_SHARED"): 2,
    ("codegen_ir", "CHUNK"): 16,
    ("codegen_ir", "LIST_CHUNK"): 3,
    ("codegen_ir", "COPY_RUN"): 2,
}


@contextlib.contextmanager
def stressed(on: bool = True) -> Iterator[None]:
    """Within this block, the thresholds of :data:`STRESS` are lowered (nothing changes when ``on`` is False)."""
    import importlib

    saved = []
    if on:
        for (module, name), value in STRESS.items():
            mod = importlib.import_module(f"ggp.gdl.{module}")
            saved.append((mod, name, getattr(mod, name)))
            setattr(mod, name, value)
    try:
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)


__all__ = ["ENGINES", "STRESS", "Comparer", "Disagreement", "Outcome", "compare", "stressed"]
