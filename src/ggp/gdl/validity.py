"""Checking that a read rule sheet is GDL, and the relation graphs those checks (and the engines) use.

:func:`check_program` runs, on the rules :mod:`ggp.gdl.parser` read, the checks that make a sheet GDL: its roles,
safe rules, stratified negation, the restrictions on ``true``, ``does``, ``init`` and ``next``, and goal values
every role can reach. Each problem is a :class:`~ggp.gdl.sheet.GDLError` naming the line. The graph helpers
(:func:`strongly_connected`, :func:`rule_components`, :func:`reaches`) are shared with the grounder and the
propositional network.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import TypeVar

from ..core.kif import Term
from .gdl_ii import lower_gdl_ii
from .sheet import GDLError, Program, Rule, show, show_atom, term_vars

N = TypeVar("N", bound=Hashable)


def check_program(program: Program, where: str) -> None:
    """Check a read sheet is GDL (and set its roles); raises :class:`GDLError` naming the line of the problem."""
    lower_gdl_ii(program, where)
    _check_roles(program, where)
    _check_safety(program, where)
    _check_stratified(program, where)
    _check_gdl_restrictions(program, where)
    _check_goals(program, where)


def _fail(where: str, line: int, what: str) -> GDLError:
    return GDLError(f"{where}line {line}: {what}", line)


def _check_goals(program: Program, where: str) -> None:
    """Every role has a goal rule, and every goal value a rule gives as a constant is an integer 0 to 100 (the
    values rules compute are checked when they are found)."""
    sp = program.spelling
    goals = [rule for rule in program.rules if rule.relation == "goal"]
    for rule in goals:
        value = rule.head[2]
        if (
            isinstance(value, str)
            and not value.startswith("?")
            and not (value.isdigit() and len(value.lstrip("0")) <= 3 and int(value) <= 100)
        ):
            shown = value if len(value) <= 20 else f"{value[:20]}... ({len(value)} characters)"
            raise _fail(where, rule.line, f"goal value {sp.get(value, shown)} is not an integer from 0 to 100")
        if not isinstance(value, str):
            raise _fail(where, rule.line, f"goal value {show(value, sp)} is not an integer from 0 to 100")
    ends = any(rule.relation == "terminal" for rule in program.rules)
    for role in program.roles if ends else ():  # a game that never ends needs no goals
        if not any(_unifies(("goal", role, "?v"), rule.head) for rule in goals):
            raise GDLError(
                f"{where}no 'goal' rule can give role {sp.get(role, role)} a value: the game's end would "
                "leave it without one (every role needs a goal value in every terminal state)"
            )


def _check_roles(program: Program, where: str) -> None:
    roles: list[str] = []
    for rule in program.rules:
        if rule.relation != "role":
            continue
        if rule.body:
            raise _fail(where, rule.line, "'role' must be given by facts such as (role white), not by rules")
        r = rule.head[1]
        if not isinstance(r, str) or r.startswith("?"):
            raise _fail(where, rule.line, f"a role must be a symbol, not {show(r)}")
        if r in roles:
            raise _fail(where, rule.line, f"role {program.spelling.get(r, r)} is declared twice")
        roles.append(r)
    if not roles:
        raise GDLError(f"{where}the rule sheet declares no role (a fact such as (role white))")
    program.roles = tuple(roles)


def _check_safety(program: Program, where: str) -> None:
    sp = program.spelling
    for rule in program.rules:
        bound: set[str] = set()
        for lit in rule.body:
            if lit.kind == "pos":
                term_vars(lit.atom, bound)
        unbound = sorted(term_vars(rule.head) - bound)
        if unbound:
            place = "the head" if rule.body else "a fact"
            raise _fail(
                where,
                rule.line,
                f"unsafe rule for {show_atom(rule.head, sp)}: variable {unbound[0]} appears in {place} "
                "but in no positive literal of the body",
            )
        for lit in rule.body:
            if lit.kind == "pos":
                continue
            unbound = sorted(term_vars(lit.atom) - bound)
            if unbound:
                raise _fail(
                    where,
                    lit.line,
                    f"unsafe rule for {show_atom(rule.head, sp)}: variable {unbound[0]} in {lit.text(sp)} "
                    "appears in no positive literal of the body",
                )


def _dependencies(program: Program) -> dict[str, list[tuple[str, bool, int]]]:
    """relation -> [(relation it uses, through negation?, line)]."""
    deps: dict[str, list[tuple[str, bool, int]]] = {}
    for rule in program.rules:
        out = deps.setdefault(rule.relation, [])
        for lit in rule.body:
            if lit.kind in ("pos", "neg"):
                out.append((str(lit.atom[0]), lit.kind == "neg", lit.line))
    return deps


def strongly_connected(nodes: Sequence[N], edges: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """Tarjan's SCCs, iteratively; components come out dependencies first."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    out: list[list[N]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[N, Iterator[N]]] = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)
    return out


