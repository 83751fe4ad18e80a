"""A tournament's runner: hands pending matches to worker processes and writes each result as it comes.

One runner at a time works on a database (:func:`runner_lock`); see
:mod:`ggp.match.tournament` for the guarantees.
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
from .db import MatchRow, TournamentDB, TournamentError
from .ray_backend import MAX_ACTORS, Outcome
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
    if backend not in BACKENDS:
        raise TournamentError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if match_timeout is not None and not (0 < match_timeout <= MAX_MATCH_TIMEOUT):
        raise TournamentError(f"a match's time budget is 0 to {MAX_MATCH_TIMEOUT:g} s, not {match_timeout!r}")
    if workers is not None and not (1 <= workers <= MAX_ACTORS):
        raise TournamentError(f"workers must be 1 to {MAX_ACTORS}, not {workers!r}")
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
        if backend == "ray":
            try:
                _run_on_ray(
                    db, queue, rows, owner, summary, workers, address, match_timeout, stall, max_crashes, on_event
                )
            finally:
                db.release(owner)
                summary.counts = db.counts()
            return summary
        ctx = _context()
        warm_up([settings.game])  # this process verifies every record: load the game now
        pool: list[_Worker] = []
        failed_starts: list[str] = []

        def emit(event: RunEvent) -> None:
            if on_event is not None:
                on_event(event)

        def cancel(match_id: int, how: str) -> None:
            text = f"cancelled: over its time budget of {match_timeout:g} s ({how})"
            db.fail(match_id, owner, text, kind="cancelled")
            summary.failed += 1
            summary.cancelled += 1
            emit(RunEvent("cancelled", match_id, f"match {match_id} {text}; `--retry-failed` runs it again"))

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
                    emit(RunEvent("done", match_id, f"match {match_id} finished", record, pid=worker.proc.pid))
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
            if worker.cancelled:
                cancel(match_id, f"worker {worker.proc.pid} killed")
                return
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
                        worker.heartbeat = worker.sent = time.monotonic()
                        try:
                            worker.conn.send(("run", task))
                        except OSError:
                            worker.gone = True
                        emit(RunEvent("started", match_id, f"match {match_id} started", pid=worker.proc.pid))
                waitables: list[Any] = [w.conn for w in pool] + [w.proc.sentinel for w in pool]
                mpc.wait(waitables, timeout=1.0)
                for worker in list(pool):
                    drain(worker)
                    if worker.gone or not worker.proc.is_alive():
                        drain(worker)
                        bury(worker)
                    elif (
                        match_timeout is not None
                        and worker.task is not None
                        and time.monotonic() - worker.sent > match_timeout
                    ):
                        worker.cancelled = True
                        worker.proc.kill()
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


def _run_on_ray(
    db: TournamentDB,
    queue: deque[int],
    rows: dict[int, MatchRow],
    owner: str,
    summary: RunSummary,
    workers: int | None,
    address: str | None,
    match_timeout: float | None,
    stall: float,
    max_crashes: int,
    on_event: Callable[[RunEvent], None] | None,
) -> None:
    """The Ray backend's loop: the same claims, results and crash accounting as the local one."""
    from .ray_backend import ActorPool, connected, run_pool

    settings = db.settings()
    assert settings is not None
    modules = db.agent_modules()

    def emit(event: RunEvent) -> None:
        if on_event is not None:
            on_event(event)

    def make_task(match_id: int) -> dict[str, Any] | None:
        if not db.claim(match_id, owner):
            return None
        return {
            "id": match_id,
            "game": settings.game,
            "specs": list(rows[match_id].specs),
            "seed": rows[match_id].seed,
            "start_clock": settings.start_clock,
            "play_clock": settings.play_clock,
            "grace": settings.grace,
        }

    def on_outcome(outcome: Outcome) -> None:
        actor, match_id = outcome.actor, outcome.key
        if outcome.kind == "ready":
            emit(RunEvent("worker", None, f"worker {actor.pid} ready", pid=actor.pid, node=actor.node))
        elif outcome.kind == "timeout":
            text = f"cancelled: {outcome.text} (worker {actor.pid} killed)"
            db.fail(match_id, owner, text, kind="cancelled")
            summary.failed += 1
            summary.cancelled += 1
            emit(RunEvent("cancelled", match_id, f"match {match_id} {text}; `--retry-failed` runs it again"))
        elif outcome.kind in ("died", "stall"):
            if match_id is None:
                emit(RunEvent("error", None, f"{outcome.text} before its first match"))
                return
            summary.crashes += 1
            how = "crash" if outcome.kind == "died" else "stall"
            what = f"{outcome.text} while playing match {match_id}"
            if db.crashed(match_id, owner, how, what, max_crashes):
                queue.appendleft(match_id)
                emit(RunEvent(how, match_id, f"{outcome.text} during match {match_id}; it will be re-run"))
            else:
                summary.failed += 1
                emit(RunEvent("failed", match_id, f"{what}; failed {max_crashes} times, given up"))
        elif outcome.value[0] == "error":
            text = str(outcome.value[1])
            db.fail(match_id, owner, text)
            summary.failed += 1
            emit(RunEvent("failed", match_id, f"match {match_id} failed: {text.splitlines()[0]}"))
        else:
            _, text, runaway = outcome.value
            try:
                record = MatchRecord.from_json(text, verify=True, source=f"match {match_id}")
            except GGPError as exc:
                db.fail(match_id, owner, f"the worker's record does not verify: {exc}")
                summary.failed += 1
                emit(RunEvent("failed", match_id, f"match {match_id}: bad record: {exc}"))
            else:
                if db.finish(match_id, owner, record):
                    summary.finished += 1
                    emit(RunEvent("done", match_id, f"match {match_id} finished", record, pid=actor.pid))
            if runaway:  # a runaway agent thread dies only with its process
                db.log("retired", f"worker {actor.pid} retired: {runaway} runaway agent thread(s) left running")
                pool.retire(actor)

    def on_sent(actor: Any, match_id: int) -> None:
        emit(RunEvent("started", match_id, f"match {match_id} started", pid=actor.pid, node=actor.node))

    specs = sorted({spec for match_id in queue for spec in rows[match_id].specs})
    with connected(address, num_cpus=workers) as ray:
        size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        pool = ActorPool(
            size, (modules, settings.game, specs), budget=match_timeout, stall=stall, start_timeout=max(stall, 120.0)
        )
        try:
            warm_up([settings.game])  # this process verifies every record
            run_pool(pool, queue, method="play", make_task=make_task, on_outcome=on_outcome, on_sent=on_sent)
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
