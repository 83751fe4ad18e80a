"""The web app's defences: body size, error echoes, paging bounds, served hosts, cross-origin writes, seat
ownership, live limits, event streams that end, and API docs that need no outside host.

Through FastAPI's TestClient, and a real uvicorn server on 127.0.0.1 where the socket matters (a 413 sent
before the body is read).
"""

from __future__ import annotations

import re
import socket
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's TestClient prefers httpx2; httpx works the same
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import httpx

from ggp.agents import AGENTS, Agent
from ggp.core.game import Move, State
from ggp.web.app import create_app
from ggp.web.limits import Limits
from ggp.web.server import BackgroundServer

BASE = "http://127.0.0.1"
FORM = {"content-type": "application/x-www-form-urlencoded"}
MB = 1 << 20


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "web.sqlite3"


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db), base_url=BASE) as c:
        yield c


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with BackgroundServer(tmp_path_factory.mktemp("web") / "web.sqlite3") as running:
        yield running


@pytest.fixture
def browsers(server: BackgroundServer) -> Iterator[list[httpx.Client]]:
    """Three browsers on one server (each with its own cookies, so its own seats)."""
    clients = [httpx.Client(base_url=server.url, timeout=30) for _ in range(3)]
    yield clients
    for c in clients:
        c.close()


def new_game(client: Any, game: str, players: dict[str, str], **extra: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"game": game, "players": players, **extra})
    assert r.status_code == 201, r.text
    return dict(r.json())


def move(client: Any, gid: str, role: str, text: str, step: int, **headers: str) -> Any:
    return client.post(f"/api/games/{gid}/moves", json={"role": role, "move": text, "step": step}, headers=headers)


