"""Chess-like and draughts-like rule sheets drawn with their pieces' glyphs, recognised from the facts' names."""

from __future__ import annotations

from pathlib import Path

import pytest

from ggp.gdl import load_file
from ggp.web import glyphs, ui

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "kif"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the GDL corpus (../shared/corpus) is not beside the repo")


@pytest.mark.parametrize(
    ("sheet", "like"),
    [
        ("speedChess", "chess"),  # white rook, black knight, ...
        ("minichess", "chess"),  # bk, wk, wr
        ("checkersTiny", "draughts"),  # wp, bp on a sheet named for checkers
        ("englishDraughts", "draughts"),  # white pawn, black pawn
        ("breakthroughSmall", None),  # white, black: discs as before
    ],
)
def test_what_a_sheet_is_like_comes_from_its_pieces(sheet: str, like: str | None) -> None:
    assert glyphs.style(load_file(CORPUS / f"{sheet}.kif")) == like


def test_chess_pieces_are_drawn_as_their_glyphs() -> None:
    game = load_file(CORPUS / "speedChess.kif")
    svg = ui.board_svg(game, game.initial_state())
    drawn = {ch: svg.count(f">{ch}</text>") for ch in "♔♕♖♗♘♙♚♛♜♝♞♟"}
    assert drawn == {"♔": 1, "♕": 1, "♖": 2, "♗": 2, "♘": 2, "♙": 8, "♚": 1, "♛": 1, "♜": 2, "♝": 2, "♞": 2, "♟": 8}
    minichess = load_file(CORPUS / "minichess.kif")
    small = ui.board_svg(minichess, minichess.initial_state())
    assert small.count(">♚</text>") == 1 and small.count(">♔</text>") == 1 and small.count(">♖</text>") == 1


def test_draughts_men_are_plain_discs_and_kings_crowned() -> None:
    game = load_file(CORPUS / "englishDraughts.kif")
    svg = ui.board_svg(game, game.initial_state())
    assert svg.count("<circle") == 24 and ">P</text>" not in svg and "♛" not in svg  # 24 men, no letters
    assert glyphs.glyph("red king", "draughts") == "♛" and glyphs.glyph("bp", "draughts") == ""
