"""``ggp play GAME [--ROLE human|SPEC ...] [--seed S]``: play a game in the terminal (:mod:`ggp.cli.terminal`)."""

from __future__ import annotations

import argparse
import random

from ..agents import Agent, describe_agents, make_agent
from ..core.game import Game
from .argtypes import game_ref, player_spec, seed
from .common import HUMAN, SEED_HELP, UsageError
from .loading import load_game
from .terminal import Quit, play


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a game in the terminal",
        description="Play GAME in the terminal, people against agents or each other.",
        usage="ggp play GAME [--ROLE human|AGENT_SPEC ...] [--seed S]",
        epilog=(
            "Each role of GAME is an option: --white/--black (amazons, wallmaze), "
            "--bomberman/--bomberwoman (bomberman, bomberman2p). A role is played by `human` "
            "or an agent spec, NAME[:key=value,...]; known agents: "
            f"{describe_agents()}. By default the first role is human and the others random. "
            "--seed S seeds the agents. `ggp play GAME -h` lists GAME's options."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_play)


def role_parser(game: Game) -> argparse.ArgumentParser:
    """The options of ``ggp play GAME``: one per role, and the seed."""
    parser = argparse.ArgumentParser(
        prog=f"ggp play {game.name}",
        description=f"Play {game.name}: {game.description}",
        epilog=f"A role is played by `human` or an agent spec; known agents: {describe_agents()}.",
        allow_abbrev=False,
    )
    for i, role in enumerate(game.roles):
        default = HUMAN if i == 0 else "random"
        parser.add_argument(
            f"--{role}",
            dest=f"role_{i}",
            type=player_spec,
            default=default,
            metavar="PLAYER",
            help=f"who plays {role}: human or an agent spec such as random:seed=3 (default {default})",
        )
    parser.add_argument("--seed", type=seed, default=None, metavar="S", help=SEED_HELP)
    return parser


def cmd_play(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    if game.hidden_information:
        # the terminal shows every player the state, and seats chance
        raise UsageError(
            f"{game.name} is a GDL-II game (hidden information or chance): play it in the web app (ggp web "
            "--sheets DIR), where each seat sees only its own view, or with ggp host and ggp serve"
        )
    options = role_parser(game).parse_args(args.options)
    players: dict[str, Agent | None] = {}
    for i, role in enumerate(game.roles):
        spec = str(getattr(options, f"role_{i}")).strip()
        if spec.lower() == HUMAN:
            players[role] = None
            continue
        defaults = {} if options.seed is None else {"seed": options.seed + i}
        try:
            players[role] = make_agent(spec, **defaults)
        except ValueError as exc:
            raise UsageError(f"--{role} {spec}: {exc} (or human)") from None
    try:
        return play(game, players, random.Random(options.seed))
    except EOFError:
        print("\nend of input: game abandoned")
        return 0
    except UnicodeDecodeError:
        raise UsageError("the input is not UTF-8 text: type moves such as (move 2 5 3 5), or help") from None
    except Quit:
        print("game abandoned")
        return 0