def _check_stratified(program: Program, where: str) -> None:
    deps = _dependencies(program)
    nodes = sorted(set(deps) | {d for ds in deps.values() for d, _, _ in ds})
    edges = {h: [d for d, _, _ in ds] for h, ds in deps.items()}
    sp = program.spelling
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        by_head.setdefault(rule.relation, []).append(rule)
    for comp in strongly_connected(nodes, edges):
        members = set(comp)
        if not any(negative and dep in members for head in comp for dep, negative, _ in deps.get(head, ())):
            continue
        # Recursion through 'not' among relations may still be stratified once arguments are considered:
        # (<= (goal r 100) (not (goal r 0))) negates another atom of goal, never itself. Look again, rule by rule.
        rules = [r for head in sorted(members) for r in by_head.get(head, ())]
        for group in rule_components(rules):
            in_group = {id(r) for r in group}
            for rule in group:
                for lit in rule.body:
                    if lit.kind != "neg" or lit.atom[0] not in members:
                        continue
                    if any(id(other) in in_group and _unifies(lit.atom, other.head) for other in by_head[lit.atom[0]]):
                        head, dep = rule.relation, str(lit.atom[0])
                        cycle = " -> ".join(sp.get(c, c) for c in sorted({r.relation for r in group}))
                        raise _fail(
                            where,
                            lit.line,
                            f"unstratified negation: {sp.get(head, head)} depends on (not {sp.get(dep, dep)}), "
                            f"which depends on {sp.get(head, head)} again (recursion through 'not' among: {cycle}, at {lit.text(sp)})",
                        )


def rule_components(rules: Sequence[Rule]) -> list[list[Rule]]:
    """``rules`` in groups that can be evaluated one after the other, dependencies first.

    A rule depends on the rules whose head unifies with one of its body literals
    (variables renamed apart), so two rules of one relation depend on each other
    only when their atoms can meet: ``(goal ?r 0)`` does not depend on a rule for
    ``(goal ?r 100)``. A group is a strongly connected set of rules.
    """
    by_head: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        by_head.setdefault(rule.relation, []).append(i)
    edges: dict[int, list[int]] = {}
    for i, rule in enumerate(rules):
        out = edges.setdefault(i, [])
        for lit in rule.body:
            if lit.kind in ("pos", "neg"):
                out.extend(j for j in by_head.get(str(lit.atom[0]), ()) if _unifies(lit.atom, rules[j].head))
    return [[rules[i] for i in sorted(comp)] for comp in strongly_connected(range(len(rules)), edges)]


def _unifies(a: Term, b: Term) -> bool:
    """Whether two atoms (or terms) with their variables renamed apart have a common instance."""
    subst: dict[str, Term] = {}

    def walk(t: Term) -> Term:
        while isinstance(t, str) and t in subst:
            t = subst[t]
        return t

    def occurs(v: str, t: Term) -> bool:
        t = walk(t)
        if isinstance(t, str):
            return t == v
        return any(occurs(v, x) for x in t)

    # the left side's variables get a mark no symbol of a sheet can have (tokens hold no spaces)
    todo: list[tuple[Term, Term]] = [(_rename(a), b)]
    while todo:
        x, y = todo.pop()
        x, y = walk(x), walk(y)
        if x == y:
            continue
        if isinstance(x, str) and x.startswith("?"):
            if occurs(x, y):
                return False
            subst[x] = y
        elif isinstance(y, str) and y.startswith("?"):
            if occurs(y, x):
                return False
            subst[y] = x
        elif isinstance(x, str) or isinstance(y, str) or len(x) != len(y):
            return False
        else:
            todo.extend(zip(x, y, strict=True))
    return True


def _rename(t: Term) -> Term:
    if isinstance(t, str):
        return t + " 1" if t.startswith("?") else t
    return tuple(_rename(x) for x in t)


def reaches(program: Program, targets: set[str]) -> set[str]:
    """The relations that depend, directly or not, on one of ``targets``."""
    users: dict[str, set[str]] = {}  # relation -> the relations whose rules use it
    for head, ds in _dependencies(program).items():
        for dep, _, _ in ds:
            users.setdefault(dep, set()).add(head)
    found = set(targets)
    todo = list(targets)
    while todo:  # one visit per relation: a long chain of rules takes linear time
        for user in users.get(todo.pop(), ()):
            if user not in found:
                found.add(user)
                todo.append(user)
    return found


def _check_gdl_restrictions(program: Program, where: str) -> None:
    sp = program.spelling
    on_does = reaches(program, {"does"})
    on_state = reaches(program, {"true", "does", "legal", "goal", "terminal"})
    for rule in program.rules:
        rel = rule.relation
        if rel in ("legal", "goal", "terminal"):
            for lit in rule.body:
                if lit.kind in ("pos", "neg") and lit.atom[0] in on_does:
                    raise _fail(
                        where,
                        lit.line,
                        f"'{sp.get(rel, rel)}' must not depend on 'does' (through {lit.text(sp)}): "
                        "legality, goals and termination are properties of a state, not of moves",
                    )
        if rel == "init":
            for lit in rule.body:
                if lit.kind in ("pos", "neg") and lit.atom[0] in on_state:
                    raise _fail(
                        where, lit.line, f"'init' must not depend on the state or the moves (through {lit.text(sp)})"
                    )
