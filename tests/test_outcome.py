"""A match's result in words: the one sentence every page, record and list shows."""

from __future__ import annotations

import pytest

from ggp.match.calls import Fault
from ggp.match.outcome import fault_said, outcome, role_title


@pytest.mark.parametrize(
    ("roles", "goals", "ended", "said"),
    [
        (("white", "black"), (100, 0), "terminal", "White won (100-0)"),
        (("white", "black"), (25, 75), "terminal", "Black won (25-75)"),
        (("xPlayer", "oPlayer"), (50, 50), "terminal", "Draw (50-50)"),
        (("red", "green", "blue"), (100, 100, 0), "terminal", "Red and green shared the win (100-100-0)"),
        (("red", "green", "blue"), (0, 50, 25), "terminal", "Green won (0-50-25)"),
        (("robot",), (100,), "terminal", "Solved (100 of 100)"),
        (("robot",), (60,), "terminal", "Finished with 60 of 100"),
        (("white", "black"), (0, 100), "resigned", "White resigned: black won"),
        (("a", "b", "c"), (100, 0, 100), "resigned", "B resigned"),
        (("white", "black"), (50, 50), "drawn", "Draw by agreement"),
        (("white", "black"), None, "aborted", "Aborted before the first move"),
        (("white", "black"), None, "abandoned", "Abandoned"),
    ],
)
def test_every_ending_reads_as_one_sentence(
    roles: tuple[str, ...], goals: tuple[int, ...] | None, ended: str, said: str
) -> None:
    assert outcome(roles, goals, ended) == said


def test_role_names_read_as_words() -> None:
    assert [role_title(r) for r in ("white", "xPlayer", "player_2", "robot1", "RED")] == [
        "White",
        "X player",
        "Player 2",
        "Robot 1",
        "RED",
    ]


def test_a_wrong_ending_or_count_of_goals_is_refused() -> None:
    with pytest.raises(ValueError, match="not 'timeout'"):
        outcome(("a", "b"), (1, 2), "timeout")
    with pytest.raises(ValueError, match="3 goals for 2 roles"):
        outcome(("a", "b"), (1, 2, 3))


@pytest.mark.parametrize(
    ("fault", "played", "said"),
    [
        (
            Fault("white", "timeout", "no answer within 2 s", step=3),
            "c1-c5",
            "Step 3, white: time out: a random move was played (c1-c5)",
        ),
        (
            Fault("red", "illegal", "(drop 9) is not legal", step=1, played="(drop 2)"),
            None,
            "Step 1, red: an illegal move: a random move was played ((drop 2))",
        ),
        (
            Fault("oPlayer", "busy", "still running", step=7),
            None,
            "Step 7, oPlayer: still busy with an earlier move: a random move was played",
        ),
        (Fault("black", "exception", "ValueError", phase="start"), None, "Black: its player failed before the game"),
        (
            Fault("black", "not_a_move", "garbage", phase="stop"),
            None,
            "Black: an answer that is not a move when told the result",
        ),
    ],
)
def test_a_players_fault_is_told_in_words_with_the_move_played_for_it(
    fault: Fault, played: str | None, said: str
) -> None:
    assert fault_said(fault, played) == said
