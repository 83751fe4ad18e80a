"""Tournament throughput on the Ray backend against the local process pool, and the driver's SQLite write rate.

    python bench/ray_backend.py [--repeats 3] [--cpus 2] [--label NAME] [--out FILE] [--quick]

For each workload (short ``random`` matches of wallmaze, and ``mcts:sims=1000``
Amazons 8x8 matches of about a second of CPU each) and each backend (``local``:
the worker processes of ``ggp tournament``; ``ray``: Ray actors on a local Ray
instance of ``--cpus`` CPUs, started once), a fresh tournament database runs
with 1 and with 2 workers. Throughput is the matches stored per second from
the moment every worker is ready (the first match sent, every actor warmed up)
to the last result, so worker start-up (the forkserver's preload, an actor's
warm-up) is left out; every configuration runs ``--repeats`` times,
interleaved, and the median is quoted with the load average (on a shared
machine the second CPU may not be free). Then:

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
import itertools
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
#: mcts searches its start clock away (time, not work): a short one keeps the matches mostly CPU-bound.
WORKLOADS = [
    ("wallmaze random", "wallmaze", ["random:seed=1", "random:seed=2"], 60, 5.0, 5.0),
    ("amazons_8x8 mcts:sims=1000", "amazons_8x8", ["mcts:sims=1000,seed=1", "mcts:sims=1000,seed=2"], 6, 0.5, 30.0),
]
#: Slack past a clock: room for a fresh local worker to load numba's cache during a short start clock.
GRACE = 5.0


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
        ready: list[float] = []
        done: list[float] = []

        worker_of: dict[int, int] = {}

        def on_event(event: RunEvent) -> None:
            if event.kind == "done" and event.match_id is not None and event.pid is not None:
                worker_of[event.match_id] = event.pid
            if event.kind == "started" and not first_sent:
                first_sent.append(time.perf_counter())
            elif event.kind == "worker":  # a Ray actor has warmed up
                ready.append(time.perf_counter())
            elif event.kind == "done":
                done.append(time.perf_counter())

        began = time.perf_counter()
        summary = run_tournament(path, workers=workers, backend=backend, on_event=on_event)
        wall = time.perf_counter() - began
        if summary.finished != matches:
            raise SystemExit(f"{backend} x{workers}: {summary.finished} of {matches} matches finished")
        with TournamentDB(path, create=False) as db:
            faults = sum(int(r["faults"]) for r in db.results())
            records = {row.id: db.record(row.id) for row in db.matches()}
        gap, overhead = idle_gaps(records, worker_of)
        # Steady state: from the moment every worker is ready (a Ray actor warming up takes CPU from the
        # others) to the last result; the matches stored before that moment are not counted.
        t0 = max([first_sent[0], *ready[:workers]])
        counted = [t for t in done if t > t0]
        busy = done[-1] - t0
        return {
            "matches": matches,
            "counted": len(counted),
            "busy_s": busy,
            "wall_s": wall,
            "rate": len(counted) / busy,
            "faults": faults,
            "load": os.getloadavg()[0],
            "gap_ms": gap,
            "idle_share": overhead,
        }


def idle_gaps(records: dict[int, Any], worker_of: dict[int, int]) -> tuple[float, float]:
    """A worker's idle time between matches: the median gap (ms) from a match's end to its next match's start,
    and the share of the workers' time spent so (the backend's overhead, as the workers see it).

    Read from the records' own start and end times (the worker's clock), so the load on the machine,
    which slows every match alike, barely moves it.
    """
    from datetime import datetime

    spans: dict[int, list[tuple[float, float]]] = {}
    for match_id, record in records.items():
        start = datetime.fromisoformat(record.started).timestamp()
        end = datetime.fromisoformat(record.finished).timestamp()
        spans.setdefault(worker_of[match_id], []).append((start, end))
    gaps, busy = [], 0.0
    for seq in spans.values():
        seq.sort()
        busy += sum(end - start for start, end in seq)
        gaps += [max(0.0, nxt[0] - cur[1]) for cur, nxt in itertools.pairwise(seq)]
    if not gaps:
        return float("nan"), float("nan")
    return 1000 * statistics.median(gaps), sum(gaps) / (sum(gaps) + busy)


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
    parser.add_argument("--only", default="", help="only the workloads whose name contains this")
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
            if args.only not in name:
                continue
            games = 2 if args.quick else games
            # One match here first: numba's on-disk cache then holds every compiled function the workers load.
            record, _ = play_one(load(game), specs, seed=0, start_clock=None, play_clock=None)
            rates: dict[tuple[str, int], list[float]] = {}
            idle: dict[tuple[str, int], list[float]] = {}
            for rep in range(repeats):
                for backend in ("local", "ray"):
                    for workers in (1, 2):
                        res = one_run(game, specs, games, (start_clock, play_clock), backend, workers)
                        rates.setdefault((backend, workers), []).append(res["rate"])
                        idle.setdefault((backend, workers), []).append(res["idle_share"])
                        line = {**base, "workload": name, "backend": backend, "workers": workers, "repeat": rep, **res}
                        lines.append(line)
                        print(
                            f"{name:28} {backend:5} x{workers}: {res['counted']} of {res['matches']} matches in "
                            f"{res['busy_s']:.2f} s = {res['rate']:.2f}/s (wall {res['wall_s']:.1f} s, "
                            f"{res['faults']} faults, load {res['load']:.1f}); a worker idles "
                            f"{res['gap_ms']:.1f} ms between matches (median), {100 * res['idle_share']:.1f}% "
                            "of its time",
                            flush=True,
                        )
            med = {key: statistics.median(v) for key, v in rates.items()}
            summary = {
                **base,
                "workload": name,
                "figure": "summary",
                "repeats": repeats,
                "median_rate": {f"{b}x{w}": r for (b, w), r in med.items()},
                "median_idle_share": {f"{b}x{w}": statistics.median(v) for (b, w), v in idle.items()},
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
                f"local {summary['scaling_local']:.2f}x; workers idle between matches (median share): "
                + ", ".join(f"{k} {100 * v:.1f}%" for k, v in summary["median_idle_share"].items()),
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
