"""A stored match as a match record: the JSON document the app's "download" gives.

The document is the one ``ggp match`` writes (format ``ggp-match``, version
1, read by :class:`ggp.match.record.MatchRecord`): the game, the roles, each
role's player (``human`` or an agent spec) under ``agents``, the play clock
(the agents' time per move), the start and end times, every joint move (KIF
text, in role order) with each role's think time and any agent fault, the
goals, the number of steps and the final state. The web app adds two keys of
its own, ``id`` and ``web`` (its settings and whether the match is still
being played); readers of the format ignore them.

A match still being played has ``"terminal": false`` and the goals of its
current state.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ..core.game import Game
from .store import StoredMatch

FORMAT = "ggp-match"
VERSION = 1


def iso(t: float) -> str:
    """Unix time as an ISO 8601 UTC timestamp, to the millisecond: ``2025-01-01T12:00:00.000+00:00``."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")


def match_record(game: Game, match: StoredMatch) -> dict[str, Any]:
    """The match record of a stored match (see the module docstring)."""
    final = game.state_from_json(match.states[-1]) if match.states else game.initial_state()
    terminal = game.is_terminal(final)
    moves = []
    for k, joint in enumerate(match.joints, 1):
        info = match.infos[k - 1] if k - 1 < len(match.infos) else {}
        times = info.get("times") or [None] * len(match.roles)
        moves.append({"step": k, "joint": list(joint), "times": list(times), "faults": list(info.get("faults", []))})
    agent_time = float(match.settings.get("agent_time", 1.0))
    return {
        "format": FORMAT,
        "version": VERSION,
        "id": match.id,
        "game": match.game,
        "roles": list(match.roles),
        "agents": dict(zip(match.roles, match.players, strict=True)),
        "clocks": {"start": None, "play": agent_time, "grace": 0.0, "margin": 0.0},
        "seed": None,
        "started": iso(match.created),
        "finished": iso(match.updated),
        "faults": [],
        "moves": moves,
        "steps": len(moves),
        "goals": [int(g) for g in game.goals(final)],
        "terminal": terminal,
        "final_state": game.state_to_dict(final),
        "web": {"settings": dict(match.settings), "status": match.status},
    }


def record_json(game: Game, match: StoredMatch) -> str:
    """:func:`match_record` as indented JSON text."""
    return json.dumps(match_record(game, match), indent=1)
