"""A hostile-input campaign against a real ``ggp web`` process on 127.0.0.1: nothing takes it down.

Every agent option with hostile values, malformed and oversized bodies, 32 racing posts for one seat and
step, and more event streams than a client may hold. Each case ends by checking that the same process
still answers. Bounded in count and time; traffic only to 127.0.0.1.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import httpx

from ggp.web.limits import Limits
from ggp.web.server import free_port

HOSTILE = ["nan", "inf", "-inf", "-1", "1e308", "99999999999999999999999", "", "abc", "0x10", "1e999"]


class Server:
    """``ggp web`` in a subprocess on 127.0.0.1 and a free port."""

    def __init__(self, db: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "ggp", "web", "--port", str(self.port), "--db", str(db)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.client = httpx.Client(base_url=self.url, timeout=30)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.client.get("/api/games", params={"limit": 1}).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None, f"ggp web exited at start: {self.stderr()}"
            assert time.monotonic() < deadline, "ggp web did not answer within 60 s"
            time.sleep(0.05)  # polling the port until it answers

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        assert self.proc.stderr is not None
        return self.proc.stderr.read()[-3000:]

    def answers(self, after: object = "") -> None:
        """The process is alive and answers a request (``after``: the case just sent, for the message)."""
        assert self.proc.poll() is None, f"ggp web died (exit {self.proc.returncode}) after {after!r}: {self.stderr()}"
        r = self.client.get("/api/games", params={"limit": 1}, timeout=10)
        assert r.status_code == 200, (after, r.status_code, r.text[:200])

    def close(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("abuse") / "web.sqlite3")
    try:
        yield running
    finally:
        running.close()


def raw(port: int, request: bytes, timeout: float = 10.0) -> bytes:
    """Send ``request`` as is on a new connection; the first bytes of the answer (b"" if it closes on us)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(request)
            return s.recv(4096)
        except (ConnectionError, TimeoutError):
            return b""


# --- agent options -------------------------------------------------------------------------------------
def test_hostile_values_for_every_option_of_every_agent_are_400(server: Server) -> None:
    catalog = server.client.get("/api/catalog").json()
    game_for = {}
    for game in catalog["games"]:
        for agent in game["agents"]:
            game_for.setdefault(agent, game)
    cases = 0
    before = server.client.get("/api/games").json()["total"]
    for agent in catalog["agents"]:
        game = game_for[agent["name"]]
        assert agent["options"], agent  # every agent has at least a seed
        for option in agent["options"]:
            for value in HOSTILE:
                spec = f"{agent['name']}:{option}={value}"
                body = {"game": game["name"], "players": {game["roles"][0]: spec}, "agent_time": 0.1}
                r = server.client.post("/api/games", json=body)
                assert r.status_code == 400, (spec, r.status_code, r.text[:300])
                assert option in r.json()["detail"], (spec, r.text[:300])  # says which option is wrong
                server.answers(spec)
                cases += 1
    assert cases >= 5 * len(HOSTILE)
    assert server.client.get("/api/games").json()["total"] == before  # not one match was made


def test_hostile_settings_are_400(server: Server) -> None:
    for settings in [
        '{"game": "wallmaze", "agent_time": NaN}',
        '{"game": "wallmaze", "agent_time": -Infinity}',
        '{"game": "wallmaze", "agent_time": 1e999}',
        '{"game": "wallmaze", "agent_time": 0}',
        '{"game": "wallmaze", "agent_time": 100000}',
        '{"game": "wallmaze", "pace": -1}',
        '{"game": "wallmaze", "pace": 1e308}',
        '{"game": "wallmaze", "agent_time": "soon"}',
        '{"game": "\\ud800"}',
        '{"game": "wallmaze", "players": {"white": "random:seed=\\udfff"}}',
        '{"game": "wallmaze", "seats": ["white", "black", "nobody"]}',
        '{"game": "wallmaze", "players": {"white": ["random"]}}',
        '{"game": "wallmaze", "players": {"white": "random:seed=1:seed=2"}}',
        '{"game": "wallmaze", "players": {"white": "random:seed=1,seed=2"}}',
        '{"game": "wallmaze", "players": {"white": "random:nosuch=1"}}',
        '{"game": "wallmaze", "players": {"white": "::::"}}',
        '{"game": "wallmaze", "extra": 1}',
    ]:
        r = server.client.post("/api/games", content=settings, headers={"content-type": "application/json"})
        assert r.status_code == 400, (settings, r.text[:300])
        server.answers(settings)


