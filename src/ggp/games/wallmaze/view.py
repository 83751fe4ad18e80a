"""How the play page shows the wall maze: both targets outlined, moves as directions, taken by keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...core.family import View, cell_box, direction
from ...core.game import Game, Move, State


class WallMazeView(View):
    """Arrow keys step, full stop waits; a bump of the two markers is told in words."""

    controls = "directions"
    legend = (
        "W = white, racing to the dashed square on the right; B = black, racing left. Targets are outlined in "
        "orange. Keys: arrows move, <kbd>.</kbd> waits."
    )
    levels: ClassVar[Mapping[str, tuple[str, float]]] = {
        "easy": ("random", 0.5),
        "medium": ("mcts", 1.0),
        "hard": ("wallmaze", 2.0),
    }

    def decorate(self, game: Game, state: State, svg: str) -> str:
        """Both targets outlined on top, so that a marker standing on one does not hide it."""
        start = game.state_to_dict(game.initial_state())
        extra = ""
        for role, other in zip(game.roles, reversed(game.roles), strict=True):
            where = start.get(other)
            box = cell_box(svg, *where) if isinstance(where, list) else None
            if box is not None:
                bx, by, w, h = box
                extra += (
                    f'<rect x="{bx + 1:.1f}" y="{by + 1:.1f}" width="{w - 2:.1f}" height="{h - 2:.1f}" fill="none" '
                    f'stroke="#d97706" stroke-width="2" stroke-dasharray="3 2" class="target target-{role}" '
                    f'pointer-events="none"><title>{role}\'s target</title></rect>'
                )
        return svg.replace("</svg>", extra + "</svg>") if extra else svg

    def annotate(self, game: Game, state: State, role: str, moves: Sequence[Move]) -> list[dict[str, Any]]:
        out = super().annotate(game, state, role, moves)
        for info, move in zip(out, moves, strict=True):
            nums = _step(move.text)
            if nums is not None:
                dx, dy = nums[2] - nums[0], nums[3] - nums[1]
                info.update(kind="step", dir=direction(dx, dy), **{"from": nums[:2], "to": nums[2:]})
            elif move.text == "noop":
                info.update(kind="noop", dir="stay")
        return out

    def readable(self, game: Game, move: str) -> str:
        """A step as its direction (``east``), ``noop`` as ``wait``.

        >>> VIEW.readable(None, "(move 2 5 3 5)"), VIEW.readable(None, "noop")  # type: ignore[arg-type]
        ('east', 'wait')
        """
        nums = _step(move)
        if nums is not None:
            return direction(nums[2] - nums[0], nums[3] - nums[1]) or move.strip()
        return "wait" if move.strip() == "noop" else move.strip()

    def explain(self, game: Game, before: State, joint: Mapping[str, str], after: State) -> list[str]:
        """Both stepped onto the same cell, so neither moved."""
        targets: dict[tuple[int, ...], list[str]] = {}
        for role, text in joint.items():
            nums = _step(text)
            if nums is not None:
                targets.setdefault(tuple(nums[2:]), []).append(role)
        doc_before, doc_after = game.state_to_dict(before), game.state_to_dict(after)
        out = []
        for cell, roles in targets.items():
            if len(roles) > 1 and all(doc_before.get(r) == doc_after.get(r) for r in roles):
                out.append(f"{' and '.join(roles)} both stepped onto ({cell[0]}, {cell[1]}), so neither moved")
        return out


def _step(text: str) -> list[int] | None:
    """The four numbers of ``(move x1 y1 x2 y2)``, or None."""
    words = text.strip().strip("()").split()
    if words[:1] == ["move"] and len(words) == 5 and all(w.isdigit() for w in words[1:]):
        return [int(w) for w in words[1:]]
    return None


VIEW = WallMazeView()
