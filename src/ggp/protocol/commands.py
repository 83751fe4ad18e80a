"""The ``ggp serve`` and ``ggp host`` commands (``ggp.cli`` delegates here).

Each function takes the parsed arguments and returns the exit code; mistakes
raise :class:`~ggp.GGPError` subclasses, which ``ggp.cli.main`` reports with
exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from ..core.errors import GGPError
from ..core.registry import load
from .host import HostError, host_match
from .messages import is_symbol_text
from .player import PlayerConfig, serve


class ServeError(GGPError):
    """``ggp serve`` cannot run as asked (a bad agent spec or name, a port in use)."""


def serve_command(args: argparse.Namespace) -> int:
    """``ggp serve SPEC [--port 9147] [--name NAME] [--host 127.0.0.1] ...``: a GGP player until Ctrl-C.

    The arguments come checked by their argparse types (``ggp._argtypes``): the spec builds, the name is
    one symbol, the seconds are finite.
    """
    spec = str(args.spec).strip()
    name = args.name if args.name else f"ggp-{spec.partition(':')[0].strip().lower()}"
    if not is_symbol_text(name):
        raise ServeError(f"--name {name!r}: a player name is one word, without spaces, parentheses or quotes")
    try:
        config = PlayerConfig(spec=spec, name=name, margin=args.margin, idle_timeout=args.idle_timeout, seed=args.seed)
    except ValueError as exc:
        raise ServeError(str(exc)) from None

    def log(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    def ready(server: object) -> None:
        port = getattr(server, "port", args.port)
        print(f"ggp player {name} ({spec}) listening on http://{args.host}:{port}/ (Ctrl-C stops)", flush=True)

    try:
        serve(config, args.host, args.port, log=None if args.quiet else log, ready=ready)
    except OSError as exc:
        raise ServeError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


def parse_players(items: Sequence[str]) -> dict[str, str]:
    """``["white=http://...", "black=random"]`` -> ``{"white": "http://...", "black": "random"}``."""
    players: dict[str, str] = {}
    for item in items:
        role, eq, who = item.partition("=")
        if not eq or not role.strip() or not who.strip():
            raise HostError(f"--player {item!r}: expected ROLE=URL or ROLE=SPEC, e.g. white=http://127.0.0.1:9147")
        key = role.strip().lower()
        if key in players:
            raise HostError(f"--player: role {role.strip()} is given twice")
        players[key] = who.strip()
    return players


def host_command(args: argparse.Namespace) -> int:
    """``ggp host GAME_OR_KIF --player ROLE=URL|SPEC ... [--startclock T] [--playclock T] [--out FILE]``."""
    players = parse_players(args.player or [])
    roles = load(args.game).roles

    def on_step(step: int, joint: tuple[str, ...]) -> None:
        if not args.quiet:
            moves = ", ".join(f"{role} {move}" for role, move in zip(roles, joint, strict=True))
            print(f"step {step}: {moves}", flush=True)

    record = host_match(
        args.game,
        players,
        start_clock=args.startclock,
        play_clock=args.playclock,
        grace=args.grace,
        seed=args.seed,
        match_id=args.match_id,
        on_step=on_step,
    )
    print(f"{record.game}: {record.steps} steps, seed {record.seed}")
    for role, who, goal in zip(record.roles, record.agents, record.goals, strict=True):
        print(f"  {role:<12} {goal:>3}  {who}")
    faults = list(record.all_faults())
    if faults:
        print(f"{len(faults)} fault(s); a random legal move was played for each fault of play:")
        for fault in faults[:10]:
            print(f"  {fault.describe()}")
        if len(faults) > 10:
            print(f"  ... and {len(faults) - 10} more (see the record)")
    if args.out:
        path = record.save(args.out)
        print(f"record written to {path}")
    return 0


__all__ = ["ServeError", "host_command", "parse_players", "serve_command"]
