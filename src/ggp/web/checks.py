"""The checks a request about a live match must pass: the match still live, a role of it, a person's seat
and its token, a legal move for the step in progress; each refuses with a :class:`MoveRejected` saying why."""

from __future__ import annotations

from typing import Any

from ..core.errors import GGPError, IllegalMoveError, MoveSyntaxError
from ..core.game import Game, Move, State, illegal_move_error
from .live_match import LiveMatch, MoveRejected
from .settings import token_matches


def owns(match: LiveMatch, role: str, token: str | None) -> bool:
    """Whether ``token`` is the secret of ``role``'s seat in ``match``."""
    digest = match._seats.get(role) if isinstance(role, str) else None
    return digest is not None and token_matches(token, digest)


def check_live(match: LiveMatch) -> None:
    """Refuse a match that left memory (it was deleted, or unloaded while the request was on its way)."""
    if match.closed == "deleted":
        raise MoveRejected(404, f"the match {match.id} was deleted")
    if match.closed is not None:
        raise MoveRejected(409, "the match was unloaded from memory while the request was on its way; send it again")


def check_role(match: LiveMatch, role: Any, echo_chars: int) -> None:
    """Refuse a closed match or a ``role`` it does not have (shown cut to ``echo_chars``)."""
    check_live(match)
    if not isinstance(role, str) or role not in match.roles:
        shown = clip(role if isinstance(role, str) else repr(role), echo_chars)
        raise MoveRejected(400, f"{match.game.name} has no role {shown!r}; its roles are {', '.join(match.roles)}")


def check_human(match: LiveMatch, role: str) -> None:
    """Refuse a role an agent plays: only people's seats are asked for moves, resignations and seats."""
    if match.is_chance(role):
        raise MoveRejected(400, f"{role} is chance: the referee plays it, uniformly at random; it takes no seat")
    if not match.is_human(role):
        raise MoveRejected(400, f"{role} is played by the agent {match.players[match.roles.index(role)]!r}")


def check_owner(match: LiveMatch, role: str, token: str | None, doing: str) -> None:
    """Refuse a request without the token of ``role``'s seat; ``doing`` says what it wanted to do."""
    if owns(match, role, token):
        return
    if match.seat_taken(role):
        raise MoveRejected(403, f"you do not hold {role}'s seat: send its token to {doing} (you can watch)")
    raise MoveRejected(403, f"{role}'s seat is open: take it first, then {doing} with its token")


def read_move(match: LiveMatch, role: str, text: Any, step: int, echo_chars: int) -> Move:
    """``role``'s move in ``text`` for step ``step`` if it is legal now; :class:`MoveRejected` otherwise.

    400 for a ``step`` that is not a whole number or a move that is not legal (naming the legal moves); 409 when
    ``step`` is not the current step or the role has moved in it. Texts echoed back are cut to ``echo_chars``.
    """
    if isinstance(step, bool) or not isinstance(step, int):
        shown = clip(repr(step), echo_chars)
        raise MoveRejected(
            400, f"step must be the whole number of the step the move is for (now {match.step}), not {shown}"
        )
    if step != match.step:
        raise MoveRejected(409, f"that move was meant for step {step}, but the match is at step {match.step}")
    if role in match.pending:
        raise MoveRejected(409, f"{role} has already moved in step {match.step}; waiting for the other roles")
    game = match.game
    if not isinstance(text, str) or not text.strip():
        example = "a move is KIF text such as (move 2 5 3 5)"
        if isinstance(text, str):
            err = illegal_move_error(game, match.state, role, text, example)
        else:
            shown = clip(repr(text), echo_chars)
            err = illegal_move_error(game, match.state, role, shown, f"a {type(text).__name__}, not text; {example}")
        raise MoveRejected(400, str(err), err.legal)
    move = _parse(game, match.state, role, text)
    try:
        if move is None:
            raise illegal_move_error(game, match.state, role, text, "not a move of this game")
        return game.check_move(match.state, role, move)  # the move's one check; the referee's step trusts it
    except IllegalMoveError as exc:
        shown_text = clip(text.strip(), echo_chars)
        why = "not a move of this game" if move is None else ""
        err = illegal_move_error(game, match.state, role, shown_text, why)
        raise MoveRejected(400, str(err), err.legal) from exc


def clip(text: str, limit: int) -> str:
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
