"""The steps of live matches: forced moves filled in, agents asked on the shared pool and judged, people's
clocks, the joint move applied and stored once every role has one, and matches finished.

A :class:`Referee` holds no matches; the :class:`~ggp.web.manager.Manager` hands it each one, and it tells the
manager, through the callbacks it was given, when a match must leave memory or room has been freed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from ..agents.base import Limit
from ..agents.hidden import HiddenAgent
from ..match.calls import Fault, busy_fault, exception_fault, time_limit, timeout_fault
from . import ui
from .agent_pool import AgentPool, Dropped
from .limits import Limits
from .live_match import LiveMatch, describe_goals
from .store import Store

_log = logging.getLogger(__name__)


class Referee:
    """Plays the steps of the matches it is handed, storing each in ``store``.

    ``spawn`` runs a coroutine as one of the manager's tasks, ``unload`` takes a match out of memory (why),
    ``room_freed`` is called when a match ends, and ``is_closed`` says whether the server is stopping.
    """

    def __init__(
        self,
        store: Store,
        limits: Limits,
        thinkers: AgentPool,
        *,
        spawn: Callable[[Any], None],
        unload: Callable[[LiveMatch, str], None],
        room_freed: Callable[[], None],
        is_closed: Callable[[], bool],
    ) -> None:
        self.store = store
        self.limits = limits
        self._thinkers = thinkers
        self._spawn = spawn
        self._unload = unload
        self._room_freed = room_freed
        self._is_closed = is_closed

    def finish(self, match: LiveMatch, ended: str, goals: tuple[int, ...] | None, result: str) -> None:
        """End the match otherwise than by a terminal state (resigned, drawn, aborted): stored, its agents let go."""
        self.store.finish(match.id, ended, goals, result)
        match.ended = ended
        match._goals = goals
        match.result_text = result
        match.turn.forget()
        match.thinking.clear()
        self._thinkers.drop(match.id)
        match.agents.clear()  # their search trees are big; a finished match needs none
        match.changed()
        self._room_freed()

    def kick(self, match: LiveMatch) -> None:
        """Fill in forced moves, set agents thinking, and apply the step once every role has its move."""
        if self._is_closed() or match.over or match.closed is not None:
            return
        state = match.state
        for role in match.roles:
            if role in match.pending or role in match.thinking:
                continue
            if match.is_chance(role):  # chance: the referee's own draw, uniform among its legal moves
                match.turn.take_chance()
                continue
            legal = match.game.legal_moves(state, role)
            if len(legal) == 1:
                match.turn.take(role, legal[0])
                if match.is_human(role) and legal[0].text != "noop":
                    match.step_forced.append(role)
            elif not match.is_human(role) and role in match.agents and not match._starting:
                match.thinking[role] = time.time()
                self._spawn(self._think(match, role, match.step))
        if match._clock_step != match.step and match.clock_left() is not None:
            match._clock_step = match.step
            self._spawn(self._human_clock(match, match.step))
        if all(r in match.pending for r in match.roles) and not match._apply_scheduled:
            delay = 0.0
            if not match.has_humans and match.settings.pace > 0:
                delay = match.times[-1] + match.settings.pace - time.time()
            if delay > 0:
                match._apply_scheduled = True
                self._spawn(self._apply_later(match, delay))
            else:
                self._apply(match)

    async def _human_clock(self, match: LiveMatch, step: int) -> None:
        """When the people's time for ``step`` runs out, a random legal move for each who has not moved."""
        left = match.clock_left()
        if left is None:
            return
        await asyncio.sleep(left)  # the clock itself: it wakes at the deadline
        if match.step != step or match.over or match.closed is not None:
            return
        late = match.awaiting()
        for role in late:
            fault = timeout_fault(role, match.settings.human_time, 0.0, step=step + 1)
            match.turn.settle(role, None, fault=fault)
            match.notes += [ui.fault_note(match.game, f) for f in match.turn.faults(role)]
        if late:
            match.changed()
            self.kick(match)

    async def _apply_later(self, match: LiveMatch, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
        finally:
            match._apply_scheduled = False
        if all(r in match.pending for r in match.roles) and not match.over and match.closed is None:
            self._apply(match)

    async def _think(self, match: LiveMatch, role: str, step: int) -> None:
        agent = match.agents[role]
        state = match.state
        clock = match.settings.agent_time
        elapsed: float | None = None
        answer: object = None
        fault: Fault | None = None
        if role in match._overrunning:
            fault = busy_fault(role, "select_move", step=step + 1)
        else:
            # Asked on the shared pool, not a thread of its own (see AgentPool); judged as the referee judges.
            limit = Limit(time=time_limit(clock))
            background = not match.has_humans
            if match.game.hidden_information and isinstance(agent, HiddenAgent):
                # a GDL-II seat decides on what its role knows (its moves and percepts), never on the state; the
                # referee hands it that information, which its forced steps and fault moves are part of
                information = match.information(role)
                job = self._thinkers.submit(match.id, agent.player.choose, information, limit, background=background)
            else:
                job = self._thinkers.submit(match.id, agent.choose, state, limit, background=background)
            try:
                await job.started
                answer = await asyncio.wait_for(asyncio.shield(job.done), clock + self.limits.grace)
            except TimeoutError:
                self._thinkers.abandon(job)
                match._overrunning.add(role)
                job.done.add_done_callback(lambda _: match._overrunning.discard(role))
                fault = timeout_fault(role, clock, self.limits.grace, step=step + 1)
            except Dropped:
                return  # the match ended or left memory
            except Exception as exc:
                fault = exception_fault(role, exc, step=step + 1)
            if job.began is not None:
                elapsed = round(job.elapsed if job.elapsed is not None else time.perf_counter() - job.began, 4)
        match.thinking.pop(role, None)
        if match.step != step or match.over or match.closed is not None:
            return
        # settled as every loop settles an answer (ggp.match.loop): judged once, or a random move for a fault
        match.turn.settle(role, answer, elapsed=elapsed, fault=fault)
        match.notes += [ui.fault_note(match.game, f) for f in match.turn.faults(role)]
        match.changed()
        self.kick(match)

    def _apply(self, match: LiveMatch) -> None:
        game = match.game
        record = match.turn.play()  # each move was checked once: by read_move, judge or the legal list
        new = match.turn.state
        terminal = game.is_terminal(new)
        goals = tuple(int(g) for g in game.goals(new)) if terminal else None
        result = describe_goals(match.roles, goals, game.chance_role) if goals is not None else None
        texts = record.joint
        info: dict[str, Any] = {"times": list(record.times), "faults": [f.to_dict() for f in record.faults]}
        if match.step_forced:
            info["forced"] = list(match.step_forced)
        # the roles that had no choice (the move list tells turns from roles moving together by them)
        # kept even when empty: a step without it is one stored before it was kept (guessed from its noops)
        info["single"] = [r for r in match.roles if len(game.legal_moves(match.state, r)) == 1]
        try:
            self.store.append_step(
                match.id,
                match.step + 1,
                texts,
                game.state_to_json(new),
                terminal=terminal,
                goals=goals,
                info=info,
                result=result,
            )
        except (sqlite3.Error, ValueError):
            # The history is the truth: drop what memory holds and let the next request reopen the match.
            _log.exception("could not store step %d of match %s; unloading it", match.step + 1, match.id)
            self._unload(match, "unloaded")
            return
        match.states.append(new)
        match.joints.append(texts)
        match.times.append(time.time())
        match.infos.append(info)
        match.clock_start = match.times[-1]
        match.new_turn()
        match.step_forced.clear()
        match.draw_offers.clear()
        if terminal:
            match.ended = "terminal"
            match._goals = goals
            match.result_text = result
            for agent in match.agents.values():
                with contextlib.suppress(Exception):
                    agent.stop(new, goals or ())
            match.agents.clear()  # their search trees are big; a finished match needs none
            match.changed()
            self._room_freed()
        else:
            match.changed()
            self.kick(match)
