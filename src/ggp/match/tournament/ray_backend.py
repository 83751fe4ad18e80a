"""Matches on a Ray cluster: long-lived worker actors, each warmed up once, fed by the single-writer driver.

The driver (the process running :func:`~ggp.match.tournament.run_tournament`
or :func:`~ggp.match.selfplay.run_selfplay`) keeps every decision: it claims a
match in its database, sends it to an idle actor, and stores what comes back.
Actors never touch the database, so a result is written once, by the driver,
in the same transaction that marks its match done (see
:mod:`ggp.match.tournament`).

An actor (:class:`MatchWorker`) takes one CPU. When it starts it imports the
agent modules, loads the game's compiled kernels and lets each built-in agent
of the tournament think once about the initial position (numba compiles, the
bomberman tables), so that this cost is paid once per worker, not per match.

Faults, as the :class:`ActorPool` reports them to the driver:

* an actor (its worker process, or its whole node) dies mid-match: its match
  goes back to the queue and a new actor is started where Ray finds a CPU;
* a match runs past its time budget: the actor is killed (a running Python
  call cannot be interrupted otherwise) and the match is recorded as cancelled;
* an actor that fails while starting (a broken agent module): three such
  failures in a row stop the run with the actor's error.

Ray is optional (``pip install 'ggp[ray]'``); this module imports it only
when a pool starts.
"""

from __future__ import annotations

import contextlib
import os
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.errors import GGPError

#: How many actors a pool keeps at most (a guard against a mistyped --workers on a small cluster).
MAX_ACTORS = 4096
#: Most CPUs (so worker processes) a Ray instance started here for one run may declare.
MAX_LOCAL_CPUS = 64


class RayBackendError(GGPError):
    """Ray is missing, or the cluster cannot run the work (no worker starts)."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`RayBackendError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayBackendError(
            "the ray backend needs Ray: pip install 'ggp[ray]' (on the driver and on every node)"
        ) from None
    return ray


@contextlib.contextmanager
def connected(address: str | None, num_cpus: int | None = None) -> Iterator[Any]:
    """Use the Ray instance this process is connected to, or connect to ``address`` (or start a local one).

    A connection made here is closed on leaving; one made by the caller is left open.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if address:
        kwargs["address"] = address
    elif num_cpus is not None:
        if num_cpus > MAX_LOCAL_CPUS:
            raise RayBackendError(
                f"{num_cpus} workers on a Ray instance started on this machine: at most {MAX_LOCAL_CPUS}; "
                "start a cluster (see docs/ray.md) and give its --address"
            )
        # a new instance of this size, even where a cluster runs on this machine (ray.init would join that one,
        # and refuse the size: a test's cluster beside a tutorial's self-play did so)
        kwargs["address"] = "local"
        kwargs["num_cpus"] = num_cpus
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise RayBackendError(f"cannot connect to {where}: {exc}; check --address (ray status shows it)") from None
    try:
        yield ray
    finally:
        ray.shutdown()


class MatchWorker:
    """What a Ray actor runs: warms up once, then plays the matches (or self-play games) it is sent.

    Made a Ray actor by :func:`actor_class`; usable directly in a process for tests.
    """

    def __init__(self, modules: Sequence[str], game: str, specs: Sequence[str]) -> None:
        from ..plugins import load_agent_modules
        from ..warm import warm_up

        began = time.perf_counter()
        load_agent_modules(list(modules))
        warm_up([game])
        warm_agents(game, specs)
        self.warm_seconds = time.perf_counter() - began
        self.last_sign = time.monotonic()

    def sign_of_life(self, *_: Any) -> None:
        self.last_sign = time.monotonic()

    def since_sign(self) -> float:
        """Seconds since this worker's match last moved (answered from a second thread while it plays)."""
        return time.monotonic() - self.last_sign

    def hello(self) -> tuple[int, str, float]:
        """This worker's process id, its Ray node id and the seconds its warm-up took."""
        node = ""
        with contextlib.suppress(Exception):
            import ray

            node = ray.get_runtime_context().get_node_id()
        return os.getpid(), node, self.warm_seconds

    def play(self, task: dict[str, Any]) -> tuple[Any, ...]:
        """One tournament match: ``("done", record JSON, runaway threads)`` or ``("error", text)``."""
        from ...registry import load
        from ..series import play_one

        self.sign_of_life()
        try:
            record, referee = play_one(
                load(task["game"]),
                task["specs"],
                seed=task["seed"],
                start_clock=task["start_clock"],
                play_clock=task["play_clock"],
                grace=task["grace"],
                on_step=self.sign_of_life,
            )
        except Exception as exc:
            return ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        return ("done", record.to_json(compact=True), len(referee.runaway_threads()))

    def selfplay(self, task: dict[str, Any]) -> tuple[Any, ...]:
        """One self-play game: ``("done", rows)`` or ``("error", text)`` (see :mod:`ggp.match.selfplay`)."""
        from ..selfplay_game import play_selfplay_game

        self.sign_of_life()
        try:
            return ("done", play_selfplay_game(task, on_step=self.sign_of_life))
        except Exception as exc:
            return ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")


