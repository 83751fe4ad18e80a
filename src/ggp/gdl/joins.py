"""Join plans for the grounder (:mod:`ggp.gdl.grounder`): the index keys of a literal, the order a rule's
literals are joined in, the relations with their hash indexes, and the Python source of one plan's loops."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..core.kif import Term
from .sheet import GDLError, Literal, Rule, term_vars

#: A row of a relation: its arguments.
Row = tuple[Term, ...]

#: A place in a row: the argument's index, then the indices down into its function terms.
Path = tuple[int, ...]


@dataclass(frozen=True)
class Key:
    """What an index looks up: the rows whose terms have the function terms ``shapes`` (path, length) and,
    at the paths ``paths``, the key's values.

    ``(true (cell ?x 3 ?p))`` with ``?x`` bound looks up ``true`` rows whose argument is a function term of
    length 4 and whose values at (0, 0), (0, 1) and (0, 2) are ``cell``, ``?x``'s value and ``3``: a literal is
    indexed inside its function terms, not only on its whole arguments, so that the rows of ``true`` and
    ``does`` are found by their functor and bound arguments instead of being scanned.
    """

    shapes: tuple[tuple[Path, int], ...]
    paths: tuple[Path, ...]


def key_of(args: tuple[Term, ...], bound: set[str]) -> tuple[Key, tuple[Term, ...]]:
    """The index key of a literal with arguments ``args`` when the variables ``bound`` are bound, and the
    terms (ground given ``bound``) whose values the key holds."""
    shapes: list[tuple[Path, int]] = []
    paths: list[Path] = []
    terms: list[Term] = []

    def visit(term: Term, path: Path) -> None:
        if term_vars(term) <= bound:
            paths.append(path)
            terms.append(term)
        elif not isinstance(term, str):
            shapes.append((path, len(term)))
            for i, sub in enumerate(term):
                visit(sub, (*path, i))

    for p, arg in enumerate(args):
        visit(arg, (p,))
    return Key(tuple(shapes), tuple(paths)), tuple(terms)


_extractors: dict[Key, Callable[[Row], Row | None]] = {}


def extractor(key: Key) -> Callable[[Row], Row | None]:
    """``row -> the row's key``, or None for a row without the key's shapes (it matches no literal with it)."""
    fn = _extractors.get(key)
    if fn is None:

        def at(path: Path) -> str:
            return "r" + "".join(f"[{i}]" for i in path)

        lines = ["def key(r):"]
        for path, length in sorted(key.shapes, key=lambda s: len(s[0])):  # parents before children
            lines.append(f"    x = {at(path)}")
            lines.append(f"    if x.__class__ is not tuple or len(x) != {length}: return None")
        lines.append("    return (" + "".join(at(p) + ", " for p in key.paths) + ")")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(lines) + "\n", "<gdl index key>", "exec"), namespace)
        fn = _extractors[key] = namespace["key"]
    return fn


@dataclass
class Step:
    index: int  # of the literal in the rule's body
    relation: str
    args: tuple[Term, ...]
    key: Key  # how the step's rows are looked up (an empty key: every row)
    key_terms: tuple[Term, ...]  # the terms the key's values are computed from
    checks: tuple[Literal, ...]  # literals decidable once this step has matched


@dataclass
class Plan:
    rule: Rule
    delta: int  # index of the step fed from the delta (-1: none)
    pre: tuple[Literal, ...]  # checks decidable before any step (ground literals)
    steps: tuple[Step, ...]


def make_plan(
    rule: Rule,
    first: Literal | None,
    skip_neg: set[str],
    estimate: Callable[[str, Key], float | None],
    given: frozenset[str] = frozenset(),
) -> Plan:
    """A join order for ``rule``: ``first`` (the delta literal) first, then greedily the most selective
    literal: one whose variables are all bound (a lookup), then the one expected to give the fewest rows.

    ``estimate(relation, key)`` is the rows a lookup with ``key`` is expected to give (None: unknown, the
    relation has no rows yet). Negated literals of relations in ``skip_neg`` are left out (the relaxation).
    The variables ``given`` are bound before the first step.
    """
    positives = [lit for lit in rule.body if lit.kind == "pos"]
    checks = [
        lit
        for lit in rule.body
        if lit.kind in ("distinct", "same") or (lit.kind == "neg" and str(lit.atom[0]) not in skip_neg)
    ]
    bound: set[str] = set(given)
    pending = [c for c in checks if not term_vars(c.atom) <= bound]
    pre = tuple(c for c in checks if term_vars(c.atom) <= bound)
    steps: list[Step] = []
    remaining = list(positives)

    def score(lit: Literal) -> tuple[int, float, int]:
        free = term_vars(lit.atom) - bound
        if not free:
            return (0, 0.0, 0)
        key, _ = key_of(lit.atom[1:], bound)
        rows = estimate(str(lit.atom[0]), key)
        # a relation still empty (being derived) is assumed large, the more so the more it leaves free
        return (1, rows if rows is not None else 10.0 ** min(len(free), 6), len(free))

    while remaining:
        lit = first if first is not None and not steps else min(remaining, key=score)
        remaining.remove(lit)
        key, terms = key_of(lit.atom[1:], bound)
        term_vars(lit.atom, bound)
        ready = tuple(c for c in pending if term_vars(c.atom) <= bound)
        pending = [c for c in pending if c not in ready]
        steps.append(Step(rule.body.index(lit), str(lit.atom[0]), tuple(lit.atom[1:]), key, terms, ready))
    if pending:  # pragma: no cover - safety is checked by the parser
        raise GDLError(f"line {rule.line}: unsafe rule", rule.line)
    return Plan(rule, 0 if first is not None else -1, pre, tuple(steps))


class Store:
    """Relations with hash indexes (see :class:`Key`), kept up to date as rows are added."""

    def __init__(self) -> None:
        self.rows: dict[str, set[Row]] = {}
        self.index: dict[str, dict[Key, tuple[Callable[[Row], Row | None], dict[Row, list[Row]]]]] = {}
        self.stats: dict[tuple[str, Key], tuple[int, float]] = {}  # (rows counted, average lookup)
        self.count = 0

    def relation(self, relation: str) -> set[Row]:
        return self.rows.setdefault(relation, set())

    def add(self, relation: str, row: Row) -> bool:
        rows = self.rows.setdefault(relation, set())
        if row in rows:
            return False
        rows.add(row)
        self.count += 1
        for extract, idx in self.index.get(relation, {}).values():
            key = extract(row)
            if key is not None:
                found = idx.get(key)
                if found is None:
                    idx[key] = [row]
                else:
                    found.append(row)
        return True

    def estimate(self, relation: str, key: Key) -> float | None:
        """The rows a lookup of ``relation`` with ``key`` gives on average, now (None if it has no rows)."""
        rows = self.rows.get(relation)
        if not rows:
            return None
        cached = self.stats.get((relation, key))
        # worked out again once the relation has grown by a quarter (each time it grew, the rows of a large
        # relation were all looked at again: most of a large grounding's time went to its estimates)
        if cached is None or (len(rows) != cached[0] and (len(rows) < 1024 or len(rows) > cached[0] * 1.25)):
            extract = extractor(key)
            keys = [extract(row) for row in rows]
            matched = [k for k in keys if k is not None]
            cached = self.stats[(relation, key)] = (len(rows), len(matched) / max(1, len(set(matched))))
        return cached[1]

    def get_index(self, relation: str, key: Key) -> dict[Row, list[Row]]:
        by_rel = self.index.setdefault(relation, {})
        entry = by_rel.get(key)
        if entry is None:
            entry = by_rel[key] = (extractor(key), partition(self.rows.get(relation, ()), key))
        return entry[1]


def partition(rows: Iterable[Row], key: Key) -> dict[Row, list[Row]]:
    """``rows`` by their ``key`` (rows without its shapes left out)."""
    extract = extractor(key)
    out: dict[Row, list[Row]] = {}
    for row in rows:
        k = extract(row)
        if k is not None:
            found = out.get(k)
            if found is None:
                out[k] = [row]
            else:
                found.append(row)
    return out


class Codegen:
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

    def match(self, pattern: Term, value: str, depth: int, bound: set[str], path: Path, key: Key) -> None:
        """Lines that ``continue`` unless ``value`` matches ``pattern``; binds new variables. What the index
        ``key`` the row was found by guarantees (its shapes and values) is not checked again."""
        if path in key.paths:
            return
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
        if (path, len(pattern)) not in key.shapes:
            self.emit(depth, f"if {t}.__class__ is not tuple or len({t}) != {len(pattern)}: continue")
        for i, sub in enumerate(pattern):
            self.match(sub, f"{t}[{i}]", depth, bound, (*path, i), key)

    def check(self, lit: Literal, depth: int, static_rows: dict[str, set[Row]]) -> None:
        if lit.kind == "distinct":
            self.emit(depth, f"if {self.expr(lit.atom[0])} == {self.expr(lit.atom[1])}: continue")
        elif lit.kind == "same":
            self.emit(depth, f"if {self.expr(lit.atom[0])} != {self.expr(lit.atom[1])}: continue")
        else:
            rows = self.const(static_rows.setdefault(str(lit.atom[0]), set()), "s")
            row = "(" + "".join(self.expr(t) + ", " for t in lit.atom[1:]) + ")"
            self.emit(depth, f"if {row} in {rows}: continue")


def term_at(term: Term, path: Path) -> Term | None:
    """The subterm of ``term`` at ``path`` (None if ``term`` has no function term on the way there)."""
    for i in path:
        if isinstance(term, str) or i >= len(term):
            return None
        term = term[i]
    return term
