"""The arena's API: registration by URL (allow-list, INFO), matchmaking, ratings, records, pausing.

The players are ggp's own ``ggp serve`` processes on loopback, which the
arena is configured to allow (``arena_allow``); matchmaking rounds are run
by the test (``create_app(arena=False)``), so each match starts when the test
says and its end is awaited on the match's live view (a long poll).
"""

from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until_available

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import ggp
from ggp.match.outcome import outcome
from ggp.protocol import GGPServer, PlayerConfig, PlayerService, Reply
from ggp.protocol.host import RemoteError
from ggp.protocol.messages import Play, parse_message
from ggp.web.app import create_app
from ggp.web.limits import Limits
from ggp.web.remote_player import ArenaError, PinnedTransport, ask_info, check_url

BASE = "http://127.0.0.1"
LOOPBACK = ("127.0.0.0/8",)


class Served:
    """``ggp serve SPEC`` on a free loopback port; ``url`` once it listens."""

    def __init__(self, spec: str, log: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ggp", "serve", spec, "--port", "0", "--seed", "1"],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)  # a guard against a hang, not a wait
        assert ready, "ggp serve printed nothing in 120 s: " + log.read_text()
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", self.proc.stdout.readline())
        assert found, log.read_text()
        self.url = found.group(1)
        wait_until_available(self.url, log)  # INFO says busy while the player compiles

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.communicate(timeout=10)


@pytest.fixture
def players(tmp_path: Path) -> Iterator[list[Served]]:
    served = [Served("random", tmp_path / f"serve{i}.log") for i in range(2)]
    yield served
    for s in served:
        if s.proc.poll() is None:
            s.stop()


def arena_client(tmp_path: Path, **limits: Any) -> TestClient:
    settings = {
        "arena_allow": LOOPBACK,
        "arena_games": ("wallmaze",),
        "arena_agents": (),
        "arena_start_clock": 10.0,
        "arena_play_clock": 1.0,
        **limits,
    }
    return TestClient(create_app(tmp_path / "web.sqlite3", limits=Limits(**settings), arena=False), base_url=BASE)


def register(client: TestClient, name: str, url: str) -> Any:
    return client.post("/api/arena/players", json={"name": name, "url": url, "contact": "tests"})


def play_round(client: TestClient) -> list[str]:
    """One matchmaking round, run on the app's event loop; the ids of the matches it started."""
    assert client.portal is not None  # inside the client's with-block
    return list(client.portal.call(client.app.state.arena.round))  # type: ignore[attr-defined,call-arg]


def finished(client: TestClient, match_id: str) -> dict[str, Any]:
    """The match's view once it is over (each request waits for the next step)."""
    view = client.get(f"/api/arena/matches/{match_id}").json()
    for _ in range(1000):
        if view["status"] != "running":
            return dict(view)
        view = client.get(f"/api/arena/matches/{match_id}", params={"version": view["version"], "wait": 30}).json()
    raise AssertionError(f"match {match_id} still running after 1000 steps")


# --- URLs --------------------------------------------------------------------------------------------------
def test_urls_are_checked_against_the_allow_list() -> None:
    def fake(addresses: list[str]) -> Any:
        return lambda host, port, proto=0: [(2, 1, 6, "", (a, port)) for a in addresses]

    assert check_url("HTTP://Player.Example:9147", (), resolve=fake(["93.184.216.34"])) == "http://player.example:9147/"
    for address, what in [("127.0.0.1", "loopback"), ("10.0.0.7", "private"), ("169.254.1.1", "link-local")]:
        with pytest.raises(ArenaError, match=re.escape(f"{address} is a {what} address")):
            check_url("http://player.example:9147", (), resolve=fake([address]))
    # one private address among public ones is enough to refuse (DNS may answer either)
    with pytest.raises(ArenaError, match=re.escape("192.168.1.2 is a private address")):
        check_url("http://player.example", (), resolve=fake(["93.184.216.34", "192.168.1.2"]))
    assert check_url("http://player.example", ("192.168.0.0/16",), resolve=fake(["192.168.1.2"]))
    assert check_url("http://lan-player", ("lan-player",), resolve=fake(["10.1.1.1"]))
    for bad in ["ftp://player.example", "http://user:secret@player.example", "player.example:9147", "http://"]:
        with pytest.raises(ArenaError, match="URL"):
            check_url(bad, (), resolve=fake(["93.184.216.34"]))


def test_the_address_checked_is_the_address_connected_to(tmp_path: Path) -> None:
    """A name that answers an allowed address to the check and a private one to the connection (DNS
    rebinding) gets nowhere: each message resolves the name once and connects to the address it checked."""
    server = GGPServer("127.0.0.1", 0, PlayerService(PlayerConfig(spec="random", name="pinned", seed=5)).handle)
    server.start()
    lookups: list[str] = []

    def rebinding(host: str, port: int, proto: int = 0) -> Any:
        lookups.append(host)
        address = "127.0.0.1" if len(lookups) == 1 else "10.0.0.7"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    try:
        transport = PinnedTransport(("127.0.0.1/32",), rebinding)
        url = f"http://player.invalid:{server.port}/"  # .invalid never resolves: only the checked address works
        assert ask_info(url, transport)["name"] == "pinned"
        with pytest.raises(ArenaError, match=re.escape("10.0.0.7 is a private address")):
            ask_info(url, transport)
        assert lookups == ["player.invalid", "player.invalid"]  # one lookup per message, none behind its back
        # https keeps the name for TLS's certificate check, but connects to the checked address as well
        lookups.clear()
        with socket.create_server(("127.0.0.1", 0)) as listener:
            listener.settimeout(5.0)  # without the pinned address nothing connects: the test fails, not hangs
            accepted: list[tuple[str, int]] = []

            def accept_one() -> None:
                conn, peer = listener.accept()
                accepted.append(peer)
                conn.close()  # ends the TLS handshake

            taker = threading.Thread(target=accept_one)
            taker.start()
            with pytest.raises(RemoteError, match=re.escape("cannot talk to https://player.invalid")):
                transport.post(f"https://player.invalid:{listener.getsockname()[1]}/", "(info)", 5.0, "arena")
            taker.join()
        assert len(accepted) == 1 and lookups == ["player.invalid"]
    finally:
        server.close()
    with arena_client(tmp_path) as client:  # the arena's INFO and matches go through such a transport
        arena = client.app.state.arena  # type: ignore[attr-defined]
        assert isinstance(arena.transport, PinnedTransport) and arena.transport.allow == LOOPBACK


def test_registration_refuses_loopback_unless_allowed(tmp_path: Path, players: list[Served]) -> None:
    with arena_client(tmp_path, arena_allow=()) as client:
        r = register(client, "mine", players[0].url)
        assert r.status_code == 400 and "loopback" in r.json()["detail"]
        assert [p["kind"] for p in client.get("/api/arena/players").json()["players"]] == []


def test_registration_asks_info_and_gives_the_owner_a_token(tmp_path: Path, players: list[Served]) -> None:
    with arena_client(tmp_path) as client:
        r = register(client, "first", players[0].url)
        assert r.status_code == 201, r.text
        body = r.json()
        assert body["status"] == "active" and body["url"] == players[0].url + "/" and body["token"]
        again = register(client, "again", players[0].url)
        assert again.status_code == 409
        silent = register(client, "nobody", "http://127.0.0.1:1")
        assert silent.status_code == 400 and "does not answer INFO" in silent.json()["detail"]
        assert register(client, "", players[1].url).status_code == 400
        listed = client.get("/api/arena/players").json()["players"]
        assert [p["name"] for p in listed] == ["first"]
        pid = body["id"]
        # only the owner may pause: a stranger's request (no cookie, no token) is refused
        stranger = TestClient(client.app, base_url=BASE)  # another client of the running app (no lifespan of its own)
        assert stranger.post(f"/api/arena/players/{pid}/status", json={"status": "paused"}).status_code == 403
        wrong = {"X-GGP-Arena-Token": "not-the-token"}
        assert stranger.delete(f"/api/arena/players/{pid}", headers=wrong).status_code == 403
        owner = {"X-GGP-Arena-Token": body["token"]}
        paused = stranger.post(f"/api/arena/players/{pid}/status", json={"status": "paused"}, headers=owner)
        assert paused.status_code == 200 and paused.json()["status"] == "paused"
        # the registering client holds the token in its cookie
        assert client.post(f"/api/arena/players/{pid}/status", json={"status": "active"}).json()["status"] == "active"
        assert client.delete(f"/api/arena/players/{pid}").status_code == 204
        assert client.get("/api/arena/players").json()["players"] == []


def test_registrations_per_client_are_bounded(tmp_path: Path, players: list[Served]) -> None:
    with arena_client(tmp_path, arena_registrations_per_hour=1) as client:
        assert register(client, "one", players[0].url).status_code == 201
        r = register(client, "two", players[1].url)
        assert r.status_code == 429 and "too many registrations" in r.json()["detail"]


# --- matches ------------------------------------------------------------------------------------------------
def test_two_registered_players_play_a_rated_match_recorded_in_both_formats(
    tmp_path: Path, players: list[Served]
) -> None:
    with arena_client(tmp_path, arena_matches=2) as client:
        ids = [register(client, f"p{i}", s.url).json()["id"] for i, s in enumerate(players)]
        started = play_round(client)
        # each player plays one match at a time: two players make one match, however many may run
        assert len(started) == 1
        running = client.get("/api/arena/matches", params={"status": "running"}).json()["matches"]
        assert [m["id"] for m in running] == started
        assert sorted(p["id"] for p in running[0]["players"]) == sorted(ids)
        view = finished(client, started[0])
        assert view["status"] == "over", view
        assert view["step"] == len(view["moves"]) > 0
        assert len(view["goals"]) == 2 and all(0 <= g <= 100 for g in view["goals"])
        assert view["outcome"] == outcome(view["roles"], view["goals"])  # "White won (100-0)", in words

        ratings = client.get("/api/arena/ratings").json()["ratings"]
        assert sorted(r["id"] for r in ratings) == sorted(ids)
        assert all(r["games"] == 1 and r["low"] <= r["rating"] <= r["high"] for r in ratings)
        assert all(r["provisional"] for r in ratings)  # one game: no interval is claimed
        page = client.get("/arena").text
        assert "provisional (1 of 10 games)" in page and f"{ratings[0]['low']} to {ratings[0]['high']}" not in page
        assert view["outcome"] in page  # the recent matches' results, in words
        per_game = client.get("/api/arena/ratings", params={"game": "wallmaze"}).json()["ratings"]
        assert [r["id"] for r in per_game] == [r["id"] for r in ratings]
        assert client.get("/api/arena/ratings", params={"game": "amazons_8x8"}).json()["ratings"] == []

        record = client.get(f"/api/arena/matches/{started[0]}/record").json()
        assert record["format"] == "ggp-match" and record["steps"] == view["step"]
        assert sorted(record["agents"].values()) == sorted(p.url + "/" for p in players)

        base = client.get(f"/api/arena/matches/{started[0]}/ggp-base").json()
        for key in ("moves", "states", "goalValues", "errors", "startClock", "playClock"):
            assert key in base, key
        assert base["startClock"] == 10 and base["playClock"] == 1
        assert base["goalValues"] == view["goals"]
        assert len(base["moves"]) == view["step"] and len(base["states"]) == view["step"] + 1
        assert len(base["errors"]) == view["step"] and all(len(e) == 2 for e in base["errors"])
        assert all(isinstance(m, str) and (m == "noop" or m.startswith("( ")) for joint in base["moves"] for m in joint)
        assert all(s.startswith("( ( ") and s.endswith(" ) )") for s in base["states"])
        # ggp-base's moves replay to its goal values
        game = ggp.load("wallmaze")
        state = game.initial_state()
        for joint in base["moves"]:
            state = game.next_state(state, [game.parse_move(m) for m in joint])
        assert game.is_terminal(state) and list(game.goals(state)) == base["goalValues"]
        assert (
            base["states"][-1]
            == "( "
            + " ".join(" ".join(f.replace("(", " ( ").replace(")", " ) ").split()) for f in game.state_facts(state))
            + " )"
        )

        page = client.get("/arena")
        assert page.status_code == 200 and "p0" in page.text and "p1" in page.text and "Leaderboard" in page.text
        assert client.get(f"/arena/players/{ids[0]}").status_code == 200
        assert started[0] in client.get(f"/arena/players/{ids[0]}").text
        assert client.get(f"/arena/matches/{started[0]}").status_code == 200


def test_a_player_that_stops_answering_is_paused(tmp_path: Path, players: list[Served]) -> None:
    with arena_client(tmp_path, arena_agents=("random",)) as client:
        gone = register(client, "gone", players[0].url).json()
        players[0].stop()  # no longer listening: connections are refused
        assert play_round(client) == []  # its INFO check fails, so no match starts
        after = client.get(f"/api/arena/players/{gone['id']}").json()
        assert after["status"] == "paused" and "did not answer" in after["reason"]
        assert client.get("/api/arena/matches").json()["matches"] == []


class Cheater:
    """A player that follows the match with a real service but answers every PLAY with a move of no game."""

    def __init__(self) -> None:
        self.service = PlayerService(PlayerConfig(spec="random", name="cheater", seed=3))

    def app(self, text: str, received: float) -> Reply:
        reply = self.service.handle(text, received)
        if isinstance(parse_message(text), Play):
            return Reply(200, "(move 9 9 9 9)")
        return reply


def test_a_player_whose_moves_keep_failing_is_paused_after_two_matches(tmp_path: Path) -> None:
    honest = GGPServer("127.0.0.1", 0, PlayerService(PlayerConfig(spec="random", name="honest", seed=4)).handle)
    cheater = GGPServer("127.0.0.1", 0, Cheater().app)
    honest.start()
    cheater.start()
    try:
        with arena_client(tmp_path) as client:
            good = register(client, "honest", f"http://127.0.0.1:{honest.port}").json()["id"]
            bad = register(client, "cheater", f"http://127.0.0.1:{cheater.port}").json()["id"]
            first = play_round(client)
            assert len(first) == 1 and finished(client, first[0])["status"] == "over"
            record = client.get(f"/api/arena/matches/{first[0]}/record").json()
            assert any(f["kind"] == "illegal" for m in record["moves"] for f in m["faults"])  # recorded as today
            errors = client.get(f"/api/arena/matches/{first[0]}/ggp-base").json()["errors"]
            assert any(e.startswith("illegal") for step in errors for e in step)
            assert client.get(f"/api/arena/players/{bad}").json()["status"] == "active"  # one strike only
            second = play_round(client)
            assert len(second) == 1 and finished(client, second[0])["status"] == "over"
            after = client.get(f"/api/arena/players/{bad}").json()
            assert after["status"] == "paused" and "faulty moves" in after["reason"]
            assert client.get(f"/api/arena/players/{good}").json()["status"] == "active"
            assert play_round(client) == []  # nobody left to play the honest player
    finally:
        honest.close()
        cheater.close()


# --- sheets on the prover ------------------------------------------------------------------------------------
#: Reachability over a cycle (tests/test_gdl_prover.py's sheet), as a GGP host sends it.
REACH = (
    "(role p) (init (at a)) (edge a b) (edge b c) (edge c d) (edge d b) (edge e a)"
    " (<= (path ?x ?y) (path ?x ?z) (edge ?z ?y)) (<= (path ?x ?y) (edge ?x ?y))"
    " (<= (legal p (go ?y)) (true (at ?x)) (path ?x ?y)) (<= (next (at ?y)) (does p (go ?y)))"
    " (<= terminal (true (at d))) (<= (goal p 100) (true (at d))) (<= (goal p 0) (not (true (at d))))"
)


def test_a_player_plays_a_sheet_too_large_to_ground_on_the_prover(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered player is sent any sheet: one the grounder gives up on is recognised on the prover."""
    from ggp.core.kif import parse_terms
    from ggp.gdl import grounder, load_text
    from ggp.protocol.recognize import recognize

    monkeypatch.setattr(grounder, "MAX_ATOMS", 20)  # REACH's paths are over 20 atoms: grounding gives up
    load_text.cache_clear()
    try:
        found = recognize(parse_terms(REACH))
        assert found.native is None and found.game.engine == "prover"  # type: ignore[attr-defined]
        service = PlayerService(PlayerConfig(spec="random", name="any", seed=2))
        assert service.handle(f"(START arena.1 p ({REACH}) 10 5)").body.lower() == "ready"
        assert service.handle("(PLAY arena.1 NIL)").body in ("(go b)", "(go c)", "(go d)")
        assert service.match is not None and service.match.game.engine == "prover"  # type: ignore[union-attr]
    finally:
        load_text.cache_clear()


# --- uploaded sheets as arena games ----------------------------------------------------------------------------
def test_an_uploaded_sheet_is_added_to_the_arena_games_and_played(tmp_path: Path) -> None:
    player = GGPServer("127.0.0.1", 0, PlayerService(PlayerConfig(spec="random", name="any", seed=6)).handle).start()
    tictactoe = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()
    try:
        with arena_client(tmp_path, arena_games=(), arena_agents=("random",), arena_uploads=1) as client:
            key = client.post("/api/sheets", json={"name": "Noughts", "rules": tictactoe}).json()["name"]
            other = client.post("/api/sheets", json={"name": "Maze", "rules": ggp.gdl.rules_text("wallmaze")})
            assert client.post("/api/arena/games", json={"game": "upload:0123456789abcdef"}).status_code == 404
            added = client.post("/api/arena/games", json={"game": key})
            assert added.status_code == 201 and added.json()["title"] == "Noughts"
            token = added.json()["token"]
            assert client.post("/api/arena/games", json={"game": key}).status_code == 409  # played already
            full = client.post("/api/arena/games", json={"game": other.json()["name"]})
            assert full.status_code == 409 and "at most 1 uploaded" in full.json()["detail"]
            assert [g["game"] for g in client.get("/api/arena/games").json()["games"]] == [key]  # left intact
            register(client, "any", f"http://127.0.0.1:{player.port}")
            started = play_round(client)
            assert len(started) == 1
            view = finished(client, started[0])
            assert view["status"] == "over" and view["game"] == key, view
            record = client.get(f"/api/arena/matches/{started[0]}/record").json()
            assert record["roles"] == ["xplayer", "oplayer"] and len(record["goals"]) == 2
            assert "Noughts" in client.get("/arena").text
            anyone = TestClient(client.app, base_url=BASE)  # another browser: no token
            assert anyone.delete(f"/api/arena/games/{key}").status_code == 403
            gone = client.delete(f"/api/arena/games/{key}", headers={"X-GGP-Arena-Token": token})
            assert gone.status_code == 204 and client.get("/api/arena/games").json()["games"] == []
    finally:
        player.close()


# --- pauses ------------------------------------------------------------------------------------------------------
class Vanishing:
    """A player that answers its first PLAY and then stops listening: every later message is refused."""

    def __init__(self) -> None:
        self.service = PlayerService(PlayerConfig(spec="random", name="vanishing", seed=7))
        self.server: GGPServer | None = None

    def app(self, text: str, received: float) -> Reply:
        reply = self.service.handle(text, received)
        if isinstance(parse_message(text), Play) and self.server is not None:
            server, self.server = self.server, None
            server.shutdown()  # from a handler's thread: serve_forever's loop ends...
            server.server_close()  # ...and the port refuses connections before this reply is sent
        return reply


def test_a_player_that_stops_answering_during_a_match_is_paused_with_the_match_named(tmp_path: Path) -> None:
    vanishing = Vanishing()
    server = GGPServer("127.0.0.1", 0, vanishing.app)
    vanishing.server = server
    server.start()
    try:
        with arena_client(tmp_path, arena_agents=("random",)) as client:
            body = register(client, "vanishing", f"http://127.0.0.1:{server.port}").json()
            started = play_round(client)
            assert len(started) == 1
            view = finished(client, started[0])
            assert view["status"] == "over" and view["step"] >= 2, view
            after = client.get(f"/api/arena/players/{body['id']}").json()
            assert after["status"] == "paused", after
            assert after["reason"].startswith(f"stopped answering in match {started[0]}: no answer from move 2 of")
            assert "nor to STOP" in after["reason"] and "Connection refused" in after["reason"]
            assert [(p["reason"], p["match"]) for p in after["pauses"]] == [(after["reason"], started[0])]
            page = client.get(f"/arena/players/{body['id']}").text
            assert "Paused by the arena" in page and f"stopped answering in match {started[0]}" in page
            # its owner resumes it: the reason goes, the history stays
            resumed = client.post(f"/api/arena/players/{body['id']}/status", json={"status": "active"}).json()
            assert resumed["status"] == "active" and resumed["reason"] == ""
            assert len(client.get(f"/api/arena/players/{body['id']}").json()["pauses"]) == 1
    finally:
        server.server_close()


def test_matches_are_refereed_on_threads_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A match holds its referee's thread for minutes: not one of the event loop's default executor, which the
    app's other work (and the matchmaking round's INFO checks) needs."""
    import threading as threads

    from ggp.protocol.host import HostError
    from ggp.web import arena as arena_module

    names: list[str] = []

    def refereed(*args: Any, **kwargs: Any) -> Any:
        names.append(threads.current_thread().name)
        raise HostError("no match today")

    monkeypatch.setattr(arena_module, "host_match", refereed)
    player = GGPServer("127.0.0.1", 0, PlayerService(PlayerConfig(spec="random", name="any", seed=8)).handle).start()
    try:
        with arena_client(tmp_path, arena_agents=("random",)) as client:
            register(client, "any", f"http://127.0.0.1:{player.port}")
            started = play_round(client)
            view = finished(client, started[0])
            assert view["status"] == "failed" and view["error"] == "no match today"
            assert len(names) == 1 and names[0].startswith("ggp-arena-match"), names
    finally:
        player.close()


def test_ratings_asked_for_any_game_name_are_not_kept(tmp_path: Path) -> None:
    """The ratings are kept for the arena's games and over all; a table per game name asked for would let anyone
    grow the server's memory one URL at a time."""
    with arena_client(tmp_path) as client:
        arena = client.app.state.arena  # type: ignore[attr-defined]
        for i in range(30):
            assert client.get("/api/arena/ratings", params={"game": f"nosuchgame{i}"}).json()["ratings"] == []
        assert client.get("/api/arena/ratings").json()["ratings"] == []
        assert client.get("/api/arena/ratings", params={"game": "wallmaze"}).json()["ratings"] == []
        assert set(arena._ratings_cache) <= {None, "wallmaze"}
