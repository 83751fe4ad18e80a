"""Piece glyphs for rule sheets whose boards are chess-like or draughts-like, recognised from the facts' names.

A sheet names its pieces in its own words: ``white rook``, ``bk`` (black king), ``wp`` (white pawn). The
pieces on a sheet's first board say which game it is like: a queen, rook, bishop or knight makes it chess-like
(each piece drawn as its chess glyph); men, pawns and kings alone, on a sheet named for checkers or draughts,
make it draughts-like (men as plain discs, kings crowned). Other sheets keep their lettered discs.

>>> piece("white rook"), piece("bk"), piece("wp"), piece("blackKnight"), piece("red"), piece("x")
(('white', 'rook'), ('black', 'king'), ('white', 'pawn'), ('black', 'knight'), None, None)
>>> glyph("white rook", "chess"), glyph("bk", "chess"), glyph("wp", "draughts"), glyph("bk", "draughts")
('♖', '♚', '', '♛')
"""

from __future__ import annotations

import re
import weakref

from ..core.game import Game
from ..gdl.grid import grid_of

#: A piece's kind by its letter in two-letter names (``wp``, ``bk``).
_LETTERS = {"k": "king", "q": "queen", "r": "rook", "b": "bishop", "n": "knight", "p": "pawn"}
_SIDES = {"w": "white", "b": "black"}
_KINDS = {*_LETTERS.values(), "man", "checker", "piece"}
_CHESS = {
    "white": {"king": "♔", "queen": "♕", "rook": "♖", "bishop": "♗", "knight": "♘", "pawn": "♙"},
    "black": {"king": "♚", "queen": "♛", "rook": "♜", "bishop": "♝", "knight": "♞", "pawn": "♟"},
}
#: Pieces only chess has.
_CHESS_ONLY = {"queen", "rook", "bishop", "knight"}
_DRAUGHTS_NAMES = re.compile(r"checker|draught|dame", re.IGNORECASE)
_STYLES: weakref.WeakKeyDictionary[Game, str | None] = weakref.WeakKeyDictionary()


def piece(content: str) -> tuple[str, str] | None:
    """A cell's content as (side, kind) when it names a piece of one side: ``white rook``, ``bk``; else None."""
    text = content.strip()
    if re.fullmatch(r"[wb][kqrbnp]", text):
        return _SIDES[text[0]], _LETTERS[text[1]]
    words = [w.lower() for w in re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").split()]
    side = next((w for w in words if w in ("white", "black", "red")), None)
    kind = next((w for w in words if w in _KINDS), None)
    return (side, kind) if side is not None and kind is not None else None


def style(game: Game) -> str | None:
    """``chess``, ``draughts`` or None: what ``game`` is like, from the pieces on its grid's first board."""
    if game in _STYLES:
        return _STYLES[game]
    grid = grid_of(game)
    held = grid.cells(game.state_facts(game.initial_state()))[0] if grid is not None else {}
    kinds = {p[1] for contents in held.values() for p in map(piece, contents) if p is not None}
    found: str | None = None
    if kinds & _CHESS_ONLY:
        found = "chess"
    elif kinds and kinds <= {"pawn", "man", "checker", "piece", "king"}:
        found = "draughts" if _DRAUGHTS_NAMES.search(game.name) else "chess" if "pawn" in kinds else None
    _STYLES[game] = found
    return found


def glyph(content: str, like: str | None) -> str | None:
    """What to draw for ``content`` on a board like ``like``: a chess glyph; for draughts, ``""`` (a plain disc)
    for a man and a crown for a king; None where the game keeps its lettered discs."""
    named = piece(content)
    if named is None or like is None:
        return None
    side, kind = named
    if like == "chess":
        return _CHESS.get(side, _CHESS["black"]).get(kind)
    return "♛" if kind == "king" else ""
