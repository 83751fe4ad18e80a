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
  the play clock less the margin (it is told that time less
  :func:`~ggp.match.calls.margin` of it); if it is late, fails, returns an
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
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import subprocess
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..agents import Agent, make_agent
from ..core.errors import GGPError
from ..core.game import Game, Move, State
from ..core.kif import Term, term_text
from ..gdl.sheet import bounded
from ..match.calls import (
    MAX_CLOCK,
    BackgroundCall,
    Caller,
    margin,
)
from ..match.clock import AnyOf, Clock
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
from .recognize import _builtin_sheets, canonical, gdl_game, recognize, sheet_roles, sheet_text
from .warmup import READY_STEP, Log, WarmUp, prime, run_warm_steps, sheet_steps, warm_steps
from .wire import Reply

# The type of a message and, for START, its match id: enough to answer busy without parsing the rules.
_START_OR_PREVIEW = re.compile(r"\s*\(\s*(start|preview)(?=[\s(])\s*([^\s()]*)", re.IGNORECASE)


@dataclass
class PlayerConfig:
    """How a player plays.

    ``spec`` is the agent spec (``random``, ``mcts:time=2``); ``name`` what
    INFO answers. ``margin`` is the seconds kept back from each clock for the
    reply's way back (default :func:`ggp.match.calls.margin`, the margin every
    agent call of ggp keeps). A match no message has come for in
    ``idle_timeout`` seconds is dropped (default: 4 x (start clock + play
    clock), at least 2 minutes). ``seed`` seeds the agents and the fallback
    moves. ``fallback`` is the agent used when ``spec`` cannot play a game.
    """

    spec: str = "random"
    name: str = "ggp"
    margin: float | None = None
    idle_timeout: float | None = None
    seed: int | None = None
    fallback: str = "mcts"

    def __post_init__(self) -> None:
        for what, value, low in (("margin", self.margin, 0.0), ("idle_timeout", self.idle_timeout, None)):
            if value is None:
                continue
            if not (isinstance(value, (int, float)) and math.isfinite(value)) or value > MAX_CLOCK:
                raise ValueError(f"{what} must be a finite number of seconds up to {MAX_CLOCK:g}, not {value!r}")
            if (low is not None and value < low) or (low is None and value <= 0):
                raise ValueError(f"{what} must be {'at least 0' if low is not None else 'above 0'}, not {value!r}")
        if self.seed is not None and not (isinstance(self.seed, int) and 0 <= self.seed < 2**63):
            raise ValueError(f"seed must be an int from 0 to 2**63-1, not {self.seed!r}")

    def margin_for(self, clock: float) -> float:
        """The seconds kept back from ``clock``: the configured margin, or :func:`ggp.match.calls.margin`;
        never more than half the clock."""
        kept = margin(clock) if self.margin is None else self.margin
        return min(max(0.0, kept), 0.5 * clock)


