"""The referee: runs one match between agents, enforcing the clocks, and never crashes because of an agent.

Each call to an agent (``start``, ``select_move``, ``stop``) runs in a fresh
daemon thread, and the referee waits for it only until the deadline: the
clock plus a small ``grace``. Agents are told ``time_limit`` = play clock
minus a ``margin``, so a well-behaved agent answers well before the deadline.
When an agent

* raises (``exception``),
* returns something that is not a :class:`~ggp.Move` (``not_a_move``),
* returns a move that is not legal (``illegal``),
* does not answer by the deadline (``timeout``; its late answer is discarded), or
* is still running an earlier call that overran (``busy``; it is not asked again
  until that call has returned, so an agent never runs two calls at once),

the referee plays a random legal move for it (from its own seeded generator)
and the record says which role, which step, what happened and the error text.

Agents are asked one after the other, each with the full play clock, so an
agent thinking in Python does not take processor time from the other; in a
simultaneous game no agent sees another's move before choosing its own.

A thread cannot be killed in-process: an agent that overruns keeps running
in its (daemon) thread after the referee has moved on, and the thread dies
only with the process. :meth:`Referee.runaway_threads` lists such threads
after a match. The tournament (:mod:`ggp.match.tournament`) runs matches in
worker processes and retires a worker whose match left a runaway thread, so
the runaway is killed with it.

>>> import ggp
>>> from ggp.agents import RandomAgent
>>> referee = Referee(ggp.load("bomberman2p"), start_clock=1.0, play_clock=1.0, seed=5)
>>> record = referee.run([RandomAgent(seed=1), RandomAgent(seed=2)], specs=["random:seed=1", "random:seed=2"])
>>> record.agents, record.terminal, record.steps == len(record.moves), list(record.all_faults())
(('random:seed=1', 'random:seed=2'), True, True, [])
"""

from __future__ import annotations

import math
import random
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ..agents.base import Agent
from ..core.game import Game, Move, State, illegal_move_error
from .record import FAULT_KINDS, Fault, JointMove, MatchRecord

#: Called after every joint move with the step number and the joint move (text, role order).
StepHook = Callable[[int, tuple[str, ...]], None]

#: The longest clock, in seconds, that the referee, the ``ggp`` commands and the GGP player accept: a day.
#: Longer is a mistake, and an infinite (or astronomically long) one would overflow the waits on it.
MAX_CLOCK = 86_400.0
#: The most slack, in seconds, a referee gives past a clock.
MAX_GRACE = 60.0


