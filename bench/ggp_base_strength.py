"""The general player's strength: against ggp-base's SampleMonteCarloGamer, against the old plain-Python UCT,
on the corpus puzzles, and the speed-up of a second core.

    python bench/ggp_base_strength.py ggp-base                 # 20 games x 2 seats, start 30 s, play 5 s (hours)
    python bench/ggp_base_strength.py ggp-base --games connectFour,hex --play 5
    python bench/ggp_base_strength.py plain --play 1           # ggp host over HTTP: against the plain-Python UCT
    python bench/ggp_base_strength.py plain --play 1 --opponent then   # against mcts as the issue found it
    python bench/ggp_base_strength.py puzzles --start 10 --play 1
    python bench/ggp_base_strength.py cores --seconds 2        # simulations with 2 trees against 1, same clock
    python bench/ggp_base_strength.py ablation --feature decisive --play 0.3   # one search switch on against off
    python bench/ggp_base_strength.py summary                  # the recorded results, per game
    python bench/ggp_base_strength.py prove --games sheepAndWolf --seconds 60   # the exhaustive solver

``ggp-base`` needs an existing ggp-base build, made by ggp-base's own instructions (``--ggp-base`` or
``$GGP_BASE``, default /work/ggp-base; bench/ggp_base_build.py): it starts ``ggp serve SPEC`` once and a fresh
SampleMonteCarloGamer (bench/ggp_base/SampleMonteCarloPlayer.java) for every
match, as HTTP players, and runs each match under
ggp-base's own GameServer (bench/ggp_base/KifMatch.java), seats swapped. Each
match appends a JSON line to bench/results/ggp_base_strength.jsonl (the other
modes: plain_strength.jsonl, puzzle_strength.jsonl, cores_strength.jsonl).
These are benchmarks, not tests: they take minutes to hours.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ggp_base_build import HELP, compile_ours, default_dir

import ggp
from ggp.agents import AGENTS, Agent
from ggp.agents.mcts import MCTSAgent, budget
from ggp.bench.base import UCT_C
from ggp.bench.gdl import _PlainUCT
from ggp.core.game import Game, Move, State
from ggp.protocol import host_match
from ggp.protocol.warmup import run_warm_steps, warm_steps

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CORPUS = HERE.parent.parent / "shared" / "corpus" / "kif"

#: Two-player games of the corpus, by kind. Simultaneous moves, long games and large branching are marked.
GAMES = {
    "connectFour": "turn-taking",
    "breakthroughSmall": "turn-taking",
    "connectFourSimultaneous": "simultaneous",
    "hex": "turn-taking, large branching (81)",
    "knightThrough": "turn-taking, large branching",
    "sheepAndWolf": "turn-taking, asymmetric",
    "battle": "simultaneous, large joint branching",
    "amazons_8x8": "turn-taking, large branching, long",
    "dotsAndBoxes": "turn-taking, large branching (60)",
    "checkersTiny": "turn-taking, long",
    "biddingTicTacToe": "simultaneous",
    "pawnWhopping": "turn-taking",
    "tictactoe_3d_2player": "turn-taking, large branching (64)",
    "quad": "turn-taking, large branching (234)",
    "englishDraughts": "turn-taking, long",
    "gomoku_11x11": "turn-taking, large branching (121), long",
    "blockerSerial": "simultaneous",
    "dualConnect4": "turn-taking",
    "kalaha_2009": "turn-taking, long",
    "nineBoardTicTacToePie": "turn-taking, large branching (81)",
    "chomp": "turn-taking",
    "atariGo_7x7": "turn-taking, large branching (49)",
}

#: The corpus's one-role games, less near-duplicates (three of the four factoring sheets, snake_2008_tweaked,
#: stateSpaceLarge, sudokuGrade6E and 6H, troublemaker02).
PUZZLES = [
    "aipsrovers01",
    "asteroidsParallel",
    "blocksWorld",
    "blocksWorldParallel",
    "blocksWorldSerial",
    "brain_teaser_extended",
    "buttons",
    "circlesolitaire",
    "duplicateStateMedium",
    "factoringEasyTurtleBrain",
    "firefighter",
    "futoshiki4",
    "futoshiki5",
    "hanoi",
    "hanoi_6_disks",
    "haystack",
    "hitori",
    "incredible",
    "knightmove",
    "knightsTour",
    "lightsOn",
    "lightsOnParallel",
    "lightsOnSimul4",
    "mummymaze1p",
    "nonogram_10x10_1",
    "queens",
    "queens12ug",
    "queens31lg",
    "rubiksCubeSuperflip",
    "ruleDepthExponential",
    "slidingpieces",
    "snakeParallel",
    "snake_2008",
    "snake_2009",
    "solitaireChineseCheckers",
    "stateSpaceMedium",
    "sudokuGrade1",
    "sudokuGrade3",
    "survival",
    "tpeg",
    "troublemaker01",
    "twisty-passages",
    "untwistycomplex2",
    "wargame01",
    "zombieAttack1PL6",
]


def sheet(name: str) -> Path:
    path = CORPUS / f"{name}.kif"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: ../shared/corpus must sit beside the repository")
    return path


def code_version() -> str:
    """The commit the run uses, with ``+`` when the agent's files differ from it (or $GGP_BENCH_CODE: a run
    from a frozen copy of the sources, which keeps other edits of the tree out of a long run)."""
    if os.environ.get("GGP_BENCH_CODE"):
        return os.environ["GGP_BENCH_CODE"]
    root = HERE.parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    mine = ["src/ggp/agents", "src/ggp/protocol/player.py"]
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", *mine], cwd=root).returncode != 0
    return head.stdout.strip() + ("+" if dirty else "")


def record(kind: str, row: dict[str, Any]) -> None:
    row.setdefault("code", CODE)
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / f"{kind}_strength.jsonl").open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"nothing listens on port {port} after {seconds:g} s")


def wait_warm(log: Path, seconds: float) -> None:
    """Wait until ``ggp serve`` (logging to ``log``) has compiled its agent's code: a first match played
    meanwhile would measure numba's compiler, not the player (a cold cache takes minutes)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if "warm: " in log.read_text(errors="replace"):
            return
        time.sleep(1.0)
    raise SystemExit(f"ggp serve had not warmed up after {seconds:g} s (see {log})")


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """End a player process: politely, then after 10 s by force."""
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


