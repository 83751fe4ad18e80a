"""Load figure for the web app: requests/s and latency with N concurrent clients while agents think.

    python bench/web_load.py [--clients 1 4 16] [--seconds 10] [--thinkers 2]

Starts ``ggp web`` as a separate process on 127.0.0.1 (a free port, a fresh
SQLite file), starts ``--thinkers`` agent-only Amazons 8x8 matches in which
``mcts:time=1`` players think all the time, then runs each client count in
turn: every client plays wall maze as white against ``random`` through the JSON
API (read the match, read white's legal moves, post one with its step and seat
token; a new match when one ends) and lists the history now and then. Prints
requests per second and the median and 95th-percentile latency per client
count. Traffic goes only to 127.0.0.1; every loop is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, db: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GGP_WEB_MAX_LIVE_MATCHES": "128"}
    cmd = [sys.executable, "-m", "ggp", "web", "--port", str(port), "--db", str(db)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/games", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"ggp web exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.1)  # polling a port that is not yet open
    proc.kill()
    raise RuntimeError("ggp web did not answer within 60 s")


async def client(base: str, until: float, latencies: list[float], errors: list[str], rng: random.Random) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:

        async def call(method: str, url: str, **kw: object) -> httpx.Response:
            t = time.perf_counter()
            reply = await http.request(method, url, **kw)  # type: ignore[arg-type]
            latencies.append(time.perf_counter() - t)
            if reply.status_code >= 500:
                errors.append(f"{method} {url}: {reply.status_code}")
            return reply

        match: dict | None = None
        token = ""
        while time.monotonic() < until:
            if match is None or match["terminal"]:
                reply = await call("POST", "/api/games", json={"game": "wallmaze", "players": {"black": "random"}})
                if reply.status_code != 201:
                    errors.append(f"create: {reply.status_code} {reply.text[:80]}")
                    return
                match = reply.json()
                token = match["tokens"]["white"]
            mid = match["id"]
            view = (await call("GET", f"/api/games/{mid}", params={"wait": 5})).json()
            if view["terminal"]:
                match = view
                continue
            legal = (await call("GET", f"/api/games/{mid}/legal", params={"role": "white"})).json()["moves"]
            move = rng.choice(legal)
            text = move["move"] if isinstance(move, dict) else move
            body = {"role": "white", "move": text, "step": view["step"]}
            reply = await call("POST", f"/api/games/{mid}/moves", json=body, headers={"X-Seat-Token": token})
            if reply.status_code == 200:
                match = reply.json()
            if rng.random() < 0.1:
                await call("GET", "/api/games", params={"limit": 20})


async def run(base: str, clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors: list[str] = []
    until = time.monotonic() + seconds
    began = time.perf_counter()
    await asyncio.gather(*(client(base, until, latencies, errors, random.Random(i)) for i in range(clients)))
    elapsed = time.perf_counter() - began
    if errors:
        print(f"  {len(errors)} errors, e.g. {errors[0]}")
    lat = sorted(latencies)
    return {
        "clients": clients,
        "requests": len(lat),
        "rps": len(lat) / elapsed,
        "p50_ms": 1000 * statistics.median(lat),
        "p95_ms": 1000 * lat[min(len(lat) - 1, int(0.95 * len(lat)))],
        "errors": len(errors),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--thinkers", type=int, default=2, help="agent-only Amazons matches thinking meanwhile")
    args = ap.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_server(port, Path(tmp) / "load.sqlite3")
        try:
            for _ in range(args.thinkers):
                spec = {"white": "mcts:time=1", "black": "mcts:time=1"}
                body = {"game": "amazons_8x8", "players": spec, "agent_time": 1.0}
                reply = httpx.post(base + "/api/games", json=body, timeout=120)
                reply.raise_for_status()
            asyncio.run(run(base, 1, 2.0))  # warm-up: compile the wall maze kernel in the server
            print(
                f"web API load, {args.thinkers} agent-only Amazons matches thinking meanwhile, {args.seconds:g} s each"
            )
            print(f"{'clients':>8} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7}")
            for n in args.clients:
                r = asyncio.run(run(base, n, args.seconds))
                print(
                    f"{n:>8} {r['requests']:>9} {r['rps']:>8.0f} {r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f} {r['errors']:>7}"
                )
            alive = httpx.get(base + "/api/games", timeout=10).status_code == 200
            print(f"server still answering: {alive}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
