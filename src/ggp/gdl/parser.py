"""Reading GDL rule sheets (the checks that make them GDL are in :mod:`ggp.gdl.validity`).

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

import itertools
import math

from ..core.kif import Term, tokenize
from .sheet import KEYWORD_ARITY, Atom, GDLError, GDLLimitError, Literal, Program, Rule, check_bounds
from .validity import check_program

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
    check_program(program, where)
    return program


def _check_head(reader: _Reader, head: Atom, line: int) -> None:
    rel = head[0]
    if rel in ("true", "does"):
        raise reader.fail(line, f"'{rel}' cannot be the head of a rule or a fact (it is given by the state and moves)")
