"""A match's result in words, the same on every page and record: "White won (75-25)", "Black resigned: white won".

Goals are the rule sheet's (0 to 100, the higher the better); how the match ended is ``terminal`` (its rules
ended it), ``resigned`` (0 for whoever resigned, 100 for the others), ``drawn`` (agreed), ``aborted`` (before the first move)
or ``abandoned`` (nobody moved for days).

>>> outcome(("white", "black"), (75, 25))
'White won (75-25)'
>>> outcome(("xPlayer", "oPlayer"), (50, 50))
'Draw (50-50)'
>>> outcome(("white", "black"), (0, 100), "resigned")
'White resigned: black won'
>>> outcome(("robot",), (100,))
'Solved (100 of 100)'
>>> role_title("xPlayer"), role_title("player_2"), role_title("red")
('X player', 'Player 2', 'Red')
>>> from ggp.match.calls import Fault
>>> fault_said(Fault("white", "timeout", "no answer within 2 s + grace 1 s", step=3), "c1-c5")
'Step 3, white: time out: a random move was played (c1-c5)'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the outcome of a match needs no agents: Fault is only named)
    from .calls import Fault

#: What went wrong, by the fault's kind (:data:`ggp.match.calls.FAULT_KINDS`), as the move list says it.
FAULT_WORDS = {
    "timeout": "time out",
    "busy": "still busy with an earlier move",
    "illegal": "an illegal move",
    "not_a_move": "an answer that is not a move",
    "exception": "its player failed",
}

#: How a match can end.
ENDINGS = ("terminal", "resigned", "drawn", "aborted", "abandoned")


def role_title(role: str) -> str:
    """A role's name as a person reads it: words split at capitals, underscores and digits, the first capitalised."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z0-9])|_+|-+", " ", role).split()
    text = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words) or role
    return text[:1].upper() + text[1:]


def _names(roles: Sequence[str]) -> str:
    names = [role_title(r) for r in roles]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1].lower()


def outcome(roles: Sequence[str], goals: Sequence[int] | None, ended: str = "terminal") -> str:
    """The result of a match that ``ended`` so with ``goals`` (None for an aborted match), in one sentence."""
    if ended not in ENDINGS:
        raise ValueError(f"a match ends {', '.join(ENDINGS)}, not {ended!r}")
    if ended == "abandoned":
        return "Abandoned"
    if ended == "aborted" or goals is None:
        return "Aborted before the first move"
    if len(goals) != len(roles):
        raise ValueError(f"{len(goals)} goals for {len(roles)} roles")
    scores = "-".join(str(g) for g in goals)
    if ended == "drawn":
        return "Draw by agreement"
    best = max(goals)
    winners = [r for r, g in zip(roles, goals, strict=True) if g == best]
    if ended == "resigned":
        losers = [r for r, g in zip(roles, goals, strict=True) if g < best]
        said = f"{_names(losers)} resigned"
        return f"{said}: {_names(winners).lower()} won" if len(winners) == 1 else said
    if len(roles) == 1:
        return f"Solved ({best} of 100)" if best == 100 else f"Finished with {best} of 100"
    if len(winners) == len(roles):
        return f"Draw ({scores})"
    if len(winners) == 1:
        return f"{role_title(winners[0])} won ({scores})"
    return f"{_names(winners)} shared the win ({scores})"


def fault_said(fault: Fault, played: str | None = None) -> str:
    """A player's fault as the move list says it, with the move played for it in the game's notation
    (``played``; the fault's own text otherwise). The details stay in the record's ``faults``."""
    what = FAULT_WORDS.get(fault.kind, fault.kind)
    if fault.phase != "play":
        when = "before the game" if fault.phase == "start" else "when told the result"
        return f"{role_title(fault.role)}: {what} {when}"
    move = played if played is not None else fault.played
    instead = f"a random move was played ({move})" if move else "a random move was played"
    where = f"Step {fault.step}, " if fault.step is not None else ""
    return f"{where}{fault.role}: {what}: {instead}"
