"""The referee: runs one match between agents, enforcing the clocks, and never crashes because of an agent.

Each call to an agent (``start``, ``select_move``, ``stop``) runs in a fresh
daemon thread (:class:`~ggp.match.calls.Caller`), and the referee waits for it
only until the deadline: the clock plus a small ``grace``. Agents are told
``time_limit`` = play clock minus a ``margin`` (:func:`~ggp.match.calls.margin`),
so a well-behaved agent answers well before the deadline. When an agent

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
from collections.abc import Sequence
from datetime import UTC, datetime
from threading import Thread

from ..agents.base import Agent
from ..core.game import Game
from . import calls
from .calls import MAX_CLOCK, MAX_GRACE, Caller, Fault, time_limit
from .loop import StepHook, Steps
from .record import MatchRecord

#: What a match record names as the agent of chance (GDL-II's random), which the loop plays.
CHANCE_AGENT = "chance"


def now_iso() -> str:
    """The current UTC time as ISO 8601 text with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Referee:
    """Runs matches of ``game`` with the given clocks (seconds; ``None`` means no limit).

    ``grace`` is how long past a clock the referee still waits; agents are told
    the clock minus ``margin`` (default :func:`~ggp.match.calls.margin` of the
    play clock). ``seed`` seeds the generator of replacement moves (``None``:
    a random seed, which the record keeps). ``on_step`` is called after every
    joint move.
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
        self.margin = round(calls.margin(play_clock) if margin is None else margin, 6)
        if not math.isfinite(self.margin) or self.margin < 0 or (play_clock is not None and self.margin >= play_clock):
            raise ValueError(f"margin must be at least 0 and less than the play clock, not {self.margin!r}")
        self.seed = seed
        self.on_step = on_step
        self._caller = Caller(grace)

    # --- public -------------------------------------------------------------------------------
    def runaway_threads(self) -> list[Thread]:
        """Agent threads that overran their deadline and are still running (of every match this referee ran)."""
        return self._caller.runaway_threads()

    def run(self, agents: Sequence[Agent], specs: Sequence[str] | None = None) -> MatchRecord:
        """Play one match, ``agents[i]`` playing ``game.players[i]`` (every role but chance, which the loop
        plays: :attr:`~ggp.Game.players` is :attr:`~ggp.Game.roles` in games without it); returns its record.

        ``specs`` names the agents in the record (default: each agent's ``repr``).
        """
        game = self.game
        roles = game.players  # chance (GDL-II's random) takes no seat: the loop plays it
        if len(agents) != len(roles):
            raise ValueError(
                f"{game.name} has {len(roles)} roles to play ({', '.join(roles)}), but {len(agents)} agents given"
            )
        if game.hidden_information and any(a.reads_state for a in agents):
            raise ValueError(
                f"{game.name} hides information: its players decide on what their role knows, not on the state "
                "(ggp.agents.hidden.hidden_agent makes one for an agent spec)"
            )
        names = tuple(specs) if specs is not None else tuple(repr(a) for a in agents)
        if len(names) != len(roles):
            raise ValueError(f"{len(names)} specs given for {len(roles)} roles")
        seed = self.seed if self.seed is not None else random.SystemRandom().randrange(2**31)
        rng = random.Random(seed)
        caller = self._caller
        caller.forget_calls()  # new agents: none is busy with a call of an earlier match
        started = now_iso()
        faults: list[Fault] = []

        told_start = time_limit(self.start_clock)
        told_play = None if self.play_clock is None else self.play_clock - self.margin
        for role, agent in zip(roles, agents, strict=True):
            answer = caller.call(
                role, "start", agent.start, game, role, told_start, told_play, clock=self.start_clock, phase="start"
            )
            if answer.fault is not None:
                faults.append(answer.fault)

        steps = Steps(game, rng, on_step=self.on_step)
        while not steps.over:
            if game.chance_role is not None:
                steps.take_chance()
            for role, agent in zip(roles, agents, strict=True):
                steps.ask(caller, agent, role, clock=self.play_clock, told=told_play)
            record = steps.play()
            joint = [game.parse_move(text) for text in record.joint]
            for agent in agents:
                agent.observe(steps.state, joint)
        state, moves = steps.state, steps.moves

        goals = steps.goals()
        for role, agent in zip(roles, agents, strict=True):
            answer = caller.call(role, "stop", agent.stop, state, goals, clock=self.play_clock, phase="stop")
            if answer.fault is not None:
                faults.append(answer.fault)
        return MatchRecord(
            game=game.name,
            roles=tuple(game.roles),
            agents=tuple(CHANCE_AGENT if r == game.chance_role else names[roles.index(r)] for r in game.roles),
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


__all__ = ["MAX_CLOCK", "MAX_GRACE", "Referee", "StepHook", "now_iso", "run_match"]
