"""The general player against Sancho 1.61c (IGGPC 2014 champion) and its plain-UCT MctsRefGamer, in full GGP
matches refereed by ggp-base's GameServer (issue 30).

    python bench/sancho_strength.py sancho                       # the list x seats, start 30 s, play 5 s (hours)
    python bench/sancho_strength.py sancho --games connectFour,hex --limit 2
    python bench/sancho_strength.py mctsref --games breakthroughSmall
    python bench/sancho_strength.py puzzles --games hanoi,queens  # each player alone on the one-role puzzles
    python bench/sancho_strength.py summary [--opponent mctsref] [--since '2026-11-28 00:00'] [--code c8357b6]
    python bench/sancho_strength.py summary --latest [--opponent mctsref]  # each game and seat's latest match
    python bench/sancho_strength.py trace --games knightThrough  # Sancho's own score of its moves, turn by turn

Two builds made by hand, by their own projects' instructions, neither in this repository (bench/SANCHO.md):

* ggp-base (ggp-org/ggp-base; ``--ggp-base DIR`` or ``$GGP_BASE``, default /work/ggp-base): its GameServer
  referees every match (bench/ggp_base/KifMatch.java, compiled into build/ggp_base_bench, as for
  bench/ggp_base_strength.py);
* Sancho's fork of ggp-base (SanchoGGP/ggp-base; ``--sancho DIR`` or ``$SANCHO``, default /work/peers/sancho),
  its classes in ``bin`` as its build.xml leaves them: bench/ggp_base/sancho/SanchoPlayer.java starts its
  gamer; it is compiled against the fork alone, into build/sancho_bench (ignored by git), so the two
  ggp-bases never meet on one class path.

Every match starts fresh peer JVMs (one per seat the peer holds) in an empty working folder of their own
under ``--work`` (Sancho reads learned data and writes its logs in its working folder; an empty one means it
plays from the rules alone), and one ``ggp serve SPEC`` serves the whole run (default
``mcts:threads=1``: one search thread, thinking between messages as Sancho's search thread does). Each match
appends one JSON line to bench/results/sancho_strength.jsonl (puzzles: sancho_puzzle_strength.jsonl).

A match is *spoilt* by the peer when the server recorded a fault of its (timeout, illegal move, connection
error: the server then plays a random legal move for it), or when the final score the peer logged for itself
disagrees with the server's goals (it misread the sheet). ``summary`` counts spoilt matches apart and leaves
them out of the mean.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import ggp_base_strength as gbs
from ggp_base_build import HELP, compile_java, compile_ours, default_dir
from ggp_base_strength import free_port, sheet, stop, wait_port

import ggp

ROOT = Path(__file__).resolve().parents[1]
RESULTS = gbs.RESULTS
#: Our programs that use Sancho's fork as a library, and where they are compiled to.
SANCHO_SOURCES = ROOT / "bench" / "ggp_base" / "sancho"
SANCHO_OURS = ROOT / "build" / "sancho_bench"
SANCHO_HELP = (
    "needs an existing build of Sancho (SanchoGGP/ggp-base): build it by its own instructions (its build.xml "
    "compiles src into bin), then pass its folder as --sancho or $SANCHO"
)
#: The JVM options of Sancho's own launch script (jobs/sancho.cmd); G1 is the default collector of Java 17 anyway.
SANCHO_JVM = ["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=800", "-XX:+ExplicitGCInvokesConcurrent"]
_SANCHO_MARKER = Path("org/ggp/base/player/gamer/statemachine/sancho/Sancho.class")

#: Our game list: public corpus games, by kind, in the order a partial run plays them. Two-player games count in the
#: mean; games of three or more roles are reported apart. Every game here had Sancho answer START within a 30 s
#: start clock at load 7 to 11 on the 2 shared cores (2026-11-28); REPLACED lists those that did not.
GAMES = {
    "breakthroughSmall": "turn-taking, race, branching ~20",
    "connectFour": "turn-taking, small branching (7)",
    "knightThrough": "turn-taking, race, large branching (~40)",
    "nineBoardTicTacToePie": "turn-taking, branching 81, pie rule",
    "connectFourSimultaneous": "simultaneous, small branching",
    "pawnWhopping": "turn-taking, race",
    "dotsAndBoxes": "turn-taking, branching 60, goals by count",
    "sheepAndWolf": "turn-taking, asymmetric, long",
    "chinook": "simultaneous, two independent boards (factorable), long",
    "tictactoe_3player": "turn-taking, 3 roles",
    "gomoku_11x11": "turn-taking, large branching (121), long",
    "biddingTicTacToe": "simultaneous, bids",
    "tictactoe_3d_2player": "turn-taking, large branching (64)",
    "blockerSerial": "simultaneous",
    "breakthroughWalls": "turn-taking, race, walls",
    "englishDraughts": "turn-taking, long",
    "connectFourLarger": "turn-taking, larger board, long",
    "quad_7x7": "turn-taking, large branching",
    "knightfight": "turn-taking",
    "minichess": "turn-taking, chess-like",
    "cittaceot": "turn-taking",
    "3pConnectFour": "turn-taking, 3 roles",
    "connectFour_9x6": "turn-taking, small branching (9)",
    "ttcc4_2player": "turn-taking, large branching",
    "amazons_8x8": "turn-taking, large branching, long",
    "chineseCheckers3": "turn-taking, race, 3 roles",
    "smallest_4player": "4 roles",
    "tictactoe_orthogonal": "turn-taking, small (a draw with correct play)",
}

#: Games taken off the list because they spoil most of Sancho's matches, and why (2026-11-28, load 7 to 11 on the
#: 2 shared cores, start clock 30 s).
REPLACED = {
    "quartoSuicide": "Sancho's propnet took about 58 s to build: START and the first 7 PLAYs timed out, both matches "
    "spoilt",
    "checkersTiny": "Sancho never finished building its propnet: 15 and 16 timeouts, both matches spoilt",
    "hex": "no answer to START within 40 s (and every move of the issue's hex-with-pie matches timed out)",
    "battle": "no answer to START within 40 s",
    "kalaha_2009": "no answer to START within 40 s",
    "atariGo_7x7": "START: connection dropped after 34 s",
    "linesOfAction": "no answer to START within 40 s",
    "skirmishFinal1": "no answer to START within 40 s",
    "dualConnect4": "START answered busy: ArrayIndexOutOfBoundsException (512) in Sancho's meta-gaming",
    "chomp": "Sancho answered START, then every PLAY failed (ArrayIndexOutOfBoundsException, 512): 3 and 9 "
    "timeouts, both matches spoilt",
}

#: Our agent's spec unless --spec says otherwise; a result row written before rows named their spec played it.
DEFAULT_SPEC = "mcts:threads=1"

#: The corpus's one-role puzzles (the list of bench/ggp_base_strength.py).
PUZZLES = gbs.PUZZLES


# --- the peers' builds -----------------------------------------------------------------------------------
def default_sancho() -> str:
    """``$SANCHO``, else ``/work/peers/sancho``."""
    return os.environ.get("SANCHO", "/work/peers/sancho")


def sancho_classpath(base: Path) -> str:
    """Sancho's compiled classes and the class path its own build.xml names (``bin``, ``data/cfg`` with its
    log4j2.xml, the jars it ships under ``src/external``), then our compiled programs."""
    build = base / "build.xml"
    if not (base / "bin" / _SANCHO_MARKER).is_file() or not build.is_file():
        raise SystemExit(f"no Sancho build in {base}: {SANCHO_HELP}")
    entries = re.findall(r'<pathelement location="([^"]+)"', build.read_text())
    seen: list[str] = []
    for e in entries:
        path = str(base / e)
        if path not in seen:
            seen.append(path)
    return os.pathsep.join([*seen, str(SANCHO_OURS)])


def compile_sancho_ours(base: Path) -> str:
    """Compile our programs of bench/ggp_base/sancho against Sancho's build; return the class path."""
    cp = sancho_classpath(base)
    compile_java(sorted(SANCHO_SOURCES.glob("*.java")), cp, SANCHO_OURS)
    return cp


