"""Pausing misbehaving arena players: one that stops answering during a match, or whose moves fail too often
in two matches in a row, with a reason naming the match and the faults (kept in ``arena_pauses``)."""

from __future__ import annotations

import logging
import time
from typing import Any

from ..match.record import MatchRecord
from .arena_model import LiveArenaMatch, Player
from .limits import Limits
from .store import Store

_log = logging.getLogger("ggp.web.arena")  # the arena's log, as before these were split out of it


def pause(store: Store, player: Player, reason: str, match_id: str = "") -> None:
    """Pause an active player, saying why (kept in its row and, for good, in ``arena_pauses``)."""
    _log.warning("arena: pausing %s: %s", player.name, reason)
    changed = store.execute(
        "UPDATE arena_players SET status = 'paused', reason = ? WHERE id = ? AND status = 'active'",
        (reason[:300], player.id),
    )
    if changed:
        store.execute(
            "INSERT INTO arena_pauses (player, at, reason, match) VALUES (?, ?, ?, ?)",
            (player.id, time.time(), reason[:300], match_id),
        )


def judge(store: Store, limits: Limits, live: LiveArenaMatch, record: MatchRecord) -> None:
    """Pause the remote players that stopped answering during the match; strike those whose moves failed
    too often, and pause them at the second strike in a row. The reason names the match and the faults."""
    steps = max(1, record.steps)
    faults = list(record.all_faults())
    for role, player in zip(record.roles, live.players, strict=True):
        if player.kind != "remote":
            continue
        mine = [f for f in faults if f.role == role]
        start = [f for f in mine if f.phase == "start"]
        moves = [f for f in mine if f.phase == "play"]
        stop = [f for f in mine if f.phase == "stop"]
        silent = _silent_since(record, role)
        if stop and _no_answer(stop[0]) and silent is not None:
            pause(
                store,
                player,
                f"stopped answering in match {live.id}: no answer from move {silent} of {record.steps} on, "
                f"nor to STOP ({_clip(stop[0].message)})",
                live.id,
            )
            continue
        if len(start) + len(moves) > limits.arena_fault_share * steps:
            rows = store.query("SELECT strikes FROM arena_players WHERE id = ?", (player.id,))
            strikes = (int(rows[0]["strikes"]) if rows else 0) + 1
            store.execute("UPDATE arena_players SET strikes = ? WHERE id = ?", (strikes, player.id))
            if strikes >= 2:
                kinds = sorted({f.kind for f in start + moves})
                pause(
                    store,
                    player,
                    f"{len(moves)} faulty moves of {record.steps}{' and a failed START' if start else ''} "
                    f"({', '.join(kinds)}) in match {live.id}, the second such match in a row; "
                    f"the last: {_clip((moves or start)[-1].message)}",
                    live.id,
                )
        else:
            store.execute("UPDATE arena_players SET strikes = 0 WHERE id = ?", (player.id,))


def _no_answer(fault: Any) -> bool:
    """Whether a fault is a message the player did not answer at all (no reply in time, no connection)."""
    return bool(fault.kind == "timeout" or (fault.kind == "exception" and "cannot talk to" in fault.message))


def _silent_since(record: MatchRecord, role: str) -> int | None:
    """The first move of the run of unanswered moves that ends the match for ``role`` (None if its last move
    was answered; 1 for a match without moves whose START went unanswered)."""
    unanswered = {f.step for f in record.all_faults() if f.role == role and f.phase == "play" and _no_answer(f)}
    if not record.moves:
        return 1 if any(f.role == role and f.phase == "start" and _no_answer(f) for f in record.faults) else None
    step = record.steps
    while step in unanswered:
        step -= 1
    return step + 1 if step < record.steps else None


def _clip(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
