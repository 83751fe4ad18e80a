"""``ggp replay FILE [--step | --final]``: show a recorded match (:mod:`ggp.match.record`) move by move."""

from __future__ import annotations

import argparse

from ..match.record import MatchRecord


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="show a recorded match move by move",
        description="Replay a match record (JSON, from `ggp match --out`): every joint move and state.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--step", action="store_true", help="wait for Enter before each move")
    p.add_argument("--final", action="store_true", help="show only the final position and result")
    p.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    """``ggp replay FILE [--step | --final]``: show a recorded match move by move."""
    path, step, final = args.file, args.step, args.final
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
