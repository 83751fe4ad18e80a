"""Sections on start-up costs: first-call compile time and what ``import ggp`` loads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

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


def _run_python(script: str, args: list[str], env: dict[str, str], timeout: float) -> tuple[dict[str, Any], float]:
    """Run ``script`` in a fresh interpreter; its last stdout line is JSON. Returns it and the wall time."""
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"subprocess exited with {proc.returncode}: {tail}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, wall


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
