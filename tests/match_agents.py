"""Agents that misbehave on purpose, for the referee and tournament tests.

The referee tests use the classes directly. Tournament workers build agents
from spec strings, so this file is also an *agent module* (see
``ggp.match.plugins``): imported by file path (``--agent-module
tests/match_agents.py``, or ``TournamentDB.add_agent_modules``) it registers
:data:`TEST_AGENTS` in ``ggp.agents.AGENTS``. Imported by the tests as
``match_agents`` it registers nothing, so the test process's registry stays
as the other tests expect.

The ``*_once`` agents misbehave only the first time any of them reaches the
point, across processes: the first one to create its ``marker`` file (an
atomic exclusive create) does it; every later one plays random moves.
"""

from __future__ import annotations

import os
import random
import signal
import threading

from ggp.agents import AGENTS, Agent, AgentFactory
from ggp.core.game import Move, State


class CrashingAgent(Agent):
    """Raises in every select_move."""

    name = "crash"

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        raise RuntimeError("boom: this agent always fails")


class IllegalMoveAgent(Agent):
    """Returns a well-formed move that is never legal."""

    name = "illegal"

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        return Move("(move 99 99 99 99)")


class WrongTypeAgent(Agent):
    """Returns something that is not a Move: a number, or a legal move's text (a str)."""

    name = "wrongtype"

    def __init__(self, text: bool = False) -> None:
        super().__init__()
        self.text = text

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        if self.text:
            return str(self.game.legal_moves(state, self.role)[0])  # type: ignore[return-value]
        return 42  # type: ignore[return-value]


class BlockingAgent(Agent):
    """Blocks in its first select_move until the test sets ``release``; then plays the first legal move.

    ``entered`` is set when the first call begins; ``thread`` is the thread it runs in.
    """

    name = "blocking"

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()
        self.thread: threading.Thread | None = None
        self.calls = 0
        self.time_limits: list[float | None] = []

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        self.calls += 1
        self.time_limits.append(time_limit)
        if self.calls == 1:
            self.thread = threading.current_thread()
            self.entered.set()
            self.release.wait()
        return self.game.legal_moves(state, self.role)[0]


class FaultyLifecycleAgent(Agent):
    """Plays random moves but raises in start (after registering) and in stop."""

    name = "faulty_lifecycle"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(0)

    def start(self, game, role, start_clock=None, play_clock=None):  # type: ignore[no-untyped-def]
        super().start(game, role, start_clock, play_clock)
        raise ValueError("cannot prepare")

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        moves = self.game.legal_moves(state, self.role)
        return moves[self.rng.randrange(len(moves))]

    def stop(self, state, goals):  # type: ignore[no-untyped-def]
        raise KeyError("cannot clean up")


def first_time(marker: str) -> bool:
    """Whether this is the first call for ``marker`` (across processes): creates the file atomically."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


class _OnceAgent(Agent):
    """Random moves, except that the first select_move of the first such agent does :meth:`misbehave`."""

    def __init__(self, marker: str, seed: int | None = None) -> None:
        super().__init__()
        self.marker = marker
        self.rng = random.Random(seed)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        if first_time(self.marker):
            self.misbehave()
        moves = self.game.legal_moves(state, self.role)
        return moves[self.rng.randrange(len(moves))]

    def misbehave(self) -> None:
        raise NotImplementedError


class ExitOnceAgent(_OnceAgent):
    """Ends its whole process (``os._exit``) the first time: a worker that dies mid-match."""

    name = "exit_once"

    def misbehave(self) -> None:
        os._exit(17)


class StopOnceAgent(_OnceAgent):
    """Stops its whole process (SIGSTOP) the first time: a worker that hangs without a sign of life."""

    name = "stop_once"

    def misbehave(self) -> None:
        os.kill(os.getpid(), signal.SIGSTOP)


class KillGroupOnceAgent(_OnceAgent):
    """Kills its whole process group (SIGKILL) the first time: the tournament runner dies abruptly."""

    name = "killgroup_once"

    def misbehave(self) -> None:
        os.killpg(os.getpgrp(), signal.SIGKILL)


TEST_AGENTS: dict[str, AgentFactory] = {
    "crash": CrashingAgent,
    "illegal": IllegalMoveAgent,
    "wrongtype": WrongTypeAgent,
    "exit_once": ExitOnceAgent,
    "stop_once": StopOnceAgent,
    "killgroup_once": KillGroupOnceAgent,
}


def register() -> None:
    """Add :data:`TEST_AGENTS` to ``ggp.agents.AGENTS``."""
    AGENTS.update(TEST_AGENTS)


if __name__ != "match_agents":  # imported as an agent module (by file path), not by the tests
    register()
