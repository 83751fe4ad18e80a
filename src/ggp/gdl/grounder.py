"""Grounding: from rules with variables to a finite ground program.

Two bottom-up passes over a checked :class:`~ggp.gdl.parser.Program`:

1. The *static* relations (those that depend on neither ``true`` nor ``does``)
   are computed exactly, stratum by stratum, with negation as failure.
2. The *dynamic* relations are computed over a relaxed program: ``true`` holds
   for every fact that ``init`` or some ``next`` can produce, ``does`` for every
   move some ``legal`` can produce, and negated dynamic literals are ignored.
   The result over-approximates every atom that can hold in any reachable
   state. Each rule instance found on the way is kept: those instances, with
   the static literals folded away, are the ground program the propnet is built
   from.

Both passes are semi-naive: a rule is re-run only with the atoms new in the
previous round, through hash indexes on the bound argument positions.

Grounding is bounded, so that no rule sheet can pin a process: at most
:data:`MAX_ATOMS` atoms and rule instances (memory), at most :data:`MAX_STEPS`
join steps (time: rules whose joins find little but loop long), and, inside
a :func:`~ggp.gdl.parser.bounded` block, a deadline and a cancel event (a GGP
player grounds a START's rules within its clocks and stops when the match is
aborted). Past any bound grounding raises :class:`~ggp.gdl.parser.GDLLimitError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.kif import Term
from .parser import (
    Atom,
    GDLError,
    GDLLimitError,
    Literal,
    Program,
    Rule,
    check_bounds,
    reaches,
    strongly_connected,
    term_vars,
)

#: Grounding gives up beyond this many atoms and rule instances together (a sheet too large, or rules that
#: build ever larger terms). Amazons 10x10, the largest built-in sheet, has 26,366 atoms and 31,586 instances;
#: a million take about 1.5 GB with the propnet built from them.
MAX_ATOMS = 1_000_000
#: ... or once terms nest deeper than this.
MAX_DEPTH = 60
#: ... or after this many join steps (a row a rule tries; up to 30 million a second, so seconds at most).
#: Each built-in sheet takes under half a million; compiling a rule counts as :data:`COMPILE_STEPS`.
MAX_STEPS = 200_000_000
COMPILE_STEPS = 2_000
#: Steps between two looks at the clock and the cancel event.
_CHUNK = 1 << 16


def too_large(where: str) -> GDLLimitError:
    """The error of a grounding that grew past :data:`MAX_ATOMS` or :data:`MAX_DEPTH`."""
    return GDLLimitError(
        f"{where}grounding gave up (over {MAX_ATOMS:,} atoms and rule instances, or terms nested over {MAX_DEPTH} "
        "deep): the sheet is too large to ground, or its rules build ever larger terms (a recursion through a "
        "function term such as (<= (next (count (s ?n))) (true (count ?n))) has no end)"
    )


class _Budget:
    """The join steps grounding has taken, checked against its bounds every :data:`_CHUNK` steps (and the
    deadline and cancel event of the :func:`~ggp.gdl.parser.bounded` block it runs in).

    Compiled rules count their steps in a local and call :meth:`tick` when it
    reaches the limit they were given; :meth:`tick` accounts for them, checks
    every bound and gives the next limit.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.used = 0  # steps of the calls that have returned
        #: How many atoms and rule instances are held, new ones included (set by the grounder).
        self.size: Callable[[], int] = lambda: 0
        self.check()

    def limit(self) -> int:
        """How many steps the next call may take before it must tick."""
        return min(_CHUNK, MAX_STEPS - self.used + 1)

    def tick(self, n: int) -> int:
        """Called by a running rule that has taken ``n`` steps; raises past a bound, else the next limit."""
        if self.size() > MAX_ATOMS:
            raise too_large(self.where)
        self.check(n)
        return n + min(_CHUNK, MAX_STEPS - self.used - n + 1)

    def spend(self, n: int) -> None:
        self.used += n
        self.check()

    def check(self, running: int = 0) -> None:
        if self.used + running > MAX_STEPS:
            raise GDLLimitError(
                f"{self.where}grounding gave up after {MAX_STEPS:,} join steps: the rules join relations "
                "that find few matches in very many tries (reorder or split the rule bodies)"
            )
        check_bounds(self.where, "grounding")


Row = tuple[Term, ...]


def _depth(term: Term) -> int:
    if isinstance(term, str):
        return 0
    return 1 + max((_depth(t) for t in term), default=0)


