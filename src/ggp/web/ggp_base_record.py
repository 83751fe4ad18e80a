"""The arena's match record in ggp-base's format (``Match.toJSON``), for ggp-base's tools."""

from __future__ import annotations

import hashlib
from typing import Any

from ..core.game import Game, State
from ..match.record import MatchRecord


def _spaced(kif: str) -> str:
    """KIF as ggp-base prints it: ``(move 1 2)`` -> ``( move 1 2 )``."""
    return " ".join(kif.replace("(", " ( ").replace(")", " ) ").split())


def ggp_base_match(
    game: Game,
    record: MatchRecord,
    match_id: str,
    names: list[str],
    started: float,
    states: list[State] | None = None,
) -> dict[str, Any]:
    """The match as ggp-base's ``Match.toJSON`` writes it (readable by its tools).

    ``states`` are the match's states (replayed from the record if not given); ``names`` the players' names in
    role order (``playerNamesFromHost``). Moves and states are ggp-base's spaced KIF; ``errors`` holds, per
    joint move, each role's fault (empty when none); clocks are whole seconds, times milliseconds.
    """
    states = states if states is not None else record.replay(game)
    rendered = ["( " + " ".join(_spaced(f) for f in game.state_facts(s)) + " )" for s in states]
    errors = []
    for move in record.moves:
        by_role = {f.role: f"{f.kind}: {f.message}" for f in move.faults}
        errors.append([by_role.get(r, "") for r in record.roles])
    step_ms = [int(started * 1000)] * len(states)
    return {
        "matchId": match_id,
        "randomToken": hashlib.sha256(match_id.encode()).hexdigest()[:16],
        "startTime": int(started * 1000),
        "gameMetaURL": "",
        "gameName": game.name,
        "gameRoleNames": list(record.roles),
        "isCompleted": bool(record.terminal),
        "isAborted": not record.terminal,
        "states": rendered,
        "moves": [[_spaced(m) for m in move.joint] for move in record.moves],
        "stateTimes": step_ms,
        "errors": errors,
        "goalValues": list(record.goals),
        "previewClock": -1,
        "startClock": round(record.start_clock or 0),
        "playClock": round(record.play_clock or 0),
        "playerNamesFromHost": names,
        "scrambled": False,
    }
