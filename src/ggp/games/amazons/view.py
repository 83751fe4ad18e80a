"""How the play page shows Amazons: moves as ``c1-c5`` and ``arrow e7``, taken by clicks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...core.family import View, square
from ...core.game import Game, Move, State


class AmazonsView(View):
    """Click an amazon, its destination, then the arrow's square: the move is sent with the arrow."""

    controls = "move-and-shoot"
    legend = (
        "Click one of your amazons, then its destination, then the square to shoot the arrow at: the move is sent "
        "with the arrow, so you can click the destination again (or press Esc) to take it back. Keys: arrows move "
        "the cursor, Enter picks."
    )
    # Random play is no game at all in Amazons: easy is a shallow search.
    levels: ClassVar[Mapping[str, tuple[str, float]]] = {
        "easy": ("mcts:sims=60", 0.5),
        "medium": ("amazons", 1.0),
        "hard": ("amazons", 4.0),
    }

    def turn(self, game: Game, state: State) -> str | None:
        doc = game.state_to_dict(state)
        if doc.get("phase") == "move":
            return f"{doc['to_act']} to move an amazon"
        return f"{doc['to_act']} to fire an arrow from ({', '.join(map(str, doc.get('just_moved') or []))})"

    def annotate(self, game: Game, state: State, role: str, moves: Sequence[Move]) -> list[dict[str, Any]]:
        out = super().annotate(game, state, role, moves)
        for info, move in zip(out, moves, strict=True):
            head, nums = _numbers(move.text)
            if head == "move" and len(nums) == 4:
                info.update(kind="move", **{"from": nums[:2], "to": nums[2:]})
            elif head == "fire" and len(nums) == 2:
                info.update(kind="fire", to=nums)
            elif move.text == "noop":
                info.update(kind="noop")
        return out

    def readable(self, game: Game, move: str) -> str:
        """``(move 3 1 3 5)`` is ``c1-c5``, ``(fire 5 7)`` is ``arrow e7``.

        >>> VIEW.readable(None, "(move 3 1 3 5)"), VIEW.readable(None, "(fire 5 7)")  # type: ignore[arg-type]
        ('c1-c5', 'arrow e7')
        """
        head, nums = _numbers(move)
        if head == "move" and len(nums) == 4:
            return f"{square(nums[0], nums[1])}-{square(nums[2], nums[3])}"
        if head == "fire" and len(nums) == 2:
            return f"arrow {square(nums[0], nums[1])}"
        return move.strip()

    def ply(self, moves: Sequence[str]) -> str:
        """A turn's move and arrow as one entry, ``c1-c5/e7``, as Amazons players write it down.

        >>> VIEW.ply(["c1-c5", "arrow e7"]), VIEW.ply(["arrow e7"])
        ('c1-c5/e7', 'arrow e7')
        """
        if len(moves) == 2 and not moves[0].startswith("arrow ") and moves[1].startswith("arrow "):
            return f"{moves[0]}/{moves[1].removeprefix('arrow ')}"
        return super().ply(moves)


def _numbers(text: str) -> tuple[str, list[int]]:
    words = text.strip().strip("()").split()
    return (words[0] if words else ""), [int(w) for w in words[1:] if w.isdigit()]


VIEW = AmazonsView()
