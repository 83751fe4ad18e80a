"""The web app's JSON API and pages, through FastAPI's TestClient (no browser, no sockets)."""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's TestClient prefers httpx2; httpx works the same
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import ggp
from ggp.agents import AGENTS, Agent
from ggp.core.game import Move, State
from ggp.match.calls import margin
from ggp.web.app import create_app

Client = Callable[..., AbstractContextManager[TestClient]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "web.sqlite3"


#: The app serves loopback host names only (TestClient's default "testserver" is refused).
BASE = "http://127.0.0.1"


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db), base_url=BASE) as c:
        yield c


@contextmanager
def app_on(db: Path, cookies: Any = None) -> Iterator[TestClient]:
    """A fresh app (a server restart) on the database ``db``; ``cookies`` carries a browser's seats over."""
    with TestClient(create_app(db), base_url=BASE, cookies=cookies) as c:
        yield c


def new_game(client: TestClient, game: str, players: dict[str, str], **settings: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"game": game, "players": players, **settings})
    assert r.status_code == 201, r.text
    return r.json()


def move(client: TestClient, gid: str, role: str, text: Any, *, step: int) -> Any:
    """Move for ``role`` in step ``step`` with the seat's token from the client's cookie, then wait for agents."""
    return client.post(f"/api/games/{gid}/moves", params={"wait": 10}, json={"role": role, "move": text, "step": step})


def wait(client: TestClient, gid: str) -> dict[str, Any]:
    r = client.get(f"/api/games/{gid}", params={"wait": 30})
    assert r.status_code == 200
    return dict(r.json())


def east_or_wait(view: dict[str, Any], role: str) -> str:
    """A wall-maze player who walks east when it can and otherwise waits: white's way home."""
    east = [m["move"] for m in view["legal"][role] if m["dir"] == "east"]
    return (east or ["noop"])[0]


# --- catalogue and pages ----------------------------------------------------------------------------
def test_catalog_lists_the_games_and_the_registered_agents(client: TestClient) -> None:
    data = client.get("/api/catalog").json()
    assert [g["name"] for g in data["games"]] == ggp.game_names()
    assert {a["name"] for a in data["agents"]} == set(AGENTS)
    assert {"name": "random", "options": ["seed"]} in data["agents"]


def test_home_page_shows_every_game_with_its_board_and_agents(client: TestClient) -> None:
    page = client.get("/").text
    for name in ggp.game_names():
        assert f'id="game-{name}"' in page
        assert f'name="game" value="{name}"' in page
    assert page.count("<svg") >= 5 and 'data-cell="1 1"' in page
    for name in AGENTS:
        assert f'<option value="{name}"' in page


