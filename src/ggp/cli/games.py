"""``ggp games``, ``ggp show GAME`` and ``ggp rules GAME``: what the games are."""

from __future__ import annotations

import argparse
import sys

from rich.text import Text

from ..registry import game_names, load
from .argtypes import game_ref
from .common import console
from .loading import load_game


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("games", help="list the built-in games", description="List the built-in games.")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("show", help="print a game's initial position", description="Print a game's initial position.")
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "rules", help="print ggp's GDL rule sheet of a game", description="Print ggp's GDL rule sheet of GAME."
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.set_defaults(func=cmd_rules)


def cmd_games(args: argparse.Namespace) -> int:
    out = console()
    names = game_names()
    width = max(len(n) for n in names)
    for name in names:
        line = Text(f"{name:<{width}}", style="bold")
        line.append(f"  {load(name).description}")
        out.print(line, soft_wrap=True)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    print(f"{game.name}: {game.description}")
    print(f"roles: {', '.join(game.roles)}")
    print(game.initial_state())
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from ..gdl import rules_text

    sys.stdout.write(rules_text(args.game))
    return 0
