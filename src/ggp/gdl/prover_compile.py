"""Rule bodies compiled to Python for the top-down prover (:mod:`ggp.gdl.prover`).

A subgoal reaches a relation's rules as a *key*: the atom with its variables
renamed canonically (``?\\x000``, ``?\\x001``, ... in order of appearance). Its
*template* says which parts of it are ground (``#``) and where its variables
are, e.g. ``("cell", "#", "?\\x000", "#")``. For each rule and template this
module writes one Python function that

- matches the rule's head against the key's ground parts (comparisons of the
  key's items with constants and with each other; no unification, no
  substitution: each rule variable is a Python local),
- proves the body in the order the prover picks for the variables the head
  binds, each literal a loop or a test: ``true`` over the state's facts
  indexed by functor (and first argument), ``does`` over the joint move, other
  relations through the prover's tables with a key built in place (its
  answers give the new variables by position, as they are instances of the
  key), negation and ``distinct`` as tests,
- adds the head, built from the locals, to the subgoal's answers.

A call site's template is known when it is compiled (which variables are bound
there is), so a body calls the table of the relation it names with a template
number fixed in the code. Rules the compiler does not handle (a head variable
met against a key's term that is not ground, a variable shared by two of a
key's variables, a body too deeply nested for Python) fall back to the generic
resolution of the prover; :func:`compile_rule` then returns None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.kif import Term
from .sheet import Literal, Rule

#: A template's mark for a ground part of a key.
G = "#"


def is_var(t: Term) -> bool:
    return isinstance(t, str) and t[:1] == "?"


def ground(t: Term) -> bool:
    if isinstance(t, str):
        return t[:1] != "?"
    return all(ground(x) for x in t)


def template(t: Term) -> Term:
    """A runtime key's template (the key is canonical): its ground parts replaced by :data:`G`."""
    if isinstance(t, str):
        return t if t[:1] == "?" else G
    if ground(t):
        return G
    return tuple(template(x) for x in t)


def key_template(key: tuple[Term, ...]) -> tuple[Term, ...]:
    return (key[0], *(template(x) for x in key[1:]))


def canon_name(k: int) -> str:
    return f"?\x00{k}"


class Unsupported(Exception):
    """The rule falls back to the generic resolution for this template."""


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1
        self.consts: dict[str, Any] = {}

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def const(self, value: Any, hint: str) -> str:
        name = f"{hint}{len(self.consts)}"
        self.consts[name] = value
        return name


def match_ground(pat: Term, x: str, slots: dict[str, str], conds: list[str], assigns: list[tuple[str, str]]) -> None:
    """Conditions (``conds``) under which the ground value of expression ``x`` matches ``pat``, a term over rule
    variables; ``slots`` maps the bound variables to their locals, and gains the ones ``pat`` binds (their
    assignments in ``assigns``, done after the conditions hold)."""
    if isinstance(pat, str):
        if pat[:1] == "?":
            if pat in slots:
                conds.append(f"{x} == {slots[pat]}")
            else:
                slots[pat] = x  # the expression itself until assigned (conditions after this one may use it)
                assigns.append((pat, x))
        else:
            conds.append(f"{x} == {pat!r}")
        return
    conds.append(f"{x}.__class__ is tuple and len({x}) == {len(pat)}")
    for i, sub in enumerate(pat):
        match_ground(sub, f"{x}[{i}]", slots, conds, assigns)


def build(t: Term, slots: dict[str, str]) -> str:
    """The expression of a term whose variables are all bound."""
    if isinstance(t, str):
        if t[:1] == "?":
            return slots[t]
        return repr(t)
    return "(" + "".join(build(x, slots) + ", " for x in t) + ")"


def term_vars_in_order(t: Term, out: list[str]) -> list[str]:
    if isinstance(t, str):
        if t[:1] == "?" and t not in out:
            out.append(t)
    else:
        for x in t:
            term_vars_in_order(x, out)
    return out


