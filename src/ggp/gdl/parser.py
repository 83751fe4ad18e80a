"""Reading and checking GDL rule sheets.

A rule sheet is KIF text: facts ``(role white)`` and rules ``(<= head body...)``.
:func:`parse_program` reads it into :class:`Rule` values and checks that it is
GDL: well-formed sentences, consistent arities, safe rules, stratified negation
and the GDL restrictions on ``true``, ``does``, ``init`` and ``next``. Every
problem is a :class:`GDLError` naming the line.

Symbols compare without regard to case (``dropBomb`` is ``dropbomb``); internally
every symbol is lower case and :attr:`Program.spelling` keeps the sheet's first
spelling of each, so that moves and facts are shown as the sheet writes them.

>>> p = parse_program("(role x) (init (cell 1)) (<= (next (cell 2)) (TRUE (Cell 1)))")
>>> p.roles
('x',)
>>> [r.head for r in p.rules]
[('role', 'x'), ('init', ('cell', '1')), ('next', ('cell', '2'))]
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from ..core.errors import GGPError
from ..core.kif import Term, tokenize

N = TypeVar("N", bound=Hashable)

# A term is a symbol (str, lower case; variables start with '?') or a tuple
# (functor, arg, ...). An atom is a tuple (relation, arg, ...): ``('terminal',)``.
Atom = tuple[Term, ...]

#: Relations with a fixed meaning in GDL and their arities.
KEYWORD_ARITY = {
    "role": 1,
    "init": 1,
    "true": 1,
    "next": 1,
    "legal": 2,
    "does": 2,
    "goal": 2,
    "terminal": 0,
    "base": 1,
    "input": 2,
}
_CONNECTIVES = {"not", "or", "distinct", "<="}

#: How deeply parentheses may nest in a rule sheet (real sheets nest a dozen levels; this keeps the
#: recursive reading and grounding of terms far from Python's recursion limit).
MAX_NESTING = 100
#: Most conjunctions a rule's ``or`` literals may expand to.
MAX_CASES = 4096
#: The longest rule sheet read, in characters (a GGP message is at most 4 MiB; the largest sheet of the public
#: corpus is under 200 KB), and the longest symbol (a number of a thousand digits is no game's).
MAX_SHEET_CHARS = 16 * 1024 * 1024
MAX_SYMBOL = 1000


class GDLError(GGPError, ValueError):
    """A rule sheet that is not valid GDL, or a game that breaks GDL's promises in play.

    ``line`` is the 1-based line of the offending text when there is one.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class GDLLimitError(GDLError):
    """A rule sheet that could not be read or grounded within the bounds: too large, too much work, past the
    deadline of a :func:`bounded` block, or cancelled there."""


@dataclass(frozen=True)
class _Bounds:
    deadline: float | None = None
    cancel: threading.Event | None = None


_bounds = threading.local()


@contextlib.contextmanager
def bounded(deadline: float | None = None, cancel: threading.Event | None = None) -> Iterator[None]:
    """Within this block, reading and grounding rule sheets in this thread stop at ``deadline`` (a
    ``time.monotonic()`` value) or once ``cancel`` is set, raising :class:`GDLLimitError`."""
    previous = getattr(_bounds, "value", None)
    _bounds.value = _Bounds(deadline, cancel)
    try:
        yield
    finally:
        _bounds.value = previous


def check_bounds(where: str, doing: str) -> None:
    """Raise :class:`GDLLimitError` if the :func:`bounded` block this thread is in has ended its time."""
    bounds: _Bounds | None = getattr(_bounds, "value", None)
    if bounds is None:
        return
    if bounds.cancel is not None and bounds.cancel.is_set():
        raise GDLLimitError(f"{where}{doing} was cancelled")
    if bounds.deadline is not None and time.monotonic() > bounds.deadline:
        raise GDLLimitError(f"{where}{doing} did not finish in the time allowed")


def term_vars(term: Term, out: set[str] | None = None) -> set[str]:
    """The variables of a term (or atom)."""
    if out is None:
        out = set()
    if isinstance(term, str):
        if term.startswith("?"):
            out.add(term)
    else:
        for t in term:
            term_vars(t, out)
    return out


def show(term: Term, spelling: dict[str, str] | None = None) -> str:
    """KIF text of a term or atom, in the sheet's spelling when ``spelling`` is given."""
    if isinstance(term, str):
        return spelling.get(term, term) if spelling else term
    return "(" + " ".join(show(t, spelling) for t in term) + ")"


