"""Random-playout speed of the GDL reasoner against the native engines.

    python bench/gdl_speed.py [--repeat 3] [--seconds 1.0]

For each rule sheet in ../shared/gdl (and tic-tac-toe, written below), and for
ggp's own sheets of the built-in games: the time to parse, ground and build the
propnet, its size, and the state transitions per second of uniformly random
playouts (a transition: the legal moves of every role, the terminal test and the
next state), with the native engine's speed on the same game and the ratio.
Figures are medians of ``--repeat`` runs of about ``--seconds`` each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import ggp
import ggp.gdl
from ggp.core.kernels import random_playouts
from ggp.gdl import BUILTIN_RULES, GDLGame, from_text, rules_text

SHARED = Path(os.environ.get("GGP_SHARED", Path(__file__).resolve().parents[2] / "shared"))

TICTACTOE = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()


def gdl_rate(game: GDLGame, seconds: float, repeat: int, incremental: bool) -> float:
    game.random_playouts(2, seed=0, incremental=incremental)  # compile (or load from numba's cache)
    count = 4
    while True:  # size a run to about `seconds`
        t = time.perf_counter()
        game.random_playouts(count, seed=1, incremental=incremental)
        if time.perf_counter() - t > seconds / 4 or count > 1 << 20:
            break
        count *= 2
    count = max(1, int(count * seconds / max(time.perf_counter() - t, 1e-6)))
    rates = []
    for i in range(repeat):
        t = time.perf_counter()
        _, _, n = game.random_playouts(count, seed=100 + i, incremental=incremental)
        rates.append(n / (time.perf_counter() - t))
    return statistics.median(rates)


def native_rate(name: str, seconds: float, repeat: int) -> float:
    game = ggp.load(name)
    kernel = game.kernel  # type: ignore[attr-defined]
    s0 = game.initial_state().array  # type: ignore[attr-defined]
    random_playouts(kernel, s0, 2)
    count = 16
    while True:
        t = time.perf_counter()
        random_playouts(kernel, s0, count, seed=1)
        if time.perf_counter() - t > seconds / 4 or count > 1 << 22:
            break
        count *= 2
    count = max(1, int(count * seconds / max(time.perf_counter() - t, 1e-6)))
    rates = []
    for i in range(repeat):
        t = time.perf_counter()
        _, lengths = random_playouts(kernel, s0, count, seed=100 + i)
        rates.append(float(lengths.sum()) / (time.perf_counter() - t))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args()
    sheets: list[tuple[str, str, str, str | None]] = []  # label, name, text, native name
    for path in sorted((SHARED / "gdl").glob("*.kif")):
        sheets.append((f"shared/{path.name}", path.stem, path.read_text(), path.stem))
    sheets.append(("tictactoe (bench)", "tictactoe", TICTACTOE, None))
    for name in BUILTIN_RULES:
        sheets.append((f"ggp rules/{name}.kif", name, rules_text(name), name))
    head = (
        f"{'rule sheet':28} {'load s':>6} {'ground':>6} {'base':>5} {'does':>5} {'gates':>6} {'lits':>7} "
        f"{'sweep tr/s':>10} {'incr. tr/s':>10} {'native tr/s':>11} {'ratio':>6}"
    )
    print(head)
    print("-" * len(head))
    for label, name, text, native in sheets:
        from_text.cache_clear()
        t = time.perf_counter()
        game = from_text(text, name)
        load = time.perf_counter() - t
        pn = game.propnet
        sweep = gdl_rate(game, args.seconds, args.repeat, incremental=False)
        incr = gdl_rate(game, args.seconds, args.repeat, incremental=True)
        nat = native_rate(native, args.seconds, args.repeat) if native else float("nan")
        ratio = f"{nat / max(sweep, incr):5.0f}x" if native else "   n/a"
        nat_s = f"{nat:11,.0f}" if native else f"{'n/a':>11}"
        print(
            f"{label:28} {load:6.2f} {game.ground_seconds:6.2f} {pn.num_base:5} {int(pn.header[2]):5} "
            f"{pn.num_gates:6} {pn.num_literals:7} {sweep:10,.0f} {incr:10,.0f} {nat_s} {ratio}",
            flush=True,
        )
    print(
        "\nload s: parse + ground + build the propnet; ground: the grounding part. tr/s: state transitions per "
        "second\n(legal moves of every role, terminal test, next state) in uniformly random playouts, by the "
        "sweeping and\nthe incremental evaluator (random_playouts uses the faster). ratio = native tr/s / best GDL tr/s."
    )


if __name__ == "__main__":
    main()
