"""Grounding: from rules with variables to a finite ground program.

Two bottom-up passes over a checked :class:`~ggp.gdl.sheet.Program`:

1. The *static* relations (those that depend on neither ``true`` nor ``does``)
   are computed exactly, stratum by stratum (rule group by rule group where a
   relation negates itself for other arguments), with negation as failure. A
   relation that grows past :data:`DEFER_ROWS` rows is instead computed on
   demand, for the arguments the rules that use it give.
2. The *dynamic* relations are computed over a relaxed program: ``true`` holds
   for every fact that ``init`` or some ``next`` can produce, ``does`` for every
   move some ``legal`` can produce, and negated dynamic literals are ignored.
   The result over-approximates every atom that can hold in any reachable
   state. Each rule instance found on the way is kept: those instances, with
   the static literals folded away, are the ground program the propnet is built
   from. Facts that only frame rules keep (:func:`~ggp.gdl.rewrite.frozen_fluents`) count as
   static, and rules are first split by variable elimination (:func:`~ggp.gdl.rewrite.decompose`)
   so that a rule has about as many instances as the atoms it joins.

Both passes are semi-naive: a rule is re-run only with the atoms new in the
previous round, each instance found once, through hash indexes on the bound
values of a literal's arguments and of the function terms inside them, in a
join order chosen by the measured size of each lookup (:mod:`ggp.gdl.joins`).

Grounding is bounded, so that no rule sheet can pin a process: at most
:data:`MAX_ATOMS` atoms and rule instances (memory), at most :data:`MAX_RULES`
rule instances (the propnet's build time), at most :data:`MAX_STEPS` join
steps and :data:`MAX_SECONDS` of processor time (time: rules whose joins find
little but loop long), at most :data:`MAX_MEMORY` bytes of growth of the
process's resident memory (a backstop for what the counts do not weigh), a
round of joins estimated before it runs (:meth:`Grounder._foresee`: a round
that would pass the bounds is not begun), and, inside
a :func:`~ggp.gdl.sheet.bounded` block, a deadline and a cancel event (a GGP
player grounds a START's rules within its clocks and stops when the match is
aborted). Past any bound grounding raises :class:`~ggp.gdl.sheet.GDLLimitError`.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..core.kif import Term
from .joins import Codegen, Key, Plan, Row, Store, extractor, key_of, make_plan, partition, term_at
from .memory import no_cyclic_gc, resident_bytes
from .rewrite import decompose, freeze
from .sheet import Atom, GDLLimitError, Literal, Program, Rule, check_bounds, term_vars
from .validity import reaches, rule_components, strongly_connected

#: Grounding gives up beyond this many atoms and rule instances together (a sheet too large, or rules that
#: build ever larger terms). Amazons 10x10, the largest built-in sheet, has 26,366 atoms and 31,586 instances;
#: the largest sheets of the public GGP repository that ground take 1.7 million (chineseCheckers3: 1.6 GB at
#: most with the propnet built from them).
MAX_ATOMS = 3_000_000
#: ... or once it has kept this many rule instances (the propnet is built from them, at about 20 us each: racer4,
#: the public corpus's largest, has 1.21 million and builds in 15-25 s; a sheet of more would build for minutes).
MAX_RULES = 1_250_000
#: ... or once terms nest deeper than this.
MAX_DEPTH = 60
#: ... or after this many join steps (a row a rule tries; up to 30 million a second, so seconds at most).
#: Each built-in sheet takes under half a million; compiling a rule counts as :data:`COMPILE_STEPS`.
MAX_STEPS = 200_000_000
COMPILE_STEPS = 2_000
#: A static relation is computed in full unless it grows past this many rows: it is then computed on
#: demand, for the arguments the rules that use it give (see :meth:`Grounder.lookup`).
DEFER_ROWS = 200_000
#: Grounding gives up before a round whose rule instances, estimated from the average size of each lookup
#: (:meth:`Grounder._instances`), would take it past :data:`MAX_ATOMS` times this margin (the estimate leaves
#: out the checks that drop instances, so it errs high; the margin keeps sheets that do ground from being
#: refused on it). Rounds fed fewer than :data:`_FORESEE_FROM` new rows are not estimated (the cost of
#: estimating would outweigh what they can add).
FORESIGHT_MARGIN = 1.0
_FORESEE_FROM = 256
#: ... or once grounding has taken this many seconds of processor time (of its own thread: other threads and
#: processes on a busy machine do not count). The corpus's largest groundings take about 5 s; a sheet that
#: needs more goes to the prover, which loads any sheet in seconds, instead of holding a START for minutes.
MAX_SECONDS = 15.0
#: ... or once the process's resident memory has grown by this many bytes since grounding began (a backstop
#: for what the counts above do not weigh: long rule bodies, deep terms, indexes). The propnet built from a
#: ground program takes about as much again, so a load stays within twice this (plus the ~150 MB interpreter).
#: ``GGP_GROUND_MEMORY_MB`` in the environment sets it (in MiB).
MAX_MEMORY = int(float(os.environ.get("GGP_GROUND_MEMORY_MB", "1536")) * (1 << 20))
#: Relations with a meaning in GDL: always computed in full.
_KEYWORDS = {"role", "init", "true", "next", "legal", "does", "goal", "terminal", "base", "input"}


class _Defer(Exception):
    """A static relation grew past :data:`DEFER_ROWS` while computed in full."""


#: Nested loops in one generated function (Python allows 20 nested blocks).
_LOOPS_PER_FUNCTION = 12
#: Steps between two looks at the clock and the cancel event.
_CHUNK = 1 << 16


class GroundingTooLarge(GDLLimitError):
    """Grounding gave up because the sheet is too large to ground (not because time ran out or it was
    cancelled): a reasoner that does not ground (:mod:`ggp.gdl.prover`) may still play it."""


def too_large(where: str) -> GDLLimitError:
    """The error of a grounding that grew past :data:`MAX_ATOMS` or :data:`MAX_DEPTH`."""
    return GroundingTooLarge(
        f"{where}grounding gave up (over {MAX_ATOMS:,} atoms and rule instances, or terms nested over {MAX_DEPTH} "
        "deep): the sheet is too large to ground, or its rules build ever larger terms (a recursion through a "
        "function term such as (<= (next (count (s ?n))) (true (count ?n))) has no end)"
    )


def too_many_rules(where: str) -> GDLLimitError:
    """The error of a grounding that kept more than :data:`MAX_RULES` rule instances."""
    return GroundingTooLarge(
        f"{where}grounding gave up at {MAX_RULES:,} rule instances: the propnet built from them would take "
        "minutes to build; the sheet is too large to ground"
    )


class _Budget:
    """The join steps grounding has taken, checked against its bounds every :data:`_CHUNK` steps (and the
    deadline and cancel event of the :func:`~ggp.gdl.sheet.bounded` block it runs in).

    Compiled rules count their steps in a local and call :meth:`tick` when it
    reaches the limit they were given; :meth:`tick` accounts for them, checks
    every bound and gives the next limit.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.used = 0  # steps of the calls that have returned
        self.began = time.thread_time()
        self.rss0 = resident_bytes()
        self.looked = 0.0
        #: How many atoms and rule instances are held, new ones included (set by the grounder).
        self.size: Callable[[], int] = lambda: 0
        #: How many rule instances are kept (set by the grounder).
        self.rules: Callable[[], int] = lambda: 0
        #: Called at every tick: raises :class:`_Defer` when a static relation grows past its allowance.
        self.watch: Callable[[], None] = lambda: None
        self.check()

    def limit(self) -> int:
        """How many steps the next call may take before it must tick."""
        return min(_CHUNK, MAX_STEPS - self.used + 1)

    def tick(self, n: int) -> int:
        """Called by a running rule that has taken ``n`` steps; raises past a bound, else the next limit."""
        if self.size() > MAX_ATOMS:
            raise too_large(self.where)
        if self.rules() > MAX_RULES:
            raise too_many_rules(self.where)
        self.watch()
        self.check(n)
        return n + min(_CHUNK, MAX_STEPS - self.used - n + 1)

    def spend(self, n: int) -> None:
        self.used += n
        self.check()

    def check(self, running: int = 0) -> None:
        if self.used + running > MAX_STEPS:
            raise GroundingTooLarge(
                f"{self.where}grounding gave up after {MAX_STEPS:,} join steps: the rules join relations "
                "that find few matches in very many tries (reorder or split the rule bodies)"
            )
        spent = time.thread_time() - self.began
        if spent > MAX_SECONDS:
            raise GroundingTooLarge(
                f"{self.where}grounding gave up after {spent:.0f} s of processor time (the bound is "
                f"{MAX_SECONDS:g} s): the sheet is too large to ground quickly"
            )
        now = time.monotonic()
        if now - self.looked < 0.05:  # memory is looked at 20 times a second at most
            check_bounds(self.where, "grounding")
            return
        self.looked = now
        rss = resident_bytes()
        if rss is not None and self.rss0 is not None and rss - self.rss0 > MAX_MEMORY:
            raise GroundingTooLarge(
                f"{self.where}grounding gave up once it held {(rss - self.rss0) / (1 << 20):,.0f} MB (the bound is "
                f"{MAX_MEMORY / (1 << 20):,.0f} MB): the sheet is too large to ground"
            )
        check_bounds(self.where, "grounding")