def warm_agents(game_name: str, specs: Sequence[str]) -> None:
    """Let each built-in agent in ``specs`` start and think once on ``game_name``'s initial position.

    Agents from agent modules are left alone: a test agent may end its
    process on its first move. Errors are ignored (the match reports them).
    """
    from ...agents import Limit, make_agent
    from ...registry import load

    game = load(game_name)
    state = game.initial_state()
    for spec in dict.fromkeys(specs):
        try:
            agent = make_agent(spec, seed=0)
            if not type(agent).__module__.startswith("ggp."):
                continue
            for role in game.roles:
                agent = make_agent(spec, seed=0)
                agent.start(game, role, None, 0.1)
                if len(game.legal_moves(state, role)) > 1:
                    agent.choose(state, Limit(time=0.05))
                    break
        except Exception:
            continue


_ACTOR_CLASS: Any = None


def actor_class() -> Any:
    """:class:`MatchWorker` as a Ray actor class taking one CPU (made once per process)."""
    global _ACTOR_CLASS
    if _ACTOR_CLASS is None:
        ray = import_ray()
        # Two threads: one plays, the other answers since_sign() (the driver's check for a stalled worker).
        _ACTOR_CLASS = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0, max_concurrency=2)(MatchWorker)
    return _ACTOR_CLASS


@dataclass
class Actor:
    """One actor of a pool: its handle, whether it has said hello, and the task it is running."""

    handle: Any
    hello: Any  # the pending hello() reference, None once answered
    created: float = field(default_factory=time.monotonic)
    pid: int | None = None
    node: str = ""
    key: Any = None  # the task it runs (a match id, a game index), None when idle
    ref: Any = None
    sent: float = 0.0
    alive: float = 0.0  # when (driver's clock) its task last showed a sign of life
    ping: Any = None  # a pending since_sign() reference
    pinged: float = 0.0


@dataclass
class Outcome:
    """What happened to an actor: ``ready``, ``result`` (value), ``died``, ``stall`` or ``timeout`` (text)."""

    kind: str
    actor: Actor
    key: Any = None
    value: Any = None
    text: str = ""


#: Seconds a pool waits with no worker ready (started and warmed up) before it says the cluster has no room.
START_TIMEOUT = 900.0


