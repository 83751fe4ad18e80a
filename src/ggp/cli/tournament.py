"""``ggp tournament GAME SPEC SPEC ... [--games N] [--workers K] [--db PATH] [--backend ray]``: a resumable
round robin in worker processes (or on a Ray cluster) over an SQLite database (:mod:`ggp.match.tournament`),
with ratings; ``--report`` prints one.

A mistake raises :class:`~ggp.cli.common.UsageError`, which ``ggp`` reports
with exit code 2.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..match.plugins import canonical_module_name, load_agent_modules
from ..match.stats import outcome
from ..registry import load
from .argtypes import (
    MAX_TOURNAMENT_GAMES,
    MAX_WORKERS,
    agent_spec,
    game_ref,
    grace,
    output_file,
    positive_float,
    positive_int,
    seed,
    tournament_games,
)
from .common import CLOCK_MAX, GRACE_MAX, SEED_HELP, UsageError, console

if TYPE_CHECKING:
    from ..match.tournament import Settings

#: Most matches one tournament command may schedule (a round robin of N agents has N(N-1) per game index).
MAX_SCHEDULE = 100_000
#: Most Ray workers (actors) one run may start; a local run takes at most MAX_WORKERS processes.
MAX_RAY_WORKERS = 4096


def workers_arg(text: str) -> int:
    """Workers: 1 to :data:`MAX_RAY_WORKERS` (the local backend checks its own, lower, limit)."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    if value > MAX_RAY_WORKERS:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_WORKERS} processes with the local backend, or at most {MAX_RAY_WORKERS} Ray "
            f"workers with --backend ray; not {value}"
        )
    return value


def ray_address(text: str) -> str:
    """A Ray cluster address as ``ray.init`` takes it: ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``."""
    value = text.strip()
    if not value or len(value) > 512 or any(ch.isspace() or ord(ch) < 32 for ch in value):
        raise argparse.ArgumentTypeError(f"expected auto, HOST:PORT or ray://HOST:PORT, not {text[:80]!r}")
    return value


def add_backend_options(p: argparse.ArgumentParser, what: str, budget: str) -> None:
    """``--backend``, ``--address`` and ``--match-timeout``, shared by ``ggp tournament`` and ``ggp selfplay``."""
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help=f"where {what} run: local worker processes (default) or a Ray cluster (pip install 'ggp[ray]')",
    )
    p.add_argument(
        "--address",
        type=ray_address,
        default=None,
        metavar="ADDRESS",
        help="the Ray cluster to use (auto, HOST:PORT, ray://HOST:PORT; default: start a local Ray instance)",
    )
    p.add_argument(
        "--match-timeout",
        type=positive_float,
        default=None,
        metavar="T",
        help=budget + CLOCK_MAX,
    )


def check_backend_options(args: argparse.Namespace) -> None:
    if args.address and args.backend != "ray":
        raise UsageError("--address is the Ray cluster's: give it with --backend ray")
    if args.backend == "local" and args.workers is not None and args.workers > MAX_WORKERS:
        raise UsageError(f"--workers: the local backend runs at most {MAX_WORKERS} processes; use --backend ray")


class RateColumn(ProgressColumn):
    """Finished items per second, over the last half minute (rich's own estimate)."""

    def __init__(self, noun: str) -> None:
        super().__init__()
        self.noun = noun

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.2f} {self.noun}/s" if speed else f"-- {self.noun}/s", style="progress.data.speed")


class _TableProgress(Progress):
    """A progress bar with a table above it, redrawn with the bar (rich allows one live display at a time)."""

    def __init__(self, *columns: ProgressColumn, table: Callable[[], RenderableType | None], **kwargs: Any) -> None:
        self._make_table = table  # before rich's constructor, which may draw
        super().__init__(*columns, **kwargs)

    def get_renderables(self) -> Iterable[RenderableType]:
        table = self._make_table()
        if table is not None:
            yield table
        yield from super().get_renderables()


def live_progress(out: Console, noun: str, table: Callable[[], RenderableType | None] | None = None) -> Progress:
    """A progress bar with done of total, running, failed, rate, time spent and time left.

    Its task takes fields ``running`` and ``failed``. ``table`` (on a
    terminal only) gives a table to show above the bar, asked at every redraw.
    """
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[running]} running, {task.fields[failed]} failed"),
        RateColumn(noun),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    if table is not None and out.is_terminal:
        return _TableProgress(*columns, table=table, console=out)
    return Progress(*columns, console=out)


