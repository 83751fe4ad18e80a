"""The one step engine: how every loop of ggp takes a step of a match.

Whoever asks the players (the referee's threads, a person at the terminal, self-play's agents), a
step goes one way. Each role's answer is *settled* once: an agent's answer is judged
(:func:`~ggp.match.calls.judge`, the one check), and a fault (the call failed, or the answer is no legal
move) gets a random legal move from the loop's own generator played instead, and recorded. A move checked
at its door (a person's, read by :meth:`~ggp.Game.check_move`) is *taken* as it is. When every role has its
move, :meth:`Steps.play` plays the joint move (:meth:`~ggp.Game.play`, which trusts the settled moves),
records it (:class:`~ggp.match.record.JointMove`: texts, think times, faults) and tells the step hook.

>>> import random
>>> import ggp
>>> maze = ggp.load("wallmaze")
>>> steps = Steps(maze, random.Random(1))
>>> steps.settle("white", maze.parse_move("(move 2 5 3 5)"))
Move('(move 2 5 3 5)')
>>> steps.settle("black", "east")  # not a Move: judged, and a random legal move played instead
Move('(move 12 5 11 5)')
>>> record = steps.play()
>>> record.step, record.joint, [f.kind for f in record.faults]
(1, ('(move 2 5 3 5)', '(move 12 5 11 5)'), ['not_a_move'])
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from ..agents.base import Agent, Limit
from ..core.game import Game, Move, State
from ..core.information import chance_move
from .calls import Caller, Fault, settle, time_limit
from .record import JointMove

#: Called after every joint move with the step number and the joint move (text, role order).
StepHook = Callable[[int, tuple[str, ...]], None]


class Steps:
    """A match's steps from ``state`` (default: the game's initial state), settled and played one at a time.

    ``moves`` holds the record of every step played here; ``state`` is the state now; :attr:`settled` the
    moves settled so far for the step in progress.
    """

    def __init__(
        self,
        game: Game,
        rng: random.Random,
        state: State | None = None,
        on_step: StepHook | None = None,
        start: int = 1,
    ) -> None:
        self.game = game
        #: The number of the first step settled here (a match taken up from a stored state goes on counting).
        self.start = start
        self.rng = rng
        self.state = state if state is not None else game.initial_state()
        self.on_step = on_step
        self.moves: list[JointMove] = []
        self._pending: dict[str, Move] = {}
        self._times: dict[str, float | None] = {}
        self._faults: list[Fault] = []

    @property
    def step(self) -> int:
        """The number of the step being settled (the first is 1)."""
        return self.start + len(self.moves)

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.game.is_terminal(self.state)

    def goals(self) -> tuple[int, ...]:
        """Each role's goal in the state now (the result, once :attr:`over`)."""
        return tuple(int(g) for g in self.game.goals(self.state))

    @property
    def settled(self) -> Mapping[str, Move]:
        """The moves settled for the step in progress, by role (a read-only view)."""
        return MappingProxyType(self._pending)

    def forget(self) -> None:
        """Drop what was settled for the step in progress (the match ended otherwise, say)."""
        self._pending.clear()
        self._times.clear()
        self._faults.clear()

    def legal(self, role: str) -> Sequence[Move]:
        """``role``'s legal moves now."""
        return self.game.legal_moves(self.state, role)

    def settle(self, role: str, answer: object, *, elapsed: float | None = None, fault: Fault | None = None) -> Move:
        """Settle ``role``'s answer for this step and return the move it plays: judged once, or, for a fault
        (``fault``, or what judging finds), a random legal move, the fault recorded with it."""
        move, recorded = settle(self.game, self.state, role, answer, self.rng, fault=fault, step=self.step)
        if recorded is not None:
            self._faults.append(recorded)
        self._pending[role] = move
        self._times[role] = elapsed
        return move

    def take(self, role: str, move: Move, elapsed: float | None = None) -> Move:
        """Take a move already checked at its door (a person's, read by ``check_move``) as ``role``'s."""
        self._pending[role] = move
        self._times[role] = elapsed
        return move

    def take_chance(self) -> Move:
        """Chance's move for this step (GDL-II's ``random``: uniform among its legal moves, from the loop's own
        generator), taken as the chance role's."""
        role = self.game.chance_role
        if role is None:
            raise ValueError(f"{self.game.name} has no chance role")
        return self.take(role, chance_move(self.game, self.state, self.rng))

    def ask(self, caller: Caller, agent: Agent, role: str, *, clock: float | None, told: float | None = None) -> Move:
        """Ask ``role``'s agent through ``caller`` (on its thread, within ``clock`` plus grace; the agent is told
        ``told`` seconds, default :func:`~ggp.match.calls.time_limit` of ``clock``) and settle its answer."""
        limit = Limit(time=time_limit(clock) if told is None else told)
        answer = caller.call(role, "select_move", agent.choose, self.state, limit, clock=clock, step=self.step)
        return self.settle(role, answer.result, elapsed=answer.elapsed, fault=answer.fault)

    def faults(self, role: str) -> list[Fault]:
        """The faults recorded for ``role`` in the step being settled."""
        return [f for f in self._faults if f.role == role]

    def play(self) -> JointMove:
        """Play the joint move of the settled answers (every role needs one), record it and tell the hook."""
        roles = self.game.roles
        missing = [r for r in roles if r not in self._pending]
        if missing:
            raise ValueError(f"step {self.step}: no move settled for {', '.join(missing)}")
        joint = [self._pending[r] for r in roles]
        texts = tuple(str(m) for m in joint)
        record = JointMove(
            step=self.step,
            joint=texts,
            times=tuple(self._times.get(r) for r in roles),
            faults=tuple(self._faults),
        )
        self.state = self.game.play(self.state, joint)
        self.moves.append(record)
        self.forget()
        if self.on_step is not None:
            self.on_step(record.step, texts)
        return record


__all__ = ["StepHook", "Steps"]