class PlayerMatch:
    """The state of the match a player is in: its game, agent, current state and history."""

    def __init__(self, message: Start, received: float, config: PlayerConfig, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self.match_id = message.match_id
        self.role_text = message.role
        self.rules: tuple[Term, ...] = message.rules
        self.start_clock = message.start_clock
        self.play_clock = message.play_clock
        self.received = received
        self.margin = config.margin_for(message.play_clock)
        self.start_margin = config.margin_for(message.start_clock)
        self.idle_timeout = (
            config.idle_timeout
            if config.idle_timeout is not None
            else max(120.0, 4 * (message.start_clock + message.play_clock))
        )
        self.game: Game | None = None
        self.role: str = message.role
        self.native: str | None = None
        self.how = ""
        self.gdl: Game | None = None
        self.agent: Agent | None = None
        self.agent_spec: str | None = None
        self.state: State | None = None
        self.history: list[tuple[str, ...]] = []
        #: Joint moves that came while the rules were still being compiled, applied in order once they are.
        self.pending: list[tuple[Term, ...]] = []
        self.failure: str | None = None
        self.game_ready = threading.Event()
        self.agent_ready = threading.Event()
        #: Set when the match ends (STOP, ABORT, dropped): compiling its rules stops.
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        #: The rules on the top-down prover (pure Python, nothing to compile), for moves while they compile.
        self.prover: Game | None = None
        self.prover_lock = threading.Lock()
        #: Asks the agent: one call at a time, so an agent still busy with a move that overran is not asked again.
        self.caller: Caller = Caller(clock=self.clock)
        self.last_seen = received
        self.active = 0
        self.moves_sent = 0
        self.random_moves = 0
        seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**31)
        self.rng = random.Random(seed)


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
        told_start = max(0.01, deadline - self.clock.now())
        match.agent, match.agent_spec = self._start_agent(match, game, told_start)
        match.agent_ready.set()
        self._say(
            f"START {match.match_id} as {match.role}: {game.name} ({match.how}), agent {match.agent_spec}, "
            f"prepared in {self.clock.now() - began:.2f} s"
        )

    def _start_agent(self, match: PlayerMatch, game: Game, start_clock: float) -> tuple[Agent | None, str | None]:
        play = max(0.01, match.play_clock - match.margin)
        defaults = {} if self.config.seed is None else {"seed": self.config.seed}
        for spec in (self.config.spec, self.config.fallback):
            try:
                agent = make_agent(spec, **defaults)
                agent.start(game, match.role, start_clock, play)
                return agent, spec
            except Exception as exc:
                self._say(f"agent {spec} cannot play {game.name}: {type(exc).__name__}: {exc}")
        return None, None

    # --- PLAY -------------------------------------------------------------------------------------
    def _play(self, match: PlayerMatch, message: Play, received: float) -> Reply:
        deadline = received + match.play_clock - match.margin
        if not match.lock.acquire(timeout=max(0.0, deadline - self.clock.now())):
            return Reply(409, error_reply(f"an earlier PLAY of match {match.match_id} is still being answered"))
        try:
            moves = message.moves
            if not match.game_ready.is_set():
                if moves is not None:  # kept: the match must not lose a step while the rules compile
                    match.pending.append(moves)
                    moves = None
                move_text = self._early_move(match, deadline)
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
                problem = self._catch_up(match, moves)
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
                        move = self._choose(match, state, deadline)
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
            self._ponder(match)
            match.moves_sent += 1
            step = len(match.history) + 1
            self._say(f"PLAY {match.match_id} step {step}: {move} ({self.clock.now() - received:.2f} s)")
            return Reply(200, move.text)
        finally:
            match.lock.release()

    def _early_move(self, match: PlayerMatch, deadline: float) -> str | None:
        """A random legal move from the top-down prover while the rules compile (None: none by ``deadline``).

        The prover (pure Python) needs no compiling, so a first PLAY on a cold numba cache gets a legal
        move in time; it is asked in a thread of its own, and the compiled game is taken instead if it
        gets ready first.
        """
        joints = list(match.pending)
        found: list[str] = []
        done = threading.Event()

        def ask() -> None:
            try:
                with match.prover_lock, bounded(deadline=deadline, cancel=match.cancelled):
                    if match.prover is None:
                        from ..gdl.prover_game import ProverGame

                        match.prover = ProverGame(sheet_text(match.rules), "early")
                    game = match.prover
                    state = game.initial_state()
                    for joint in joints:
                        state = game.next_state(state, [game.parse_move(term_text(m)) for m in joint])
                    role = next(r for r in game.roles if r.lower() == match.role.lower())
                    legal = game.legal_moves(state, role)
                    if legal and not game.is_terminal(state):
                        found.append(str(legal[match.rng.randrange(len(legal))]))
            except Exception as exc:  # a move of the compiled game comes later, or NIL: never a failure
                self._say(f"PLAY {match.match_id}: the prover has no move: {type(exc).__name__}: {exc}")
            finally:
                done.set()

        threading.Thread(target=ask, name="ggp-player-prover", daemon=True).start()
        either = AnyOf(done, match.game_ready)  # the compiled game may win the race
        self.clock.wait(either, deadline - self.clock.now())
        return found[0] if found else None

    def _catch_up(self, match: PlayerMatch, moves: tuple[Term, ...] | None) -> str | None:
        """Apply the joint moves kept while the rules compiled, then ``moves``; returns what is wrong, if anything."""
        while match.pending:
            problem = self._advance(match, match.pending.pop(0))
            if problem is not None:
                return problem
        return None if moves is None else self._advance(match, moves)

    def _advance(self, match: PlayerMatch, moves: tuple[Term, ...]) -> str | None:
        """Apply the game manager's joint move; returns what is wrong, if anything."""
        texts = tuple(term_text(m) for m in moves)
        problem = _apply(match, texts)
        if problem is None:
            return None
        # The native engine refuses a joint move: if the rule sheet's own reasoner takes it, the sheet differs
        # from the built-in game after all, and the match goes on there. A joint move that the reasoner refuses
        # too is the game manager's mistake, and the match stays where it is.
        game = match.game
        arity_ok = game is not None and len(texts) == len(game.roles)
        if match.native is not None and arity_ok and self._switch_to_reasoner(match, texts):
            return None
        return problem

    def _switch_to_reasoner(self, match: PlayerMatch, texts: tuple[str, ...]) -> bool:
        """Replay the match and then ``texts`` on the reasoner; on success go on there and return True."""
        try:
            with bounded(cancel=match.cancelled):
                game = match.gdl if match.gdl is not None else gdl_game(match.rules)
            # moves the sheet does not know are refused before its kernel is compiled (seconds, on a cold cache)
            joints = [[game.parse_move(t) for t in joint] for joint in (*match.history, texts)]
            state = game.initial_state()
            for joint in joints:
                state = game.next_state(state, joint)
        except Exception as exc:  # GGPError mostly; any failure of the reasoner leaves the match as it was
            self._say(f"match {match.match_id}: the rule sheet's reasoner refuses the match too: {exc}")
            return False
        self._say(
            f"match {match.match_id}: the native engine refused {' '.join(texts)}; the rule sheet's reasoner "
            "takes it, so the match goes on there"
        )
        match.game, match.gdl, match.state, match.native = game, game, state, None
        match.history.append(tuple(str(game.parse_move(t)) for t in texts))
        match.role = next(r for r in game.roles if r.lower() == match.role.lower())
        match.how = "GDL reasoner (the native engine disagreed with the game manager)"
        match.caller = Caller(clock=self.clock)  # a new agent: the old one's overrunning call does not make it busy
        match.agent, match.agent_spec = self._start_agent(match, game, max(0.01, match.play_clock - match.margin))
        return True

    def _choose(self, match: PlayerMatch, state: State, deadline: float) -> Move:
        """The agent's move if it gives a legal one in time, else a random legal move."""
        # An agent still starting (compiling a new sheet's network can outlast the start clock) gets half
        # of this clock to be ready and the rest to choose: better than a random move at once.
        if not match.agent_ready.is_set():
            wait = max(0.0, (deadline - self.clock.now()) / 2)
            self._say(f"PLAY {match.match_id}: the agent is still starting; waiting up to {wait:.2f} s for it")
            self.clock.wait(match.agent_ready, wait)
        agent = match.agent if match.agent_ready.is_set() else None
        game = match.game
        assert game is not None
        if agent is None:
            legal = game.legal_moves(state, match.role)
            move = legal[match.rng.randrange(len(legal))]
            why = "no agent (still starting, or none could play)"
        else:
            clock = max(0.0, deadline - self.clock.now())  # the reply is due by the deadline: no grace
            told = max(0.01, clock - margin(clock))
            step = len(match.history) + 1
            move, _, fault = match.caller.ask(
                agent, game, state, match.role, clock=clock, rng=match.rng, step=step, told=told
            )
            if fault is None:
                return move
            why = f"{fault.kind}: {fault.message}"
        match.random_moves += 1
        self._say(f"PLAY {match.match_id}: {why}; playing the random legal move {move}")
        return move

    def _ponder(self, match: PlayerMatch) -> None:
        """Let the agent think on until the next message, if it can (``ponder``) and is not still busy.

        Its next call (select_move, stop) ends the thinking first; so does the end of the match.
        """
        agent = match.agent
        ponder = getattr(agent, "ponder", None)
        if agent is None or ponder is None or not match.agent_ready.is_set() or match.caller.busy(match.role):
            return
        try:
            ponder()
        except Exception as exc:  # thinking ahead is a bonus: its failure must not cost the move
            self._say(f"PLAY {match.match_id}: the agent cannot think ahead: {type(exc).__name__}: {exc}")

    # --- STOP, ABORT, PREVIEW ------------------------------------------------------------------------
    def _stop(self, match: PlayerMatch, message: Stop) -> Reply:
        got_lock = match.lock.acquire(timeout=1.0)
        try:
            if match.game_ready.is_set() and match.failure is None:
                problem = self._catch_up(match, message.moves)
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
        _stop_pondering(match)
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
        _stop_pondering(match)
        self._say(f"match {match.match_id} dropped: no message for {match.idle_timeout:g} s")

    def _say(self, text: str) -> None:
        if self.log is not None:
            try:
                self.log(text)
            except Exception:  # a broken log must not break the player
                traceback.print_exc()


def _stop_pondering(match: PlayerMatch) -> None:
    stop = getattr(match.agent, "stop_pondering", None)
    if stop is not None:
        with contextlib.suppress(Exception):
            stop()


def _apply(match: PlayerMatch, texts: tuple[str, ...]) -> str | None:
    game, state = match.game, match.state
    assert game is not None and state is not None
    if len(texts) != len(game.roles):
        return f"a joint move has {len(game.roles)} moves (one per role: {' '.join(game.roles)}), not {len(texts)}"
    try:
        joint = [game.parse_move(t) for t in texts]
        match.state = game.next_state(state, joint)
    except GGPError as exc:
        return f"cannot apply the joint move ({' '.join(texts)}): {exc}"
    match.history.append(tuple(str(m) for m in joint))
    return None


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


__all__ = ["PlayerConfig", "PlayerMatch", "PlayerService", "serve"]
