"""The web app's history: every match and every step of it, in one SQLite file.

A match is written when it is created and again after every joint move (one
transaction each), so a server stopped at any moment restarts where it was.
Moves a person submitted for a step that is not complete yet (a simultaneous
game waiting for the other role) are kept too, and so are the seats: for each
role a person took, the SHA-256 of its secret token (never the token itself).

A match ends one of three ways (``ended``): ``terminal`` (the rules ended it),
``resigned`` or ``aborted`` (a person ended it; ``result`` says who and how).

>>> store = Store(":memory:")
>>> store.create("m1", "wallmaze", ["white", "black"], ["human", "random"], {"agent_time": 1.0}, '{"step":1}')
>>> store.append_step("m1", 1, ["(move 2 5 3 5)", "noop"], '{"step":2}', terminal=False, goals=None)
>>> m = store.load("m1")
>>> m.steps, m.joints, m.status, m.ended
(1, [['(move 2 5 3 5)', 'noop']], 'playing', None)
>>> store.finish("m1", "resigned", [0, 100], "white resigned")
>>> m = store.load("m1")
>>> m.status, m.ended, m.goals, m.result
('over', 'resigned', [0, 100], 'white resigned')
>>> [s.id for s in store.list()]
['m1']

Databases written by schema version 1 (before seats and endings) are
upgraded in place when opened.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 2

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
    goals    TEXT,                       -- JSON list in role order, once over (null for an aborted match)
    pending  TEXT NOT NULL DEFAULT '{}', -- JSON {role: move} submitted by people for the next step
    ended    TEXT,                       -- terminal | resigned | drawn | aborted | abandoned, once over
    result   TEXT                        -- the outcome in words, once over (schema 2)
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
CREATE TABLE IF NOT EXISTS seats (       -- schema 2: who may move for a human role
    match_id   TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    role       TEXT NOT NULL,
    token_hash TEXT NOT NULL,            -- SHA-256 (hex) of the seat's secret token
    claimed    REAL NOT NULL,            -- Unix time
    PRIMARY KEY (match_id, role)
);
CREATE INDEX IF NOT EXISTS matches_by_created ON matches (created);
CREATE INDEX IF NOT EXISTS matches_by_status ON matches (status, created);
"""

