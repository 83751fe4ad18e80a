"""ggp: General Game Playing in Python.

>>> import ggp
>>> ggp.game_names()
['amazons_10x10', 'amazons_8x8', 'bomberman', 'bomberman2p', 'wallmaze']
>>> game = ggp.load("amazons_8x8")
>>> s = game.initial_state()
>>> s2 = game.next_state(s, [game.parse_move("(move 1 3 1 4)"), game.parse_move("noop")])
>>> game.legal_moves(s2, "black")
(Move('noop'),)

``ggp.register(name, factory)`` adds a game (see :mod:`ggp.registry`). The
package ``ggp.games`` holds the built-in games' modules; their names come
from ``ggp.game_names()``.
"""

# First, before any module compiles: numba's cache folder, named for the compiled code's sources.
from .core import numba_cache as _numba_cache  # noqa: F401 (importing it configures numba's cache)
from .core.errors import (
    GameOverError,
    GGPError,
    IllegalMoveError,
    MoveSyntaxError,
    StateFormatError,
    UnknownGameError,
)
from .core.game import Game, Move, State
from .registry import game_names, load, register

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
    "game_names",
    "load",
    "register",
]


def _version() -> str:
    """The installed distribution's version (pyproject.toml's), so ``ggp --version`` cannot drift from it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ggp")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


__version__ = _version()
