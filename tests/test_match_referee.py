"""The referee: failing agents get random legal moves, every failure is recorded, the match always ends."""

from __future__ import annotations

import threading

import pytest

import ggp
from ggp.agents import Agent, RandomAgent
from ggp.core.game import Move, State
from ggp.match import MatchRecord, Referee
from ggp.match.calls import margin
from match_agents import BlockingAgent, CrashingAgent, FaultyLifecycleAgent, IllegalMoveAgent, WrongTypeAgent

#: A play clock for agents that answer at once: long enough that no answer is late on a loaded machine (the
#: referee moves on as soon as both have answered, so it costs nothing), where the clock is not what is tested.
LONG = 30.0
#: The play clock that a blocking agent runs out of: long enough that an agent answering at once never does.
CLOCK = 5.0


def warm(game: ggp.Game) -> None:
    """The game's compiled functions loaded in this process, so that no agent's first call pays for it."""
    state = game.initial_state()
    for role in game.roles:
        game.legal_moves(state, role)
    game.next_state(state, [game.legal_moves(state, role)[0] for role in game.roles])


def legal_texts(game: ggp.Game, state: State, role: str) -> set[str]:
    return {str(m) for m in game.legal_moves(state, role)}


def check_replacements(record: MatchRecord, role: str, kind: str) -> None:
    """Every move of ``role`` was a fault of ``kind`` replaced by a legal move, and the record replays."""
    game = ggp.load(record.game)
    states = record.verify()
    index = record.roles.index(role)
    assert record.steps > 0
    for move, state in zip(record.moves, states, strict=False):
        faults = [f for f in move.faults if f.role == role]
        assert len(faults) == 1, move
        fault = faults[0]
        assert (fault.kind, fault.phase, fault.step) == (kind, "play", move.step)
        assert fault.played == move.joint[index]
        assert move.joint[index] in legal_texts(game, state, role)
    assert game.is_terminal(states[-1])


def test_crashing_agent_gets_random_legal_moves() -> None:
    game = ggp.load("wallmaze")
    record = Referee(game, play_clock=LONG, seed=4).run([CrashingAgent(), RandomAgent(seed=1)], specs=["crash", "r"])
    check_replacements(record, "white", "exception")
    fault = record.moves[0].faults[0]
    assert fault.message == "RuntimeError: boom: this agent always fails"
    assert fault.traceback is not None and "boom" in fault.traceback
    assert fault.returned is None
    assert all(f.role == "white" for f in record.all_faults())  # black never failed
    again = MatchRecord.from_json(record.to_json())
    assert again.moves[0].faults[0] == fault


def test_illegal_move_is_replaced() -> None:
    game = ggp.load("amazons_8x8")
    record = Referee(game, play_clock=LONG, seed=2).run([RandomAgent(seed=3), IllegalMoveAgent()])
    check_replacements(record, "black", "illegal")
    fault = record.moves[0].faults[0]
    assert fault.returned == "(move 99 99 99 99)"
    assert "not a legal move for black" in fault.message and "noop" in fault.message  # names the legal moves


@pytest.mark.parametrize("text", [False, True])
def test_non_move_is_replaced(text: bool) -> None:
    game = ggp.load("bomberman2p")
    record = Referee(game, play_clock=LONG, seed=8).run([WrongTypeAgent(text=text), RandomAgent(seed=1)])
    check_replacements(record, "bomberman", "not_a_move")
    fault = record.moves[0].faults[0]
    kind = "str" if text else "int"
    first_legal = str(game.legal_moves(game.initial_state(), "bomberman")[0])
    assert fault.returned == (repr(first_legal) if text else "42")
    assert f"(a {kind}), not a Move" in fault.message


@pytest.mark.timing
def test_slow_agent_times_out_is_not_called_while_busy_and_recovers() -> None:
    game = ggp.load("wallmaze")
    slow = BlockingAgent()
    released: list[int] = []

    def on_step(step: int, joint: tuple[str, ...]) -> None:
        if step == 2:  # the agent has overrun step 1 and was skipped at step 2: let it finish now
            slow.release.set()
            assert slow.thread is not None
            slow.thread.join()
            released.append(step)

    # white answers at once, so its clock only has to be long enough that it is never late on a loaded machine;
    # black's runs out (the test waits it out: it is what is tested)
    warm(game)
    referee = Referee(game, start_clock=LONG, play_clock=CLOCK, grace=0.0, seed=5, on_step=on_step)
    record = referee.run([RandomAgent(seed=2), slow], specs=["random:seed=2", "blocking"])
    assert released == [2]
    first, second = record.moves[0], record.moves[1]
    assert [(f.role, f.kind, f.step) for f in first.faults] == [("black", "timeout", 1)]
    assert f"no answer within {CLOCK:g} s + grace 0 s" in first.faults[0].message
    assert first.times[1] is not None and first.times[1] >= CLOCK - 0.01
    assert [(f.role, f.kind, f.step) for f in second.faults] == [("black", "busy", 2)]
    assert second.times[1] is None  # not asked
    # From step 3 on the agent answers again (its first legal move), with no fault.
    assert all(not m.faults for m in record.moves[2:])
    assert slow.calls == record.steps - 1
    states = record.verify()
    for move, state in zip(record.moves[2:], states[2:], strict=False):
        assert move.joint[1] == str(game.legal_moves(state, "black")[0])
    # The late answer of step 1 was discarded: the replacement was played.
    assert record.moves[0].joint[1] == first.faults[0].played
    # The agent was told the play clock minus the margin.
    assert slow.time_limits[0] == pytest.approx(CLOCK - margin(CLOCK))
    assert referee.runaway_threads() == []


