"""``ggp selfplay GAME --agent SPEC --games N --out DIR [--backend local|ray]``: self-play games for training,
written as Parquet shards of states, moves, search visit counts and outcomes (:mod:`ggp.match.selfplay`).

Running the command again with the same ``--out`` plays only the games the
directory does not hold yet (and ``--games`` may grow).
"""

from __future__ import annotations

import argparse

from ..match.plugins import canonical_module_name
from .argtypes import agent_spec, game_ref, positive_int, seed
from .common import UsageError, console
from .tournament import LiveCounts, add_backend_options, check_backend_options, live_progress, workers_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "selfplay",
        help="self-play games of one agent for training, as resumable Parquet files",
        description=(
            "GAME played N times by SPEC in every role. Each state, the joint move, each role's search visit "
            "counts and the final goals go to Parquet shards in DIR; running again resumes. "
            "Read them with ggp.match.selfplay.read_selfplay(DIR) or any Parquet reader."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("--agent", "-a", required=True, metavar="SPEC", help="the agent spec, e.g. mcts:sims=800")
    p.add_argument("--games", "-n", required=True, type=positive_int, metavar="N", help="games in DIR in all")
    p.add_argument("--out", "-o", required=True, metavar="DIR", help="the directory of the self-play files")
    p.add_argument("--seed", type=seed, default=None, metavar="S", help="random seed, 0 to 4294967295 (default 0)")
    p.add_argument("--workers", "-j", type=workers_arg, default=None, metavar="K", help="worker processes or actors")
    p.add_argument("--shard", type=positive_int, default=64, metavar="G", help="games per Parquet file (default 64)")
    add_backend_options(
        p, "games", "with --backend ray: cancel a game still running after T s (a later run plays it again)"
    )
    p.add_argument(
        "--agent-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (module name or .py file) registering more agents, here and in every worker",
    )
    p.set_defaults(func=cmd_selfplay)


def cmd_selfplay(args: argparse.Namespace) -> int:
    """``ggp selfplay GAME --agent SPEC --games N --out DIR ...``."""
    import os

    from ..match.plugins import load_agent_modules
    from ..match.selfplay import MAX_SELFPLAY_GAMES, MAX_SHARD, SelfplayEvent, read_settings, run_selfplay

    check_backend_options(args)
    if args.games > MAX_SELFPLAY_GAMES:
        raise UsageError(f"--games: at most {MAX_SELFPLAY_GAMES:,}")
    if args.shard > MAX_SHARD:
        raise UsageError(f"--shard: at most {MAX_SHARD:,} games per file")
    modules = tuple(canonical_module_name(m) for m in args.agent_module)
    load_agent_modules(list(modules))
    try:
        spec = agent_spec(args.agent)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--agent {exc}") from None
    out_dir = args.out
    seed_value = args.seed
    if seed_value is None:
        # Resuming keeps the stored seed; a new directory starts from 0 (the games are then reproducible).
        seed_value = read_settings(out_dir).seed if os.path.isfile(os.path.join(out_dir, "selfplay.json")) else 0
    out = console()
    with live_progress(out, "games") as progress:
        task = progress.add_task("games", total=args.games, running=0, failed=0)
        counts_shown = LiveCounts(progress, task)

        def on_event(event: SelfplayEvent) -> None:
            counts_shown.see(event.kind, event.index, event.text)

        def skip_existing(n: int) -> None:
            progress.update(task, completed=n)

        summary = run_selfplay(
            args.game,
            spec,
            games=args.games,
            out=out_dir,
            seed=seed_value,
            workers=args.workers,
            backend=args.backend,
            address=args.address,
            shard=args.shard,
            match_timeout=args.match_timeout,
            agent_modules=modules,
            on_event=on_event,
            on_existing=skip_existing,
        )
    out.print(
        f"played {summary.played} game(s) into {out_dir} ({summary.existing} there already, "
        f"{summary.shards} shard file(s) written)"
        + (f"; {len(summary.failed)} failed" if summary.failed else "")
        + (f"; {len(summary.cancelled)} cancelled over budget" if summary.cancelled else ""),
        soft_wrap=True,
    )
    return 1 if summary.failed or summary.cancelled else 0