# --- against ggp-base ------------------------------------------------------------------------------
def run_ggp_base(args: argparse.Namespace) -> None:
    cp = compile_ours(Path(args.ggp_base), "KifMatch", "SampleMonteCarloPlayer")
    games = args.games.split(",") if args.games else list(GAMES)
    logs = RESULTS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    our_port = free_port()
    our_log = logs / f"ggp-serve-{stamp}.log"
    ours = subprocess.Popen(
        [sys.executable, "-m", "ggp", "serve", args.spec, "--port", str(our_port), "--name", "ggp"],
        stdout=subprocess.DEVNULL,
        stderr=our_log.open("w"),
    )
    java: subprocess.Popen[bytes] | None = None
    try:
        wait_port(our_port, 120)
        wait_warm(our_log, 900)
        done = 0
        for name in games:
            roles = ggp.load(str(sheet(name))).roles
            if len(roles) != 2:
                print(f"{name}: {len(roles)} roles, skipped")
                continue
            for seat in args.seats:
                if args.limit is not None and done >= args.limit:
                    return
                # A fresh opponent for every match: one SampleMonteCarloGamer kept over a whole run grew to
                # 7.8 GB and, from the 27th match on, timed out and then stopped answering.
                stop(java)
                their_port = free_port()
                java = subprocess.Popen(
                    ["java", "-cp", cp, "SampleMonteCarloPlayer", str(their_port)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                wait_port(their_port, 60)
                players = []
                for r in range(2):
                    port, who = (our_port, "ggp") if r == seat else (their_port, "SampleMonteCarloGamer")
                    players += ["127.0.0.1", str(port), who]
                began = time.monotonic()
                mark = our_log.stat().st_size
                out = subprocess.run(
                    ["java", "-cp", cp, "KifMatch", str(sheet(name)), str(args.start), str(args.play), *players],
                    capture_output=True,
                    text=True,
                    timeout=args.match_timeout,
                )
                line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
                if line is None:
                    print(f"{name} seat {seat}: no result ({out.stderr.strip()[-300:]})")
                    continue
                result = json.loads(line)
                goals = result["goals"]
                with our_log.open() as fh:
                    fh.seek(mark)
                    tail = fh.read()
                randoms = [int(m) for m in re.findall(r"(\d+) of them random", tail)]
                faults = [f for f in result["faults"] if f["role"].lower() == roles[seat].lower()]
                row = {
                    "game": name,
                    "kind": GAMES.get(name, ""),
                    "seat": seat,
                    "role": roles[seat],
                    "spec": args.spec,
                    "opponent": "SampleMonteCarloGamer",
                    "start_clock": args.start,
                    "play_clock": args.play,
                    "goals": goals,
                    "ours": goals[seat],
                    "theirs": goals[1 - seat],
                    "steps": result["steps"],
                    "our_faults": faults,
                    "their_faults": [f for f in result["faults"] if f not in faults],
                    "our_random_moves": randoms[-1] if randoms else None,
                    "seconds": round(time.monotonic() - began, 1),
                    "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                }
                record("ggp_base", row)
                done += 1
                print(
                    f"{name:24} seat {seat} ({roles[seat]}): {goals[seat]:3} - {goals[1 - seat]:3}, "
                    f"{result['steps']} steps, our faults {len(faults)}, {row['seconds']} s",
                    flush=True,
                )
    finally:
        stop(java)
        stop(ours)


# --- against the old plain-Python UCT -----------------------------------------------------------
class PlainUCTAgent(Agent):
    """The plain-Python decoupled UCT ``mcts`` ran on rule sheets before they were compiled (ggp.bench's baseline)."""

    name = "plainuct"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.seed = seed

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        self.uct = _PlainUCT(game, UCT_C, random.Random(self.seed))

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        legal = self.game.legal_moves(state, self.role)
        if len(legal) == 1:
            return legal[0]
        seconds = budget(None, time_limit) or 1.0
        move, _ = self.uct.best(state, self.role, None, seconds)
        return move


def serve_plain(args: argparse.Namespace) -> None:
    """``ggp serve plainuct``: the plain-Python UCT as a GGP player (its own process, as a real opponent is)."""
    from ggp.protocol import PlayerConfig
    from ggp.protocol.player import serve

    AGENTS["plainuct"] = PlainUCTAgent
    serve(PlayerConfig(spec="plainuct", name="plainuct"), port=args.port)


def opponent_command(opponent: str, port: int) -> tuple[list[str], dict[str, str]]:
    """How to start the plain-Python opponent: ``today`` is the plain UCT of ggp.bench.gdl over today's
    reasoner (``serve-plain``); ``then`` is ``ggp serve mcts`` of the code the general-player issue was
    written against (ggp.bench.then.COMMIT: its plain-Python UCT over its own GDL reasoner)."""
    if opponent == "today":
        return [sys.executable, __file__, "serve-plain", "--port", str(port)], dict(os.environ)
    from ggp.bench import then

    source = then.checkout()
    env = dict(os.environ, PYTHONPATH=str(source / "src"), NUMBA_CACHE_DIR=str(source / "numba"))
    return [sys.executable, "-m", "ggp", "serve", "mcts", "--port", str(port), "--name", opponent_name("then")], env


def opponent_name(opponent: str) -> str:
    from ggp.bench import then

    return "plainuct" if opponent == "today" else f"mcts-{then.COMMIT[:7]}"


def run_plain(args: argparse.Namespace) -> None:
    """``ggp host`` matches over HTTP: ``ggp serve SPEC`` against the plain-Python UCT, each in its own process."""
    games = args.games.split(",") if args.games else list(GAMES)
    ours_port, plain_port = free_port(), free_port()
    logs = RESULTS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    theirs, theirs_env = opponent_command(args.opponent, plain_port)
    our_log = logs / f"plain-ours-{stamp}.log"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ggp", "serve", args.spec, "--port", str(ours_port)],
            stdout=subprocess.DEVNULL,
            stderr=our_log.open("w"),
        ),
        subprocess.Popen(
            theirs,
            env=theirs_env,
            stdout=subprocess.DEVNULL,
            stderr=(logs / f"plain-theirs-{stamp}.log").open("w"),
        ),
    ]
    try:
        wait_port(ours_port, 120)
        wait_port(plain_port, 120)
        wait_warm(our_log, 900)
        _play_plain(args, games, f"http://127.0.0.1:{ours_port}", f"http://127.0.0.1:{plain_port}")
    finally:
        for proc in procs:
            stop(proc)


def _play_plain(args: argparse.Namespace, games: list[str], ours: str, theirs: str) -> None:
    done = 0
    for name in games:
        path = str(sheet(name))
        roles = ggp.load(path).roles
        for seat in args.seats:
            if args.limit is not None and done >= args.limit:
                return
            began = time.monotonic()
            players = {roles[seat]: ours, roles[1 - seat]: theirs}
            rec = host_match(path, players, start_clock=args.start, play_clock=args.play, grace=0.0, seed=done)
            faults = [f.to_dict() for f in rec.all_faults()]
            mine = [f for f in faults if f["role"] == roles[seat]]
            row = {
                "game": name,
                "seat": seat,
                "spec": args.spec,
                "opponent": opponent_name(args.opponent),
                "start_clock": args.start,
                "play_clock": args.play,
                "goals": list(rec.goals),
                "ours": rec.goals[seat],
                "theirs": rec.goals[1 - seat],
                "steps": rec.steps,
                "our_faults": mine,
                "their_faults": [f for f in faults if f not in mine],
                "seconds": round(time.monotonic() - began, 1),
                "when": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            record("plain", row)
            done += 1
            print(
                f"{name:24} seat {seat}: {rec.goals[seat]:3} - {rec.goals[1 - seat]:3}, our faults {len(mine)}, "
                f"theirs {len(faults) - len(mine)}",
                flush=True,
            )


# --- puzzles ---------------------------------------------------------------------------------------
def best_goal(path: Path) -> int:
    """The highest goal value the sheet's goal rules name (an upper bound on what can be reached)."""
    values = [int(v) for v in re.findall(r"\(\s*goal\s+\S+\s+(\d+)\s*\)", path.read_text(errors="replace"))]
    return max(values, default=100)


def run_puzzles(args: argparse.Namespace) -> None:
    names = args.games.split(",") if args.games else PUZZLES
    # The player here is in-process: it compiles what ``ggp serve`` compiles before it says ready, first (on a
    # cold numba cache a first match's start clock compiled it, and its moves came late while it did).
    run_warm_steps(warm_steps([args.spec]), lambda line: print(line, flush=True))
    for name in names:
        path = CORPUS / f"{name}.kif"
        if not path.is_file():
            continue
        try:
            game = ggp.load(str(path))
        except Exception as exc:  # a sheet our loader refuses is reported, not fatal
            print(f"{name}: cannot load: {exc}")
            continue
        if len(game.roles) != 1:
            continue
        began = time.monotonic()
        rec = host_match(str(path), {game.roles[0]: args.spec}, start_clock=args.start, play_clock=args.play, seed=1)
        row = {
            "game": name,
            "spec": args.spec,
            "start_clock": args.start,
            "play_clock": args.play,
            "goal": rec.goals[0],
            "best": best_goal(path),
            "steps": rec.steps,
            "faults": [f.to_dict() for f in rec.all_faults()],
            "seconds": round(time.monotonic() - began, 1),
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        record("puzzle", row)
        print(f"{name:28} goal {rec.goals[0]:3} of {row['best']:3}, {rec.steps} steps, {row['seconds']} s", flush=True)


# --- two cores -------------------------------------------------------------------------------------
def run_cores(args: argparse.Namespace) -> None:
    names = args.games.split(",") if args.games else ["connectFour", "breakthroughSmall", "amazons_8x8", "wallmaze"]
    for name in names:
        game = ggp.load(name if name in ggp.game_names() else str(sheet(name)))
        state = game.initial_state()
        counts: dict[int, list[int]] = {1: [], 2: []}
        # CPU seconds the process got per wall second: how many cores the machine's load left us.
        cores: dict[int, list[float]] = {1: [], 2: []}
        agents = {}
        for threads in (1, 2):
            # The trees' parallelism alone: with the exhaustive solver on, the solver takes a thread of its own
            # beside one tree, and in place of the second, so both settings would use both cores.
            agents[threads] = agent = MCTSAgent(threads=threads, seed=1, ponder=False, dfs=False)
            agent.start(game, game.roles[0])
        for _ in range(args.repeats):
            for threads in (1, 2):  # alternated, so both see the same load
                cpu, wall = time.process_time(), time.perf_counter()
                result = agents[threads]._parallel(state, args.seconds)
                cores[threads].append((time.process_time() - cpu) / (time.perf_counter() - wall))
                counts[threads].append(result.simulations)
                agents[threads]._trees[0].reset(state)
                for t in agents[threads]._trees:
                    t.reset(state)
        one, two = statistics.median(counts[1]), statistics.median(counts[2])
        plain = _PlainUCT(game, UCT_C, random.Random(1))
        _, plain_sims = plain.best(state, game.roles[0], None, min(args.seconds, 1.0))
        plain_rate = plain_sims / min(args.seconds, 1.0)
        row = {
            "game": name,
            "seconds": args.seconds,
            "repeats": args.repeats,
            "sims_1_thread": counts[1],
            "sims_2_threads": counts[2],
            "speedup": round(two / max(one, 1), 2),
            "cores_got_1_thread": round(statistics.median(cores[1]), 2),
            "cores_got_2_threads": round(statistics.median(cores[2]), 2),
            # Simulations per CPU second, 2 threads against 1: the parallel efficiency, whatever the load.
            "efficiency": round((two / statistics.median(cores[2])) / max(one / statistics.median(cores[1]), 1e-9), 2),
            "sims_per_s_2_threads": round(two / args.seconds),
            "plain_sims_per_s": round(plain_rate),
            "vs_plain": round(two / args.seconds / max(plain_rate, 1e-9), 1),
            "load": os.getloadavg()[0],
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        record("cores", row)
        print(
            f"{name:20} 1 thread {one:>10,.0f}  2 threads {two:>10,.0f}  x{row['speedup']} (cores got "
            f"{row['cores_got_1_thread']} / {row['cores_got_2_threads']}, efficiency {row['efficiency']})  "
            f"plain {plain_rate:,.0f}/s (compiled x{row['vs_plain']}), load {row['load']:.1f}",
            flush=True,
        )


# --- the exhaustive solver from the initial position ----------------------------------------------
def run_prove(args: argparse.Namespace) -> None:
    """The exhaustive depth-first solver (ggp.agents.solver) from each game's initial position, for up to
    ``--seconds`` of processor time: the proven goals, or how far it got."""
    from ggp.agents.solver import SEARCHING, DFSolver

    for name in args.games.split(",") if args.games else ["sheepAndWolf"]:
        game = ggp.load(str(sheet(name)))
        solver = DFSolver(game)
        solver.reset(game.initial_state())
        solver.run(1)  # compiles, or loads numba's cache, outside the clock
        began, expansions = time.process_time(), 1
        while solver.status == SEARCHING and time.process_time() - began < args.seconds:
            expansions += solver.run(50_000)
        cpu = time.process_time() - began
        value = solver.value()
        what = f"proven: goals {dict(zip(game.roles, value, strict=True))}" if value else f"status {solver.status}"
        print(
            f"{name:24} {what}; {solver.positions:,} positions in the table, {expansions:,} expansions, "
            f"{cpu:.1f} s of processor time",
            flush=True,
        )


# --- one search feature on against off ------------------------------------------------------------
#: The MCTSAgent class attributes ``ablation`` can turn off (a switch of the search, not an agent option).
FEATURES = ("transpose", "decisive", "goal_heuristic", "batched")


def run_ablation(args: argparse.Namespace) -> None:
    """Self-play in one process: ``mcts`` with ``--feature`` on against the same player with it off, seats
    swapped, ``--play`` seconds a move, one thread each (they take turns, so neither waits for a core)."""
    feature = args.feature
    games = args.games.split(",") if args.games else ["connectFour", "breakthroughSmall", "knightThrough"]
    on = type("On", (MCTSAgent,), {feature: True})
    off = type("Off", (MCTSAgent,), {feature: False})
    total: list[float] = []
    for name in games:
        game = ggp.load(name) if name in ggp.game_names() else ggp.load(str(sheet(name)))
        scores = []
        for rnd in range(args.rounds):
            for seat in range(len(game.roles)):
                agents: list[Agent] = []
                for r, role in enumerate(game.roles):
                    cls = on if r == seat else off
                    agent = cls(time=args.play, threads=1, ponder=False, seed=100 * rnd + r)
                    agent.start(game, role)
                    agents.append(agent)
                state, steps = game.initial_state(), 0
                while not game.is_terminal(state):
                    state = game.next_state(state, [a.select_move(state) for a in agents])
                    steps += 1
                goals = list(game.goals(state))
                row = {
                    "game": name,
                    "feature": feature,
                    "seat": seat,
                    "goals": goals,
                    "ours": goals[seat],
                    "theirs": max(g for r, g in enumerate(goals) if r != seat),
                    "steps": steps,
                    "play_clock": args.play,
                    "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                }
                record("ablation", row)
                scores.append(_score(row))
        total += scores
        print(f"{name:24} {feature} on: {statistics.mean(scores):5.1f} over {len(scores)} matches", flush=True)
    print(f"all: {feature} on scores {statistics.mean(total):.1f} over {len(total)} matches", flush=True)


def run_summary(args: argparse.Namespace) -> None:
    path = RESULTS / f"{args.of}_strength.jsonl"
    if not path.is_file():
        raise SystemExit(f"no {args.of} results yet")
    rows = [json.loads(line) for line in path.open() if line.strip()]
    if args.play is not None:
        rows = [r for r in rows if r["play_clock"] == args.play]
    if args.since:  # one run, or the runs of one version of the code, alone
        rows = [r for r in rows if r["when"] >= args.since]
    if args.code:
        rows = [r for r in rows if str(r.get("code", "")).startswith(args.code)]
    if args.of == "plain":
        rows = [r for r in rows if r.get("opponent", "plainuct") == opponent_name(args.opponent)]
    by_game: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_game.setdefault(r["game"], []).append(r)
    scores = []
    for name, rs in by_game.items():
        ours = [_score(r) for r in rs]
        scores += ours
        faults = sum(len(r.get("our_faults", ())) for r in rs)
        theirs = sum(len(r.get("their_faults", ())) for r in rs)
        print(
            f"{name:24} {len(rs)} matches, mean score {statistics.mean(ours):5.1f}, our faults {faults}"
            + (f", the opponent's faults {theirs}" if theirs else "")
        )
    if scores:
        print(f"all: {len(scores)} matches, mean score {statistics.mean(scores):.1f}")
    spoilt = sum(1 for r in rows if r.get("their_faults"))
    if spoilt:
        print(f"{spoilt} of them with faults of the opponent's: a win over a player that did not answer says little")


def _score(row: dict[str, Any]) -> float:
    """A win 100, a draw 50, a loss 0 (by the goals of the two seats)."""
    return 100.0 if row["ours"] > row["theirs"] else 50.0 if row["ours"] == row["theirs"] else 0.0


CODE = ""


def main() -> None:
    global CODE
    CODE = code_version()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "mode", choices=["ggp-base", "plain", "puzzles", "cores", "ablation", "summary", "serve-plain", "prove"]
    )
    ap.add_argument("--port", type=int, default=9150, help="serve-plain: the port to listen on")
    ap.add_argument(
        "--of", default="ggp_base", choices=["ggp_base", "plain", "ablation"], help="summary: which results"
    )
    ap.add_argument(
        "--opponent",
        choices=["today", "then"],
        default="today",
        help="plain: the plain-Python UCT over today's reasoner, or mcts of the code the issue was written against",
    )
    ap.add_argument("--feature", choices=FEATURES, default="decisive", help="ablation: the switch to compare")
    ap.add_argument("--rounds", type=int, default=2, help="ablation: matches per seat and game")
    ap.add_argument("--games", help="comma-separated corpus names (default: the mode's list)")
    ap.add_argument("--spec", default="mcts", help="our agent spec (default mcts)")
    ap.add_argument("--start", type=float, default=30.0, help="start clock, s (ggp-base: whole seconds)")
    ap.add_argument("--play", type=float, default=None, help="play clock, s (default 5)")
    ap.add_argument("--seats", default="0,1", help="our seats to play (default 0,1)")
    ap.add_argument("--limit", type=int, help="stop after this many matches")
    ap.add_argument("--match-timeout", type=float, default=3600.0)
    ap.add_argument("--ggp-base", default=default_dir(), help=f"a ggp-base checkout, built ({HELP})")
    ap.add_argument("--since", help="summary: only matches from this time on ('2026-11-22 22:30')")
    ap.add_argument("--code", help="summary: only matches of this code version (a commit's prefix)")
    ap.add_argument("--seconds", type=float, default=2.0, help="cores: search time per measurement; prove: limit")
    ap.add_argument("--repeats", type=int, default=5, help="cores: measurements per setting (median)")
    args = ap.parse_args()
    args.seats = [int(s) for s in args.seats.split(",")]
    if args.mode == "summary":
        run_summary(args)
        return
    if args.mode == "serve-plain":
        serve_plain(args)
        return
    if args.mode == "prove":
        run_prove(args)
        return
    if args.play is None:
        args.play = 5.0
    if args.mode == "ggp-base":
        args.start, args.play = int(args.start), int(args.play)  # ggp-base's clocks are whole seconds
        run_ggp_base(args)
    elif args.mode == "plain":
        run_plain(args)
    elif args.mode == "puzzles":
        run_puzzles(args)
    elif args.mode == "ablation":
        run_ablation(args)
    else:
        run_cores(args)


if __name__ == "__main__":
    main()