# --- request size -------------------------------------------------------------------------------------
def test_a_body_over_the_limit_is_refused_with_a_small_answer(client: TestClient) -> None:
    gid = new_game(client, "wallmaze", {"black": "random"})["id"]
    junk = b'{"role": "white", "step": 0, "move": "' + b"(" * (20 * MB) + b'"}'
    r = client.post(f"/api/games/{gid}/moves", content=junk, headers={"content-type": "application/json"})
    assert r.status_code == 413 and len(r.content) < 300  # a short refusal, not an echo of 20 MB
    assert "65536 bytes" in r.json()["detail"]
    r = client.post("/new", content=b"game=wallmaze&pad=" + b"x" * MB, headers=FORM)
    assert r.status_code == 413
    # a body streamed without Content-Length is counted as it comes
    r = client.post(
        "/api/games", content=iter([b"{" + b" " * 40_000] * 3), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413
    assert client.get(f"/api/games/{gid}").json()["step"] == 0  # nothing changed, and the server answers


def _http(port: int, head: str, body: bytes = b"", limit: int = 1 << 16) -> bytes:
    """Send ``head`` and ``body`` on a raw socket to 127.0.0.1:``port``; the reply (at most ``limit`` bytes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(head.encode() + body)
        reply = b""
        while len(reply) < limit:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
            if b"\r\n\r\n" in reply:
                headers, _, rest = reply.partition(b"\r\n\r\n")
                length = re.search(rb"content-length: *(\d+)", headers, re.IGNORECASE)
                if length and len(rest) >= int(length.group(1)):
                    break
        return reply


def test_the_server_answers_413_before_reading_the_body(db: Path) -> None:
    with BackgroundServer(db) as server:
        # 20 MB announced, 1 kB sent: the refusal comes without the rest of the body
        head = (
            "POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {20 * MB}\r\n\r\n"
        )
        reply = _http(server.port, head, b"{" + b" " * 1023)
        assert reply.startswith(b"HTTP/1.1 413") and len(reply) < 1000, reply[:200]
        # chunked, no length: cut off once the count passes the limit
        head = (
            "POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"%x\r\n%s\r\n" % (16384, b" " * 16384)
        reply = _http(server.port, head, chunk * 6)
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
        ok = _http(server.port, "GET /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200")


# --- error messages quote a short prefix -----------------------------------------------------------------
def test_error_messages_quote_only_a_short_prefix_of_the_input(client: TestClient) -> None:
    gid = new_game(client, "wallmaze", {"black": "random"})["id"]
    long = "(move 2 5 3 5" + "x" * 50_000
    answers = [
        move(client, gid, "white", long, 0),
        move(client, gid, "w" * 50_000, "noop", 0),
        client.post("/api/games", json={"game": "g" * 50_000}),
        client.post("/api/games", json={"game": "wallmaze", "players": {"white": "random:seed=" + "9" * 50_000}}),
        client.post("/api/games", json={"game": "wallmaze", "players": {"r" * 50_000: "human"}}),
        client.post("/api/games", json={"game": "wallmaze", "players": {"white": 5, "k" * 50_000: []}}),
        client.get(f"/api/games/{'a' * 5000}"),
        client.get(f"/api/games/{gid}/legal", params={"role": "q" * 5000}),
        client.post("/new", content="game=" + "z" * 50_000, headers=FORM),
        client.post(f"/api/games/{gid}/seats/{'s' * 150}"),
    ]
    for r in answers:
        assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
        assert len(r.text) < 3000, (r.status_code, len(r.text), r.text[:200])
    detail = answers[0].json()["detail"]
    assert "(move 2 5 3 5xxx" in detail and "legal moves" in detail  # the prefix, and what to do instead


# --- paging and other numbers are bounded -----------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "/api/games?offset=9223372036854775808",
        "/api/games?offset=1000001",
        "/api/games?offset=-1",
        "/api/games?limit=0",
        "/api/games?limit=100000",
        "/api/games?limit=1e3",
        "/api/games?status=lost",
        "/games?page=1000000000000000000",
        "/games?page=0",
        "/games?page=x",
        "/games?status=lost",
        "/api/games/{gid}?wait=1e308",
        "/api/games/{gid}?wait=nan",
        "/api/games/{gid}?wait=inf",
        "/api/games/{gid}?wait=-1",
        "/api/games/{gid}/steps/99999999999999999999999",
        "/api/games/{gid}/steps/-1",
        "/api/events?games=",
        "/api/events?games=" + ",".join(f"{i:x}" for i in range(101)),
    ],
)
def test_out_of_range_parameters_are_400_not_500(client: TestClient, url: str) -> None:
    gid = new_game(client, "wallmaze", {"black": "random"})["id"]
    r = client.get(url.format(gid=gid))
    assert r.status_code == 400, (url, r.status_code, r.text[:300])
    assert client.get("/api/games?offset=1000000").json()["games"] == []  # the largest offset is answered


def test_move_and_create_numbers_are_checked(client: TestClient) -> None:
    gid = new_game(client, "wallmaze", {"black": "random"})["id"]
    for step in [2**63, -(2**63), 1e300, "NaN"]:
        r = move(client, gid, "white", "noop", step)  # type: ignore[arg-type]
        assert r.status_code in (400, 409), (step, r.text)
    for settings in [{"agent_time": 61}, {"agent_time": -1}, {"pace": 11}, {"pace": -0.5}]:
        r = client.post("/api/games", json={"game": "wallmaze", **settings})
        assert r.status_code == 400, (settings, r.text)
    r = client.post("/api/games", json={"game": "wallmaze", "agent_time": 61})
    assert "60" in r.json()["detail"]  # the message says the maximum
    for body in [
        '{"game": "wallmaze", "agent_time": NaN}',
        '{"game": "wallmaze", "pace": Infinity}',
        '{"game": "wallmaze", "agent_time": 1e999}',
    ]:
        r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, (body, r.text)
    assert client.get("/api/games").json()["total"] == 1  # none of them made a match


# --- hosts and origins ------------------------------------------------------------------------------------
def test_a_host_the_server_does_not_serve_is_refused(client: TestClient, db: Path) -> None:
    for host in ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.", "[::2]:80"]:
        r = client.get("/api/catalog", headers={"host": host})
        assert r.status_code == 421 and "--allow-host" in r.json()["detail"], (host, r.text)
        r = client.post("/api/games", json={"game": "wallmaze"}, headers={"host": host})
        assert r.status_code == 421
    for host in ["127.0.0.1:8000", "localhost", "LOCALHOST:1", "[::1]:8000"]:
        assert client.get("/api/catalog", headers={"host": host}).status_code == 200, host
    assert client.get("/api/games").json()["total"] == 0
    limits = Limits(allowed_hosts=("ggp.lan",))
    with TestClient(create_app(db, limits=limits), base_url="http://ggp.lan:8000") as lan:
        assert lan.get("/api/catalog").status_code == 200
        assert lan.get("/api/catalog", headers={"host": "127.0.0.1"}).status_code == 421


def test_cross_origin_writes_are_refused_and_same_origin_ones_accepted(client: TestClient) -> None:
    form = "game=wallmaze&player_white=human&player_black=random"
    refused = [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},  # another port is another origin
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"sec-fetch-site": "cross-site", "origin": "http://127.0.0.1"},
    ]
    for headers in refused:
        r = client.post("/new", content=form, headers={**FORM, **headers}, follow_redirects=False)
        assert r.status_code == 403 and "cross-origin" in r.json()["detail"], (headers, r.text)
        r = client.post("/api/games", json={"game": "wallmaze"}, headers=headers)
        assert r.status_code == 403, headers
    assert client.get("/api/games").json()["total"] == 0  # nothing was made
    gid = new_game(client, "wallmaze", {"black": "random"})["id"]  # no Origin, no Sec-Fetch-Site: curl
    r = client.post(
        f"/api/games/{gid}/moves",
        json={"role": "white", "move": "noop", "step": 0},
        headers={"origin": "http://evil.example"},
    )
    assert r.status_code == 403
    for headers in [
        {"origin": "http://127.0.0.1"},
        {"sec-fetch-site": "same-origin", "origin": "http://127.0.0.1"},
        {"sec-fetch-site": "none"},
    ]:
        r = client.post("/new", content=form, headers={**FORM, **headers}, follow_redirects=False)
        assert r.status_code == 303, (headers, r.text)
    assert client.get("/api/catalog", headers={"origin": "http://evil.example"}).status_code == 200  # reading is fine
    assert client.get("/api/games").json()["total"] == 4


# --- seats ---------------------------------------------------------------------------------------------------
def test_only_the_owner_of_a_seat_moves_for_it_and_a_second_browser_takes_only_an_open_seat(
    browsers: list[Any],
) -> None:
    first, second, third = browsers
    view = new_game(first, "wallmaze", {"white": "human", "black": "human"}, seats=["white"])
    gid = view["id"]
    assert view["mine"] == ["white"] and view["seats"] == {"white": "taken", "black": "open"}
    assert set(view["tokens"]) == {"white"}
    page = second.get(f"/games/{gid}").text
    assert '<span id="watching" class="tag" >watching</span>' in page  # shown, not hidden
    assert second.get(f"/api/games/{gid}").json()["mine"] == []
    r = move(second, gid, "white", "(move 2 5 3 5)", 0)
    assert r.status_code == 403 and "seat" in r.json()["detail"]
    assert second.post(f"/api/games/{gid}/seats/white").status_code == 409  # taken
    assert second.post(f"/api/games/{gid}/seats/nobody").status_code == 400
    r = second.post(f"/api/games/{gid}/seats/black")
    assert r.status_code == 201 and r.json()["role"] == "black"
    token = r.json()["token"]
    assert second.get(f"/api/games/{gid}").json()["mine"] == ["black"]
    assert third.post(f"/api/games/{gid}/seats/black").status_code == 409  # claimed once
    assert move(first, gid, "black", "noop", 0).status_code == 403  # the creator did not take black
    assert first.get(f"/api/games/{gid}").json()["seats"] == {"white": "taken", "black": "taken"}
    assert move(first, gid, "white", "(move 2 5 3 5)", 0).status_code == 200
    # an API client sends the token in a header instead of a cookie
    assert move(third, gid, "black", "noop", 0, **{"X-Seat-Token": "not-it"}).status_code == 403
    r = move(third, gid, "black", "noop", 0, **{"X-Seat-Token": token})
    assert r.status_code == 200 and r.json()["step"] == 1
    assert third.post(f"/api/games/{gid}/resign", json={"role": "white"}).status_code == 403
    assert third.post(f"/api/games/{gid}/abort").status_code == 403
    assert third.delete(f"/api/games/{gid}").status_code == 409  # still played
    r = second.post(f"/api/games/{gid}/resign", json={"role": "black"})
    assert r.status_code == 200 and r.json()["ended"] == "resigned"
    assert r.json()["goals"] == {"white": 100, "black": 0}
    assert third.delete(f"/api/games/{gid}").status_code == 403
    assert first.delete(f"/api/games/{gid}").status_code == 204
    assert first.get(f"/api/games/{gid}").status_code == 404


def test_the_seat_cookie_is_http_only_strict_and_scoped_to_its_match(client: TestClient) -> None:
    r = client.post("/api/games", json={"game": "wallmaze", "players": {"black": "random"}})
    gid = r.json()["id"]
    cookies = r.headers.get_list("set-cookie")
    assert {re.search(r"Path=([^;]+)", c).group(1) for c in cookies} == {f"/games/{gid}", f"/api/games/{gid}"}  # type: ignore[union-attr]
    for c in cookies:
        assert "HttpOnly" in c and "SameSite=strict" in c.replace("Strict", "strict"), c
    # the form keeps the open seat open and gives the creator the other
    body = "game=bomberman2p&player_bomberman=human&player_bomberwoman=human&open_bomberwoman=1"
    r = client.post("/new", content=body, headers=FORM, follow_redirects=False)
    hot = r.headers["location"].rsplit("/", 1)[1]
    view = client.get(f"/api/games/{hot}").json()
    assert view["mine"] == ["bomberman"] and view["seats"]["bomberwoman"] == "open"


def test_abort_before_the_first_move_by_a_seat_owner(browsers: list[Any]) -> None:
    owner, stranger, _ = browsers
    gid = new_game(owner, "amazons_8x8", {"black": "random"})["id"]
    assert stranger.post(f"/api/games/{gid}/abort").status_code == 403
    r = owner.post(f"/api/games/{gid}/abort")
    assert r.status_code == 200 and r.json()["ended"] == "aborted" and r.json()["terminal"]
    assert move(owner, gid, "white", "(move 1 3 1 4)", 0).status_code == 409
    listed = next(g for g in owner.get("/api/games").json()["games"] if g["id"] == gid)
    assert listed["ended"] == "aborted" and listed["status"] == "over"


# --- live limits and event streams --------------------------------------------------------------------------
class Blocker(Agent):
    """Thinks until the test lets it go."""

    name = "blocker"
    release = threading.Event()

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        Blocker.release.wait(10)
        return sorted(self.game.legal_moves(state, self.role))[0]


def test_the_live_match_cap_answers_503_with_retry_after(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(AGENTS, "blocker", Blocker)
    Blocker.release.clear()
    limits = Limits(max_live_matches=1, retry_after=7, max_agent_time=30)
    try:
        with TestClient(create_app(db, limits=limits), base_url=BASE) as c:
            new_game(c, "wallmaze", {"white": "blocker", "black": "blocker"}, agent_time=20)
            r = c.post("/api/games", json={"game": "wallmaze"})
            assert r.status_code == 503 and r.headers["retry-after"] == "7" and "limit" in r.json()["detail"]
            form = c.post("/new", content="game=wallmaze", headers=FORM)
            assert form.status_code == 503 and form.headers["retry-after"] == "7"
    finally:
        Blocker.release.set()


def test_the_event_stream_of_a_finished_match_ends(client: TestClient) -> None:
    view = new_game(client, "wallmaze", {"white": "random:seed=1", "black": "random:seed=2"})
    gid = view["id"]
    final = client.get(f"/api/games/{gid}", params={"wait": 30}).json()
    assert final["terminal"]
    text = client.get(f"/api/games/{gid}/events").text  # returns: the stream ends
    assert text.count("event: update") == 1 and text.rstrip().endswith("event: end\ndata: {}")
    text = client.get("/api/events", params={"games": f"{gid},0123456789ab,NOT-AN-ID"}).text
    assert text.count("event: gone") == 2 and text.count("event: update") == 1 and "event: end" in text


def test_api_docs_need_no_outside_host(client: TestClient) -> None:
    for page in ["/docs", "/redoc"]:
        html = client.get(page).text
        assert "<script" in html
        assert not re.search(r"(src|href)=\"(https?:)?//", html), html  # nothing from a CDN
        assets = re.findall(r"(?:src|href)=\"(/[^\"]+)\"", html)
        assert assets
        for url in assets:
            r = client.get(url)
            assert r.status_code == 200 and len(r.content) > 1000, url
    description = client.get("/openapi.json").json()["info"]["description"]
    assert "X-Seat-Token" in description and "403" in description
