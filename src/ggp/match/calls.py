"""Calling an agent: under a deadline, its answer judged, a random legal move played when it fails, the fault kept.

Everything in ggp that asks an agent for something goes through here: the
referee (``ggp match``, tournaments, ``ggp host``), the GGP player
(``ggp serve``), the web app and ``ggp play``. So a failing agent is treated
the same everywhere:

* it is told :func:`time_limit` of its clock: the clock less :func:`margin`;
* it is waited for until the clock plus a ``grace`` (no longer);
* it is never asked again while an earlier call that overran still runs
  (``busy``): an agent never runs two calls at once;
* its answer to ``select_move`` is judged (:func:`judge`): only one of the
  game's own legal moves is played (the game's object, whatever equal object
  the agent returned);
* when it raises (``exception``), returns something that is not a
  :class:`~ggp.Move` (``not_a_move``) or not a legal one (``illegal``), or
  is late (``timeout``), :func:`fallback` plays a random legal move for it,
  and the :class:`Fault` says which role, which step, what happened and what
  was played instead.

:class:`Caller` does all of that for callers that block (the referee, the
player, ``ggp play``), one daemon thread per call (:class:`BackgroundCall`).
The web app runs its agents' calls on a pool of threads of its own (it must
not block its event loop) and uses the same margin, faults and judging.

A thread cannot be killed in-process: a call that overruns goes on in its
daemon thread after the caller has moved on, and ends only with the process.
:meth:`Caller.runaway_threads` lists such threads.

>>> import ggp, random
>>> from ggp.agents import RandomAgent
>>> game = ggp.load("wallmaze")
>>> state = game.initial_state()
>>> caller = Caller(grace=0.25)
>>> agent = RandomAgent(seed=1)
>>> caller.call("white", "start", agent.start, game, "white", clock=1.0, phase="start").fault is None
True
>>> move, elapsed, fault, info = caller.ask(agent, game, state, "white", clock=1.0, rng=random.Random(0), step=1)
>>> move in game.legal_moves(state, "white"), fault
(True, None)
>>> move, _, fault, _ = caller.ask(RandomAgent(), game, state, "black", clock=1.0, rng=random.Random(0), step=1)
>>> fault.kind, fault.played == str(move)  # never started, so it raises: a random legal move is played
('exception', True)
>>> judge(game, state, "white", "(move 9 9 9 9)", step=1).kind
'not_a_move'
"""

from __future__ import annotations

import random
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..agents.base import Agent, Choice, Limit
from ..core.errors import IllegalMoveError
from ..core.game import Game, Move, State
from .clock import Clock

#: The longest clock, in seconds, that the referee, the ``ggp`` commands and the GGP player accept: a day.
#: Longer is a mistake, and an infinite (or astronomically long) one would overflow the waits on it.
MAX_CLOCK = 86_400.0
#: The most slack, in seconds, a referee gives past a clock.
MAX_GRACE = 60.0

#: What went wrong with an agent: it raised, returned a move that is not legal,
#: returned something that is not a Move, ran over the clock, or was still
#: running an earlier call (so it was not asked).
FAULT_KINDS = ("exception", "illegal", "not_a_move", "timeout", "busy")
#: When: preparing (``start``), choosing a move (``play``), or told the result (``stop``).
PHASES = ("start", "play", "stop")


def margin(clock: float | None) -> float:
    """How much less than ``clock`` seconds an agent is told it has: 50 ms plus 10% of the clock, at most 1 s
    and at most half the clock (0 for no clock).

    The time kept back covers what happens between the agent's own deadline
    and the moment its answer counts: its thread returning, the judging, and
    for a GGP player the reply crossing the network. Of the two formulas ggp
    had (the referee's 10% up to 0.5 s, the player's), this is the safer one:
    it keeps back more from every clock, so fewer answers come too late.

    >>> margin(1.0), margin(5.0), margin(60.0), margin(0.05), margin(None)
    (0.15, 0.55, 1.0, 0.025, 0.0)
    """
    if clock is None:
        return 0.0
    return round(min(1.0, 0.05 + 0.1 * clock, 0.5 * clock), 6)


def time_limit(clock: float | None) -> float | None:
    """What an agent is told it has for a call whose clock is ``clock``: the clock less :func:`margin`."""
    return None if clock is None else clock - margin(clock)


@dataclass(frozen=True)
class Fault:
    """One agent failure: which role, when, what happened, and what was played instead.

    ``phase`` is one of :data:`PHASES`, ``step`` the number of the joint move
    it was for (play faults), ``kind`` one of :data:`FAULT_KINDS`,
    ``returned`` what the agent returned (text), ``played`` the move played
    instead and ``traceback`` the agent's own traceback (clipped).
    """

    role: str
    kind: str
    message: str
    phase: str = "play"
    step: int | None = None
    returned: str | None = None
    played: str | None = None
    traceback: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "phase": self.phase,
            "step": self.step,
            "role": self.role,
            "kind": self.kind,
            "message": self.message,
            "returned": self.returned,
            "played": self.played,
        }
        if self.traceback:
            data["traceback"] = self.traceback
        return data

    def describe(self) -> str:
        """One line for people: ``step 3: white timeout: ... (played noop)``."""
        where = f"step {self.step}" if self.phase == "play" else self.phase
        played = f" (played {self.played})" if self.played else ""
        return f"{where}: {self.role} {self.kind}: {self.message}{played}"


