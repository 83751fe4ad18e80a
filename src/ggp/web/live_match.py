"""One match being played (:class:`LiveMatch`), and the refusals a request about matches may get."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..agents import Agent
from ..core.game import Game, Move, State
from ..core.information import Information
from ..match.loop import Steps
from .live import Watched
from .settings import HUMAN, Settings


class MoveRejected(Exception):
    """A request the match refuses; ``status`` is the HTTP status to answer with, ``message`` says why."""

    def __init__(self, status: int, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.legal = list(legal)


class LimitReached(Exception):
    """The server holds as many live matches as its limits allow; try again after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class LiveMatch(Watched):
    """One match being played: its states, the moves submitted for the next step, its agents and seats."""

    def __init__(
        self,
        match_id: str,
        game: Game,
        players: Sequence[str],
        settings: Settings,
        clock: Callable[[], float] = time.monotonic,
        key: str | None = None,
    ) -> None:
        super().__init__()
        self.id = match_id
        self.game = game
        #: The catalog's name of the game (``wallmaze``, ``sheet:ticTacToe``, ``upload:HASH``).
        self.key = key or game.name
        self.roles: tuple[str, ...] = game.roles
        self.players = list(players)
        self.settings = settings
        self.states: list[State] = [game.initial_state()]
        #: The step in progress (the one step engine, :class:`~ggp.match.loop.Steps`): the moves settled for it,
        #: with their think times and the agents' faults; a new one begins after each step (:meth:`new_turn`).
        self.turn = Steps(game, random.Random())
        self.joints: list[tuple[str, ...]] = []
        self.times: list[float] = [time.time()]
        self.created = self.times[0]
        #: Roles whose agent is thinking (or queued to) now, with the time it was asked.
        self.thinking: dict[str, float] = {}
        self.agents: dict[str, Agent] = {}
        self.notes: list[str] = []
        #: Per joint move made: think times and agent faults (see :class:`~ggp.web.store.StoredMatch`).
        self.infos: list[dict[str, Any]] = []
        #: Roles whose move in the step in progress was forced (their only legal move, played for them).
        self.step_forced: list[str] = []
        #: How the match ended: ``terminal``, ``resigned`` or ``aborted``; None while it is played.
        self.ended: str | None = None
        #: The outcome in words once over: ``white 100, black 0``, ``white resigned``.
        self.result_text: str | None = None
        #: Open event streams and requests following this match; a watched match stays in memory.
        self.watchers = 0
        #: The manager's clock when something last happened (a move, a watcher came or went, it was opened).
        self.last_active = clock()
        #: The roles whose players offer a draw in the step in progress (people only; cleared by the next step).
        self.draw_offers: set[str] = set()
        #: The id of the rematch someone asked for, once there is one (so the other player can join it).
        self.rematch: str | None = None
        #: Why the match left the manager (``unloaded`` or ``deleted``); None while it is live.
        self.closed: str | None = None
        self._clock = clock
        self._goals: tuple[int, ...] | None = None
        self._seats: dict[str, str] = {}  # role -> token hash
        self._starting = False  # agents being made (a reopened match); they are asked once started
        self._overrunning: set[str] = set()  # roles whose agent still runs a call that overran its clock
        self._apply_scheduled = False
        #: When the people's clock of the step in progress started (the step began, or its last seat was taken).
        self.clock_start = time.time()
        self._clock_step: int | None = None  # the step whose clock is running
        self._information: dict[str, Information] = {}  # each seat's view so far (a GDL-II game), grown by step

    # --- hidden information (GDL-II) -----------------------------------------------------------
    @property
    def seat_roles(self) -> tuple[str, ...]:
        """The roles that take a seat: every role but chance (GDL-II's ``random``, played by the referee)."""
        return tuple(r for r in self.roles if r != self.game.chance_role)

    @property
    def hidden(self) -> bool:
        """Whether the match keeps things from its seats now: a game of hidden information not yet over (once
        it is, the state, the true history and every seat's view are shown to everyone)."""
        return self.game.hidden_information and not self.over

    def information(self, role: str) -> Information:
        """What ``role`` knows of the match so far: its own moves and its percepts, step by step (the true
        history's, as :func:`~ggp.core.information.information_of` gives it)."""
        seen = self._information.get(role)
        if seen is None or len(seen.steps) > self.step:  # (a step taken back: start again)
            seen = Information(role)
        game = self.game
        for k in range(len(seen.steps), self.step):
            joint = [game.parse_move(text) for text in self.joints[k]]
            seen = seen.after(game, self.states[k + 1], joint)
        self._information[role] = seen
        return seen

    # --- views --------------------------------------------------------------------------------
    @property
    def pending(self) -> Mapping[str, Move]:
        """Moves for the step in progress, by role (agents' ones are not shown until the step is done)."""
        return self.turn.settled

    def new_turn(self) -> None:
        """Begin settling the next step from the state now (after a step is played, or a match is reopened)."""
        self.turn = Steps(self.game, self.turn.rng, state=self.state, start=self.step + 1)

    @property
    def state(self) -> State:
        return self.states[-1]

    @property
    def step(self) -> int:
        """Joint moves made so far (the index of the current state)."""
        return len(self.states) - 1

    @property
    def over(self) -> bool:
        return self.ended is not None

    @property
    def goals(self) -> tuple[int, ...] | None:
        """Each role's goal (role order) once over: the game's for a terminal state, 0/100 for a resignation;
        None while the match is played and for an aborted one."""
        return self._goals

    def is_chance(self, role: str) -> bool:
        return role == self.game.chance_role

    def is_human(self, role: str) -> bool:
        return self.players[self.roles.index(role)] == HUMAN

    @property
    def has_humans(self) -> bool:
        return any(p == HUMAN for p in self.players)

    def seat_taken(self, role: str) -> bool:
        """Whether someone owns ``role``'s seat."""
        return role in self._seats

    def open_seats(self) -> list[str]:
        """The human roles nobody owns yet (empty once the match is over)."""
        if self.over:
            return []
        return [r for r in self.roles if self.is_human(r) and r not in self._seats]

    def awaiting(self) -> list[str]:
        """The human roles whose move the current step still needs."""
        if self.over:
            return []
        return [r for r in self.roles if self.is_human(r) and r not in self.pending]

    def clock_left(self, now: float | None = None) -> float | None:
        """Seconds left on the people's clock in this step, or None when it does not run (no clock, no person
        to move, a seat still open, the match over)."""
        if self.settings.human_time <= 0 or not self.awaiting() or self.open_seats():
            return None
        now = time.time() if now is None else now
        return max(0.0, self.clock_start + self.settings.human_time - now)

    def busy(self) -> bool:
        """Whether the match will go on by itself (agents start or think, or a step is about to be applied)."""
        return bool(self.thinking) or self._apply_scheduled or self._starting

    # --- change notification ------------------------------------------------------------------
    def touch(self) -> None:
        self.last_active = self._clock()

    def changed(self) -> None:
        """Wake everyone waiting for a change (also when the match ends or leaves the manager)."""
        self.touch()
        super().changed()


def describe_goals(roles: Sequence[str], goals: Sequence[int], chance: str | None = None) -> str:
    """A match's outcome in words: ``white 100, black 0`` (``chance``, the role that stands for chance, left out)."""
    return ", ".join(f"{r} {g}" for r, g in zip(roles, goals, strict=True) if r != chance)
