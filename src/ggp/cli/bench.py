"""``ggp bench``: measure speed on this machine, against OpenSpiel where it is installed (:mod:`ggp.bench`)."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..bench import SECTIONS
from .common import UsageError, console


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure speed on this machine, against OpenSpiel where it is installed",
        description=(
            "Measure random games, MCTS, vectorised steps, perft and compile times on this machine, and compare "
            "with OpenSpiel (pip install 'ggp[bench]') in the same run. Figures are medians of repetitions."
        ),
    )
    p.add_argument("--quick", action="store_true", help="a short smoke run with few repetitions")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    p.add_argument(
        "--only",
        default=None,
        metavar="SECTIONS",
        help=f"comma-separated sections to run ({', '.join(SECTIONS)})",
    )
    p.add_argument("--corpus", action="store_true", help="the GDL corpus section alone (as --only corpus)")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from .. import bench

    only = None
    if args.corpus:
        if args.only is not None and args.only.strip() != "corpus":
            raise UsageError("--corpus is --only corpus: give one or the other")
        args.only = "corpus"
    if args.only is not None:
        only = [key.strip() for key in args.only.split(",") if key.strip()]
        unknown = [key for key in only if key not in bench.SECTIONS]
        if unknown or not only:
            raise UsageError(f"--only {args.only}: the sections are {', '.join(bench.SECTIONS)}")
    progress = Console(stderr=True, highlight=False)
    report = bench.run(quick=args.quick, only=only, progress=lambda text: progress.print(text, style="dim"))
    if args.json:
        print(report.to_json())
    else:
        out = console()
        if not out.is_terminal:  # a file or a pipe: wide enough for the tables
            out = Console(highlight=False, width=120)
        bench.print_report(report, out)
    return 0
