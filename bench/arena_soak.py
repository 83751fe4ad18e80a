"""A soak of the arena: registered players on loopback, some misbehaving, matches scheduled without pause.

    python bench/arena_soak.py --minutes 60 --players 9
    python bench/arena_soak.py --matches 24          # stop after 24 finished matches (CI's short run)

Starts ``ggp web`` as a separate process on a free loopback port, with a
fresh SQLite file, the arena allowed to call 127.0.0.0/8, short clocks, small
games (tic-tac-toe from a sheet directory, two-player Bomberman) and
``random`` as the built-in agent. Then starts ``--players`` GGP players of
ours on loopback, each of one kind, and registers them:

* ``good``: ggp's own random player (:class:`~ggp.protocol.PlayerService`);
* ``sluggish``: the same, answering each PLAY after a third of the play clock
  (slow but in time: it must never be paused);
* ``serve``: a ``ggp serve random`` process;
* ``slow``: sends its move a byte at a time, the last byte after the clock;
* ``late``: sends its whole move after the clock and the grace;
* ``garbage``: answers PLAY with binary junk, text that is no term, a bare
  line that is no HTTP, an HTTP error, or a reply over the host's size cap;
* ``wrongid``: files each match under another id, so that it answers the
  real match's PLAY and STOP ``busy`` and is busy when the next START comes,
  while INFO says it is free;
* ``drop``: closes (or resets) the connection of each PLAY without a reply;
* ``vanish``: plays two moves of a match, then stops listening.

The arena's matchmaking loop runs on its own (a round every second, and at
once when a match ends). Every few seconds the soak samples the server's
resident memory, threads and open files (``/proc``), reads the players'
statuses (a pause is noted with its reason; with ``--resume-after`` the owner
resumes a paused misbehaving player that long after, and a vanished one
listens again, so that faults keep coming for the whole run) and the running
matches (one older than its bound is stuck).

At the end it pauses the players still active (as their owner), waits for the
running matches to end, stops the server and checks:

* no match stuck: every stored match is over or failed, within its bound
  (the start clock, then per step each role's play clock and grace in turn,
  then STOP), none still running;
* memory, threads and open files flat: the second half's highest sample is
  at most the highest of the minutes after the warm-up up to the middle plus
  a tolerance (long runs), and after the drain the threads come back to the
  idle level;
* every match stored exactly once: the ids the players were sent START with
  are all in the database, once each, every finished one with a record of
  its steps;
* every misbehaving player paused at least once with its reason recorded
  (in the API and on its page), no well-behaved player ever.

It prints the figures and appends them as one JSON line to
``bench/results/arena_soak.jsonl`` with the commit. Traffic goes only to
127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import html
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ggp.gdl import rules_text  # noqa: F401  (imported so that a missing package fails before anything starts)
from ggp.protocol import PlayerConfig, PlayerService
from ggp.protocol.messages import Info, Play, Start, Stop, parse_message
from ggp.protocol.wire import HttpError, message_of, read_request, reply_bytes

RESULTS = Path(__file__).resolve().parent / "results" / "arena_soak.jsonl"
ROOT = Path(__file__).resolve().parent.parent

#: The kinds of player, in the order ``--players N`` takes them (then round again).
KINDS = ("good", "slow", "garbage", "wrongid", "drop", "late", "vanish", "serve", "sluggish")
GOOD = frozenset({"good", "serve", "sluggish"})
#: The arena's grace past each clock (fixed in :meth:`ggp.web.arena.Arena._play`).
GRACE = 0.5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- players of ours -------------------------------------------------------------------------------------
@dataclass
class Seen:
    """What a player of ours was sent and did, for the checks (guarded by ``lock``)."""

    starts: set[str] = field(default_factory=set)  # arena match ids (without ggp.arena.) START came for
    stops: set[str] = field(default_factory=set)
    misdeeds: collections.Counter[str] = field(default_factory=collections.Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _arena_id(match_id: str) -> str:
    return match_id.removeprefix("ggp.arena.")


class FakePlayer:
    """A GGP player of one kind on a loopback port, served by threads of this process (see the module)."""

    def __init__(self, kind: str, index: int, play_clock: float) -> None:
        self.kind = kind
        self.name = f"{kind}{index}"
        self.play_clock = play_clock
        self.service = PlayerService(PlayerConfig(spec="random", name=self.name, seed=index))
        self.seen = Seen()
        self.rng = random.Random(index)
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._plays_this_match = 0
        self._wrong = 0
        self.listen()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def listen(self) -> None:
        """Listen (again, on the same port)."""
        with self._lock:
            if self._listener is not None or self._closed:
                return
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self.port))
            sock.listen(32)
            sock.settimeout(0.2)
            self._listener = sock
        threading.Thread(target=self._accept, args=(sock,), name=f"soak-{self.name}", daemon=True).start()

    def vanish(self) -> None:
        """Stop listening and drop every open connection: connections are refused from now on."""
        with self._lock:
            sock, self._listener = self._listener, None
            conns = list(self._conns)
        if sock is not None:
            sock.close()
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)

    @property
    def listening(self) -> bool:
        return self._listener is not None

    def close(self) -> None:
        self._closed = True
        self.vanish()

    def _accept(self, sock: socket.socket) -> None:
        while self._listener is sock:
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), name=f"soak-{self.name}-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10.0)
            request = read_request(conn, time.monotonic() + 10.0)
            text = message_of(request)
            self._answer(conn, text, request.received)
        except (HttpError, TimeoutError, OSError, ValueError):
            pass
        except Exception:  # a fake player's bug must not end the soak; the referee sees a fault
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
            with contextlib.suppress(OSError):
                conn.close()

    def _misdeed(self, what: str) -> None:
        with self.seen.lock:
            self.seen.misdeeds[what] += 1

    def _answer(self, conn: socket.socket, text: str, received: float) -> None:
        try:
            message = parse_message(text)
        except Exception:  # not a GGP message: the service answers it as such
            message = None
        if isinstance(message, Start):
            with self.seen.lock:
                self.seen.starts.add(_arena_id(message.match_id))
            self._plays_this_match = 0
            if self.kind == "wrongid":  # filed under another id: the real one's PLAY and STOP get busy
                self._wrong += 1
                text = text.replace(message.match_id, f"{message.match_id}.x{self._wrong}", 1)
                self._misdeed("wrong match id")
        elif isinstance(message, Stop):
            with self.seen.lock:
                self.seen.stops.add(_arena_id(message.match_id))
        if isinstance(message, Info) and self.kind == "wrongid":
            conn.sendall(reply_bytes(200, f"((name {self.name}) (status available))"))  # it says it is free
            return
        reply = self.service.handle(text, received)
        if not isinstance(message, Play):
            conn.sendall(reply_bytes(reply.status, reply.body))
            return
        self._plays_this_match += 1
        self._play(conn, reply.status, reply.body)

    def _play(self, conn: socket.socket, status: int, body: str) -> None:
        kind = self.kind
        clock = self.play_clock
        if kind == "sluggish":
            time.sleep(clock / 3)
        elif kind == "late":
            time.sleep(clock + GRACE + 0.4)
            self._misdeed("reply after the clock")
        elif kind == "slow":
            self._misdeed("reply a byte at a time")
            data = reply_bytes(status, body + " " * 8)
            head, rest = data[: len(data) - 8], data[len(data) - 8 :]
            conn.sendall(head)
            gap = (clock + GRACE + 0.6) / len(rest)
            for b in rest:  # the last byte after the clock and the grace
                time.sleep(gap)
                conn.sendall(bytes([b]))
            return
        elif kind == "garbage":
            choice = self.rng.randrange(10)
            self._misdeed("garbage")
            if choice < 3:
                conn.sendall(reply_bytes(200, "((((( not a move"))
            elif choice < 5:
                conn.sendall(reply_bytes(200, "".join(chr(self.rng.randrange(0x20, 0x2FF)) for _ in range(40))))
            elif choice < 7:
                conn.sendall(b"\x00\xff GGP? no: this is not HTTP\r\n\r\n")
            elif choice < 9:
                conn.sendall(reply_bytes(500, "(error internal)"))
            else:
                big = "x" * (1024 * 1024 + 4096)  # over the host's cap on a reply
                conn.sendall(reply_bytes(200, big))
            return
        elif kind == "drop":
            self._misdeed("dropped connection")
            if self.rng.random() < 0.5:  # a reset rather than a close
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            return
        elif kind == "vanish" and self._plays_this_match > 2:
            self._misdeed("vanished mid-match")
            self.vanish()
            return
        conn.sendall(reply_bytes(status, body))


class ServedPlayer:
    """``ggp serve random`` in a process of its own (a well-behaved player we do not see inside)."""

    def __init__(self, index: int, log: Path) -> None:
        self.kind = "serve"
        self.name = f"serve{index}"
        self.seen = Seen()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ggp", "serve", "random", "--port", "0", "--seed", str(index)],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)  # bounds a hang; the line comes at once
        line = self.proc.stdout.readline() if ready else ""
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", line)
        if not found:
            self.close()
            raise RuntimeError(f"ggp serve did not start: {line!r} {log.read_text()[-500:]}")
        self.url = found.group(1)
        self.wait_until_available(log)

    def wait_until_available(self, log: Path, within: float = 1800.0) -> None:
        """A launched ``ggp serve`` answers INFO ``busy`` while its warm-up compiles, and the arena registers
        no busy player: wait for ``available`` (``within`` only bounds a hang)."""
        end = time.monotonic() + within
        while True:
            with contextlib.suppress(httpx.HTTPError):
                reply = httpx.post(self.url + "/", content="(INFO)", headers={"Content-Type": "text/acl"}, timeout=30)
                if "available" in reply.text.lower():
                    return
            if time.monotonic() > end or self.proc.poll() is not None:
                self.close()
                raise RuntimeError(f"ggp serve did not become available: {log.read_text()[-500:]}")
            time.sleep(0.2)  # polling the player's own answer, with a deadline

    listening = True

    def listen(self) -> None:
        pass

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate(timeout=10)


# --- the server ----------------------------------------------------------------------------------------------
@dataclass
class Config:
    minutes: float | None = None  # run this long (the long soak)...
    matches: int | None = None  # ...or until this many matches are over and every misbehaving player is paused
    players: int = 9
    arena_matches: int = 3
    start_clock: float = 3.0
    play_clock: float = 1.0
    games: tuple[str, ...] = ("sheet:tictactoe", "bomberman2p")
    resume_after: float | None = None  # seconds after which a paused misbehaving player is resumed
    sample_every: float = 5.0
    warmup: float | None = None  # seconds of warm-up not judged for flatness (default: a quarter, at most 5 min)
    deadline: float = 900.0  # the most a --matches run may take before it is called a failure
    work: Path | None = None
    log: Callable[[str], None] = print


def proc_sample(pid: int) -> dict[str, float]:
    """The server's resident memory (MiB), threads and open files, from /proc."""
    out: dict[str, float] = {"t": time.monotonic()}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss"] = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                out["threads"] = int(line.split()[1])
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return out


