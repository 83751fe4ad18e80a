"""Sections on start-up costs: first-call compile time and what ``import ggp`` loads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import (
    FAMILIES,
    Column,
    Config,
    Section,
    short_error,
)

_COMPILE_SCRIPT = """
import json, sys, time
began = time.perf_counter()
import ggp
from ggp.core.kernels import perft, rollouts
for name in sys.argv[1:]:
    game = ggp.load(name)
    state = game.initial_state()
    joint = [game.legal_moves(state, role)[0] for role in game.roles]
    game.next_state(state, joint)
    perft(game.kernel, state.array, 2)
    rollouts(game.kernel, state.array, 1)
print(json.dumps({"seconds": time.perf_counter() - began}))
"""


@dataclass
class ChildRun:
    """What a child Python printed and how it ended (see :func:`run_child`)."""

    #: The JSON objects among its stdout lines, in order.
    lines: list[dict[str, Any]]
    returncode: int | None
    #: Seconds from start to exit (or to the kill).
    wall: float
    #: Killed at the deadline.
    timed_out: bool
    #: Its peak resident memory in MB (VmHWM), read just before a kill; None when it exited by itself.
    peak_mb: float | None
    #: The last line of its stderr ("" if none).
    error: str


def run_child(argv: list[str], env: dict[str, str] | None = None, timeout: float = 600.0) -> ChildRun:
    """Run ``python ARGV...`` (this interpreter) in a fresh process, killed after ``timeout`` seconds; collect
    the JSON objects it prints, one a line. The one runner of the timing sections that need a fresh process
    (first-call compile, ``import ggp``) and of ``bench/corpus_load.py`` (a sheet's load, memory and crash kept
    from the others).

    >>> run = run_child(["-c", "print('{\\"x\\": 1}')"])
    >>> run.lines, run.returncode, run.timed_out
    ([{'x': 1}], 0, False)
    """
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak: list[float] = []
    killed = threading.Event()

    def kill() -> None:
        peak.extend(_peak_mb(proc.pid))  # a killed child's peak is only known while it lives
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        out, err = proc.communicate()
    finally:
        timer.cancel()
    lines = []
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except ValueError:
                continue
    tail = err.strip().splitlines()
    return ChildRun(
        lines,
        proc.returncode,
        time.perf_counter() - began,
        killed.is_set(),
        peak[0] if peak else None,
        tail[-1] if tail else "",
    )


def _peak_mb(pid: int) -> list[float]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return [round(int(line.split()[1]) / 1024, 1)]
    except OSError:
        pass
    return []


def _run_python(script: str, args: list[str], env: dict[str, str], timeout: float) -> tuple[dict[str, Any], float]:
    """Run ``script`` in a fresh interpreter; its last JSON stdout line and the wall time."""
    run = run_child(["-c", script, *args], env, timeout)
    if run.timed_out:
        raise RuntimeError(f"subprocess killed after {timeout:g} s")
    if run.returncode != 0 or not run.lines:
        raise RuntimeError(f"subprocess exited with {run.returncode}: {run.error or '(no output)'}")
    return run.lines[-1], run.wall


def section_compile(cfg: Config) -> Section:
    sec = Section(
        "compile",
        "6. First-call compile time in a fresh process (import, load, legal_moves, next_state, perft, rollouts)",
        [
            Column("family", "family"),
            Column("games", "games"),
            Column("cold", "empty numba cache", "seconds"),
            Column("warm", "reusing the cache", "seconds"),
            Column("cold_wall", "cold, whole process", "seconds"),
            Column("warm_wall", "warm, whole process", "seconds"),
        ],
    )
    failures = []
    for family in cfg.families:
        names = list(FAMILIES[family])
        cache = tempfile.mkdtemp(prefix="ggp-bench-numba-")
        try:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            cold, cold_wall = _run_python(_COMPILE_SCRIPT, names, env, 600)
            warm, warm_wall = _run_python(_COMPILE_SCRIPT, names, env, 600)
        except Exception as exc:
            failures.append(f"{family}: {short_error(exc)}")
            continue
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        sec.rows.append(
            {
                "family": family,
                "games": ", ".join(names),
                "cold": cold["seconds"],
                "warm": warm["seconds"],
                "cold_wall": cold_wall,
                "warm_wall": warm_wall,
            }
        )
    sec.notes.append(
        "in-process seconds from before `import ggp` to the last kernel call; NUMBA_CACHE_DIR set to a new "
        "empty directory for the cold process, the same directory for the warm one"
    )
    if cfg.quick:
        sec.notes.append("quick run: wallmaze only")
    if failures:
        sec.status = "partial" if sec.rows else "failed"
        sec.error = "; ".join(failures)
    return sec


_IMPORT_SCRIPT = """
import json, sys, time
began = time.perf_counter()
import ggp
spent = time.perf_counter() - began
print(json.dumps({"numba": "numba" in sys.modules, "numpy": "numpy" in sys.modules, "seconds": spent}))
"""


def section_import(cfg: Config) -> Section:
    sec = Section(
        "import",
        "6b. `import ggp` stays light",
        [
            Column("check", "check"),
            Column("numba_imported", "numba imported", "flag"),
            Column("numpy_imported", "numpy imported", "flag"),
            Column("seconds", "import time", "seconds"),
            Column("ok", "ok", "met"),
        ],
    )
    result, _ = _run_python(_IMPORT_SCRIPT, [], dict(os.environ), 120)
    sec.rows.append(
        {
            "check": "plain `import ggp` in a fresh process",
            "numba_imported": bool(result["numba"]),
            "numpy_imported": bool(result["numpy"]),
            "seconds": float(result["seconds"]),
            "ok": not result["numba"],
        }
    )
    return sec


# --- a bare install's first match ---------------------------------------------------------------------------
#: The sheet of the first match: five in a row, a sheet no test plays, so the caches hold nothing of it.
FIRST_MATCH_SHEET = "gomoku_swap2_15x15"


def first_match(
    sheet: str | Path,
    *,
    start_clock: float = 30.0,
    play_clock: float = 2.0,
    ask_info: bool = True,
    spec: str = "mcts",
    timeout: float = 3600.0,
    env: dict[str, str] | None = None,
    keep: bool = False,
) -> dict[str, Any]:
    """Start ``ggp serve SPEC`` on empty numba and ggp caches and host its first match at once: the rule
    sheet ``sheet`` (a path), the player in its first role against ``random``, with these clocks.

    ``ask_info``: the host asks INFO first and waits while the player answers busy (the GGP convention:
    a warming player is busy); else START goes out as soon as the player listens. Returns the seconds to
    listening, to the match's start and to its end, the player's move counts (``random``: moves it did
    not get from its agent: prover or random fallbacks) and the host's faults for the player's role.

    ``keep``: what the player compiled is added to this process's own caches afterwards (files already
    there stay), so that later runs start warm (``make test``: the tests after this one).
    """
    import random as rnd

    from ..core.game import random_playout
    from ..protocol.host import host_match
    from ..registry import load

    # The host's own rules first: a game manager is ready before it starts a match (a host compiling its
    # referee's rules on a cold cache, minutes on a loaded machine, would leave the player without a message
    # for longer than its idle timeout).
    game = load(str(sheet))
    random_playout(game, game.initial_state(), rnd.Random(0))
    scratch = Path(tempfile.mkdtemp(prefix="ggp-first-match-"))
    env = {**(env if env is not None else os.environ), "NUMBA_CACHE_DIR": str(scratch / "numba")}
    env["GGP_CACHE"] = str(scratch / "ggp")
    began = time.monotonic()
    player = subprocess.Popen(
        [sys.executable, "-m", "ggp", "serve", spec, "--port", "0", "--seed", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []

    def read_log() -> None:
        assert player.stderr is not None
        for line in player.stderr:
            log.append(f"{time.monotonic() - began:7.1f} {line.rstrip()}")

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    try:
        assert player.stdout is not None
        url = ""
        for line in player.stdout:
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].split()[0]
                break
        if not url:
            raise RuntimeError(f"ggp serve did not start: {log[-3:]}")
        listening = time.monotonic() - began
        record = host_match(
            str(sheet),
            {_first_role(sheet): url},
            start_clock=start_clock,
            play_clock=play_clock,
            seed=1,
            check_players=ask_info,
            wait_ready=timeout if ask_info else 0.0,
        )
        ended = time.monotonic() - began
    finally:
        player.terminate()
        try:
            player.wait(30)
        except subprocess.TimeoutExpired:
            player.kill()
        reader.join(10)
        if keep:
            _merge_caches(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    role = _first_role(sheet)
    summary = [line for line in log if "moves sent" in line]
    sent = random = None
    if summary:
        words = summary[-1].split("(")[-1].split()
        sent, random = int(words[0]), int(words[3])
    started = next((float(line.split()[0]) for line in log if "START" in line), None)
    # ready: INFO answers available (the warm-up's "ready" step; the rest is compiled meanwhile)
    warm = next((float(line.split()[0]) for line in log if _READY in line or "warm: the engines" in line), None)
    return {
        "listening": listening,
        "warm": warm,
        "started": started,
        "ended": ended,
        "steps": record.steps,
        "sent": sent,
        "random": random,
        "fallbacks": sum(1 for line in log if "still being compiled" in line or "random legal move" in line),
        "faults": [f.to_dict() for f in record.all_faults() if f.role == role],
        "log": log,
    }


_READY = " ready for every built-in game"


def _merge_caches(scratch: Path) -> None:
    # ggp's cached files are named for what they hold (a network's digest), so a file already here is the same
    # work and stays. numba's are an index per source file and the data files it names: an index is taken
    # with its own data files, or not at all.
    from ..core.cache import cache_folder
    from ..core.numba_cache import configure

    numba_folder = configure()  # this process's folder (``import ggp`` configured it; this only reads it back)
    source = scratch / "numba" / numba_folder.name
    for index in source.rglob("*.nbi") if source.is_dir() else []:
        goal = numba_folder / index.relative_to(source)
        if not goal.exists():
            for data in index.parent.glob(index.stem + ".*.nbc"):
                _copy(data, goal.parent / data.name)
            _copy(index, goal)  # last: an index is read only with its data beside it
    source = scratch / "ggp"
    for path in source.rglob("*") if source.is_dir() else []:
        goal = cache_folder() / path.relative_to(source)
        if path.is_file() and not goal.exists():
            _copy(path, goal)


def _copy(path: Path, goal: Path) -> None:
    goal.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, goal)


def _first_role(sheet: str | Path) -> str:
    from ..core.kif import parse_terms
    from ..protocol.recognize import sheet_roles

    return sheet_roles(parse_terms(Path(sheet).read_text(encoding="utf-8")))[0]


def section_first_match(cfg: Config) -> Section:
    sec = Section(
        "first_match",
        "6c. A bare install's first match: `ggp serve mcts` on empty caches, a sheet it has never seen, 30 s start clock",
        [
            Column("how", "the game manager"),
            Column("listening", "listening after", "seconds"),
            Column("warm", "ready (INFO available) after", "seconds"),
            Column("steps", "steps", "int"),
            Column("agent_moves", "the agent's moves", "int"),
            Column("random", "random or prover moves", "int"),
            Column("ok", "no random move", "met"),
        ],
    )
    if cfg.quick:
        sec.status = "not available"
        sec.notes.append("minutes of compiling on empty caches: run without --quick (ggp bench --only first_match)")
        return sec
    root = Path(os.environ.get("GGP_SHARED", "../shared"))
    sheet = root / "corpus" / "kif" / f"{FIRST_MATCH_SHEET}.kif"
    if not sheet.is_file():
        sec.status = "not available"
        sec.error = f"{sheet} is missing (set GGP_SHARED to the shared folder)"
        return sec
    got = first_match(sheet)
    sent, random = got["sent"], got["random"]
    sec.rows.append(
        {
            "how": "asks INFO first, waits while busy",
            "listening": got["listening"],
            "warm": got["warm"],
            "steps": got["steps"],
            "agent_moves": None if sent is None or random is None else sent - random,
            "random": random,
            "ok": random == 0 and not got["faults"] and got["fallbacks"] == 0,
        }
    )
    sec.notes.append(f"{FIRST_MATCH_SHEET}, the player's first role against random, play clock 2 s; load {_load()}")
    return sec


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


SECTIONS = {
    "compile": ("6. First-call compile time", section_compile),
    "import": ("6b. import ggp", section_import),
    "first_match": ("6c. A bare install's first match", section_first_match),
}
