"""Round-robin tournaments in parallel worker processes, stored in SQLite, resumable.

Every pair of agents (spec strings) plays ``games`` matches in each seating
(so ``2 * games`` per pair). The whole schedule is written to the database
first, one row per match with the unique key (pair, game index, seats), and
each match's seed is fixed there. Then a runner hands pending matches to
worker processes, each of which builds its agents from the spec strings and
plays the match with a :class:`~ggp.match.referee.Referee`. The runner alone
writes the database, as each match finishes.

Guarantees:

* **No game counted twice.** A result row's key is its match's id, and it is
  written in the same transaction that moves the match from ``running`` (claimed
  by this runner) to ``done``.
* **No game lost.** A worker that dies (or stalls: no sign of life for
  ``stall_timeout`` seconds, when it is killed) has its match put back to
  ``pending`` and re-run by a fresh worker; after ``max_crashes`` such failures
  the match is marked ``failed`` (not counted; ``--retry-failed`` schedules it
  again). A worker whose match left a runaway agent thread (see
  :mod:`ggp.match.referee`) is retired after reporting, killing the thread.
* **Resumable.** Only one runner works on a database at a time (an exclusive
  lock on ``DB.lock``, released by the operating system if the runner dies).
  So when a runner starts, any ``running`` match is left over from a runner
  that was interrupted or killed, and goes back to ``pending``. Running the
  command again runs exactly the unfinished matches.

Schema (``PRAGMA user_version`` = 1)::

    meta(key PRIMARY KEY, value)        -- game, start_clock, play_clock, grace, seed, agent_modules, created
    matches(id PRIMARY KEY, agent_a, agent_b, game_index, seats, seed,
            status pending|running|done|failed, starts, crashes, claimed_by, claimed_at, error,
            UNIQUE(agent_a, agent_b, game_index, seats))
                                        -- agent_a < agent_b; seats 'ab': agent_a plays the first role
    results(match_id PRIMARY KEY REFERENCES matches, goal_a, goal_b, steps, faults, record, finished_at)
                                        -- record: the match record (JSON, see ggp.match.record)
    events(id PRIMARY KEY, time, match_id, kind, detail)
                                        -- reclaimed, crash, stall, failed, retired, error

Workers start by the ``forkserver`` method where the platform has it (else
``spawn``), so they never inherit the runner's threads, and a replacement
worker starts quickly. Workers ignore Ctrl-C; the runner stops them.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import signal
import socket
import sqlite3
import time
import traceback
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import GGPError
from .record import MatchRecord
from .referee import now_iso
from .stats import mean_interval, outcome
from .warm import warm_up

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


# --- settings and the database -----------------------------------------------------------------------
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

    def fail(self, match_id: int, owner: str, detail: str) -> None:
        """A match could not be played (an error outside the agents' calls): mark it failed."""
        with self.transaction() as db:
            db.execute(
                "UPDATE matches SET status = 'failed', claimed_by = NULL, error = ? WHERE id = ? AND claimed_by = ?",
                (detail, match_id, owner),
            )
            db.execute(
                "INSERT INTO events (time, match_id, kind, detail) VALUES (?, ?, 'error', ?)",
                (now_iso(), match_id, detail),
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


# --- the runner lock -----------------------------------------------------------------------------------
@contextlib.contextmanager
def runner_lock(db_path: str | Path) -> Iterator[None]:
    """Hold the exclusive lock that lets one runner at a time work on ``db_path``.

    Uses ``fcntl.flock`` on ``DB.lock``; the operating system releases it when
    the process dies. Where ``fcntl`` is missing (Windows) there is no lock.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    lock_path = Path(str(db_path) + ".lock")
    with open(lock_path, "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise TournamentError(f"another tournament runner ({holder}) is working on {db_path}") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


# --- workers -----------------------------------------------------------------------------------------
def worker_main(conn: mpc.Connection, modules: list[str]) -> None:
    """A worker process: play the matches the runner sends until told to quit (or the runner is gone)."""
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    try:
        from .plugins import load_agent_modules

        load_agent_modules(modules)
        conn.send(("ready", os.getpid()))
        while True:
            try:
                message = conn.recv()
            except EOFError:
                return
            if message[0] != "run":
                return
            task: dict[str, Any] = message[1]
            runaway = _play_task(conn, task)
            if runaway:
                conn.send(("retire", f"{runaway} runaway agent thread(s) left running"))
                return
    except (BrokenPipeError, EOFError, ConnectionResetError):
        return  # the runner is gone
    except BaseException as exc:
        with contextlib.suppress(OSError):
            conn.send(("fatal", f"{type(exc).__name__}: {exc}"))
        raise


def _play_task(conn: mpc.Connection, task: dict[str, Any]) -> int:
    from ..core.registry import load
    from .series import play_one

    match_id = task["id"]
    conn.send(("started", match_id))
    try:
        warm_up([task["game"]])  # once per process: load the game's kernels before the clocks run
        record, referee = play_one(
            load(task["game"]),
            task["specs"],
            seed=task["seed"],
            start_clock=task["start_clock"],
            play_clock=task["play_clock"],
            grace=task["grace"],
            on_step=lambda step, joint: conn.send(("step", match_id, step)),
        )
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception as exc:
        conn.send(("error", match_id, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
        return 0
    conn.send(("done", match_id, record.to_json(compact=True)))
    return len(referee.runaway_threads())


@dataclass
class _Worker:
    proc: Any
    conn: mpc.Connection
    task: int | None = None
    heartbeat: float = field(default_factory=time.monotonic)
    retiring: bool = False
    stalled: bool = False
    gone: bool = False
    ready: bool = False
    fatal: str = ""


@dataclass
class RunEvent:
    """What the runner reports as it goes: a finished match, or a crash, stall, failure, ..."""

    kind: str  # done | crash | stall | failed | error | retired | reclaimed
    match_id: int | None
    text: str
    record: MatchRecord | None = None


@dataclass
class RunSummary:
    """What one run did."""

    finished: int = 0
    crashes: int = 0
    failed: int = 0
    reclaimed: int = 0
    counts: dict[str, int] = field(default_factory=dict)


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _context() -> Any:
    methods = mp.get_all_start_methods()
    method = "forkserver" if "forkserver" in methods else "spawn"
    ctx = mp.get_context(method)
    if method == "forkserver":
        from multiprocessing import forkserver

        # The server imports these once; every worker is forked from it with them loaded.
        ctx.set_forkserver_preload(["ggp.match._preload"])
        forkserver.ensure_running()  # starts importing while this process loads its own game
    return ctx


def run_tournament(
    db_path: str | Path,
    *,
    workers: int | None = None,
    limit: int | None = None,
    stall_timeout: float | None = None,
    max_crashes: int = 3,
    on_event: Callable[[RunEvent], None] | None = None,
) -> RunSummary:
    """Run the pending matches of the tournament in ``db_path`` on ``workers`` processes.

    ``limit`` runs at most that many matches (the rest stay pending for a
    later run). ``stall_timeout`` (default: twice the longer clock plus 60 s)
    is how long a worker may go without a sign of life (a move played) before
    it is killed and its match re-run. Raises :class:`TournamentError` if
    another runner holds the database.
    """
    if not Path(db_path).is_file():
        raise TournamentError(f"no tournament database at {str(db_path)!r}")
    with runner_lock(db_path), TournamentDB(db_path, create=False) as db:
        settings = db.settings()
        if settings is None:
            raise TournamentError(f"{db_path} holds no tournament settings")
        modules = db.agent_modules()
        summary = RunSummary()
        summary.reclaimed = db.reclaim()
        if summary.reclaimed and on_event:
            on_event(RunEvent("reclaimed", None, f"{summary.reclaimed} match(es) of an interrupted run will be re-run"))
        queue = deque(row.id for row in db.matches("pending"))
        if limit is not None:
            queue = deque(list(queue)[:limit])
        rows = {row.id: row for row in db.matches()}
        stall = stall_timeout if stall_timeout is not None else 2 * max(settings.start_clock, settings.play_clock) + 60
        owner = f"{socket.gethostname()}:{os.getpid()}"
        if not queue:
            summary.counts = db.counts()
            return summary
        ctx = _context()
        warm_up([settings.game])  # this process verifies every record: load the game now
        pool: list[_Worker] = []
        failed_starts: list[str] = []

        def emit(event: RunEvent) -> None:
            if on_event is not None:
                on_event(event)

        def start_worker() -> None:
            parent_conn, child_conn = ctx.Pipe()
            proc = ctx.Process(target=worker_main, args=(child_conn, modules), name="ggp-tournament-worker")
            proc.start()
            child_conn.close()
            pool.append(_Worker(proc=proc, conn=parent_conn))

        def handle(worker: _Worker, message: tuple[Any, ...]) -> None:
            kind = message[0]
            worker.heartbeat = time.monotonic()
            if kind == "ready":
                worker.ready = True
                failed_starts.clear()
            elif kind == "done":
                match_id, text = message[1], message[2]
                worker.task = None
                try:
                    record = MatchRecord.from_json(text, verify=True, source=f"match {match_id}")
                except GGPError as exc:
                    db.fail(match_id, owner, f"the worker's record does not verify: {exc}")
                    summary.failed += 1
                    emit(RunEvent("failed", match_id, f"match {match_id}: bad record: {exc}"))
                    return
                if db.finish(match_id, owner, record):
                    summary.finished += 1
                    emit(RunEvent("done", match_id, f"match {match_id} finished", record))
            elif kind == "error":
                match_id, text = message[1], message[2]
                worker.task = None
                db.fail(match_id, owner, text)
                summary.failed += 1
                emit(RunEvent("failed", match_id, f"match {match_id} failed: {text.splitlines()[0]}"))
            elif kind == "retire":
                worker.retiring = True
                db.log("retired", f"worker {worker.proc.pid} retired: {message[1]}")
                emit(RunEvent("retired", None, f"worker {worker.proc.pid} retired: {message[1]}"))
            elif kind == "fatal":
                worker.fatal = str(message[1])
                db.log("error", f"worker {worker.proc.pid}: {message[1]}")
                emit(RunEvent("error", worker.task, f"worker {worker.proc.pid} failed: {message[1]}"))

        def drain(worker: _Worker) -> None:
            try:
                while worker.conn.poll():
                    handle(worker, worker.conn.recv())
            except (EOFError, OSError):
                worker.gone = True

        def bury(worker: _Worker) -> None:
            worker.proc.join(5)
            code = worker.proc.exitcode
            worker.conn.close()
            pool.remove(worker)
            if not worker.ready:  # it never started: no match is to blame
                failed_starts.append(
                    worker.fatal or (f"no sign of life for {stall:g} s" if worker.stalled else f"it {_death(code)}")
                )
                if len(failed_starts) >= 3:
                    raise TournamentError(
                        f"worker processes fail to start ({failed_starts[-1]}); check the agent modules "
                        "(they are imported in every worker) and try again"
                    )
            if worker.task is None:
                return
            match_id = worker.task
            how = "stall" if worker.stalled else "crash"
            what = (
                f"worker {worker.proc.pid} showed no sign of life for {stall:g} s and was killed"
                if worker.stalled
                else f"worker {worker.proc.pid} {_death(code)}"
            )
            again = db.crashed(match_id, owner, how, f"{what} while playing match {match_id}", max_crashes)
            summary.crashes += 1
            if again:
                queue.appendleft(match_id)
                emit(RunEvent(how, match_id, f"{what} during match {match_id}; it will be re-run"))
            else:
                summary.failed += 1
                emit(
                    RunEvent(
                        "failed", match_id, f"{what} during match {match_id}; failed {max_crashes} times, given up"
                    )
                )

        try:
            nworkers = max(1, workers or default_workers())
            while queue or any(w.task is not None for w in pool):
                busy = sum(1 for w in pool if w.task is not None)
                while len(pool) < min(nworkers, busy + len(queue)):
                    start_worker()
                for worker in pool:
                    if worker.task is None and worker.ready and not worker.retiring and not worker.gone and queue:
                        match_id = queue.popleft()
                        if not db.claim(match_id, owner):
                            continue
                        row = rows[match_id]
                        task = {
                            "id": match_id,
                            "game": settings.game,
                            "specs": list(row.specs),
                            "seed": row.seed,
                            "start_clock": settings.start_clock,
                            "play_clock": settings.play_clock,
                            "grace": settings.grace,
                        }
                        worker.task = match_id
                        worker.heartbeat = time.monotonic()
                        try:
                            worker.conn.send(("run", task))
                        except OSError:
                            worker.gone = True
                waitables: list[Any] = [w.conn for w in pool] + [w.proc.sentinel for w in pool]
                mpc.wait(waitables, timeout=1.0)
                for worker in list(pool):
                    drain(worker)
                    if worker.gone or not worker.proc.is_alive():
                        drain(worker)
                        bury(worker)
                    elif (worker.task is not None or not worker.ready) and time.monotonic() - worker.heartbeat > stall:
                        # a worker silent in a match, or never ready (an agent module that hangs on import)
                        worker.stalled = True
                        worker.proc.kill()
                    elif worker.task is None and worker.retiring:
                        worker.proc.join(5)
                        bury(worker)
            for worker in pool:
                with contextlib.suppress(OSError):
                    worker.conn.send(("quit",))
            for worker in pool:
                worker.proc.join(5)
        finally:
            for worker in pool:
                if worker.proc.is_alive():
                    worker.proc.kill()
                    worker.proc.join(5)
                worker.conn.close()
            db.release(owner)
            summary.counts = db.counts()
        return summary


def _death(code: int | None) -> str:
    """How a worker process ended, for messages: ``died (exit code 17)``, ``died (killed by SIGSEGV, exit code -11)``."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"died (killed by {name}, exit code {code})"
    return f"died (exit code {code})"


# --- reports -----------------------------------------------------------------------------------------
def report_lines(db_path: str | Path, *, resamples: int = 500) -> list[str]:
    """The tournament in ``db_path`` as text: progress, then the ratings table."""
    from .ratings import rate
    from .stats import align

    with TournamentDB(db_path, create=False) as db:
        settings = db.settings()
        if settings is None:
            raise TournamentError(f"{db_path} holds no tournament yet")
        counts = db.counts()
        results = db.results()
        agents = db.agents()
        crashes = sum(1 for e in db.events() if e["kind"] in ("crash", "stall"))
        failed = [(row.id, *row.specs) for row in db.matches("failed")]
    total = sum(counts.values())
    lines = [
        f"{settings.game} round robin in {db_path}: {len(agents)} agents, {counts['done']} of {total} matches done"
        + (f", {counts['pending'] + counts['running']} to run" if counts["pending"] + counts["running"] else "")
        + (f", {counts['failed']} failed" if counts["failed"] else ""),
        f"clocks: start {settings.start_clock:g} s, play {settings.play_clock:g} s; seed {settings.seed}"
        + (f"; {crashes} worker crash(es), their matches re-run" if crashes else ""),
    ]
    if not results:
        lines.append("no results yet")
        return lines
    games: list[tuple[str, str, float]] = []
    goals: dict[str, list[int]] = {a: [] for a in agents}
    for res in results:
        score = {"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome((res["goal_a"], res["goal_b"]), 0)]
        games.append((res["agent_a"], res["agent_b"], score))
        goals[res["agent_a"]].append(res["goal_a"])
        goals[res["agent_b"]].append(res["goal_b"])
    active = [a for a in agents if goals[a]]
    table = rate(active, games, resamples=resamples, goals=goals)
    lines.append(
        f"Bradley-Terry ratings (Elo scale, mean 0; a draw is half a win; 95% CI: bootstrap of games, {resamples} resamples)"
    )
    rows = [("rank", "agent", "rating", "95% CI", "games", "W", "D", "L", "score", "mean goal", "95% CI")]
    for rank, r in enumerate(table, 1):
        mean, ci = mean_interval(goals[r.agent], bounds=(0, 100))
        rows.append(
            (
                str(rank),
                r.agent,
                f"{r.rating:+.0f}",
                f"[{r.low:+.0f}, {r.high:+.0f}]",
                str(r.games),
                str(r.wins),
                str(r.draws),
                str(r.losses),
                f"{100 * r.score:.1f}%",
                f"{mean:.1f}",
                "n/a" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]",
            )
        )
    lines.extend(align(rows, right={0, 2, 4, 5, 6, 7, 8, 9}))
    for match_id, a, b in failed:
        lines.append(
            f"failed: match {match_id} ({a} vs {b}); `ggp tournament --db {db_path} --retry-failed` re-runs it"
        )
    return lines
