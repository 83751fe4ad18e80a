"""A conformance check for any :class:`~ggp.Game`, in the spirit of pgx's ``api_test``.

:func:`check_game` walks a game at random and checks, at every state it meets,
the promises the Game API makes: states are values (hashable, stored and read
back equal, never changed by a step), every legal move reads back from its
text and its term, is checked legal by :meth:`~ggp.Game.check_move` and stands
for one of the role's legal actions, the checked and the trusting steps and the
action step agree, bad input is refused with the documented errors, and a
terminal state has goals in 0..100 and no next state. A new game (a built-in
family, a rule sheet, a game of your own) passes it before anything else.

>>> import ggp
>>> from ggp.testing import check_game
>>> check_game(ggp.load("wallmaze"), walks=1, max_steps=20) > 0
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .core.errors import GameOverError, IllegalMoveError
from .core.game import Game, Move, State

__all__ = ["ConformanceError", "check_game"]


class ConformanceError(AssertionError):
    """A promise of the Game API that a game does not keep; the message names the game, the state and what."""


def check_game(game: Game, *, walks: int = 2, max_steps: int = 200, moves_per_role: int = 16, seed: int = 0) -> int:
    """Check ``game`` along ``walks`` random walks of at most ``max_steps`` steps; returns the states checked.

    At each state at most ``moves_per_role`` of each role's legal moves are read back (a sample, chosen at
    random, when there are more). Raises :class:`ConformanceError` at the first promise broken.
    """
    rng = random.Random(seed)
    _check_roles(game)
    first = game.initial_state()
    _expect(
        first == game.initial_state() and hash(first) == hash(game.initial_state()),
        game,
        first,
        "the initial state is not a value: two calls give unequal states",
    )
    checked = 0
    for _ in range(walks):
        state = first
        for _ in range(max_steps + 1):
            checked += 1
            _check_state(game, state)
            if game.is_terminal(state):
                _check_terminal(game, state)
                break
            joint = [_check_role_moves(game, state, role, rng, moves_per_role) for role in game.roles]
            state = _check_step(game, state, joint)
    return checked


def _expect(ok: object, game: Game, state: State | None, what: str) -> None:
    if not ok:
        where = f" in state {game.state_to_json(state)[:300]}" if state is not None else ""
        raise ConformanceError(f"{game.name}: {what}{where}")


def _check_roles(game: Game) -> None:
    roles = game.roles
    _expect(isinstance(roles, tuple) and roles, game, None, f"roles must be a non-empty tuple, not {roles!r}")
    _expect(all(isinstance(r, str) and r for r in roles), game, None, f"roles must be names, not {roles!r}")
    _expect(len(set(roles)) == len(roles), game, None, f"roles must differ: {roles!r}")


def _check_state(game: Game, state: State) -> None:
    _expect(state.game is game or state.game.name == game.name, game, state, "a state names another game")
    text = game.state_to_json(state)
    back = game.state_from_json(text)
    _expect(back == state and hash(back) == hash(state), game, state, "a state read back from its JSON differs")
    facts = game.state_facts(state)
    _expect(
        isinstance(facts, list) and all(isinstance(f, str) for f in facts),
        game,
        state,
        "state_facts is not a list of texts",
    )
    _expect(isinstance(game.is_terminal(state), bool), game, state, "is_terminal does not answer True or False")


def _check_terminal(game: Game, state: State) -> None:
    goals = game.goals(state)
    _expect(len(goals) == len(game.roles), game, state, f"goals {goals!r} do not give one value per role")
    _expect(all(isinstance(g, int) and 0 <= g <= 100 for g in goals), game, state, f"goals {goals!r} are not in 0..100")
    try:
        game.next_state(state, [Move("noop")] * len(game.roles))
    except GameOverError:
        return
    raise ConformanceError(f"{game.name}: next_state went on from a terminal state")


def _check_role_moves(game: Game, state: State, role: str, rng: random.Random, most: int) -> Move:
    """Check ``role``'s legal moves in ``state``; returns one of them, chosen at random."""
    moves = game.legal_moves(state, role)
    _expect(len(moves) > 0 and all(isinstance(m, Move) for m in moves), game, state, f"{role} has no legal move")
    _expect(
        tuple(game.legal_moves(state, role)) == tuple(moves),
        game,
        state,
        f"{role}'s legal moves change when asked again",
    )
    actions = sorted(int(a) for a in game.legal_actions(state, role))
    _expect(
        len(actions) == len(moves), game, state, f"{role} has {len(moves)} legal moves but {len(actions)} legal actions"
    )
    _expect(
        sorted(game.move_to_action(state, role, m) for m in moves) == actions,
        game,
        state,
        f"{role}'s legal moves and actions differ",
    )
    for m in moves if len(moves) <= most else rng.sample(list(moves), most):
        _expect(game.parse_move(str(m)) == m, game, state, f"{m} does not read back from its text")
        _expect(game.move_from_term(m.term) == m, game, state, f"{m} does not read back from its term")
        _expect(
            game.check_move(state, role, str(m)) == m, game, state, f"{m} is legal but check_move did not return it"
        )
        _expect(
            game.action_to_move(state, role, game.move_to_action(state, role, m)) == m,
            game,
            state,
            f"{m} does not come back from its action",
        )
    try:
        game.check_move(state, role, "(this is no move of any game 1 2 3)")
    except IllegalMoveError:
        pass
    else:
        raise ConformanceError(f"{game.name}: check_move took a move that is no move of the game")
    return moves[rng.randrange(len(moves))]


def _check_step(game: Game, state: State, joint: Sequence[Move]) -> State:
    """Step by ``joint`` three ways (checked, trusting, by actions); returns the next state."""
    before = game.state_to_json(state)
    checked = game.next_state(state, list(joint))
    trusted = game.play(state, list(joint))
    actions = [game.move_to_action(state, role, m) for role, m in zip(game.roles, joint, strict=True)]
    by_actions = game.apply_actions(state, actions)
    _expect(
        checked == trusted == by_actions,
        game,
        state,
        f"next_state, play and apply_actions disagree on {[str(m) for m in joint]}",
    )
    _expect(game.state_to_json(state) == before, game, state, "a step changed the state it started from")
    try:
        game.next_state(state, list(joint)[:-1])
    except IllegalMoveError:
        pass
    else:
        raise ConformanceError(f"{game.name}: next_state took a joint move with a move missing")
    return checked