class LiveCounts:
    """Keeps a :func:`live_progress` bar's running and failed counts from a run's events (a tournament's
    matches, self-play games), and prints above the bar the events worth reading (crashes, failures).
    """

    #: Events that only move the counts.
    QUIET = frozenset({"started", "done", "worker", "shard"})

    def __init__(self, progress: Progress, task: TaskID) -> None:
        self.progress = progress
        self.task = task
        self.running: set[int] = set()
        self.failed = 0

    def see(self, kind: str, key: int | None, text: str) -> None:
        """One event of kind ``kind`` about item ``key`` (None: about no one item)."""
        if kind == "started" and key is not None:
            self.running.add(key)
        elif key is not None:
            self.running.discard(key)
        self.failed += kind in ("failed", "cancelled")
        if kind == "done":
            self.progress.advance(self.task)
        elif kind not in self.QUIET:
            self.progress.console.print(text, soft_wrap=True)
        self.progress.update(self.task, running=len(self.running), failed=self.failed)


class Standings:
    """The live table of a tournament: each agent's wins, draws, losses, score and mean goal in this run."""

    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}  # agent: [wins, draws, losses, goal sum]

    def add(self, agents: Sequence[str], goals: Sequence[int]) -> None:
        for seat, agent in enumerate(agents):
            row = self.rows.setdefault(agent, [0, 0, 0, 0])
            row[("win", "draw", "loss").index(outcome(goals, seat))] += 1
            row[3] += goals[seat]

    def table(self) -> Table | None:
        if not self.rows:
            return None
        table = Table(title="this run", title_justify="left", box=None, pad_edge=False)
        for name in ("agent", "games", "W", "D", "L", "score", "mean goal"):
            table.add_column(name, justify="left" if name == "agent" else "right")

        def score(row: list[int]) -> float:
            return (row[0] + row[1] / 2) / max(1, sum(row[:3]))

        for agent, row in sorted(self.rows.items(), key=lambda item: -score(item[1])):
            games = sum(row[:3])
            table.add_row(
                agent, str(games), *map(str, row[:3]), f"{100 * score(row):.1f}%", f"{row[3] / max(1, games):.1f}"
            )
        return table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tournament",
        help="run a resumable round robin between agents in parallel, with ratings",
        description=(
            "Round robin of GAME between the agent specs, each pair playing N games in each seating, in worker "
            "processes (or on a Ray cluster: --backend ray); results go to an SQLite database as they finish, and "
            "running the command again resumes. "
            "Ends with Bradley-Terry ratings. With only --db, resumes that tournament; with --report, prints it."
        ),
    )
    p.add_argument("game", metavar="GAME", nargs="?", default=None, type=game_ref)
    p.add_argument("specs", metavar="SPEC", nargs="*", help="agent specs, NAME[:key=value,...]")
    p.add_argument(
        "--games",
        "-n",
        type=tournament_games,
        default=2,
        metavar="N",
        help=f"games per pair and seating (default 2, at most {MAX_TOURNAMENT_GAMES:,})",
    )
    p.add_argument(
        "--workers",
        "-j",
        type=workers_arg,
        default=None,
        metavar="K",
        help=f"worker processes (default: CPUs, at most {MAX_WORKERS}), or Ray workers (default: the cluster's CPUs)",
    )
    p.add_argument("--db", default=None, metavar="PATH", help="the SQLite database (default ggp-tournament.sqlite)")
    p.add_argument(
        "--playclock", type=positive_float, default=None, metavar="T", help="seconds per move (default 1)" + CLOCK_MAX
    )
    p.add_argument(
        "--startclock",
        type=positive_float,
        default=None,
        metavar="T",
        help="seconds to prepare (default 5)" + CLOCK_MAX,
    )
    p.add_argument(
        "--grace", type=grace, default=None, metavar="T", help="slack past a clock (default 0.25)" + GRACE_MAX
    )
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=SEED_HELP)
    p.add_argument("--limit", type=positive_int, default=None, metavar="M", help="run at most M matches, then stop")
    p.add_argument(
        "--stall-timeout",
        type=positive_float,
        default=None,
        metavar="T",
        help="kill a silent worker after T s" + CLOCK_MAX,
    )
    add_backend_options(
        p, "matches", "cancel a match still running after T s and record it as cancelled (default: no budget)"
    )
    p.add_argument("--retry-failed", action="store_true", help="schedule failed (and cancelled) matches again")
    p.add_argument("--report", action="store_true", help="print the ratings of the database and exit")
    p.add_argument(
        "--agent-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (module name or .py file) registering more agents, here and in every worker",
    )
    p.set_defaults(func=cmd_tournament)


