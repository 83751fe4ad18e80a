"""Tournament throughput on the Ray backend against the local process pool, and the driver's SQLite write rate.

    python bench/ray_backend.py [--repeats 3] [--cpus 2] [--label NAME] [--out FILE] [--quick]

For each workload (short ``random`` matches of wallmaze, and ``mcts:sims=200``
Amazons 8x8 matches of a few seconds each) and each backend (``local``: the
worker processes of ``ggp tournament``; ``ray``: Ray actors on a local Ray
instance of ``--cpus`` CPUs, started once), a fresh tournament database runs
with 1 and with 2 workers. Throughput is matches per second from the first
match sent to the last one stored, so worker start-up (the forkserver's
preload, an actor's warm-up) is left out; every configuration runs
``--repeats`` times and the median is quoted. Then:

* Ray's overhead at 2 workers: ``1 - ray / local`` throughput (the target is
  at most 10% for matches of a second or more);
* scaling from 1 to 2 workers: ``2 workers / 1 worker`` throughput (the target
  is at least 1.8x);
* the driver's SQLite writes: matches stored per second one at a time (claim,
  then result and status in one transaction, as the runner does) and in
  batches of 100 per transaction (what a driver for 100 nodes would do; see
  docs/ray.md).

Appends one JSON line per figure to ``bench/results/ray_backend.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "ray_backend.jsonl"

#: (name, game, agents, games per pair and seating, start clock, play clock): two agents make 2 * games matches.
#: mcts searches its start clock away (time, not work): a short one keeps the matches CPU-bound.
WORKLOADS = [
    ("wallmaze random", "wallmaze", ["random:seed=1", "random:seed=2"], 60, 5.0, 5.0),
    ("amazons_8x8 mcts:sims=1000", "amazons_8x8", ["mcts:sims=1000,seed=1", "mcts:sims=1000,seed=2"], 4, 0.1, 30.0),
]
#: Slack past a clock: room for a fresh local worker to load numba's cache during a 0.1 s start clock.
GRACE = 2.0


def one_run(
    game: str, specs: list[str], games: int, clocks: tuple[float, float], backend: str, workers: int
) -> dict[str, Any]:
    """One tournament on a fresh database; returns its throughput and timings."""
    from ggp.match.tournament import RunEvent, Settings, TournamentDB, run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.sqlite"
        with TournamentDB(path) as db:
            db.init_settings(Settings(game=game, start_clock=clocks[0], play_clock=clocks[1], grace=GRACE, seed=1))
            matches = db.schedule(specs, games)
        first_sent: list[float] = []
        last_done: list[float] = []

        def on_event(event: RunEvent) -> None:
            if event.kind == "started" and not first_sent:
                first_sent.append(time.perf_counter())
            elif event.kind == "done":
                last_done[:] = [time.perf_counter()]

        began = time.perf_counter()
        summary = run_tournament(path, workers=workers, backend=backend, on_event=on_event)
        wall = time.perf_counter() - began
        if summary.finished != matches:
            raise SystemExit(f"{backend} x{workers}: {summary.finished} of {matches} matches finished")
        with TournamentDB(path, create=False) as db:
            faults = sum(int(r["faults"]) for r in db.results())
        busy = last_done[0] - first_sent[0]
        return {"matches": matches, "busy_s": busy, "wall_s": wall, "rate": matches / busy, "faults": faults}


def sqlite_rates(record_json: str, count: int, batch: int) -> dict[str, float]:
    """Matches stored per second by the runner's own calls, and with ``batch`` results per transaction."""
    from ggp.match.record import MatchRecord
    from ggp.match.tournament import Settings, TournamentDB

    record = MatchRecord.from_json(record_json)
    specs = [f"random:seed={i}" for i in range(1, 12)]  # 11 agents, 110 matches per game index
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.sqlite"
        with TournamentDB(path) as db:
            db.init_settings(Settings(game=record.game, start_clock=1.0, play_clock=1.0))
            db.schedule(specs, -(-2 * count // 110))
            ids = [row.id for row in db.matches()][: 2 * count]
            t = time.perf_counter()
            for match_id in ids[:count]:
                db.claim(match_id, "bench")
                db.finish(match_id, "bench", record)
            out["single_per_s"] = count / (time.perf_counter() - t)
            text = record.to_json(compact=True)
            t = time.perf_counter()
            rest = ids[count:]
            for start in range(0, len(rest), batch):
                chunk = rest[start : start + batch]
                with db.transaction() as conn:
                    conn.executemany(
                        "UPDATE matches SET status = 'running', starts = starts + 1, claimed_by = 'bench'"
                        " WHERE id = ? AND status = 'pending'",
                        [(i,) for i in chunk],
                    )
                    conn.executemany(
                        "UPDATE matches SET status = 'done' WHERE id = ? AND status = 'running' AND claimed_by = 'bench'",
                        [(i,) for i in chunk],
                    )
                    conn.executemany(
                        "INSERT INTO results (match_id, goal_a, goal_b, steps, faults, record, finished_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(i, record.goals[0], record.goals[1], record.steps, 0, text, record.finished) for i in chunk],
                    )
            out["batched_per_s"] = len(rest) / (time.perf_counter() - t)
            out["record_bytes"] = float(len(text))
    # The driver also reads back and verifies (replays) every record before storing it.
    t = time.perf_counter()
    n = max(10, count // 20)
    for _ in range(n):
        MatchRecord.from_json(text, verify=True)
    out["verify_per_s"] = n / (time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--quick", action="store_true", help="one repeat of a few matches: a smoke run")
    args = parser.parse_args()
    if not 1 <= args.repeats <= 20 or not 1 <= args.cpus <= 64:
        parser.error("--repeats is 1 to 20, --cpus 1 to 64")
    import ray

    from ggp.match.series import play_one
    from ggp.registry import load

    repeats = 1 if args.quick else args.repeats
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    lines: list[dict[str, Any]] = []
    base = {"label": args.label, "at": stamp, "machine": platform.node(), "cpus_seen": os.cpu_count()}
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        for name, game, specs, games, start_clock, play_clock in WORKLOADS:
            games = 2 if args.quick else games
            # One match here first: numba's on-disk cache then holds every compiled function the workers load.
            record, _ = play_one(load(game), specs, seed=0, start_clock=None, play_clock=None)
            rates: dict[tuple[str, int], list[float]] = {}
            for rep in range(repeats):
                for backend in ("local", "ray"):
                    for workers in (1, 2):
                        res = one_run(game, specs, games, (start_clock, play_clock), backend, workers)
                        rates.setdefault((backend, workers), []).append(res["rate"])
                        line = {**base, "workload": name, "backend": backend, "workers": workers, "repeat": rep, **res}
                        lines.append(line)
                        print(
                            f"{name:28} {backend:5} x{workers}: {res['matches']} matches in {res['busy_s']:.2f} s "
                            f"= {res['rate']:.2f}/s (wall {res['wall_s']:.1f} s, {res['faults']} faults)",
                            flush=True,
                        )
            med = {key: statistics.median(v) for key, v in rates.items()}
            summary = {
                **base,
                "workload": name,
                "figure": "summary",
                "repeats": repeats,
                "median_rate": {f"{b}x{w}": r for (b, w), r in med.items()},
                "ray_overhead_2": 1 - med[("ray", 2)] / med[("local", 2)],
                "ray_overhead_1": 1 - med[("ray", 1)] / med[("local", 1)],
                "scaling_ray": med[("ray", 2)] / med[("ray", 1)],
                "scaling_local": med[("local", 2)] / med[("local", 1)],
                "seconds_per_match_1": 1 / med[("local", 1)],
            }
            lines.append(summary)
            print(
                f"{name}: medians of {repeats} (matches/s) local x1 {med[('local', 1)]:.2f}, x2 "
                f"{med[('local', 2)]:.2f}; ray x1 {med[('ray', 1)]:.2f}, x2 {med[('ray', 2)]:.2f}; "
                f"Ray overhead at 2 workers {100 * summary['ray_overhead_2']:+.1f}% (at 1: "
                f"{100 * summary['ray_overhead_1']:+.1f}%); scaling 1->2: ray {summary['scaling_ray']:.2f}x, "
                f"local {summary['scaling_local']:.2f}x",
                flush=True,
            )
            if name.startswith("amazons"):
                db = sqlite_rates(record.to_json(compact=True), 200 if args.quick else 2000, 100)
                lines.append({**base, "workload": "sqlite driver writes", "figure": "sqlite", **db})
                print(
                    f"driver SQLite writes ({db['record_bytes']:.0f}-byte records): {db['single_per_s']:.0f} "
                    f"matches/s one per transaction, {db['batched_per_s']:.0f}/s in batches of 100; "
                    f"records verified: {db['verify_per_s']:.0f}/s",
                    flush=True,
                )
    finally:
        ray.shutdown()
    if not args.quick:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as fh:
            for line in lines:
                fh.write(json.dumps(line) + "\n")
        print(f"appended {len(lines)} lines to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
