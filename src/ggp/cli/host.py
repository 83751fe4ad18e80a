"""``ggp host GAME_OR_KIF --player ROLE=URL|SPEC ...``: referee a match with remote GGP players and local agents
(:func:`ggp.protocol.host.host_match`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..registry import load
from .argtypes import game_ref, grace, output_file, positive_float, role_player, seed, symbol
from .common import CLOCK_MAX, GRACE_MAX, SEED_HELP


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "host",
        help="referee a match with remote GGP players and local agents",
        description=(
            "Run a match of GAME (a built-in game or a .kif rule sheet) under a referee: each role is a GGP player "
            "at a URL or an agent spec played here; roles not given play random."
        ),
    )
    p.add_argument("game", metavar="GAME_OR_KIF", type=game_ref)
    p.add_argument(
        "--player",
        action="append",
        type=role_player,
        default=[],
        metavar="ROLE=WHO",
        help="ROLE=http://host:port or ROLE=SPEC",
    )
    p.add_argument(
        "--startclock",
        type=positive_float,
        default=10.0,
        metavar="T",
        help="seconds to prepare (default 10)" + CLOCK_MAX,
    )
    p.add_argument(
        "--playclock", type=positive_float, default=5.0, metavar="T", help="seconds per move (default 5)" + CLOCK_MAX
    )
    p.add_argument("--grace", type=grace, default=0.5, metavar="T", help="slack past a clock (default 0.5)" + GRACE_MAX)
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=SEED_HELP)
    p.add_argument(
        "--match-id", type=symbol, default=None, metavar="ID", help="the match id sent to players (one word)"
    )
    p.add_argument(
        "--out", type=output_file, default=None, metavar="FILE", help="write the match record (JSON) to FILE"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="do not print every joint move")
    p.set_defaults(func=cmd_host)


def parse_players(items: Sequence[str]) -> dict[str, str]:
    """``["white=http://...", "black=random"]`` -> ``{"white": "http://...", "black": "random"}``."""
    from ..protocol.host import HostError

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


def cmd_host(args: argparse.Namespace) -> int:
    """``ggp host GAME_OR_KIF --player ROLE=URL|SPEC ... [--startclock T] [--playclock T] [--out FILE]``."""
    from ..protocol.host import host_match

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
