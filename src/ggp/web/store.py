"""The web app's history: every match and every step of it, in one SQLite file.

A match is written when it is created and again after every joint move (one
transaction each), so a server stopped at any moment restarts where it was.
Moves a person submitted for a step that is not complete yet (a simultaneous
game waiting for the other role) are kept too.

>>> store = Store(":memory:")
>>> store.create("m1", "wallmaze", ["white", "black"], ["human", "random"], {"agent_time": 1.0}, '{"step":1}')
>>> store.append_step("m1", 1, ["(move 2 5 3 5)", "noop"], '{"step":2}', terminal=False, goals=None)
>>> m = store.load("m1")
>>> m.steps, m.joints, m.status
(1, [['(move 2 5 3 5)', 'noop']], 'playing')
>>> [s.id for s in store.list()]
['m1']
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id       TEXT PRIMARY KEY,
    game     TEXT NOT NULL,
    roles    TEXT NOT NULL,              -- JSON list, the rule sheet's order
    players  TEXT NOT NULL,              -- JSON list of player specs (human or an agent spec), in role order
    settings TEXT NOT NULL,              -- JSON object: agent_time, pace
    created  REAL NOT NULL,              -- Unix time
    updated  REAL NOT NULL,
    steps    INTEGER NOT NULL DEFAULT 0, -- joint moves made
    status   TEXT NOT NULL,              -- playing | over
    goals    TEXT,                       -- JSON list in role order, once over
    pending  TEXT NOT NULL DEFAULT '{}'  -- JSON {role: move} submitted by people for the next step
);
CREATE TABLE IF NOT EXISTS steps (
    match_id TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    step     INTEGER NOT NULL,           -- 0 is the initial state
    joint    TEXT,                       -- JSON list of KIF moves that led here (null for step 0)
    state    TEXT NOT NULL,              -- the state, as Game.state_to_json
    at       REAL NOT NULL,
    info     TEXT,                       -- JSON {"times": [seconds or null per role], "faults": [...]}
    PRIMARY KEY (match_id, step)
);
CREATE INDEX IF NOT EXISTS matches_by_created ON matches (created);
"""


def default_db_path() -> Path:
    """Where the app keeps its history unless told otherwise.

    ``$GGP_WEB_DB`` if set, else ``ggp/web.sqlite3`` under ``$XDG_DATA_HOME``
    (default ``~/.local/share``).
    """
    env = os.environ.get("GGP_WEB_DB")
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "ggp" / "web.sqlite3"


@dataclass
class StoredMatch:
    """One match as the store holds it."""

    id: str
    game: str
    roles: list[str]
    players: list[str]
    settings: dict[str, Any]
    created: float
    updated: float
    steps: int
    status: str
    goals: list[int] | None
    pending: dict[str, str] = field(default_factory=dict)
    #: Every state as JSON text, step 0 first (only filled by :meth:`Store.load`).
    states: list[str] = field(default_factory=list)
    #: The joint moves, ``joints[i]`` leading from state i to state i + 1 (only filled by :meth:`Store.load`).
    joints: list[list[str]] = field(default_factory=list)
    #: When each state was reached (Unix time), parallel to ``states``.
    times: list[float] = field(default_factory=list)
    #: Per joint move: ``{"times": [think seconds or null per role], "faults": [fault dicts]}``.
    infos: list[dict[str, Any]] = field(default_factory=list)


class Store:
    """A thread-safe SQLite store of matches; ``path`` may be ``":memory:"``."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        with self._lock:
            self._db.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RuntimeError(f"{self.path} was written by a newer ggp (schema {version} > {SCHEMA_VERSION})")
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- writing -----------------------------------------------------------------------------
    def create(
        self,
        match_id: str,
        game: str,
        roles: Sequence[str],
        players: Sequence[str],
        settings: dict[str, Any],
        initial_state: str,
    ) -> None:
        """Store a new match and its initial state (step 0)."""
        now = time.time()
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT INTO matches (id, game, roles, players, settings, created, updated, steps, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 0, 'playing')",
                (match_id, game, json.dumps(list(roles)), json.dumps(list(players)), json.dumps(settings), now, now),
            )
            self._db.execute(
                "INSERT INTO steps (match_id, step, joint, state, at) VALUES (?, 0, NULL, ?, ?)",
                (match_id, initial_state, now),
            )

    def append_step(
        self,
        match_id: str,
        step: int,
        joint: Sequence[str],
        state: str,
        *,
        terminal: bool,
        goals: Sequence[int] | None,
        info: dict[str, Any] | None = None,
    ) -> None:
        """Store state ``step``, reached by ``joint``; clears the pending moves, and ends the match if terminal.

        ``info`` holds the step's think times and agent faults (see :class:`StoredMatch`).
        """
        now = time.time()
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT INTO steps (match_id, step, joint, state, at, info) VALUES (?, ?, ?, ?, ?, ?)",
                (match_id, step, json.dumps(list(joint)), state, now, json.dumps(info) if info else None),
            )
            self._db.execute(
                "UPDATE matches SET steps = ?, updated = ?, status = ?, goals = ?, pending = '{}' WHERE id = ?",
                (
                    step,
                    now,
                    "over" if terminal else "playing",
                    json.dumps(list(goals)) if goals is not None else None,
                    match_id,
                ),
            )

    def set_pending(self, match_id: str, pending: dict[str, str]) -> None:
        """Remember the moves people submitted for the step in progress."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE matches SET pending = ?, updated = ? WHERE id = ?", (json.dumps(pending), time.time(), match_id)
            )

    # --- reading -----------------------------------------------------------------------------
    def load(self, match_id: str) -> StoredMatch | None:
        """The match with all its states and moves, or None if there is none with that id."""
        with self._lock:
            row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            steps = self._db.execute(
                "SELECT step, joint, state, at, info FROM steps WHERE match_id = ? ORDER BY step", (match_id,)
            ).fetchall()
        match = _match(row)
        match.states = [s["state"] for s in steps]
        match.joints = [json.loads(s["joint"]) for s in steps[1:]]
        match.times = [float(s["at"]) for s in steps]
        match.infos = [json.loads(s["info"]) if s["info"] else {} for s in steps[1:]]
        return match

    def list(self, limit: int = 100, offset: int = 0, status: str | None = None) -> list[StoredMatch]:
        """Matches, newest first (without their states)."""
        query = "SELECT * FROM matches"
        args: list[Any] = []
        if status:
            query += " WHERE status = ?"
            args.append(status)
        query += " ORDER BY created DESC, id LIMIT ? OFFSET ?"
        args += [limit, offset]
        with self._lock:
            rows = self._db.execute(query, args).fetchall()
        return [_match(r) for r in rows]

    def count(self, status: str | None = None) -> int:
        with self._lock:
            if status:
                return int(self._db.execute("SELECT COUNT(*) FROM matches WHERE status = ?", (status,)).fetchone()[0])
            return int(self._db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])


def _match(row: sqlite3.Row) -> StoredMatch:
    return StoredMatch(
        id=row["id"],
        game=row["game"],
        roles=json.loads(row["roles"]),
        players=json.loads(row["players"]),
        settings=json.loads(row["settings"]),
        created=float(row["created"]),
        updated=float(row["updated"]),
        steps=int(row["steps"]),
        status=row["status"],
        goals=json.loads(row["goals"]) if row["goals"] else None,
        pending=json.loads(row["pending"] or "{}"),
    )
