"""The ``ggp`` command.

::

    ggp games                                    # the games, one line each
    ggp show bomberman2p                         # the initial position
    ggp rules wallmaze                           # ggp's GDL rule sheet of a game
    ggp info ../shared/corpus/kif/hex.kif        # roles, reasoner, propositions, gates, load time
    ggp play wallmaze --white human --black random --seed 1
    ggp perft amazons_8x8 3                      # 70386
    ggp random amazons_10x10 --games 1000 --seed 1 [--compiled]
    ggp match bomberman2p --bomberman bomberman --bomberwoman mcts --games 10 --swap
    ggp tournament wallmaze random mcts wallmaze --games 4 --workers 2 --db wm.sqlite
    ggp selfplay wallmaze --agent mcts:sims=800 --games 100 --out sp/   # training data (Parquet)
    ggp replay records/wallmaze-1-001.json
    ggp web                                      # the web app on http://127.0.0.1:8000
    ggp serve mcts --port 9147                   # a GGP player
    ggp host wallmaze --player white=http://127.0.0.1:9147 --player black=random
    ggp bench                                    # speed, against OpenSpiel when installed

:func:`main` takes the arguments and returns the exit code: 0 on success, 2
for a user mistake (an unknown game, a bad agent spec or option), 1 when the
system refuses (a full disk) or ggp fails (an internal error: one line; the
traceback with ``GGP_TRACEBACK=1``), 130 when interrupted with Ctrl-C.
Every argument is checked before anything runs (:mod:`ggp.cli.argtypes`).

Each command is a module of this package with a ``register(sub)`` function
that adds its sub-parser (and sets ``func``, the function that runs it); a
command's heavier imports happen only when it runs. :data:`COMMANDS` lists
them in the order ``ggp -h`` shows.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from types import ModuleType

from .. import __version__
from ..core.errors import GGPError
from . import bench, games, host, info, match, perft, play, playouts, replay, selfplay, serve, tournament, web
from .common import UsageError, clip

#: The command modules, in the order of ``ggp -h`` (``games`` adds games, show and rules).
COMMANDS: tuple[ModuleType, ...] = (
    games,
    info,
    play,
    perft,
    playouts,
    web,
    bench,
    match,
    tournament,
    selfplay,
    replay,
    serve,
    host,
)


def main(argv: list[str] | None = None) -> int:
    """Run the ``ggp`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        code: int = args.func(args)
        return code
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2, message already printed)
        return _exit_code(exc)
    except (GGPError, UsageError) as exc:
        _flush_quietly()
        print(f"ggp: error: {clip(str(exc), 2000)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _flush_quietly()
        print("\nggp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `ggp games | head -1`: the reader left; say nothing
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except OSError as exc:  # the system refused (a disk full, a file vanished): say what, in one line
        _flush_quietly()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"ggp: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: one line, and the traceback only when asked for
        _flush_quietly()
        if os.environ.get("GGP_TRACEBACK"):
            raise
        print(
            f"ggp: internal error: {type(exc).__name__}: {clip(str(exc))} (set GGP_TRACEBACK=1 to see where)",
            file=sys.stderr,
        )
        return 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``ggp`` command (``play``'s and ``match``'s role options are parsed later)."""
    parser = argparse.ArgumentParser(
        prog="ggp",
        description="General Game Playing: the built-in games from the command line.",
        epilog="Run `ggp COMMAND -h` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"ggp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _flush_quietly() -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()


__all__ = ["COMMANDS", "UsageError", "build_parser", "main"]


if __name__ == "__main__":
    sys.exit(main())
