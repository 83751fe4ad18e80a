"""A GGP player: answers a game manager's messages with an agent, always in time and always with a legal move.

:class:`PlayerService` holds the protocol's state (at most one match at a
time, as ggp-base players do) and turns each message text into a
:class:`~ggp.protocol.wire.Reply`; :func:`serve` puts it behind an HTTP
server (``ggp serve``).

* ``(INFO)`` -> ``((name NAME) (status available))``, ``busy`` during a match
  and while the warm-up child of :func:`serve` compiles what a first match
  needs (:meth:`PlayerService.warm_elsewhere`): a game manager does not
  start a match on a busy player.
* ``(START id role (rules...) sc pc)`` -> ``ready``. The rules are
  recognised (:mod:`ggp.protocol.recognize`): a built-in game is played on
  its native engine, any other on the GDL reasoner. The agent is built from
  its spec; an agent that cannot play the game (``amazons`` on anything but
  Amazons) is replaced by ``mcts``. ``ready`` is sent by the start clock
  less the margin even if preparing goes on. A START while another match is
  on gets ``busy``.
* ``(PLAY id moves)`` -> a move. The previous joint move is applied; the
  agent is asked through :class:`ggp.match.calls.Caller` and waited for until
  the play clock less the margin (it is told that time, and keeps its own
  safety margin for returning from its search); if it is late, fails, returns an
  illegal move, or is still busy with an earlier call that overran, a random
  legal move is sent instead, as the referee would play. An agent that can
  think ahead (``ponder()``, as ``mcts`` does) then searches on until the
  next message: its next call, or the end of the match, stops it.
* ``(STOP id moves)`` -> ``done`` and ``(ABORT id)`` -> ``aborted``: the
  match is cleared. So is a match no message has come for in
  ``idle_timeout`` seconds (its game manager is gone).
* ``(PREVIEW (rules...) clock)`` -> ``done``, after compiling the rules.
* PLAY, STOP or ABORT for a match that is not on (an unknown id, or PLAY
  before START) get ``busy``, as from ggp-base; a message that is not
  well formed gets status 400 and ``(error "...")``.

If the native engine ever rejects a joint move that the game manager sent
(a sheet that behaved like a built-in game but differs later on), the player
replays the match on the rule sheet's own reasoner and goes on there.

This module handles the messages; the rest of a player's work is in its own modules:
:mod:`~ggp.protocol.player_match` (the configuration and the per-match state),
:mod:`~ggp.protocol.player_agent` (starting the agent, asking it for moves, pondering),
:mod:`~ggp.protocol.early_moves` (the prover's moves while the rules compile),
:mod:`~ggp.protocol.reasoner_switch` (applying joint moves, and the switch to the reasoner) and
:mod:`~ggp.protocol.warmup` (compiling what a first match needs, ahead of it).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from ..agents import Agent, make_agent
from ..agents.base import Limit
from ..agents.hidden import HiddenPlayer, RandomHiddenPlayer
from ..core.errors import GGPError
from ..core.game import Game
from ..core.information import Information, Seen
from ..core.kif import term_text
from ..gdl.sheet import bounded
from ..match.calls import BackgroundCall
from ..match.clock import Clock
from .early_moves import early_move
from .messages import (
    ABORTED,
    BUSY,
    DONE,
    NIL,
    READY,
    Abort,
    Info,
    Play,
    Preview,
    ProtocolError,
    Start,
    Stop,
    error_reply,
    info_reply,
    is_symbol_text,
    parse_message,
)
from .player_agent import choose, ponder, start_agent, stop_pondering
from .player_match import PlayerConfig, PlayerMatch, remember_view
from .reasoner_switch import catch_up
from .recognize import _builtin_sheets, canonical, recognize, sheet_roles
from .warmup import READY_STEP, Log, WarmUp, prime, run_warm_steps, sheet_steps, warm_steps
from .wire import Reply

# The type of a message and, for START, its match id: enough to answer busy without parsing the rules.
_START_OR_PREVIEW = re.compile(r"\s*\(\s*(start|preview)(?=[\s(])\s*([^\s()]*)", re.IGNORECASE)


class PlayerService:
    """The protocol's side of a player; :meth:`handle` is the server's ``app``."""

    def __init__(self, config: PlayerConfig | None = None, log: Log | None = None, clock: Clock | None = None) -> None:
        self.config = config or PlayerConfig()
        #: What the clocks are kept by (:class:`Clock`: ``time.monotonic()``).
        self.clock = clock or Clock()
        if not is_symbol_text(self.config.name):
            raise ValueError(
                f"a player name is one symbol (no spaces, parentheses or quotes), not {self.config.name!r}"
            )
        make_agent(self.config.spec)  # a bad spec fails here, naming the known agents
        self.log = log
        self._lock = threading.Lock()
        self._previewing = threading.Lock()
        self._match: PlayerMatch | None = None
        self.finished: list[str] = []  # ids of matches ended by STOP, for tests and logs
        #: Set when the warm-up child process (:meth:`warm_elsewhere`) has ended and said how it went.
        self.warmed = threading.Event()
        #: The warm-up child process, once :meth:`warm_elsewhere` has started it.
        self.warmup: WarmUp | None = None

    # --- state ---------------------------------------------------------------------------------
    @property
    def match(self) -> PlayerMatch | None:
        """The match being played, if any."""
        with self._lock:
            return self._match

    @property
    def busy(self) -> bool:
        self._expire(self.clock.now())
        return self.match is not None

    def warm(self, games_first: bool = False) -> None:
        """Load the reasoner, the agent's compiled code for rule sheets, the built-in games and the agent's
        code for each now, so that a first START is quick; each step logs ``warm: K/N WHAT (S s)`` when done.

        The steps come in the order a first match needs them: what every rule sheet runs (the reasoner, the
        agent's search for sheets of two roles, then one), what recognising a sheet as a built-in game runs,
        then each built-in game with the agent on it. A rule sheet's compiled code is the same for every sheet
        of as many roles (its rules are data), so these steps cover unseen sheets too.

        On a cold numba cache this compiles for minutes, holding numba's compiler lock, which every other
        compile of this process waits for: :func:`serve` runs it in a child process instead
        (:meth:`warm_elsewhere`), whose compiles fill the on-disk cache this process then loads from."""
        run_warm_steps(warm_steps([self.config.spec], games_first), self._say)
        self._say("warm: the engines and the agent's compiled code are ready")

    @property
    def warming(self) -> bool:
        """Whether a warm-up child process (:meth:`warm_elsewhere`) is still compiling what a first match needs:
        INFO answers busy."""
        return self.warmup is not None and not self.warmup.has({READY_STEP})

    def warm_elsewhere(self) -> subprocess.Popen[bytes]:
        """Run :meth:`warm` in a child process (a :class:`WarmUp`) and return it; a thread of this process
        logs its progress.

        The child's compiles fill numba's on-disk cache. Until it is done INFO answers ``busy`` (a game
        manager does not start a match on a busy player); a START that comes anyway waits, up to its start
        clock, for the steps its sheet needs rather than compiling the same code beside the child, and its
        PLAYs meanwhile get legal moves (see :meth:`_prepare`).
        """
        self._say("warm: compiling the reasoner and the agent's code in a child process; INFO answers busy till then")
        self.warmup = WarmUp(self.config.spec, self._say, finished=self.warmed)
        return self.warmup.process

    def _await_warm(self, match: PlayerMatch, keys: set[str], until: float) -> None:
        """Wait (till ``until`` on :attr:`clock`, or the match's end) for the warm-up child to have done the
        steps ``keys``: it is compiling that code already, and compiling it here too would only share the
        cores with it. Returns at once when no warm-up runs."""
        warmup = self.warmup
        if warmup is None or warmup.has(keys):
            return
        self._say(
            f"START {match.match_id}: waiting for the warm-up to compile {', '.join(sorted(warmup.missing(keys)))}"
        )
        began = self.clock.now()
        warmup.wait_for(keys, until - began, cancel=match.cancelled)
        self._say(f"START {match.match_id}: waited {self.clock.now() - began:.1f} s for the warm-up")

    # --- messages -------------------------------------------------------------------------------
    def handle(self, text: str, received: float | None = None) -> Reply:
        """The reply to one message; ``received`` is when it arrived (on :attr:`clock`: ``time.monotonic()``
        unless another clock was given)."""
        now = self.clock.now()
        received = now if received is None else received
        self._expire(now)
        if self._busy_with_another(text):  # answered before reading megabytes of rules that would not be played
            return Reply(200, BUSY)
        try:
            message = parse_message(text)
        except ProtocolError as exc:
            self._say(f"bad message: {exc}")
            return Reply(400, error_reply(str(exc)))
        if isinstance(message, Info):
            warmup = self.warmup if self.match is None and self.warming else None
            progress = None if warmup is None else getattr(warmup, "progress", "0")
            return Reply(200, info_reply(self.config.name, self.match is not None, warming=progress))
        if isinstance(message, Start):
            return self._start(message, received)
        if isinstance(message, Play):
            return self._with_match(message.match_id, "PLAY", lambda m: self._play(m, message, received))
        if isinstance(message, Stop):
            return self._with_match(message.match_id, "STOP", lambda m: self._stop(m, message))
        if isinstance(message, Abort):
            return self._with_match(message.match_id, "ABORT", self._abort)
        assert isinstance(message, Preview)
        return self._preview(message, received)

    def _busy_with_another(self, text: str) -> bool:
        """Whether ``text`` is a START of another match, or a PREVIEW, while a match is on."""
        head = _START_OR_PREVIEW.match(text, 0, 1024)
        match = self.match
        if head is None or match is None:
            return False
        kind, match_id = head.group(1).upper(), head.group(2)
        if kind == "START" and match_id.lower() == match.match_id.lower():
            return False  # perhaps the same START again: read it
        self._say(f"{' '.join(filter(None, (kind, match_id)))} while match {match.match_id} is on: busy")
        return True

    def _with_match(self, match_id: str, what: str, fn: Callable[[PlayerMatch], Reply]) -> Reply:
        with self._lock:
            match = self._match
            if match is None or match.match_id.lower() != match_id.lower():
                current = f"match {match.match_id}" if match is not None else "no match"
                self._say(f"{what} for match {match_id}, but {current} is on: busy")
                return Reply(200, BUSY)
            match.active += 1
        try:
            return fn(match)
        finally:
            with self._lock:
                match.active -= 1
                match.last_seen = self.clock.now()

    # --- START ----------------------------------------------------------------------------------
    def _start(self, message: Start, received: float) -> Reply:
        roles = sheet_roles(message.rules)
        if not roles:
            return Reply(400, error_reply("the rules declare no roles: a rule sheet has (role name) facts"))
        role = next((r for r in roles if r.lower() == message.role.lower()), None)
        if role is None:
            return Reply(
                400, error_reply(f"{message.role} is not a role of these rules; the roles are {' '.join(roles)}")
            )
        with self._lock:
            current = self._match
            if current is not None:
                if current.match_id.lower() == message.match_id.lower() and current.role_text == message.role:
                    return Reply(200, READY)  # the same START again
                self._say(f"START {message.match_id} while match {current.match_id} is on: busy")
                return Reply(200, BUSY)
            match = PlayerMatch(message, received, self.config, self.clock)
            match.role = role
            match.active = 1
            self._match = match
        try:
            threading.Thread(target=self._prepare, args=(match,), name="ggp-player-prepare", daemon=True).start()
            deadline = received + message.start_clock - match.start_margin
            self.clock.wait(match.agent_ready, deadline - self.clock.now())
            if match.failure is not None:
                self._clear(match, "its rules cannot be played")
                return Reply(400, error_reply(f"cannot play these rules: {match.failure}"))
            if not match.agent_ready.is_set():
                self._say(f"START {match.match_id}: still preparing at the start clock; ready anyway")
            return Reply(200, READY)
        finally:
            with self._lock:
                match.active -= 1
                match.last_seen = self.clock.now()

    def _prepare(self, match: PlayerMatch) -> None:
        """Find the game and start the agent (in its own thread: START answers by its deadline regardless)."""
        began = self.clock.now()
        deadline = match.received + match.start_clock - match.start_margin
        # A START of a rule sheet that came while the warm-up child compiles (a game manager that did not ask
        # INFO first) waits, up to the start clock, for the steps every sheet of its roles needs: the child
        # does them first, and compiling the same code here too would only share the cores with it. (A
        # built-in game's own sheet does not wait: the child may be busy with other games.)
        if _builtin_sheets().get(canonical(match.rules)) is None:
            self._await_warm(match, sheet_steps(len(sheet_roles(match.rules))), deadline)
        # Compiling may go on past the start clock (START answers ready regardless), but not past the first
        # move's clock, when it would be of no use; nor past the match itself.
        compile_by = max(deadline, self.clock.now()) + match.play_clock
        try:
            # (the reader's bound is on time.monotonic(): as many seconds of it as the player's clock leaves)
            with bounded(deadline=time.monotonic() + compile_by - self.clock.now(), cancel=match.cancelled):
                found = recognize(match.rules, deadline=deadline, seed=self.config.seed or 0)
            game = found.game
            match.role = next(r for r in game.roles if r.lower() == match.role.lower())
            match.game, match.native, match.how, match.gdl = game, found.native, found.how, found.gdl
            match.state = game.initial_state()
            with contextlib.suppress(Exception):  # a speed-up only: what fails here fails again, and says so, at PLAY
                prime(game, match.state)
        except Exception as exc:
            match.failure = f"{type(exc).__name__}: {exc}"
            self._say(f"START {match.match_id}: {match.failure}")
            match.game_ready.set()
            match.agent_ready.set()
            return
        match.game_ready.set()
        if game.hidden_information:
            self._start_hidden(match, game)
            return
        told_start = max(0.01, deadline - self.clock.now())
        match.agent, match.agent_spec = self._start_agent(match, game, told_start)
        match.agent_ready.set()
        self._say(
            f"START {match.match_id} as {match.role}: {game.name} ({match.how}), agent {match.agent_spec}, "
            f"prepared in {self.clock.now() - began:.2f} s"
        )

    def _start_hidden(self, match: PlayerMatch, game: Game) -> None:
        """A GDL-II match: the role sees only its moves and percepts, so it is played by a player that decides
        on those (:mod:`ggp.agents.hidden`): ``random`` for the spec ``random``, the belief player otherwise."""
        seed = match.rng.getrandbits(31)  # the match's generator: seeded by --seed, else fresh each match
        spec = self.config.spec.partition(":")[0].strip().lower()
        think = max(0.05, 0.8 * (match.play_clock - match.margin))
        player = RandomHiddenPlayer(seed=seed) if spec == "random" else HiddenPlayer(seed=seed, seconds=think)
        player.start(game, match.role, match.start_clock, match.play_clock - match.margin)
        match.hidden = player
        match.agent_spec = f"hidden {player.name}"
        match.agent_ready.set()
        self._say(f"START {match.match_id} as {match.role}: {game.name} (GDL-II), agent {match.agent_spec}")

    def _play_hidden(self, match: PlayerMatch, message: Play, deadline: float) -> Reply:
        """A GDL-II PLAY: take in the role's last move and percepts, and choose on what it knows. Each turn's
        view is kept as it comes, so a PLAY answered while the rules still compiled loses nothing."""
        seen = message.view
        if seen is None:
            return Reply(400, error_reply("this is a GDL-II match: PLAY carries (PLAY id turn lastmove percepts)"))
        self.clock.wait(match.agent_ready, deadline - self.clock.now())
        game, player = match.game, match.hidden
        if game is not None and not game.hidden_information:
            return Reply(400, error_reply("a GDL-II PLAY (turn, lastmove, percepts) for a match of a GDL-I game"))
        if match.failure is not None:
            return Reply(400, error_reply(f"cannot play these rules: {match.failure}"))
        if game is None or player is None:
            self._say(f"PLAY {match.match_id}: the rules are still being compiled; no move known")
            return Reply(200, NIL)
        steps: list[Seen] = []
        for turn, view in enumerate(match.views[: seen.turn], 1):
            if view.last_move is None:
                return Reply(400, error_reply(f"turn {turn} told no last move (NIL is for turn 0 only)"))
            try:
                move = game.move_from_term(view.last_move)
            except GGPError as exc:
                return Reply(400, error_reply(f"the last move of turn {turn} is no move of this game: {exc}"))
            steps.append(Seen(move, tuple(term_text(p) for p in view.percepts)))
        try:
            choice = player.choose(Information(match.role, tuple(steps)), Limit(max(0.01, deadline - self.clock.now())))
        except ValueError as exc:  # no history gives these percepts: the rules or the manager disagree
            return Reply(400, error_reply(str(exc)))
        match.moves_sent += 1
        self._say(f"PLAY {match.match_id} turn {seen.turn}: {choice.move}")
        return Reply(200, choice.move.text)

    def _start_agent(self, match: PlayerMatch, game: Game, start_clock: float) -> tuple[Agent | None, str | None]:
        """The configured agent (or the fallback) started on ``game``; what a switch to the reasoner starts too."""
        return start_agent(match, game, start_clock, self.config, self._say)

    # --- PLAY -------------------------------------------------------------------------------------
    def _play(self, match: PlayerMatch, message: Play, received: float) -> Reply:
        deadline = received + match.play_clock - match.margin
        if message.view is not None:  # kept before anything waits: a PLAY answered late still tells its turn
            problem = remember_view(match, message.view)
            if problem is not None:
                return Reply(400, error_reply(problem))
        if not match.lock.acquire(timeout=max(0.0, deadline - self.clock.now())):
            return Reply(409, error_reply(f"an earlier PLAY of match {match.match_id} is still being answered"))
        try:
            if message.view is not None or match.hidden is not None:
                return self._play_hidden(match, message, deadline)
            moves = message.moves
            if not match.game_ready.is_set():
                if moves is not None:  # kept: the match must not lose a step while the rules compile
                    match.pending.append(moves)
                    moves = None
                move_text = early_move(match, deadline, self._say)
                if move_text is not None:
                    match.random_moves += 1
                    self._say(f"PLAY {match.match_id}: the rules are still being compiled; the prover's {move_text}")
                    return Reply(200, move_text)
                if not match.game_ready.is_set():
                    self._say(f"PLAY {match.match_id}: the rules are still being compiled; no move known")
                    return Reply(200, NIL)
            if match.failure is not None:
                return Reply(400, error_reply(f"cannot play these rules: {match.failure}"))
            try:
                problem = catch_up(match, moves, self._start_agent, self._say)
                if problem is not None:
                    self._say(f"PLAY {match.match_id}: {problem}")
                    return Reply(400, error_reply(problem))
                game, state = match.game, match.state
                assert game is not None and state is not None
                if game.is_terminal(state):
                    return Reply(400, error_reply("the game is over in this state; STOP ends a match"))
                # The moves are listed in this thread: on a sheet played by the prover a state may have more
                # than it can list within the clock, and a late reply helps no one.
                listing_by = time.monotonic() + max(0.0, deadline - self.clock.now())
                try:
                    with bounded(deadline=listing_by, cancel=match.cancelled):
                        move, said = choose(match, state, deadline, self._say)
                except GGPError:
                    if time.monotonic() < listing_by or match.cancelled.is_set():
                        raise
                    self._say(f"PLAY {match.match_id}: the legal moves could not be listed within the clock; no move")
                    return Reply(200, NIL)  # this PLAY only: the next one may find a smaller state
            except GGPError as exc:
                # The rules cannot be played past a bound (the prover's answers, terms nesting without end):
                # every later PLAY of this match says so at once, and STOP, ABORT or the idle timeout end it.
                match.failure = f"{type(exc).__name__}: {exc}"
                self._say(f"PLAY {match.match_id}: {match.failure}")
                return Reply(400, error_reply(f"cannot play these rules: {match.failure}"))
            ponder(match, self._say)
            match.moves_sent += 1
            step = len(match.history) + 1
            figures = f"; {said}" if said else ""
            self._say(f"PLAY {match.match_id} step {step}: {move} ({self.clock.now() - received:.2f} s{figures})")
            return Reply(200, move.text)
        finally:
            match.lock.release()

    # --- STOP, ABORT, PREVIEW ------------------------------------------------------------------------
    def _stop(self, match: PlayerMatch, message: Stop) -> Reply:
        got_lock = match.lock.acquire(timeout=1.0)
        try:
            if match.game_ready.is_set() and match.failure is None:
                problem = catch_up(match, message.moves, self._start_agent, self._say)
                if problem is not None:
                    self._say(f"STOP {match.match_id}: {problem}")
            game, state, agent = match.game, match.state, match.agent
            idle = not match.caller.busy(match.role)
            if game is not None and state is not None and agent is not None and match.agent_ready.is_set() and idle:
                with contextlib.suppress(Exception):
                    if game.is_terminal(state):
                        goals = tuple(game.goals(state))
                        match.caller.call(match.role, "stop", agent.stop, state, goals, clock=0.5, phase="stop")
        finally:
            if got_lock:
                match.lock.release()
        self._clear(match, "stopped")
        with self._lock:
            self.finished.append(match.match_id)
            del self.finished[:-100]
        return Reply(200, DONE)

    def _abort(self, match: PlayerMatch) -> Reply:
        self._clear(match, "aborted")
        return Reply(200, ABORTED)

    def _preview(self, message: Preview, received: float) -> Reply:
        if self.match is not None:
            return Reply(200, BUSY)
        if not self._previewing.acquire(blocking=False):  # one preview compiles at a time; the rest are skipped
            self._say("PREVIEW while another PREVIEW is compiling: skipped")
            return Reply(200, DONE)
        deadline = received + message.clock - self.config.margin_for(message.clock)

        def compile_rules() -> None:
            try:
                with bounded(deadline=deadline):
                    recognize(message.rules, deadline=deadline)
            except Exception as exc:
                self._say(f"PREVIEW: the rules cannot be played: {type(exc).__name__}: {exc}")
            finally:
                self._previewing.release()

        BackgroundCall("ggp-player-preview", compile_rules).wait(max(0.0, deadline - self.clock.now()))
        return Reply(200, DONE)

    # --- housekeeping -----------------------------------------------------------------------------------
    def _clear(self, match: PlayerMatch, why: str) -> None:
        match.cancelled.set()
        stop_pondering(match)
        with self._lock:
            if self._match is match:
                self._match = None
        self._say(
            f"match {match.match_id} {why} after {len(match.history)} joint moves "
            f"({match.moves_sent} moves sent, {match.random_moves} of them random)"
        )

    def _expire(self, now: float) -> None:
        with self._lock:
            match = self._match
            if match is None or match.active or now - match.last_seen <= match.idle_timeout:
                return
            self._match = None
        match.cancelled.set()
        stop_pondering(match)
        self._say(f"match {match.match_id} dropped: no message for {match.idle_timeout:g} s")

    def _say(self, text: str) -> None:
        if self.log is not None:
            try:
                self.log(text)
            except Exception:  # a broken log must not break the player
                traceback.print_exc()


def serve(
    config: PlayerConfig,
    host: str = "127.0.0.1",
    port: int = 9147,
    *,
    log: Log | None = None,
    ready: Callable[[Any], None] | None = None,
    read_timeout: float = 10.0,
) -> None:
    """Serve ``config``'s player on ``host:port`` until interrupted; ``ready(server)`` is called once listening."""
    from .wire import GGPServer

    service = PlayerService(config, log=log)
    with GGPServer(host, port, service.handle, read_timeout=read_timeout, log=log) as server:
        warming = service.warm_elsewhere()
        try:
            if ready is not None:
                ready(server)
            server.serve_forever()
        finally:
            if warming.poll() is None:
                warming.terminate()


__all__ = ["PlayerService", "serve"]
