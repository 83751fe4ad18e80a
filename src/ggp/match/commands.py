"""The ``ggp match``, ``ggp tournament`` and ``ggp replay`` commands (``ggp.cli`` delegates here).

Each function returns the exit code; mistakes raise :class:`CommandError` (a
:class:`~ggp.GGPError`), which ``ggp.cli.main`` reports with exit code 2.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .._argtypes import (
    MAX_GAMES,
    MAX_SEED,
    agent_spec,
    game_count,
    grace,
    output_file,
    output_folder,
    positive_float,
    seed,
)
from ..agents import describe_agents
from ..core.errors import GGPError
from ..core.game import Game
from ..core.registry import load
from .plugins import canonical_module_name, load_agent_modules
from .record import MatchRecord
from .referee import MAX_CLOCK, MAX_GRACE
from .series import SeriesResult, run_series, summarize
from .stats import summary_table
from .tournament import DEFAULT_DB, RunEvent, Settings, TournamentDB, report_lines, run_tournament

_AT_MOST = f", at most {MAX_CLOCK:g}"


class CommandError(GGPError):
    """A mistake on the command line of ``ggp match``, ``ggp tournament`` or ``ggp replay``."""


def _console() -> Console:
    return Console(highlight=False)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


#: Most matches one tournament command may schedule (a round robin of N agents has N(N-1) per game index).
MAX_SCHEDULE = 100_000


def _check_specs(specs: Sequence[tuple[str, str]]) -> None:
    """Build each agent once (as the argument type does) so that a bad spec is reported before anything runs."""
    for where, spec in specs:
        try:
            agent_spec(spec)
        except argparse.ArgumentTypeError as exc:
            raise CommandError(f"{where} {exc}") from None


# --- ggp match -----------------------------------------------------------------------------------------
def match_parser(game: Game) -> argparse.ArgumentParser:
    """The options of ``ggp match GAME``: one per role, then the series options."""
    parser = argparse.ArgumentParser(
        prog=f"ggp match {game.name}",
        description=f"Play a series of {game.name} matches between agents and summarise the results.",
        epilog=f"A player is an agent spec, NAME[:key=value,...]; known agents: {describe_agents()}.",
        allow_abbrev=False,
    )
    for i, role in enumerate(game.roles):
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


def match_command(game_name: str, options: Sequence[str]) -> int:
    """``ggp match GAME [--ROLE SPEC ...] [--games N] [--swap] ...``."""
    game = load(game_name)
    _preload_agent_modules(options)
    opts = match_parser(game).parse_args(list(options))
    players = [str(getattr(opts, f"role_{i}")) for i in range(len(game.roles))]
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
    console = _console()
    seats = "players swap seats every game" if opts.swap else "fixed seats"
    console.print(
        f"{game.name}: {opts.games} game(s), {seats}, play clock {opts.playclock:g} s, "
        f"start clock {opts.startclock:g} s, seed {seed}",
        soft_wrap=True,
    )
    for role, spec in zip(game.roles, players, strict=True):
        console.print(f"  --{role} {spec}", soft_wrap=True)
    faults = 0
    with _progress(console) as progress:
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
    console.print()
    console.print("results (a win is a strictly higher goal than the opponent's; 95% confidence intervals):")
    for line in summary_table(summarize(players, results)):
        console.print("  " + line, soft_wrap=True)
    if faults:
        console.print(f"{faults} agent fault(s): a random legal move was played for each (see the records)")
    if opts.out is not None:
        console.print(f"{len(results)} match record(s) written to {opts.out}", soft_wrap=True)
    return 0


# --- ggp tournament ------------------------------------------------------------------------------------
def tournament_command(args: argparse.Namespace) -> int:
    """``ggp tournament GAME SPEC SPEC ... [--games N] [--workers K] [--db PATH] ...``, or ``--report``."""
    db_path = Path(args.db or DEFAULT_DB)
    if args.report:
        if args.specs:
            raise CommandError("--report prints the table of an existing database; give no agent specs")
        _print_lines(report_lines(db_path))
        return 0
    try:
        output_file(str(db_path))
    except argparse.ArgumentTypeError as exc:
        raise CommandError(f"--db {exc}") from None
    exists = db_path.is_file() and db_path.stat().st_size > 0  # an empty file is a new database
    stored_settings: Settings | None = None
    stored_modules: list[str] = []
    if exists:
        with TournamentDB(db_path, create=False) as db:
            stored_settings = db.settings()
            stored_modules = db.agent_modules()
    modules = [canonical_module_name(m) for m in args.agent_module or []]
    load_agent_modules([*stored_modules, *(m for m in modules if m not in stored_modules)])

    specs = [s.strip() for s in args.specs or []]
    if stored_settings is None:
        if not args.game or len(specs) < 2:
            raise CommandError(
                f"{db_path} holds no tournament yet: give the game and at least two agent specs, "
                "e.g. `ggp tournament bomberman2p random mcts`"
            )
        game = load(args.game)
        if len(game.roles) != 2:
            raise CommandError(f"tournaments are for two-player games; {game.name} has {len(game.roles)} roles")
        settings = Settings(
            game=game.name,
            start_clock=args.startclock if args.startclock is not None else 5.0,
            play_clock=args.playclock if args.playclock is not None else 1.0,
            grace=args.grace if args.grace is not None else 0.25,
            seed=args.seed if args.seed is not None else random.SystemRandom().randrange(2**31),
        )
    else:
        settings = stored_settings
        _check_same(settings, args, db_path)
    if specs and len(specs) < 2:
        raise CommandError("a round robin needs at least two agent specs")
    if len(set(specs)) != len(specs):
        raise CommandError("an agent spec is listed twice")
    _check_specs([("agent", spec) for spec in specs])
    if specs and args.games * len(specs) * (len(specs) - 1) > MAX_SCHEDULE:
        raise CommandError(
            f"{len(specs)} agents with --games {args.games} make "
            f"{args.games * len(specs) * (len(specs) - 1):,} matches; a tournament schedules at most "
            f"{MAX_SCHEDULE:,} at a time (fewer agents or games)"
        )
    if exists:  # the matches it resumes must still be playable: a stored spec this ggp refuses stops here
        with TournamentDB(db_path, create=False) as db:
            to_run = [row for row in db.matches() if row.status in ("pending", "running")]
            stored = sorted({spec for row in to_run for spec in row.specs} - set(specs))
        _check_specs([(f"{db_path} schedules agent", spec) for spec in stored])

    with TournamentDB(db_path) as db:
        if stored_settings is None:
            db.init_settings(settings)
        db.add_agent_modules(modules)
        added = db.schedule(specs, args.games) if specs else 0
        retried = db.retry_failed() if args.retry_failed else 0
        counts = db.counts()
    console = _console()
    total = counts["done"] + counts["pending"] + counts["running"]
    console.print(
        f"{settings.game} round robin in {db_path}: {total} matches, {counts['done']} done"
        + (f", {added} newly scheduled" if added else "")
        + (f", {retried} failed re-scheduled" if retried else "")
        + (f", {counts['failed']} failed" if counts["failed"] else ""),
        soft_wrap=True,
    )
    workers = args.workers
    try:
        with _progress(console) as progress:
            task = progress.add_task("matches", total=total, completed=counts["done"])

            def on_event(event: RunEvent) -> None:
                if event.kind == "done":
                    progress.advance(task)
                else:
                    progress.console.print(event.text, soft_wrap=True)

            summary = run_tournament(
                db_path, workers=workers, limit=args.limit, stall_timeout=args.stall_timeout, on_event=on_event
            )
    except KeyboardInterrupt:
        with TournamentDB(db_path, create=False) as db:
            counts = db.counts()
        console.print(
            f"interrupted: {counts['done']} of {total} matches done; run `ggp tournament --db {db_path}` to resume",
            soft_wrap=True,
        )
        raise
    console.print(f"this run finished {summary.finished} match(es)", soft_wrap=True)
    console.print()
    _print_lines(report_lines(db_path))
    left = summary.counts.get("pending", 0)
    if left:
        console.print(f"{left} match(es) still to run: `ggp tournament --db {db_path}` resumes", soft_wrap=True)
    return 0


def _check_same(settings: Settings, args: argparse.Namespace, db_path: Path) -> None:
    """A command resuming a database must not ask for a different game or clocks."""
    if args.game and load(args.game).name != settings.game:
        raise CommandError(f"{db_path} holds a {settings.game} tournament, not {args.game}; use another --db")
    given = {
        "--playclock": (args.playclock, settings.play_clock),
        "--startclock": (args.startclock, settings.start_clock),
        "--grace": (args.grace, settings.grace),
        "--seed": (args.seed, settings.seed),
    }
    for option, (value, stored) in given.items():
        if value is not None and value != stored:
            raise CommandError(f"{db_path} was created with {option} {stored:g}; a tournament keeps its settings")


def _print_lines(lines: Sequence[str]) -> None:
    console = _console()
    for line in lines:
        console.print(line, soft_wrap=True)


# --- ggp replay ----------------------------------------------------------------------------------------
def replay_command(path: str, *, step: bool = False, final: bool = False) -> int:
    """``ggp replay FILE [--step | --final]``: show a recorded match move by move."""
    record = MatchRecord.load(path)
    game = record.load_game()
    states = record.verify(game, source=path)
    print(f"{record.game}: {record.steps} moves, seed {record.seed}, {record.started} .. {record.finished}")
    clocks = f"start clock {_secs(record.start_clock)}, play clock {_secs(record.play_clock)}"
    print("players: " + ", ".join(f"{r} {a}" for r, a in zip(record.roles, record.agents, strict=True)) + f"; {clocks}")
    for fault in record.faults:
        if fault.phase == "start":
            print(f"  fault: {fault.describe()}")
    if not final:
        print()
        print(states[0])
        for move, state in zip(record.moves, states[1:], strict=True):
            if step:
                try:
                    answer = input("[Enter: next move, q: quit] ")
                except EOFError:
                    print()
                    return 0
                if answer.strip().lower() in ("q", "quit"):
                    return 0
            parts = []
            for role, text, secs in zip(record.roles, move.joint, move.times, strict=True):
                parts.append(f"{role} {text}" + (f" ({secs:.3f} s)" if secs is not None else ""))
            print()
            print(f"move {move.step}: " + ", ".join(parts))
            for fault in move.faults:
                print(f"  fault: {fault.describe()}")
            print(state)
    else:
        print()
        print(states[-1])
    for fault in record.faults:
        if fault.phase == "stop":
            print(f"  fault: {fault.describe()}")
    print("result: " + ", ".join(f"{r} {g}" for r, g in zip(record.roles, record.goals, strict=True)))
    return 0


def _secs(value: float | None) -> str:
    return "none" if value is None else f"{value:g} s"


__all__ = ["CommandError", "match_command", "match_parser", "replay_command", "tournament_command"]
