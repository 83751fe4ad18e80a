"""The web app's live matches (ggp.web.manager and its collaborators) and history (ggp.web.store), without HTTP.

Bounded memory (a cap on live matches, idle ones unloaded and reopened), agents on a fair pool of threads with
their clocks enforced, seats owned by secret tokens, a required step, resign / abort / delete, agent-only
matches going on after a restart, and version-1 databases upgraded. Threads are synchronised with events and
queues; nothing here sleeps to wait for something.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import queue
import sqlite3
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

import ggp
from ggp.agents import AGENTS, Agent
from ggp.core.game import Move, State
from ggp.match.record import MatchRecord
from ggp.web.limits import Limits
from ggp.web.live_match import LimitReached, LiveMatch, MoveRejected
from ggp.web.manager import Manager
from ggp.web.record import match_record
from ggp.web.settings import Settings
from ggp.web.store import SCHEMA_VERSION, Store

T = TypeVar("T")
DEADLINE = 30.0  # seconds any single wait in these tests may take before it counts as a failure
#: For matches of held agents: a clock longer than any wait here, so that a held agent never runs out of time.
HELD = Settings(agent_time=DEADLINE)


def run(make: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(make(), 120)

    return asyncio.run(bounded())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "web.sqlite3"


class Gate:
    """Agents that say when they are inside select_move and wait there until released.

    ``hold_from`` is the number of calls (per agent) answered at once before they start waiting.
    """

    def __init__(self, hold_from: int = 0) -> None:
        self.release = threading.Event()
        self.inside: queue.Queue[str] = queue.Queue()
        self.hold_from = hold_from
        self.entered = 0
        self._lock = threading.Lock()

    def agent(self) -> type[Agent]:
        gate = self

        class GateAgent(Agent):
            def __init__(self) -> None:
                super().__init__()
                self.calls = 0

            def select_move(self, state: State, time_limit: float | None = None) -> Move:
                self.calls += 1
                with gate._lock:
                    gate.entered += 1
                gate.inside.put(self.role)
                if self.calls > gate.hold_from:
                    gate.release.wait(DEADLINE)
                return sorted(self.game.legal_moves(state, self.role))[0]

        return GateAgent

    async def wait_inside(self) -> str:
        return await asyncio.to_thread(self.inside.get, True, DEADLINE)


@pytest.fixture
def gates(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Gate]]:
    """``gates(name, hold_from=0)`` registers the agent ``name`` behind a new gate; all are released at the end."""
    made: list[Gate] = []

    def make(name: str, hold_from: int = 0) -> Gate:
        gate = Gate(hold_from)
        monkeypatch.setitem(AGENTS, name, gate.agent())
        made.append(gate)
        return gate

    yield make
    for gate in made:
        gate.release.set()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def first_legal(match: LiveMatch, role: str) -> str:
    return str(sorted(match.game.legal_moves(match.state, role))[0])


def replayed_ok(store: Store, match_id: str) -> None:
    """The stored steps are 0..n without gaps and the stored states are the moves replayed through the rules."""
    stored = store.load(match_id)
    assert stored is not None
    game = ggp.load(stored.game)
    rows = (
        sqlite3.connect(store.path)
        .execute("SELECT step FROM steps WHERE match_id = ? ORDER BY step", (match_id,))
        .fetchall()
    )
    assert [r[0] for r in rows] == list(range(stored.steps + 1))
    state = game.initial_state()
    assert game.state_from_json(stored.states[0]) == state
    for joint, text in zip(stored.joints, stored.states[1:], strict=True):
        state = game.next_state(state, joint)
        assert game.state_from_json(text) == state
    if stored.ended == "terminal":
        assert game.is_terminal(state) and stored.goals == list(game.goals(state))


# --- settings and limits -----------------------------------------------------------------------------------
def test_agent_time_and_pace_beyond_the_limits_are_refused_naming_the_maximum(db: Path) -> None:
    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store, Limits(max_agent_time=5.0, max_pace=2.0))
        for settings, words in [
            (Settings(agent_time=6.0), "at most 5 seconds"),
            (Settings(agent_time=3600.0), "at most 5 seconds"),
            (Settings(agent_time=float("nan")), "agent_time"),
            (Settings(agent_time=0.0), "more than 0"),
            (Settings(agent_time=-1.0), "more than 0"),
            (Settings(pace=2.5), "between 0 and 2 seconds"),
            (Settings(pace=float("inf")), "pace"),
        ]:
            with pytest.raises(ValueError, match=words):
                await manager.create("wallmaze", {"black": "random"}, settings)
        assert store.count() == 0 and manager.matches == {}
        match, _ = await manager.create("wallmaze", {"black": "random"}, Settings(agent_time=5.0, pace=2.0))
        assert match.settings.agent_time == 5.0
        await manager.close()

    run(scenario)


def test_limits_read_from_the_environment_name_a_bad_variable() -> None:
    limits = Limits.from_env({"GGP_WEB_MAX_LIVE_MATCHES": "3", "GGP_WEB_ALLOWED_HOSTS": "localhost, ggp.test"})
    assert limits.max_live_matches == 3 and limits.allowed_hosts == ("localhost", "ggp.test")
    with pytest.raises(ValueError, match="GGP_WEB_AGENT_THREADS"):
        Limits.from_env({"GGP_WEB_AGENT_THREADS": "many"})
    with pytest.raises(ValueError, match="max_agent_time"):
        Limits.from_env({"GGP_WEB_MAX_AGENT_TIME": "nan"})


# --- memory: the cap, unloading and reopening --------------------------------------------------------------
def test_live_matches_are_capped_and_idle_ones_make_room(db: Path, gates: Callable[..., Gate]) -> None:
    gate = gates("gate")

    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store, Limits(max_live_matches=3))
        # a loop creating games against an agent that waits for its person: memory stays bounded
        ids = []
        for _ in range(12):
            match, _ = await manager.create("wallmaze", {"black": "random"}, Settings())
            await manager.wait_idle(match, DEADLINE)
            ids.append(match.id)
            assert len(manager.matches) <= 3
        assert store.count() == 12 and set(manager.matches) == set(ids[-3:])  # the least recently active left
        # matches agents are playing (thinking, or waiting for a thread to think on) cannot be unloaded:
        # beyond the cap, creating is refused
        busy = []
        for _ in range(3):
            match, _ = await manager.create("bomberman2p", {"bomberman": "gate", "bomberwoman": "gate"}, HELD)
            busy.append(match)
        await gate.wait_inside()
        assert set(manager.matches) == {m.id for m in busy} and all(m.busy() for m in busy)
        with pytest.raises(LimitReached) as refused:
            await manager.create("wallmaze", {"black": "random"}, Settings())
        assert refused.value.retry_after == manager.limits.retry_after and "3 matches" in refused.value.message
        assert store.count() == 15
        # reopening a match still being played waits for room
        with pytest.raises(LimitReached):
            await manager.get(ids[0])
        gate.release.set()
        for match in busy:
            await manager.wait_idle(match, DEADLINE)
            assert match.over
        again = await manager.get(ids[0])
        assert again is not None and again.step == 0 and ids[0] in manager.matches
        await manager.close()

    run(scenario)


def test_a_watched_match_is_not_unloaded_to_make_room(db: Path) -> None:
    async def scenario() -> None:
        manager = Manager(Store(db), Limits(max_live_matches=1))
        match, _ = await manager.create("wallmaze", {"black": "random"}, Settings())
        await manager.wait_idle(match, DEADLINE)
        with manager.watch(match):
            with pytest.raises(LimitReached):
                await manager.create("wallmaze", {"black": "random"}, Settings())
            assert match.watchers == 1
        other, _ = await manager.create("wallmaze", {"black": "random"}, Settings())
        assert match.id not in manager.matches and match.closed == "unloaded" and other.id in manager.matches
        await manager.close()

    run(scenario)


def test_an_idle_match_is_unloaded_and_reopens_with_every_step(db: Path) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store, Limits(idle_seconds=600), clock=clock)
        match, tokens = await manager.create("bomberman2p", {"bomberwoman": "random:seed=3"}, Settings())
        for _ in range(3):
            await manager.wait_idle(match, DEADLINE)
            manager.submit(match, "bomberman", first_legal(match, "bomberman"), match.step, tokens["bomberman"])
        await manager.wait_idle(match, DEADLINE)
        step, states, joints = match.step, list(match.states), list(match.joints)
        agent = weakref.ref(match.agents["bomberwoman"])
        assert step == 3 and agent() is not None
        with manager.watch(match):
            clock.now += 10_000
            assert manager.unload_idle() == []  # watched
        clock.now += 599
        assert manager.unload_idle() == []  # the watcher leaving was activity
        clock.now += 2
        assert manager.unload_idle() == [match.id]
        assert match.id not in manager.matches and match.closed == "unloaded"
        gc.collect()
        assert agent() is None  # the agent (and its memory: an Amazons search tree is 60-90 MB) is gone
        with pytest.raises(MoveRejected) as late:  # a request that still held the old object
            manager.submit(match, "bomberman", first_legal(match, "bomberman"), step, tokens["bomberman"])
        assert late.value.status == 409
        again = await manager.get(match.id)
        assert again is not None and again is not match
        assert again.step == step and again.states == states and again.joints == joints
        await manager.wait_idle(again, DEADLINE)
        manager.submit(again, "bomberman", first_legal(again, "bomberman"), step, tokens["bomberman"])
        await manager.wait_idle(again, DEADLINE)
        assert again.step == step + 1
        await manager.close()
        replayed_ok(store, match.id)

    run(scenario)


# --- seats, tokens and the step ------------------------------------------------------------------------------
def test_seats_are_owned_by_tokens_kept_hashed(db: Path) -> None:
    async def scenario() -> str:
        store = Store(db)
        manager = Manager(store)
        match, tokens = await manager.create("bomberman2p", {}, Settings(), seats=["bomberman"])
        assert list(tokens) == ["bomberman"] and match.open_seats() == ["bomberwoman"]
        with pytest.raises(ValueError, match="no human role 'bomberwoman'"):
            await manager.create("bomberman2p", {"bomberwoman": "random"}, Settings(), seats=["bomberwoman"])
        for token in (None, "", "wrong", tokens["bomberman"] + "x"):
            with pytest.raises(MoveRejected) as refused:
                manager.submit(match, "bomberman", "dropBomb", 0, token)
            assert refused.value.status == 403 and "seat" in refused.value.message
        with pytest.raises(MoveRejected) as refused:
            manager.submit(match, "bomberwoman", "dropBomb", 0, tokens["bomberman"])
        assert refused.value.status == 403 and "take it first" in refused.value.message
        assert match.pending == {} and store.load(match.id).pending == {}  # type: ignore[union-attr]
        theirs = manager.claim_seat(match, "bomberwoman")
        assert theirs != tokens["bomberman"] and match.open_seats() == []
        for role, status in [("bomberwoman", 409), ("bomberman", 409), ("nobody", 400)]:
            with pytest.raises(MoveRejected) as refused:
                manager.claim_seat(match, role)
            assert refused.value.status == status
        assert manager.owns(match, "bomberwoman", theirs) and not manager.owns(match, "bomberman", theirs)
        manager.submit(match, "bomberman", "dropBomb", 0, tokens["bomberman"])
        manager.submit(match, "bomberwoman", "(move west)", 0, theirs)
        assert match.step == 1
        agents, _ = await manager.create("wallmaze", {"black": "random"}, Settings())
        with pytest.raises(MoveRejected) as refused:
            manager.claim_seat(agents, "black")
        assert refused.value.status == 400 and "agent" in refused.value.message
        await manager.close()
        store.close()
        # only the hashes are on disk, and they let the owners in after a restart
        raw = sqlite3.connect(db)
        rows = dict(raw.execute("SELECT role, token_hash FROM seats WHERE match_id = ?", (match.id,)).fetchall())
        assert rows == {
            "bomberman": hashlib.sha256(tokens["bomberman"].encode()).hexdigest(),
            "bomberwoman": hashlib.sha256(theirs.encode()).hexdigest(),
        }
        dump = "\n".join(raw.iterdump())
        raw.close()
        assert tokens["bomberman"] not in dump and theirs not in dump
        again = Manager(Store(db))
        reopened = await again.get(match.id)
        assert reopened is not None
        assert again.owns(reopened, "bomberwoman", theirs) and not again.owns(reopened, "bomberwoman", "x")
        again.submit(reopened, "bomberwoman", "(move nowhere)", 1, theirs)
        await again.close()
        return match.id

    run(scenario)


def test_the_step_is_required_and_must_be_the_current_one(db: Path) -> None:
    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store)
        match, tokens = await manager.create("amazons_8x8", {"black": "random"}, Settings())
        token = tokens["white"]
        for step, status in [(None, 400), ("0", 400), (True, 400), (0.0, 400), (1, 409), (-1, 409)]:
            with pytest.raises(MoveRejected) as refused:
                manager.submit(match, "white", "(move 1 3 1 4)", step, token)  # type: ignore[arg-type]
            assert refused.value.status == status and "step" in refused.value.message, step
        assert "white" not in match.pending and match.step == 0 and store.load(match.id).pending == {}  # type: ignore[union-attr]
        assert str(manager.submit(match, "white", "(move 1 3 1 4)", 0, token)) == "(move 1 3 1 4)"
        await manager.close()

    run(scenario)


def test_of_32_concurrent_submissions_for_one_seat_and_step_exactly_one_is_taken(db: Path) -> None:
    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store)
        match, tokens = await manager.create("wallmaze", {"black": "random:seed=5"}, Settings())
        await manager.wait_idle(match, DEADLINE)  # black's answer is in: white's move completes the step
        moves = [str(m) for m in match.game.legal_moves(match.state, "white")]

        async def post(k: int) -> Move | int:
            await asyncio.sleep(0)  # interleave the requests as a server does
            live = await manager.get(match.id)
            assert live is not None
            try:
                return manager.submit(live, "white", moves[k % len(moves)], 0, tokens["white"])
            except MoveRejected as exc:
                return exc.status

        results = await asyncio.gather(*(post(k) for k in range(32)))
        taken = [r for r in results if isinstance(r, Move)]
        assert len(taken) == 1 and sorted(r for r in results if isinstance(r, int)) == [409] * 31
        await manager.wait_idle(match, DEADLINE)
        stored = store.load(match.id)
        assert stored is not None and stored.steps >= 1 and stored.joints[0][0] == str(taken[0])
        assert match.step == 1 or match.over
        await manager.close()

    run(scenario)


# --- ending matches ---------------------------------------------------------------------------------------------
def test_resign_ends_the_match_with_the_resigners_loss_and_wakes_watchers(db: Path) -> None:
    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store)
        match, tokens = await manager.create("bomberman2p", {}, Settings())
        manager.submit(match, "bomberman", "dropBomb", 0, tokens["bomberman"])
        waiter = asyncio.ensure_future(match.wait_change(match.version, DEADLINE))
        for role, token, status in [
            ("bomberwoman", tokens["bomberman"], 403),
            ("bomberwoman", None, 403),
            ("nobody", tokens["bomberman"], 400),
        ]:
            with pytest.raises(MoveRejected) as refused:
                await manager.resign(match, role, token)
            assert refused.value.status == status
        assert not match.over and not waiter.done()
        await manager.resign(match, "bomberwoman", tokens["bomberwoman"])
        assert await waiter  # watchers hear of the end
        assert match.over and match.ended == "resigned" and match.goals == (100, 0)
        assert match.result_text == "bomberwoman resigned" and match.awaiting() == [] and match.pending == {}
        stored = store.load(match.id)
        assert stored is not None
        assert (stored.status, stored.ended, stored.goals, stored.result, stored.pending) == (
            "over",
            "resigned",
            [100, 0],
            "bomberwoman resigned",
            {},
        )
        with pytest.raises(MoveRejected) as refused:
            manager.submit(match, "bomberman", "(move north)", 0, tokens["bomberman"])
        assert refused.value.status == 409 and "resigned" in refused.value.message
        with pytest.raises(MoveRejected) as refused:
            await manager.resign(match, "bomberman", tokens["bomberman"])
        assert refused.value.status == 409
        record = match_record(ggp.load("bomberman2p"), stored)
        assert record["web"]["ended"] == "resigned" and record["web"]["goals"] == [100, 0]
        assert record["terminal"] is False
        MatchRecord.from_dict(record, verify=True)  # the record itself still replays by the rules
        await manager.close()
        # a restart shows the same outcome
        again = Manager(Store(db))
        reopened = await again.get(match.id)
        assert reopened is not None and reopened.over and reopened.goals == (100, 0) and reopened.ended == "resigned"
        await again.close()

    run(scenario)


def test_abort_only_before_the_first_move_and_only_by_a_seat_owner(db: Path) -> None:
    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store)
        match, tokens = await manager.create("wallmaze", {"black": "random"}, Settings())
        await manager.wait_idle(match, DEADLINE)
        for token in (None, "x"):
            with pytest.raises(MoveRejected) as refused:
                await manager.abort(match, token)
            assert refused.value.status == 403
        await manager.abort(match, tokens["white"])
        assert match.over and match.ended == "aborted" and match.goals is None and "aborted" in str(match.result_text)
        stored = store.load(match.id)
        assert stored is not None and (stored.status, stored.ended, stored.goals) == ("over", "aborted", None)
        played, ptokens = await manager.create("wallmaze", {"black": "random"}, Settings())
        await manager.wait_idle(played, DEADLINE)
        manager.submit(played, "white", first_legal(played, "white"), 0, ptokens["white"])
        await manager.wait_idle(played, DEADLINE)
        with pytest.raises(MoveRejected) as refused:
            await manager.abort(played, ptokens["white"])
        assert refused.value.status == 409 and "resign instead" in refused.value.message and not played.over
        alone, none = await manager.create("wallmaze", {"white": "random", "black": "random"}, Settings())
        assert none == {}
        with pytest.raises(MoveRejected) as refused:
            await manager.abort(alone, None)
        assert refused.value.status == 403 and "agents alone" in refused.value.message
        await manager.close()

    run(scenario)


def test_delete_removes_a_finished_match_for_a_seat_owner(db: Path) -> None:
    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store)
        match, tokens = await manager.create("wallmaze", {"black": "random"}, Settings())
        with pytest.raises(MoveRejected) as refused:
            await manager.delete(match.id, tokens["white"])
        assert refused.value.status == 409 and "resign or abort" in refused.value.message
        await manager.resign(match, "white", tokens["white"])
        for token in (None, "x"):
            with pytest.raises(MoveRejected) as refused:
                await manager.delete(match.id, token)
            assert refused.value.status == 403
        assert store.head(match.id) is not None
        await manager.delete(match.id, tokens["white"])
        assert store.head(match.id) is None and match.id not in manager.matches and match.closed == "deleted"
        assert await manager.get(match.id) is None
        assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 0
        with pytest.raises(MoveRejected) as refused:
            await manager.delete(match.id, tokens["white"])
        assert refused.value.status == 404
        # a finished match of agents alone has no seats: anyone may delete it
        alone, _ = await manager.create("wallmaze", {"white": "random", "black": "random"}, Settings())
        await manager.wait_idle(alone, DEADLINE)
        assert alone.over
        await manager.delete(alone.id, None)
        assert store.count() == 0
        await manager.close()

    run(scenario)


# --- agents' threads -------------------------------------------------------------------------------------------
def test_one_match_cannot_take_every_agent_thread(db: Path, gates: Callable[..., Gate]) -> None:
    both = gates("both")
    solo = gates("solo")

    async def scenario() -> None:
        manager = Manager(Store(db), Limits(agent_threads=2))
        # both of this simultaneous match's agents want a thread at once
        first, _ = await manager.create("bomberman2p", {"bomberman": "both", "bomberwoman": "both"}, HELD)
        await both.wait_inside()
        # a second match's agent still gets the other thread while the first match's agent is busy
        await manager.create("wallmaze", {"black": "solo"}, HELD)
        assert await solo.wait_inside() == "black"
        assert both.entered == 1  # the first match's other agent waits its turn
        # every thread is busy now, yet a new game against an agent starts (its agents start on their own thread)
        third, _ = await asyncio.wait_for(manager.create("wallmaze", {"black": "random"}, Settings()), DEADLINE)
        assert "black" in third.thinking
        # the next free thread goes to the match whose turn it is, not to the first match's second agent
        solo.release.set()
        await manager.wait_idle(third, DEADLINE)
        assert "black" in third.pending and not third.busy()
        assert both.entered == 1 and first.step == 0
        both.release.set()
        await manager.wait_idle(first, DEADLINE)
        assert first.over and both.entered >= 2
        await manager.close()

    run(scenario)


def test_agents_playing_alone_leave_a_thread_for_games_with_people(db: Path, gates: Callable[..., Gate]) -> None:
    watched = gates("watched")
    solo = gates("solo")

    async def scenario() -> None:
        manager = Manager(Store(db), Limits(agent_threads=2))
        for _ in range(3):  # long thinkers nobody waits for (mcts:time=12 matches, say)
            await manager.create("wallmaze", {"white": "watched", "black": "watched"}, HELD)
        await watched.wait_inside()
        # a person's game against an agent is answered at once, not after the others' thinking
        match, _ = await asyncio.wait_for(manager.create("wallmaze", {"black": "solo"}, HELD), DEADLINE)
        assert await solo.wait_inside() == "black"
        assert watched.entered == 1
        solo.release.set()
        await manager.wait_idle(match, DEADLINE)
        assert "black" in match.pending
        watched.release.set()
        await manager.close()

    run(scenario)


@pytest.mark.timing
def test_an_agent_over_its_clock_gets_a_random_move_and_frees_its_thread(db: Path, gates: Callable[..., Gate]) -> None:
    hang = gates("hang")

    async def scenario() -> None:
        store = Store(db)
        manager = Manager(store, Limits(agent_threads=1, grace=0.05))
        match, tokens = await manager.create("wallmaze", {"black": "hang"}, Settings(agent_time=0.2))
        await hang.wait_inside()
        await manager.wait_idle(match, DEADLINE)  # the clock ran out: a random move was played for black
        assert "black" in match.pending and any("time out" in note for note in match.notes)
        # the hung call keeps its thread, but another match's agent is still served
        other, _ = await manager.create("wallmaze", {"black": "random"}, Settings())
        await manager.wait_idle(other, DEADLINE)
        assert "black" in other.pending
        # the hanging agent is not asked again while its call runs: 'busy', and the match goes on
        manager.submit(match, "white", first_legal(match, "white"), 0, tokens["white"])
        await manager.wait_idle(match, DEADLINE)
        manager.submit(match, "white", first_legal(match, "white"), 1, tokens["white"])
        await manager.wait_idle(match, DEADLINE)
        stored = store.load(match.id)
        assert stored is not None and stored.steps == 2
        kinds = [f["kind"] for info in stored.infos for f in info["faults"]]
        assert kinds == ["timeout", "busy"] and hang.entered == 1
        hang.release.set()
        await manager.close()

    run(scenario)


# --- restarts ---------------------------------------------------------------------------------------------------
def test_matches_of_agents_alone_go_on_by_themselves_after_a_restart(db: Path, gates: Callable[..., Gate]) -> None:
    stall = gates("stall", hold_from=2)  # each agent answers twice, then waits

    async def scenario() -> None:
        store = Store(db)
        first = Manager(store)
        alone, _ = await first.create("wallmaze", {"white": "stall", "black": "stall"}, HELD)
        people, _ = await first.create("wallmaze", {"black": "random"}, Settings())
        for _ in range(5):
            await stall.wait_inside()  # the fifth call is the first that waits
        assert not alone.over and alone.step == 2
        await first.close()  # the server stops mid-match
        stall.release.set()  # the agents of the old server's threads may finish; their answers are not used
        stored = store.load(alone.id)
        assert stored is not None and stored.status == "playing" and stored.steps == 2
        second = Manager(store)
        await second.start()
        deadline = time.monotonic() + DEADLINE
        while alone.id not in second.matches:  # resumed by start(), nobody opened it
            assert time.monotonic() < deadline, "the match was not resumed"
            await asyncio.sleep(0.01)
        resumed = second.matches[alone.id]
        await second.wait_idle(resumed, DEADLINE)
        assert resumed.over and resumed.ended == "terminal" and resumed.step > 2
        assert people.id not in second.matches  # a match waiting for a person waits to be opened
        await second.close()
        replayed_ok(store, alone.id)

    run(scenario)


OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY, game TEXT NOT NULL, roles TEXT NOT NULL, players TEXT NOT NULL, settings TEXT NOT NULL,
    created REAL NOT NULL, updated REAL NOT NULL, steps INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL,
    goals TEXT, pending TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS steps (
    match_id TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE, step INTEGER NOT NULL, joint TEXT,
    state TEXT NOT NULL, at REAL NOT NULL, info TEXT, PRIMARY KEY (match_id, step)
);
CREATE INDEX IF NOT EXISTS matches_by_created ON matches (created);
PRAGMA user_version = 1;
"""