@dataclass
class GroundRule:
    """``head <= pos_1, ..., not neg_1, ...`` over dynamic ground atoms."""

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


# --- join plans ---------------------------------------------------------------------------------


@dataclass
class _Step:
    relation: str
    args: tuple[Term, ...]
    keypos: tuple[int, ...]  # positions ground when the step runs: looked up in an index
    rest: tuple[int, ...]  # positions to match
    checks: tuple[Literal, ...]  # literals decidable once this step has matched


@dataclass
class _Plan:
    rule: Rule
    delta: int  # index of the step fed from the delta (-1: none)
    pre: tuple[Literal, ...]  # checks decidable before any step (ground literals)
    steps: tuple[_Step, ...]


def _ground_given(term: Term, bound: set[str]) -> bool:
    return term_vars(term) <= bound


def _make_plan(rule: Rule, first: Literal | None, skip_neg: set[str]) -> _Plan:
    """A join order for ``rule``: ``first`` (the delta literal) first, then greedily the most bound literal.

    Negated literals of relations in ``skip_neg`` are left out (the relaxation).
    """
    positives = [lit for lit in rule.body if lit.kind == "pos"]
    checks = [
        lit
        for lit in rule.body
        if lit.kind in ("distinct", "same") or (lit.kind == "neg" and str(lit.atom[0]) not in skip_neg)
    ]
    bound: set[str] = set()
    order: list[Literal] = []
    remaining = list(positives)
    if first is not None:
        remaining.remove(first)
        order.append(first)
        term_vars(first.atom, bound)
    while remaining:

        def score(lit: Literal) -> tuple[int, int, int]:
            args = lit.atom[1:]
            ground = sum(1 for a in args if _ground_given(a, bound))
            return (int(ground < len(args)), -ground, len(term_vars(lit.atom) - bound))

        best = min(remaining, key=score)
        remaining.remove(best)
        order.append(best)
        term_vars(best.atom, bound)
    # now assign keys and checks in order
    bound = set()
    pending = list(checks)
    pre = tuple(c for c in pending if not term_vars(c.atom))
    pending = [c for c in pending if term_vars(c.atom)]
    steps: list[_Step] = []
    for i, lit in enumerate(order):
        args = lit.atom[1:]
        if i == 0 and first is not None:
            keypos: tuple[int, ...] = ()
        else:
            keypos = tuple(p for p, a in enumerate(args) if _ground_given(a, bound))
        rest = tuple(p for p in range(len(args)) if p not in keypos)
        term_vars(lit.atom, bound)
        ready = tuple(c for c in pending if term_vars(c.atom) <= bound)
        pending = [c for c in pending if c not in ready]
        steps.append(_Step(str(lit.atom[0]), tuple(args), keypos, rest, ready))
    if pending:  # pragma: no cover - safety is checked by the parser
        raise GDLError(f"line {rule.line}: unsafe rule", rule.line)
    return _Plan(rule, 0 if first is not None else -1, pre, tuple(steps))


class _Store:
    """Relations with hash indexes on argument positions, kept up to date as rows are added."""

    def __init__(self) -> None:
        self.rows: dict[str, set[Row]] = {}
        self.index: dict[str, dict[tuple[int, ...], dict[Row, list[Row]]]] = {}
        self.count = 0

    def relation(self, relation: str) -> set[Row]:
        return self.rows.setdefault(relation, set())

    def add(self, relation: str, row: Row) -> bool:
        rows = self.rows.setdefault(relation, set())
        if row in rows:
            return False
        rows.add(row)
        self.count += 1
        for keypos, idx in self.index.get(relation, {}).items():
            key = tuple(row[p] for p in keypos)
            found = idx.get(key)
            if found is None:
                idx[key] = [row]
            else:
                found.append(row)
        return True

    def get_index(self, relation: str, keypos: tuple[int, ...]) -> dict[Row, list[Row]]:
        by_rel = self.index.setdefault(relation, {})
        idx = by_rel.get(keypos)
        if idx is None:
            idx = by_rel[keypos] = {}
            for row in self.rows.get(relation, ()):
                idx.setdefault(tuple(row[p] for p in keypos), []).append(row)
        return idx


