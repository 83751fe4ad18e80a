"""The player made for Twenty-one: it leaves a count that is 1 more than a multiple of 4 whenever it can
(21 is one, so the player who says 1 first and keeps to them wins)."""

from __future__ import annotations

from ggp.agents.base import Agent
from ggp.core.game import Move, State

from .rules import GOAL


class CountingAgent(Agent):
    name = "twentyone"

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        moves = self.game.legal_moves(state, self.role)
        count = int(self.game.state_to_dict(state)["count"])
        for move in moves:
            if move.text != "noop" and (count + int(move.text[5])) % 4 == GOAL % 4:
                return move
        return moves[0]  # no winning addition (or only noop): the smallest
