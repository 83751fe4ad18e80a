"""Hidden information (GDL-II): the belief player against random and against determinized UCT, and Monty Hall.

    python bench/hidden_strength.py duel krieg_tictactoe hidden random --games 40
    python bench/hidden_strength.py duel fog_breakthrough hidden duct --games 40
    python bench/hidden_strength.py montyhall --games 1000
    python bench/hidden_strength.py all          # every figure of the GDL-II issue (an hour on 2 cores)

Players: ``hidden`` (:class:`~ggp.agents.hidden.HiddenPlayer`, 32 samples x 4 playouts per move), ``duct``
(:class:`~ggp.agents.hidden.DeterminizedUCTPlayer`, 8 determinizations x 500 simulations), ``random``
(:class:`~ggp.agents.hidden.RandomHiddenPlayer`). Budgets are counts, not clocks, so a busy machine changes
the time a run takes, not its result. Seats alternate; each run appends a JSON line (with the commit) to
bench/results/hidden_strength.jsonl.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from ggp.agents.hidden import DeterminizedUCTPlayer, HiddenPlayer, RandomHiddenPlayer
from ggp.gdl.examples import load_example
from ggp.match.hidden import play_hidden_match

RESULTS = Path(__file__).resolve().parent / "results" / "hidden_strength.jsonl"


def make(kind: str, seed: int, weighted: bool = True) -> Any:
    if kind == "hidden":
        return HiddenPlayer(samples=32, playouts=4, seed=seed, weighted=weighted)
    if kind == "duct":
        return DeterminizedUCTPlayer(determinizations=8, simulations=500, seed=seed)
    if kind == "random":
        return RandomHiddenPlayer(seed=seed)
    raise SystemExit(f"unknown player {kind!r}: hidden, duct or random")


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


def interval(k: float, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a proportion ``k / n``."""
    if n == 0:
        return (0.0, 1.0)
    z, p = 1.96, k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return ((c - h) / d, (c + h) / d)


#: The code measured: the commit checked out when the run began.
COMMIT = commit()


def record(row: dict[str, Any]) -> None:
    row = {"commit": COMMIT, "date": time.strftime("%Y-%m-%d %H:%M"), **row}
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row))


def duel(name: str, a: str, b: str, games: int) -> None:
    game = load_example(name)
    roles = game.players
    if len(roles) != 2:
        raise SystemExit(f"{name} has {len(roles)} players; a duel needs two")
    scores, began, faults = [], time.perf_counter(), 0
    for i in range(games):
        seat = i % 2
        players = {roles[seat]: make(a, i), roles[1 - seat]: make(b, 10_000 + i)}
        match = play_hidden_match(game, players, seed=i)
        faults += len(match.faults)
        scores.append(match.goals[game.role_index(roles[seat])])
    wins = sum(s == 100 for s in scores) + 0.5 * sum(s == 50 for s in scores)
    low, high = interval(wins, games)
    record(
        {
            "mode": "duel",
            "game": name,
            "player": a,
            "opponent": b,
            "games": games,
            "mean": statistics.mean(scores),
            "by_seat": [statistics.mean(scores[s::2]) for s in (0, 1)],
            "interval95": [round(100 * low, 1), round(100 * high, 1)],
            "faults": faults,
            "seconds": round(time.perf_counter() - began, 1),
        }
    )


def monty(games: int) -> None:
    game = load_example("montyhall")
    for weighted in (True, False):
        wins = switches = 0
        for i in range(games):
            player = HiddenPlayer(weighted=weighted, samples=64, playouts=1, seed=i)
            match = play_hidden_match(game, {"candidate": player}, seed=10_000 + i)
            wins += match.goals[0] == 100
            switches += match.joints[2][0] == "switch"
        low, high = interval(wins, games)
        record(
            {
                "mode": "montyhall",
                "player": "weighted belief" if weighted else "each history once",
                "games": games,
                "wins": wins,
                "switches": switches,
                "interval95": [round(100 * low, 1), round(100 * high, 1)],
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("duel")
    d.add_argument("game")
    d.add_argument("player")
    d.add_argument("opponent")
    d.add_argument("--games", type=int, default=40)
    m = sub.add_parser("montyhall")
    m.add_argument("--games", type=int, default=1000)
    sub.add_parser("all")
    args = parser.parse_args()
    if args.mode == "duel":
        duel(args.game, args.player, args.opponent, args.games)
    elif args.mode == "montyhall":
        monty(args.games)
    else:
        monty(1000)
        for name in ("krieg_tictactoe", "fog_breakthrough"):
            duel(name, "hidden", "random", 40)
            duel(name, "duct", "random", 40)
            duel(name, "hidden", "duct", 40)


if __name__ == "__main__":
    main()
