"""The benchmark scripts in ``bench/`` that need no peer still run: a short run of each, as a user would start it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def run(script: str, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *argv], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_web_load_serves_its_clients_without_an_error() -> None:
    pytest.importorskip("httpx")
    out = run("web_load.py", "--clients", "2", "--seconds", "1", "--thinkers", "0")
    row = next(line.split() for line in out.splitlines() if line.split()[:1] == ["2"])
    clients, requests, errors = int(row[0]), int(row[1]), int(row[-1])
    assert (clients, errors) == (2, 0) and requests > 0
    assert "server still answering: True" in out


def test_play_overhead_measures_every_play() -> None:
    out = run("play_overhead.py", "--plays", "10", "--games", "wallmaze", "tictactoe")
    rows = {
        line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in (["wallmaze"], ["tictactoe"])
    }
    assert set(rows) == {"wallmaze", "tictactoe"}
    assert all(int(r[1]) == 10 and float(r[2]) > 0 and float(r[4]) > 0 for r in rows.values())
