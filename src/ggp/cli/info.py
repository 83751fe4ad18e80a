"""``ggp info GAME``: what a game or rule sheet is made of, which reasoner plays it, and how long it took to load."""

from __future__ import annotations

import argparse
import time
from typing import Any

from rich.text import Text

from ..core.game import Game
from .argtypes import game_ref
from .common import console
from .loading import load_game


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "info",
        help="what a game or rule sheet is made of and which reasoner plays it",
        description=(
            "Load GAME (a built-in game or a GDL rule sheet's path) and print its roles, the reasoner that "
            "plays it and why, its propositional network's size (base propositions, inputs, gates) and the "
            "time each stage of loading took."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.set_defaults(func=cmd_info)


#: The stages of loading a rule sheet onto the propnet, and the game attributes that time them.
STAGES = (("parse", "parse_seconds"), ("ground", "ground_seconds"), ("build", "build_seconds"))


def facts(game: Game, seconds: float) -> list[tuple[str, str]]:
    """The lines ``ggp info`` prints: (label, value)."""
    rows = [("game", game.name), ("roles", ", ".join(game.roles))]
    engine = getattr(game, "engine", None)
    propnet: Any = getattr(game, "propnet", None)
    if engine is None:
        rows.append(("engine", "native (a compiled kernel written for this game)"))
        rows.append(("load", f"{seconds:.2f} s"))
        rows.append(("actions", ", ".join(f"{r} {game.num_actions(r):,}" for r in game.roles)))
        return rows
    rows.append(("engine", f"{engine} ({getattr(game, 'engine_reason', '')})"))
    if propnet is not None:
        parts = [(what, float(getattr(game, attr, 0.0))) for what, attr in STAGES]
        total = float(getattr(game, "load_seconds", seconds))
        parts.append(("kernel", max(0.0, total - sum(t for _, t in parts))))  # compiling it, choosing its evaluator
        stages = ", ".join(f"{what} {t:.2f} s" for what, t in parts)
        rows.append(("load", f"{total:.2f} s ({stages})"))
        rows.append(("network", str(getattr(game, "network_source", "built here"))))
        rows.append(("base", f"{propnet.num_base:,} propositions (facts a state may hold)"))
        inputs = [len(texts) for texts in propnet.move_texts]
        per_role = ", ".join(f"{r} {n:,}" for r, n in zip(game.roles, inputs, strict=True))
        rows.append(("inputs", f"{sum(inputs):,} propositions (moves: {per_role})"))
        rows.append(("gates", f"{propnet.num_gates:,}"))
        kernel = getattr(game, "kernel", None)
        if kernel is not None:
            rows.append(("evaluator", evaluator(propnet, kernel)))
        rows.append(("max legal", f"{getattr(game, 'max_legal', 0):,} moves of one role in one state, at most"))
    else:
        total = float(getattr(game, "load_seconds", seconds))
        tried = float(getattr(game, "tried_seconds", 0.0))
        if tried > 0:  # the reasoner chosen after grounding gave up: the attempt was part of the load
            stages = f"parse and ground until it gave up {tried:.2f} s, prover {max(0.0, total - tried):.2f} s"
            rows.append(("load", f"{total:.2f} s ({stages})"))
        else:
            rows.append(("load", f"{total:.2f} s"))
        program = getattr(game, "program", None)
        if program is not None:
            rows.append(("rules", f"{len(program.rules):,} (not grounded: no propositions or gates)"))
    return rows


def evaluator(propnet: Any, kernel: Any) -> str:
    """How the kernel evaluates the network (chosen when its first context is made: measured once per network
    and machine, then read from ggp's cache folder), and what choosing it took here."""
    from ..gdl import kernel as gk

    began = time.perf_counter()
    mode = gk.evaluation_mode(kernel)
    spent = time.perf_counter() - began
    size = f"{len(propnet.net.lits):,} literals"
    if mode == "compiled":
        how = f"the network as straight-line machine code, {size}, {gk.compile_report(propnet)}"
    elif gk.compilable(propnet):
        how = "interpreted: measured faster than the network compiled, or than the interpreted sweep by far"
    else:
        limit = gk.codegen.compile_limit()
        how = f"interpreted: {size}, and networks over {limit:,} are not compiled (compile time)"
    return f"{mode} ({how}; chosen or read in {spent:.2f} s)"


def cmd_info(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    game = load_game(args.game)
    rows = facts(game, time.perf_counter() - began)
    out = console()
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        line = Text(f"{label:<{width}}  {value}")
        line.stylize("bold", 0, len(label))
        out.print(line, soft_wrap=True)
    return 0
