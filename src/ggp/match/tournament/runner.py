"""A tournament's runner: hands pending matches to worker processes and writes each result as it comes.

One runner at a time works on a database (:func:`runner_lock`); see
:mod:`ggp.match.tournament` for the guarantees.

:func:`run_tournament` plans a run (the matches to play, queued), runs it on a backend (worker processes of
this machine, or Ray actors), and has every match's outcome written and reported the same way whichever
backend played it (a result, a failure, a cancellation, a crash that re-runs the match).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import signal
import socket
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import GGPError
from ..record import MatchRecord
from ..warm import warm_up
from .db import MatchRow, Settings, TournamentDB, TournamentError
from .ray_backend import MAX_ACTORS, START_TIMEOUT, Outcome
from .worker import worker_main

#: Where matches run: worker processes on this machine, or Ray actors on a cluster.
BACKENDS = ("local", "ray")
#: The longest time budget a match may be given (a day).
MAX_MATCH_TIMEOUT = 86_400.0


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
    sent: float = 0.0
    cancelled: bool = False


@dataclass
class RunEvent:
    """What the runner reports as it goes: a finished match, or a crash, stall, failure, ..."""

    kind: str  # started | done | crash | stall | cancelled | failed | error | retired | reclaimed | worker
    match_id: int | None
    text: str
    record: MatchRecord | None = None
    #: The worker's process id and (Ray) node id, for ``started`` and ``worker`` (a worker ready) events.
    pid: int | None = None
    node: str | None = None


@dataclass
class RunSummary:
    """What one run did."""

    finished: int = 0
    crashes: int = 0
    failed: int = 0
    reclaimed: int = 0
    cancelled: int = 0
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
    backend: str = "local",
    address: str | None = None,
    match_timeout: float | None = None,
) -> RunSummary:
    """Run the pending matches of the tournament in ``db_path`` on ``workers`` processes.

    ``limit`` runs at most that many matches (the rest stay pending for a
    later run). ``stall_timeout`` (default: twice the longer clock plus 60 s)
    is how long a worker may go without a sign of life (a move played) before
    it is killed and its match re-run (on Ray too: a busy actor is asked for
    its last move every few seconds). ``match_timeout`` (default: none) is a
    match's time budget: a match still running after it is cancelled (its
    worker killed) and recorded as failed, ``cancelled`` in its error and
    events. Raises :class:`TournamentError` if another runner holds the database.

    ``backend="ray"`` runs the matches on Ray actors instead
    (:mod:`ggp.match.tournament.ray_backend`): on the cluster at ``address``,
    on the one this process is connected to, or on a new local instance;
    ``workers`` is then the number of actors (default: the cluster's CPUs).
    This process stays the database's only writer either way.
    """
    _check_arguments(db_path, backend, workers, match_timeout)
    with runner_lock(db_path), TournamentDB(db_path, create=False) as db:
        run = _plan_run(db, db_path, limit, stall_timeout, max_crashes, match_timeout, on_event)
        if not run.queue:
            run.summary.counts = db.counts()
            return run.summary
        if backend == "ray":
            try:
                _run_on_ray(run, workers, address)
            finally:
                run.close()
            return run.summary
        _run_locally(run, workers)
        return run.summary


def _check_arguments(db_path: str | Path, backend: str, workers: int | None, match_timeout: float | None) -> None:
    """Refuse a run's arguments before anything is locked or opened."""
    if backend not in BACKENDS:
        raise TournamentError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if match_timeout is not None and not (0 < match_timeout <= MAX_MATCH_TIMEOUT):
        raise TournamentError(f"a match's time budget is 0 to {MAX_MATCH_TIMEOUT:g} s, not {match_timeout!r}")
    if workers is not None and not (1 <= workers <= MAX_ACTORS):
        raise TournamentError(f"workers must be 1 to {MAX_ACTORS}, not {workers!r}")
    if not Path(db_path).is_file():
        raise TournamentError(f"no tournament database at {str(db_path)!r}")


@dataclass
class _Run:
    """One run on a database: the matches it is to play, and the writes and events for each match's outcome.

    Both backends report through it, so a result, failure, cancellation or crash is written and told the same
    way wherever the match ran.
    """

    db: TournamentDB
    settings: Settings
    modules: list[str]
    #: This runner's name in the database's claims: ``host:pid``.
    owner: str
    #: The ids of the matches still to hand out; a crashed match that will be re-run goes back to the front.
    queue: deque[int]
    rows: dict[int, MatchRow]
    stall: float
    max_crashes: int
    match_timeout: float | None
    summary: RunSummary
    on_event: Callable[[RunEvent], None] | None

    def emit(self, event: RunEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def task(self, match_id: int) -> dict[str, Any]:
        """What a worker is sent to play match ``match_id``."""
        row = self.rows[match_id]
        return {
            "id": match_id,
            "game": self.settings.game,
            "specs": list(row.specs),
            "seed": row.seed,
            "start_clock": self.settings.start_clock,
            "play_clock": self.settings.play_clock,
            "grace": self.settings.grace,
        }

    def finish(self, match_id: int, text: str, pid: int | None) -> None:
        """Verify the record a worker sent (JSON ``text``) and store it; a record that does not verify fails."""
        try:
            record = MatchRecord.from_json(text, verify=True, source=f"match {match_id}")
        except GGPError as exc:
            self.db.fail(match_id, self.owner, f"the worker's record does not verify: {exc}")
            self.summary.failed += 1
            self.emit(RunEvent("failed", match_id, f"match {match_id}: bad record: {exc}"))
            return
        if self.db.finish(match_id, self.owner, record):
            self.summary.finished += 1
            self.emit(RunEvent("done", match_id, f"match {match_id} finished", record, pid=pid))

    def fail(self, match_id: int, text: str) -> None:
        """The match could not be played (the worker says why, in ``text``): it fails."""
        self.db.fail(match_id, self.owner, text)
        self.summary.failed += 1
        self.emit(RunEvent("failed", match_id, f"match {match_id} failed: {text.splitlines()[0]}"))

    def cancel(self, match_id: int, text: str) -> None:
        """The match outran its time budget and its worker was killed: it fails as ``cancelled``."""
        self.db.fail(match_id, self.owner, text, kind="cancelled")
        self.summary.failed += 1
        self.summary.cancelled += 1
        self.emit(RunEvent("cancelled", match_id, f"match {match_id} {text}; `--retry-failed` runs it again"))

    def crash(self, match_id: int, how: str, cause: str, *, given_up_says: str = "during") -> None:
        """A worker died (``how`` is ``crash``) or stalled (``stall``) in the match, as ``cause`` says: the match
        is re-run, or fails once it has crashed ``max_crashes`` times (its event then says ``cause``
        ``given_up_says`` ``match N``)."""
        again = self.db.crashed(match_id, self.owner, how, f"{cause} while playing match {match_id}", self.max_crashes)
        self.summary.crashes += 1
        if again:
            self.queue.appendleft(match_id)
            self.emit(RunEvent(how, match_id, f"{cause} during match {match_id}; it will be re-run"))
        else:
            self.summary.failed += 1
            given_up = f"{cause} {given_up_says} match {match_id}; failed {self.max_crashes} times, given up"
            self.emit(RunEvent("failed", match_id, given_up))

    def close(self) -> None:
        """Hand back this runner's unfinished matches (to ``pending``) and count where the tournament stands."""
        self.db.release(self.owner)
        self.summary.counts = self.db.counts()


def _plan_run(
    db: TournamentDB,
    db_path: str | Path,
    limit: int | None,
    stall_timeout: float | None,
    max_crashes: int,
    match_timeout: float | None,
    on_event: Callable[[RunEvent], None] | None,
) -> _Run:
    """Reclaim the matches of an interrupted run and queue the pending ones (at most ``limit``)."""
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
    return _Run(db, settings, modules, owner, queue, rows, stall, max_crashes, match_timeout, summary, on_event)


def _run_locally(run: _Run, workers: int | None) -> None:
    """The local backend: the run's matches on ``workers`` worker processes of this machine."""
    pool = _LocalPool(run, _context())
    warm_up([run.settings.game])  # this process verifies every record: load the game now
    try:
        pool.play(max(1, workers or default_workers()))
        pool.quit()
    finally:
        pool.kill()
        run.close()


class _LocalPool:
    """Worker processes playing a run's matches: started as needed, handed matches, watched, and replaced when
    one dies, stalls, outruns a match's budget or retires."""

    def __init__(self, run: _Run, ctx: Any) -> None:
        self.run = run
        self.ctx = ctx
        self.workers: list[_Worker] = []
        #: Why the latest workers that never got ready ended; cleared by a worker that gets ready.
        self.failed_starts: list[str] = []

    def play(self, size: int) -> None:
        """Hand out the queue's matches to at most ``size`` workers until every match has an outcome."""
        queue = self.run.queue
        while queue or any(w.task is not None for w in self.workers):
            busy = sum(1 for w in self.workers if w.task is not None)
            while len(self.workers) < min(size, busy + len(queue)):
                self.start_worker()
            self.dispatch()
            waitables: list[Any] = [w.conn for w in self.workers] + [w.proc.sentinel for w in self.workers]
            mpc.wait(waitables, timeout=1.0)
            for worker in list(self.workers):
                self.watch(worker)

    def start_worker(self) -> None:
        parent_conn, child_conn = self.ctx.Pipe()
        proc = self.ctx.Process(target=worker_main, args=(child_conn, self.run.modules), name="ggp-tournament-worker")
        proc.start()
        child_conn.close()
        self.workers.append(_Worker(proc=proc, conn=parent_conn))

    def dispatch(self) -> None:
        """Send a queued match to each idle worker (a match some other runner claimed meanwhile is skipped)."""
        run, queue = self.run, self.run.queue
        for worker in self.workers:
            if worker.task is None and worker.ready and not worker.retiring and not worker.gone and queue:
                match_id = queue.popleft()
                if not run.db.claim(match_id, run.owner):
                    continue
                task = run.task(match_id)
                worker.task = match_id
                worker.heartbeat = worker.sent = time.monotonic()
                try:
                    worker.conn.send(("run", task))
                except OSError:
                    worker.gone = True
                run.emit(RunEvent("started", match_id, f"match {match_id} started", pid=worker.proc.pid))

    def watch(self, worker: _Worker) -> None:
        """Read what ``worker`` said; bury it if it is gone, kill it if it outran its budget or stalled."""
        self.drain(worker)
        match_timeout, stall = self.run.match_timeout, self.run.stall
        if worker.gone or not worker.proc.is_alive():
            self.drain(worker)
            self.bury(worker)
        elif match_timeout is not None and worker.task is not None and time.monotonic() - worker.sent > match_timeout:
            worker.cancelled = True
            worker.proc.kill()
        elif (worker.task is not None or not worker.ready) and time.monotonic() - worker.heartbeat > stall:
            # a worker silent in a match, or never ready (an agent module that hangs on import)
            worker.stalled = True
            worker.proc.kill()
        elif worker.task is None and worker.retiring:
            worker.proc.join(5)
            self.bury(worker)

    def drain(self, worker: _Worker) -> None:
        try:
            while worker.conn.poll():
                self.handle(worker, worker.conn.recv())
        except (EOFError, OSError):
            worker.gone = True

    def handle(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        """One message of a worker's: ready, a match done or failed, retiring, or a fatal error."""
        run = self.run
        kind = message[0]
        worker.heartbeat = time.monotonic()
        if kind == "ready":
            worker.ready = True
            self.failed_starts.clear()
        elif kind == "done":
            worker.task = None
            run.finish(message[1], message[2], worker.proc.pid)
        elif kind == "error":
            worker.task = None
            run.fail(message[1], message[2])
        elif kind == "retire":
            worker.retiring = True
            run.db.log("retired", f"worker {worker.proc.pid} retired: {message[1]}")
            run.emit(RunEvent("retired", None, f"worker {worker.proc.pid} retired: {message[1]}"))
        elif kind == "fatal":
            worker.fatal = str(message[1])
            run.db.log("error", f"worker {worker.proc.pid}: {message[1]}")
            run.emit(RunEvent("error", worker.task, f"worker {worker.proc.pid} failed: {message[1]}"))

    def bury(self, worker: _Worker) -> None:
        """Remove an ended worker; its match, if it had one, is cancelled, re-run or given up."""
        worker.proc.join(5)
        code = worker.proc.exitcode
        worker.conn.close()
        self.workers.remove(worker)
        stall = self.run.stall
        if not worker.ready:  # it never started: no match is to blame
            self.failed_starts.append(
                worker.fatal or (f"no sign of life for {stall:g} s" if worker.stalled else f"it {_death(code)}")
            )
            if len(self.failed_starts) >= 3:
                raise TournamentError(
                    f"worker processes fail to start ({self.failed_starts[-1]}); check the agent modules "
                    "(they are imported in every worker) and try again"
                )
        if worker.task is None:
            return
        match_id = worker.task
        if worker.cancelled:
            budget = f"over its time budget of {self.run.match_timeout:g} s"
            self.run.cancel(match_id, f"cancelled: {budget} (worker {worker.proc.pid} killed)")
            return
        how = "stall" if worker.stalled else "crash"
        what = (
            f"worker {worker.proc.pid} showed no sign of life for {stall:g} s and was killed"
            if worker.stalled
            else f"worker {worker.proc.pid} {_death(code)}"
        )
        self.run.crash(match_id, how, what)

    def quit(self) -> None:
        """Ask every worker to quit, and give each a few seconds to."""
        for worker in self.workers:
            with contextlib.suppress(OSError):
                worker.conn.send(("quit",))
        for worker in self.workers:
            worker.proc.join(5)

    def kill(self) -> None:
        """Kill the workers still running and close every pipe."""
        for worker in self.workers:
            if worker.proc.is_alive():
                worker.proc.kill()
                worker.proc.join(5)
            worker.conn.close()


def _run_on_ray(run: _Run, workers: int | None, address: str | None) -> None:
    """The Ray backend's loop: the same claims, results and crash accounting as the local one."""
    from .ray_backend import ActorPool, connected, run_pool

    db, owner, settings = run.db, run.owner, run.settings

    def make_task(match_id: int) -> dict[str, Any] | None:
        return run.task(match_id) if db.claim(match_id, owner) else None

    def on_outcome(outcome: Outcome) -> None:
        actor, match_id = outcome.actor, outcome.key
        if outcome.kind == "ready":
            run.emit(RunEvent("worker", None, f"worker {actor.pid} ready", pid=actor.pid, node=actor.node))
        elif outcome.kind == "timeout":
            run.cancel(match_id, f"cancelled: {outcome.text} (worker {actor.pid} killed)")
        elif outcome.kind in ("died", "stall"):
            if match_id is None:
                run.emit(RunEvent("error", None, f"{outcome.text} before its first match"))
                return
            how = "crash" if outcome.kind == "died" else "stall"
            run.crash(match_id, how, outcome.text, given_up_says="while playing")
        elif outcome.value[0] == "error":
            run.fail(match_id, str(outcome.value[1]))
        else:
            _, text, runaway = outcome.value
            run.finish(match_id, text, actor.pid)
            if runaway:  # a runaway agent thread dies only with its process
                db.log("retired", f"worker {actor.pid} retired: {runaway} runaway agent thread(s) left running")
                pool.retire(actor)

    def on_sent(actor: Any, match_id: int) -> None:
        run.emit(RunEvent("started", match_id, f"match {match_id} started", pid=actor.pid, node=actor.node))

    specs = sorted({spec for match_id in run.queue for spec in run.rows[match_id].specs})
    with connected(address, num_cpus=workers) as ray:
        size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        pool = ActorPool(
            size,
            (run.modules, settings.game, specs),
            budget=run.match_timeout,
            stall=run.stall,
            start_timeout=max(run.stall, START_TIMEOUT),
        )
        try:
            warm_up([settings.game])  # this process verifies every record
            run_pool(pool, run.queue, method="play", make_task=make_task, on_outcome=on_outcome, on_sent=on_sent)
        finally:
            pool.shutdown()


def _death(code: int | None) -> str:
    """How a worker process ended, for messages: ``died (exit code 17)``, ``died (killed by SIGSEGV, exit code -11)``."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"died (killed by {name}, exit code {code})"
    return f"died (exit code {code})"
