"""ggp.match.calls: the one way ggp calls an agent (deadline, margin, judging, random replacement, faults)."""

from __future__ import annotations

import random
import threading

import pytest

import ggp
from ggp.agents import Agent, RandomAgent
from ggp.core.game import Move, State
from ggp.match.calls import FAULT_KINDS, Caller, Fault, judge, margin, time_limit


@pytest.mark.parametrize(
    ("clock", "kept"), [(0.02, 0.01), (0.2, 0.07), (1.0, 0.15), (5.0, 0.55), (9.5, 1.0), (600, 1.0)]
)
def test_margin_is_50ms_plus_a_tenth_at_most_a_second_and_half_the_clock(clock: float, kept: float) -> None:
    assert margin(clock) == pytest.approx(kept)
    assert time_limit(clock) == pytest.approx(clock - kept)
    assert 0 < time_limit(clock) < clock  # type: ignore[operator]


def test_no_clock_keeps_nothing_back() -> None:
    assert margin(None) == 0.0 and time_limit(None) is None


def test_judge_plays_the_games_own_move_object() -> None:
    game = ggp.load("wallmaze")
    state = game.initial_state()
    legal = game.legal_moves(state, "white")
    answer = Move(str(legal[0]))  # equal to a legal move, but another object
    played = judge(game, state, "white", answer, step=1)
    assert played == answer and any(played is m for m in legal)


@pytest.mark.parametrize(
    ("answer", "kind"), [("noop", "not_a_move"), (None, "not_a_move"), (Move("(move 9 9 9 9)"), "illegal")]
)
def test_judge_says_why_an_answer_cannot_be_played(answer: object, kind: str) -> None:
    game = ggp.load("wallmaze")
    fault = judge(game, game.initial_state(), "white", answer, step=3)
    assert isinstance(fault, Fault) and fault.kind == kind and fault.kind in FAULT_KINDS
    assert (fault.role, fault.phase, fault.step, fault.played) == ("white", "play", 3, None)


class Held(Agent):
    """Answers select_move only once ``release`` is set; counts its calls."""

    name = "held"

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.calls = 0

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        self.calls += 1
        self.release.wait(30)
        return self.game.legal_moves(state, self.role)[0]


@pytest.mark.timing
def test_a_late_agent_gets_a_random_move_and_is_not_asked_again_while_its_call_runs() -> None:
    game = ggp.load("wallmaze")
    state = game.initial_state()
    agent = Held()
    agent.start(game, "white")
    caller = Caller(grace=0.0)
    legal = game.legal_moves(state, "white")

    move, elapsed, fault, _ = caller.ask(agent, game, state, "white", clock=0.05, rng=random.Random(1), step=1)
    assert fault is not None and fault.kind == "timeout" and fault.played == str(move) and move in legal
    assert elapsed is not None and elapsed > 0
    [runaway] = caller.runaway_threads()
    assert caller.busy("white")

    move, elapsed, fault, _ = caller.ask(agent, game, state, "white", clock=0.05, rng=random.Random(1), step=2)
    assert fault is not None and fault.kind == "busy" and elapsed is None and move in legal
    assert agent.calls == 1  # never two calls at once

    agent.release.set()
    runaway.join(30)
    assert not caller.busy("white") and caller.runaway_threads() == []
    move, _, fault, _ = caller.ask(agent, game, state, "white", clock=30.0, rng=random.Random(1), step=3)
    assert fault is None and move == legal[0] and agent.calls == 2


@pytest.mark.timing
def test_forget_calls_frees_the_roles_of_a_new_match_but_keeps_listing_runaways() -> None:
    game = ggp.load("wallmaze")
    agent = Held()
    agent.start(game, "white")
    caller = Caller()
    caller.ask(agent, game, game.initial_state(), "white", clock=0.01, rng=random.Random(1))
    caller.forget_calls()
    assert not caller.busy("white") and len(caller.runaway_threads()) == 1
    agent.release.set()
    caller.runaway_threads()[0].join(30)


class Exits(Agent):
    name = "exits"

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        raise SystemExit(3)


def test_an_agent_raising_system_exit_is_a_fault_not_the_end_of_the_caller() -> None:
    game = ggp.load("bomberman2p")
    agent = Exits()
    agent.start(game, "bomberman")
    move, _, fault, _ = Caller().ask(agent, game, game.initial_state(), "bomberman", clock=30.0, rng=random.Random(0))
    assert fault is not None and fault.kind == "exception" and "SystemExit" in fault.message
    assert fault.traceback is not None and "SystemExit" in fault.traceback
    assert move in game.legal_moves(game.initial_state(), "bomberman")


def test_the_agent_is_told_the_clock_less_the_margin_unless_told_otherwise() -> None:
    seen: list[float | None] = []

    class Watcher(RandomAgent):
        def select_move(self, state: State, time_limit: float | None = None) -> Move:
            seen.append(time_limit)
            return super().select_move(state, time_limit)

    game = ggp.load("wallmaze")
    agent = Watcher(seed=1)
    agent.start(game, "white")
    caller = Caller()
    caller.ask(agent, game, game.initial_state(), "white", clock=2.0, rng=random.Random(0))
    caller.ask(agent, game, game.initial_state(), "white", clock=2.0, rng=random.Random(0), told=0.7)
    caller.ask(agent, game, game.initial_state(), "white", clock=None, rng=random.Random(0))
    assert seen == [pytest.approx(2.0 - margin(2.0)), 0.7, None]