class Server:
    """``ggp web`` with the arena, in a process of its own."""

    def __init__(self, cfg: Config, work: Path) -> None:
        self.port = free_port()
        self.db = work / "web.sqlite3"
        sheets = work / "sheets"
        sheets.mkdir()
        shutil.copy(Path(__import__("ggp.gdl", fromlist=["x"]).__file__).parent / "tictactoe.kif", sheets)
        env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "GGP_WEB_ARENA_GAMES": ",".join(cfg.games),
            "GGP_WEB_ARENA_AGENTS": "random",
            "GGP_WEB_ARENA_MATCHES": str(cfg.arena_matches),
            "GGP_WEB_ARENA_START_CLOCK": str(cfg.start_clock),
            "GGP_WEB_ARENA_PLAY_CLOCK": str(cfg.play_clock),
            "GGP_WEB_ARENA_INTERVAL": "1",
            "GGP_WEB_ARENA_REGISTRATIONS_PER_HOUR": "10000",
        }
        self.log = work / "web.log"
        with self.log.open("w") as err:
            command = ["ggp", "web", "--port", str(self.port), "--db", str(self.db), "--sheets", str(sheets)]
            self.proc = subprocess.Popen(
                [sys.executable, "-m", *command, "--arena-allow", "127.0.0.0/8"],  # the arena may call loopback
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
            )
        self.base = f"http://127.0.0.1:{self.port}"
        self.http = httpx.Client(base_url=self.base, timeout=30)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # polling a port that is not open yet: bounded
            if self.proc.poll() is not None:
                raise RuntimeError(f"ggp web exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if self.http.get("/api/arena/players").status_code == 200:
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("ggp web did not answer within 120 s")

    def sample(self) -> dict[str, float]:
        return proc_sample(self.proc.pid)

    def stop(self) -> int | None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode


# --- the run -----------------------------------------------------------------------------------------------
def match_bound(cfg: Config, roles: int, steps: int) -> float:
    """The longest a match of ``steps`` joint moves may take: START, every role's clock in turn, STOP, ABORT."""
    per_message = cfg.play_clock + GRACE
    return cfg.start_clock + GRACE + roles * (cfg.start_clock + GRACE) + (steps + 1) * roles * per_message + 10.0


def commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True)
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


