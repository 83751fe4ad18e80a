"""The arena's memory and its page on a long history (issue 28: the soak's server grew by about 4 KB a match).

The growth came from the ratings: each fit read every stored match and
bootstrapped over the games one by one (``resamples`` x 16 bytes per game at
its peak), so the server's high-water mark followed the history. The arena
now keeps per-pair tallies, and these tests check that what it keeps and
what a fit needs do not grow with the number of matches, and that the pages'
queries on a long history are index searches with a LIMIT.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import re
import sqlite3
import tracemalloc
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import ggp
from ggp.match.ratings import rate
from ggp.protocol import GGPServer, PlayerConfig, PlayerService
from ggp.web.app import create_app
from ggp.web.arena_model import LiveArenaMatch
from ggp.web.arena_tally import Tally, rate_tally
from ggp.web.limits import Limits
from ggp.web.store import Store

BASE = "http://127.0.0.1"


def client_for(db: Path, **limits: Any) -> TestClient:
    settings: dict[str, Any] = {
        "arena_allow": ("127.0.0.0/8",),
        "arena_games": (),
        "arena_agents": ("random",),
        "arena_start_clock": 10.0,
        "arena_play_clock": 1.0,
        "arena_matches": 1,
        **limits,
    }
    return TestClient(create_app(db, limits=Limits(**settings), arena=False), base_url=BASE)


# --- ratings from tallies ------------------------------------------------------------------------------------
def random_games(n: int, players: list[str], seed: int) -> list[tuple[str, str, list[int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.sample(players, 2)
        out.append((a, b, rng.choice([[100, 0], [0, 100], [50, 50], [100, 0]])))
    return out


def test_ratings_from_tallies_are_those_of_the_games_one_by_one() -> None:
    """The point ratings and the records are :func:`rate`'s exactly; the bootstrap intervals, drawn from the
    counts instead of the games, agree to within a few points."""
    games = random_games(400, ["a", "b", "c", "d"], seed=1)
    tally = Tally()
    for a, b, goals in games:
        tally.add([a, b], goals)
    scored = [(a, b, 1.0 if ga > gb else 0.5 if ga == gb else 0.0) for a, b, (ga, gb) in games]
    ours = {r.agent: r for r in rate_tally(tally, resamples=400)}
    theirs = {r.agent: r for r in rate(["a", "b", "c", "d"], scored, resamples=400)}
    assert ours.keys() == theirs.keys()
    for agent, mine in ours.items():
        other = theirs[agent]
        assert (mine.games, mine.wins, mine.draws, mine.losses) == (other.games, other.wins, other.draws, other.losses)
        assert mine.rating == pytest.approx(other.rating, abs=1e-6)
        assert mine.low < mine.rating < mine.high
        assert abs((mine.high - mine.low) - (other.high - other.low)) < 0.25 * (other.high - other.low)


def test_tally_refuses_goals_that_do_not_match_the_players() -> None:
    with pytest.raises(ValueError, match="2 players but 3 goals"):
        Tally().add(["a", "b"], [1, 2, 3])


def test_a_fit_needs_the_same_memory_for_a_short_and_a_long_history() -> None:
    """A fit's peak memory is set by the players, not by the matches: a thousand times more matches between
    the same players cost the same (the bootstrap over games one by one took 3 KB a game)."""

    def peak(matches: int) -> int:
        tally = Tally()
        for a, b, goals in random_games(matches, ["a", "b", "c", "d", "e"], seed=2):
            tally.add([a, b], goals)
        tracemalloc.start()
        try:
            rate_tally(tally, resamples=200)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    short, long = peak(100), peak(100_000)
    assert long <= 1.2 * short + 64 * 1024, (short, long)


# --- what the arena keeps per match -------------------------------------------------------------------------
def kept(arena: Any) -> dict[str, Any]:
    """The sizes of everything the arena keeps that a match could add to."""
    return {
        "live": len(arena.live),
        "busy": dict(arena._busy),
        "tasks": len(arena._tasks),
        "tallies": {g: len(t.pairs) for g, t in arena._tallies.items()},
        "played": len(arena._played_counts),
        "ratings_cache": len(arena._ratings_cache),
        "live_objects": sum(isinstance(o, LiveArenaMatch) for o in gc.get_objects()),
    }


async def settled(arena: Any) -> None:
    """Wait for the arena's tasks (a match's, a ratings refit's) to end."""
    await asyncio.gather(*list(arena._tasks), return_exceptions=True)


def test_the_arena_keeps_nothing_per_finished_match(tmp_path: Path) -> None:
    """Matches played one after another leave nothing behind: no live match (nor its states), no busy entry,
    no task; the tallies and counts have one entry per pair or player whatever the number of matches."""
    servers = [
        GGPServer("127.0.0.1", 0, PlayerService(PlayerConfig(spec="random", name=f"p{i}", seed=i)).handle).start()
        for i in range(2)
    ]
    tictactoe = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()
    try:
        with client_for(tmp_path / "web.sqlite3", arena_uploads=1) as client:
            arena = client.app.state.arena  # type: ignore[attr-defined]
            key = client.post("/api/sheets", json={"name": "Noughts", "rules": tictactoe}).json()["name"]
            assert client.post("/api/arena/games", json={"game": key}).status_code == 201
            for i, s in enumerate(servers):
                assert client.post("/api/arena/players", json={"name": f"p{i}", "url": s.url}).status_code == 201
            sizes = []
            for n in range(12):
                assert client.portal is not None
                started = client.portal.call(arena.round)
                assert len(started) == 1
                view = client.get(f"/api/arena/matches/{started[0]}").json()
                for _ in range(100):  # each request waits for the next step (a long poll), not a sleep
                    if view["status"] != "running":
                        break
                    view = client.get(
                        f"/api/arena/matches/{started[0]}", params={"version": view["version"], "wait": 30}
                    ).json()
                assert view["status"] == "over", view
                client.get("/arena")  # a visitor's look fits the ratings
                if n in (3, 11):
                    # a fit slower than RATINGS_SLOW_FIT (a loaded machine) goes on in the background: what
                    # the arena keeps is counted once its background work is done, however long that took
                    client.portal.call(settled, arena)
                    gc.collect()
                    sizes.append(kept(arena))
            assert sizes[0] == sizes[1], sizes
            assert sizes[1]["live"] == sizes[1]["tasks"] == sizes[1]["live_objects"] == 0
            assert sizes[1]["busy"] == {}
            assert arena._tallies[None].matches == 12
            assert sum(arena._played_counts.values()) == 12 * 2
    finally:
        for s in servers:
            s.close()