class RuleCompiler:
    """Writes the function of one rule for one template (see the module's docstring)."""

    def __init__(
        self,
        rule: Rule,
        tpl: tuple[Term, ...],
        order_for: Callable[[frozenset[str]], list[Literal]],
        site: Callable[[str, tuple[Term, ...]], tuple[int, str]],
        deep: bool,
    ) -> None:
        self.rule = rule
        self.tpl = tpl
        self.order_for = order_for
        self.site = site  # (relation, template) -> (template number, which table: "ST", "SS" or "DT")
        self.deep = deep
        self.w = _Writer()
        self.slots: dict[str, str] = {}
        self.n = 0

    def fresh(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def bind(self, assigns: list[tuple[str, str]]) -> None:
        for var, expr in assigns:
            name = self.fresh("v")
            self.w.emit(f"{name} = {expr}")
            self.slots[var] = name

    def head(self) -> None:
        """Match the head against the key: conditions on the key's ground parts, return when they fail."""
        conds: list[str] = []
        assigns: list[tuple[str, str]] = []
        seen_keyvars: set[str] = set()
        head = self.rule.head

        def walk(h: Term, tp: Term, x: str) -> None:
            if tp == G:
                match_ground(h, x, self.slots, conds, assigns)
                return
            if isinstance(tp, str):  # a variable of the key: the head's term there is the answer's
                if tp in seen_keyvars:
                    raise Unsupported("a key variable met twice")
                seen_keyvars.add(tp)
                return
            # a key term that is not ground
            if isinstance(h, str):
                if h[:1] == "?":
                    raise Unsupported("a head variable against a non-ground key term")
                conds.append("False")  # a constant never matches a compound
                return
            if len(h) != len(tp):
                conds.append("False")
                return
            for i, (hs, ts) in enumerate(zip(h, tp, strict=True)):
                walk(hs, ts, f"{x}[{i}]")

        if len(head) != len(self.tpl):
            conds.append("False")
        else:
            for i in range(1, len(head)):
                walk(head[i], self.tpl[i], f"key[{i}]")
        if conds:
            self.w.emit(f"if not ({' and '.join(conds)}):")
            self.w.emit("    return")
        self.bind(assigns)

    def body(self) -> None:
        order = self.order_for(frozenset(self.slots))
        for lit in order:
            self.literal(lit)
        head = self.rule.head
        missing = [v for v in term_vars_in_order(head, []) if v not in self.slots]
        if missing:
            raise Unsupported("an unsafe head")
        self.w.emit(f"a = {build(head, self.slots)}")
        self.w.emit("if a not in seen:")
        self.w.depth += 1
        if self.deep:
            self.w.emit("DEEP(key, a)")
        self.w.emit("seen.add(a)")
        self.w.emit("ans.append(a)")
        self.w.emit("if not len(ans) & 4095:")
        self.w.emit("    CHECK(len(ans))")
        self.w.depth -= 1

    def literal(self, lit: Literal) -> None:
        w = self.w
        names = term_vars_in_order(lit.atom, [])
        unbound = [v for v in names if v not in self.slots]
        if lit.kind in ("distinct", "same"):
            if unbound:
                raise Unsupported(f"{'distinct' if lit.kind == 'distinct' else '='} over unbound variables")
            op = "!=" if lit.kind == "distinct" else "=="
            w.emit(f"if {build(lit.atom[0], self.slots)} {op} {build(lit.atom[1], self.slots)}:")
            w.depth += 1
            return
        rel = str(lit.atom[0])
        if lit.kind == "neg":
            if unbound:
                raise Unsupported("a negation over unbound variables")
            if rel == "true":
                w.emit(f"if {build(lit.atom[1], self.slots)} not in facts:")
            elif rel == "does":
                w.emit(f"if does.get({build(lit.atom[1], self.slots)}) != {build(lit.atom[2], self.slots)}:")
            else:
                self.call(lit.atom, rel, [], positive=False)
                w.emit(f"if not {self.last}:")
            w.depth += 1
            return
        if rel == "true" and len(lit.atom) == 2:
            self.true(lit.atom[1], unbound)
            return
        if rel == "does" and len(lit.atom) == 3:
            self.does(lit.atom, unbound)
            return
        self.call(lit.atom, rel, unbound)

    def true(self, pat: Term, unbound: list[str]) -> None:
        w = self.w
        if not unbound:
            w.emit(f"if {build(pat, self.slots)} in facts:")
            w.depth += 1
            return
        f = self.fresh("f")
        if isinstance(pat, tuple) and not is_var(pat[0]):
            if len(pat) > 1 and ground_under(pat[1], self.slots):
                w.emit(f"for {f} in by_first.get(({pat[0]!r}, {build(pat[1], self.slots)}), ()):")
            else:
                w.emit(f"for {f} in by_functor.get({pat[0]!r}, ()):")
        else:
            w.emit(f"for {f} in facts:")
        w.depth += 1
        self.matched(pat, f)

    def matched(self, pat: Term, x: str) -> None:
        conds: list[str] = []
        assigns: list[tuple[str, str]] = []
        match_ground(pat, x, self.slots, conds, assigns)
        if conds:
            self.w.emit(f"if {' and '.join(conds)}:")
            self.w.depth += 1
        self.bind(assigns)

    def does(self, atom: tuple[Term, ...], unbound: list[str]) -> None:
        w = self.w
        role, move = atom[1], atom[2]
        if ground_under(role, self.slots):
            m = self.fresh("m")
            w.emit(f"{m} = does.get({build(role, self.slots)})")
            if not unbound:
                w.emit(f"if {m} == {build(move, self.slots)}:")
                w.depth += 1
                return
            w.emit(f"if {m} is not None:")
            w.depth += 1
            self.matched(move, m)
            return
        pair = self.fresh("d")
        w.emit(f"for {pair} in does.items():")
        w.depth += 1
        self.matched(("does", role, move), f"('does', *{pair})")

    def call(self, atom: tuple[Term, ...], rel: str, unbound: list[str], positive: bool = True) -> None:
        """Ask the table of ``atom``'s relation; loop over its answers binding ``unbound``."""
        w = self.w
        canon: dict[str, str] = {}
        paths: dict[str, str] = {}

        def walk(t: Term, path: str) -> tuple[str, Term]:
            if isinstance(t, str):
                if t[:1] != "?":
                    return repr(t), G
                if t in self.slots:
                    return self.slots[t], G
                if t not in canon:
                    canon[t] = canon_name(len(canon))
                    paths[t] = path
                return repr(canon[t]), canon[t]
            parts = [walk(x, f"{path}[{i}]") for i, x in enumerate(t)]
            tp = tuple(p[1] for p in parts)
            expr = "(" + "".join(p[0] + ", " for p in parts) + ")"
            return expr, (G if all(p == G for p in tp) else tp)

        exprs: list[str] = [repr(rel)]
        tpl: list[Term] = [rel]
        for i, x in enumerate(atom[1:], 1):
            e, tp = walk(x, f"[{i}]")
            exprs.append(e)
            tpl.append(tp)
        tid, table = self.site(rel, tuple(tpl))
        k = self.fresh("k")
        e = self.fresh("e")
        answers = self.fresh("A")
        w.emit(f"{k} = ({''.join(x + ', ' for x in exprs)})")
        w.emit(f"{e} = {table}.get({k})")
        w.emit(f"{answers} = {e}.answers if {e} is not None and {e}.complete else SOLVE({k}, {tid}, ctx)")
        self.last = answers
        if not canon:  # a ground literal: a test (a negation's caller writes its own)
            if positive:
                w.emit(f"if {answers}:")
                w.depth += 1
            return
        a = self.fresh("a")
        w.emit(f"for {a} in {answers}:")
        w.depth += 1
        self.bind([(var, f"{a}{paths[var]}") for var in canon])

    last = ""

    def source(self, name: str) -> str:
        head = [f"def {name}(key, ctx, seen, ans):"]
        pre = [
            "    facts = ctx.facts",
            "    by_functor = ctx.by_functor",
            "    by_first = ctx.by_first",
            "    does = ctx.does",
            "    SS = ctx.state_table",
            "    DT = ctx.table",
        ]
        return "\n".join(head + pre + self.w.lines) + "\n"


def ground_under(t: Term, slots: dict[str, str]) -> bool:
    if isinstance(t, str):
        return t[:1] != "?" or t in slots
    return all(ground_under(x, slots) for x in t)


def deep_head(rule: Rule) -> bool:
    """Whether the head has a variable inside a compound argument (its answers may nest deeper than its body's)."""

    def has_var(t: Term) -> bool:
        return is_var(t) if isinstance(t, str) else any(has_var(x) for x in t)

    return any(isinstance(x, tuple) and has_var(x) for x in rule.head[1:])


def compile_rule(
    rule: Rule,
    tpl: tuple[Term, ...],
    order_for: Callable[[frozenset[str]], list[Literal]],
    site: Callable[[str, tuple[Term, ...]], tuple[int, str]],
    env: dict[str, Any],
    recursive: bool = True,
) -> Callable[..., None] | None:
    """The function proving ``rule`` for keys of template ``tpl``, or None (the generic resolution does it).

    ``recursive``: the rule may build ever deeper terms (its relation is in a cycle, or it is ``next``), so each
    answer's depth is checked when its head puts a variable inside a compound term.
    """
    c = RuleCompiler(rule, tpl, order_for, site, recursive and deep_head(rule))
    try:
        c.head()
        c.body()
        text = c.source("rule")
        scope: dict[str, Any] = dict(env)
        exec(compile(text, f"<rule {rule.relation} line {rule.line}>", "exec"), scope)
    except (Unsupported, SyntaxError, RecursionError, MemoryError):
        return None
    fn: Callable[..., None] = scope["rule"]
    fn.__doc__ = text  # the source, for a reader in a debugger
    return fn


def compile_facts(facts: list[tuple[Term, ...]], tpl: tuple[Term, ...]) -> Callable[..., None]:
    """The function adding the facts (ground heads) that match keys of template ``tpl``."""
    conds: list[str] = []
    keyvars: dict[str, str] = {}

    def walk(tp: Term, x: str, kx: str) -> None:
        if tp == G:
            conds.append(f"{x} == {kx}")
        elif isinstance(tp, str):
            if tp in keyvars:
                conds.append(f"{x} == {keyvars[tp]}")
            else:
                keyvars[tp] = x
        else:
            conds.append(f"{x}.__class__ is tuple and len({x}) == {len(tp)}")
            for i, sub in enumerate(tp):
                walk(sub, f"{x}[{i}]", f"{kx}[{i}]")

    arity = len(tpl)
    for i in range(1, arity):
        walk(tpl[i], f"f[{i}]", f"key[{i}]")
    by_first: dict[Term, list[tuple[Term, ...]]] = {}
    for f in facts:
        if len(f) == arity:
            by_first.setdefault(f[1] if arity > 1 else "", []).append(f)
    same_arity = [f for f in facts if len(f) == arity]
    cond = " and ".join(conds) or "True"
    loop = "for f in BY_FIRST.get(key[1], ()):" if arity > 1 and tpl[1] == G else "for f in FACTS:"
    text = (
        "def facts(key, ctx, seen, ans):\n"
        f"    {loop}\n"
        f"        if {cond} and f not in seen:\n"
        "            seen.add(f)\n"
        "            ans.append(f)\n"
    )
    scope: dict[str, Any] = {"BY_FIRST": by_first, "FACTS": same_arity}
    exec(compile(text, "<facts>", "exec"), scope)
    fn: Callable[..., None] = scope["facts"]
    return fn
