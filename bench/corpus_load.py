"""How long every rule sheet of the GDL corpus takes to load, and how much memory.

    python bench/corpus_load.py [--timeout 60] [--jobs 1] [--label NAME] [--out FILE] [SHEET ...]

Each sheet of ``../shared/corpus/kif`` (or just the SHEETs named) is loaded in
a subprocess of its own, so that one sheet's memory, crash or timeout touches
no other: the seconds to parse, ground and build the propnet (and the
processor time of the whole load, which a busy machine changes less), the peak
resident memory of the process (the interpreter and numba included, about
150 MB before any sheet), and the sizes of what was built. A sheet too large
to ground is timed as ``ggp.load`` loads it: grounding until it gives up, then
the top-down prover (``engine``: ``prover``). Prints a table and
the median load time, and appends one JSON line per sheet to
``bench/results/corpus_load.jsonl`` (``--label`` tags a run: before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ggp.bench.startup import run_child

SHARED = Path(os.environ.get("GGP_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = SHARED / "corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "corpus_load.jsonl"


def child(path: str) -> None:
    """Load one sheet and print its figures as one JSON line (run in the subprocess)."""
    from ggp.gdl.grounder import GroundingTooLarge, ground
    from ggp.gdl.parser import parse_program
    from ggp.gdl.propnet import build_propnet
    from ggp.gdl.prover_game import ProverGame

    text = Path(path).read_text(encoding="utf-8")
    out: dict[str, Any] = {"status": "ok"}
    cpu = time.process_time()
    stage = "parse"
    try:
        t = time.perf_counter()
        program = parse_program(text, Path(path).stem)
        out["parse_s"] = time.perf_counter() - t
        stage = "ground"
        t = time.perf_counter()
        try:
            gp = ground(program)
        except GroundingTooLarge:  # as ggp.load does: the top-down prover plays it
            out["ground_s"] = time.perf_counter() - t
            out["engine"] = "prover"
            stage = "prover"
            t = time.perf_counter()
            ProverGame(text, Path(path).stem, program=program)
            out["build_s"] = time.perf_counter() - t
            out["cpu_s"] = time.process_time() - cpu
            print(json.dumps(out), flush=True)
            return
        out["engine"] = "propnet"
        out["ground_s"] = time.perf_counter() - t
        out["ground_rules"] = len(gp.rules)
        out["atoms"] = sum(len(rows) for rows in gp.dynamic.values()) + sum(len(r) for r in gp.static.values())
        stage = "build"
        t = time.perf_counter()
        pn = build_propnet(gp, program)
        out["build_s"] = time.perf_counter() - t
        out["base"] = pn.num_base
        out["gates"] = pn.num_gates
    except Exception as exc:  # a figure for the table, whatever went wrong
        out["status"] = f"error in {stage}"
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    out["cpu_s"] = time.process_time() - cpu
    print(json.dumps(out), flush=True)


def run_one(name: str, timeout: float) -> dict[str, Any]:
    """Load ``name`` in a subprocess (:func:`ggp.bench.startup.run_child`), killed after ``timeout`` seconds;
    its figures and peak memory."""
    run = run_child([__file__, "--child", str(CORPUS / "kif" / f"{name}.kif")], timeout=timeout)
    result: dict[str, Any] = {"sheet": name, "wall_s": round(run.wall, 3)}
    if run.returncode == 0 and run.lines:
        for line in run.lines:
            result.update(line)
    elif run.timed_out:
        result["status"] = "timeout"
        if run.peak_mb is not None:
            result["peak_mb"] = run.peak_mb
    else:
        result["status"] = f"crashed (exit {run.returncode})"
        result["error"] = run.error[:300]
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sheets", nargs="*", help="sheet names (default: every sheet of the corpus)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per sheet before it is killed")
    ap.add_argument("--jobs", type=int, default=1, help="sheets loaded at once (timings are truer with 1)")
    ap.add_argument("--label", default="", help="a tag stored with every result line (before, after, ...)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="JSON lines are appended here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"peak_mb": round(peak_mb, 1)}), flush=True)
        return
    names = args.sheets or sorted(p.stem for p in (CORPUS / "kif").glob("*.kif"))
    head = f"{'sheet':34} {'status':14} {'parse':>6} {'ground':>7} {'build':>6} {'total':>7} {'cpu':>6} {'peak MB':>8} {'gates':>8}"
    print(head)
    print("-" * len(head))
    results: list[dict[str, Any]] = []
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")

    def show(r: dict[str, Any]) -> None:
        parts = [r.get(k) for k in ("parse_s", "ground_s", "build_s")]
        total = sum(p for p in parts if p is not None) if r.get("status") == "ok" else None
        r["load_s"] = round(total, 3) if total is not None else None

        def f(x: Any, w: int, p: int = 2) -> str:
            return f"{x:{w}.{p}f}" if isinstance(x, float | int) else " " * (w - 1) + "-"

        print(
            f"{r['sheet']:34} {r['status'][:14]:14} {f(r.get('parse_s'), 6)} {f(r.get('ground_s'), 7)} "
            f"{f(r.get('build_s'), 6)} {f(total, 7)} {f(r.get('cpu_s'), 6)} {f(r.get('peak_mb'), 8, 0)} {r.get('gates', '-'):>8}"
            + (f"  {r['error'][:100]}" if r.get("error") else ""),
            flush=True,
        )

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(lambda n: run_one(n, args.timeout), names):
            show(r)
            results.append(r)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as fh:
        for r in results:
            fh.write(json.dumps({"label": args.label, "at": stamp, "timeout_s": args.timeout, **r}) + "\n")
    loads = [r["load_s"] for r in results if r.get("load_s") is not None]
    # a sheet that did not load counts as slower than every sheet that did
    ranked = sorted(loads) + [float("inf")] * (len(results) - len(loads))
    median = statistics.median(ranked) if ranked else float("nan")
    slow = sum(1 for x in loads if x > 30)
    print(
        f"\n{len(loads)}/{len(results)} sheets loaded; median load {median:.2f} s (failures counted as slowest); "
        f"{slow} loaded but took over 30 s; max peak {max((r.get('peak_mb') or 0) for r in results):.0f} MB"
    )


if __name__ == "__main__":
    main()