@contextlib.contextmanager
def workdir(cfg: Config) -> Iterator[Path]:
    if cfg.work is not None:
        cfg.work.mkdir(parents=True, exist_ok=True)
        yield cfg.work
        return
    path = Path(tempfile.mkdtemp(prefix="ggp-arena-soak-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def run(cfg: Config) -> dict[str, Any]:
    """Run the soak; returns its figures and ``failures`` (empty when every check passed)."""
    if (cfg.minutes is None) == (cfg.matches is None):
        raise ValueError("give --minutes or --matches")
    with workdir(cfg) as work:
        return _run(cfg, work)


def _run(cfg: Config, work: Path) -> dict[str, Any]:
    say = cfg.log
    code_version = commit()  # before the run: files edited meanwhile are not what ran
    began = time.monotonic()
    kinds = [KINDS[i % len(KINDS)] for i in range(cfg.players)]
    server = Server(cfg, work)
    players: list[Any] = []
    try:
        idle = server.sample()
        say(
            f"ggp web on {server.base} (pid {server.proc.pid}): {idle.get('rss', 0):.0f} MiB, {idle.get('threads')} threads"
        )
        for i, kind in enumerate(kinds):
            players.append(
                ServedPlayer(i, work / f"serve{i}.log") if kind == "serve" else FakePlayer(kind, i, cfg.play_clock)
            )
        ids: dict[str, Any] = {}
        tokens: dict[str, str] = {}
        for p in players:
            r = server.http.post("/api/arena/players", json={"name": p.name, "url": p.url, "contact": "soak"})
            if r.status_code != 201:
                raise RuntimeError(f"registering {p.name} failed: {r.status_code} {r.text}")
            ids[r.json()["id"]] = p
            tokens[r.json()["id"]] = r.json()["token"]
        say(f"{len(players)} players registered: {', '.join(p.name for p in players)}")
        samples: list[dict[str, float]] = []
        pauses: list[dict[str, Any]] = []
        resumes = 0
        paused_since: dict[str, float] = {}
        stuck: dict[str, dict[str, Any]] = {}
        page_checked: set[str] = set()
        page_failures: list[str] = []
        misbehaving = {pid for pid, p in ids.items() if p.kind not in GOOD}
        ever_paused: set[str] = set()
        over = 0
        next_sample = 0.0
        end = began + (cfg.minutes * 60 if cfg.minutes is not None else cfg.deadline)
        last_report = time.monotonic()
        reached = False
        api_errors: list[str] = []
        silent_since: float | None = None
        api_silent = False
        while time.monotonic() < end:  # one pass a second at most; bounded by ``end``
            now = time.monotonic()
            if now >= next_sample:
                sample = server.sample() | {"t": now - began}
                with contextlib.suppress(httpx.HTTPError):  # a visitor's look: the arena's page and its ratings
                    for key, path in (("page_ms", "/arena"), ("ratings_ms", "/api/arena/ratings")):
                        t0 = time.monotonic()
                        if server.http.get(path).status_code == 200:
                            sample[key] = round(1000 * (time.monotonic() - t0))
                samples.append(sample)
                next_sample = now + cfg.sample_every
            if server.proc.poll() is not None:
                raise RuntimeError(f"ggp web exited during the soak: {server.log.read_text()[-2000:]}")
            try:
                listed = server.http.get("/api/arena/players").json()["players"]
                for row in listed:
                    pid = row["id"]
                    if pid not in ids:
                        continue
                    if row["status"] == "paused" and pid not in paused_since:
                        paused_since[pid] = now
                        ever_paused.add(pid)
                        pauses.append(
                            {
                                "player": ids[pid].name,
                                "kind": ids[pid].kind,
                                "at": round(now - began, 1),
                                "reason": row["reason"],
                            }
                        )
                        say(f"  {now - began:7.1f} s  paused {ids[pid].name}: {row['reason']}")
                        if pid not in page_checked:
                            page_checked.add(pid)
                            page = server.http.get(f"/arena/players/{pid}").text
                            if not row["reason"] or html.escape(row["reason"][:60], quote=False) not in page:
                                page_failures.append(f"{ids[pid].name}'s page does not show why it is paused")
                    elif row["status"] == "active" and pid in paused_since:
                        del paused_since[pid]
                if cfg.resume_after is not None:
                    for pid, since in list(paused_since.items()):
                        if pid in misbehaving and now - since >= cfg.resume_after:
                            ids[pid].listen()  # a vanished player comes back
                            r = server.http.post(
                                f"/api/arena/players/{pid}/status",
                                json={"status": "active"},
                                headers={"X-GGP-Arena-Token": tokens[pid]},
                            )
                            if r.status_code == 200:
                                resumes += 1
                                del paused_since[pid]
                running = server.http.get("/api/arena/matches", params={"status": "running", "limit": 200}).json()[
                    "matches"
                ]
                wall = time.time()
                for m in running:
                    if wall - m["started"] > match_bound(cfg, len(m["roles"]), 200) and m["id"] not in stuck:
                        stuck[m["id"]] = m
                        say(f"  stuck? match {m['id']} running for {wall - m['started']:.0f} s")
                over = len(
                    server.http.get("/api/arena/matches", params={"status": "over", "limit": 200}).json()["matches"]
                )
                if now - last_report > 60:
                    last_report = now
                    s = samples[-1]
                    say(
                        f"  {now - began:7.1f} s  {over}+ over, {len(running)} running, {len(pauses)} pauses; server {s.get('rss', 0):.0f} MiB, {s.get('threads')} threads, {s.get('fds')} files"
                    )
            except httpx.HTTPError as exc:  # noted; the API silent for a minute is a failure
                api_errors.append(f"{now - began:.0f} s: {type(exc).__name__}: {exc}")
                silent_since = silent_since if silent_since is not None else now
                if now - silent_since > 60:
                    api_silent = True
                time.sleep(1.0)
                continue
            silent_since = None
            if cfg.matches is not None and over >= cfg.matches and misbehaving <= ever_paused:
                reached = True
                break
            time.sleep(1.0)  # the soak's pace: a look a second
        ran = time.monotonic() - began
        say(f"drain after {ran:.0f} s: pausing the active players, waiting for the running matches")
        for row in server.http.get("/api/arena/players").json()["players"]:
            if row["id"] in ids and row["status"] == "active":
                server.http.post(
                    f"/api/arena/players/{row['id']}/status",
                    json={"status": "paused"},
                    headers={"X-GGP-Arena-Token": tokens[row["id"]]},
                )
        drain_end = time.monotonic() + match_bound(cfg, 4, 40) + 30
        running = []
        while time.monotonic() < drain_end:  # bounded by the longest a match may take
            running = server.http.get("/api/arena/matches", params={"status": "running", "limit": 200}).json()[
                "matches"
            ]
            if not running:
                break
            time.sleep(0.5)
        drained = server.sample() | {"t": time.monotonic() - began}
        settle_end = time.monotonic() + 30
        base_threads = samples[0].get("threads", 0) if samples else 0
        while (
            time.monotonic() < settle_end and drained.get("threads", 0) > base_threads + 8
        ):  # late replies' threads end
            time.sleep(0.5)
            drained = server.sample() | {"t": time.monotonic() - began}
        code = server.stop()
        say(f"ggp web stopped (exit {code})")
    finally:
        for p in players:
            p.close()
        with contextlib.suppress(Exception):
            server.stop()
    figures = _judge(cfg, server, ids, samples, drained, pauses, ever_paused, misbehaving, stuck, running, ran)
    figures["resumes"] = resumes
    figures["failures"] = page_failures + figures["failures"]
    if cfg.matches is not None and not reached:
        figures["failures"].append(
            f"{cfg.matches} matches over with every misbehaving player paused not reached in {cfg.deadline:.0f} s"
        )
    figures["server_exit"] = code
    figures["api_errors"] = api_errors[:20]
    if api_silent:
        figures["failures"].append("the server's API did not answer for over a minute")
    figures["commit"] = code_version
    return figures


def _judge(
    cfg: Config,
    server: Server,
    ids: dict[str, Any],
    samples: list[dict[str, float]],
    drained: dict[str, float],
    pauses: list[dict[str, Any]],
    ever_paused: set[str],
    misbehaving: set[str],
    stuck: dict[str, Any],
    still_running: list[Any],
    ran: float,
) -> dict[str, Any]:
    failures: list[str] = []
    db = sqlite3.connect(f"file:{server.db}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    rows = db.execute("SELECT * FROM arena_matches").fetchall()
    pl = {r["id"]: dict(r) for r in db.execute("SELECT * FROM arena_players").fetchall()}
    try:
        kept = collections.Counter((r["player"], r["reason"]) for r in db.execute("SELECT * FROM arena_pauses"))
    except sqlite3.OperationalError:  # an arena from before the pause history
        kept = None
    db.close()
    by_id = collections.Counter(r["id"] for r in rows)
    dupes = [k for k, n in by_id.items() if n > 1]
    if dupes:
        failures.append(f"matches stored more than once: {dupes[:5]}")
    status = collections.Counter(r["status"] for r in rows)
    if status.get("running"):
        failures.append(f"{status['running']} matches still running after the drain")
    if still_running:
        failures.append(f"{len(still_running)} matches still running when the drain ended")
    if stuck:
        failures.append(f"matches running past their bound: {sorted(stuck)[:5]}")
    durations = []
    faults: collections.Counter[str] = collections.Counter()
    faults_by_player: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    records = 0
    for r in rows:
        roles = json.loads(r["roles"])
        who = json.loads(r["players"])
        if r["finished"] is None:
            continue
        took = r["finished"] - r["started"]
        durations.append(took)
        if r["record"]:
            records += 1
            record = json.loads(r["record"])
            steps = len(record["moves"])
            if record.get("steps", steps) != steps or len(record["goals"]) != len(roles):
                failures.append(f"match {r['id']}: its record is incomplete")
            if took > match_bound(cfg, len(roles), steps):
                failures.append(
                    f"match {r['id']} took {took:.1f} s, over its bound {match_bound(cfg, len(roles), steps):.1f} s"
                )
            found = [f for m in record["moves"] for f in m.get("faults", [])] + list(record.get("faults", []))
            for f in found:
                pid = who[roles.index(f["role"])]
                kind = ids[pid].kind if pid in ids else pl.get(pid, {}).get("kind", "?")
                faults[f"{f['kind']}"] += 1
                faults_by_player[kind][f["kind"]] += 1
        elif r["status"] == "over":
            failures.append(f"match {r['id']} is over without a record")
    stored = set(by_id)
    for p in ids.values():
        missing = p.seen.starts - stored
        if missing:
            failures.append(f"{p.name} was sent START for matches not stored: {sorted(missing)[:5]}")
    seen_starts = set().union(*(p.seen.starts for p in ids.values()))
    for pid in misbehaving - ever_paused:
        failures.append(f"{ids[pid].name} ({ids[pid].kind}) misbehaved but was never paused")
    for pid in ever_paused - misbehaving:
        failures.append(f"{ids[pid].name} ({ids[pid].kind}) behaved but was paused")
    names = {p.name: pid for pid, p in ids.items()}
    for p in pauses:
        if not p["reason"]:
            failures.append(f"{p['player']} was paused without a reason")
        elif kept is not None and not kept[(names[p["player"]], p["reason"])]:
            failures.append(f"{p['player']}'s pause ({p['reason'][:60]}) is not in the arena's pause history")
    # flat: the second half's highest vs the highest from the warm-up's end to the middle
    series: dict[str, Any] = {}
    if samples:
        half = ran / 2
        warm = cfg.warmup if cfg.warmup is not None else min(300.0, ran / 4)
        early = [s for s in samples if warm <= s["t"] <= half] or samples[: max(1, len(samples) // 2)]
        late = [s for s in samples if s["t"] > half] or samples[-1:]
        for key, tolerance in (
            ("rss", lambda v: v * 1.15 + 15),
            ("threads", lambda v: v + 12),
            ("fds", lambda v: v + 24),
            ("page_ms", None),
            ("ratings_ms", None),
        ):
            values = [s[key] for s in samples if key in s]
            if not values:
                continue
            e = max((s.get(key, 0) for s in early), default=0)
            lmax = max((s.get(key, 0) for s in late), default=0)
            series[key] = {
                "start": round(values[0], 1),
                "after_warmup": round(e, 1),
                "second_half_max": round(lmax, 1),
                "max": round(max(values), 1),
                "end": round(values[-1], 1),
                "after_drain": round(drained.get(key, 0), 1),
                "per_tenth": [round(max(s.get(key, 0) for s in part), 1) for part in _tenths(samples)],
            }
            if cfg.minutes is not None and tolerance is not None and lmax > tolerance(e):
                failures.append(f"{key} grew: {e:.0f} after the warm-up, {lmax:.0f} in the second half")
        if drained.get("threads", 0) > samples[0].get("threads", 0) + 8 + min(32, (os.cpu_count() or 1) + 4):
            failures.append(
                f"threads after the drain {drained.get('threads')} vs {samples[0].get('threads')} at the start"
            )
    started = sorted(r["started"] for r in rows)
    per_tenth = [0] * 10
    for t in started:
        per_tenth[min(9, int(10 * (t - started[0]) / max(1e-9, started[-1] - started[0])))] += 1
    kinds = collections.Counter(p.kind for p in ids.values())
    misdeeds: collections.Counter[str] = collections.Counter()
    for p in ids.values():
        misdeeds.update(p.seen.misdeeds)
    return {
        "kind": "arena_soak",
        "commit": commit(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(ran),
        "players": dict(kinds),
        "arena_matches": cfg.arena_matches,
        "clocks": [cfg.start_clock, cfg.play_clock, GRACE],
        "games": list(cfg.games),
        "matches": {
            "stored": len(rows),
            "sent_start": len(seen_starts),
            **{k: v for k, v in status.items()},
            "records": records,
            "duplicates": len(dupes),
            "stuck": len(stuck),
            "longest_s": round(max(durations), 1) if durations else None,
            "median_s": round(statistics.median(durations), 1) if durations else None,
            "started_per_tenth": per_tenth,
        },
        "faults": dict(faults),
        "faults_by_player_kind": {k: dict(v) for k, v in sorted(faults_by_player.items())},
        "misdeeds": dict(misdeeds),
        "pauses": pauses,
        "pause_history": sum(kept.values()) if kept is not None else None,
        "server": series,
        "failures": failures,
    }


def _tenths(samples: list[dict[str, float]]) -> list[list[dict[str, float]]]:
    n = len(samples)
    return [samples[i * n // 10 : max(i * n // 10 + 1, (i + 1) * n // 10)] for i in range(min(10, n))]


def summary(f: dict[str, Any]) -> str:
    m = f["matches"]
    lines = [
        f"arena soak, {f['seconds']} s at {f['commit']}: players {f['players']}, {f['arena_matches']} matches at once",
        f"  matches: {m['stored']} stored ({m.get('over', 0)} over, {m.get('failed', 0)} failed, "
        f"{m.get('running', 0)} running), {m['records']} records, {m['sent_start']} sent START, "
        f"{m['duplicates']} stored twice, {m['stuck']} stuck; longest {m['longest_s']} s, median {m['median_s']} s",
        f"  matches started by tenths of the run: {m['started_per_tenth']}",
        f"  faults recorded: {f['faults']}",
        f"  misbehaviour done: {f['misdeeds']}",
        f"  pauses: {len(f['pauses'])} ({f.get('resumes', 0)} resumed by their owner), "
        f"{f.get('pause_history')} in the arena's pause history; API errors: {len(f.get('api_errors', []))}",
    ]
    first: dict[str, str] = {}
    for p in f["pauses"]:
        first.setdefault(p["player"], p["reason"])
    lines += [f"    {name}: {reason}" for name, reason in first.items()]
    for key, s in f["server"].items():
        lines.append(
            f"  server {key}: start {s['start']}, after warm-up {s['after_warmup']}, second half max "
            f"{s['second_half_max']}, max {s['max']}, end {s['end']}, after drain {s['after_drain']}; by tenths {s['per_tenth']}"
        )
    lines.append("  checks: " + ("all passed" if not f["failures"] else "FAILED:\n    " + "\n    ".join(f["failures"])))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--minutes", type=float, help="run this long")
    what.add_argument(
        "--matches", type=int, help="run until this many matches are over and every misbehaving player is paused"
    )
    ap.add_argument(
        "--players", type=int, default=9, help=f"players, of the kinds {', '.join(KINDS)} in turn (default 9)"
    )
    ap.add_argument("--arena-matches", type=int, default=3, help="matches at once (default 3)")
    ap.add_argument("--play-clock", type=float, default=1.0)
    ap.add_argument("--start-clock", type=float, default=3.0)
    ap.add_argument(
        "--resume-after",
        type=float,
        default=None,
        help="resume a paused misbehaving player after this many seconds (default: --minutes runs 120, else never)",
    )
    ap.add_argument("--sample-every", type=float, default=5.0)
    ap.add_argument("--no-save", action="store_true", help="do not append to bench/results/arena_soak.jsonl")
    ap.add_argument("--work", type=Path, default=None, help="keep the server's database and logs in this directory")
    args = ap.parse_args(argv)
    resume = args.resume_after if args.resume_after is not None else (120.0 if args.minutes else None)
    cfg = Config(
        minutes=args.minutes,
        matches=args.matches,
        players=args.players,
        arena_matches=args.arena_matches,
        play_clock=args.play_clock,
        start_clock=args.start_clock,
        resume_after=resume,
        sample_every=args.sample_every,
        work=args.work,
        log=lambda line: print(line, flush=True),
    )
    figures = run(cfg)
    print(summary(figures), flush=True)
    if not args.no_save:
        RESULTS.parent.mkdir(exist_ok=True)
        with RESULTS.open("a") as fh:
            fh.write(json.dumps(figures, sort_keys=True) + "\n")
    return 1 if figures["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
