"""GGP messages: the S-expressions a game manager and a player exchange, parsed and rendered.

A request is one KIF term whose first symbol names it, in any letter case::

    >>> parse_message("( PLAY match.1 NIL )")
    Play(match_id='match.1', moves=None, view=None)
    >>> parse_message("(play m1 ((move 2 5 3 5) noop))").moves
    (('move', '2', '5', '3', '5'), 'noop')
    >>> parse_message("(START m1 white ((role white) (init (at 1))) 10 5)").play_clock
    5.0
    >>> render_message(Play("m1", (("move", "2", "5", "3", "5"), "noop")))
    '( PLAY m1 ((move 2 5 3 5) noop ) )'
    >>> parse_message("(PLAY m1 2 bet ((did second pass)))").view
    PlayerView(turn=2, last_move='bet', percepts=(('did', 'second', 'pass'),))

:func:`render_message` writes messages the way ggp-base's game server does,
spaces included. Anything that is not a well-formed message raises
:class:`ProtocolError`, whose text says what was expected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import GGPError
from ..core.kif import KifSyntaxError, Term, parse_term, term_text
from ..match.calls import MAX_CLOCK

#: The port a GGP player listens on unless told otherwise.
DEFAULT_PORT = 9147

#: How deeply parentheses may nest in a message (rule sheets nest a dozen levels at most).
MAX_DEPTH = 100

READY = "ready"
DONE = "done"
ABORTED = "aborted"
BUSY = "busy"
NIL = "nil"


class ProtocolError(GGPError, ValueError):
    """A message that is not a well-formed GGP request (or reply)."""


@dataclass(frozen=True)
class Info:
    """``(INFO)``: who are you, and are you free? Answered by ``((name N) (status available))``."""


@dataclass(frozen=True)
class Start:
    """``(START id role (rules...) startclock playclock)``: a new match; answered by ``ready``."""

    match_id: str
    role: str
    rules: tuple[Term, ...]
    start_clock: float
    play_clock: float


@dataclass(frozen=True)
class PlayerView:
    """What a GDL-II PLAY or STOP tells one player instead of the joint move: ``turn`` (0 for the first PLAY),
    the move it made last (``last_move``: the one the game manager played for it, NIL at first) and its
    ``percepts`` of that step (what the sheet's ``sees`` rules give it)."""

    turn: int
    last_move: Term | None
    percepts: tuple[Term, ...]


@dataclass(frozen=True)
class Play:
    """``(PLAY id NIL)`` or ``(PLAY id (m1 m2 ...))``: the previous joint move; answered by a move.

    A GDL-II match's PLAY is ``(PLAY id turn lastmove percepts)`` (the GDL-II protocol of the Dresden game
    server): ``moves`` is None and ``view`` holds what the player may know.
    """

    match_id: str
    moves: tuple[Term, ...] | None
    view: PlayerView | None = None


@dataclass(frozen=True)
class Stop:
    """``(STOP id (m1 m2 ...))``: the match is over after this joint move; answered by ``done``
    (GDL-II: ``(STOP id turn lastmove percepts)``, as PLAY)."""

    match_id: str
    moves: tuple[Term, ...] | None
    view: PlayerView | None = None


@dataclass(frozen=True)
class Abort:
    """``(ABORT id)``: the match is abandoned; answered by ``aborted``."""

    match_id: str


@dataclass(frozen=True)
class Preview:
    """``(PREVIEW (rules...) clock)``: a game that may be played soon; answered by ``done``."""

    rules: tuple[Term, ...]
    clock: float


Message = Info | Start | Play | Stop | Abort | Preview

_FORMS = {
    "info": "(INFO)",
    "start": "(START id role (rules...) startclock playclock)",
    "play": "(PLAY id NIL), (PLAY id (move ...)) or GDL-II's (PLAY id turn lastmove (percept ...))",
    "stop": "(STOP id NIL), (STOP id (move ...)) or GDL-II's (STOP id turn lastmove (percept ...))",
    "abort": "(ABORT id)",
    "preview": "(PREVIEW (rules...) clock)",
}


def nesting_depth(text: str) -> int:
    """How deeply parentheses nest in ``text`` (comments included: an upper bound)."""
    depth = deepest = 0
    for ch in text:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest


def read_term(text: str, what: str = "message") -> Term:
    """Exactly one KIF term; :class:`ProtocolError` for anything else (or for nesting over :data:`MAX_DEPTH`)."""
    if nesting_depth(text) > MAX_DEPTH:
        raise ProtocolError(f"the {what} nests parentheses more than {MAX_DEPTH} deep")
    try:
        return parse_term(text)
    except KifSyntaxError as exc:
        raise ProtocolError(f"the {what} is not one S-expression: {exc}") from None


def parse_message(text: str) -> Message:
    """The request written by ``text``; :class:`ProtocolError` says what is wrong with it."""
    term = read_term(text)
    if isinstance(term, str) or not term or not isinstance(term[0], str):
        shown = _short(text)
        raise ProtocolError(f"a GGP message is a list starting with its type (INFO, START, PLAY, ...), not {shown}")
    kind = term[0].lower()
    args = term[1:]
    if kind not in _FORMS:
        raise ProtocolError(
            f"unknown message type {term[0]!r}; expected one of INFO, START, PLAY, STOP, ABORT, PREVIEW"
        )
    form = _FORMS[kind]
    if kind == "info":
        _arity(args, 0, form)
        return Info()
    if kind == "start":
        if len(args) < 5:  # ggp-base lets later versions add arguments after the play clock
            raise ProtocolError(f"START takes 5 arguments, {form}; got {len(args)}")
        return Start(
            match_id=_symbol(args[0], "match id", form),
            role=_symbol(args[1], "role", form),
            rules=_rules(args[2], form),
            start_clock=parse_clock(args[3], "start clock"),
            play_clock=parse_clock(args[4], "play clock"),
        )
    if kind in ("play", "stop"):
        if len(args) == 4:
            view = _view(args[1:], form)
            match_id = _symbol(args[0], "match id", form)
            return Play(match_id, None, view) if kind == "play" else Stop(match_id, None, view)
        _arity(args, 2, form)
        match_id = _symbol(args[0], "match id", form)
        moves = _moves(args[1], form)
        return Play(match_id, moves) if kind == "play" else Stop(match_id, moves)
    if kind == "abort":
        _arity(args, 1, form)
        return Abort(_symbol(args[0], "match id", form))
    _arity(args, 2, form)
    return Preview(rules=_rules(args[0], form), clock=parse_clock(args[1], "preview clock"))


def parse_clock(term: Term, what: str = "clock") -> float:
    """A clock in seconds: a positive finite number up to :data:`~ggp.match.referee.MAX_CLOCK` (a day;
    ggp-base sends whole numbers; fractions are accepted)."""
    if not isinstance(term, str):
        raise ProtocolError(f"the {what} must be a number of seconds, not {_short(term_text(term))}")
    try:
        value = float(term) if len(term) <= 40 else math.nan
    except ValueError:
        raise ProtocolError(f"the {what} must be a number of seconds, not {_short(term)}") from None
    if not math.isfinite(value) or value <= 0:
        raise ProtocolError(f"the {what} must be a positive number of seconds, not {_short(term)}")
    if value > MAX_CLOCK:
        raise ProtocolError(f"the {what} must be at most {MAX_CLOCK:g} seconds (a day), not {_short(term)}")
    return value


def clock_text(seconds: float) -> str:
    """A clock as the message writes it: ``10`` for whole seconds (what ggp-base players read), else ``2.5``."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


def render_message(message: Message) -> str:
    """The message as ggp-base's game server writes it (``( PLAY m1 ((move 1 2) noop ) )``)."""
    if isinstance(message, Info):
        return "( INFO )"
    if isinstance(message, Start):
        rules = "".join(term_text(r) + " " for r in message.rules)
        return (
            f"( START {message.match_id} {message.role} ({rules}) "
            f"{clock_text(message.start_clock)} {clock_text(message.play_clock)})"
        )
    if isinstance(message, (Play, Stop)):
        kind = "PLAY" if isinstance(message, Play) else "STOP"
        view = message.view
        if view is not None:
            last = NIL.upper() if view.last_move is None else term_text(view.last_move)
            return f"( {kind} {message.match_id} {view.turn} {last} {render_moves(view.percepts or None)} )"
        return f"( {kind} {message.match_id} {render_moves(message.moves)} )"
    if isinstance(message, Abort):
        return f"( ABORT {message.match_id} )"
    rules = "".join(term_text(r) + " " for r in message.rules)
    return f"( PREVIEW ({rules}) {clock_text(message.clock)} )"


def render_moves(moves: tuple[Term, ...] | None) -> str:
    """A joint move as PLAY and STOP carry it: ``NIL`` or ``(m1 m2 )``."""
    if moves is None:
        return "NIL"
    return "(" + "".join(term_text(m) + " " for m in moves) + ")"


def info_reply(name: str, busy: bool, warming: str | None = None) -> str:
    """The answer to INFO: ``((name NAME) (status available))``; a player still warming up answers busy and
    says how far it is, ``((name NAME) (status busy) (warming 3/14))`` (a field game managers ignore)."""
    if warming is not None:
        return f"((name {name}) (status {BUSY}) (warming {warming}))"
    return f"((name {name}) (status {BUSY if busy else 'available'}))"


def parse_info_reply(text: str) -> dict[str, str]:
    """The fields of an INFO answer, keys in lower case: ``{"name": ..., "status": ...}``.

    >>> parse_info_reply("( ( name Bob ) ( status available ) )")
    {'name': 'Bob', 'status': 'available'}
    """
    term = read_term(text, "INFO reply")
    fields: dict[str, str] = {}
    if isinstance(term, str):
        raise ProtocolError(f"an INFO reply is a list of (key value) pairs, not {_short(text)}")
    for item in term:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            fields[item[0].lower()] = term_text(item[1])
    return fields


def error_reply(message: str) -> str:
    """An error answer, ``(error "...")``, on one line with quotes and backslashes escaped."""
    flat = " ".join(str(message).split())
    return '(error "' + flat.replace("\\", "\\\\").replace('"', '\\"') + '")'


def is_symbol_text(text: str) -> bool:
    """Whether ``text`` is one KIF symbol (no spaces, parentheses, ``;`` or quotes): a valid name or match id."""
    return bool(text) and not any(c.isspace() or c in '();"' for c in text)


# --- helpers -----------------------------------------------------------------------------------------
def _arity(args: tuple[Term, ...], n: int, form: str) -> None:
    if len(args) != n:
        raise ProtocolError(f"expected {form}: {n} argument{'s' if n != 1 else ''}, got {len(args)}")


def _symbol(term: Term, what: str, form: str) -> str:
    if not isinstance(term, str):
        raise ProtocolError(f"the {what} must be a symbol, not {_short(term_text(term))}; expected {form}")
    return term


def _rules(term: Term, form: str) -> tuple[Term, ...]:
    if isinstance(term, str):
        raise ProtocolError(
            f"the rules must be a list of GDL sentences, not the symbol {_short(term)}; expected {form}"
        )
    return term


def _moves(term: Term, form: str) -> tuple[Term, ...] | None:
    if isinstance(term, str):
        if term.lower() == NIL:
            return None
        raise ProtocolError(f"the joint move must be NIL or a list of moves, not {_short(term)}; expected {form}")
    return term


def _view(args: tuple[Term, ...], form: str) -> PlayerView:
    turn, last, percepts = args
    if not isinstance(turn, str) or not (turn.isascii() and turn.isdigit()) or len(turn) > 9:
        raise ProtocolError(f"the turn must be a whole number, not {_short(term_text(turn))}; expected {form}")
    if isinstance(percepts, str) and percepts.lower() != NIL:
        raise ProtocolError(f"the percepts must be NIL or a list, not {_short(percepts)}; expected {form}")
    return PlayerView(
        int(turn),
        None if isinstance(last, str) and last.lower() == NIL else last,
        () if isinstance(percepts, str) else tuple(percepts),
    )


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


__all__ = [
    "ABORTED",
    "BUSY",
    "DEFAULT_PORT",
    "DONE",
    "NIL",
    "READY",
    "Abort",
    "Info",
    "Message",
    "Play",
    "PlayerView",
    "Preview",
    "ProtocolError",
    "Start",
    "Stop",
    "clock_text",
    "error_reply",
    "info_reply",
    "is_symbol_text",
    "parse_clock",
    "parse_info_reply",
    "parse_message",
    "read_term",
    "render_message",
    "render_moves",
]
