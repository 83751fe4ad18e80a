"""A player's agent: started (or its fallback), asked for each move, and left to think ahead between messages.

Whatever the agent does, the player has a legal move to send: :func:`choose` plays a random legal move when the
agent is late, fails, returns an illegal move or is still busy with an earlier call that overran.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from ..agents import Agent, make_agent
from ..core.game import Game, Move, State
from .player_match import PlayerConfig, PlayerMatch
from .warmup import Log


def start_agent(
    match: PlayerMatch, game: Game, start_clock: float, config: PlayerConfig, say: Log
) -> tuple[Agent | None, str | None]:
    """The agent of ``config.spec`` started on ``game`` (else of ``config.fallback``) and its spec; None if neither
    can play it."""
    play = max(0.01, match.play_clock - match.margin)
    defaults = {} if config.seed is None else {"seed": config.seed}
    for spec in (config.spec, config.fallback):
        try:
            agent = make_agent(spec, **defaults)
            agent.start(game, match.role, start_clock, play)
            return agent, spec
        except Exception as exc:
            say(f"agent {spec} cannot play {game.name}: {type(exc).__name__}: {exc}")
    return None, None


def choose(match: PlayerMatch, state: State, deadline: float, say: Log) -> tuple[Move, str]:
    """The agent's move if it gives a legal one in time, else a random legal move; and what its search said
    of it, for the log (``4,210 simulations, value 63``; empty if nothing)."""
    clock = match.clock
    # An agent still starting (compiling a new sheet's network can outlast the start clock) gets half
    # of this clock to be ready and the rest to choose: better than a random move at once.
    if not match.agent_ready.is_set():
        wait = max(0.0, (deadline - clock.now()) / 2)
        say(f"PLAY {match.match_id}: the agent is still starting; waiting up to {wait:.2f} s for it")
        clock.wait(match.agent_ready, wait)
    agent = match.agent if match.agent_ready.is_set() else None
    # Its previous search overran (a busy machine can hold a thread past its deadline): it usually ends soon
    # after, and the rest of the clock is then better spent on the agent's move than on a random one at once.
    if agent is not None and match.caller.busy(match.role):
        wait = max(0.0, (deadline - clock.now()) / 2)
        say(f"PLAY {match.match_id}: the agent's previous search overran; waiting up to {wait:.2f} s for it")
        match.caller.wait_idle(match.role, wait)
    game = match.game
    assert game is not None
    if agent is None:
        legal = game.legal_moves(state, match.role)
        move = legal[match.rng.randrange(len(legal))]
        why = "no agent (still starting, or none could play)"
    else:
        # The deadline already keeps the player's margin (the reply crossing the network) back from the play
        # clock; the agent keeps its own for returning from its search, so no third margin is taken here.
        left = max(0.0, deadline - clock.now())  # the reply is due by the deadline: no grace
        step = len(match.history) + 1
        move, _, fault, info = match.caller.ask(
            agent, game, state, match.role, clock=left, rng=match.rng, step=step, told=max(0.01, left)
        )
        if fault is None:
            return move, said_of(info)
        why = f"{fault.kind}: {fault.message}"
    match.random_moves += 1
    say(f"PLAY {match.match_id}: {why}; playing the random legal move {move}")
    return move, "random"


def said_of(info: Mapping[str, Any]) -> str:
    """A search's figures as a log says them: ``4,210 simulations, value 63`` (empty without figures).

    >>> said_of({"simulations": 4210, "value": 62.6, "seconds": 3.9})
    '4,210 simulations, value 63'
    >>> said_of({})
    ''
    """
    parts: list[str] = []
    sims = info.get("simulations")
    if isinstance(sims, int):
        parts.append(f"{sims:,} simulations")
    value = info.get("value")
    if isinstance(value, (int, float)):
        parts.append(f"value {value:.0f}")
    return ", ".join(parts)


def ponder(match: PlayerMatch, say: Log) -> None:
    """Let the agent think on until the next message, if it can (``ponder``) and is not still busy.

    Its next call (select_move, stop) ends the thinking first; so does the end of the match.
    """
    agent = match.agent
    if agent is None or not match.agent_ready.is_set() or match.caller.busy(match.role):
        return
    try:
        agent.ponder()
    except Exception as exc:  # thinking ahead is a bonus: its failure must not cost the move
        say(f"PLAY {match.match_id}: the agent cannot think ahead: {type(exc).__name__}: {exc}")


def stop_pondering(match: PlayerMatch) -> None:
    """Stop the agent's thinking ahead (``ponder``), if it does; a failure to stop is no matter."""
    if match.agent is not None:
        with contextlib.suppress(Exception):
            match.agent.stop_pondering()


__all__ = ["choose", "ponder", "said_of", "start_agent", "stop_pondering"]