def _depth(term: Term) -> int:
    if isinstance(term, str):
        return 0
    return 1 + max((_depth(t) for t in term), default=0)


class GroundRule(NamedTuple):
    """``head <= pos_1, ..., not neg_1, ...`` over dynamic ground atoms (a tuple: there may be millions)."""

    head: Atom
    pos: tuple[Atom, ...]
    neg: tuple[Atom, ...]
    line: int


@dataclass
class GroundProgram:
    """What the propnet is built from."""

    roles: tuple[str, ...]
    #: Exact static relations: relation -> set of argument rows.
    static: dict[str, set[Row]]
    #: Relaxed dynamic relations (``true``, ``does``, ``legal``, ...): relation -> rows.
    dynamic: dict[str, set[Row]]
    rules: list[GroundRule] = field(default_factory=list)

    def holds_statically(self, atom: Atom) -> bool:
        return atom[1:] in self.static.get(str(atom[0]), ())

    def rows(self, relation: str) -> set[Row]:
        """Every row ``relation`` may hold: exact if static, relaxed if dynamic."""
        return self.dynamic.get(relation) or self.static.get(relation) or set()


class Grounder:
    def __init__(self, program: Program) -> None:
        program = freeze(program)
        self.program = program
        self.store = Store()
        self.dynamic_relations = reaches(program, {"true", "does"})
        self.where = f"{program.name}: "
        self.budget = _Budget(self.where)
        #: Static relations computed on demand (see :meth:`lookup`): relation -> its rules.
        self.lazy: dict[str, list[Rule]] = {}
        self.lookups: dict[tuple[str, Key], Callable[[Row], list[Row]]] = {}
        self.deferred_rows = 0

    def lookup(self, relation: str, key: Key) -> Callable[[Row], list[Row]]:
        """``values -> rows``: the rows of the deferred static ``relation`` with ``key``'s ``values``, computed
        on the first call for those values by running the relation's rules with the head arguments the key
        gives bound (a relation too large to compute in full is often asked about few arguments: a path's
        direction between any two of 50 numbers, asked for the squares of an 8x8 maze)."""
        found = self.lookups.get((relation, key))
        if found is not None:
            return found
        runs = []
        for rule in self.lazy[relation]:
            given: list[tuple[str, int]] = []
            equal: list[tuple[int, Term]] = []
            for i, path in enumerate(key.paths):
                term = term_at(rule.head[path[0] + 1], path[1:])
                if isinstance(term, str) and term.startswith("?"):
                    given.append((term, i))
                elif term is not None and not term_vars(term):
                    equal.append((i, term))
            plan = make_plan(rule, None, set(), self.store.estimate, frozenset(v for v, _ in given))
            runs.append((equal, self._compile(plan, False, set(), tuple(given))))
        memo: dict[Row, list[Row]] = {}
        extract = extractor(key)
        budget = self.budget
        no_seen: set[Any] = set()
        no_kept: list[GroundRule] = []

        def rows_for(values: Row) -> list[Row]:
            rows = memo.get(values)
            if rows is None:
                out: set[Row] = set()
                for equal, fn in runs:
                    if all(values[i] == t for i, t in equal):
                        budget.spend(fn(values, None, out, no_seen, no_kept, budget.tick, budget.limit()))
                rows = memo[values] = [row for row in out if extract(row) == values]
                self.deferred_rows += len(rows)
            return rows

        self.lookups[(relation, key)] = rows_for
        return rows_for

    def _check(self, cg: Codegen, lit: Literal, depth: int) -> None:
        if lit.kind == "neg" and str(lit.atom[0]) in self.lazy:
            key, terms = key_of(lit.atom[1:], term_vars(lit.atom))
            fn = cg.const(self.lookup(str(lit.atom[0]), key), "lk")
            self_key = "(" + "".join(cg.expr(t) + ", " for t in terms) + ")"
            cg.emit(depth, f"if {fn}({self_key}): continue")
        else:
            cg.check(lit, depth, self.store.rows)

    def _compile(self, plan: Plan, keep: bool, recursive: set[str], given: tuple[tuple[str, int], ...] = ()) -> Any:
        """``run(delta, fresh, new, seen, kept, tick, lim)`` for ``plan``: adds the head rows it derives to ``new``
        and, if ``keep``, its rule instances to ``kept``; returns its join steps, calling ``tick`` each time they
        reach ``lim`` (see :class:`_Budget`).

        A delta plan (its first step fed from ``delta``, the new rows of a relation) takes no row of ``fresh``
        (this round's new rows, per relation) for the recursive literals after its delta literal in the body:
        an instance built from several new rows is found once, by the plan of the last of them.

        ``given`` (for :meth:`lookup`): variables bound before the first step, to ``delta[i]``, and values the
        head's argument ``delta[i]`` must equal: the rule then runs for the arguments a lookup gives.
        """
        self.budget.spend(COMPILE_STEPS)
        cg = Codegen()
        rule = plan.rule
        bound: set[str] = set()
        for v, i in given:
            if v in bound:
                cg.emit(1, f"if delta[{i}] != {cg.names[v]}: return 0")
            else:
                cg.emit(1, f"{cg.var(v)} = delta[{i}]")
                bound.add(v)
        functions: list[str] = []
        common = ["delta", "fresh", "new", "seen", "kept", "tick"]
        header = f"def run({', '.join(common)}, lim):"
        cg.emit(1, "n = 0")
        cg.emit(1, "for _ in (0,):")  # lets pre-checks `continue` out
        depth = 2
        loops = 1
        first = plan.steps[0].index if plan.delta == 0 else len(rule.body)
        for c in plan.pre:
            self._check(cg, c, depth)
        for i, step in enumerate(plan.steps):
            if loops >= _LOOPS_PER_FUNCTION:
                # Python compiles at most 20 nested loops in a function: the deeper loops of a long rule body go
                # to a function of their own, called with the variables bound so far.
                params = ", ".join(["n", "lim", *common, *sorted(cg.names[v] for v in bound)])
                name = f"run{len(functions) + 1}"
                cg.emit(depth, f"n, lim = {name}({params})")
                functions.append(
                    header + "\n" + "\n".join(cg.lines) + ("\n    return n" if not functions else "\n    return n, lim")
                )
                header = f"def {name}({params}):"
                cg.lines = []
                depth = 1
                loops = 0
            row = f"r{i}"
            if i == 0 and plan.delta == 0:
                source = "delta"  # the delta's rows with the step's key (it has only constants: nothing is bound)
            elif step.relation in self.lazy:
                fn = cg.const(self.lookup(step.relation, step.key), "lk")
                source = f"{fn}((" + "".join(cg.expr(t) + ", " for t in step.key_terms) + "))"
            elif step.key.paths:
                idx = cg.const(self.store.get_index(step.relation, step.key), "ix")
                key = "(" + "".join(cg.expr(t) + ", " for t in step.key_terms) + ")"
                source = f"{idx}.get({key}, ())"
            else:
                source = cg.const(self.store.relation(step.relation), "rows")
            # Steps are counted as a loop begins, by its length (every source is sized): cheaper than per row.
            cg.emit(depth, f"src{i} = {source}")
            cg.emit(depth, f"n += len(src{i})")
            cg.emit(depth, "if n >= lim: lim = tick(n)")
            cg.emit(depth, f"for {row} in src{i}:")
            depth += 1
            loops += 1
            if i > 0 and step.index > first and step.relation in recursive:
                cg.emit(depth, f"if {row} in fresh.get({step.relation!r}, ()): continue")
            for p, arg in enumerate(step.args):
                cg.match(arg, f"{row}[{p}]", depth, bound, (p,), step.key)
            for c in step.checks:
                self._check(cg, c, depth)
        cg.emit(depth, "new.add((" + "".join(cg.expr(t) + ", " for t in rule.head[1:]) + "))")
        if keep:
            dyn = self.dynamic_relations
            pos = [lit.atom for lit in rule.body if lit.kind == "pos" and str(lit.atom[0]) in dyn]
            neg = [lit.atom for lit in rule.body if lit.kind == "neg" and str(lit.atom[0]) in dyn]
            shown = term_vars(rule.head)
            for atom in pos + neg:
                term_vars(atom, shown)
            instance = (
                f"GR({cg.expr(rule.head)}, ({''.join(cg.expr(a) + ', ' for a in pos)}), "
                f"({''.join(cg.expr(a) + ', ' for a in neg)}), {rule.line})"
            )
            cg.consts["GR"] = GroundRule
            every = term_vars(rule.head)
            for lit in rule.body:
                term_vars(lit.atom, every)
            if every - shown:
                # variables of static literals only: several of their values may give one instance
                cg.emit(depth, f"k = {instance}")
                cg.emit(depth, "before = len(seen)")
                cg.emit(depth, "seen.add(k)")
                cg.emit(depth, "if len(seen) != before: kept.append(k)")
            else:
                cg.emit(depth, f"kept.append({instance})")
        functions.append(
            header + "\n" + "\n".join(cg.lines) + ("\n    return n" if not functions else "\n    return n, lim")
        )
        source = "\n".join(functions) + "\n"
        namespace: dict[str, Any] = dict(cg.consts)
        exec(compile(source, f"<gdl rule line {rule.line}>", "exec"), namespace)
        return namespace["run"]

    # --- evaluation ---------------------------------------------------------------------------
    def _fixpoint(
        self,
        rules: list[Rule],
        recursive: set[str],
        skip_neg: set[str],
        keep: list[GroundRule] | None,
        allowance: int | None = None,
    ) -> None:
        """Semi-naive evaluation of ``rules``, whose heads are the relations ``recursive``; their rule
        instances (over dynamic atoms) go to ``keep`` when it is given. Raises :class:`_Defer` once the
        relations hold more than ``allowance`` rows, if given."""
        keeping = keep is not None
        kept: list[GroundRule] = keep if keep is not None else []
        # the first round joins what is there: a rule with a literal of a relation still empty finds nothing
        # (its instances come later, from the new rows of that relation)
        stored = self.store.rows
        full_plans = [
            make_plan(r, None, skip_neg, self.store.estimate)
            for r in rules
            if all(stored.get(str(lit.atom[0])) or str(lit.atom[0]) in self.lazy for lit in r.body if lit.kind == "pos")
        ]
        if keeping:
            self._foresee(sum(self._instances(plan) for plan in full_plans), len(kept))
        full = [(str(plan.rule.head[0]), self._compile(plan, keeping, recursive)) for plan in full_plans]
        # per relation, the rules to run on its new rows: (head, key of the delta literal, its values, run)
        by_delta: dict[str, list[tuple[str, Key, Row, Any, Plan]]] = {}
        for r in rules:
            for lit in r.body:
                if lit.kind == "pos" and str(lit.atom[0]) in recursive:
                    plan = make_plan(r, lit, skip_neg, self.store.estimate)
                    fn = self._compile(plan, keeping, recursive)
                    key = plan.steps[0].key
                    values = tuple(plan.steps[0].key_terms)  # ground: nothing is bound before the first step
                    by_delta.setdefault(str(lit.atom[0]), []).append((str(r.head[0]), key, values, fn, plan))
        seen: dict[str, set[Any]] = {}
        new: dict[str, set[Row]] = {}
        self.budget.size = lambda: (
            self.store.count + len(kept) + sum(len(rows) for rows in new.values()) + self.deferred_rows
        )
        self.budget.rules = lambda: len(kept)
        fresh: dict[str, set[Row]] = {}

        def watch() -> None:
            if allowance is not None:
                held = sum(len(new.get(r, ())) + len(self.store.rows.get(r, ())) for r in recursive)
                if held > allowance:
                    raise _Defer

        def run(rel: str, fn: Any, delta: list[Row] | None) -> None:
            budget = self.budget
            used = fn(
                delta, fresh, new.setdefault(rel, set()), seen.setdefault(rel, set()), kept, budget.tick, budget.limit()
            )
            budget.spend(used)
            if len(kept) + self.store.count + self.deferred_rows > MAX_ATOMS:
                raise too_large(self.where)
            if len(kept) > MAX_RULES:
                raise too_many_rules(self.where)
            watch()

        self.budget.watch = watch
        for rel, fn in full:
            run(rel, fn, None)
        rounds = 0
        while any(new.values()):
            delta = self._commit(new)
            rounds += 1
            if rounds > 100 and any(_depth(row) > MAX_DEPTH for rows in delta.values() for row in rows):
                raise too_large(self.where)
            new = {}
            fresh = {rel: set(rows) for rel, rows in delta.items()}
            todo: list[tuple[str, Any, list[Row]]] = []
            foreseen = 0.0
            for rel, rows in delta.items():
                parts: dict[Key, dict[Row, list[Row]]] = {}
                for head_rel, key, values, fn, plan in by_delta.get(rel, ()):
                    part = parts.get(key)
                    if part is None:
                        part = parts[key] = partition(rows, key)
                    bucket = part.get(values)
                    if bucket:
                        todo.append((head_rel, fn, bucket))
                        if keeping and len(bucket) >= _FORESEE_FROM:
                            foreseen += self._instances(plan, len(bucket))
            if foreseen:
                self._foresee(foreseen, len(kept))
            for head_rel, fn, bucket in todo:
                run(head_rel, fn, bucket)
        self.budget.watch = lambda: None

    def _instances(self, plan: Plan, first: int | None = None) -> float:
        """About how many instances ``plan`` finds: the product of its steps' average lookup sizes in the rows
        held now (``first``: the rows fed to its first step). Checks (``distinct``, negations) are left out, so
        this over-estimates rather than under (0 if a step's relation has no rows: the plan finds nothing)."""
        total = 1.0
        for i, step in enumerate(plan.steps):
            if i == 0 and first is not None:
                total *= first
            elif step.relation not in self.lazy:  # a deferred relation's lookups are not known before they run
                rows = self.store.estimate(step.relation, step.key)
                if rows is None:
                    return 0.0
                total *= rows
        return total

    def _foresee(self, instances: float, kept: int) -> None:
        """Give up now (:class:`GroundingTooLarge`) if the rule instances about to be found, each with its head
        atom, would take grounding past :data:`MAX_ATOMS` by more than :data:`FORESIGHT_MARGIN`: a sheet whose
        grounding explodes goes to the top-down prover at once, not after the seconds it takes to fill memory."""
        held = self.store.count + kept + self.deferred_rows
        if held + 2 * instances > MAX_ATOMS * FORESIGHT_MARGIN:
            raise GroundingTooLarge(
                f"{self.where}grounding gave up before a round of about {instances:,.0f} rule instances, estimated "
                f"from the rows they join: with their head atoms and the {held:,} atoms and instances held, over "
                f"{MAX_ATOMS:,}; the sheet is too large to ground"
            )

    def _defer(self, relation: str, rules: list[Rule]) -> None:
        """Compute ``relation`` on demand from now on (see :meth:`lookup`), dropping what was computed of it."""
        self.budget.watch = lambda: None
        self.store.count -= len(self.store.rows.pop(relation, ()))
        self.store.index.pop(relation, None)
        self.lazy[relation] = rules

    def _commit(self, new: dict[str, set[Row]]) -> dict[str, list[Row]]:
        delta: dict[str, list[Row]] = {}
        for rel, rows in new.items():
            added = [row for row in rows if self.store.add(rel, row)]
            if added:
                delta[rel] = added
        if self.store.count + self.deferred_rows > MAX_ATOMS:
            raise too_large(self.where)
        self.budget.check()
        return delta

    def ground(self) -> GroundProgram:
        program = self.program
        dyn = self.dynamic_relations
        by_head: dict[str, list[Rule]] = {}
        for rule in program.rules:
            by_head.setdefault(rule.relation, []).append(rule)
        # 1. static relations, exactly, in dependency order
        static_rels = sorted(r for r in by_head if r not in dyn)
        edges = {
            h: sorted({str(lit.atom[0]) for r in by_head[h] for lit in r.body if lit.kind in ("pos", "neg")})
            for h in static_rels
        }
        for comp in strongly_connected(static_rels, edges):
            members = set(comp) & set(by_head)
            rules = [r for rel in comp for r in by_head.get(rel, ())]
            negates_itself = any(lit.kind == "neg" and str(lit.atom[0]) in members for r in rules for lit in r.body)
            # the parser has checked that such a component is stratified rule by rule
            groups = rule_components(rules) if negates_itself else [rules] if rules else []
            (rel,) = comp if len(comp) == 1 else ("",)
            if rel in by_head and rel not in _KEYWORDS and rel not in edges[rel] and any(r.body for r in rules):
                try:  # derived and not recursive: may be deferred
                    self._fixpoint(rules, {rel}, set(), None, DEFER_ROWS)
                except _Defer:
                    self._defer(rel, rules)
                continue
            for group in groups:
                self._fixpoint(group, {r.relation for r in group}, set(), None)
        static = {rel: set(self.store.rows.get(rel, ())) for rel in self.store.rows}
        # 2. dynamic relations over the relaxed program
        for row in static.get("init", ()):
            self.store.add("true", row)
        bridge = [
            Rule(("true", "?f"), (Literal("pos", ("next", "?f"), 0),), 0),
            Rule(
                ("does", "?r", "?m"), (Literal("pos", ("legal", "?r", "?m"), 0), Literal("pos", ("role", "?r"), 0)), 0
            ),
        ]
        names = itertools.count(1)
        dyn_rules = [part for rel in sorted(dyn) for r in by_head.get(rel, ()) for part in decompose(r, dyn, names)]
        dyn = self.dynamic_relations = dyn | {r.relation for r in dyn_rules}
        kept: list[GroundRule] = []
        self._fixpoint(dyn_rules + bridge, dyn | {"true", "does"}, dyn | {"true", "does"}, kept)
        dynamic = {rel: self.store.rows.get(rel, set()) for rel in dyn | {"true", "does"}}
        # (negated atoms that can never hold are dropped when the propnet is built)
        rules_out = [gr for gr in kept if gr.line != 0]  # not the bridge rules
        return GroundProgram(program.roles, static, dynamic, rules_out)


def ground(program: Program) -> GroundProgram:
    """The ground program of a checked rule sheet; :class:`GDLLimitError` past a bound (see the module)."""
    with no_cyclic_gc():
        return Grounder(program).ground()
