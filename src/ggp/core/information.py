"""What a role knows of a match with hidden information: its own moves and its percepts, step by step.

In a GDL-II game (:attr:`~ggp.Game.hidden_information`) a role does not see the state. After each joint
move it learns its own move (it made it) and its percepts (:meth:`~ggp.Game.percepts`); everything it may
decide on is that sequence, an :class:`Information`. Chance (:attr:`~ggp.Game.chance_role`) moves uniformly
among its legal moves: :func:`chance_move`.

>>> import random
>>> from ggp.gdl.examples import load_example
>>> game = load_example("montyhall")
>>> s = game.initial_state()
>>> seen = Information("candidate")
>>> joint = [game.parse_move("(choose 1)"), game.parse_move("(hide_car 2)")]
>>> s = game.next_state(s, joint)
>>> seen = seen.after(game, s, joint)
>>> joint = [game.parse_move("noop"), chance_move(game, s, random.Random(0))]
>>> s = game.next_state(s, joint)
>>> seen = seen.after(game, s, joint)
>>> seen.text()
'candidate: (choose 1) | noop / (open_door 3)'
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .game import Game, Move, State


@dataclass(frozen=True, slots=True)
class Seen:
    """One step as a role lived it: the move it made and what it perceived of the transition."""

    move: Move
    percepts: tuple[str, ...] = ()

    def text(self) -> str:
        return f"{self.move} / {' '.join(self.percepts)}" if self.percepts else str(self.move)


@dataclass(frozen=True, slots=True)
class Information:
    """Everything ``role`` knows at a point of a match: each step's own move and percepts, in order.

    Two histories that give a role the same information are the same to it (one information set); its
    :meth:`text` is the information set's name (OpenSpiel's information state string).
    """

    role: str
    steps: tuple[Seen, ...] = ()

    def after(self, game: Game, state: State, joint: Sequence[Move]) -> Information:
        """The information once ``joint`` (role order) was played and led to ``state``."""
        move = joint[game.role_index(self.role)]
        return Information(self.role, (*self.steps, Seen(move, game.percepts(state, self.role))))

    def text(self) -> str:
        return f"{self.role}: " + " | ".join(step.text() for step in self.steps)


def chance_move(game: Game, state: State, rng: random.Random) -> Move:
    """Chance's move in ``state``: one of its legal moves, uniformly at random."""
    if game.chance_role is None:
        raise ValueError(f"{game.name} has no chance role")
    return rng.choice(list(game.legal_moves(state, game.chance_role)))


def information_of(game: Game, role: str, states: Sequence[State], joints: Sequence[Sequence[Move]]) -> Information:
    """The information ``role`` holds after a history: ``states[i + 1]`` followed ``joints[i]`` from
    ``states[0]``, the initial state."""
    seen = Information(role)
    for joint, after in zip(joints, states[1:], strict=True):
        seen = seen.after(game, after, joint)
    return seen