def now_iso() -> str:
    """The current UTC time as ISO 8601 text with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_margin(clock: float | None) -> float:
    """How much less than the clock an agent is told it has: 10% of it, at most half a second."""
    return 0.0 if clock is None else min(0.5, 0.1 * clock)


class _Call:
    """One call to an agent, run in a daemon thread; the result lands here when (if) it returns."""

    def __init__(self, role: str, what: str, fn: Callable[..., Any], *args: Any) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.trace: str | None = None
        self.elapsed: float | None = None
        self._fn = fn
        self._args = args
        self.thread = threading.Thread(target=self._run, name=f"ggp-agent-{role}-{what}", daemon=True)
        self.began = time.perf_counter()
        self.thread.start()

    def _run(self) -> None:
        began = time.perf_counter()
        try:
            self.result = self._fn(*self._args)
        except BaseException as exc:  # the agent's failure is reported, never raised in the referee
            self.error = exc
            self.trace = _clip_trace(traceback.format_exc())
        finally:
            self.elapsed = time.perf_counter() - began
            self.done.set()

    def wait(self, timeout: float | None) -> bool:
        """Whether the call returned within ``timeout`` seconds of its start (``None``: wait for it)."""
        if timeout is None:
            return self.done.wait()
        return self.done.wait(max(0.0, self.began + timeout - time.perf_counter()))


class Referee:
    """Runs matches of ``game`` with the given clocks (seconds; ``None`` means no limit).

    ``grace`` is how long past a clock the referee still waits; agents are told
    the clock minus ``margin`` (default :func:`default_margin`). ``seed`` seeds
    the generator of replacement moves (``None``: a random seed, which the
    record keeps). ``on_step`` is called after every joint move.
    """

    def __init__(
        self,
        game: Game,
        *,
        start_clock: float | None = 10.0,
        play_clock: float | None = 5.0,
        grace: float = 0.25,
        margin: float | None = None,
        seed: int | None = None,
        on_step: StepHook | None = None,
    ) -> None:
        for name, clock in (("start_clock", start_clock), ("play_clock", play_clock)):
            if clock is not None and not (math.isfinite(clock) and 0 < clock <= MAX_CLOCK):
                raise ValueError(f"{name} must be positive seconds, at most {MAX_CLOCK:g}, or None, not {clock!r}")
        if not (math.isfinite(grace) and 0 <= grace <= MAX_GRACE):
            raise ValueError(f"grace must be seconds from 0 to {MAX_GRACE:g}, not {grace!r}")
        self.game = game
        self.start_clock = start_clock
        self.play_clock = play_clock
        self.grace = grace
        self.margin = round(default_margin(play_clock) if margin is None else margin, 6)
        if not math.isfinite(self.margin) or self.margin < 0 or (play_clock is not None and self.margin >= play_clock):
            raise ValueError(f"margin must be at least 0 and less than the play clock, not {self.margin!r}")
        self.seed = seed
        self.on_step = on_step
        self._calls: dict[str, _Call] = {}
        self._abandoned: list[threading.Thread] = []

    # --- public -------------------------------------------------------------------------------
    def runaway_threads(self) -> list[threading.Thread]:
        """Agent threads that overran their deadline and are still running."""
        self._abandoned = [t for t in self._abandoned if t.is_alive()]
        return list(self._abandoned)

    def run(self, agents: Sequence[Agent], specs: Sequence[str] | None = None) -> MatchRecord:
        """Play one match, ``agents[i]`` playing ``game.roles[i]``; returns its record.

        ``specs`` names the agents in the record (default: each agent's ``repr``).
        """
        game = self.game
        roles = tuple(game.roles)
        if len(agents) != len(roles):
            raise ValueError(f"{game.name} has {len(roles)} roles ({', '.join(roles)}), but {len(agents)} agents given")
        names = tuple(specs) if specs is not None else tuple(repr(a) for a in agents)
        if len(names) != len(roles):
            raise ValueError(f"{len(names)} specs given for {len(roles)} roles")
        seed = self.seed if self.seed is not None else random.SystemRandom().randrange(2**31)
        rng = random.Random(seed)
        self._calls = {}
        started = now_iso()
        faults: list[Fault] = []

        told_start = None if self.start_clock is None else self.start_clock - default_margin(self.start_clock)
        told_play = None if self.play_clock is None else self.play_clock - self.margin
        for role, agent in zip(roles, agents, strict=True):
            outcome = self._call(role, "start", self.start_clock, agent.start, game, role, told_start, told_play)
            if outcome.fault is not None:
                faults.append(outcome.fault.with_phase("start"))

        state = game.initial_state()
        moves: list[JointMove] = []
        while not game.is_terminal(state):
            step = len(moves) + 1
            joint: list[Move] = []
            times: list[float | None] = []
            step_faults: list[Fault] = []
            for role, agent in zip(roles, agents, strict=True):
                move, elapsed, fault = self._ask(role, agent, state, step, told_play, rng)
                joint.append(move)
                times.append(elapsed)
                if fault is not None:
                    step_faults.append(fault)
            texts = tuple(str(m) for m in joint)
            state = game.next_state(state, joint)
            moves.append(JointMove(step=step, joint=texts, times=tuple(times), faults=tuple(step_faults)))
            if self.on_step is not None:
                self.on_step(step, texts)

        goals = tuple(int(g) for g in game.goals(state))
        for role, agent in zip(roles, agents, strict=True):
            outcome = self._call(role, "stop", self.play_clock, agent.stop, state, goals)
            if outcome.fault is not None:
                faults.append(outcome.fault.with_phase("stop"))
        return MatchRecord(
            game=game.name,
            roles=roles,
            agents=names,
            start_clock=self.start_clock,
            play_clock=self.play_clock,
            seed=seed,
            started=started,
            finished=now_iso(),
            moves=moves,
            goals=goals,
            final_state=game.state_to_dict(state),
            terminal=True,
            grace=self.grace,
            margin=self.margin,
            faults=faults,
        )

    # --- calling agents ---------------------------------------------------------------------------
    def _ask(
        self, role: str, agent: Agent, state: State, step: int, time_limit: float | None, rng: random.Random
    ) -> tuple[Move, float | None, Fault | None]:
        """The move ``role`` plays in ``state``: the agent's, or a random legal one if it failed."""
        legal = tuple(self.game.legal_moves(state, role))
        outcome = self._call(role, "select_move", self.play_clock, agent.select_move, state, time_limit)
        fault = outcome.fault or answer_fault(self.game, state, role, legal, outcome.result)
        if fault is None:  # the game's own move object goes on, whatever the agent returned that equals it
            return legal[legal.index(outcome.result)], outcome.elapsed, None
        played = legal[rng.randrange(len(legal))]
        return played, outcome.elapsed, fault.to_fault(phase="play", step=step, played=str(played))

    def _call(self, role: str, what: str, clock: float | None, fn: Callable[..., Any], *args: Any) -> _Outcome:
        previous = self._calls.get(role)
        if previous is not None and not previous.done.is_set():
            return _Outcome(
                fault=_Fault(role, "busy", f"still running an earlier call that overran, so {what} was not called")
            )
        call = _Call(role, what, fn, *args)
        self._calls[role] = call
        deadline = None if clock is None else clock + self.grace
        if not call.wait(deadline):
            self._abandoned.append(call.thread)
            clock_text = f"{clock:g} s + grace {self.grace:g} s"
            return _Outcome(
                elapsed=time.perf_counter() - call.began,
                fault=_Fault(role, "timeout", f"no answer within {clock_text}; a late answer is discarded"),
            )
        elapsed = round(call.elapsed or 0.0, 6)
        if call.error is not None:
            exc = call.error
            return _Outcome(elapsed=elapsed, fault=exception_fault(role, exc, call.trace))
        return _Outcome(result=call.result, elapsed=elapsed)


def answer_fault(game: Game, state: State, role: str, legal: Sequence[Move], answer: object) -> _Fault | None:
    """Why an agent's answer to select_move cannot be played in ``state`` (None: it can)."""
    if not isinstance(answer, Move):
        shown = _show(answer)
        return _Fault(
            role, "not_a_move", f"select_move returned {shown} (a {type(answer).__name__}), not a Move", returned=shown
        )
    try:
        if answer in legal:
            return None
        # A move's text can be anything a remote player sent (up to a megabyte): records keep a clipped copy.
        why = _clip(str(illegal_move_error(game, state, role, answer)), 1000)
        return _Fault(role, "illegal", why, returned=_clip(str(answer)))
    except Exception as exc:  # a Move subclass whose comparison or text fails: no move of the game
        shown = _show(answer)
        why = f"select_move returned {shown} (a {type(answer).__name__}) that cannot be read as a move: {type(exc).__name__}"
        return _Fault(role, "not_a_move", _clip(why, 1000), returned=shown)


def exception_fault(role: str, exc: BaseException, trace: str | None = None) -> _Fault:
    """The fault of an agent call that raised ``exc``, with the traceback ``trace``.

    An exception with a ``fault_kind`` (an adapter for a remote player, say)
    names its own kind of fault, and its traceback, which is ours, says
    nothing about the player, so it is left out; a ``timeout`` is told by its
    message alone.
    """
    kind = getattr(exc, "fault_kind", None)
    if kind is not None and kind not in FAULT_KINDS:  # a record names only the kinds it knows
        kind = None
    try:
        text = _clip(str(exc), 1000)
    except Exception:  # a broken __str__ must not break the referee
        text = "<unprintable>"
    if kind is None:
        return _Fault(role, "exception", f"{type(exc).__name__}: {text}", trace=trace)
    return _Fault(role, str(kind), text if kind == "timeout" else f"{type(exc).__name__}: {text}")


class _Fault:
    """A fault before we know its phase, step and replacement move."""

    def __init__(
        self, role: str, kind: str, message: str, *, returned: str | None = None, trace: str | None = None
    ) -> None:
        self.role = role
        self.kind = kind
        self.message = message
        self.returned = returned
        self.trace = trace

    def to_fault(self, phase: str, step: int | None = None, played: str | None = None) -> Fault:
        return Fault(
            role=self.role,
            kind=self.kind,
            message=self.message,
            phase=phase,
            step=step,
            returned=self.returned,
            played=played,
            traceback=self.trace,
        )

    def with_phase(self, phase: str) -> Fault:
        return self.to_fault(phase)


class _Outcome:
    def __init__(self, result: Any = None, elapsed: float | None = None, fault: _Fault | None = None) -> None:
        self.result = result
        self.elapsed = None if elapsed is None else round(elapsed, 6)
        self.fault = fault


def _show(value: Any, limit: int = 200) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break the referee
        text = f"<unprintable {type(value).__name__}: {type(exc).__name__}>"
    return _clip(text, limit)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clip_trace(trace: str, line: int = 1000, lines: int = 60) -> str:
    """A traceback kept in a record: each line clipped, and only its last ``lines`` lines (where it failed)."""
    kept = [_clip(text, line) for text in trace.splitlines()]
    return "\n".join(kept if len(kept) <= lines else ["...", *kept[-lines:]])


def run_match(
    game: Game,
    agents: Sequence[Agent],
    *,
    specs: Sequence[str] | None = None,
    start_clock: float | None = 10.0,
    play_clock: float | None = 5.0,
    grace: float = 0.25,
    seed: int | None = None,
) -> MatchRecord:
    """Play one match with a fresh :class:`Referee`; returns its record."""
    referee = Referee(game, start_clock=start_clock, play_clock=play_clock, grace=grace, seed=seed)
    return referee.run(agents, specs=specs)