# --- the page on a long history -------------------------------------------------------------------------------
@contextmanager
def statements(store: Store) -> Iterator[list[str]]:
    """The SQL statements the store runs meanwhile (with their parameters bound)."""
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._db.set_trace_callback(None)


def fill_history(db: Path, n: int, running: int) -> list[str]:
    """Write ``n`` finished matches (and ``running`` running ones, the newest) straight into the file; the ids
    of the players who played them against the built-in random agent."""
    players = [f"p{i:04d}0" for i in range(6)]
    with sqlite3.connect(db) as con:
        con.executemany(
            "INSERT INTO arena_players (id, kind, name, url, status, created) VALUES (?, 'remote', ?, ?, 'active', 0)",
            [(p, p, f"http://127.0.0.1:1/{p}") for p in players],
        )
        rng = random.Random(3)
        rows = []
        for i in range(n + running):
            over = i < n
            goals = rng.choice([[100, 0], [0, 100], [50, 50]])
            rows.append(
                (
                    f"m{i:011d}",
                    "bomberman2p",
                    '["a", "b"]',
                    json.dumps([players[i % len(players)], "agent-random"]),
                    "over" if over else "running",
                    json.dumps(goals) if over else None,
                    "{}" if over else None,
                    1000.0 + i,
                )
            )
        con.executemany(
            "INSERT INTO arena_matches (id, game, roles, players, status, goals, record, started) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return players


def test_the_arena_page_on_a_long_history_reads_by_index_with_a_limit(tmp_path: Path) -> None:
    """On 6,000 stored matches, the page's queries of ``arena_matches`` are index searches with a LIMIT (no
    scan of the history, no sort of it, none in the ratings), and its tables are right: the running matches
    found by the (status, started) index, the ratings counted from the stored matches at startup."""
    db = tmp_path / "web.sqlite3"
    client_for(db).app.state.arena.store.close()  # type: ignore[attr-defined]  # makes the tables
    players = fill_history(db, 6000, running=3)
    with client_for(db, arena_games=("bomberman2p",)) as client:
        arena = client.app.state.arena  # type: ignore[attr-defined]
        # the server's start failed the matches left running; these three run again, as if just started
        arena.store.execute("UPDATE arena_matches SET status = 'running', error = '' WHERE goals IS NULL")
        with statements(arena.store) as seen:
            page = client.get("/arena")
        assert page.status_code == 200
        reads = [s for s in seen if re.search(r"\bFROM arena_matches\b", s)]
        assert reads, seen
        for sql in reads:
            assert re.search(r"\bLIMIT \d+", sql), sql
            plan = " / ".join(str(r[3]) for r in arena.store.query("EXPLAIN QUERY PLAN " + sql))
            assert "USING INDEX arena_matches_by_" in plan and "TEMP B-TREE" not in plan, (sql, plan)
        running = arena.matches(limit=20, status="running")
        assert [m["id"] for m in running] == [f"m{i:011d}" for i in (6002, 6001, 6000)]
        plan = arena.store.query(
            "EXPLAIN QUERY PLAN SELECT id FROM arena_matches WHERE status = 'running' ORDER BY started DESC LIMIT 20"
        )
        assert "arena_matches_by_status (status=?)" in " ".join(str(r[3]) for r in plan)
        games = Counter(players[i % len(players)] for i in range(6000))
        table = {r["id"]: r["games"] for r in arena.ratings()}
        assert table == {**games, "agent-random": 6000}


def test_a_stale_table_of_a_slow_fit_is_answered_at_once_and_fitted_again(tmp_path: Path) -> None:
    """A visitor does not wait for a slow fit: the last table comes back, and one fit runs in the background."""
    with client_for(tmp_path / "web.sqlite3") as client:
        arena = client.app.state.arena  # type: ignore[attr-defined]
        arena._ratings_cache[None] = (0.0, -1, [{"id": "old"}], 1.0)  # stale, counted -1 matches, took 1 s

        async def ask_twice() -> tuple[Any, Any, int]:
            first = await arena.ratings_off_loop()
            second = await arena.ratings_off_loop()  # while the first's refit runs: no second refit
            refits = len(arena._tasks)
            for task in list(arena._tasks):
                await task
            return first, second, refits

        assert client.portal is not None
        first, second, refits = client.portal.call(ask_twice)
        assert first == second == [{"id": "old"}] and refits == 1
        assert arena._ratings_cache[None][1] == 0 and arena._refitting == set()
        assert client.get("/api/arena/ratings").json()["ratings"] == []  # the new table (a quick fit: waited for)