def show_atom(atom: Atom, spelling: dict[str, str] | None = None) -> str:
    """KIF text of an atom: a 0-ary atom such as ``('terminal',)`` reads as its name."""
    return show(atom[0], spelling) if len(atom) == 1 else show(atom, spelling)


@dataclass(frozen=True)
class Literal:
    """One conjunct of a rule body.

    ``kind`` is ``pos`` or ``neg`` (``atom`` holds the atom), or ``distinct`` or
    ``same`` (``(not (distinct a b))``; ``atom`` holds ``(a, b)``).
    """

    kind: str
    atom: Atom
    line: int

    def text(self, spelling: dict[str, str] | None = None) -> str:
        if self.kind == "pos":
            return show_atom(self.atom, spelling)
        if self.kind == "neg":
            return f"(not {show_atom(self.atom, spelling)})"
        if self.kind == "distinct":
            return f"(distinct {show(self.atom[0], spelling)} {show(self.atom[1], spelling)})"
        return f"(not (distinct {show(self.atom[0], spelling)} {show(self.atom[1], spelling)}))"


@dataclass(frozen=True)
class Rule:
    """``head <= body``, one conjunction (``or`` is expanded into several rules)."""

    head: Atom
    body: tuple[Literal, ...]
    line: int

    @property
    def relation(self) -> str:
        return str(self.head[0])


@dataclass
class Program:
    """A checked rule sheet."""

    rules: list[Rule]
    roles: tuple[str, ...]
    spelling: dict[str, str] = field(default_factory=dict)
    #: The sheet's first line defining each relation.
    defined_at: dict[str, int] = field(default_factory=dict)
    name: str = "gdl"


# --- reading ------------------------------------------------------------------------------------

# A term with its line: (symbol or list of located terms, line).
_Located = tuple["str | list[_Located]", int]


def _check_text(text: str, where: str) -> None:
    """A sheet is text of bounded size: not binary, not undecodable bytes smuggled in as surrogates."""
    if not isinstance(text, str):
        raise GDLError(f"{where}a rule sheet is text, not {type(text).__name__}")
    if len(text) > MAX_SHEET_CHARS:
        raise GDLLimitError(
            f"{where}the rule sheet is larger than {MAX_SHEET_CHARS // (1024 * 1024)} MiB ({len(text):,} characters)"
        )
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise GDLError(f"{where}line {line}: a rule sheet is text, but this one holds NUL bytes (is it binary?)", line)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise GDLError(
            f"{where}line {line}: a rule sheet must be UTF-8 text; this one holds bytes that are not UTF-8", line
        ) from None


def _read(text: str, where: str) -> list[_Located]:
    _check_text(text, where)
    stack: list[list[_Located]] = [[]]
    opened: list[int] = []
    for count, (tok, line) in enumerate(tokenize(text)):
        if count & 0xFFFF == 0:
            check_bounds(where, "reading the rule sheet")
        if len(tok) > MAX_SYMBOL:
            raise GDLError(
                f"{where}line {line}: a symbol longer than {MAX_SYMBOL} characters ({tok[:20]}..., {len(tok):,})", line
            )
        if tok == "(":
            if len(opened) >= MAX_NESTING:
                raise GDLError(f"{where}line {line}: parentheses nest more than {MAX_NESTING} deep", line)
            stack.append([])
            opened.append(line)
        elif tok == ")":
            if len(stack) == 1:
                raise GDLError(f"{where}line {line}: syntax error: ')' without a matching '('", line)
            items = stack.pop()
            start = opened.pop()
            if not items:
                raise GDLError(f"{where}line {start}: syntax error: empty list '()'", start)
            stack[-1].append((items, start))
        else:
            stack[-1].append((tok, line))
    if opened:
        raise GDLError(f"{where}line {opened[-1]}: syntax error: '(' is never closed", opened[-1])
    return stack[0]


