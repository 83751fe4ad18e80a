"""Live matches: people's moves, agents thinking in threads, and every step stored.

A :class:`Manager` owns the matches being played. All their bookkeeping runs
on the server's event loop; only agents' :meth:`~ggp.agents.Agent.select_move`
runs in a thread pool, so a thinking agent never blocks a page. A step is
complete when every role has a move for it: a person's submission, an
agent's answer, or the single legal move (``noop``), which is filled in
without asking anyone. Then the joint move is applied, the new state is stored
and everyone watching is told.

In a simultaneous game an agent's answer stays hidden until the joint move is
applied, so a person never sees it before submitting their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from ..agents import AGENTS, Agent, make_agent
from ..core.errors import GGPError, MoveSyntaxError
from ..core.game import Game, Move, State, illegal_move_error
from ..core.registry import games as builtin_games
from ..core.registry import load
from ..match.record import Fault
from ..match.referee import answer_fault, exception_fault
from .store import Store, StoredMatch

HUMAN = "human"


class MoveRejected(Exception):
    """A submission the match refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.legal = list(legal)


@dataclass
class Settings:
    """How a match is run."""

    #: Seconds an agent may think per move (its play clock; passed as ``time_limit``).
    agent_time: float = 1.0
    #: Seconds at least between two steps of a match without people (so that it can be watched).
    pace: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        return cls(agent_time=float(data.get("agent_time", 1.0)), pace=float(data.get("pace", 0.0)))


def check_player(spec: str) -> str:
    """``spec`` normalised (``human`` or an agent spec); ``ValueError`` saying what is wrong otherwise."""
    spec = spec.strip()
    if spec.lower() == HUMAN:
        return HUMAN
    make_agent(spec)  # raises ValueError naming the known agents or options
    return spec


class Match:
    """One match being played: its states, the moves submitted for the next step, its agents."""

    def __init__(self, match_id: str, game: Game, players: Sequence[str], settings: Settings) -> None:
        self.id = match_id
        self.game = game
        self.roles: tuple[str, ...] = game.roles
        self.players = list(players)
        self.settings = settings
        self.states: list[State] = [game.initial_state()]
        self.joints: list[tuple[str, ...]] = []
        self.times: list[float] = [time.time()]
        self.created = self.times[0]
        #: Moves for the step in progress, by role (agents' ones are not shown until the step is done).
        self.pending: dict[str, Move] = {}
        #: Roles whose agent is thinking now, with the time it started.
        self.thinking: dict[str, float] = {}
        self.agents: dict[str, Agent] = {}
        self.notes: list[str] = []
        #: Per joint move made: think times and agent faults (see :class:`~ggp.web.store.StoredMatch`).
        self.infos: list[dict[str, Any]] = []
        #: Think times (seconds) and faults of the step in progress.
        self.step_times: dict[str, float] = {}
        self.step_faults: list[dict[str, Any]] = []
        self.version = 0
        self._changed = asyncio.Event()
        self._apply_scheduled = False

    # --- views --------------------------------------------------------------------------------
    @property
    def state(self) -> State:
        return self.states[-1]

    @property
    def step(self) -> int:
        """Joint moves made so far (the index of the current state)."""
        return len(self.states) - 1

    @property
    def over(self) -> bool:
        return self.game.is_terminal(self.state)

    def is_human(self, role: str) -> bool:
        return self.players[self.roles.index(role)] == HUMAN

    @property
    def has_humans(self) -> bool:
        return any(p == HUMAN for p in self.players)

    def awaiting(self) -> list[str]:
        """The human roles whose move the current step still needs."""
        if self.over:
            return []
        return [r for r in self.roles if self.is_human(r) and r not in self.pending]

    def busy(self) -> bool:
        """Whether the match will go on by itself (an agent thinks or a step is about to be applied)."""
        return bool(self.thinking) or self._apply_scheduled

    # --- change notification ------------------------------------------------------------------
    def changed(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, version: int, timeout: float) -> bool:
        """Wait until the version passes ``version`` (True) or ``timeout`` seconds pass (False)."""
        if self.version > version:
            return True
        event = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)
        return self.version > version


