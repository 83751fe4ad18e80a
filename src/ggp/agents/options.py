"""The values agent options take, declared beside each option and checked at every door.

An option is a keyword parameter of an agent's ``__init__``. Its annotation
gives the type and, through :data:`typing.Annotated`, the :class:`Range` of
values it accepts::

    @check_options
    def __init__(self, c: Annotated[float | None, Range(ge=0, le=MAX_C)] = None) -> None: ...

:func:`ggp.agents.make_agent` converts a spec's text by the type and checks
the range before it builds the agent, and :func:`check_options` makes a
direct construction (``MCTSAgent(c=float("nan"))``) check the same
declaration, so the command line, the web app, the GGP player, tournaments
and Python code all refuse a bad value with the same ``ValueError``:

>>> from ggp.agents import make_agent
>>> make_agent("mcts:c=nan")
Traceback (most recent call last):
...
ValueError: mcts: c must be a finite number >= 0 and <= 100, or none, got nan

The limits of the built-in agents, and why:

* ``time`` (seconds per move): finite, > 0 and <= :data:`MAX_SECONDS` (600);
  a referee's clock is far shorter.
* ``sims`` (simulations per move): an int from 1 to :data:`MAX_SIMS` (10^8),
  minutes of search even on the fastest game.
* ``c`` (UCB1 exploration): finite, from 0 to :data:`MAX_C` (100); goals are
  scaled to 0..1, so beyond about 10 the search only explores.
* ``seed``: an int from 0 to :data:`MAX_SEED` (2^63 - 1), which every
  generator the agents use accepts.
* ``capacity`` (search tree nodes): an int from :data:`MIN_CAPACITY` (2: the
  root and one child) to :data:`MAX_CAPACITY` (2,000,000). A node takes up to
  about 670 bytes (Amazons 10x10), so a tree stays under about 1.3 GB; a larger
  one is refused rather than allocated.
* ``reuse``: true or false.

Floats must be finite wherever a range is declared: ``nan``, ``inf`` and
``1e400`` are refused. Ints are whole numbers written in decimal (``True`` is
not an int). ``none`` sets an option whose type allows None to None.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

#: Longest ``time`` an agent may think per move, in seconds.
MAX_SECONDS = 600.0
#: Most simulations per move.
MAX_SIMS = 10**8
#: Largest UCB1 exploration constant (goals are scaled to 0..1).
MAX_C = 100.0
#: Largest seed: every generator the agents use takes 0..2^63-1.
MAX_SEED = 2**63 - 1
#: Fewest nodes a search tree may hold: the root and one child.
MIN_CAPACITY = 2
#: Most nodes a search tree may hold (Amazons 10x10: ~670 bytes a node, so ~1.3 GB).
MAX_CAPACITY = 2_000_000

_SHOWN = 24  # characters of a refused value quoted in a message


@dataclass(frozen=True)
class Range:
    """The numbers an option accepts: bounds ``ge``/``gt`` below and ``le`` above (None: unbounded).

    A float option with a range must also be finite. ``str(Range(gt=0, le=600))``
    reads ``> 0 and <= 600``, as it appears in messages.
    """

    ge: float | None = None
    gt: float | None = None
    le: float | None = None

    def __contains__(self, value: float) -> bool:
        if self.ge is not None and not value >= self.ge:
            return False
        if self.gt is not None and not value > self.gt:
            return False
        return self.le is None or value <= self.le

    def __str__(self) -> str:
        parts = []
        if self.ge is not None:
            parts.append(f">= {_number(self.ge)}")
        if self.gt is not None:
            parts.append(f"> {_number(self.gt)}")
        if self.le is not None:
            parts.append(f"<= {_number(self.le)}")
        return " and ".join(parts)

    @staticmethod
    def of(annotation: Any) -> Range | None:
        """The range an option's annotation declares (as :func:`ggp.agents.agent_options` gives it), if any."""
        return _Spec.read(annotation).range


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class _Spec:
    """What an annotation says about an option: the types it takes, whether None, and the range."""

    kinds: tuple[Any, ...]
    optional: bool
    range: Range | None

    @staticmethod
    def read(annotation: Any) -> _Spec:
        found: Range | None = None
        kinds: list[Any] = []
        optional = False
        todo = [annotation]
        while todo:
            a = todo.pop(0)
            if typing.get_origin(a) is typing.Annotated:
                base, *extras = typing.get_args(a)
                found = found or next((e for e in extras if isinstance(e, Range)), None)
                todo.insert(0, base)
            elif typing.get_origin(a) in (typing.Union, types.UnionType):
                todo[:0] = typing.get_args(a)
            elif a is type(None) or a is None:
                optional = True
            else:
                kinds.append(a)
        return _Spec(tuple(kinds), optional, found)

    def wanted(self) -> str:
        """What the option takes, as a message says it: ``a finite number > 0 and <= 600, or none``."""
        words = []
        for kind in self.kinds:
            bounds = f" {self.range}" if self.range is not None and str(self.range) else ""
            if kind is bool:
                words.append("true or false")
            elif kind is int:
                lo, hi = (self.range.ge, self.range.le) if self.range is not None else (None, None)
                if self.range is not None and lo is not None and hi is not None and self.range.gt is None:
                    words.append(f"an int from {_number(lo)} to {_number(hi)}")
                else:
                    words.append(f"an int{bounds}")
            elif kind is float:
                words.append(f"a finite number{bounds}" if self.range is not None else "a number")
            elif kind is str or kind is Any:
                words.append("text")
            else:
                words.append(f"a {getattr(kind, '__name__', kind)}")
        if self.optional:
            words.append("none")
        return ", or ".join(words) if words else "none"

    def convert(self, text: str) -> Any:
        """The value ``text`` (from a spec) stands for; ValueError if no type of the option reads it."""
        if self.optional and text.lower() == "none":
            return None
        for kind in self.kinds:
            try:
                return _from_text(text, kind)
            except (TypeError, ValueError, OverflowError):
                continue
        raise ValueError(text)

    def check(self, value: Any) -> Any:
        """``value`` as the option's type if it is one of its values (ints as floats, say); ValueError otherwise."""
        if value is None:
            if self.optional or not self.kinds:
                return None
            raise ValueError(value)
        for kind in self.kinds:
            fitted = _fit(value, kind)
            if fitted is _NO:
                continue
            if kind in (int, float) and not self._inside(fitted):
                continue
            return fitted
        raise ValueError(value)

    def _inside(self, number: float) -> bool:
        """Whether a number is in the declared range (finite, then within the bounds); True with no range."""
        if self.range is None:
            return True
        return (isinstance(number, int) or math.isfinite(number)) and number in self.range


