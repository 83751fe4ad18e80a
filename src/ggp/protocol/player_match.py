"""What a player plays by (:class:`PlayerConfig`) and the state of the match it is in (:class:`PlayerMatch`).

:func:`apply_joint` moves a match on by one joint move of the game manager's.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass

from ..agents import Agent
from ..agents.hidden import HiddenPlayer
from ..core.errors import GGPError
from ..core.game import Game, State
from ..core.kif import Term, term_text
from ..match.calls import MAX_CLOCK, Caller, margin
from ..match.clock import Clock
from .messages import PlayerView, Start


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
        #: In a GDL-II match: the player that decides on what the role knows, and turn t's view (t >= 1) as
        #: told, at t - 1 (:func:`remember_view`).
        self.hidden: HiddenPlayer | None = None
        self.views: list[PlayerView] = []
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
        self.views_lock = threading.Lock()
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


def apply_joint(match: PlayerMatch, terms: tuple[Term, ...]) -> str | None:
    """Apply the game manager's joint move (the terms its message was read into) to the match's state and
    history; returns what is wrong, if anything. Each move is read from its term, not its text again."""
    game, state = match.game, match.state
    assert game is not None and state is not None
    if len(terms) != len(game.roles):
        return f"a joint move has {len(game.roles)} moves (one per role: {' '.join(game.roles)}), not {len(terms)}"
    try:
        joint = [game.move_from_term(t) for t in terms]
        match.state = game.next_state(state, joint)
    except GGPError as exc:
        return f"cannot apply the joint move ({' '.join(term_text(t) for t in terms)}): {exc}"
    match.history.append(tuple(str(m) for m in joint))
    return None


def remember_view(match: PlayerMatch, view: PlayerView) -> str | None:
    """Keep a GDL-II PLAY's view of its turn (turn 0 tells nothing); returns what is wrong, if anything. Turns
    come in order, each once: a turn after one never told, or a turn told again differently, is refused (the
    player would decide on a history that did not happen), and so the views kept are one per step played."""
    if view.turn == 0:
        return None
    with match.views_lock:
        told = len(match.views)
        if view.turn <= told:
            if match.views[view.turn - 1] != view:
                return f"turn {view.turn} was told before, with another move or other percepts"
            return None
        if view.turn > told + 1:
            return f"turn {view.turn} after turn {told}: turn {told + 1} was never told"
        match.views.append(view)
    return None


__all__ = ["PlayerConfig", "PlayerMatch", "apply_joint", "remember_view"]
