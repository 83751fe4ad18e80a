"""A player's match moved on by the game manager's joint moves, switching to the rule sheet's reasoner when the
native engine refuses one.

A sheet recognised as a built-in game is played on its native engine. Should that engine ever refuse a joint
move that the game manager sent (the sheet behaved like the built-in game but differs later on), the match is
replayed on the sheet's own GDL reasoner and goes on there, with a new agent.
"""

from __future__ import annotations

from collections.abc import Callable

from ..agents import Agent
from ..core.game import Game
from ..core.kif import Term, term_text
from ..gdl.sheet import bounded
from ..match.calls import Caller
from .player_match import PlayerMatch, apply_joint
from .recognize import gdl_game
from .warmup import Log

#: Starts an agent for a match on a game, given its start clock: the agent and its spec (None, None: no agent).
StartAgent = Callable[[PlayerMatch, Game, float], tuple[Agent | None, str | None]]


def catch_up(match: PlayerMatch, moves: tuple[Term, ...] | None, start_agent: StartAgent, say: Log) -> str | None:
    """Apply the joint moves kept while the rules compiled, then ``moves``; returns what is wrong, if anything."""
    while match.pending:
        problem = advance(match, match.pending.pop(0), start_agent, say)
        if problem is not None:
            return problem
    return None if moves is None else advance(match, moves, start_agent, say)


def advance(match: PlayerMatch, moves: tuple[Term, ...], start_agent: StartAgent, say: Log) -> str | None:
    """Apply the game manager's joint move; returns what is wrong, if anything."""
    problem = apply_joint(match, moves)
    if problem is None:
        return None
    # The native engine refuses a joint move: if the rule sheet's own reasoner takes it, the sheet differs
    # from the built-in game after all, and the match goes on there. A joint move that the reasoner refuses
    # too is the game manager's mistake, and the match stays where it is.
    game = match.game
    arity_ok = game is not None and len(moves) == len(game.roles)
    if match.native is not None and arity_ok and switch_to_reasoner(match, moves, start_agent, say):
        return None
    return problem


def switch_to_reasoner(match: PlayerMatch, moves: tuple[Term, ...], start_agent: StartAgent, say: Log) -> bool:
    """Replay the match and then ``moves`` on the reasoner; on success go on there and return True."""
    try:
        with bounded(cancel=match.cancelled):
            game = match.gdl if match.gdl is not None else gdl_game(match.rules)
        # moves the sheet does not know are refused before its kernel is compiled (seconds, on a cold cache)
        joints = [[game.parse_move(t) for t in joint] for joint in match.history]
        joints.append([game.move_from_term(t) for t in moves])
        state = game.initial_state()
        for joint in joints:
            state = game.next_state(state, joint)
    except Exception as exc:  # GGPError mostly; any failure of the reasoner leaves the match as it was
        say(f"match {match.match_id}: the rule sheet's reasoner refuses the match too: {exc}")
        return False
    say(
        f"match {match.match_id}: the native engine refused {' '.join(map(term_text, moves))}; the rule sheet's reasoner "
        "takes it, so the match goes on there"
    )
    match.game, match.gdl, match.state, match.native = game, game, state, None
    match.history.append(tuple(str(m) for m in joints[-1]))
    match.role = next(r for r in game.roles if r.lower() == match.role.lower())
    match.how = "GDL reasoner (the native engine disagreed with the game manager)"
    match.caller = Caller(clock=match.clock)  # a new agent: the old one's overrunning call does not make it busy
    match.agent, match.agent_spec = start_agent(match, game, max(0.01, match.play_clock - match.margin))
    return True


__all__ = ["StartAgent", "advance", "catch_up", "switch_to_reasoner"]
