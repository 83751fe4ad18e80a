"""``ggp.testing.check_game``: every built-in game and a rule sheet keep the Game API's promises, and a game
that breaks one is caught (the corpus's sheets are checked in tests/test_corpus.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ggp
from ggp.core.game import Move
from ggp.gdl import load_file
from ggp.testing import ConformanceError, check_game

TICTACTOE = Path(ggp.__file__).parent / "gdl" / "tictactoe.kif"


@pytest.mark.parametrize("name", ggp.game_names())
def test_every_built_in_game_keeps_the_game_api_s_promises(name: str) -> None:
    assert check_game(ggp.load(name), walks=3, max_steps=300, seed=1) > 3


def test_a_rule_sheet_keeps_them_too() -> None:
    game = load_file(str(TICTACTOE))
    checked = check_game(game, walks=4, seed=2)
    assert 4 * 5 <= checked <= 4 * 10  # each walk reaches a terminal state within tic-tac-toe's 9 moves


def test_a_move_that_does_not_read_back_from_its_text_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    game = ggp.load("wallmaze")
    monkeypatch.setattr(game, "parse_move", lambda text: Move("noop"))
    with pytest.raises(ConformanceError, match="does not read back from its text"):
        check_game(game, walks=1)


def test_legal_moves_and_actions_that_differ_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    game = ggp.load("amazons_8x8")
    real = game.legal_actions
    monkeypatch.setattr(game, "legal_actions", lambda state, role: real(state, role)[:-1])
    with pytest.raises(ConformanceError, match=r"legal moves but .* legal actions"):
        check_game(game, walks=1)
