"""``ggp web`` killed with SIGKILL in the middle of matches loses nothing and duplicates nothing.

A real server runs as a subprocess on 127.0.0.1. Agents play each other, people (this test, over HTTP with
their seat tokens) play agents and each other, and the server is killed several times, once with a move in
flight. After every restart the SQLite history must hold each match's steps numbered 0..n without gaps, each
stored state must be the state its moves lead to by the rules, a finished match's goals must be the rules'
goals, every move the server acknowledged must be there, and the matches of agents alone must go on by
themselves (nobody opens them) to their end.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

import ggp  # noqa: E402
from ggp.web.seats import HEADER  # noqa: E402

DEADLINE = 60.0  # seconds any one wait may take before it counts as a failure
AGENT_MATCHES = [  # (game, pace): paced so that they are still playing across the kills
    ("amazons_10x10", 0.03),
    ("bomberman2p", 0.08),
    ("wallmaze", 0.12),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``ggp web`` on 127.0.0.1 over one database, started and SIGKILLed by the test."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db = db
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.starts = 0

    def start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GGP_WEB_")}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ggp", "web", "--port", str(port), "--db", str(self.db)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self.starts += 1
        deadline = time.monotonic() + (120.0 if self.starts == 1 else DEADLINE)  # the first may compile
        while True:
            assert self.proc.poll() is None, f"ggp web exited: {self.log_tail()}"
            try:
                if httpx.get(self.url + "/api/catalog", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"ggp web did not answer: {self.log_tail()}"
            time.sleep(0.05)  # polling the port of another process

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=DEADLINE)
        self.proc = None

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=DEADLINE)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "web.sqlite3", tmp_path / "server.log")
    try:
        yield srv
    finally:
        if srv.proc is not None:
            srv.kill()


# --- what the database must say ---------------------------------------------------------------------------
def stored_matches(db: Path) -> dict[str, dict[str, Any]]:
    """Every match in the file with its steps, read directly (the server may be dead or running)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        out = {}
        for row in con.execute("SELECT * FROM matches"):
            steps = con.execute(
                "SELECT step, joint, state FROM steps WHERE match_id = ? ORDER BY step", (row["id"],)
            ).fetchall()
            out[row["id"]] = {**dict(row), "rows": [dict(s) for s in steps]}
        return out
    finally:
        con.close()


def check_history(db: Path) -> dict[str, dict[str, Any]]:
    """Every stored match is whole and agrees with the rules; returns the matches."""
    matches = stored_matches(db)
    for mid, m in matches.items():
        game = ggp.load(m["game"])
        rows = m["rows"]
        assert [r["step"] for r in rows] == list(range(m["steps"] + 1)), f"{mid}: steps with gaps or extra"
        state = game.initial_state()
        assert game.state_from_json(rows[0]["state"]) == state
        for r in rows[1:]:
            state = game.next_state(state, json.loads(r["joint"]))
            assert game.state_from_json(r["state"]) == state, f"{mid}: step {r['step']} is not its moves' state"
        goals = json.loads(m["goals"]) if m["goals"] else None
        if m["status"] == "playing":
            assert not game.is_terminal(state) and m["ended"] is None and goals is None
            for role, text in json.loads(m["pending"]).items():
                assert game.parse_move(text) in game.legal_moves(state, role), f"{mid}: stale pending move"
        elif m["ended"] == "terminal":
            assert game.is_terminal(state) and goals == list(game.goals(state)), f"{mid}: goals are not the rules'"
        else:
            assert m["ended"] in ("resigned", "aborted") and not game.is_terminal(state)
    return matches


def assert_acknowledged_moves_kept(db: Path, acked: list[tuple[str, int, str, str]]) -> None:
    """Each (match, step, role, move) the server answered 200 to is in that step's joint move, or pending."""
    matches = stored_matches(db)
    for mid, step, role, move in acked:
        m = matches[mid]
        index = json.loads(m["roles"]).index(role)
        if step < m["steps"]:
            assert json.loads(m["rows"][step + 1]["joint"])[index] == move, (mid, step, role, move)
        else:
            assert m["steps"] == step and json.loads(m["pending"]).get(role) == move, (mid, step, role, move)


# --- playing over HTTP ------------------------------------------------------------------------------------
class Person:
    """Someone playing one seat over the API with its token, choosing moves with a seeded generator."""

    def __init__(self, match_id: str, role: str, token: str, seed: int) -> None:
        self.match_id, self.role, self.token = match_id, role, token
        self.rng = random.Random(seed)

    def view(self, client: httpx.Client, wait: float = 0.0) -> dict[str, Any]:
        r = client.get(f"/api/games/{self.match_id}", params={"wait": wait}, headers={HEADER: self.token})
        assert r.status_code == 200, r.text
        return dict(r.json())

    def move(self, client: httpx.Client, acked: list[tuple[str, int, str, str]]) -> dict[str, Any] | None:
        """Play one move if it is this seat's turn (waiting for agents first); the new view, or None."""
        view = self.view(client, wait=10)
        if view["terminal"] or self.role not in view["awaiting"]:
            return None
        text = self.rng.choice([m["move"] for m in view["legal"][self.role]])
        body = {"role": self.role, "move": text, "step": view["step"]}
        r = client.post(f"/api/games/{self.match_id}/moves", json=body, headers={HEADER: self.token})
        assert r.status_code == 200, r.text
        acked.append((self.match_id, view["step"], self.role, text))
        return dict(r.json())


