"""A tournament's SQLite database: its settings, the schedule (one row per match), results and events.

The runner alone writes it; see :mod:`ggp.match.tournament` for the guarantees
and the schema.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import GGPError
from ..record import MatchRecord
from ..referee import now_iso

DEFAULT_DB = "ggp-tournament.sqlite"
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id         INTEGER PRIMARY KEY,
    agent_a    TEXT NOT NULL,
    agent_b    TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    seats      TEXT NOT NULL CHECK (seats IN ('ab', 'ba')),
    seed       INTEGER NOT NULL,
    status     TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
    starts     INTEGER NOT NULL DEFAULT 0,
    crashes    INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_at TEXT,
    error      TEXT,
    CHECK (agent_a < agent_b),
    UNIQUE (agent_a, agent_b, game_index, seats)
);
CREATE INDEX IF NOT EXISTS matches_status ON matches (status, id);
CREATE TABLE IF NOT EXISTS results (
    match_id    INTEGER PRIMARY KEY REFERENCES matches (id),
    goal_a      INTEGER NOT NULL,
    goal_b      INTEGER NOT NULL,
    steps       INTEGER NOT NULL,
    faults      INTEGER NOT NULL,
    record      TEXT NOT NULL,
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id       INTEGER PRIMARY KEY,
    time     TEXT NOT NULL,
    match_id INTEGER,
    kind     TEXT NOT NULL,
    detail   TEXT NOT NULL
);
"""


class TournamentError(GGPError):
    """A tournament cannot run as asked (a different game in the database, a busy database, ...)."""


@dataclass(frozen=True)
class Settings:
    """What every match of a tournament shares; fixed when its database is created."""

    game: str
    start_clock: float
    play_clock: float
    grace: float = 0.25
    seed: int = 0


@dataclass(frozen=True)
class MatchRow:
    """One scheduled match."""

    id: int
    agent_a: str
    agent_b: str
    game_index: int
    seats: str
    seed: int
    status: str
    starts: int
    crashes: int

    @property
    def specs(self) -> tuple[str, str]:
        """The agent specs in role order."""
        return (self.agent_a, self.agent_b) if self.seats == "ab" else (self.agent_b, self.agent_a)


def match_seed(tournament_seed: int, agent_a: str, agent_b: str, game_index: int, seats: str) -> int:
    """The seed of a scheduled match: a hash of the tournament's seed and the match's key."""
    return zlib.crc32(f"{tournament_seed}|{agent_a}|{agent_b}|{game_index}|{seats}".encode()) & 0x7FFFFFFF


