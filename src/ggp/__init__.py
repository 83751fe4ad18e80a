"""ggp: General Game Playing in Python.

>>> import ggp
>>> ggp.games()
['amazons_10x10', 'amazons_8x8', 'bomberman', 'bomberman2p', 'wallmaze']
>>> game = ggp.load("amazons_8x8")
>>> s = game.initial_state()
>>> s2 = game.next_state(s, [game.parse_move("(move 1 3 1 4)"), game.parse_move("noop")])
>>> game.legal_moves(s2, "black")
(Move('noop'),)
"""

from .core.errors import (
    GameOverError,
    GGPError,
    IllegalMoveError,
    MoveSyntaxError,
    StateFormatError,
    UnknownGameError,
)
from .core.game import Game, Move, State
from .core.registry import games, load

__all__ = [
    "GGPError",
    "Game",
    "GameOverError",
    "IllegalMoveError",
    "Move",
    "MoveSyntaxError",
    "State",
    "StateFormatError",
    "UnknownGameError",
    "games",
    "load",
]
__version__ = "0.1.0"
