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


SECTIONS = {
    "compile": ("6. First-call compile time", section_compile),
    "import": ("6b. import ggp", section_import),
}
