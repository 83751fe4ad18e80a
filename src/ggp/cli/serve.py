"""``ggp serve SPEC [--port 9147] ...``: be a GGP player (:mod:`ggp.protocol.player`) until Ctrl-C.

A mistake (a bad name, a port in use) raises :class:`~ggp.cli.common.UsageError`,
which ``ggp`` reports with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from .argtypes import agent_spec, non_negative_float, port, positive_float, seed, symbol
from .common import SEED_HELP, UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="be a GGP player: answer a game manager over HTTP with an agent",
        description=(
            "Serve agent SPEC as a GGP player (ggp-base's HTTP protocol). Built-in games are recognised from "
            "the rules sent with START and played natively; any other game runs on the GDL reasoner. On a first "
            "start (empty caches) a child process compiles the reasoner, the agent's search and the built-in games "
            "for minutes, logging each step; INFO answers busy until it is done, so that a game manager waits."
        ),
    )
    p.add_argument("spec", metavar="SPEC", type=agent_spec, help="agent spec, NAME[:key=value,...], e.g. mcts:time=4")
    p.add_argument("--port", type=port, default=9147, help="port to listen on (default 9147; 0: any free)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0: all)")
    p.add_argument("--name", type=symbol, default=None, help="the name INFO answers (default ggp-AGENT)")
    p.add_argument(
        "--margin", type=non_negative_float, default=None, metavar="T", help="seconds kept back from each clock"
    )
    p.add_argument(
        "--idle-timeout", type=positive_float, default=None, metavar="T", help="drop a match silent this long"
    )
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=SEED_HELP)
    p.add_argument("--quiet", "-q", action="store_true", help="do not log messages to stderr")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """``ggp serve SPEC [--port 9147] [--name NAME] [--host 127.0.0.1] ...``: a GGP player until Ctrl-C.

    The arguments come checked by their argparse types (:mod:`ggp.cli.argtypes`): the spec builds, the name
    is one symbol, the seconds are finite.
    """
    from ..protocol.messages import is_symbol_text
    from ..protocol.player import serve
    from ..protocol.player_match import PlayerConfig

    spec = str(args.spec).strip()
    name = args.name if args.name else f"ggp-{spec.partition(':')[0].strip().lower()}"
    if not is_symbol_text(name):
        raise UsageError(f"--name {name!r}: a player name is one word, without spaces, parentheses or quotes")
    try:
        config = PlayerConfig(spec=spec, name=name, margin=args.margin, idle_timeout=args.idle_timeout, seed=args.seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def log(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    def ready(server: object) -> None:
        port = getattr(server, "port", args.port)
        print(f"ggp player {name} ({spec}) listening on http://{args.host}:{port}/ (Ctrl-C stops)", flush=True)

    # A new sheet's network compiles in a child process while its first match is played interpreted: on a busy
    # machine the compile had outlasted the start clock (see ggp.gdl.aside).
    from ..gdl.aside import compile_aside

    compile_aside()
    try:
        serve(config, args.host, args.port, log=None if args.quiet else log, ready=ready)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    finally:
        compile_aside(False)  # (for the rest of a process that ran the command in-process, as the tests do)
    return 0