def listed(client: httpx.Client) -> dict[str, dict[str, Any]]:
    """The history list (it does not open matches, so it cannot be what resumes them)."""
    r = client.get("/api/games", params={"limit": 100})
    assert r.status_code == 200, r.text
    return {g["id"]: g for g in r.json()["games"]}


def wait_for_agents_to_advance(client: httpx.Client, ids: list[str], steps: int) -> dict[str, dict[str, Any]]:
    """Wait until every agent-only match still playing has made ``steps`` more steps, or ended."""
    start = listed(client)
    deadline = time.monotonic() + DEADLINE
    while True:
        now = listed(client)
        if all(now[i]["status"] == "over" or now[i]["steps"] >= start[i]["steps"] + steps for i in ids):
            return now
        assert time.monotonic() < deadline, f"agent-only matches did not go on by themselves: {now}"
        time.sleep(0.05)  # polling another process


def test_sigkill_mid_match_loses_and_duplicates_nothing(server: Server) -> None:
    acked: list[tuple[str, int, str, str]] = []
    server.start()
    with server.client() as client:
        agent_ids = []
        for game, pace in AGENT_MATCHES:
            roles = ggp.load(game).roles
            body = {"game": game, "players": dict.fromkeys(roles, "random"), "pace": pace, "agent_time": 0.5}
            r = client.post("/api/games", json=body)
            assert r.status_code == 201, r.text
            agent_ids.append(r.json()["id"])
        people = []
        for k, (game, players) in enumerate(
            [
                ("wallmaze", {"white": "human", "black": "random:seed=7"}),
                ("amazons_8x8", {"white": "human", "black": "random:seed=8"}),
                ("bomberman2p", {"bomberman": "human", "bomberwoman": "human"}),
            ]
        ):
            r = client.post("/api/games", json={"game": game, "players": players, "agent_time": 0.5})
            assert r.status_code == 201, r.text
            view = r.json()
            people += [
                Person(view["id"], role, token, seed=10 * k + j)
                for j, (role, token) in enumerate(view["tokens"].items())
            ]
        maze, amazons, man, woman = people

        # round 1: people move; the two-person game keeps a half step (bomberman moved, bomberwoman not yet)
        wait_for_agents_to_advance(client, agent_ids, 3)
        for _ in range(3):
            maze.move(client, acked)
            amazons.move(client, acked)
        assert man.move(client, acked) is not None
    server.kill()
    check_history(server.db)
    assert_acknowledged_moves_kept(server.db, acked)

    # round 2: the half step survived; agents go on by themselves; a move is in flight when the server dies
    server.start()
    with server.client() as client:
        wait_for_agents_to_advance(client, agent_ids, 3)
        view = woman.view(client)
        assert view["submitted"] == ["bomberman"] and view["awaiting"] == ["bomberwoman"] and view["step"] == 0
        assert woman.move(client, acked) is not None
        assert man.view(client)["step"] == 1
        maze.move(client, acked)
        view = amazons.view(client, wait=10)
        text = amazons.rng.choice([m["move"] for m in view["legal"]["white"]])
        in_flight = threading.Thread(
            target=lambda: _post_quietly(server.url, amazons, {"role": "white", "move": text, "step": view["step"]}),
            daemon=True,
        )
        in_flight.start()
    server.kill()
    in_flight.join(timeout=DEADLINE)
    check_history(server.db)
    assert_acknowledged_moves_kept(server.db, acked)

    # round 3: a resignation, then killed again
    server.start()
    with server.client() as client:
        wait_for_agents_to_advance(client, agent_ids, 2)
        amazons.move(client, acked)  # its step may or may not have been taken before the kill: either is whole
        r = client.post(
            f"/api/games/{amazons.match_id}/resign", json={"role": "white"}, headers={HEADER: amazons.token}
        )
        assert r.status_code == 200, r.text
        maze.move(client, acked)
    server.kill()
    matches = check_history(server.db)
    assert_acknowledged_moves_kept(server.db, acked)
    assert (matches[amazons.match_id]["ended"], json.loads(matches[amazons.match_id]["goals"])) == (
        "resigned",
        [0, 100],
    )

    # the last start: nobody opens the agents' matches, and they play to their end; the people finish theirs
    server.start()
    with server.client() as client:
        deadline = time.monotonic() + DEADLINE
        while any(listed(client)[i]["status"] != "over" for i in agent_ids):
            assert time.monotonic() < deadline, "agent-only matches did not finish by themselves after the restart"
            time.sleep(0.1)  # polling another process
        for seats in ([maze], [man, woman]):
            for _ in range(200):  # a wall maze game has 30 steps, Bomberman 50
                for person in seats:
                    person.move(client, acked)
                if seats[0].view(client)["terminal"]:
                    break
            else:
                pytest.fail(f"{seats[0].match_id} did not end")
        finals = {i: client.get(f"/api/games/{i}").json() for i in [*agent_ids, maze.match_id, man.match_id]}
        assert all(v["status"] == "over" and v["ended"] == "terminal" for v in finals.values())
        assert client.get("/api/catalog").status_code == 200  # and it still answers
    server.kill()
    matches = check_history(server.db)
    assert_acknowledged_moves_kept(server.db, acked)
    assert len(matches) == 6 and all(m["status"] == "over" for m in matches.values())
    for mid, view in finals.items():
        assert view["step"] == matches[mid]["steps"]
        assert list(view["goals"].values()) == json.loads(matches[mid]["goals"])


def _post_quietly(url: str, person: Person, body: dict[str, Any]) -> None:
    """A move whose answer may never come: the server is killed while it is on its way."""
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(f"{url}/api/games/{person.match_id}/moves", json=body, headers={HEADER: person.token}, timeout=5)