def commit() -> str:
    """The full commit of the repository's HEAD."""
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip()


class Peer:
    """One peer JVM (Sancho or MctsRefGamer) on a free port, in an empty working folder of its own."""

    def __init__(self, cp: str, which: str, folder: Path, extra: list[str], jvm: list[str]) -> None:
        self.folder = folder
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "data" / "games").mkdir(parents=True)
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("HOSTNAME", "COMPUTERNAME")}
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            ["java", *jvm, "-cp", cp, "SanchoPlayer", str(self.port), which, *extra],
            cwd=folder,
            env=env,
            stdout=(folder / "stdout.txt").open("w"),
            stderr=subprocess.STDOUT,
        )
        wait_port(self.port, 60)

    def stop(self) -> None:
        stop(self.proc)
        self.proc = None

    def logged_scores(self) -> list[int]:
        """The final scores Sancho logged for itself ("Final score: N"), from its stdout and its match logs."""
        texts = [(self.folder / "stdout.txt").read_text(errors="replace")]
        texts += [p.read_text(errors="replace") for p in (self.folder / "logs").glob("*.txt")]
        seen: list[int] = []
        for text in texts:
            for m in re.findall(r"Final score: (-?\d+)", text):
                seen.append(int(m))
        return seen

    def iterations(self) -> list[int]:
        """MctsRefGamer's iterations per move ("Processed N iterations")."""
        text = (self.folder / "stdout.txt").read_text(errors="replace")
        return [int(m) for m in re.findall(r"Processed (\d+) iterations", text)]