class Manager:
    """The matches of one server: create, load, play, watch."""

    def __init__(self, store: Store, workers: int = 4) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ggp-agent")
        self.matches: dict[str, Match] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loading: dict[str, asyncio.Lock] = {}
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        self.pool.shutdown(wait=False, cancel_futures=True)

    # --- creating and loading ---------------------------------------------------------------------
    async def create(self, game_name: str, players: dict[str, str] | Sequence[str], settings: Settings) -> Match:
        """Start a new match; ``players`` maps each role to ``human`` or an agent spec.

        Raises ``ValueError`` (an unknown game, a missing or unknown role, a bad agent spec, an agent that
        cannot play this game). The agents are made and started in the thread pool, as their ``start``
        may take a while (compiling, allocating a search tree).
        """
        if game_name not in builtin_games():
            raise ValueError(f"unknown game {game_name!r}; the games are {', '.join(builtin_games())}")
        game = load(game_name)
        if isinstance(players, dict):
            unknown = set(players) - set(game.roles)
            if unknown:
                raise ValueError(
                    f"{game.name} has no role {sorted(unknown)[0]!r}; its roles are {', '.join(game.roles)}"
                )
            specs = [players.get(role, HUMAN) for role in game.roles]
        else:
            specs = list(players)
            if len(specs) != len(game.roles):
                raise ValueError(f"{game.name} needs {len(game.roles)} players: {', '.join(game.roles)}")
        normalised = []
        for role, spec in zip(game.roles, specs, strict=True):
            if not isinstance(spec, str):
                raise ValueError(f"the player of {role} must be 'human' or an agent spec string")
            try:
                normalised.append(check_player(spec))
            except ValueError as exc:
                raise ValueError(f"{role}: {exc}") from None
        if not settings.agent_time > 0 or settings.agent_time > 3600:
            raise ValueError("agent_time must be more than 0 and at most 3600 seconds")
        if not 0 <= settings.pace <= 60:
            raise ValueError("pace must be between 0 and 60 seconds")
        match = Match(secrets.token_hex(6), game, normalised, settings)
        await self._start_agents(match, strict=True)
        self.store.create(
            match.id, game.name, game.roles, normalised, asdict(settings), game.state_to_json(match.state)
        )
        self.matches[match.id] = match
        self._kick(match)
        return match

    async def get(self, match_id: str) -> Match | None:
        """The match with this id, loaded from the store (and resumed) if needed; None if unknown."""
        match = self.matches.get(match_id)
        if match is not None:
            return match
        lock = self._loading.setdefault(match_id, asyncio.Lock())
        async with lock:
            match = self.matches.get(match_id)
            if match is None:
                stored = self.store.load(match_id)
                if stored is not None:
                    match = self._restore(stored)
                    if not match.over:
                        await self._start_agents(match, strict=False)
                    self.matches[match_id] = match
                    self._kick(match)
        self._loading.pop(match_id, None)
        return match

    def _restore(self, stored: StoredMatch) -> Match:
        game = load(stored.game)
        match = Match(stored.id, game, stored.players, Settings.from_dict(stored.settings))
        match.states = [game.state_from_json(s) for s in stored.states]
        match.joints = [tuple(j) for j in stored.joints]
        match.times = list(stored.times)
        match.infos = list(stored.infos)
        match.created = stored.created
        for info in match.infos:
            match.notes += [Fault(**f).describe() for f in info.get("faults", [])]
        for role, text in stored.pending.items():
            if role in game.roles and match.is_human(role) and not match.over:
                move = game.parse_move(text)
                if move in game.legal_moves(match.state, role):
                    match.pending[role] = move
        return match

    async def _start_agents(self, match: Match, strict: bool) -> None:
        """Make and start the match's agents in the pool; ``strict``: ValueError for one that fails, else random."""
        game, clock = match.game, match.settings.agent_time
        notes: list[str] = []

        def start_all() -> dict[str, Agent]:
            agents: dict[str, Agent] = {}
            for role, spec in zip(match.roles, match.players, strict=True):
                if spec == HUMAN:
                    continue
                try:
                    agent = make_agent(spec)
                    agent.start(game, role, start_clock=None, play_clock=clock)
                except Exception as exc:
                    if strict:
                        raise ValueError(f"{role}: the agent {spec!r} cannot play {game.name}: {exc}") from None
                    notes.append(f"{role}: the agent {spec!r} could not start ({exc}); a random agent plays instead")
                    agent = make_agent("random")
                    agent.start(game, role, start_clock=None, play_clock=clock)
                agents[role] = agent
            return agents

        match.agents = await asyncio.get_running_loop().run_in_executor(self.pool, start_all)
        match.notes += notes

    # --- playing -------------------------------------------------------------------------------
    def submit(self, match: Match, role: str, text: Any, step: int | None = None) -> Move:
        """A person's move for ``role`` in the current step; raises :class:`MoveRejected` and changes nothing."""
        game = match.game
        if role not in match.roles:
            raise MoveRejected(400, f"{game.name} has no role {role!r}; its roles are {', '.join(match.roles)}")
        if match.over:
            raise MoveRejected(409, f"the match is over: no more moves (step {match.step})")
        if step is not None and step != match.step:
            raise MoveRejected(409, f"that move was meant for step {step}, but the match is at step {match.step}")
        if not match.is_human(role):
            raise MoveRejected(400, f"{role} is played by the agent {match.players[match.roles.index(role)]!r}")
        if role in match.pending:
            raise MoveRejected(409, f"{role} has already moved in step {match.step}; waiting for the other roles")
        legal = game.legal_moves(match.state, role)
        legal_texts = sorted(str(m) for m in legal)
        if not isinstance(text, str) or not text.strip():
            err = illegal_move_error(game, match.state, role, text, "a move is KIF text such as (move 2 5 3 5)")
            raise MoveRejected(400, str(err), legal_texts)
        move = _parse(game, match.state, role, text)
        if move is None or move not in legal:
            why = "not a move of this game" if move is None else ""
            raise MoveRejected(400, str(illegal_move_error(game, match.state, role, text.strip(), why)), legal_texts)
        match.pending[role] = move
        match.step_times[role] = round(max(0.0, time.time() - match.times[-1]), 4)
        human_pending = {r: m.text for r, m in match.pending.items() if match.is_human(r)}
        self.store.set_pending(match.id, human_pending)
        match.changed()
        self._kick(match)
        return move

    def _kick(self, match: Match) -> None:
        """Fill in forced moves, set agents thinking, and apply the step once every role has its move."""
        if self._closed or match.over:
            return
        state = match.state
        for role in match.roles:
            if role in match.pending or role in match.thinking:
                continue
            legal = match.game.legal_moves(state, role)
            if len(legal) == 1:
                match.pending[role] = legal[0]
            elif not match.is_human(role):
                match.thinking[role] = time.time()
                self._spawn(self._think(match, role, match.step))
        if all(r in match.pending for r in match.roles) and not match._apply_scheduled:
            delay = 0.0
            if not match.has_humans and match.settings.pace > 0:
                delay = match.times[-1] + match.settings.pace - time.time()
            if delay > 0:
                match._apply_scheduled = True
                self._spawn(self._apply_later(match, delay))
            else:
                self._apply(match)

    async def _apply_later(self, match: Match, delay: float) -> None:
        await asyncio.sleep(delay)
        match._apply_scheduled = False
        if all(r in match.pending for r in match.roles) and not match.over:
            self._apply(match)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _think(self, match: Match, role: str, step: int) -> None:
        agent = match.agents[role]
        state = match.state
        loop = asyncio.get_running_loop()
        legal = match.game.legal_moves(state, role)
        began = time.perf_counter()
        fault = None
        try:
            move: Any = await loop.run_in_executor(self.pool, agent.select_move, state, match.settings.agent_time)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            fault = exception_fault(role, exc)
        else:
            fault = answer_fault(match.game, state, role, legal, move)
        elapsed = round(time.perf_counter() - began, 4)
        match.thinking.pop(role, None)
        if match.step != step or match.over:
            return
        if fault is not None:
            move = random.choice(list(legal))
            recorded = fault.to_fault(phase="play", step=step + 1, played=str(move))
            match.step_faults.append(recorded.to_dict())
            match.notes.append(recorded.describe())
        match.pending[role] = move
        match.step_times[role] = elapsed
        match.changed()
        self._kick(match)

    def _apply(self, match: Match) -> None:
        game = match.game
        joint = [match.pending[r] for r in match.roles]
        new = game.next_state(match.state, joint)
        terminal = game.is_terminal(new)
        goals = list(game.goals(new)) if terminal else None
        texts = tuple(str(m) for m in joint)
        info = {"times": [match.step_times.get(r) for r in match.roles], "faults": list(match.step_faults)}
        self.store.append_step(
            match.id, match.step + 1, texts, game.state_to_json(new), terminal=terminal, goals=goals, info=info
        )
        match.states.append(new)
        match.joints.append(texts)
        match.times.append(time.time())
        match.infos.append(info)
        match.pending.clear()
        match.step_times.clear()
        match.step_faults.clear()
        match.changed()
        if terminal:
            for agent in match.agents.values():
                with contextlib.suppress(Exception):
                    agent.stop(new, tuple(goals or ()))
            match.agents.clear()  # their search trees are big; a finished match needs none
        else:
            self._kick(match)

    async def wait_idle(self, match: Match, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the match needs a person or is over."""
        deadline = time.monotonic() + timeout
        while match.busy() and not match.over:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await match.wait_change(match.version, left)


def _parse(game: Game, state: State, role: str, text: str) -> Move | None:
    """A move from KIF text, or from the game's short notation when that gives one move; None if neither."""
    try:
        return game.parse_move(text)
    except MoveSyntaxError:
        pass
    if text.strip().startswith("("):
        return None
    try:
        moves = game.shorthand(state, role, text)
    except GGPError:
        return None
    return moves[0] if len(moves) == 1 else None


def agent_catalog() -> list[dict[str, Any]]:
    """The registered agents and their options: ``[{"name": "random", "options": ["seed"]}, ...]``."""
    from ..agents import agent_options

    out = []
    for name in sorted(AGENTS):
        try:
            options = list(agent_options(name))
        except Exception:  # a factory whose signature cannot be read: offer it without options
            options = []
        out.append({"name": name, "options": options})
    return out
