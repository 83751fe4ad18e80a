"""``ggp match GAME [--ROLE SPEC ...] [--games N] [--swap] ...``: a series of matches under a referee, summarised.

A mistake raises :class:`~ggp.cli.common.UsageError`, which ``ggp`` reports
with exit code 2.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from ..agents import describe_agents
from ..core.game import Game
from ..match.calls import MAX_CLOCK, MAX_GRACE
from ..match.plugins import load_agent_modules
from ..registry import load
from .argtypes import MAX_GAMES, MAX_SEED, agent_spec, game_count, game_ref, grace, output_folder, positive_float, seed
from .common import console, progress_bar

_AT_MOST = f", at most {MAX_CLOCK:g}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "match",
        help="play a series of matches between agents and summarise them",
        description="Play N matches of GAME between agents under a referee (clocks enforced) and summarise them.",
        usage="ggp match GAME [--ROLE SPEC ...] [--games N] [--swap] [--seed S] [--playclock T] [--startclock T] [--out DIR]",
        epilog=(
            "Each role of GAME is an option (--white/--black, --bomberman/--bomberwoman) taking an agent spec; "
            "`ggp match GAME -h` lists GAME's options."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_match)


def match_parser(game: Game) -> argparse.ArgumentParser:
    """The options of ``ggp match GAME``: one per role, then the series options."""
    parser = argparse.ArgumentParser(
        prog=f"ggp match {game.name}",
        description=f"Play a series of {game.name} matches between agents and summarise the results.",
        epilog=f"A player is an agent spec, NAME[:key=value,...]; known agents: {describe_agents()}.",
        allow_abbrev=False,
    )
    for i, role in enumerate(game.players):  # chance (GDL-II's random) takes no seat
        parser.add_argument(
            f"--{role}",
            dest=f"role_{i}",
            type=agent_spec,
            default="random",
            metavar="SPEC",
            help=f"who plays {role} (default random)",
        )
    parser.add_argument(
        "--games",
        "-n",
        type=game_count,
        default=10,
        metavar="N",
        help=f"how many games (default 10, at most {MAX_GAMES:,})",
    )
    parser.add_argument("--swap", action="store_true", help="players change seats every game")
    parser.add_argument("--seed", type=seed, default=None, metavar="S", help=f"seed, 0 to {MAX_SEED} (default: random)")
    parser.add_argument(
        "--playclock", type=positive_float, default=1.0, metavar="T", help=f"seconds per move (default 1{_AT_MOST})"
    )
    parser.add_argument(
        "--startclock", type=positive_float, default=5.0, metavar="T", help=f"seconds to prepare (default 5{_AT_MOST})"
    )
    parser.add_argument(
        "--grace",
        type=grace,
        default=0.25,
        metavar="T",
        help=f"slack past a clock (default 0.25, at most {MAX_GRACE:g})",
    )
    parser.add_argument(
        "--out", type=output_folder, metavar="DIR", default=None, help="write each match record (JSON) to DIR"
    )
    _add_agent_module(parser)
    return parser


def _add_agent_module(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (a module name or .py file) that registers more agents; repeatable",
    )


def _preload_agent_modules(options: Sequence[str]) -> None:
    """Import the ``--agent-module`` modules among ``options`` first, so that the specs they name parse."""
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _add_agent_module(early)
    known, _ = early.parse_known_args(list(options))
    load_agent_modules(known.agent_module)


def cmd_match(args: argparse.Namespace) -> int:
    """``ggp match GAME [--ROLE SPEC ...] [--games N] [--swap] ...``."""
    from ..match.series import SeriesResult, run_series, summarize
    from ..match.stats import summary_table

    game = load(args.game)
    options = args.options
    _preload_agent_modules(options)
    opts = match_parser(game).parse_args(list(options))
    players = [str(getattr(opts, f"role_{i}")) for i in range(len(game.players))]
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
    out = console()
    seats = "players swap seats every game" if opts.swap else "fixed seats"
    out.print(
        f"{game.name}: {opts.games} game(s), {seats}, play clock {opts.playclock:g} s, "
        f"start clock {opts.startclock:g} s, seed {seed}",
        soft_wrap=True,
    )
    for role, spec in zip(game.players, players, strict=True):
        out.print(f"  --{role} {spec}", soft_wrap=True)
    faults = 0
    with progress_bar(out) as progress:
        task = progress.add_task("games", total=opts.games)

        def on_game(result: SeriesResult) -> None:
            nonlocal faults
            record = result.record
            parts = [
                f"{role} {spec} {goal}"
                for role, spec, goal in zip(record.roles, record.agents, record.goals, strict=True)
            ]
            found = list(record.all_faults())
            faults += len(found)
            tail = f", {len(found)} fault(s)" if found else ""
            progress.console.print(f"game {result.index + 1}: {', '.join(parts)} ({record.steps} steps{tail})")
            for fault in found[:3]:
                progress.console.print(f"    {fault.describe()}", soft_wrap=True)
            if len(found) > 3:
                progress.console.print(f"    ... and {len(found) - 3} more")
            progress.advance(task)

        results = run_series(
            game,
            players,
            games=opts.games,
            swap=opts.swap,
            seed=seed,
            start_clock=opts.startclock,
            play_clock=opts.playclock,
            grace=opts.grace,
            out=opts.out,
            on_game=on_game,
        )
    out.print()
    out.print("results (a win is a strictly higher goal than the opponent's; 95% confidence intervals):")
    for line in summary_table(summarize(players, results)):
        out.print("  " + line, soft_wrap=True)
    if faults:
        out.print(f"{faults} agent fault(s): a random legal move was played for each (see the records)")
    if opts.out is not None:
        out.print(f"{len(results)} match record(s) written to {opts.out}", soft_wrap=True)
    return 0