def start_ours(spec: str, stamp: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    logs = RESULTS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = logs / f"sancho-ggp-serve-{stamp}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ggp", "serve", spec, "--port", str(port), "--name", "ggp"],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    wait_port(port, 120)
    wait_ready(log, 900)
    return proc, port, log


def wait_ready(log: Path, seconds: float) -> None:
    """Wait until ``ggp serve`` (logging to ``log``) says its warm-up is over ("warm: the engines and the agent's
    compiled code are ready", or that it failed). Its first line, "warm: compiling ...", is not that: a match
    started then is played by the prover while the game compiles."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if "compiled code are ready" in text or "warm-up process failed" in text:
            return
        time.sleep(1.0)
    raise SystemExit(f"ggp serve had not warmed up after {seconds:g} s (see {log})")


def kif_match(cp: str, name: str, start: int, play: int, players: list[tuple[int, str]], timeout: float) -> Any:
    """One match under ggp-base's GameServer; KifMatch's JSON, or None with the reason printed."""
    args = [a for port, who in players for a in ("127.0.0.1", str(port), who)]
    try:
        out = subprocess.run(
            ["java", "-cp", cp, "KifMatch", str(sheet(name)), str(start), str(play), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        print(f"{name}: no result after {timeout:g} s", flush=True)
        return None
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
    if line is None:
        print(f"{name}: no result ({out.stderr.strip()[-300:]})", flush=True)
        return None
    return json.loads(line)


def our_random_moves(log: Path, mark: int) -> int | None:
    """Moves ``ggp serve`` says it played at random since ``mark`` (its log's size before the match)."""
    with log.open() as fh:
        fh.seek(mark)
        tail = fh.read()
    found = [int(m) for m in re.findall(r"(\d+) of them random", tail)]
    return found[-1] if found else None


# --- matches against a peer --------------------------------------------------------------------------------
def run_matches(args: argparse.Namespace) -> None:
    referee = compile_ours(Path(args.ggp_base), "KifMatch")
    peer_cp = compile_sancho_ours(Path(args.sancho))
    peer_name = "Sancho" if args.mode == "sancho" else "MctsRefGamer"
    games = args.games.split(",") if args.games else list(GAMES)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    args.commit = commit()  # the code ggp serve runs: it is loaded once, when the run starts
    ours, our_port, our_log = start_ours(args.spec, stamp)
    work = Path(args.work) / f"{args.mode}-{stamp}"
    peers: list[Peer] = []
    done = 0
    try:
        for name in games:
            roles = ggp.load(str(sheet(name))).roles
            seats = [s for s in args.seats if s < len(roles)] if args.seats else list(range(len(roles)))
            for seat in seats:
                if args.limit is not None and done >= args.limit:
                    return
                if args.stop_at and time.strftime("%Y-%m-%d %H:%M", time.gmtime()) >= args.stop_at:
                    print(f"{args.stop_at} UTC reached: no more matches", flush=True)
                    return
                for p in peers:
                    p.stop()
                # A fresh peer JVM for every seat it holds in every match.
                peers = [
                    Peer(peer_cp, args.mode, work / f"{name}-{seat}-{r}", args.peer_opt, args.jvm)
                    for r in range(len(roles))
                    if r != seat
                ]
                players: list[tuple[int, str]] = []
                it = iter(peers)
                for r in range(len(roles)):
                    players.append((our_port, "ggp") if r == seat else (next(it).port, f"{peer_name}{r}"))
                began = time.monotonic()
                mark = our_log.stat().st_size
                load_before = os.getloadavg()[0]
                result = kif_match(referee, name, args.start, args.play, players, args.match_timeout)
                if result is None:
                    continue
                time.sleep(1.0)  # the peer logs its final score on STOP
                row = match_row(args, name, roles, seat, result, peers, peer_name)
                row["our_random_moves"] = our_random_moves(our_log, mark)
                row["seconds"] = round(time.monotonic() - began, 1)
                row["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
                row["peer_logs"] = [str(p.folder) for p in peers]
                gbs.record("sancho", row)
                done += 1
                print(describe(row), flush=True)
    finally:
        for p in peers:
            p.stop()
        stop(ours)


def match_row(
    args: argparse.Namespace,
    name: str,
    roles: list[str],
    seat: int,
    result: dict[str, Any],
    peers: list[Peer],
    peer_name: str,
) -> dict[str, Any]:
    goals = result["goals"]
    # Every fault the server recorded, by role: kind, step, and whether the game was over (a late answer to STOP,
    # which changes nothing: the goals were settled before it).
    faults: dict[str, list[dict[str, Any]]] = {r: [] for r in roles}
    for f in result["faults"]:
        for r in roles:
            if f["role"].lower() == r.lower():
                faults[r].append({k: v for k, v in f.items() if k != "role"})
    playing = {r: [f for f in fs if not f.get("after_end")] for r, fs in faults.items()}
    their_roles = [r for i, r in enumerate(roles) if i != seat]
    logged: dict[str, list[int]] = {}
    iterations: dict[str, list[int]] = {}
    for role, peer in zip(their_roles, peers, strict=True):
        logged[role] = peer.logged_scores()
        if args.mode == "mctsref":
            iterations[role] = peer.iterations()
    misjudged = [
        role
        for role in their_roles
        if logged[role] and logged[role][-1] != goals[roles.index(role)]  # its own score, read on STOP
    ]
    spoilt = [r for r in their_roles if playing[r]] + [r for r in misjudged if not playing[r]]
    row: dict[str, Any] = {
        "game": name,
        "kind": GAMES.get(name, ""),
        "roles": roles,
        "seat": seat,
        "role": roles[seat],
        "spec": args.spec,
        "opponent": peer_name,
        "peer_options": args.peer_opt,
        "peer_jvm": args.jvm,
        "start_clock": args.start,
        "play_clock": args.play,
        "goals": goals,
        "ours": goals[seat],
        "theirs": max(g for i, g in enumerate(goals) if i != seat),
        "steps": result["steps"],
        "faults": faults,
        "our_faults": playing[roles[seat]],
        "their_faults": {r: playing[r] for r in their_roles if playing[r]},
        "stop_faults": {r: [f["kind"] for f in fs if f.get("after_end")] for r, fs in faults.items() if fs},
        "peer_logged_score": logged,
        "peer_misjudged": misjudged,
        "spoilt": bool(spoilt),
        "commit": args.commit,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    if iterations:
        row["peer_iterations"] = {r: v for r, v in iterations.items()}
    return row


def describe(row: dict[str, Any]) -> str:
    spoilt = " SPOILT by the peer" if row["spoilt"] else ""
    theirs = sum(len(v) for v in row["their_faults"].values())
    late = sum(len(v) for v in row["stop_faults"].values())
    return (
        f"{row['game']:24} seat {row['seat']} ({row['role']}): goals {row['goals']}, {row['steps']} steps, "
        f"our faults {len(row['our_faults'])}, random {row['our_random_moves']}, their faults {theirs}, "
        f"late STOPs {late}, "
        f"their logged {row['peer_logged_score']}{spoilt}, {row['seconds']} s, load {row['load']}"
    )


# --- what the peer thought, move by move ------------------------------------------------------------------------
def run_trace(args: argparse.Namespace) -> None:
    """For each recorded match (``--games``, ``--since``): Sancho's own view per turn, read from its log: the
    iterations of its search, the move it played and the score it gave it (0-100, its expected result), so that
    the step where a lost match turned is seen."""
    path = RESULTS / "sancho_strength.jsonl"
    rows = [json.loads(line) for line in path.open() if line.strip()]
    if args.games:
        rows = [r for r in rows if r["game"] in args.games.split(",")]
    if args.since:
        rows = [r for r in rows if r["when"] >= args.since]
    for r in rows:
        print(f"{r['game']} seat {r['seat']} ({r['role']}), goals {r['goals']}, {r['steps']} steps:")
        for folder in r.get("peer_logs", []):
            out = Path(folder) / "stdout.txt"
            if not out.is_file():
                print(f"  {folder}: no log")
                continue
            turns = sancho_turns(out.read_text(errors="replace"))
            if not args.brief:
                for turn, iterations, move, value in turns:
                    print(f"  turn {turn:3}: {iterations:>8} iterations, plays {move}, scoring {value}")
            print(f"  {folder}: " + turning_points(turns), flush=True)


def turning_points(turns: list[tuple[int, int, str, str]]) -> str:
    """The first turn Sancho scored its move 65 or more, and the first it scored it 100 or 0 (a proven result),
    with the median of its iterations per turn before that."""

    def first(test: Any) -> int | None:
        return next((t for t, _, _, v in turns if v and test(float(v))), None)

    ahead, proven = first(lambda v: v >= 65), first(lambda v: v >= 100 or v <= 0)
    searched = [i for t, i, _, _ in turns if i > 1 and (proven is None or t < proven)]
    median = statistics.median(searched) if searched else 0
    return (
        f"{len(turns)} turns; scored >= 65 from turn {ahead}, proven (100 or 0) from turn {proven}; "
        f"median iterations a turn before that {median:,.0f}"
    )


def sancho_turns(text: str) -> list[tuple[int, int, str, str]]:
    """(turn, iterations of the search that chose the move, move, its score) per turn of a Sancho log."""
    turns: list[tuple[int, int, str, str]] = []
    turn, best = 0, ("", "")
    for line in text.splitlines():
        if m := re.search(r"Starting turn (\d+)", line):
            turn = int(m.group(1))
        elif m := re.search(r"Best move was (.*), scoring (\S+)", line):
            best = (m.group(1), m.group(2))
        elif "Playing move:" in line:
            turns.append((turn, 0, *best))
        elif (m := re.search(r"MCTS iterations last turn = (\d+)", line)) and turns and turns[-1][0] == turn - 1:
            t = turns[-1]
            turns[-1] = (t[0], int(m.group(1)), t[2], t[3])
    return turns


# --- puzzles -------------------------------------------------------------------------------------------------
def run_puzzles(args: argparse.Namespace) -> None:
    """Each one-role puzzle twice under GameServer on the same clocks: Sancho alone, then ggp alone."""
    referee = compile_ours(Path(args.ggp_base), "KifMatch")
    peer_cp = compile_sancho_ours(Path(args.sancho))
    names = args.games.split(",") if args.games else PUZZLES
    stamp = time.strftime("%Y%m%d-%H%M%S")
    args.commit = commit()
    ours, our_port, our_log = start_ours(args.spec, stamp)
    work = Path(args.work) / f"puzzles-{stamp}"
    done = 0
    try:
        for name in names:
            roles = ggp.load(str(sheet(name))).roles
            if len(roles) != 1:
                continue
            for who in ("Sancho", "ggp"):
                if args.limit is not None and done >= args.limit:
                    return
                peer = Peer(peer_cp, "sancho", work / name, args.peer_opt, args.jvm) if who == "Sancho" else None
                port = peer.port if peer else our_port
                began = time.monotonic()
                mark = our_log.stat().st_size
                result = kif_match(referee, name, args.start, args.play, [(port, who)], args.match_timeout)
                time.sleep(1.0)
                if peer:
                    peer.stop()
                if result is None:
                    continue
                faults = [f["kind"] for f in result["faults"]]
                row = {
                    "game": name,
                    "player": who,
                    "spec": args.spec if who == "ggp" else "Sancho",
                    "start_clock": args.start,
                    "play_clock": args.play,
                    "goal": result["goals"][0],
                    "best": gbs.best_goal(sheet(name)),
                    "steps": result["steps"],
                    "faults": faults,
                    "logged_score": peer.logged_scores() if peer else None,
                    "our_random_moves": our_random_moves(our_log, mark) if not peer else None,
                    "seconds": round(time.monotonic() - began, 1),
                    "load": round(os.getloadavg()[0], 2),
                    "commit": args.commit,
                    "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                }
                gbs.record("sancho_puzzle", row)
                done += 1
                print(
                    f"{name:28} {who:6} goal {row['goal']:3} of {row['best']:3}, {row['steps']} steps, "
                    f"faults {len(faults)}, {row['seconds']} s",
                    flush=True,
                )
    finally:
        stop(ours)


# --- summary ---------------------------------------------------------------------------------------------------
def score(row: dict[str, Any]) -> float:
    """A win 100, a draw 50, a loss 0: our goal against the best of the others'."""
    return 100.0 if row["ours"] > row["theirs"] else 50.0 if row["ours"] == row["theirs"] else 0.0


def run_summary(args: argparse.Namespace) -> None:
    if args.mode == "summary" and args.of == "puzzles":
        summary_puzzles(args)
        return
    path = RESULTS / "sancho_strength.jsonl"
    if not path.is_file():
        raise SystemExit("no results yet")
    rows = [json.loads(line) for line in path.open() if line.strip()]
    rows = [r for r in rows if r["opponent"] == ("Sancho" if args.opponent == "sancho" else "MctsRefGamer")]
    rows = [r for r in rows if r["play_clock"] == args.play and r["start_clock"] == args.start]
    if args.since:
        rows = [r for r in rows if r["when"] >= args.since]
    if args.code:
        rows = [r for r in rows if r["commit"].startswith(args.code) or str(r.get("code", "")).startswith(args.code)]
    if args.latest:
        # The benchmark's figure: the spec asked for, each game and seat's latest match the peer did not spoil.
        rows = [r for r in rows if r.get("spec", DEFAULT_SPEC) == args.spec and not r["spoilt"]]
        rows = list({(r["game"], r["seat"]): r for r in sorted(rows, key=lambda r: r["when"])}.values())
    by_game: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_game.setdefault(r["game"], []).append(r)
    two: list[float] = []
    more: list[float] = []
    spoilt_total = 0
    print(f"against {args.opponent}, start {args.start:g} s, play {args.play:g} s")
    print("game | roles | our scores by seat (goals, steps) | spoilt by the peer | our faults | mean")
    for name, rs in by_game.items():
        n = len(rs[0]["roles"])
        cells = []
        kept = []
        for r in sorted(rs, key=lambda r: (r["seat"], r["when"])):
            mark = " spoilt" if r["spoilt"] else ""
            cells.append(f"seat {r['seat']}: {score(r):g} ({'-'.join(map(str, r['goals']))}, {r['steps']}){mark}")
            if not r["spoilt"]:
                kept.append(score(r))
        spoilt = sum(r["spoilt"] for r in rs)
        spoilt_total += spoilt
        ours = sum(len(r["our_faults"]) + (r.get("our_random_moves") or 0) for r in rs)
        mean = f"{statistics.mean(kept):.1f}" if kept else "-"
        (two if n == 2 else more).extend(kept)
        print(f"{name} | {n} | {'; '.join(cells)} | {spoilt} | {ours} | {mean}")
    if two:
        print(f"two-player games: {len(two)} unspoilt matches, mean score {statistics.mean(two):.1f}")
    if more:
        print(f"games of 3+ roles: {len(more)} unspoilt matches, mean score {statistics.mean(more):.1f}")
    print(f"spoilt by the peer: {spoilt_total} of {len(rows)} matches (left out of the means)")


def summary_puzzles(args: argparse.Namespace) -> None:
    """Each puzzle's latest run by each player (on the clocks asked for); the means over the puzzles both played
    unspoilt. A run with a fault recorded by the server (a timeout, an illegal move: the server then moved for
    the player) is spoilt: Sancho's are left out with their puzzle, ours count as they ended."""
    path = RESULTS / "sancho_puzzle_strength.jsonl"
    if not path.is_file():
        raise SystemExit("no puzzle results yet")
    rows = [json.loads(line) for line in path.open() if line.strip()]
    rows = [r for r in rows if r["play_clock"] == args.play and r["start_clock"] == args.start]
    if args.since:
        rows = [r for r in rows if r["when"] >= args.since]
    if args.code:
        rows = [r for r in rows if r["commit"].startswith(args.code) or str(r.get("code", "")).startswith(args.code)]
    latest: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        latest.setdefault(r["game"], {})[r["player"]] = r
    both, spoilt = [], []
    for name, by in latest.items():
        sancho, ours = by.get("Sancho"), by.get("ggp")
        shown = [
            f"{who} {r['goal']:>3}{' (spoilt: ' + ', '.join(r['faults']) + ')' if r['faults'] else ''}"
            for who, r in by.items()
        ]
        print(f"{name:28} {'  '.join(shown)}")
        if sancho is not None and sancho["faults"]:
            spoilt.append(name)
        elif sancho is not None and ours is not None:
            both.append((sancho["goal"], ours["goal"]))
    if both:
        print(
            f"over the {len(both)} puzzles both played (Sancho unspoilt): Sancho mean goal "
            f"{statistics.mean(g for g, _ in both):.1f}, ggp {statistics.mean(g for _, g in both):.1f}; "
            f"ggp higher on {sum(o > t for t, o in both)}, lower on {sum(o < t for t, o in both)}"
        )
    print(f"spoilt by Sancho: {len(spoilt)} ({', '.join(spoilt) or 'none'})")


def main() -> None:
    gbs.CODE = gbs.code_version()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["sancho", "mctsref", "puzzles", "summary", "trace"])
    ap.add_argument("--games", help="comma-separated corpus names (default: the mode's list)")
    ap.add_argument("--spec", default=DEFAULT_SPEC, help=f"our agent spec (default {DEFAULT_SPEC})")
    ap.add_argument("--start", type=int, default=30, help="start clock, whole seconds (default 30)")
    ap.add_argument("--play", type=int, default=5, help="play clock, whole seconds (default 5)")
    ap.add_argument("--seats", help="our seats to play, e.g. 0,1 (default: every seat of each game)")
    ap.add_argument("--limit", type=int, help="stop after this many matches")
    ap.add_argument("--match-timeout", type=float, default=3600.0)
    ap.add_argument("--stop-at", help="start no match from this UTC time on ('2026-11-28 01:40')")
    ap.add_argument("--ggp-base", default=default_dir(), help=f"the referee's ggp-base checkout, built ({HELP})")
    ap.add_argument("--sancho", default=default_sancho(), help=f"Sancho's checkout, built ({SANCHO_HELP})")
    ap.add_argument(
        "--peer-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Sancho setting (MachineSpecificConfiguration item) over SanchoPlayer's own",
    )
    ap.add_argument(
        "--jvm",
        default=" ".join(SANCHO_JVM),
        help="the peer JVM's options (default: those of Sancho's own launch script, jobs/sancho.cmd)",
    )
    ap.add_argument("--work", default="/tmp/sancho_bench", help="the peers' working folders (their logs)")
    ap.add_argument("--of", default="matches", choices=["matches", "puzzles"], help="summary: which results")
    ap.add_argument("--opponent", default="sancho", choices=["sancho", "mctsref"], help="summary: which peer")
    ap.add_argument("--since", help="summary, trace: only matches from this time on ('2026-11-28 00:30')")
    ap.add_argument("--brief", action="store_true", help="trace: only each match's turning points")
    ap.add_argument("--code", help="summary: only matches of this commit (a prefix)")
    ap.add_argument(
        "--latest",
        action="store_true",
        help="summary: each game and seat's latest unspoilt match with --spec (the figure README quotes)",
    )
    args = ap.parse_args()
    args.seats = [int(s) for s in args.seats.split(",")] if args.seats else None
    args.jvm = args.jvm.split()
    if args.mode == "summary":
        run_summary(args)
    elif args.mode == "trace":
        run_trace(args)
    elif args.mode == "puzzles":
        run_puzzles(args)
    else:
        run_matches(args)


if __name__ == "__main__":
    main()