# --- faults -----------------------------------------------------------------------------------------------
def timeout_fault(
    role: str, clock: float | None, grace: float, *, phase: str = "play", step: int | None = None
) -> Fault:
    """The fault of a call not answered by its clock plus ``grace``."""
    return Fault(
        role, "timeout", f"no answer within {clock:g} s + grace {grace:g} s; a late answer is discarded", phase, step
    )


def busy_fault(role: str, what: str, *, phase: str = "play", step: int | None = None) -> Fault:
    """The fault of an agent not asked for ``what`` because an earlier call of it that overran still runs."""
    return Fault(role, "busy", f"still running an earlier call that overran, so {what} was not called", phase, step)


def exception_fault(
    role: str, exc: BaseException, trace: str | None = None, *, phase: str = "play", step: int | None = None
) -> Fault:
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
        text = clip(str(exc), 1000)
    except Exception:  # a broken __str__ must not break the caller
        text = "<unprintable>"
    if kind is None:
        return Fault(role, "exception", f"{type(exc).__name__}: {text}", phase, step, traceback=trace)
    return Fault(role, str(kind), text if kind == "timeout" else f"{type(exc).__name__}: {text}", phase, step)


def judge(game: Game, state: State, role: str, answer: object, *, step: int | None = None) -> Move | Fault:
    """The game's own legal move equal to an agent's ``answer`` to select_move, or the fault saying why there is none.

    This is the answer's one check (:meth:`~ggp.Game.check_move`); the step that plays it trusts it.
    """
    if not isinstance(answer, Move):
        shown = show(answer)
        why = f"select_move returned {shown} (a {type(answer).__name__}), not a Move"
        return Fault(role, "not_a_move", why, "play", step, returned=shown)
    try:
        return game.check_move(state, role, answer)
    except IllegalMoveError as exc:
        # A move's text can be anything a remote player sent (up to a megabyte): faults keep a clipped copy.
        return Fault(role, "illegal", clip(str(exc), 1000), "play", step, returned=clip(str(answer)))
    except Exception as exc:  # a Move subclass whose comparison or text fails: no move of the game
        shown = show(answer)
        why = f"select_move returned {shown} (a {type(answer).__name__}) that cannot be read as a move: {type(exc).__name__}"
        return Fault(role, "not_a_move", clip(why, 1000), "play", step, returned=shown)


def said(answer: object) -> object:
    """The move an agent's answer to ``choose`` gives: a :class:`Choice`'s move; anything else, as it is (an
    agent's own ``choose`` may answer anything, and :func:`judge` says what is wrong with it)."""
    return answer.move if isinstance(answer, Choice) else answer


def settle(
    game: Game,
    state: State,
    role: str,
    answer: object,
    rng: random.Random,
    *,
    fault: Fault | None = None,
    step: int | None = None,
) -> tuple[Move, Fault | None]:
    """The move ``role`` plays for ``answer`` (an agent's :class:`Choice`, or whatever it returned): the game's
    own legal move if it judges so (:func:`judge`), else a random legal one, with the fault saying why. A
    ``fault`` given (the call failed) is not judged again."""
    verdict = fault if fault is not None else judge(game, state, role, said(answer), step=step)
    if isinstance(verdict, Move):
        return verdict, None
    return fallback(verdict, game.legal_moves(state, role), rng)


def fallback(fault: Fault, legal: Sequence[Move], rng: random.Random) -> tuple[Move, Fault]:
    """A random legal move to play instead, and ``fault`` saying it was played."""
    move = legal[rng.randrange(len(legal))]
    return move, replace(fault, played=str(move))


# --- calls in threads -------------------------------------------------------------------------------------
class BackgroundCall:
    """``fn(*args)`` run in a fresh daemon thread; ``done`` is set when it returns or raises.

    Whatever it raises (even ``SystemExit``) is kept in ``error`` with its
    clipped traceback in ``trace``, never raised in the caller's thread.
    """

    def __init__(self, name: str, fn: Callable[..., Any], *args: Any) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.trace: str | None = None
        self.elapsed: float | None = None
        self._fn: Callable[..., Any] | None = fn
        self._args = args
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.began = time.perf_counter()
        self.thread.start()

    def _run(self) -> None:
        began = time.perf_counter()
        try:
            assert self._fn is not None
            self.result = self._fn(*self._args)
        except BaseException as exc:  # the agent's failure is reported, never raised in the caller
            self.error = exc
            self.trace = clip_trace(traceback.format_exc())
        finally:
            self._fn, self._args = None, ()  # the agent (and its search tree) need not outlive the call
            self.elapsed = time.perf_counter() - began
            self.done.set()

    def wait(self, timeout: float | None) -> bool:
        """Whether the call returned within ``timeout`` seconds of its start (``None``: wait for it)."""
        if timeout is None:
            return self.done.wait()
        return self.done.wait(max(0.0, self.began + timeout - time.perf_counter()))