@pytest.mark.timing
def test_runaway_thread_is_reported_until_it_ends() -> None:
    game = ggp.load("bomberman")
    slow = BlockingAgent()
    warm(game)
    referee = Referee(game, play_clock=1.0, grace=0.0, seed=1)
    record = referee.run([slow, RandomAgent(seed=1)])
    kinds = [f.kind for f in record.all_faults() if f.role == "bomberman"]
    assert kinds[0] == "timeout" and kinds[1:-1] == ["busy"] * (record.steps - 1)
    stop = [f for f in record.faults if f.role == "bomberman"][-1]
    assert kinds[-1] == "busy" and stop.phase == "stop"  # stop was not called either
    assert slow.entered.is_set() and slow.calls == 1
    assert referee.runaway_threads() == [slow.thread]
    slow.release.set()
    assert slow.thread is not None
    slow.thread.join()
    assert referee.runaway_threads() == []
    record.verify()


def test_start_and_stop_failures_are_recorded() -> None:
    game = ggp.load("wallmaze")
    record = Referee(game, play_clock=LONG, seed=3).run([FaultyLifecycleAgent(), RandomAgent(seed=4)])
    assert [(f.phase, f.role, f.kind, f.step) for f in record.faults] == [
        ("start", "white", "exception", None),
        ("stop", "white", "exception", None),
    ]
    assert record.faults[0].message == "ValueError: cannot prepare"
    assert record.faults[1].message == "KeyError: 'cannot clean up'"
    assert not any(m.faults for m in record.moves)  # it played fine in between
    again = MatchRecord.from_json(record.to_json(), verify=True)
    assert again.faults == record.faults


def test_agents_see_the_protocol() -> None:
    seen: list[tuple[str, object]] = []

    class Watcher(RandomAgent):
        def start(self, game, role, start_clock=None, play_clock=None):  # type: ignore[no-untyped-def]
            super().start(game, role, start_clock, play_clock)
            seen.append(("start", (role, start_clock, play_clock)))

        def stop(self, state, goals):  # type: ignore[no-untyped-def]
            seen.append(("stop", tuple(goals)))

        def select_move(self, state: State, time_limit: float | None = None) -> Move:
            seen.append(("move", threading.current_thread() is threading.main_thread()))
            return super().select_move(state, time_limit)

    game = ggp.load("amazons_8x8")
    record = Referee(game, start_clock=2 * LONG, play_clock=LONG, seed=1).run([Watcher(seed=1), RandomAgent(seed=2)])
    assert seen[0] == (
        "start",
        ("white", pytest.approx(2 * LONG - margin(2 * LONG)), pytest.approx(LONG - margin(LONG))),
    )
    assert seen[-1] == ("stop", record.goals)
    moves = [s for s in seen if s[0] == "move"]
    assert len(moves) == record.steps  # asked in every state, noop turns included
    assert all(on_main is False for _, on_main in moves)  # in a worker thread


def test_referee_checks_its_arguments() -> None:
    game = ggp.load("wallmaze")
    with pytest.raises(ValueError, match="2 roles"):
        Referee(game).run([RandomAgent()])
    with pytest.raises(ValueError, match="play_clock must be positive"):
        Referee(game, play_clock=0)
    with pytest.raises(ValueError, match="margin"):
        Referee(game, play_clock=1.0, margin=1.0)
    for clocks in ({"play_clock": float("nan")}, {"start_clock": float("inf")}, {"play_clock": 86_401.0}):
        with pytest.raises(ValueError, match="must be positive seconds, at most 86400"):
            Referee(game, **clocks)  # type: ignore[arg-type]
    for grace in (float("nan"), -1.0, 61.0):
        with pytest.raises(ValueError, match="grace must be seconds from 0 to 60"):
            Referee(game, grace=grace)


class _HostileMove(Move):
    """A Move whose comparison fails."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing me")

    __hash__ = Move.__hash__


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no printing me")


class HostileAgent(Agent):
    """Answers with a different hostile thing each move."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        self.calls += 1
        first = self.game.legal_moves(state, self.role)[0]
        kind = self.calls % 4
        if kind == 1:
            return _HostileMove(first.text)
        if kind == 2:
            raise _Unprintable
        if kind == 3:
            raise ValueError("x" * 1_000_000)
        return first


def test_hostile_answers_are_faults_and_never_reach_the_game() -> None:
    game = ggp.load("wallmaze")
    record = Referee(game, play_clock=LONG, seed=3).run([HostileAgent(), RandomAgent(seed=1)], specs=["h", "r"])
    record = MatchRecord.from_json(record.to_json(), verify=True)
    faults = {f.step: f for f in record.all_faults()}
    for move in record.moves:
        kind = move.step % 4
        if kind == 0:  # a plain legal move
            assert move.step not in faults
            continue
        fault = faults[move.step]
        assert fault.role == "white" and len(fault.message) <= 1100
        if kind == 1:
            assert fault.kind == "not_a_move" and "cannot be read as a move: RuntimeError" in fault.message
        elif kind == 2:
            assert fault.kind == "exception" and fault.message == "_Unprintable: <unprintable>"
        else:
            assert fault.kind == "exception" and fault.message.endswith("...")
    assert len(record.to_json()) < 500_000


def test_records_seed_and_is_reproducible() -> None:
    game = ggp.load("bomberman2p")

    def play(seed: int) -> MatchRecord:
        agents: list[Agent] = [CrashingAgent(), RandomAgent(seed=5)]
        return Referee(game, play_clock=LONG, seed=seed).run(agents)

    a, b = play(11), play(11)
    assert a.seed == 11
    assert [m.joint for m in a.moves] == [m.joint for m in b.moves]
    unseeded = Referee(game, play_clock=LONG).run([RandomAgent(seed=1), RandomAgent(seed=2)])
    assert isinstance(unseeded.seed, int)