def test_a_version_1_database_is_upgraded_and_keeps_working(db: Path) -> None:
    game = ggp.load("wallmaze")
    s0 = game.initial_state()
    joint = ["(move 2 5 3 5)", "(move 12 5 11 5)"]
    s1 = game.next_state(s0, joint)
    old = sqlite3.connect(db)
    old.executescript(OLD_SCHEMA)
    roles, now = json.dumps(list(game.roles)), time.time()
    for mid, players, status, steps in [
        ("playing1", ["human", "random"], "playing", 1),
        ("finished", ["random", "random"], "over", 1),
    ]:
        old.execute(
            "INSERT INTO matches VALUES (?, 'wallmaze', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                mid,
                roles,
                json.dumps(players),
                '{"agent_time": 3600, "pace": 0}',
                now,
                now,
                steps,
                status,
                json.dumps([50, 50]) if status == "over" else None,
                '{"white": "(move 3 5 4 5)"}' if mid == "playing1" else "{}",
            ),
        )
        old.execute("INSERT INTO steps VALUES (?, 0, NULL, ?, ?, NULL)", (mid, game.state_to_json(s0), now))
        old.execute(
            "INSERT INTO steps VALUES (?, 1, ?, ?, ?, NULL)", (mid, json.dumps(joint), game.state_to_json(s1), now)
        )
    old.commit()
    old.close()

    async def scenario() -> None:
        store = Store(db)
        assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        finished = store.load("finished")
        assert finished is not None and finished.ended == "terminal" and finished.goals == [50, 50]
        manager = Manager(store, Limits(max_agent_time=5.0))
        match = await manager.get("playing1")
        assert match is not None and match.step == 1 and match.state == s1
        assert match.settings.agent_time == 5.0 and any("maximum" in n for n in match.notes)  # clamped to the limit
        assert match.open_seats() == ["white"] and "white" in match.pending  # its half step survived
        token = manager.claim_seat(match, "white")
        await manager.wait_idle(match, DEADLINE)
        assert match.step == 2 and match.joints[1][0] == "(move 3 5 4 5)"
        manager.submit(match, "white", first_legal(match, "white"), 2, token)
        await manager.resign(match, "white", token)
        assert store.load("playing1").ended == "resigned"  # type: ignore[union-attr]
        await manager.close()
        store.close()
        Store(db).close()  # opening an upgraded file again changes nothing

    run(scenario)
    newer = sqlite3.connect(db)
    newer.execute("PRAGMA user_version = 99")
    newer.commit()
    newer.close()
    with pytest.raises(RuntimeError, match="newer ggp"):
        Store(db)


def test_a_step_is_stored_once_and_only_in_order(db: Path) -> None:
    store = Store(db)
    store.create("m", "wallmaze", ["white", "black"], ["human", "human"], {}, "{}")
    store.append_step("m", 1, ["noop", "noop"], "{}", terminal=False, goals=None)
    for step in (1, 3):
        with pytest.raises(ValueError, match="not stored"):
            store.append_step("m", step, ["noop", "noop"], "{}", terminal=False, goals=None)
    stored = store.load("m")
    assert stored is not None and stored.steps == 1 and len(stored.states) == 2
