"""A stored match as a match record: the JSON document the app's "download" gives.

The document is the one ``ggp match`` writes (format ``ggp-match``, version
1, read by :class:`ggp.match.record.MatchRecord`): the game, the roles, each
role's player (``human`` or an agent spec) under ``agents``, the play clock
(the agents' time per move), the start and end times, every joint move (KIF
text, in role order) with each role's think time and any agent fault, the
goals, the number of steps and the final state. The web app adds two keys of
its own, ``id`` and ``web``; readers of the format ignore them. ``web`` holds
the settings, the status (``playing`` or ``over``), how the match ended
(``ended``: ``terminal``, ``resigned``, ``aborted`` or null), the outcome in
words (``result``) and the goals it ended with (``goals``, by role order:
0 for a player who resigned and 100 for the others; null if aborted).

The record proper describes the moves as the rules see them, so that
:meth:`~ggp.match.record.MatchRecord.verify` replays it: a match still being
played, resigned or aborted has ``"terminal": false`` and the goals of its
last state.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..core.game import Game
from ..match.record import Fault, JointMove, MatchRecord
from .store import StoredMatch


def iso(t: float) -> str:
    """Unix time as an ISO 8601 UTC timestamp, to the millisecond: ``2025-01-01T12:00:00.000+00:00``."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")


def match_record(game: Game, match: StoredMatch) -> dict[str, Any]:
    """The match record of a stored match (see the module docstring)."""
    final = game.state_from_json(match.states[-1]) if match.states else game.initial_state()
    moves = []
    for k, joint in enumerate(match.joints, 1):
        info = match.infos[k - 1] if k - 1 < len(match.infos) else {}
        times = info.get("times") or [None] * len(match.roles)
        faults = tuple(Fault(**f) for f in info.get("faults", []))
        moves.append(JointMove(k, tuple(joint), tuple(times), faults))
    record = MatchRecord(
        game=match.game,
        roles=tuple(match.roles),
        agents=tuple(match.players),
        start_clock=None,
        play_clock=float(match.settings.get("agent_time", 1.0)),
        seed=None,
        started=iso(match.created),
        finished=iso(match.updated),
        moves=moves,
        goals=tuple(int(g) for g in game.goals(final)),
        final_state=game.state_to_dict(final),
        terminal=game.is_terminal(final),
    )
    # a resignation's goals are the players' word, not the rules': they live beside the record
    ended_early = match.ended in ("resigned", "drawn", "aborted", "abandoned")
    web = {
        "settings": dict(match.settings),
        "status": match.status,
        "ended": match.ended,
        "result": match.result,
        "goals": match.goals if ended_early else list(record.goals) if record.terminal else None,
    }
    opened = opened_from(match.infos)
    if opened is not None:  # a game continued from another's position: which, and its steps taken from there
        web["opened_from"] = opened
    return {"id": match.id, **record.to_dict(), "web": web}


def opened_from(infos: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Where a game continued from another came from: that game's ``id`` and the ``steps`` it opened with
    (the steps whose infos say ``opened_from``); None for a game played from the start."""
    opened = [info["opened_from"] for info in infos if "opened_from" in info]
    return {"id": opened[0], "steps": len(opened)} if opened else None
