"""KIF terms: the S-expression text that GDL rule sheets and GGP moves are written in.

A term is a symbol (``str``) or a tuple of terms. The canonical text of a term
uses single spaces and no outer whitespace, which is how GGP writes moves::

    >>> parse_term("( move  1 3   1 4 )")
    ('move', '1', '3', '1', '4')
    >>> term_text(('move', '1', '3', '1', '4'))
    '(move 1 3 1 4)'
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .errors import MoveSyntaxError

Term = str | tuple["Term", ...]

# A symbol is any run of characters that is not whitespace, a parenthesis or a
# comment start; GDL variables (?x) are symbols too.
_TOKEN = re.compile(r"\s+|;[^\n]*|\(|\)|[^\s();]+")


class KifSyntaxError(MoveSyntaxError):
    """Text that is not a well-formed KIF term; ``line`` is 1-based."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


def tokenize(text: str) -> Iterator[tuple[str, int]]:
    """Yield (token, line) pairs, skipping whitespace and ``;`` comments."""
    line = 1
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches every character
            raise KifSyntaxError(f"line {line}: unexpected character {text[pos]!r}", line)
        tok = m.group()
        if not (tok[0].isspace() or tok[0] == ";"):
            yield tok, line
        line += tok.count("\n")
        pos = m.end()


def parse_terms(text: str) -> list[Term]:
    """Parse a sequence of terms (a whole rule sheet, say)."""
    stack: list[list[Term]] = [[]]
    opened: list[int] = []
    for tok, line in tokenize(text):
        if tok == "(":
            stack.append([])
            opened.append(line)
        elif tok == ")":
            if len(stack) == 1:
                raise KifSyntaxError(f"line {line}: ')' without a matching '('", line)
            done = tuple(stack.pop())
            opened.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if opened:
        raise KifSyntaxError(f"line {opened[-1]}: '(' is never closed", opened[-1])
    return stack[0]


def parse_term(text: str) -> Term:
    """Parse exactly one term."""
    terms = parse_terms(text)
    if len(terms) != 1:
        what = "nothing" if not terms else f"{len(terms)} terms"
        raise KifSyntaxError(f"expected one term, found {what} in {text!r}")
    return terms[0]


def term_text(term: Term) -> str:
    """The canonical text of a term: single spaces, no outer whitespace."""
    if isinstance(term, str):
        return term
    return "(" + " ".join(term_text(t) for t in term) + ")"
