"""The one step engine (:class:`ggp.match.loop.Steps`): every loop settles, plays and records a step this way."""

from __future__ import annotations

import random

import pytest

import ggp
from ggp.agents import AGENTS, Agent, Choice
from ggp.match.calls import Caller, Fault
from ggp.match.loop import Steps
from ggp.match.selfplay_game import SelfplayError, play_selfplay_game

MAZE = ggp.load("wallmaze")
EAST = MAZE.parse_move("(move 2 5 3 5)")  # white's step east from its start


def test_a_judged_move_is_played_and_a_bad_answer_gets_a_random_legal_move_with_its_fault() -> None:
    told: list[tuple[int, tuple[str, ...]]] = []
    steps = Steps(MAZE, random.Random(3), on_step=lambda step, joint: told.append((step, joint)))
    assert steps.settle("white", Choice(EAST)) == EAST
    instead = steps.settle("black", MAZE.parse_move("(move 2 5 3 5)"))  # white's move: not black's
    assert instead in steps.legal("black") and [f.kind for f in steps.faults("black")] == ["illegal"]
    record = steps.play()
    assert record.joint == (EAST.text, instead.text) and [f.role for f in record.faults] == ["black"]
    assert record.faults[0].played == instead.text  # the fault says which move was played instead
    assert told == [(1, record.joint)] and steps.step == 2 and steps.moves == [record]
    assert steps.state == MAZE.next_state(MAZE.initial_state(), [EAST, instead])


def test_a_failed_call_is_not_judged_again_and_a_checked_move_is_taken_as_it_is() -> None:
    steps = Steps(MAZE, random.Random(1))
    timeout = Fault("white", "timeout", "no answer in 1 s", "play", 1)
    move = steps.settle("white", None, elapsed=1.2, fault=timeout)
    assert move in steps.legal("white") and steps.faults("white")[0].kind == "timeout"
    assert steps.take("black", MAZE.check_move(steps.state, "black", "noop")).text == "noop"
    record = steps.play()
    assert record.times == (1.2, None) and [f.kind for f in record.faults] == ["timeout"]


def test_a_step_is_played_only_when_every_role_has_its_move() -> None:
    steps = Steps(MAZE, random.Random(1))
    steps.settle("white", EAST)
    with pytest.raises(ValueError, match="no move settled for black"):
        steps.play()
    assert steps.state == MAZE.initial_state() and steps.moves == []  # nothing changed


def test_asking_an_agent_goes_through_the_caller_and_its_choice() -> None:
    class Eastward(Agent):
        def select_move(self, state: ggp.State, time_limit: float | None = None) -> ggp.Move:
            return EAST

    agent = Eastward()
    agent.start(MAZE, "white")
    steps = Steps(MAZE, random.Random(1))
    assert steps.ask(Caller(), agent, "white", clock=None) == EAST and steps.faults("white") == []


def test_self_play_refuses_an_illegal_move_instead_of_recording_a_random_one(isolated_agents: None) -> None:
    class Stubborn(Agent):
        def select_move(self, state: ggp.State, time_limit: float | None = None) -> ggp.Move:
            return MAZE.parse_move("(move 2 5 2 6)")  # into the wall north of white's start

    AGENTS["stubborn"] = lambda **_: Stubborn()
    with pytest.raises(SelfplayError, match=r"stubborn in game 0: .*is not a legal move for white"):
        play_selfplay_game({"game": "wallmaze", "agent": "stubborn", "index": 0, "seed": 1})