@dataclass(frozen=True)
class Answer:
    """How a call went: what it returned (if it did in time), its think time, and the fault if it failed."""

    result: Any = None
    elapsed: float | None = None
    fault: Fault | None = None


class Caller:
    """Calls agents for one match, one call at a time per role, each waited for until its clock plus ``grace``."""

    def __init__(self, grace: float = 0.0, clock: Clock | None = None) -> None:
        self.grace = grace
        #: The time its waits are kept by (tests give a :class:`~ggp.match.clock.ManualClock`, so that
        #: whether a call ends by its answer or by its clock never depends on how loaded the machine is).
        self.clock = clock if clock is not None else Clock()
        self._calls: dict[str, BackgroundCall] = {}
        self._abandoned: list[threading.Thread] = []

    def forget_calls(self) -> None:
        """Forget the calls made so far (a new match, with new agents), still listing the runaway threads."""
        self._calls.clear()

    def busy(self, role: str) -> bool:
        """Whether ``role``'s agent still runs a call that overran (it is not called again until that returns)."""
        previous = self._calls.get(role)
        return previous is not None and not previous.done.is_set()

    def wait_idle(self, role: str, seconds: float) -> bool:
        """Wait at most ``seconds`` for ``role``'s call that overran to return; whether the agent is free."""
        previous = self._calls.get(role)
        return previous is None or self.clock.wait(previous.done, seconds)

    def call(
        self,
        role: str,
        what: str,
        fn: Callable[..., Any],
        *args: Any,
        clock: float | None,
        phase: str = "play",
        step: int | None = None,
    ) -> Answer:
        """Run ``fn(*args)`` (``what`` names it in faults) for ``role``, waiting at most ``clock`` + grace
        seconds (``None``: as long as it takes). Never raises for the agent: every failure is the Answer's fault."""
        if self.busy(role):
            return Answer(fault=busy_fault(role, what, phase=phase, step=step))
        began = self.clock.now()
        call = BackgroundCall(f"ggp-agent-{role}-{what}", fn, *args)
        self._calls[role] = call
        if clock is None:
            call.done.wait()
        elif not self.clock.wait(call.done, clock + self.grace - (self.clock.now() - began)):
            self._abandoned.append(call.thread)
            elapsed = round(self.clock.now() - began, 6)
            return Answer(elapsed=elapsed, fault=timeout_fault(role, clock, self.grace, phase=phase, step=step))
        elapsed = round(call.elapsed or 0.0, 6)
        if call.error is not None:
            return Answer(elapsed=elapsed, fault=exception_fault(role, call.error, call.trace, phase=phase, step=step))
        return Answer(result=call.result, elapsed=elapsed)

    def ask(
        self,
        agent: Agent,
        game: Game,
        state: State,
        role: str,
        *,
        clock: float | None,
        rng: random.Random,
        step: int | None = None,
        told: float | None = None,
    ) -> tuple[Move, float | None, Fault | None, Mapping[str, Any]]:
        """The move ``role`` plays in ``state``: ``agent``'s, judged, or a random legal one if it failed.

        The agent is told ``told`` seconds (default :func:`time_limit` of
        ``clock``). Returns the move, the think time (None if not asked), the
        fault (None if the agent's move is played) and its search's figures
        (:attr:`Choice.info`; empty when it gave none or failed).
        """
        limit = Limit(time=time_limit(clock) if told is None else told)
        answer = self.call(role, "select_move", agent.choose, state, limit, clock=clock, phase="play", step=step)
        move, fault = settle(game, state, role, answer.result, rng, fault=answer.fault, step=step)
        info = answer.result.info if fault is None and isinstance(answer.result, Choice) else {}
        if not isinstance(info, Mapping):  # an agent's own Choice may carry anything
            info = {}
        return move, answer.elapsed, fault, info

    def runaway_threads(self) -> list[threading.Thread]:
        """Agent threads that overran their deadline and are still running."""
        self._abandoned = [t for t in self._abandoned if t.is_alive()]
        return list(self._abandoned)


# --- text kept in faults -------------------------------------------------------------------------------------
def show(value: Any, limit: int = 200) -> str:
    """``repr(value)``, clipped; a broken ``__repr__`` shows as ``<unprintable ...>``."""
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break the caller
        text = f"<unprintable {type(value).__name__}: {type(exc).__name__}>"
    return clip(text, limit)


def clip(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, ending with ``...`` when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip_trace(trace: str, line: int = 1000, lines: int = 60) -> str:
    """A traceback kept in a fault: each line clipped, and only its last ``lines`` lines (where it failed)."""
    kept = [clip(text, line) for text in trace.splitlines()]
    return "\n".join(kept if len(kept) <= lines else ["...", *kept[-lines:]])


__all__ = [
    "FAULT_KINDS",
    "MAX_CLOCK",
    "MAX_GRACE",
    "PHASES",
    "Answer",
    "BackgroundCall",
    "Caller",
    "Fault",
    "busy_fault",
    "exception_fault",
    "fallback",
    "judge",
    "margin",
    "said",
    "settle",
    "time_limit",
    "timeout_fault",
]