class _Reader:
    """Turns located KIF into atoms and literals, checking GDL's grammar."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.spelling: dict[str, str] = {}
        self.arity: dict[str, tuple[int, int]] = {}  # relation -> (arity, first line)

    def fail(self, line: int, what: str) -> GDLError:
        return GDLError(f"{self.where}line {line}: {what}", line)

    def symbol(self, tok: str) -> str:
        low = tok.lower()
        self.spelling.setdefault(low, tok)
        return low

    def term(self, lt: _Located) -> Term:
        item, line = lt
        if isinstance(item, str):
            if item.lower() in _CONNECTIVES:
                raise self.fail(line, f"'{item}' cannot be used as a term")
            return self.symbol(item)
        head, hline = item[0]
        if not isinstance(head, str):
            raise self.fail(hline, "syntax error: a function name must be a symbol, not a list")
        if head.startswith("?"):
            raise self.fail(hline, f"syntax error: a function name cannot be a variable ({head})")
        if head.lower() in _CONNECTIVES:
            raise self.fail(hline, f"'{head}' cannot be used inside a term")
        return (self.symbol(head), *(self.term(a) for a in item[1:]))

    def atom(self, lt: _Located) -> Atom:
        """An atomic sentence."""
        item, line = lt
        if isinstance(item, str):
            name, args = item, []
        else:
            head, hline = item[0]
            if not isinstance(head, str):
                raise self.fail(hline, "syntax error: a relation name must be a symbol, not a list")
            name, args = head, item[1:]
        if name.startswith("?"):
            raise self.fail(line, f"syntax error: a relation name cannot be a variable ({name})")
        low = name.lower()
        if low in _CONNECTIVES:
            raise self.fail(line, f"'{name}' cannot be used as a relation here")
        atom: Atom = (self.symbol(name), *(self.term(a) for a in args))
        n = len(atom) - 1
        expected = KEYWORD_ARITY.get(low)
        if expected is not None and n != expected:
            raise self.fail(line, f"'{name}' takes {expected} argument{'s' if expected != 1 else ''}, not {n}")
        known = self.arity.get(low)
        if known is None:
            self.arity[low] = (n, line)
        elif known[0] != n:
            raise self.fail(
                line, f"relation '{name}' is used with {n} arguments here but with {known[0]} on line {known[1]}"
            )
        return atom

    def literals(self, lt: _Located) -> list[list[Literal]]:
        """The literal as a disjunction of conjunctions (``or`` expanded, ``not`` pushed inwards)."""
        return self._dnf(lt, negated=False)

    def _dnf(self, lt: _Located, negated: bool) -> list[list[Literal]]:
        item, line = lt
        if isinstance(item, list) and isinstance(item[0][0], str):
            op = item[0][0].lower()
            args = item[1:]
            if op == "not":
                if len(args) != 1:
                    raise self.fail(line, f"'not' takes one literal, not {len(args)}")
                return self._dnf(args[0], not negated)
            if op == "or":
                parts = [self._dnf(a, negated) for a in args]
                cases = math.prod(len(p) for p in parts) if negated else sum(len(p) for p in parts)
                if cases > MAX_CASES:
                    raise self.fail(line, f"rule too large: its 'or' literals expand to more than {MAX_CASES} cases")
                if negated:  # not (a or b) = (not a) and (not b)
                    return [list(itertools.chain.from_iterable(c)) for c in itertools.product(*parts)]
                return [conj for part in parts for conj in part]
            if op == "distinct":
                if len(args) != 2:
                    raise self.fail(line, f"'distinct' takes two terms, not {len(args)}")
                pair = (self.term(args[0]), self.term(args[1]))
                return [[Literal("same" if negated else "distinct", pair, line)]]
            if op == "<=":
                raise self.fail(line, "a rule '(<= ...)' cannot appear inside another rule")
        atom = self.atom(lt)
        rel = atom[0]
        if rel in ("init", "next"):
            raise self.fail(line, f"'{self.spelling.get(str(rel), rel)}' cannot appear in a rule body (only as a head)")
        return [[Literal("neg" if negated else "pos", atom, line)]]


def parse_program(text: str, name: str = "") -> Program:
    """Read and check a rule sheet; raises :class:`GDLError` naming the line of the problem."""
    where = f"{name}: " if name else ""
    reader = _Reader(where)
    rules: list[Rule] = []
    for count, lt in enumerate(_read(text, where)):
        if count & 0x3FF == 0:
            check_bounds(where, "reading the rule sheet")
        item, line = lt
        if isinstance(item, list) and isinstance(item[0][0], str) and item[0][0] == "<=":
            if len(item) < 2:
                raise reader.fail(line, "syntax error: a rule '(<= head body...)' needs a head")
            head = reader.atom(item[1])
            _check_head(reader, head, item[1][1])
            conjunctions: list[list[Literal]] = [[]]
            for lit in item[2:]:
                options = reader.literals(lit)
                if len(conjunctions) * len(options) > MAX_CASES:
                    raise reader.fail(line, f"rule too large: its 'or' literals expand to more than {MAX_CASES} cases")
                conjunctions = [c + o for c in conjunctions for o in options]
            for body in conjunctions:
                rules.append(Rule(head, tuple(body), line))
        else:
            if isinstance(item, str) and item.startswith("?"):
                raise reader.fail(line, f"syntax error: a sentence cannot be a variable ({item})")
            if isinstance(item, list) and isinstance(item[0][0], str) and item[0][0].lower() in _CONNECTIVES:
                raise reader.fail(line, f"'{item[0][0]}' is not a sentence; facts are atoms and rules are (<= ...)")
            head = reader.atom(lt)
            _check_head(reader, head, line)
            rules.append(Rule(head, (), line))
    program = Program(rules, (), reader.spelling, name=name or "gdl")
    for rule in rules:
        program.defined_at.setdefault(rule.relation, rule.line)
    _check_roles(program, reader)
    _check_safety(program, reader)
    _check_stratified(program, reader)
    _check_gdl_restrictions(program, reader)
    _check_goals(program, reader)
    return program


def _check_goals(program: Program, reader: _Reader) -> None:
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
            raise reader.fail(rule.line, f"goal value {sp.get(value, shown)} is not an integer from 0 to 100")
        if not isinstance(value, str):
            raise reader.fail(rule.line, f"goal value {show(value, sp)} is not an integer from 0 to 100")
    ends = any(rule.relation == "terminal" for rule in program.rules)
    for role in program.roles if ends else ():  # a game that never ends needs no goals
        if not any(_unifies(("goal", role, "?v"), rule.head) for rule in goals):
            raise GDLError(
                f"{reader.where}no 'goal' rule can give role {sp.get(role, role)} a value: the game's end would "
                "leave it without one (every role needs a goal value in every terminal state)"
            )


def _check_head(reader: _Reader, head: Atom, line: int) -> None:
    rel = head[0]
    if rel in ("true", "does"):
        raise reader.fail(line, f"'{rel}' cannot be the head of a rule or a fact (it is given by the state and moves)")


def _check_roles(program: Program, reader: _Reader) -> None:
    roles: list[str] = []
    for rule in program.rules:
        if rule.relation != "role":
            continue
        if rule.body:
            raise reader.fail(rule.line, "'role' must be given by facts such as (role white), not by rules")
        r = rule.head[1]
        if not isinstance(r, str) or r.startswith("?"):
            raise reader.fail(rule.line, f"a role must be a symbol, not {show(r)}")
        if r in roles:
            raise reader.fail(rule.line, f"role {program.spelling.get(r, r)} is declared twice")
        roles.append(r)
    if not roles:
        raise GDLError(f"{reader.where}the rule sheet declares no role (a fact such as (role white))")
    program.roles = tuple(roles)


def _check_safety(program: Program, reader: _Reader) -> None:
    sp = program.spelling
    for rule in program.rules:
        bound: set[str] = set()
        for lit in rule.body:
            if lit.kind == "pos":
                term_vars(lit.atom, bound)
        unbound = sorted(term_vars(rule.head) - bound)
        if unbound:
            where = "the head" if rule.body else "a fact"
            raise reader.fail(
                rule.line,
                f"unsafe rule for {show_atom(rule.head, sp)}: variable {unbound[0]} appears in {where} "
                "but in no positive literal of the body",
            )
        for lit in rule.body:
            if lit.kind == "pos":
                continue
            unbound = sorted(term_vars(lit.atom) - bound)
            if unbound:
                raise reader.fail(
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


def _check_stratified(program: Program, reader: _Reader) -> None:
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
                        raise reader.fail(
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


def _check_gdl_restrictions(program: Program, reader: _Reader) -> None:
    sp = program.spelling
    on_does = reaches(program, {"does"})
    on_state = reaches(program, {"true", "does", "legal", "goal", "terminal"})
    for rule in program.rules:
        rel = rule.relation
        if rel in ("legal", "goal", "terminal"):
            for lit in rule.body:
                if lit.kind in ("pos", "neg") and lit.atom[0] in on_does:
                    raise reader.fail(
                        lit.line,
                        f"'{sp.get(rel, rel)}' must not depend on 'does' (through {lit.text(sp)}): "
                        "legality, goals and termination are properties of a state, not of moves",
                    )
        if rel == "init":
            for lit in rule.body:
                if lit.kind in ("pos", "neg") and lit.atom[0] in on_state:
                    raise reader.fail(
                        lit.line, f"'init' must not depend on the state or the moves (through {lit.text(sp)})"
                    )