class TournamentDB:
    """A tournament's SQLite database: settings, schedule, results and events."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        """Open the database at ``path``; with ``create``, a new one (an empty file or none) gets the schema.

        Any other file is left untouched: SQLite would take a short text file
        for an empty database and write over it.
        """
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise TournamentError(f"no tournament database at {str(self.path)!r}")
        if self.path.is_file() and self.path.stat().st_size > 0:
            with self.path.open("rb") as fh:
                if fh.read(16) != b"SQLite format 3\x00":
                    raise TournamentError(
                        f"cannot open tournament database {str(self.path)!r}: file is not a database; give another --db"
                    )
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        except sqlite3.DatabaseError as exc:
            raise TournamentError(f"cannot open tournament database {str(self.path)!r}: {exc}") from None
        try:
            self.conn.row_factory = sqlite3.Row
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise TournamentError(f"{self.path} was written by a newer ggp (schema {version}); upgrade ggp")
            if version == 0:
                tables = self.conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
                if tables:
                    raise TournamentError(f"{self.path} is an SQLite database, but not a ggp tournament")
                if not create:
                    raise TournamentError(f"{self.path} holds no tournament yet")
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.executescript(f"BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        except (sqlite3.DatabaseError, TournamentError) as exc:
            self.conn.close()
            if isinstance(exc, TournamentError):
                raise
            raise TournamentError(f"cannot open tournament database {str(self.path)!r}: {exc}") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> TournamentDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an exception)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- settings -------------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in self.conn.execute("SELECT key, value FROM meta")}

    def settings(self) -> Settings | None:
        """The tournament's settings, or ``None`` for a new database."""
        meta = self.meta()
        if "game" not in meta:
            return None
        return Settings(
            game=meta["game"],
            start_clock=float(meta["start_clock"]),
            play_clock=float(meta["play_clock"]),
            grace=float(meta["grace"]),
            seed=int(meta["seed"]),
        )

    def init_settings(self, settings: Settings) -> None:
        """Store ``settings`` in a new database."""
        with self.transaction() as db:
            if db.execute("SELECT count(*) FROM meta WHERE key = 'game'").fetchone()[0]:
                raise TournamentError(f"{self.path} already holds a tournament")
            for key, value in (
                ("game", settings.game),
                ("start_clock", repr(settings.start_clock)),
                ("play_clock", repr(settings.play_clock)),
                ("grace", repr(settings.grace)),
                ("seed", str(settings.seed)),
                ("created", now_iso()),
                ("agent_modules", "[]"),
            ):
                db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, value))

    def agent_modules(self) -> list[str]:
        return list(json.loads(self.meta().get("agent_modules", "[]")))

    def add_agent_modules(self, modules: Sequence[str]) -> None:
        known = self.agent_modules()
        merged = known + [m for m in modules if m not in known]
        if merged != known:
            with self.transaction() as db:
                db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('agent_modules', ?)", (json.dumps(merged),)
                )

    # --- schedule -------------------------------------------------------------------------------
    def schedule(self, specs: Sequence[str], games: int) -> int:
        """Schedule the round robin of ``specs``, ``games`` per pair and seating; returns how many matches are new.

        Matches already scheduled (same key) are left alone, so scheduling
        again with more agents or games extends the tournament.
        """
        settings = self.settings()
        if settings is None:
            raise TournamentError("the tournament has no settings yet")
        if len(set(specs)) != len(specs):
            raise TournamentError("an agent spec is listed twice")
        added = 0
        with self.transaction() as db:
            for game_index in range(games):
                for x in range(len(specs)):
                    for y in range(x + 1, len(specs)):
                        a, b = sorted((specs[x], specs[y]))
                        first = "ab" if specs[x] == a else "ba"  # the listed-first agent plays the first role first
                        for seats in (first, "ba" if first == "ab" else "ab"):
                            cur = db.execute(
                                "INSERT OR IGNORE INTO matches (agent_a, agent_b, game_index, seats, seed)"
                                " VALUES (?, ?, ?, ?, ?)",
                                (a, b, game_index, seats, match_seed(settings.seed, a, b, game_index, seats)),
                            )
                            added += cur.rowcount
        return added

    def retry_failed(self) -> int:
        """Put failed matches back in the schedule; returns how many."""
        with self.transaction() as db:
            cur = db.execute("UPDATE matches SET status = 'pending', crashes = 0, error = NULL WHERE status = 'failed'")
            return cur.rowcount

    def matches(self, status: str | None = None) -> list[MatchRow]:
        query = "SELECT id, agent_a, agent_b, game_index, seats, seed, status, starts, crashes FROM matches"
        rows = (
            self.conn.execute(query + " WHERE status = ? ORDER BY id", (status,))
            if status
            else self.conn.execute(query + " ORDER BY id")
        )
        return [MatchRow(**dict(row)) for row in rows]

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("pending", "running", "done", "failed"), 0)
        for row in self.conn.execute("SELECT status, count(*) AS n FROM matches GROUP BY status"):
            counts[row["status"]] = row["n"]
        return counts

    def agents(self) -> list[str]:
        """Every agent in the schedule, in order of first appearance."""
        seen: dict[str, None] = {}
        for row in self.conn.execute("SELECT agent_a, agent_b, seats FROM matches ORDER BY id"):
            first, second = (row[0], row[1]) if row[2] == "ab" else (row[1], row[0])
            seen.setdefault(first)
            seen.setdefault(second)
        return list(seen)

    # --- claims and results ----------------------------------------------------------------------
    def reclaim(self) -> int:
        """Put matches left ``running`` by a dead runner back to ``pending``; call only holding the lock."""
        with self.transaction() as db:
            cur = db.execute("UPDATE matches SET status = 'pending', claimed_by = NULL WHERE status = 'running'")
            if cur.rowcount:
                db.execute(
                    "INSERT INTO events (time, kind, detail) VALUES (?, 'reclaimed', ?)",
                    (now_iso(), f"{cur.rowcount} match(es) left running by an interrupted run were put back"),
                )
            return cur.rowcount

    def claim(self, match_id: int, owner: str) -> bool:
        with self.transaction() as db:
            cur = db.execute(
                "UPDATE matches SET status = 'running', starts = starts + 1, claimed_by = ?, claimed_at = ?"
                " WHERE id = ? AND status = 'pending'",
                (owner, now_iso(), match_id),
            )
            return cur.rowcount == 1

    def finish(self, match_id: int, owner: str, record: MatchRecord) -> bool:
        """Store the result of a match this runner claimed; ``False`` (nothing written) if it is not ours."""
        row = self.conn.execute("SELECT agent_a, seats FROM matches WHERE id = ?", (match_id,)).fetchone()
        goals = record.goals
        goal_a, goal_b = (goals[0], goals[1]) if row["seats"] == "ab" else (goals[1], goals[0])
        with self.transaction() as db:
            cur = db.execute(
                "UPDATE matches SET status = 'done', error = NULL WHERE id = ? AND status = 'running' AND claimed_by = ?",
                (match_id, owner),
            )
            if cur.rowcount != 1:
                return False
            db.execute(
                "INSERT INTO results (match_id, goal_a, goal_b, steps, faults, record, finished_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    match_id,
                    goal_a,
                    goal_b,
                    record.steps,
                    sum(1 for _ in record.all_faults()),
                    record.to_json(compact=True),
                    record.finished,
                ),
            )
        return True

    def crashed(self, match_id: int, owner: str, kind: str, detail: str, max_crashes: int) -> bool:
        """A worker died on this match: back to pending, or failed after ``max_crashes``; ``True`` if it will re-run."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO events (time, match_id, kind, detail) VALUES (?, ?, ?, ?)",
                (now_iso(), match_id, kind, detail),
            )
            row = db.execute(
                "SELECT crashes FROM matches WHERE id = ? AND status = 'running' AND claimed_by = ?", (match_id, owner)
            ).fetchone()
            if row is None:
                return False
            crashes = row["crashes"] + 1
            status = "failed" if crashes >= max_crashes else "pending"
            error = f"{kind}: {detail}" if status == "failed" else None
            db.execute(
                "UPDATE matches SET status = ?, crashes = ?, claimed_by = NULL, error = ? WHERE id = ?",
                (status, crashes, error, match_id),
            )
            return status == "pending"

    def fail(self, match_id: int, owner: str, detail: str, kind: str = "error") -> None:
        """A match could not be played (an error outside the agents' calls, or ``cancelled``): mark it failed."""
        with self.transaction() as db:
            db.execute(
                "UPDATE matches SET status = 'failed', claimed_by = NULL, error = ? WHERE id = ? AND claimed_by = ?",
                (detail, match_id, owner),
            )
            db.execute(
                "INSERT INTO events (time, match_id, kind, detail) VALUES (?, ?, ?, ?)",
                (now_iso(), match_id, kind, detail),
            )

    def release(self, owner: str) -> int:
        """Put this runner's unfinished matches back to ``pending`` (after an interruption)."""
        with self.transaction() as db:
            cur = db.execute(
                "UPDATE matches SET status = 'pending', claimed_by = NULL WHERE status = 'running' AND claimed_by = ?",
                (owner,),
            )
            return cur.rowcount

    def log(self, kind: str, detail: str, match_id: int | None = None) -> None:
        self.conn.execute(
            "INSERT INTO events (time, match_id, kind, detail) VALUES (?, ?, ?, ?)", (now_iso(), match_id, kind, detail)
        )

    def events(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute("SELECT time, match_id, kind, detail FROM events ORDER BY id")]

    def results(self) -> list[dict[str, Any]]:
        """The finished matches: agents, seats, goals, steps, faults (no records)."""
        rows = self.conn.execute(
            "SELECT m.id, m.agent_a, m.agent_b, m.game_index, m.seats, m.starts, m.crashes,"
            " r.goal_a, r.goal_b, r.steps, r.faults, r.finished_at"
            " FROM results r JOIN matches m ON m.id = r.match_id ORDER BY m.id"
        )
        return [dict(row) for row in rows]

    def record(self, match_id: int) -> MatchRecord:
        row = self.conn.execute("SELECT record FROM results WHERE match_id = ?", (match_id,)).fetchone()
        if row is None:
            raise TournamentError(f"match {match_id} has no result in {self.path}")
        return MatchRecord.from_json(row["record"], source=f"{self.path} match {match_id}")
