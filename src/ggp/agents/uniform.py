"""The uniformly random player: the baseline every other agent should beat."""

from __future__ import annotations

import random
from typing import Annotated

from ..core.game import Move, State
from .base import Agent
from .options import MAX_SEED, Range, check_options


class RandomAgent(Agent):
    """Plays a legal move chosen uniformly at random.

    ``seed`` (0 to 2^63 - 1) seeds the agent's own :class:`random.Random`, so two agents made
    with the same seed play the same moves in the same states; ``None`` seeds
    from the system. The generator is not reset by :meth:`start`, so an agent
    reused for several matches plays them differently.

    >>> import ggp
    >>> game = ggp.load("amazons_8x8")
    >>> agent = RandomAgent(seed=1)
    >>> agent.start(game, "black")
    >>> agent.select_move(game.initial_state())  # white moves first
    Move('noop')
    """

    name = "random"

    @check_options
    def __init__(self, seed: Annotated[int | None, Range(ge=0, le=MAX_SEED)] = None) -> None:
        super().__init__()
        self.seed = seed
        self.rng = random.Random(seed)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        moves = self.game.legal_moves(state, self.role)
        if not moves:
            raise RuntimeError(f"{self.game.name}: {self.role} has no legal move in this state")
        return moves[self.rng.randrange(len(moves))]

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed!r})"
