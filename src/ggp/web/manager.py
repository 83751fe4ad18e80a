"""Live matches: people's moves, agents thinking in threads, and every step stored.

A :class:`Manager` owns the matches being played. All their bookkeeping runs
on the server's event loop; only agents' calls run in threads, so a thinking
agent never blocks a page. A step is complete when every role has a move for
it: a person's submission, an agent's answer, or the single legal move
(``noop``), which is filled in without asking anyone. Then the joint move is
applied, the new state is stored and everyone watching is told.

In a simultaneous game an agent's answer stays hidden until the joint move is
applied, so a person never sees it before submitting their own.

The manager keeps the matches in memory and answers people's requests; the
steps themselves are taken by its :class:`~ggp.web.referee.Referee`, a request's
checks are in :mod:`ggp.web.checks`, and a match is opened (new or reopened,
its agents started) by :mod:`ggp.web.opening`.

Resources are bounded by :class:`~ggp.web.limits.Limits`:

* **Memory.** At most ``max_live_matches`` matches are in memory. A match
  nobody watches (:meth:`Manager.watch`) and no agent works on is unloaded
  after ``idle_seconds`` without activity, or earlier when room is needed
  (least recently active first); it stays in SQLite and :meth:`Manager.get`
  reloads it, every step intact. When nothing can be unloaded, creating a
  match raises :class:`~ggp.web.live_match.LimitReached`.
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
import logging
import secrets
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from typing import Any

from ..core.game import Move
from ..registry import game_names
from .agent_pool import AgentPool
from .catalog import Catalog
from .checks import check_human, check_live, check_owner, check_role, clip, owns, read_move
from .limits import Limits
from .live_match import LimitReached, LiveMatch, MoveRejected
from .opening import play_opening, players_of, restore, seats_taken, start_agents
from .referee import Referee
from .settings import Settings, check_settings, hash_token, token_matches
from .store import Store

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
        self._starters = AgentPool(self.limits.start_threads, "ggp-agent-start")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reserved = 0  # matches being created or reopened, not yet in self.matches
        self._backlog: deque[str] = deque()  # matches of agents alone waiting for room to go on
        self._draining = False
        self._started = False
        self._closed = False
        self._referee = Referee(
            store,
            self.limits,
            self._thinkers,
            spawn=self._spawn,
            unload=self._close_match,
            room_freed=self._resume_backlog,
            is_closed=lambda: self._closed,
        )

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

    def expire_abandoned(self) -> list[str]:
        """End as abandoned the stored matches with people that nobody moved in for ``abandon_seconds`` (matches
        in memory are being played or watched, so they are left alone); their ids."""
        days = self.limits.abandon_seconds / 86400
        return self.store.abandon_stale(
            time.time() - self.limits.abandon_seconds, keep=set(self.matches), result=f"no move in {days:g} days"
        )

    # --- creating and loading ---------------------------------------------------------------------
    async def create(
        self,
        game_name: str,
        players: dict[str, str] | Sequence[str],
        settings: Settings,
        *,
        seats: Iterable[str] | None = None,
        opening: Sequence[Sequence[str]] = (),
        opened_from: str | None = None,
    ) -> tuple[LiveMatch, dict[str, str]]:
        """Start a new match; ``players`` maps each role to ``human`` or an agent spec (roles left out: human).

        ``opening`` is joint moves (KIF texts, role order) played before anyone is asked, as the new match's
        first steps: a game continued from a position of another (``opened_from``, its id, kept in those
        steps' infos). Each is checked against the rules; a position that is over cannot be continued.

        Returns the match and a secret token for each human seat the creator takes: ``seats`` (default:
        every human role); the other human seats stay open for :meth:`claim_seat`. Raises ``ValueError``
        (an unknown game, a missing or unknown role, a bad agent spec, an agent that cannot play this game,
        settings beyond ``limits``, a seat that is not a human role) and :class:`LimitReached` when no more
        matches fit in memory. The agents are made and started on the start threads before this returns.
        """
        await self.start()
        if not isinstance(game_name, str) or not self.games.known(game_name):
            shown = clip(repr(game_name), self.limits.max_echo_chars)
            raise ValueError(f"unknown game {shown}; the games are {', '.join(game_names())} (see GET /api/catalog)")
        # a rule sheet is grounded on first use, which may take seconds: not on the event loop
        game = (
            self.games.load(game_name)
            if game_name in game_names()
            else await asyncio.to_thread(self.games.load, game_name)
        )
        normalised = players_of(game, players)
        check_settings(settings, self.limits)
        steps = await asyncio.to_thread(play_opening, game, opening, opened_from)
        taken = seats_taken(game, normalised, seats)
        settings = Settings(
            agent_time=float(settings.agent_time), pace=float(settings.pace), human_time=float(settings.human_time)
        )
        if not self._make_room():
            raise self._full()
        self._reserved += 1
        try:
            match = LiveMatch(secrets.token_hex(6), game, normalised, settings, self._clock, key=game_name)
            for state, joint, info in steps:
                match.states.append(state)
                match.joints.append(joint)
                match.infos.append(info)
                match.times.append(match.created)
            match.new_turn()
            await start_agents(match, True, self._starters, self.limits)
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
            game.state_to_json(match.states[0]),
            seats=match._seats,
        )
        for k, (state, joint, info) in enumerate(steps, 1):
            self.store.append_step(match.id, k, joint, game.state_to_json(state), terminal=False, goals=None, info=info)
        self.matches[match.id] = match
        self._referee.kick(match)
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
        match = restore(stored, self.games, self.limits, self._clock)
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

    async def _resume(self, match: LiveMatch) -> None:
        try:
            await start_agents(match, False, self._starters, self.limits)
        finally:
            match._starting = False
        if match.closed is None:
            match.changed()
            self._referee.kick(match)

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
            self.expire_abandoned()
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
        return owns(match, role, token)

    def claim_seat(self, match: LiveMatch, role: str) -> str:
        """Take ``role``'s open seat: returns its secret token (given once; only its hash is stored).

        :class:`MoveRejected` 400 if ``role`` is not a human role, 409 if the seat is taken or the match over.
        """
        check_role(match, role, self.limits.max_echo_chars)
        check_human(match, role)
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
            self._referee.kick(match)
        match.changed()
        return token

    # --- playing -------------------------------------------------------------------------------
    def submit(self, match: LiveMatch, role: str, text: Any, step: int, token: str | None) -> Move:
        """A person's move for ``role`` in step ``step``, with the seat's ``token``.

        Raises :class:`MoveRejected` and changes nothing: 400 for an unknown role, an agent's role, a ``step``
        that is not a whole number or a move that is not legal (naming the legal moves); 403 without the
        seat's token; 409 when the match is over, ``step`` is not the current step or the role has moved in it.
        The event loop runs one submission at a time, so of many for one seat and step exactly one is taken.
        """
        check_role(match, role, self.limits.max_echo_chars)
        check_human(match, role)
        check_owner(match, role, token, "move")
        if match.over:
            raise MoveRejected(409, f"the match is over ({match.result_text}): no more moves (step {match.step})")
        move = read_move(match, role, text, step, self.limits.max_echo_chars)
        human_pending = {r: m.text for r, m in match.pending.items() if match.is_human(r)}
        human_pending[role] = move.text
        try:
            self.store.set_pending(match.id, human_pending)
        except sqlite3.Error as exc:
            raise MoveRejected(503, f"the move could not be stored ({exc}); try again") from None
        match.turn.take(role, move, elapsed=round(max(0.0, time.time() - match.times[-1]), 4))
        match.changed()
        self._referee.kick(match)
        return move

    async def resign(self, match: LiveMatch, role: str, token: str | None) -> None:
        """``role`` gives up: it gets 0 and every other role 100, and the match is over.

        :class:`MoveRejected`: 400 for an unknown or agent role, 403 without the seat's token, 409 if over.
        """
        check_role(match, role, self.limits.max_echo_chars)
        check_human(match, role)
        check_owner(match, role, token, "resign")
        if match.over:
            raise MoveRejected(409, f"the match is already over ({match.result_text})")
        goals = tuple(0 if r == role or match.is_chance(r) else 100 for r in match.roles)
        self._referee.finish(match, "resigned", goals, f"{role} resigned")

    async def take_back(self, match: LiveMatch, role: str, token: str | None) -> int:
        """Take back ``role``'s last move against the computer and the computer's reply: the match goes back to
        the state where ``role`` last chose (Amazons: before its move and arrow). Returns the step it is at.

        :class:`MoveRejected`: 400 for an unknown or agent role, or a match with another person; 403 without the
        seat's token; 409 if over, while the computer thinks, or with no move of ``role``'s to take back.
        """
        check_role(match, role, self.limits.max_echo_chars)
        check_human(match, role)
        check_owner(match, role, token, "take back a move")
        if match.over:
            raise MoveRejected(409, f"the match is over ({match.result_text}): no move can be taken back")
        if match.game.hidden_information:
            raise MoveRejected(400, "a move cannot be taken back in a game of hidden information: play on, or resign")
        if [r for r in match.roles if match.is_human(r)] != [role]:
            raise MoveRejected(400, "a move is taken back in a game against the computer; ask the other person")
        if match.thinking:
            raise MoveRejected(409, "the computer is thinking: take the move back once it has answered")
        chose = [
            k
            for k in range(1, match.step + 1)
            # (a match stored before per-step infos were kept has fewer of them: every step counts as a choice;
            # the moves a continued game opened with are not the person's to take back)
            if role not in (info := match.infos[k - 1] if k - 1 < len(match.infos) else {}).get("single", [])
            and "opened_from" not in info
            and match.joints[k - 1][match.roles.index(role)] != "noop"
        ]
        if not chose:
            raise MoveRejected(409, f"{role} has made no move to take back")
        back = chose[-1] - 1
        while back in chose:  # a turn of several steps (Amazons' move, then its arrow) goes back whole
            back -= 1
        try:
            self.store.take_back(match.id, back)
        except (sqlite3.Error, ValueError) as exc:
            raise MoveRejected(409, f"the move could not be taken back ({exc})") from None
        del match.states[back + 1 :], match.times[back + 1 :]  # a state and its time for each step, and the start
        del match.joints[back:], match.infos[back:]
        match.clock_start = time.time()
        match.step_forced.clear()
        match.draw_offers.clear()
        match.new_turn()
        match.notes.append(f"{role} took back a move: back to step {back}")
        match.changed()
        self._referee.kick(match)
        return back

    async def offer_draw(self, match: LiveMatch, role: str, token: str | None) -> None:
        """``role`` offers a draw, or accepts one: once every role has, the match ends drawn (50 each).

        A draw by agreement fits a match of people only (an agent takes no offers). An offer lasts until the
        next step. :class:`MoveRejected`: 400 for an unknown or agent role or a match with agents, 403 without
        the seat's token, 409 if over.
        """
        check_role(match, role, self.limits.max_echo_chars)
        check_human(match, role)
        check_owner(match, role, token, "offer a draw")
        if match.over:
            raise MoveRejected(409, f"the match is already over ({match.result_text})")
        if not all(match.is_human(r) for r in match.seat_roles):
            raise MoveRejected(400, "agents take no draw offers: play on, or resign")
        match.draw_offers.add(role)
        if match.draw_offers >= set(match.seat_roles):
            goals = tuple(0 if match.is_chance(r) else 50 for r in match.roles)
            self._referee.finish(match, "drawn", goals, "draw agreed")
        else:
            match.changed()

    async def abort(self, match: LiveMatch, token: str | None) -> None:
        """End the match without a result, before any joint move was made; the owner of any seat may.

        :class:`MoveRejected`: 403 if ``token`` holds no seat (a match of agents alone has none: it plays to
        its end), 409 if a move was made (resign instead) or the match is over.
        """
        check_live(match)
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
        self._referee.finish(match, "aborted", None, f"aborted by {owner} before the first move")

    async def delete(self, match_id: str, token: str | None) -> None:
        """Remove a finished match from the history.

        Allowed to the owner of any of its seats; a finished match nobody holds a seat of (agents alone, or
        from before seats existed) may be deleted by anyone. :class:`MoveRejected`: 404 for no such match,
        409 while it is played (resign or abort it first), 403 without a seat's token.
        """
        head = self.store.head(match_id)
        if head is None:
            raise MoveRejected(404, f"no match {clip(match_id, self.limits.max_echo_chars)!r}")
        if head.status != "over":
            raise MoveRejected(409, "the match is still being played: resign or abort it first, then delete it")
        if head.seats and not any(token_matches(token, digest) for digest in head.seats.values()):
            raise MoveRejected(403, "only someone holding a seat of this match may delete it: send the token")
        self.store.delete(match_id)
        match = self.matches.get(match_id)
        if match is not None:
            self._close_match(match, "deleted")

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self, match: LiveMatch, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the match needs a person or is over."""
        deadline = time.monotonic() + timeout
        while match.busy() and not match.over and match.closed is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await match.wait_change(match.version, left)
