"""Draw the initial position of every built-in game to docs/img/GAME.svg (for the README)."""

from __future__ import annotations

from pathlib import Path

import ggp

OUT = Path(__file__).resolve().parent / "img"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name in ggp.game_names():
        game = ggp.load(name)
        path = OUT / f"{name}.svg"
        path.write_text(game.svg(game.initial_state()) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
