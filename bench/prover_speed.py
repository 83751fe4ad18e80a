"""Random playouts per second on ggp's top-down prover and on ggp-base's ProverStateMachine, same sheets.

    python bench/prover_speed.py --ggp-base /work/peers/ggp-base              # every sheet, 3 repeats
    python bench/prover_speed.py --sheets chess10 --repeats 5 --seconds 20
    GGP_BASE=/path/to/ggp-base python bench/prover_speed.py --label after
    python bench/prover_speed.py --only ggp                                     # ggp alone, no Java

A playout starts from the initial state and plays uniformly random joint moves (each role's legal moves, one
picked at random, then the next state) until the state is terminal, then asks every role's goal. ggp's side
plays :class:`ggp.gdl.prover.ProverGame` (the reasoner :func:`ggp.load` picks for a sheet too large to
ground) through the action core (``legal_actions``, ``apply_actions``, ``is_terminal``, ``goals``);
ggp-base's side is ``bench/ggp_base/ProverSpeed.java`` over its ``ProverStateMachine`` (``getLegalMoves``,
``getNextState``, ``isTerminal``, ``getGoal``), compiled into ``build/ggp_base_bench``.

Each measurement is a fresh process: it loads the sheet (not timed), plays ``--warmup`` seconds of playouts
(not counted: Java's JIT compiles and both provers fill their tables of relations that do not depend on the
state) and then whole playouts for at least ``--seconds`` seconds of its own processor time (a shared
machine changes processor time less than wall time). The two provers alternate, sheet by sheet and repeat by
repeat (who goes first swaps each repeat); the table gives the medians over ``--repeats`` of playouts and of
states (joint moves) per processor second, and the ratio ggp / ggp-base. One JSON line per sheet goes to
``bench/results/prover_speed.jsonl`` with the git commit.

The sheets (:data:`SHEETS`): the corpus sheets that go to the prover (too large to ground), the sheets of
``tests/data/prover`` written to be too large to ground, and a few corpus sheets that ground, played on the
prover all the same (``ProverGame`` directly) to compare the provers where playouts are short.

ggp-base is not part of ggp: build it by its own instructions and give its folder with ``--ggp-base`` or
``$GGP_BASE`` (bench/ggp_base_build.py finds its classes and jars and compiles our ProverSpeed.java against it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ggp_base_build import HELP, compile_ours, default_dir

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("GGP_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "kif"
RESULTS = ROOT / "bench" / "results" / "prover_speed.jsonl"

#: name -> (where the sheet is, why it is here)
SHEETS: dict[str, tuple[Path, str]] = {
    "ruleDepthExponential": (CORPUS / "ruleDepthExponential.kif", "corpus, too large to ground"),
    "amazonsTorus": (CORPUS / "amazonsTorus.kif", "corpus, too large to ground"),
    "chess10": (ROOT / "tests" / "data" / "prover" / "chess10.kif", "ours, too large to ground"),
    "tictactoe": (ROOT / "src" / "ggp" / "gdl" / "tictactoe.kif", "grounds; played on the prover"),
    "connectFour": (CORPUS / "connectFour.kif", "grounds; played on the prover"),
    "breakthroughSmall": (CORPUS / "breakthroughSmall.kif", "grounds; played on the prover"),
}

#: The sheets run when none are named: amazonsTorus is left out (a playout is 80 states of about 4,000 legal
#: moves, minutes of processor time on ggp-base's prover); name it to measure it.
DEFAULT = [name for name in SHEETS if name != "amazonsTorus"]


def child(path: str, warmup: float, seconds: float, seed: int, max_steps: int) -> None:
    """One measurement of ggp's prover (run in a subprocess): prints one JSON line like ProverSpeed.java's."""
    import random

    from ggp.gdl.prover_game import ProverGame

    c0 = time.process_time()
    game = ProverGame(Path(path).read_text(), Path(path).stem)
    load = time.process_time() - c0
    rng = random.Random(seed)
    roles = game.roles
    goal_sum = 0

    def playout() -> int:
        nonlocal goal_sum
        state = game.initial_state()
        steps = 0
        while not game.is_terminal(state) and steps < max_steps:
            actions = []
            for role in roles:
                legal = game.legal_actions(state, role)
                actions.append(int(legal[rng.randrange(len(legal))]))
            state = game.apply_actions(state, actions)
            steps += 1
        if steps < max_steps:
            goal_sum += sum(game.goals(state))
        return steps

    w0 = time.process_time()
    warm = 0
    while time.process_time() - w0 < warmup:
        playout()
        warm += 1
    goal_sum = 0
    wall0 = time.perf_counter()
    m0 = time.process_time()
    playouts = steps = cut = 0
    while True:
        n = playout()
        steps += n
        cut += n >= max_steps
        playouts += 1
        if time.process_time() - m0 >= seconds:
            break
    out = {
        "load_s": load,
        "warmup_playouts": warm,
        "playouts": playouts,
        "steps": steps,
        "cut": cut,
        "goal_sum": goal_sum,
        "cpu_s": time.process_time() - m0,
        "wall_s": time.perf_counter() - wall0,
    }
    print(json.dumps(out))


def measure(side: str, path: Path, args: argparse.Namespace, seed: int, cp: str) -> dict[str, Any]:
    nums = [str(args.warmup), str(args.seconds), str(seed), str(args.max_steps)]
    if side.startswith("ggp") and side != "ggp-base":
        src = str(ROOT / "src") if side == "ggp" else args.before
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path), *nums]
    else:
        env = dict(os.environ)
        cmd = ["java", "-cp", cp, "ProverSpeed", str(path), *nums]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    line = [x for x in done.stdout.splitlines() if x.startswith("{")][-1]
    out: dict[str, Any] = json.loads(line)
    out["playouts_per_s"] = out["playouts"] / out["cpu_s"]
    out["states_per_s"] = out["steps"] / out["cpu_s"]
    return out


def commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src"], cwd=ROOT).returncode != 0
    return head.stdout.strip() + ("+" if dirty else "")


def median(runs: list[dict[str, Any]], field: str) -> float | None:
    values = [r[field] for r in runs if field in r]
    return statistics.median(values) if values else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sheets", default=",".join(DEFAULT), help="comma-separated names of SHEETS, or .kif paths")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0, help="processor seconds measured per run (whole playouts)")
    ap.add_argument("--warmup", type=float, default=2.0, help="processor seconds of playouts before measuring")
    ap.add_argument("--max-steps", type=int, default=10_000, help="a playout longer than this is cut")
    ap.add_argument("--ggp-base", default=default_dir(), help=f"a ggp-base checkout, built ({HELP})")
    ap.add_argument("--only", choices=["ggp", "ggp-base"], default=None)
    ap.add_argument(
        "--before", default=None, metavar="SRC", help="also measure ggp's prover from this src directory (ggp@before)"
    )
    ap.add_argument("--timeout", type=float, default=3600.0, help="wall seconds one run may take")
    ap.add_argument("--label", default="")
    ap.add_argument("--no-record", action="store_true", help="do not append to bench/results/prover_speed.jsonl")
    ap.add_argument(
        "--child", nargs=5, metavar=("PATH", "WARMUP", "SECONDS", "SEED", "MAX_STEPS"), help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.child:
        path, warm, secs, seed, steps = args.child
        child(path, float(warm), float(secs), int(seed), int(steps))
        return

    sides = [args.only] if args.only else ["ggp", "ggp-base"]
    if args.before:
        sides.insert(1, "ggp@before")
    cp = compile_ours(Path(args.ggp_base), "ProverSpeed") if "ggp-base" in sides else ""
    sheets: list[tuple[str, Path]] = []
    for name in args.sheets.split(","):
        if name in SHEETS:
            sheets.append((name, SHEETS[name][0]))
        elif name.endswith(".kif") and Path(name).is_file():
            sheets.append((Path(name).stem, Path(name)))
        else:
            raise SystemExit(f"unknown sheet {name!r}: one of {', '.join(SHEETS)}, or a .kif path")
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {(n, s): [] for n, _ in sheets for s in sides}
    for rep in range(args.repeats):
        for name, path in sheets:
            order = sides if rep % 2 == 0 else sides[::-1]
            for side in order:
                r = measure(side, path, args, 1000 + rep, cp)
                runs[(name, side)].append(r)
                shown = "error: " + " ".join(r["error"]) if "error" in r else f"{r['playouts_per_s']:.2f} playouts/s"
                print(f"  repeat {rep + 1} {name} {side}: {shown}", file=sys.stderr, flush=True)

    code = commit()
    at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    print(f"\nprover speed, commit {code}, medians of {args.repeats} (per processor second)\n")
    print("| sheet | ggp playouts/s | ggp-base playouts/s | ratio | ggp states/s | ggp-base states/s | before |")
    print("|---|---|---|---|---|---|---|")

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.3g}" if x < 100 else f"{x:.0f}"

    for name, _ in sheets:
        ours, theirs = runs.get((name, "ggp"), []), runs.get((name, "ggp-base"), [])
        before = runs.get((name, "ggp@before"), [])
        po, pt = median(ours, "playouts_per_s"), median(theirs, "playouts_per_s")
        so, st = median(ours, "states_per_s"), median(theirs, "states_per_s")
        pb, sb = median(before, "playouts_per_s"), median(before, "states_per_s")
        ratio = po / pt if po and pt else None
        was = f"{f(pb)} playouts/s, {f(sb)} states/s" if before else "-"
        print(f"| {name} | {f(po)} | {f(pt)} | {f(ratio)}{'x' if ratio else ''} | {f(so)} | {f(st)} | {was} |")
        if not args.no_record:
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            row = {
                "at": at,
                "commit": code,
                "label": args.label,
                "sheet": name,
                "seconds": args.seconds,
                "warmup": args.warmup,
                "repeats": args.repeats,
                "ggp_playouts_per_s": po,
                "ggp_base_playouts_per_s": pt,
                "ratio": ratio,
                "ggp_states_per_s": so,
                "ggp_base_states_per_s": st,
                "ggp_runs": ours,
                "ggp_base_runs": theirs,
                "before_src": args.before,
                "ggp_before_playouts_per_s": pb,
                "ggp_before_states_per_s": sb,
                "ggp_before_runs": before,
            }
            with RESULTS.open("a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
