"""What the ``ggp`` commands share: the error for command-line mistakes, the console and help texts."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..match.calls import MAX_CLOCK, MAX_GRACE
from .argtypes import MAX_SEED, one_line

#: How a role played by a person is written on the command line.
HUMAN = "human"

SEED_HELP = f"random seed, 0 to {MAX_SEED} (default: random)"
CLOCK_MAX = f", at most {MAX_CLOCK:g}"
GRACE_MAX = f", at most {MAX_GRACE:g}"


class UsageError(Exception):
    """A mistake in the command line that argparse cannot see (a bad agent spec, say): exit code 2."""


def console() -> Console:
    """A console on the current ``sys.stdout`` (made per command, so tests can capture it); rich drops colour
    when it is not a terminal."""
    return Console(highlight=False)


def clip(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = one_line(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def progress_bar(out: Console) -> Progress:
    """The progress bar of ``ggp match`` and ``ggp tournament``: done of total, time spent and time left."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=out,
    )