class ActorPool:
    """Up to ``size`` warmed-up :class:`MatchWorker` actors; the driver sends tasks and collects outcomes.

    ``budget`` (seconds, or None) is how long a task may run before its
    actor is killed and the task reported as ``timeout``. ``stall`` is how
    long a task may go without a sign of life (a move played) before its
    actor is killed and the task reported as ``stall``; the pool asks busy
    actors for one every few seconds, and a stopped or cut-off actor does not
    answer. ``start_timeout`` is how long the pool waits with no actor ready
    before it gives up: a worker is ready once warmed up, which on an empty
    numba cache compiles its agent's code (minutes on a busy machine: 120 s
    was not enough beside a CPU hog on both cores), so the bound is
    :data:`START_TIMEOUT`, there to tell a cluster with no free CPU.
    """

    def __init__(
        self,
        size: int,
        args: tuple[Any, ...],
        *,
        budget: float | None = None,
        stall: float | None = None,
        start_timeout: float | None = None,
    ) -> None:
        if not 1 <= size <= MAX_ACTORS:
            raise RayBackendError(f"a Ray pool takes 1 to {MAX_ACTORS} workers, not {size}")
        self.ray = import_ray()
        self.cls = actor_class()
        self.size = size
        self.args = args
        self.budget = budget
        self.stall = stall
        self.start_timeout = START_TIMEOUT if start_timeout is None else start_timeout
        self.actors: list[Actor] = []
        self.failed_starts: list[str] = []
        self.none_ready_since: float | None = time.monotonic()

    # --- the driver's side -------------------------------------------------------------------------
    def grow(self, wanted: int) -> None:
        """Start actors until there are ``min(wanted, size)``."""
        while len(self.actors) < min(wanted, self.size):
            handle = self.cls.remote(*self.args)
            self.actors.append(Actor(handle=handle, hello=handle.hello.remote()))

    def idle(self) -> list[Actor]:
        return [a for a in self.actors if a.hello is None and a.key is None]

    def busy(self) -> int:
        return sum(1 for a in self.actors if a.key is not None)

    def submit(self, actor: Actor, key: Any, method: str, task: dict[str, Any]) -> None:
        actor.key = key
        actor.ref = getattr(actor.handle, method).remote(task)
        actor.sent = actor.alive = actor.pinged = time.monotonic()

    def wait(self, timeout: float) -> list[Outcome]:
        """Wait up to ``timeout`` s for actors to say hello or finish; returns what happened (maybe nothing)."""
        ray = self.ray
        refs = {}
        pings = {}
        for actor in self.actors:
            ref = actor.hello if actor.hello is not None else actor.ref
            if ref is not None:
                refs[ref] = actor
            if actor.ping is not None:
                pings[actor.ping] = actor
        outcomes: list[Outcome] = []
        ready: list[Any] = []
        if refs:
            # The first that is ready ends the wait; then take every other one that is ready by now.
            every = [*refs, *pings]
            first, _ = ray.wait(every, num_returns=1, timeout=timeout, fetch_local=True)
            if first:
                ready, _ = ray.wait(every, num_returns=len(every), timeout=0, fetch_local=True)
        for ref in ready:
            if ref in pings:
                actor = pings[ref]
                actor.ping = None
                with contextlib.suppress(ray.exceptions.RayError):  # a dead actor's task says so itself
                    actor.alive = max(actor.alive, time.monotonic() - float(ray.get(ref)))
                continue
            actor = refs[ref]
            try:
                value = ray.get(ref)
            except ray.exceptions.RayError as exc:
                outcomes.append(self._died(actor, exc))
                continue
            if actor.hello is not None:
                actor.hello = None
                actor.pid, actor.node = int(value[0]), str(value[1])
                self.failed_starts.clear()
                self.none_ready_since = None
                outcomes.append(Outcome("ready", actor))
            else:
                outcomes.append(Outcome("result", actor, actor.key, value))
                actor.key, actor.ref = None, None
        now = time.monotonic()
        for actor in list(self.actors):
            if actor.key is None:
                continue
            if self.budget is not None and now - actor.sent > self.budget:
                key = actor.key
                self.retire(actor)
                outcomes.append(Outcome("timeout", actor, key, text=f"over its time budget of {self.budget:g} s"))
            elif self.stall is not None and now - actor.alive > self.stall:
                key = actor.key
                self.retire(actor)
                text = f"worker {actor.pid} showed no sign of life for {self.stall:g} s and was killed"
                outcomes.append(Outcome("stall", actor, key, text=text))
            elif self.stall is not None and actor.ping is None and now - actor.pinged > min(5.0, self.stall / 4):
                actor.ping = actor.handle.since_sign.remote()
                actor.pinged = now
        if any(a.hello is None for a in self.actors):
            self.none_ready_since = None
        elif self.none_ready_since is None:
            self.none_ready_since = now
        elif now - self.none_ready_since > self.start_timeout:
            raise RayBackendError(
                f"no Ray worker became ready in {self.start_timeout:g} s; does the cluster have a free CPU "
                "and ggp installed on every node? (`ray status` shows the resources)"
            )
        return outcomes

    def retire(self, actor: Actor) -> None:
        """Kill ``actor`` (its running task is lost) and forget it."""
        with contextlib.suppress(Exception):
            self.ray.kill(actor.handle, no_restart=True)
        if actor in self.actors:
            self.actors.remove(actor)

    def shutdown(self) -> None:
        for actor in list(self.actors):
            self.retire(actor)

    def _died(self, actor: Actor, exc: BaseException) -> Outcome:
        was_ready = actor.hello is None
        key = actor.key
        self.retire(actor)
        text = _first_line(exc)
        if not was_ready:
            self.failed_starts.append(text)
            if len(self.failed_starts) >= 3:
                raise RayBackendError(
                    f"Ray workers fail to start ({text}); check the agent modules (they are imported on every "
                    "worker) and that ggp is installed on every node"
                )
        where = f"worker {actor.pid}" + (f" on node {actor.node[:12]}" if actor.node else "")
        return Outcome("died", actor, key, text=f"{where} died ({text})")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def run_pool(
    pool: ActorPool,
    queue: Any,
    *,
    method: str,
    make_task: Callable[[Any], dict[str, Any] | None],
    on_outcome: Callable[[Outcome], None],
    on_sent: Callable[[Actor, Any], None] | None = None,
    poll: float = 0.5,
) -> None:
    """Feed ``queue`` (a deque of keys) to ``pool`` until it is empty and no task runs.

    ``make_task(key)`` returns the task (None: skip the key); ``on_outcome``
    sees every outcome and may put a key back on the queue.
    """
    while queue or pool.busy():
        pool.grow(pool.busy() + len(queue))
        for actor in pool.idle():
            if not queue:
                break
            key = queue.popleft()
            task = make_task(key)
            if task is None:
                continue
            pool.submit(actor, key, method, task)
            if on_sent is not None:
                on_sent(actor, key)
        for outcome in pool.wait(poll):
            on_outcome(outcome)
