"""Live matches: people's moves, agents thinking in threads, and every step stored.

A :class:`Manager` owns the matches being played. All their bookkeeping runs
on the server's event loop; only agents' calls run in threads, so a thinking
agent never blocks a page. A step is complete when every role has a move for
it: a person's submission, an agent's answer, or the single legal move
(``noop``), which is filled in without asking anyone. Then the joint move is
applied, the new state is stored and everyone watching is told.

In a simultaneous game an agent's answer stays hidden until the joint move is
applied, so a person never sees it before submitting their own.

Resources are bounded by :class:`~ggp.web.limits.Limits`:

* **Memory.** At most ``max_live_matches`` matches are in memory. A match
  nobody watches (:meth:`Manager.watch`) and no agent works on is unloaded
  after ``idle_seconds`` without activity, or earlier when room is needed
  (least recently active first); it stays in SQLite and :meth:`Manager.get`
  reloads it, every step intact. When nothing can be unloaded, creating a
  match raises :class:`LimitReached`.
* **Threads.** Agents think on ``agent_threads`` threads that serve the
  matches in turn (round robin), one call per match at a time, so one match
  with two thinking agents cannot take every thread; matches of agents alone
  use all threads but one, so a game with people always finds one. Agents are made and
  started on ``start_threads`` other threads, so a new game starts while
  other matches' agents think. Agents are called as everywhere in ggp
  (:mod:`ggp.match.calls`): told their clock less the margin, judged, and one
  that fails, or overruns its clock plus ``grace``, gets a random legal move
  played for it (a fault in the step's info) and is not asked again until an
  overrunning call returns (``busy``).

Seats: every human role is a seat with an owner. The creator of a match gets
a secret token for each human seat it takes (:meth:`Manager.create`, by
default all of them); a seat left open is taken once with
:meth:`Manager.claim_seat`. Moving, resigning and aborting need the seat's
token; the store keeps only its SHA-256.

A match is over when its state is terminal (``ended == "terminal"``), when a
person resigns (``"resigned"``: 0 for them, 100 for every other role) or
aborts it before the first move (``"aborted"``: no goals). Agents alone play
to the end; matches of agents alone that were playing when the server
stopped go on by themselves after :meth:`Manager.start`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import random
import secrets
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from typing import Any

from ..agents import Agent, make_agent
from ..core.errors import GGPError, MoveSyntaxError
from ..core.game import Game, Move, State, illegal_move_error
from ..match.calls import Fault, busy_fault, exception_fault, fallback, judge, time_limit, timeout_fault
from ..registry import game_names
from .agent_pool import AgentPool, Dropped
from .catalog import Catalog
from .limits import Limits
from .live_match import LimitReached, LiveMatch, MoveRejected
from .settings import HUMAN, Settings, check_settings, hash_token, normalise_player
from .store import Store, StoredMatch

_log = logging.getLogger(__name__)


class Manager:
    """The matches of one server: create, load, play, watch, end; bounded by ``limits``.

    ``clock`` (seconds, monotonic) measures inactivity; tests pass their own.
    """

    def __init__(
        self,
        store: Store,
        limits: Limits | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        games: Catalog | None = None,
    ) -> None:
        self.store = store
        self.limits = limits or Limits()
        #: The games matches may be of (the built-in ones unless a sheet directory or uploads are added).
        self.games = games or Catalog()
        self.matches: dict[str, LiveMatch] = {}
        self._clock = clock
        self._thinkers = AgentPool(self.limits.agent_threads, "ggp-agent")
        self._rng = random.Random()  # the moves played for agents that fail
        self._starters = AgentPool(self.limits.start_threads, "ggp-agent-start")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reserved = 0  # matches being created or reopened, not yet in self.matches
        self._backlog: deque[str] = deque()  # matches of agents alone waiting for room to go on
        self._draining = False
        self._started = False
        self._closed = False

    # --- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Go on with the matches agents were playing alone (oldest first, as many as fit; the others as room
        frees up), and unload idle matches from now on. Returns at once; calling it again does nothing.
        :meth:`create` and :meth:`get` call it too."""
        if self._started or self._closed:
            return
        self._started = True
        self._backlog.extend(self.store.playing_without_people())
        self._spawn(self._unload_idle_forever())
        self._resume_backlog()

    async def close(self) -> None:
        """Stop: no more steps are taken or stored. Agents' calls running in threads are left to finish."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        self._thinkers.close()
        self._starters.close()

    @contextlib.contextmanager
    def watch(self, match: LiveMatch) -> Iterator[LiveMatch]:
        """Count a watcher (an event stream, a waiting request) while inside: a watched match stays in memory."""
        match.watchers += 1
        match.touch()
        try:
            yield match
        finally:
            match.watchers -= 1
            match.touch()

    def unload_idle(self) -> list[str]:
        """Unload the matches idle for ``idle_seconds`` (nobody watching, no agent working); their ids."""
        now = self._clock()
        idle = [
            m for m in self.matches.values() if self._unloadable(m) and now - m.last_active >= self.limits.idle_seconds
        ]
        for match in idle:
            self._close_match(match, "unloaded")
        if idle:
            self._resume_backlog()
        return [m.id for m in idle]

    # --- creating and loading ---------------------------------------------------------------------
    async def create(
        self,
        game_name: str,
        players: dict[str, str] | Sequence[str],
        settings: Settings,
        *,
        seats: Iterable[str] | None = None,
    ) -> tuple[LiveMatch, dict[str, str]]:
        """Start a new match; ``players`` maps each role to ``human`` or an agent spec (roles left out: human).

        Returns the match and a secret token for each human seat the creator takes: ``seats`` (default:
        every human role); the other human seats stay open for :meth:`claim_seat`. Raises ``ValueError``
        (an unknown game, a missing or unknown role, a bad agent spec, an agent that cannot play this game,
        settings beyond ``limits``, a seat that is not a human role) and :class:`LimitReached` when no more
        matches fit in memory. The agents are made and started on the start threads before this returns.
        """
        await self.start()
        if not isinstance(game_name, str) or not self.games.known(game_name):
            shown = _clip(repr(game_name), self.limits.max_echo_chars)
            raise ValueError(f"unknown game {shown}; the games are {', '.join(game_names())} (see GET /api/catalog)")
        # a rule sheet is grounded on first use, which may take seconds: not on the event loop
        game = (
            self.games.load(game_name)
            if game_name in game_names()
            else await asyncio.to_thread(self.games.load, game_name)
        )
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
                normalised.append(normalise_player(spec))
            except ValueError as exc:
                raise ValueError(f"{role}: {exc}") from None
        check_settings(settings, self.limits)
        humans = [r for r, p in zip(game.roles, normalised, strict=True) if p == HUMAN]
        taken = list(dict.fromkeys(humans if seats is None else [seats] if isinstance(seats, str) else seats))
        for role in taken:
            if role not in humans:
                what = "no human role" if role in game.roles else "no role"
                raise ValueError(
                    f"{game.name} has {what} {role!r} to take a seat for; its human roles are {', '.join(humans)}"
                )
        settings = Settings(
            agent_time=float(settings.agent_time), pace=float(settings.pace), human_time=float(settings.human_time)
        )
        if not self._make_room():
            raise self._full()
        self._reserved += 1
        try:
            match = LiveMatch(secrets.token_hex(6), game, normalised, settings, self._clock, key=game_name)
            await self._start_agents(match, strict=True)
        finally:
            self._reserved -= 1
        tokens = {role: secrets.token_urlsafe(24) for role in taken}
        match._seats = {role: hash_token(token) for role, token in tokens.items()}
        self.store.create(
            match.id,
            game_name,
            game.roles,
            normalised,
            asdict(settings),
            game.state_to_json(match.state),
            seats=match._seats,
        )
        self.matches[match.id] = match
        self._kick(match)
        return match, tokens

    async def get(self, match_id: str) -> LiveMatch | None:
        """The match with this id, reopened from the store if needed; None if unknown.

        A reopened match that is still played goes on (its agents are started in the background). When memory
        is full and nothing can be unloaded, a finished match is returned without being kept, and reopening
        one still being played raises :class:`LimitReached`.
        """
        await self.start()
        match = self.matches.get(match_id)
        if match is not None:
            match.touch()
            return match
        # No await from here on: two requests cannot both reopen the match.
        stored = self.store.load(match_id)
        if stored is None:
            return None
        match = self._restore(stored)
        if not self._make_room():
            if match.over:
                return match
            raise self._full()
        self.matches[match_id] = match
        if not match.over:
            match._starting = True
            self._spawn(self._resume(match))
        return match

    def _full(self) -> LimitReached:
        n = self.limits.max_live_matches
        return LimitReached(
            f"this server is already playing {n} matches, its limit; try again in {self.limits.retry_after} s, "
            "or end a match you play",
            self.limits.retry_after,
        )

    def _restore(self, stored: StoredMatch) -> LiveMatch:
        game = self.games.load(stored.game)
        settings = Settings.from_dict(stored.settings)
        match = LiveMatch(stored.id, game, stored.players, settings, self._clock, key=stored.game)
        match.states = [game.state_from_json(s) for s in stored.states]
        match.joints = [tuple(j) for j in stored.joints]
        match.times = list(stored.times)
        match.infos = list(stored.infos)
        match.created = stored.created
        match._seats = dict(stored.seats)
        for info in match.infos:
            match.notes += [Fault(**f).describe() for f in info.get("faults", [])]
        if stored.status == "over" or game.is_terminal(match.state):
            match.ended = stored.ended or "terminal"
            if match.ended == "terminal":
                match._goals = tuple(int(g) for g in game.goals(match.state))
                match.result_text = stored.result or _describe_goals(match.roles, match._goals)
            else:
                match._goals = tuple(int(g) for g in stored.goals) if stored.goals is not None else None
                match.result_text = stored.result
            return match
        # an older server may have allowed longer clocks than this one does
        if settings.agent_time > self.limits.max_agent_time or not settings.agent_time > 0:
            match.notes.append(f"the agents' time per move is {self.limits.max_agent_time:g} s, this server's maximum")
            settings.agent_time = self.limits.max_agent_time
        settings.pace = min(max(settings.pace, 0.0), self.limits.max_pace)
        for role, text in stored.pending.items():
            if role in game.roles and match.is_human(role):
                with contextlib.suppress(GGPError):
                    move = game.parse_move(text)
                    if move in game.legal_moves(match.state, role):
                        match.pending[role] = move
        return match

    async def _resume(self, match: LiveMatch) -> None:
        try:
            await self._start_agents(match, strict=False)
        finally:
            match._starting = False
        if match.closed is None:
            match.changed()
            self._kick(match)

    async def _start_agents(self, match: LiveMatch, strict: bool) -> None:
        """Make and start the match's agents on the start threads.

        ``strict``: ``ValueError`` for an agent that fails (a new match); else a random agent replaces it.
        """
        game, clock = match.game, match.settings.agent_time
        start_time = self.limits.agent_start_time
        # Agents may search during their start clock; a person waiting for the game to begin should not wait
        # long for that, so they are told about one move's time (compiling on first use may still take longer,
        # up to start_time).
        told_start = time_limit(min(start_time, max(1.0, clock)))
        told_play = time_limit(clock)
        notes: list[str] = []

        def start_all() -> dict[str, Agent]:
            agents: dict[str, Agent] = {}
            for role, spec in zip(match.roles, match.players, strict=True):
                if spec == HUMAN:
                    continue
                try:
                    agent = make_agent(spec)
                    agent.start(game, role, start_clock=told_start, play_clock=told_play)
                except Exception as exc:
                    if strict:
                        raise ValueError(f"{role}: the agent {spec!r} cannot play {game.name}: {exc}") from None
                    notes.append(f"{role}: the agent {spec!r} could not start ({exc}); a random agent plays instead")
                    agent = make_agent("random")
                    agent.start(game, role, start_clock=told_start, play_clock=told_play)
                agents[role] = agent
            return agents

        if all(p == HUMAN for p in match.players):
            return
        job = self._starters.submit(match.id, start_all)
        try:
            await job.started
            agents = await asyncio.wait_for(asyncio.shield(job.done), start_time + self.limits.grace)
        except TimeoutError:
            self._starters.abandon(job)
            if strict:
                raise ValueError(
                    f"the agents did not start within {start_time:g} s (this server's limit); try again"
                ) from None
            notes.append(f"the agents did not start within {start_time:g} s; random agents play instead")
            agents = {}
            for role, spec in zip(match.roles, match.players, strict=True):
                if spec != HUMAN:
                    agents[role] = make_agent("random")
                    agents[role].start(game, role, start_clock=told_start, play_clock=told_play)
        except Dropped:
            if strict:
                raise ValueError("the server is stopping; try again") from None
            return
        if match.over or match.closed is not None:
            return  # ended while its agents started: they are not needed
        match.agents = agents
        match.notes += notes

    def _make_room(self) -> bool:
        """Whether one more match fits in memory, unloading the least recently active idle ones if need be."""
        while len(self.matches) + self._reserved >= self.limits.max_live_matches:
            idle = [m for m in self.matches.values() if self._unloadable(m)]
            if not idle:
                return False
            self._close_match(min(idle, key=lambda m: m.last_active), "unloaded")
        return True

    @staticmethod
    def _unloadable(match: LiveMatch) -> bool:
        return match.watchers == 0 and not match.busy()

    def _close_match(self, match: LiveMatch, why: str) -> None:
        """Take the match out of memory (it stays in the store unless deleted) and wake its waiters."""
        if self.matches.get(match.id) is match:
            del self.matches[match.id]
        self._thinkers.drop(match.id)
        self._starters.drop(match.id)
        match.closed = why
        match.agents.clear()
        match.thinking.clear()
        match.changed()

    async def _unload_idle_forever(self) -> None:
        period = min(60.0, max(1.0, self.limits.idle_seconds / 4))
        while not self._closed:
            await asyncio.sleep(period)
            self.unload_idle()

    def _resume_backlog(self) -> None:
        if self._backlog and not self._draining and not self._closed:
            self._draining = True
            self._spawn(self._drain_backlog())

    async def _drain_backlog(self) -> None:
        try:
            while self._backlog and not self._closed:
                match_id = self._backlog[0]
                if match_id not in self.matches:
                    if not self._make_room():
                        return  # resumed when a match ends or is unloaded
                    try:
                        await self.get(match_id)
                    except LimitReached:
                        return
                    except Exception:  # one unreadable match must not keep the others from going on
                        _log.exception("could not resume match %s", match_id)
                self._backlog.popleft()
        finally:
            self._draining = False

    # --- seats -------------------------------------------------------------------------------------------
    def owns(self, match: LiveMatch, role: str, token: str | None) -> bool:
        """Whether ``token`` is the secret of ``role``'s seat in ``match``."""
        digest = match._seats.get(role) if isinstance(role, str) else None
        if digest is None or not isinstance(token, str) or not token:
            return False
        return hmac.compare_digest(hash_token(token), digest)

    def claim_seat(self, match: LiveMatch, role: str) -> str:
        """Take ``role``'s open seat: returns its secret token (given once; only its hash is stored).

        :class:`MoveRejected` 400 if ``role`` is not a human role, 409 if the seat is taken or the match over.
        """
        self._check_role(match, role)
        if not match.is_human(role):
            raise MoveRejected(400, f"{role} is played by the agent {match.players[match.roles.index(role)]!r}")
        if match.over:
            raise MoveRejected(409, f"the match is over ({match.result_text}); its seats cannot be taken")
        if match.seat_taken(role):
            raise MoveRejected(409, f"{role}'s seat is taken; you can watch, or take an open seat")
        token = secrets.token_urlsafe(24)
        digest = hash_token(token)
        if not self.store.add_seat(match.id, role, digest):
            raise MoveRejected(409, f"{role}'s seat is taken; you can watch, or take an open seat")
        match._seats[role] = digest
        if not match.open_seats():  # everyone is here: the people's clock starts now
            match.clock_start = time.time()
            self._kick(match)
        match.changed()
        return token

    @staticmethod
    def _check_live(match: LiveMatch) -> None:
        if match.closed == "deleted":
            raise MoveRejected(404, f"the match {match.id} was deleted")
        if match.closed is not None:
            raise MoveRejected(
                409, "the match was unloaded from memory while the request was on its way; send it again"
            )

    def _check_role(self, match: LiveMatch, role: Any) -> None:
        self._check_live(match)
        if not isinstance(role, str) or role not in match.roles:
            shown = _clip(role if isinstance(role, str) else repr(role), self.limits.max_echo_chars)
            raise MoveRejected(400, f"{match.game.name} has no role {shown!r}; its roles are {', '.join(match.roles)}")

    def _check_owner(self, match: LiveMatch, role: str, token: str | None, doing: str) -> None:
        if self.owns(match, role, token):
            return
        if match.seat_taken(role):
            raise MoveRejected(403, f"you do not hold {role}'s seat: send its token to {doing} (you can watch)")
        raise MoveRejected(403, f"{role}'s seat is open: take it first, then {doing} with its token")

    # --- playing -------------------------------------------------------------------------------
    def submit(self, match: LiveMatch, role: str, text: Any, step: int, token: str | None) -> Move:
        """A person's move for ``role`` in step ``step``, with the seat's ``token``.

        Raises :class:`MoveRejected` and changes nothing: 400 for an unknown role, an agent's role, a ``step``
        that is not a whole number or a move that is not legal (naming the legal moves); 403 without the
        seat's token; 409 when the match is over, ``step`` is not the current step or the role has moved in it.
        The event loop runs one submission at a time, so of many for one seat and step exactly one is taken.
        """
        self._check_role(match, role)
        if not match.is_human(role):
            raise MoveRejected(400, f"{role} is played by the agent {match.players[match.roles.index(role)]!r}")
        self._check_owner(match, role, token, "move")
        if match.over:
            raise MoveRejected(409, f"the match is over ({match.result_text}): no more moves (step {match.step})")
        if isinstance(step, bool) or not isinstance(step, int):
            shown = _clip(repr(step), self.limits.max_echo_chars)
            raise MoveRejected(
                400, f"step must be the whole number of the step the move is for (now {match.step}), not {shown}"
            )
        if step != match.step:
            raise MoveRejected(409, f"that move was meant for step {step}, but the match is at step {match.step}")
        if role in match.pending:
            raise MoveRejected(409, f"{role} has already moved in step {match.step}; waiting for the other roles")
        game = match.game
        legal = game.legal_moves(match.state, role)
        legal_texts = sorted(str(m) for m in legal)
        if not isinstance(text, str) or not text.strip():
            example = "a move is KIF text such as (move 2 5 3 5)"
            if isinstance(text, str):
                err = illegal_move_error(game, match.state, role, text, example)
            else:
                shown = _clip(repr(text), self.limits.max_echo_chars)
                err = illegal_move_error(
                    game, match.state, role, shown, f"a {type(text).__name__}, not text; {example}"
                )
            raise MoveRejected(400, str(err), legal_texts)
        move = _parse(game, match.state, role, text)
        if move is None or move not in legal:
            why = "not a move of this game" if move is None else ""
            shown_text = _clip(text.strip(), self.limits.max_echo_chars)
            raise MoveRejected(400, str(illegal_move_error(game, match.state, role, shown_text, why)), legal_texts)
        human_pending = {r: m.text for r, m in match.pending.items() if match.is_human(r)}
        human_pending[role] = move.text
        try:
            self.store.set_pending(match.id, human_pending)
        except sqlite3.Error as exc:
            raise MoveRejected(503, f"the move could not be stored ({exc}); try again") from None
        match.pending[role] = move
        match.step_times[role] = round(max(0.0, time.time() - match.times[-1]), 4)
        match.changed()
        self._kick(match)
        return move

    async def resign(self, match: LiveMatch, role: str, token: str | None) -> None:
        """``role`` gives up: it gets 0 and every other role 100, and the match is over.

        :class:`MoveRejected`: 400 for an unknown or agent role, 403 without the seat's token, 409 if over.
        """
        self._check_role(match, role)
        if not match.is_human(role):
            raise MoveRejected(400, f"{role} is played by the agent {match.players[match.roles.index(role)]!r}")
        self._check_owner(match, role, token, "resign")
        if match.over:
            raise MoveRejected(409, f"the match is already over ({match.result_text})")
        goals = tuple(0 if r == role else 100 for r in match.roles)
        self._finish(match, "resigned", goals, f"{role} resigned")

    async def offer_draw(self, match: LiveMatch, role: str, token: str | None) -> None:
        """``role`` offers a draw, or accepts one: once every role has, the match ends drawn (50 each).

        A draw by agreement fits a match of people only (an agent takes no offers). An offer lasts until the
        next step. :class:`MoveRejected`: 400 for an unknown or agent role or a match with agents, 403 without
        the seat's token, 409 if over.
        """
        self._check_role(match, role)
        if not match.is_human(role):
            raise MoveRejected(400, f"{role} is played by the agent {match.players[match.roles.index(role)]!r}")
        self._check_owner(match, role, token, "offer a draw")
        if match.over:
            raise MoveRejected(409, f"the match is already over ({match.result_text})")
        if not all(match.is_human(r) for r in match.roles):
            raise MoveRejected(400, "agents take no draw offers: play on, or resign")
        match.draw_offers.add(role)
        if match.draw_offers >= set(match.roles):
            self._finish(match, "drawn", tuple(50 for _ in match.roles), "draw agreed")
        else:
            match.changed()

    async def abort(self, match: LiveMatch, token: str | None) -> None:
        """End the match without a result, before any joint move was made; the owner of any seat may.

        :class:`MoveRejected`: 403 if ``token`` holds no seat (a match of agents alone has none: it plays to
        its end), 409 if a move was made (resign instead) or the match is over.
        """
        self._check_live(match)
        owner = next((r for r in match.roles if self.owns(match, r, token)), None)
        if owner is None:
            if not match.has_humans:
                raise MoveRejected(
                    403, "a match of agents alone has no seats, so nobody can abort it; it ends by itself"
                )
            raise MoveRejected(403, "only someone holding a seat of this match may abort it: send your seat's token")
        if match.over:
            raise MoveRejected(409, f"the match is already over ({match.result_text})")
        if match.step > 0:
            raise MoveRejected(
                409, f"{match.step} moves have been made, so the match cannot be aborted; resign instead"
            )
        self._finish(match, "aborted", None, f"aborted by {owner} before the first move")

    async def delete(self, match_id: str, token: str | None) -> None:
        """Remove a finished match from the history.

        Allowed to the owner of any of its seats; a finished match nobody holds a seat of (agents alone, or
        from before seats existed) may be deleted by anyone. :class:`MoveRejected`: 404 for no such match,
        409 while it is played (resign or abort it first), 403 without a seat's token.
        """
        head = self.store.head(match_id)
        if head is None:
            raise MoveRejected(404, f"no match {_clip(match_id, self.limits.max_echo_chars)!r}")
        if head.status != "over":
            raise MoveRejected(409, "the match is still being played: resign or abort it first, then delete it")
        if head.seats:
            digest = hash_token(token) if isinstance(token, str) and token else ""
            if not any(hmac.compare_digest(digest, d) for d in head.seats.values()):
                raise MoveRejected(403, "only someone holding a seat of this match may delete it: send the token")
        self.store.delete(match_id)
        match = self.matches.get(match_id)
        if match is not None:
            self._close_match(match, "deleted")

    def _finish(self, match: LiveMatch, ended: str, goals: tuple[int, ...] | None, result: str) -> None:
        self.store.finish(match.id, ended, goals, result)
        match.ended = ended
        match._goals = goals
        match.result_text = result
        match.pending.clear()
        match.thinking.clear()
        match.step_times.clear()
        match.step_faults.clear()
        self._thinkers.drop(match.id)
        match.agents.clear()  # their search trees are big; a finished match needs none
        match.changed()
        self._resume_backlog()

    def _kick(self, match: LiveMatch) -> None:
        """Fill in forced moves, set agents thinking, and apply the step once every role has its move."""
        if self._closed or match.over or match.closed is not None:
            return
        state = match.state
        for role in match.roles:
            if role in match.pending or role in match.thinking:
                continue
            legal = match.game.legal_moves(state, role)
            if len(legal) == 1:
                match.pending[role] = legal[0]
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
            legal = match.game.legal_moves(match.state, role)
            fault = timeout_fault(role, match.settings.human_time, 0.0, step=step + 1)
            move, recorded = fallback(fault, legal, self._rng)
            match.pending[role] = move
            match.step_faults.append(recorded.to_dict())
            match.notes.append(f"{role} ran out of time ({match.settings.human_time:g} s): {move} was played")
        if late:
            match.changed()
            self._kick(match)

    async def _apply_later(self, match: LiveMatch, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
        finally:
            match._apply_scheduled = False
        if all(r in match.pending for r in match.roles) and not match.over and match.closed is None:
            self._apply(match)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _think(self, match: LiveMatch, role: str, step: int) -> None:
        agent = match.agents[role]
        state = match.state
        legal = match.game.legal_moves(state, role)
        clock = match.settings.agent_time
        elapsed: float | None = None
        verdict: Move | Fault
        if role in match._overrunning:
            verdict = busy_fault(role, "select_move", step=step + 1)
        else:
            # Asked on the shared pool, not a thread of its own (see AgentPool); judged as the referee judges.
            job = self._thinkers.submit(
                match.id, agent.select_move, state, time_limit(clock), background=not match.has_humans
            )
            try:
                await job.started
                answer = await asyncio.wait_for(asyncio.shield(job.done), clock + self.limits.grace)
            except TimeoutError:
                self._thinkers.abandon(job)
                match._overrunning.add(role)
                job.done.add_done_callback(lambda _: match._overrunning.discard(role))
                verdict = timeout_fault(role, clock, self.limits.grace, step=step + 1)
            except Dropped:
                return  # the match ended or left memory
            except Exception as exc:
                verdict = exception_fault(role, exc, step=step + 1)
            else:
                verdict = judge(match.game, state, role, answer, step=step + 1, legal=legal)
            if job.began is not None:
                elapsed = round(job.elapsed if job.elapsed is not None else time.perf_counter() - job.began, 4)
        match.thinking.pop(role, None)
        if match.step != step or match.over or match.closed is not None:
            return
        if isinstance(verdict, Fault):
            move, recorded = fallback(verdict, legal, self._rng)
            match.step_faults.append(recorded.to_dict())
            match.notes.append(recorded.describe())
        else:
            move = verdict
        match.pending[role] = move
        if elapsed is not None:
            match.step_times[role] = elapsed
        match.changed()
        self._kick(match)

    def _apply(self, match: LiveMatch) -> None:
        game = match.game
        joint = [match.pending[r] for r in match.roles]
        new = game.next_state(match.state, joint)
        terminal = game.is_terminal(new)
        goals = tuple(int(g) for g in game.goals(new)) if terminal else None
        result = _describe_goals(match.roles, goals) if goals is not None else None
        texts = tuple(str(m) for m in joint)
        info: dict[str, Any] = {
            "times": [match.step_times.get(r) for r in match.roles],
            "faults": list(match.step_faults),
        }
        if match.step_forced:
            info["forced"] = list(match.step_forced)
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
            self._close_match(match, "unloaded")
            return
        match.states.append(new)
        match.joints.append(texts)
        match.times.append(time.time())
        match.infos.append(info)
        match.clock_start = match.times[-1]
        match.pending.clear()
        match.step_times.clear()
        match.step_faults.clear()
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
            self._resume_backlog()
        else:
            match.changed()
            self._kick(match)

    async def wait_idle(self, match: LiveMatch, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the match needs a person or is over."""
        deadline = time.monotonic() + timeout
        while match.busy() and not match.over and match.closed is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await match.wait_change(match.version, left)


def _describe_goals(roles: Sequence[str], goals: Sequence[int]) -> str:
    return ", ".join(f"{r} {g}" for r, g in zip(roles, goals, strict=True))


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


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