_NO = object()
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _from_text(text: str, kind: Any) -> Any:
    if kind is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(text)
    if kind is int:
        return int(text)
    if kind is float:
        return float(text)
    if kind is str or kind is Any:
        return text
    return kind(text)


def _fit(value: Any, kind: Any) -> Any:
    """``value`` as a ``kind`` if it is one (numpy scalars included), else ``_NO``; never rounds or parses."""
    if kind is bool:
        return bool(value) if isinstance(value, (bool, np.bool_)) else _NO
    if isinstance(value, (bool, np.bool_)):
        return _NO  # True is no number of simulations
    if kind is int:
        return int(value) if isinstance(value, numbers.Integral) else _NO
    if kind is float:
        if not isinstance(value, numbers.Real):
            return _NO
        try:
            return float(value)
        except OverflowError:  # an int beyond any float (10**400)
            return _NO
    if kind is str or kind is Any:
        return value if isinstance(value, str) or kind is Any else _NO
    return value if isinstance(kind, type) and isinstance(value, kind) else _NO


def _shown(value: Any, text: str | None = None) -> str:
    """A refused value as a message quotes it: numbers as written, other text quoted, long values cut short."""
    if text is not None:
        try:
            float(text)
            out = text
        except ValueError:
            out = repr(text)
    elif isinstance(value, float) or (isinstance(value, numbers.Number) and not isinstance(value, bool)):
        out = str(value)
    else:
        out = repr(value)
    return out if len(out) <= _SHOWN else out[: _SHOWN - 3] + "..."


def _option_error(agent: str, key: str, annotation: Any, value: Any, text: str | None = None) -> ValueError:
    """The error for a refused option value: it names the agent, the option, what it takes and the value."""
    return ValueError(f"{agent}: {key} must be {_Spec.read(annotation).wanted()}, got {_shown(value, text)}")


def convert_option(agent: str, key: str, text: str, annotation: Any) -> Any:
    """The value of option ``key`` written ``text`` in a spec, converted and checked; ValueError otherwise."""
    spec = _Spec.read(annotation)
    try:
        return spec.check(spec.convert(text))
    except ValueError:
        raise _option_error(agent, key, annotation, text, text) from None


def check_option(agent: str, key: str, value: Any, annotation: Any) -> Any:
    """``value`` for option ``key`` if its annotation accepts it (normalised: ``1`` for a float is ``1.0``)."""
    spec = _Spec.read(annotation)
    if not spec.kinds and not spec.optional:
        return value
    try:
        return spec.check(value)
    except ValueError:
        raise _option_error(agent, key, annotation, value) from None


def option_types(factory: Callable[..., Any]) -> dict[str, Any]:
    """The options ``factory`` (an agent class or function) takes, each with its full annotation (``str`` if none)."""
    target: Any = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:  # unresolvable annotations: treat every option as text
        hints = {}
    options: dict[str, Any] = {}
    for param in inspect.signature(factory).parameters.values():
        if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            options[param.name] = hints.get(param.name, str)
    return options


Init = TypeVar("Init", bound=Callable[..., None])


def check_options(init: Init) -> Init:
    """Make an agent's ``__init__`` check its options' declared types and ranges before it runs.

    Values are passed on normalised (an int given for a float option arrives
    as a float). The message names the agent by its class's ``name``.
    """
    signature = inspect.signature(init)
    hints: dict[str, Any] = {}

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        if not hints:  # read on first use: the annotations name things defined after the class
            hints.update(typing.get_type_hints(init, include_extras=True))
            hints.pop("return", None)
        bound = signature.bind(self, *args, **kwargs)
        agent = getattr(type(self), "name", type(self).__name__)
        for key, value in list(bound.arguments.items())[1:]:
            if key in hints:
                bound.arguments[key] = check_option(agent, key, value, hints[key])
        init(*bound.args, **bound.kwargs)

    return typing.cast(Init, checked)
