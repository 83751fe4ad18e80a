"""The values a GDL rule sheet is read into, and the errors and time bounds of reading it.

Terms, atoms, :class:`Literal`, :class:`Rule` and :class:`Program` (a checked sheet); :class:`GDLError` and
:class:`GDLLimitError`; the :func:`bounded` block whose deadline and cancel event reading and grounding check
(:func:`check_bounds`); and :func:`show`, which writes terms back as KIF. :mod:`ggp.gdl.parser` reads sheets into
these values and :mod:`ggp.gdl.validity` checks them.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..core.errors import GGPError
from ..core.kif import Term

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
    cpu_deadline: float | None = None


_bounds = threading.local()


@contextlib.contextmanager
def bounded(
    deadline: float | None = None, cancel: threading.Event | None = None, cpu_deadline: float | None = None
) -> Iterator[None]:
    """Within this block, reading and grounding rule sheets in this thread stop at ``deadline`` (a
    ``time.monotonic()`` value), at ``cpu_deadline`` (a ``time.thread_time()`` value: this thread's own
    processor time, which a busy machine does not use up) or once ``cancel`` is set, raising
    :class:`GDLLimitError`."""
    previous = getattr(_bounds, "value", None)
    _bounds.value = _Bounds(deadline, cancel, cpu_deadline)
    try:
        yield
    finally:
        _bounds.value = previous


@contextlib.contextmanager
def within_processor_time(seconds: float) -> Iterator[None]:
    """Within this block, the bounds this thread is in (see :func:`bounded`) and also at most ``seconds`` more
    of its processor time."""
    outer: _Bounds = getattr(_bounds, "value", None) or _Bounds()
    cpu = time.thread_time() + seconds
    if outer.cpu_deadline is not None:
        cpu = min(cpu, outer.cpu_deadline)
    with bounded(outer.deadline, outer.cancel, cpu):
        yield


def cpu_bounded() -> bool:
    """Whether this thread is in a :func:`bounded` block with a ``cpu_deadline`` (work handed to another
    process would not count against it)."""
    bounds: _Bounds | None = getattr(_bounds, "value", None)
    return bounds is not None and bounds.cpu_deadline is not None


def check_cancelled(where: str, doing: str) -> None:
    """Raise :class:`GDLLimitError` if the :func:`bounded` block this thread is in has been cancelled (its
    deadlines aside: for a wait on work done by another process, which costs this thread nothing)."""
    bounds: _Bounds | None = getattr(_bounds, "value", None)
    if bounds is not None and bounds.cancel is not None and bounds.cancel.is_set():
        raise GDLLimitError(f"{where}{doing} was cancelled")


def check_bounds(where: str, doing: str) -> None:
    """Raise :class:`GDLLimitError` if the :func:`bounded` block this thread is in has ended its time."""
    bounds: _Bounds | None = getattr(_bounds, "value", None)
    if bounds is None:
        return
    if bounds.cancel is not None and bounds.cancel.is_set():
        raise GDLLimitError(f"{where}{doing} was cancelled")
    if bounds.deadline is not None and time.monotonic() > bounds.deadline:
        raise GDLLimitError(f"{where}{doing} did not finish in the time allowed")
    if bounds.cpu_deadline is not None and time.thread_time() > bounds.cpu_deadline:
        raise GDLLimitError(f"{where}{doing} did not finish in the processor time allowed")


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
    #: Whether the sheet is GDL-II (``sees``, chance's ``random``), lowered into GDL-I terms by :mod:`ggp.gdl.gdl_ii`.
    gdl_ii: bool = False