def test_openapi_documents_the_api(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/games", "/api/games/{match_id}", "/api/games/{match_id}/moves", "/api/games/{match_id}/events"):
        assert path in paths
    assert client.get("/docs").status_code == 200


def test_new_game_form_redirects_to_the_play_page(client: TestClient) -> None:
    body = "game=amazons_8x8&player_white=human&player_black=random&options_black=seed%3D2&agent_time=0.5&pace=0"
    headers = {"content-type": "application/x-www-form-urlencoded"}
    r = client.post("/new", content=body, headers=headers, follow_redirects=False)
    assert r.status_code == 303
    gid = r.headers["location"].rsplit("/", 1)[1]
    view = client.get(f"/api/games/{gid}").json()
    assert view["players"] == {"white": "human", "black": "random:seed=2"}
    assert view["settings"] == {"agent_time": 0.5, "pace": 0.0, "human_time": 0.0}  # no clock unless asked
    page = client.get(f"/games/{gid}")
    assert page.status_code == 200 and 'data-cell="1 3"' in page.text and "initial-view" in page.text
    bad = client.post("/new", content="game=wallmaze&player_white=nosuchagent", headers=headers)
    assert bad.status_code == 400 and "unknown agent" in bad.text


def test_unknown_game_agent_role_or_match(client: TestClient) -> None:
    for body, words in [
        ({"game": "chess"}, "unknown game"),
        ({"game": "wallmaze", "players": {"white": "nosuch"}}, "unknown agent"),
        ({"game": "wallmaze", "players": {"red": "human"}}, "no role 'red'"),
        ({"game": "wallmaze", "players": {"white": "random:seed=x"}}, "seed"),
        ({"game": "wallmaze", "agent_time": 0}, "agent_time"),
    ]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and words in r.json()["detail"], (body, r.text)
    assert client.post("/api/games", json={"players": {}}).status_code == 400  # no game: malformed
    assert client.get("/api/games/nosuch").status_code == 404
    assert client.get("/games/nosuch").status_code == 404


# --- playing -----------------------------------------------------------------------------------------
def test_play_wallmaze_to_the_end_against_random(client: TestClient) -> None:
    view = new_game(client, "wallmaze", {"white": "human", "black": "random:seed=1"})
    gid = view["id"]
    assert view["awaiting"] == ["white"] and view["step"] == 0 and view["status"] == "playing"
    for _ in range(40):
        if view["terminal"]:
            break
        if not view["awaiting"]:
            view = wait(client, gid)
            continue
        r = move(client, gid, "white", east_or_wait(view, "white"), step=view["step"])
        assert r.status_code == 200, r.text
        view = r.json()
    assert view["terminal"] and view["status"] == "over"
    assert view["state"]["white"] == [12, 5] and view["goals"]["white"] in (100, 75, 50)  # white walks home first
    record = client.get(f"/api/games/{gid}/record").json()
    assert record["format"] == "ggp-match" and record["terminal"] is True
    assert record["steps"] == view["step"] == len(record["moves"])
    assert record["goals"] == [view["goals"]["white"], view["goals"]["black"]]
    assert record["agents"] == {"white": "human", "black": "random:seed=1"}
    # the moves replay to the recorded result with the game's rules
    game = ggp.load("wallmaze")
    state = game.initial_state()
    for m in record["moves"]:
        state = game.next_state(state, m["joint"])
    assert game.state_to_dict(state) == record["final_state"] and list(game.goals(state)) == record["goals"]
    listed = client.get("/api/games").json()
    assert listed["total"] == 1 and listed["games"][0]["id"] == gid and listed["games"][0]["status"] == "over"
    download = client.get(f"/games/{gid}/record.json")
    assert "attachment" in download.headers["content-disposition"] and download.json() == record
    r = move(client, gid, "white", "noop", step=view["step"])
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_record_is_the_ggp_match_format(client: TestClient) -> None:
    record_module = pytest.importorskip("ggp.match.record")
    view = new_game(client, "amazons_8x8", {"white": "random:seed=1", "black": "random:seed=2"})
    view = wait(client, view["id"])
    assert view["terminal"]
    data = client.get(f"/api/games/{view['id']}/record").json()
    record = record_module.MatchRecord.from_dict(data, verify=True)
    assert record.steps == view["step"] and list(record.goals) == [view["goals"]["white"], view["goals"]["black"]]


def test_illegal_or_malformed_move_is_400_and_changes_nothing(client: TestClient, db: Path) -> None:
    view = new_game(client, "amazons_8x8", {"white": "human", "black": "random"})
    gid = view["id"]
    before = client.get(f"/api/games/{gid}", params={"svg": 1}).json()
    for text in ["(move 1 3 1 3)", "(fire 4 4)", "(((", "", "hello", 42, None, ["(move 1 3 1 4)"], "(move 1 3 1 9)"]:
        r = client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": text, "step": 0})
        assert r.status_code == 400, (text, r.text)
        detail = r.json()["detail"]
        assert "legal moves:" in detail and "(move 1 3 1 4)" in detail, detail
        assert "(move 1 3 1 4)" in r.json()["legal"]
    assert client.post(f"/api/games/{gid}/moves", content=b"not json").status_code == 400
    assert client.post(f"/api/games/{gid}/moves", json={"role": "red", "move": "noop", "step": 0}).status_code == 400
    r = client.post(f"/api/games/{gid}/moves", json={"role": "black", "move": "noop", "step": 0})
    assert r.status_code == 400 and "agent" in r.json()["detail"]
    for step in [None, "0", 0.0, True, -1]:  # the step is required, and a whole number
        r = client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": "(move 1 3 1 4)", "step": step})
        assert r.status_code == 400 and "step" in r.json()["detail"], (step, r.text)
    r = client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": "(move 1 3 1 4)"})
    assert r.status_code == 400 and "step" in r.json()["detail"]
    r = client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": "(move 1 3 1 4)", "step": 5})
    assert r.status_code == 409 and "step" in r.json()["detail"]
    after = client.get(f"/api/games/{gid}", params={"svg": 1}).json()
    assert after == before
    with app_on(db) as fresh:  # and nothing was stored
        assert fresh.get(f"/api/games/{gid}").json()["step"] == 0
    # the short notation is accepted too, and a whole Amazons turn is two steps
    r = move(client, gid, "white", "a3-a4", step=0)
    assert r.status_code == 200 and r.json()["state"]["phase"] == "fire"
    r = move(client, gid, "white", "(fire 1 5)", step=1)
    assert r.status_code == 200
    view = wait(client, gid)
    assert view["step"] == 4 and view["awaiting"] == ["white"]  # black moved and fired


def test_restart_on_the_same_database_continues_the_game(db: Path) -> None:
    with app_on(db) as first:
        view = new_game(first, "wallmaze", {"white": "human", "black": "random:seed=4"})
        gid = view["id"]
        for _ in range(3):
            view = move(first, gid, "white", east_or_wait(view, "white"), step=view["step"]).json()
        assert view["step"] == 3
        state = view["state"]
        # a simultaneous game of two people, one of whom has moved: that half step survives too
        hot = new_game(first, "bomberman2p", {"bomberman": "human", "bomberwoman": "human"})
        assert move(first, hot["id"], "bomberman", "dropBomb", step=0).json()["submitted"] == ["bomberman"]
        seats = first.cookies  # the browser keeps its seats across the restart
    with app_on(db, cookies=seats) as second:
        view = second.get(f"/api/games/{gid}").json()
        assert view["step"] == 3 and view["state"] == state and view["awaiting"] == ["white"]
        assert view["mine"] == ["white"]  # the seat's token still holds: only its hash is stored
        while not view["terminal"]:
            view = (
                move(second, gid, "white", east_or_wait(view, "white"), step=view["step"]).json()
                if view["awaiting"]
                else wait(second, gid)
            )
        assert view["status"] == "over"
        hot_view = second.get(f"/api/games/{hot['id']}").json()
        assert hot_view["awaiting"] == ["bomberwoman"] and hot_view["submitted"] == ["bomberman"]
        after = move(second, hot["id"], "bomberwoman", "(move west)", step=0).json()
        assert after["step"] == 1 and after["last_joint"] == {"bomberman": "dropBomb", "bomberwoman": "(move west)"}
        assert after["state"]["bombs"] == [[1, 1, 3]]
    with app_on(db) as third:
        record = third.get(f"/api/games/{gid}/record").json()
        assert record["terminal"] and record["steps"] == view["step"]
        assert third.get("/api/games").json()["total"] == 2


def test_simultaneous_agent_move_is_revealed_only_with_the_persons(client: TestClient) -> None:
    view = new_game(client, "bomberman2p", {"bomberman": "human", "bomberwoman": "random:seed=3"})
    gid = view["id"]
    view = wait(client, gid)  # the agent has chosen; its choice is not shown
    assert view["submitted"] == ["bomberwoman"] and view["awaiting"] == ["bomberman"]
    assert view["last_joint"] is None and view["step"] == 0 and "pending" not in view
    after = move(client, gid, "bomberman", "(move north)", step=0).json()
    assert after["step"] == 1 and after["last_joint"]["bomberman"] == "(move north)"
    assert after["last_joint"]["bomberwoman"] in {"(move south)", "(move west)", "(move nowhere)", "dropBomb"}


def test_bomb_countdown_and_fire_in_the_state(client: TestClient) -> None:
    view = new_game(client, "bomberman2p", {"bomberman": "human", "bomberwoman": "human"})
    gid = view["id"]
    timers = []
    for step, man in enumerate(["dropBomb", "(move north)", "(move north)", "(move east)", "(move nowhere)"]):
        r = client.post(f"/api/games/{gid}/moves", json={"role": "bomberman", "move": man, "step": step})
        assert r.status_code == 200, r.text
        woman = {"role": "bomberwoman", "move": ".", "step": step}
        r = client.post(f"/api/games/{gid}/moves", params={"svg": 1}, json=woman)
        assert r.status_code == 200, r.text
        view = r.json()
        timers.append([b[2] for b in view["state"]["bombs"]])
    assert timers[:4] == [[3], [2], [1], [0]]
    assert view["state"]["fire"] and [1, 1] in view["state"]["fire"]  # fire shows in the state it burns
    assert 'fill="#ff8a3d"' in view["svg"]


def test_agents_play_each_other_and_the_replay_steps(client: TestClient) -> None:
    view = new_game(client, "bomberman", {"bomberman": "random:seed=1", "bomberwoman": "random:seed=2"})
    view = wait(client, view["id"])
    assert view["terminal"] and view["awaiting"] == [] and not view["thinking"]
    gid, n = view["id"], view["step"]
    first = client.get(f"/api/games/{gid}/steps/0").json()
    assert first["joint"] is None and first["state"]["step"] == 1 and "<svg" in first["svg"]
    last = client.get(f"/api/games/{gid}/steps/{n}").json()
    assert last["terminal"] and last["goals"] == view["goals"] and last["joint"] == view["last_joint"]
    assert client.get(f"/api/games/{gid}/steps/{n + 1}").status_code == 404
    page = client.get(f"/games/{gid}/replay")
    assert page.status_code == 200 and f'max="{n}"' in page.text


def test_several_games_at_once(client: TestClient) -> None:
    ids = [
        new_game(client, name, dict.fromkeys(ggp.load(name).roles, "random"))["id"]
        for name in ["amazons_8x8", "wallmaze", "bomberman2p", "bomberman", "amazons_8x8"]
    ]
    results = [wait(client, gid) for gid in ids]
    assert all(v["terminal"] for v in results)
    assert {v["id"] for v in client.get("/api/games").json()["games"]} == set(ids)
    assert client.get("/api/games", params={"status": "playing"}).json()["total"] == 0


def live_match(client: TestClient, gid: str, past_step: int) -> Any:
    """The manager's live match ``gid`` once it is past ``past_step`` (waiting on its change notification)."""
    manager = client.app.state.manager  # type: ignore[attr-defined]
    assert client.portal is not None
    match = client.portal.call(manager.get, gid)
    for _ in range(100):
        if match.step > past_step or match.over:
            break
        client.portal.call(match.wait_change, match.version, 30.0)
    assert match.step > past_step, f"match {gid} stayed at step {match.step}"
    return match


@pytest.mark.timing
def test_watch_pace_spaces_out_the_steps(client: TestClient) -> None:
    pace = 0.2
    paced = new_game(client, "wallmaze", {"white": "random", "black": "random"}, pace=pace)
    assert paced["settings"]["pace"] == pace
    # the first three steps come at least `pace` apart (each step's time is taken when it is made, so a busy
    # machine can only space them further; no upper bound is asked of it)
    times = live_match(client, paced["id"], 3).times
    gaps = [b - a for a, b in itertools.pairwise(times)][:3]
    assert len(gaps) == 3 and min(gaps) >= pace - 0.01, gaps


class SlowAgent(Agent):
    """Thinks for its whole time limit, then plays its first legal move."""

    name = "slow"

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        time.sleep(time_limit or 0.5)
        return sorted(self.game.legal_moves(state, self.role))[0]


class BrokenAgent(Agent):
    """Fails in every way an agent can: raises, returns junk, returns illegal moves."""

    name = "broken"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        self.calls += 1
        if self.calls % 3 == 1:
            raise RuntimeError("boom")
        if self.calls % 3 == 2:
            return "north"  # type: ignore[return-value]
        return Move("(move 9 9 9 9)")


class PickyAgent(SlowAgent):
    """Plays nothing but Amazons."""

    def start(self, game: Any, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        if not game.name.startswith("amazons"):
            raise ValueError(f"picky plays Amazons only, not {game.name}")
        super().start(game, role, start_clock, play_clock)


def test_an_agent_that_cannot_play_the_game_is_refused(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(AGENTS, "picky", PickyAgent)
    r = client.post("/api/games", json={"game": "wallmaze", "players": {"black": "picky"}})
    assert r.status_code == 400 and "picky plays Amazons only" in r.json()["detail"]
    assert client.get("/api/games").json()["total"] == 0
    assert new_game(client, "amazons_8x8", {"black": "picky"}, agent_time=0.05)["players"]["black"] == "picky"


class HeldAgent(Agent):
    """Thinks until the test lets it go (``release``), then plays its first legal move; ``entered`` is set
    when its first select_move begins and ``told`` keeps the time limits it was given."""

    name = "held"
    release = threading.Event()
    entered = threading.Event()
    told: ClassVar[list[float | None]] = []
    began = 0.0

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        type(self).told.append(time_limit)
        type(self).began = time.perf_counter()
        type(self).entered.set()
        type(self).release.wait(60)
        return sorted(self.game.legal_moves(state, self.role))[0]


@pytest.mark.timing
def test_a_thinking_agent_does_not_block_the_server(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    held = type("Held", (HeldAgent,), {"release": threading.Event(), "entered": threading.Event(), "told": []})
    monkeypatch.setitem(AGENTS, "held", held)
    view = new_game(client, "wallmaze", {"white": "human", "black": "held"}, agent_time=30)
    gid = view["id"]
    assert held.entered.wait(30), "the agent was never asked for a move"
    # the agent is still thinking (it cannot stop before it is released): the server answers all the same
    view = client.get(f"/api/games/{gid}").json()
    assert not held.release.is_set() and "black" in view["thinking"] and view["awaiting"] == ["white"]
    held_for = time.perf_counter() - held.began
    held.release.set()
    assert move(client, gid, "white", "noop", step=0).json()["step"] == 1  # waits (wait=10) for the agent
    record = client.get(f"/api/games/{gid}/record").json()
    assert held.told[0] == pytest.approx(30 - margin(30))  # told its clock less the margin
    assert record["moves"][0]["faults"] == []  # its own move, in time
    assert record["moves"][0]["times"][1] >= held_for - 0.001  # the record has the whole time it thought


def test_a_failing_agent_is_replaced_by_a_random_move(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(AGENTS, "broken", BrokenAgent)
    view = new_game(client, "wallmaze", {"white": "random:seed=1", "black": "broken"})
    view = wait(client, view["id"])
    assert view["terminal"]
    kinds = [f["kind"] for m in client.get(f"/api/games/{view['id']}/record").json()["moves"] for f in m["faults"]]
    assert kinds[:3] == ["exception", "not_a_move", "illegal"]
    assert view["notes"] and "played" in view["notes"][0]


# --- the command ----------------------------------------------------------------------------------------
def test_ggp_web_says_how_to_install_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ggp.cli import main

    for name in [m for m in sys.modules if m.startswith("ggp.web.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "fastapi", None)
    assert main(["web", "--port", "8123"]) == 2
    assert "pip install 'ggp[web]'" in capsys.readouterr().err


def test_ggp_web_serves_the_app(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "cli.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ggp", "web", "--port", str(port), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/catalog", timeout=2) as reply:
                    assert len(json.load(reply)["games"]) == 5
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "ggp web did not start"
                time.sleep(0.05)  # polling the port
        assert db.exists()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
