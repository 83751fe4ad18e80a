"""How the play page shows Bomberman: a bomb's countdown under a player, moves as directions, taken by keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...core.family import DIRECTIONS, View, cell_box
from ...core.game import Game, Move, State
from .rules import Bomberman, cell, xy


class BombermanView(View):
    """Arrow keys walk, space drops a bomb, full stop stays."""

    controls = "directions"
    legend = (
        "A = bomberman, B = bomberwoman; black discs are bombs with their countdown (a bomb under a player shows it "
        "in the cell's corner); orange cells are on fire. Keys: arrows move, space drops a bomb, <kbd>.</kbd> stays."
    )
    levels: ClassVar[Mapping[str, tuple[str, float]]] = {
        "easy": ("random", 0.5),
        "medium": ("mcts", 1.0),
        "hard": ("bomberman", 1.0),
    }
    buttons: ClassVar[Mapping[str, str]] = {"bomb": "drop bomb (space)"}

    def decorate(self, game: Game, state: State, svg: str) -> str:
        """A bomb under a player gets a badge with its countdown in the cell's corner (the player's disc hides
        the bomb's own); the cells a bomb about to go off (countdown 1 or 0) will burn are outlined in orange,
        so that nobody walks into its fire unwarned."""
        doc = game.state_to_dict(state)
        players = [tuple(doc[r]) for r in game.roles if isinstance(doc.get(r), list)]
        extra = ""
        for x, y in sorted({c for bx, by, timer in doc.get("bombs", []) if timer <= 1 for c in blast(game, bx, by)}):
            box = cell_box(svg, x, y)
            if box is not None:
                bx, by, w, h = box
                extra += (
                    f'<rect x="{bx + 2:.1f}" y="{by + 2:.1f}" width="{w - 4:.1f}" height="{h - 4:.1f}" fill="#ff8a3d" '
                    f'fill-opacity="0.25" stroke="#e8590c" stroke-width="2" stroke-dasharray="5 3" class="blast" '
                    f'pointer-events="none"><title>fire soon</title></rect>'
                )
        for x, y, timer in doc.get("bombs", []):
            box = cell_box(svg, x, y)
            if (x, y) in players and box is not None:
                bx, by, w, _ = box
                r = w / 4.2
                cx, cy = bx + w - r, by + r
                extra += (
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="#111" stroke="#fff" stroke-width="1"/>'
                    f'<text x="{cx:.1f}" y="{cy + r / 2:.1f}" font-size="{1.4 * r:.0f}" fill="#fff" '
                    f'text-anchor="middle" class="bomb-timer bomb-under">{int(timer)}</text>'
                )
        return svg.replace("</svg>", extra + "</svg>") if extra else svg

    def annotate(self, game: Game, state: State, role: str, moves: Sequence[Move]) -> list[dict[str, Any]]:
        out = super().annotate(game, state, role, moves)
        where = list(game.state_to_dict(state)[role])
        for info, move in zip(out, moves, strict=True):
            words = move.text.strip("()").split()
            if move.text == "dropBomb":
                info.update(kind="bomb", to=where)
            elif move.text == "noop":
                info.update(kind="noop")
            elif words[:1] == ["move"] and len(words) == 2:
                if words[1] == "nowhere":
                    info.update(kind="step", dir="stay", to=where, **{"from": where})
                elif words[1] in DIRECTIONS:
                    dx, dy = DIRECTIONS[words[1]]
                    info.update(kind="step", dir=words[1], to=[where[0] + dx, where[1] + dy], **{"from": where})
        return out

    def readable(self, game: Game, move: str) -> str:
        """``dropBomb`` is ``bomb``, ``(move nowhere)`` is ``stay``, ``(move north)`` is ``north``.

        >>> VIEW.readable(None, "dropBomb"), VIEW.readable(None, "(move nowhere)")  # type: ignore[arg-type]
        ('bomb', 'stay')
        """
        text = move.strip()
        words = text.strip("()").split()
        if text == "dropBomb":
            return "bomb"
        if words[:1] == ["move"] and len(words) == 2:
            return "stay" if words[1] == "nowhere" else words[1]
        return "wait" if text == "noop" else text


def blast(game: Game, x: int, y: int) -> list[tuple[int, int]]:
    """The cells a bomb at (x, y) will burn, by ``game``'s fire (the seed's: its cell and open north and east
    neighbours; bomberman2p's: its row and column)."""
    if not isinstance(game, Bomberman):
        return []
    mask = int(game.fire_table[cell(x, y)])
    return [xy(c) for c in range(64) if (mask >> c) & 1]


VIEW = BombermanView()