def _check_specs(specs: Sequence[tuple[str, str]]) -> None:
    """Build each agent once (as the argument type does) so that a bad spec is reported before anything runs."""
    for where, spec in specs:
        try:
            agent_spec(spec)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"{where} {exc}") from None


def cmd_tournament(args: argparse.Namespace) -> int:
    """``ggp tournament GAME SPEC SPEC ... [--games N] [--workers K] [--db PATH] ...``, or ``--report``."""
    from ..match.tournament import DEFAULT_DB, RunEvent, Settings, TournamentDB, report_lines, run_tournament

    db_path = Path(args.db or DEFAULT_DB)
    check_backend_options(args)
    if args.report:
        if args.specs:
            raise UsageError("--report prints the table of an existing database; give no agent specs")
        _print_lines(report_lines(db_path))
        return 0
    try:
        output_file(str(db_path))
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--db {exc}") from None
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
            raise UsageError(
                f"{db_path} holds no tournament yet: give the game and at least two agent specs, "
                "e.g. `ggp tournament bomberman2p random mcts`"
            )
        game = load(args.game)
        if len(game.roles) != 2:
            raise UsageError(f"tournaments are for two-player games; {game.name} has {len(game.roles)} roles")
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
        raise UsageError("a round robin needs at least two agent specs")
    if len(set(specs)) != len(specs):
        raise UsageError("an agent spec is listed twice")
    _check_specs([("agent", spec) for spec in specs])
    if specs and args.games * len(specs) * (len(specs) - 1) > MAX_SCHEDULE:
        raise UsageError(
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
    out = console()
    total = counts["done"] + counts["pending"] + counts["running"]
    out.print(
        f"{settings.game} round robin in {db_path}: {total} matches, {counts['done']} done"
        + (f", {added} newly scheduled" if added else "")
        + (f", {retried} failed re-scheduled" if retried else "")
        + (f", {counts['failed']} failed" if counts["failed"] else ""),
        soft_wrap=True,
    )
    workers = args.workers
    try:
        standings = Standings()
        with live_progress(out, "matches", standings.table) as progress:
            task = progress.add_task("matches", total=total, completed=counts["done"], running=0, failed=0)
            counts_shown = LiveCounts(progress, task)

            def on_event(event: RunEvent) -> None:
                counts_shown.see(event.kind, event.match_id, event.text)
                if event.kind == "done" and event.record is not None:
                    standings.add(event.record.agents, event.record.goals)

            summary = run_tournament(
                db_path,
                workers=workers,
                limit=args.limit,
                stall_timeout=args.stall_timeout,
                on_event=on_event,
                backend=args.backend,
                address=args.address,
                match_timeout=args.match_timeout,
            )
    except KeyboardInterrupt:
        with TournamentDB(db_path, create=False) as db:
            counts = db.counts()
        out.print(
            f"interrupted: {counts['done']} of {total} matches done; run `ggp tournament --db {db_path}` to resume",
            soft_wrap=True,
        )
        raise
    out.print(f"this run finished {summary.finished} match(es)", soft_wrap=True)
    out.print()
    _print_lines(report_lines(db_path))
    left = summary.counts.get("pending", 0)
    if left:
        out.print(f"{left} match(es) still to run: `ggp tournament --db {db_path}` resumes", soft_wrap=True)
    return 0


def _check_same(settings: Settings, args: argparse.Namespace, db_path: Path) -> None:
    """A command resuming a database must not ask for a different game or clocks."""
    if args.game and load(args.game).name != settings.game:
        raise UsageError(f"{db_path} holds a {settings.game} tournament, not {args.game}; use another --db")
    given = {
        "--playclock": (args.playclock, settings.play_clock),
        "--startclock": (args.startclock, settings.start_clock),
        "--grace": (args.grace, settings.grace),
        "--seed": (args.seed, settings.seed),
    }
    for option, (value, stored) in given.items():
        if value is not None and value != stored:
            raise UsageError(f"{db_path} was created with {option} {stored:g}; a tournament keeps its settings")


def _print_lines(lines: Sequence[str]) -> None:
    out = console()
    for line in lines:
        out.print(line, soft_wrap=True)
