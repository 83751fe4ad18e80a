"""How pages show Twenty-one: a move reads ``+2``; the count is drawn as a bar of 21 cells."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ggp.core.family import View
from ggp.core.game import Game, State


class TwentyOneView(View):
    legend = "The bar fills with the count; pick how much to add from the legal moves."
    levels: ClassVar[Mapping[str, tuple[str, float]]] = {
        "easy": ("random", 0.2),
        "medium": ("mcts", 0.2),
        "hard": ("twentyone", 0.2),
    }

    def readable(self, game: Game, move: str) -> str:
        text = move.strip()
        return f"+{text[5]}" if text.startswith("(add ") else "wait" if text == "noop" else text

    def turn(self, game: Game, state: State) -> str | None:
        doc = game.state_to_dict(state)
        return f"{doc['to_add']} to add to {doc['count']}"


VIEW = TwentyOneView()
