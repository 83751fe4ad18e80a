"""The threads that run agents' calls off the event loop, serving matches in turn (:class:`AgentPool`)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any


class Dropped(Exception):
    """The call was taken off the queue before it ran (its match ended or left memory)."""


def _settle(future: asyncio.Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _mark_retrieved(future: asyncio.Future[Any]) -> None:
    # Nobody may await an abandoned or dropped call; reading its exception keeps asyncio from logging it.
    if not future.cancelled():
        future.exception()


class _Job:
    """One agent call: ``started`` resolves when a thread takes it, ``done`` with its result."""

    def __init__(self, loop: asyncio.AbstractEventLoop, key: str, fn: Callable[..., Any], args: tuple[Any, ...]):
        self.loop = loop
        self.key = key
        self.fn: Callable[..., Any] | None = fn
        self.args: tuple[Any, ...] = args
        self.started: asyncio.Future[None] = loop.create_future()
        self.done: asyncio.Future[Any] = loop.create_future()
        self.started.add_done_callback(_mark_retrieved)
        self.done.add_done_callback(_mark_retrieved)
        self.began: float | None = None  # perf_counter when a thread took it
        self.elapsed: float | None = None
        self.abandoned = False

    def run(self) -> None:
        self.began = time.perf_counter()
        self._post(_settle, self.started)
        result: Any = None
        error: BaseException | None = None
        try:
            assert self.fn is not None
            result = self.fn(*self.args)
        except Exception as exc:
            error = exc
        except BaseException as exc:  # SystemExit and the like from an agent must not end the server
            error = RuntimeError(f"{type(exc).__name__}: {exc}")
        self.elapsed = time.perf_counter() - self.began
        self.fn, self.args = None, ()  # the agent (and its search tree) need not outlive the call
        self._post(_settle, self.done, result, error)

    def _post(self, fn: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            self.loop.call_soon_threadsafe(fn, *args)


class AgentPool:
    """Threads that run agents' calls, serving matches in turn so that none is starved.

    Calls are queued per key (a match id). A free thread takes the next key in
    round-robin order, and a key has at most one call running at a time.
    Calls marked ``background`` (matches of agents alone, which nobody waits
    for) hold at most all threads but one, so that a game with people always
    finds a thread however many agent-only matches think. A call abandoned
    after overrunning its deadline (:meth:`abandon`) frees its key, and a new
    thread takes over from the one it holds; that thread goes back to work
    when the call returns only if the pool is short of threads. Methods other
    than the worker loop are called from the event loop.
    """

    def __init__(self, threads: int, name: str) -> None:
        self.size = threads
        self.name = name
        self._cond = threading.Condition()
        self._queues: dict[str, deque[_Job]] = {}
        self._ready: deque[str] = deque()  # keys with queued calls and none running, in turn order
        self._running: dict[str, _Job] = {}
        self._background: set[str] = set()  # keys whose calls are background ones
        self._background_cap = max(1, threads - 1)
        self._background_running: set[str] = set()  # keys running a background call
        self._serving = 0  # threads not held by an abandoned call
        self._closed = False
        with self._cond:
            for _ in range(threads):
                self._add_thread()

    def submit(self, key: str, fn: Callable[..., Any], *args: Any, background: bool = False) -> _Job:
        job = _Job(asyncio.get_running_loop(), key, fn, args)
        with self._cond:
            if self._closed:
                _settle(job.started, error=Dropped())
                return job
            self._queues.setdefault(key, deque()).append(job)
            if background:
                self._background.add(key)
            else:
                self._background.discard(key)
            if key not in self._running and key not in self._ready:
                self._ready.append(key)
                self._cond.notify_all()
        return job

    def drop(self, key: str) -> None:
        """Take ``key``'s queued calls off the queue (a running one finishes; its result is ignored)."""
        with self._cond:
            jobs = self._queues.pop(key, deque())
            with contextlib.suppress(ValueError):
                self._ready.remove(key)
            if key not in self._running:
                self._background.discard(key)
        for job in jobs:
            _settle(job.started, error=Dropped())
            _settle(job.done, error=Dropped())

    def abandon(self, job: _Job) -> None:
        """Stop waiting for a running call: free its key and put another thread to work in its place."""
        with self._cond:
            if job.abandoned or self._running.get(job.key) is not job:
                return
            job.abandoned = True
            self._release(job.key)
            self._serving -= 1
            if not self._closed:
                self._add_thread()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            keys = list(self._queues)
            self._cond.notify_all()
        for key in keys:
            self.drop(key)

    def _add_thread(self) -> None:  # with self._cond held
        self._serving += 1
        threading.Thread(target=self._serve, name=self.name, daemon=True).start()

    def _take(self) -> str | None:  # with self._cond held
        """The next key in turn that may run now, taken off the ready queue."""
        for i, key in enumerate(self._ready):
            if key in self._background:
                if len(self._background_running) >= self._background_cap:
                    continue
                self._background_running.add(key)
            del self._ready[i]
            return key
        return None

    def _release(self, key: str) -> None:  # with self._cond held
        """``key``'s running call is done (or abandoned): its next call, or another key's, may run."""
        del self._running[key]
        self._background_running.discard(key)
        if key in self._queues:
            if key not in self._ready:
                self._ready.append(key)
        else:
            self._background.discard(key)
        self._cond.notify_all()

    def _serve(self) -> None:
        while True:
            with self._cond:
                key = self._take()
                while key is None and not self._closed:
                    self._cond.wait()
                    key = self._take()
                if self._closed or key is None:
                    self._serving -= 1
                    return
                queue = self._queues[key]
                job = queue.popleft()
                if not queue:
                    del self._queues[key]
                self._running[key] = job
            job.run()
            with self._cond:
                if job.abandoned:
                    # another thread took this one's place while the call overran
                    if self._serving >= self.size or self._closed:
                        return
                    self._serving += 1
                else:
                    self._release(key)
            del job, queue  # an idle thread must not keep the last match's agent alive