# --- malformed and oversized bodies ---------------------------------------------------------------------
def test_malformed_and_oversized_bodies(server: Server) -> None:
    match = server.client.post("/api/games", json={"game": "wallmaze", "players": {"black": "random"}}).json()
    gid, token = match["id"], match["tokens"]["white"]
    headers = {"content-type": "application/json", "X-Seat-Token": token}
    bodies: list[bytes] = [
        b"",
        b"{",
        b"null",
        b"[]",
        b'"text"',
        b"\xff\xfe\x00garbage",
        b'{"role": "white", "move": "noop", "step": 0' + b"}" * 1000,
        b"[" * 30_000 + b"]" * 30_000,  # deep nesting, under the size limit
        b'{"role": "white", "move": "noop", "step": ' + b"9" * 5000 + b"}",  # an int of 5000 digits
        b'{"role": "white", "move": "noop", "step": 1e999}',
        b'{"role": "white", "move": "\\ud800", "step": 0}',  # a lone surrogate
        b'{"role": "white", "move": "' + b"(" * 60_000 + b'", "step": 0}',
        b'{"role": "white", "move": {"a": [1, 2, {"b": null}]}, "step": 0}',
        b'{"role": null, "move": "noop", "step": 0}',
        b'{"role": "white", "move": "noop", "step": 0, "extra": "x"}',
        b'{"role": "white", "move": "noop", "step": 0}' + b" " * (Limits().max_body_bytes + 1),
    ]
    for body in bodies:
        r = server.client.post(f"/api/games/{gid}/moves", content=body, headers=headers)
        assert r.status_code in (400, 413), (body[:60], r.status_code, r.text[:300])
        assert len(r.content) < 5000, (body[:60], len(r.content))  # no echo of the input
        server.answers(body[:60])
    view = server.client.get(f"/api/games/{gid}").json()
    assert view["step"] == 0 and view["submitted"] == ["black"]  # none of it moved white
    for request in [
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: lots\r\n\r\n",
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n",
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\nContent-Length: 20\r\n\r\n",
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n",
        b"GET /api/games/" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Junk: " + b"j" * 2_000_000 + b"\r\n\r\n",
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/1.0\r\n\r\n",  # no Host at all
    ]:
        reply = raw(server.port, request)
        assert not reply or reply.startswith(b"HTTP/1.1 4"), (request[:60], reply[:120])  # refused, not a 5xx
        server.answers(request[:60])


# --- racing moves ---------------------------------------------------------------------------------------
def test_of_32_concurrent_posts_for_one_seat_and_step_exactly_one_is_accepted(server: Server) -> None:
    match = server.client.post("/api/games", json={"game": "wallmaze"}).json()  # two people: both seats ours
    gid, token = match["id"], match["tokens"]["white"]
    moves = ["(move 2 5 3 5)", "noop"]

    def post(k: int) -> int:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            body = {"role": "white", "move": moves[k % 2], "step": 0}
            return c.post(f"/api/games/{gid}/moves", json=body, headers={"X-Seat-Token": token}).status_code

    with ThreadPoolExecutor(max_workers=32) as pool:
        codes = list(pool.map(post, range(32)))
    assert codes.count(200) == 1 and codes.count(409) == 31, codes
    view = server.client.get(f"/api/games/{gid}").json()
    assert view["submitted"] == ["white"] and view["step"] == 0
    server.answers("32 racing moves")


# --- event streams ----------------------------------------------------------------------------------------
def _open_stream(port: int, path: str) -> tuple[socket.socket, int]:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    while b"\r\n" not in head:
        chunk = s.recv(1024)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return s, status


@pytest.mark.timing
def test_many_simultaneous_event_streams(server: Server) -> None:
    limit = Limits().max_streams_per_client
    gids = [server.client.post("/api/games", json={"game": "wallmaze"}).json()["id"] for _ in range(3)]
    paths = [f"/api/games/{gids[0]}/events", f"/api/events?games={','.join(gids)}"]
    sockets: list[socket.socket] = []
    statuses = []
    try:
        for k in range(limit + 24):
            s, status = _open_stream(server.port, paths[k % 2])
            sockets.append(s)
            statuses.append(status)
        assert statuses.count(200) == limit and statuses.count(429) == 24, statuses
        server.answers("streams held open")  # other requests still go through
        body = {"role": "white", "move": "noop", "step": 0}
        r = httpx.post(f"{server.url}/api/games/{gids[0]}/moves", json=body, timeout=10)
        assert r.status_code == 403  # a stranger's move is refused, and answered while the streams are open
    finally:
        for s in sockets:
            s.close()
    deadline = time.monotonic() + 60  # a guard against a hang: the disconnects are noticed long before
    while True:  # the server sees the clients go and frees their slots
        s, status = _open_stream(server.port, paths[0])
        s.close()
        if status == 200:
            break
        assert status == 429 and time.monotonic() < deadline, status
        time.sleep(0.1)  # polling until the disconnects are noticed
    server.answers("streams closed")


def test_unknown_and_hostile_ids_and_paths(server: Server) -> None:
    for path in [
        "/api/games/../../etc/passwd",
        "/api/games/%00",
        "/api/games/" + "f" * 65,
        "/api/games/ABCDEF",
        "/games/%ff%fe",
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/api/games/0/steps/1e3",
        "/api/games?status=" + "x" * 5000,
    ]:
        r = server.client.get(path)
        assert r.status_code in (400, 404), (path, r.status_code, r.text[:200])
        assert "def create_app" not in r.text
        server.answers(path)
    text = server.client.get("/api/events", params={"games": "x,../..,0123456789ab"}).text
    assert text.count("event: gone") == 3 and "event: end" in text  # unknown ids are named gone; the stream ends
    body: Any = json.dumps({"role": "white"})
    r = server.client.post("/api/games/0123456789ab/resign", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 404
    server.answers("resign of an unknown match")
