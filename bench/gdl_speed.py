"""Random-playout speed of the GDL reasoner, what each propnet optimisation pays, and the native engines.

    python bench/gdl_speed.py [--repeat 5] [--seconds 0.5] [--corpus NAME ...] [--no-native]

For each rule sheet in ../shared/gdl, tic-tac-toe, ggp's own sheets of the
built-in games and the corpus sheets named: the time to parse and ground, to
build the propnet as the program gives it and optimised (constants folded,
one-literal gates and equal gates merged, single-reader gates flattened, dead
gates dropped), their sizes, and the state transitions per second of uniformly
random playouts (a transition: the legal moves of every role, the terminal
test and the next state) on both networks by both evaluators (the sweep, and
the differential one with its legal sets), then through the game's kernel
(``ggp.core.kernels.random_playouts``: what agents run on, in the mode the
kernel picked) and the native engine. Every figure is the median of
``--repeat`` repetitions of about ``--seconds`` of processor time each,
interleaved, so a busy moment of the machine hurts all columns of a row alike
(timed by ``ggp.bench.gdl.transition_rates``, on the sheets of
``ggp.bench.gdl.gdl_sheets``: the same as ``ggp bench --only gdl``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

import ggp
from ggp.bench.gdl import Play, gdl_sheets, kernel_play, transition_rates
from ggp.core.kernels import rng_state
from ggp.gdl import from_text
from ggp.gdl.evaluate import dn_playouts, pn_playouts
from ggp.gdl.grounder import ground
from ggp.gdl.kernel import evaluation_mode
from ggp.gdl.network import Network
from ggp.gdl.parser import parse_program
from ggp.gdl.propnet import build_propnet

SHARED = Path(os.environ.get("GGP_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def network_play(net: Network, incremental: bool) -> Play:
    """``play(count, seed) -> transitions`` of the reasoner's own playout loop on ``net``."""
    roles = int(net.header[3])
    base0 = np.asarray(net.init, dtype=np.uint8).copy()

    def play(count: int, seed: int) -> int:
        goals = np.zeros((count, roles), dtype=np.int64)
        lengths = np.zeros(count, dtype=np.int64)
        error = np.zeros(2, dtype=np.int64)
        args = (net, base0, count, rng_state(seed), 100_000, goals, lengths, error)
        return int(dn_playouts(*args, 0) if incremental else pn_playouts(*args))

    return play


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--corpus", nargs="*", default=["connectFour", "hex"], help="corpus sheets to add")
    ap.add_argument("--no-native", action="store_true", help="skip the native engines")
    args = ap.parse_args()
    sheets = gdl_sheets(SHARED, tuple(args.corpus))  # label, name, text, native name
    columns = ["raw sweep", "raw diff", "opt sweep", "opt diff", "kernel", "native"]
    head = (
        f"{'rule sheet':28} {'ground':>6} {'build':>6} {'+opt':>5} {'gates':>15} {'lits':>15} "
        + " ".join(f"{c:>10}" for c in columns)
        + f" {'mode':>6} {'nat/best':>8}"
    )
    print(head)
    print("-" * len(head))
    for label, name, text, native in sheets:
        began = time.perf_counter()
        program = parse_program(text, name)
        grounded = ground(program)
        ground_s = time.perf_counter() - began
        began = time.perf_counter()
        raw = build_propnet(grounded, program, optimise=False)
        build_s = time.perf_counter() - began
        began = time.perf_counter()
        opt = build_propnet(grounded, program, optimise=True)
        opt_s = time.perf_counter() - began - build_s
        from_text.cache_clear()
        game = from_text(text, name)
        plays = {
            "raw sweep": network_play(raw.net, False),
            "raw diff": network_play(raw.net, True),
            "opt sweep": network_play(opt.net, False),
            "opt diff": network_play(opt.net, True),
            "kernel": kernel_play(game.kernel, game.initial_array()),
        }
        if native is not None and not args.no_native:
            native_game: Any = ggp.load(native)
            plays["native"] = kernel_play(native_game.kernel, native_game.initial_array())
        got = transition_rates(plays, args.seconds, args.repeat)
        best = max(got["opt sweep"], got["opt diff"], got["kernel"])
        ratio = f"{got['native'] / best:7.1f}x" if "native" in got else f"{'n/a':>8}"
        mode = evaluation_mode(game.kernel).replace("differential", "diff")
        figures = " ".join(f"{got[c]:10,.0f}" if c in got else f"{'n/a':>10}" for c in columns)
        print(
            f"{label:28} {ground_s:6.2f} {build_s:6.2f} {opt_s:5.2f} {raw.num_gates:>7}>{opt.num_gates:<7} "
            f"{raw.num_literals:>7}>{opt.num_literals:<7} {figures} {mode:>6} {ratio}",
            flush=True,
        )
    print(
        "\nground: parse + ground, s; build: the propnet as the program gives it; +opt: what the optimisation passes add "
        "(a difference of two timings: noise can make it negative). "
        "Figures: transitions/s\n(every role's legal moves, the terminal test, the next state) in uniformly random "
        "playouts: the reasoner's own loop\nby sweep and differentially on the raw and the optimised network, the "
        "game's kernel (mode: how it evaluates)\nand the native kernel; nat/best = native / the best GDL figure."
    )


if __name__ == "__main__":
    main()