class _Codegen:
    """Python source for one join plan: nested loops over rows, variables as locals.

    Compiling each plan to a function is several times faster than matching
    through a generic unifier with dictionaries of bindings.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, str] = {}  # GDL variable -> Python local
        self.consts: dict[str, Any] = {}  # global name -> object
        self.tmp = 0

    def var(self, v: str) -> str:
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = f"v{len(self.names)}"
        return name

    def const(self, obj: Any, prefix: str) -> str:
        name = f"{prefix}{len(self.consts)}"
        self.consts[name] = obj
        return name

    def expr(self, term: Term) -> str:
        """An expression for a term whose variables are all bound."""
        if isinstance(term, str):
            return self.names[term] if term[0] == "?" else repr(term)
        return "(" + "".join(self.expr(t) + ", " for t in term) + ")"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def match(self, pattern: Term, value: str, depth: int, bound: set[str]) -> None:
        """Lines that ``continue`` unless ``value`` matches ``pattern``; binds new variables."""
        if isinstance(pattern, str):
            if pattern[0] != "?":
                self.emit(depth, f"if {value} != {pattern!r}: continue")
            elif pattern in bound:
                self.emit(depth, f"if {value} != {self.names[pattern]}: continue")
            else:
                self.emit(depth, f"{self.var(pattern)} = {value}")
                bound.add(pattern)
            return
        if term_vars(pattern) <= bound:
            self.emit(depth, f"if {value} != {self.expr(pattern)}: continue")
            return
        t = f"t{self.tmp}"
        self.tmp += 1
        self.emit(depth, f"{t} = {value}")
        self.emit(
            depth, f"if {t}.__class__ is not tuple or len({t}) != {len(pattern)} or {t}[0] != {pattern[0]!r}: continue"
        )
        for i, sub in enumerate(pattern[1:], start=1):
            self.match(sub, f"{t}[{i}]", depth, bound)

    def check(self, lit: Literal, depth: int, static_rows: dict[str, set[Row]]) -> None:
        if lit.kind == "distinct":
            self.emit(depth, f"if {self.expr(lit.atom[0])} == {self.expr(lit.atom[1])}: continue")
        elif lit.kind == "same":
            self.emit(depth, f"if {self.expr(lit.atom[0])} != {self.expr(lit.atom[1])}: continue")
        else:
            rows = self.const(static_rows.setdefault(str(lit.atom[0]), set()), "s")
            row = "(" + "".join(self.expr(t) + ", " for t in lit.atom[1:]) + ")"
            self.emit(depth, f"if {row} in {rows}: continue")


class Grounder:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.store = _Store()
        self.dynamic_relations = reaches(program, {"true", "does"})
        self.where = f"{program.name}: "
        self.budget = _Budget(self.where)

    def _compile(self, plan: _Plan, keep: bool) -> Any:
        """``run(delta, new, seen, kept, tick, lim)`` for ``plan``: adds the head rows it derives (not yet known)
        to ``new``; returns its join steps, calling ``tick`` each time they reach ``lim`` (see :class:`_Budget`)."""
        self.budget.spend(COMPILE_STEPS)
        cg = _Codegen()
        rule = plan.rule
        bound: set[str] = set()
        cg.emit(1, "n = 0")
        cg.emit(1, "for _ in (0,):")  # lets pre-checks `continue` out
        depth = 2
        for c in plan.pre:
            cg.check(c, depth, self.store.rows)
        for i, step in enumerate(plan.steps):
            row = f"r{i}"
            if i == 0 and plan.delta == 0:
                source = "delta"
            elif step.keypos:
                idx = cg.const(self.store.get_index(step.relation, step.keypos), "ix")
                key = "(" + "".join(cg.expr(step.args[p]) + ", " for p in step.keypos) + ")"
                source = f"{idx}.get({key}, ())"
            else:
                source = cg.const(self.store.relation(step.relation), "rows")
            # Steps are counted as a loop begins, by its length (every source is sized): cheaper than per row.
            cg.emit(depth, f"src{i} = {source}")
            cg.emit(depth, f"n += len(src{i})")
            cg.emit(depth, "if n >= lim: lim = tick(n)")
            cg.emit(depth, f"for {row} in src{i}:")
            depth += 1
            for p in step.keypos:
                term_vars(step.args[p], bound)
            for p in step.rest:
                cg.match(step.args[p], f"{row}[{p}]", depth, bound)
            for c in step.checks:
                cg.check(c, depth, self.store.rows)
        head_row = "(" + "".join(cg.expr(t) + ", " for t in rule.head[1:]) + ")"
        cg.emit(depth, f"h = {head_row}")
        cg.emit(depth, "if h not in current: new.add(h)")
        if keep:
            dyn = self.dynamic_relations
            pos = [lit.atom for lit in rule.body if lit.kind == "pos" and str(lit.atom[0]) in dyn]
            neg = [lit.atom for lit in rule.body if lit.kind == "neg" and str(lit.atom[0]) in dyn]
            pos_e = "(" + "".join(cg.expr(a) + ", " for a in pos) + ")"
            neg_e = "(" + "".join(cg.expr(a) + ", " for a in neg) + ")"
            cg.emit(depth, f"k = (h, {pos_e}, {neg_e})")
            cg.emit(depth, "if k not in seen:")
            cg.emit(depth + 1, "seen.add(k)")
            cg.emit(depth + 1, "kept.append(k)")
        cg.consts["current"] = self.store.relation(str(rule.head[0]))
        cg.emit(1, "return n")
        source = "def run(delta, new, seen, kept, tick, lim):\n" + "\n".join(cg.lines) + "\n"
        namespace: dict[str, Any] = dict(cg.consts)
        exec(compile(source, f"<gdl rule line {rule.line}>", "exec"), namespace)
        return namespace["run"]

    # --- evaluation ---------------------------------------------------------------------------
    def _fixpoint(
        self, rules: list[Rule], recursive: set[str], skip_neg: set[str], keep: list[GroundRule] | None
    ) -> None:
        """Semi-naive evaluation of ``rules``, whose heads are the relations ``recursive``."""
        keeping = keep is not None
        full = [(str(r.head[0]), r.line, self._compile(_make_plan(r, None, skip_neg), keeping)) for r in rules]
        by_delta: dict[str, list[tuple[str, int, Any]]] = {}
        for r in rules:
            for lit in r.body:
                if lit.kind == "pos" and str(lit.atom[0]) in recursive:
                    fn = self._compile(_make_plan(r, lit, skip_neg), keeping)
                    by_delta.setdefault(str(lit.atom[0]), []).append((str(r.head[0]), r.line, fn))
        seen: dict[str, set[Any]] = {}
        kept: list[Any] = []
        new: dict[str, set[Row]] = {}
        self.budget.size = lambda: self.store.count + len(kept) + sum(len(rows) for rows in new.values())

        def run(rel: str, line: int, fn: Any, delta: list[Row] | None) -> None:
            start = len(kept)
            budget = self.budget
            used = fn(delta, new.setdefault(rel, set()), seen.setdefault(rel, set()), kept, budget.tick, budget.limit())
            budget.spend(used)
            if keep is not None:
                for k in range(start, len(kept)):
                    h, pos, neg = kept[k]
                    keep.append(GroundRule((rel, *h), pos, neg, line))
                if len(keep) + self.store.count > MAX_ATOMS:
                    raise too_large(self.where)

        for rel, line, fn in full:
            run(rel, line, fn, None)
        rounds = 0
        while any(new.values()):
            delta = self._commit(new)
            rounds += 1
            if rounds > 100 and any(_depth(row) > MAX_DEPTH for rows in delta.values() for row in rows):
                raise too_large(self.where)
            new = {}
            for rel, rows in delta.items():
                for head_rel, line, fn in by_delta.get(rel, ()):
                    run(head_rel, line, fn, rows)

    def _commit(self, new: dict[str, set[Row]]) -> dict[str, list[Row]]:
        delta: dict[str, list[Row]] = {}
        for rel, rows in new.items():
            added = [row for row in rows if self.store.add(rel, row)]
            if added:
                delta[rel] = added
        if self.store.count > MAX_ATOMS:
            raise too_large(self.where)
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
            if rules:
                self._fixpoint(rules, members, set(), None)
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
        dyn_rules = [r for rel in sorted(dyn) for r in by_head.get(rel, ())]
        kept: list[GroundRule] = []
        self._fixpoint(dyn_rules + bridge, dyn | {"true", "does"}, dyn | {"true", "does"}, kept)
        dynamic = {rel: self.store.rows.get(rel, set()) for rel in dyn | {"true", "does"}}
        # (negated atoms that can never hold are dropped when the propnet is built)
        rules_out = [gr for gr in kept if gr.line != 0]  # not the bridge rules
        return GroundProgram(program.roles, static, dynamic, rules_out)


def ground(program: Program) -> GroundProgram:
    """The ground program of a checked rule sheet; :class:`GDLLimitError` past a bound (see the module)."""
    return Grounder(program).ground()
