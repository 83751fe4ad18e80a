"""Cold start: ``ggp serve mcts``, ``ggp web``, ``ggp play`` and ``import ggp.rl`` on empty numba and ggp caches.

    python bench/cold_start.py [--runs 2] [--src DIR] [WHAT ...]      (WHAT: serve web play rl; default all)

Each run is a fresh process tree with ``NUMBA_CACHE_DIR`` and ``GGP_CACHE`` set to new empty folders
(``--src`` puts another source tree first on ``PYTHONPATH``, to measure a commit checked out elsewhere):

* serve: seconds until ``ggp serve mcts`` listens, until its warm-up says it is ready (INFO answers
  available) and until the warm-up is over, and each step's time;
* web: seconds until ``ggp web`` answers, then how long the POST that creates a first Amazons 8x8 game
  against ``mcts`` takes (and its answer);
* play: seconds until ``ggp play amazons_8x8 --black mcts`` asks for white's first move (it is told quit);
* rl: seconds of ``python -c "import ggp.rl"``.

Besides wall time, each prints the processor seconds of the process tree (a busy machine changes it less)
and the load average: quote medians, and the load. One JSON line per run on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import Any

WHATS = ("serve", "web", "play", "rl")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure(what: str, src: str | None, timeout: float = 3600.0) -> dict[str, Any]:
    scratch = tempfile.mkdtemp(prefix="ggp-cold-")
    env = {**os.environ, "NUMBA_CACHE_DIR": f"{scratch}/numba", "GGP_CACHE": f"{scratch}/ggp"}
    if src:
        env["PYTHONPATH"] = src
    py = [sys.executable, "-m", "ggp"]
    out: dict[str, Any] = {"what": what, "load": os.getloadavg()[0]}
    began = time.monotonic()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        if what == "serve":
            proc = subprocess.Popen(
                [*py, "serve", "mcts", "--port", str(free_port())],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert proc.stdout is not None and proc.stderr is not None
            stdout = proc.stdout

            def listening() -> None:
                for line in stdout:
                    if "listening" in line:
                        out["listening"] = time.monotonic() - began

            threading.Thread(target=listening, daemon=True).start()
            steps: dict[str, float] = {}
            for line in proc.stderr:
                found = re.search(r"warm: (\d+/\d+) ", line)
                if found:
                    steps[found.group(1)] = round(time.monotonic() - began, 1)
                if " ready for every built-in game" in line:
                    out["ready"] = time.monotonic() - began
                if "warm: the engines" in line or "warm-up process failed" in line:
                    out["warm"] = time.monotonic() - began
                    break
                if time.monotonic() - began > timeout:
                    break
            out["steps"] = steps
            proc.terminate()
            proc.wait(30)
        elif what == "web":
            port = free_port()
            cmd = [*py, "web", "--port", str(port), "--db", f"{scratch}/web.sqlite3"]
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/catalog", timeout=5).read()
                    break
                except OSError:
                    time.sleep(0.1)  # the server is starting: nothing to wait on but its answer
            out["listening"] = time.monotonic() - began
            body = json.dumps({"game": "amazons_8x8", "players": {"white": "human", "black": "mcts"}}).encode()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/games", data=body, headers={"Content-Type": "application/json"}
            )
            posted = time.monotonic()
            try:
                urllib.request.urlopen(request, timeout=timeout).read()
                out["answer"] = 201
            except urllib.error.HTTPError as exc:
                out["answer"] = f"{exc.code} {exc.read().decode(errors='replace')[:200]}"
            out["post"] = time.monotonic() - posted
            proc.terminate()
            proc.wait(30)
        elif what == "play":
            cmd = [*py, "play", "amazons_8x8", "--white", "human", "--black", "mcts"]
            done = subprocess.run(cmd, env=env, input="quit\n", capture_output=True, text=True, timeout=timeout)
            out["seconds"] = time.monotonic() - began
            out["ok"] = done.returncode == 0
        elif what == "rl":
            done = subprocess.run(
                [sys.executable, "-c", "import ggp.rl"], env=env, capture_output=True, timeout=timeout
            )
            out["seconds"] = time.monotonic() - began
            out["ok"] = done.returncode == 0
        else:
            raise ValueError(f"unknown WHAT {what!r}; one of {', '.join(WHATS)}")
    finally:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out["cpu"] = (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)
        out["load_after"] = os.getloadavg()[0]
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="*", metavar="WHAT", help=f"some of {', '.join(WHATS)} (default all)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--src", default=None, help="a source tree to measure (put first on PYTHONPATH)")
    args = parser.parse_args()
    for _ in range(args.runs):
        for what in args.what or WHATS:
            print(json.dumps(measure(what, args.src)), flush=True)


if __name__ == "__main__":
    main()