#: Schema 1 -> 2: endings and seats (the seats table comes with _SCHEMA). A version-1 match that is over
#: ended by its rules, as nothing else could end one then; its human seats stay open, to be claimed.
_MIGRATE_1_TO_2 = """
ALTER TABLE matches ADD COLUMN ended TEXT;
ALTER TABLE matches ADD COLUMN result TEXT;
UPDATE matches SET ended = 'terminal' WHERE status = 'over';
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
    #: How the match ended (``terminal``, ``resigned``, ``drawn``, ``aborted``, ``abandoned``), None while played.
    ended: str | None = None
    #: The outcome in words once over (``white resigned``).
    result: str | None = None
    #: The taken seats: role -> SHA-256 of its token (filled by :meth:`Store.load` and :meth:`Store.head`).
    seats: dict[str, str] = field(default_factory=dict)
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
                # WAL with synchronous=NORMAL: a commit survives the process being killed (not a power cut).
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._migrate()

    def _migrate(self) -> None:
        """Create the tables, or bring an older file up to :data:`SCHEMA_VERSION` (in one transaction)."""
        self._db.execute("BEGIN IMMEDIATE")  # two servers opening one old file must not both upgrade it
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path} was written by a newer ggp (schema {version} > {SCHEMA_VERSION}); "
                    "upgrade ggp or use another --db file"
                )
            columns = {r["name"] for r in self._db.execute("PRAGMA table_info(matches)")}
            script = (_MIGRATE_1_TO_2 if columns and "ended" not in columns else "") + _SCHEMA
            for statement in script.split(";\n"):
                if statement.strip():
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- other tables (the catalog's uploads, the arena) ---------------------------------------
    def execute_script(self, script: str) -> None:
        """Run ``CREATE TABLE IF NOT EXISTS`` statements (separated by ``;``) for a table kept beside matches."""
        with self._lock, self._db:
            for statement in script.split(";"):
                if statement.strip():
                    self._db.execute(statement)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One write statement in its own transaction; the number of rows it changed."""
        with self._lock, self._db:
            return int(self._db.execute(sql, tuple(params)).rowcount)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """The rows of one read statement."""
        with self._lock:
            return list(self._db.execute(sql, tuple(params)).fetchall())

    def iterate(self, sql: str, params: Sequence[Any] = ()) -> Iterator[sqlite3.Row]:
        """The rows of one read statement, one at a time (a whole table's rows are never in memory at once).

        The store's lock is held until the rows are exhausted or the iterator is closed: the caller must not
        use the store meanwhile, and should take every row at once (as a startup count does).
        """
        with self._lock:
            cursor = self._db.execute(sql, tuple(params))
            try:
                yield from cursor
            finally:
                cursor.close()

    # --- writing -----------------------------------------------------------------------------
    def create(
        self,
        match_id: str,
        game: str,
        roles: Sequence[str],
        players: Sequence[str],
        settings: dict[str, Any],
        initial_state: str,
        seats: dict[str, str] | None = None,
    ) -> None:
        """Store a new match, its initial state (step 0) and its taken seats (role -> token hash)."""
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
            self._db.executemany(
                "INSERT INTO seats (match_id, role, token_hash, claimed) VALUES (?, ?, ?, ?)",
                [(match_id, role, digest, now) for role, digest in (seats or {}).items()],
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
        result: str | None = None,
    ) -> None:
        """Store state ``step``, reached by ``joint``; clears the pending moves, and ends the match if terminal.

        ``info`` holds the step's think times and agent faults (see :class:`StoredMatch`); ``result`` is the
        outcome in words when terminal. Storing a step that is not the next one raises ``ValueError`` and
        stores nothing, so two writers cannot both extend a match.
        """
        now = time.time()
        with self._lock, self._db:
            self._db.execute("BEGIN")
            updated = self._db.execute(
                "UPDATE matches SET steps = ?, updated = ?, status = ?, goals = ?, pending = '{}', ended = ?, "
                "result = ? WHERE id = ? AND steps = ? AND status = 'playing'",
                (
                    step,
                    now,
                    "over" if terminal else "playing",
                    json.dumps(list(goals)) if goals is not None else None,
                    "terminal" if terminal else None,
                    result if terminal else None,
                    match_id,
                    step - 1,
                ),
            ).rowcount
            if updated != 1:
                raise ValueError(f"match {match_id!r} is not playing at step {step - 1}; step {step} not stored")
            self._db.execute(
                "INSERT INTO steps (match_id, step, joint, state, at, info) VALUES (?, ?, ?, ?, ?, ?)",
                (match_id, step, json.dumps(list(joint)), state, now, json.dumps(info) if info else None),
            )

    def finish(self, match_id: str, ended: str, goals: Sequence[int] | None, result: str) -> None:
        """End a match being played without a terminal state (``resigned``, ``drawn`` by agreement or ``aborted``)."""
        if ended not in ("resigned", "drawn", "aborted"):
            raise ValueError(f"a match is finished early by 'resigned', 'drawn' or 'aborted', not {ended!r}")
        with self._lock, self._db:
            self._db.execute(
                "UPDATE matches SET status = 'over', ended = ?, goals = ?, result = ?, pending = '{}', updated = ? "
                "WHERE id = ?",
                (ended, json.dumps(list(goals)) if goals is not None else None, result, time.time(), match_id),
            )

    def take_back(self, match_id: str, step: int) -> None:
        """Forget the steps after ``step`` of a match being played (a move taken back against the computer)."""
        with self._lock, self._db:
            changed = self._db.execute(
                "UPDATE matches SET steps = ?, pending = '{}', updated = ? WHERE id = ? AND status = 'playing' "
                "AND steps >= ?",
                (step, time.time(), match_id, step),
            ).rowcount
            if changed != 1:
                raise ValueError(f"match {match_id!r} is not being played past step {step}")
            self._db.execute("DELETE FROM steps WHERE match_id = ? AND step > ?", (match_id, step))

    def set_pending(self, match_id: str, pending: dict[str, str]) -> None:
        """Remember the moves people submitted for the step in progress."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE matches SET pending = ?, updated = ? WHERE id = ?", (json.dumps(pending), time.time(), match_id)
            )

    def add_seat(self, match_id: str, role: str, token_hash: str) -> bool:
        """Give ``role``'s seat to the holder of the token hashed as ``token_hash``; False if it was taken."""
        with self._lock, self._db:
            try:
                self._db.execute(
                    "INSERT INTO seats (match_id, role, token_hash, claimed) VALUES (?, ?, ?, ?)",
                    (match_id, role, token_hash, time.time()),
                )
            except sqlite3.IntegrityError:
                return False
        return True

    def delete(self, match_id: str) -> bool:
        """Remove a match with its steps and seats; False if there was none."""
        with self._lock, self._db:
            return self._db.execute("DELETE FROM matches WHERE id = ?", (match_id,)).rowcount == 1

    # --- reading -----------------------------------------------------------------------------
    def head(self, match_id: str) -> StoredMatch | None:
        """The match and its seats without its states, or None if there is none with that id."""
        with self._lock:
            row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            seats = self._db.execute("SELECT role, token_hash FROM seats WHERE match_id = ?", (match_id,)).fetchall()
        match = _match(row)
        match.seats = {s["role"]: s["token_hash"] for s in seats}
        return match

    def load(self, match_id: str) -> StoredMatch | None:
        """The match with all its states, moves and seats, or None if there is none with that id."""
        with self._lock:
            row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            steps = self._db.execute(
                "SELECT step, joint, state, at, info FROM steps WHERE match_id = ? ORDER BY step", (match_id,)
            ).fetchall()
            seats = self._db.execute("SELECT role, token_hash FROM seats WHERE match_id = ?", (match_id,)).fetchall()
        match = _match(row)
        match.seats = {s["role"]: s["token_hash"] for s in seats}
        match.states = [s["state"] for s in steps]
        match.joints = [json.loads(s["joint"]) for s in steps[1:]]
        match.times = [float(s["at"]) for s in steps]
        match.infos = [json.loads(s["info"]) if s["info"] else {} for s in steps[1:]]
        return match

    def playing_without_people(self) -> list[str]:
        """The ids of matches being played by agents alone, oldest first: they go on when the server starts."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM matches WHERE status = 'playing' AND NOT EXISTS "
                "(SELECT 1 FROM json_each(matches.players) WHERE value = 'human') ORDER BY created, id"
            ).fetchall()
        return [r["id"] for r in rows]

    def abandon_stale(self, before: float, keep: Collection[str] = (), result: str = "abandoned") -> list[str]:
        """End as ``abandoned`` (no goals) the matches with people still played whose last move or submission is
        older than ``before`` (a :func:`time.time`), except ``keep`` (those in play in memory); their ids."""
        with self._lock, self._db:
            rows = self._db.execute(
                "SELECT id FROM matches WHERE status = 'playing' AND updated < ? AND EXISTS "
                "(SELECT 1 FROM json_each(matches.players) WHERE value = 'human')",
                (before,),
            ).fetchall()
            ids = [r["id"] for r in rows if r["id"] not in keep]
            self._db.executemany(
                "UPDATE matches SET status = 'over', ended = 'abandoned', goals = NULL, result = ?, pending = '{}', "
                "updated = ? WHERE id = ? AND status = 'playing'",
                [(result, time.time(), i) for i in ids],
            )
        return ids

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
        ended=row["ended"],
        result=row["result"],
    )
