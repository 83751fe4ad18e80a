"""The one door to every game: ``ggp.load(name_or_path)``."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from .errors import UnknownGameError
from .game import Game


def _amazons(n: int) -> Callable[[], Game]:
    def make() -> Game:
        from ..games.amazons import Amazons

        return Amazons(n)

    return make


def _bomberman(alternating: bool) -> Callable[[], Game]:
    def make() -> Game:
        from ..games.bomberman import Bomberman

        return Bomberman(alternating)

    return make


def _wallmaze() -> Game:
    from ..games.wallmaze import WallMaze

    return WallMaze()


# Name -> constructor. Imports happen on first load, so `import ggp` stays light.
_BUILTIN: dict[str, Callable[[], Game]] = {
    "amazons_10x10": _amazons(10),
    "amazons_8x8": _amazons(8),
    "bomberman": _bomberman(True),
    "bomberman2p": _bomberman(False),
    "wallmaze": _wallmaze,
}


def games() -> list[str]:
    """The names of the built-in games."""
    return list(_BUILTIN)


@cache
def _builtin(name: str) -> Game:
    return _BUILTIN[name]()


def load(name_or_path: str | Path) -> Game:
    """The game called ``name_or_path``: a built-in name (see :func:`games`) or a GDL rule sheet's path.

    >>> import ggp
    >>> ggp.load("amazons_8x8").roles
    ('white', 'black')

    Raises :class:`~ggp.UnknownGameError` naming the built-in games otherwise.
    """
    key = str(name_or_path).strip()
    if key.lower() in _BUILTIN:
        return _builtin(key.lower())
    names = ", ".join(_BUILTIN)
    if Path(key).is_file():
        from ..gdl import load_file  # a GDL rule sheet: parsed, grounded and compiled (cached per text)

        return load_file(key)
    if key.lower().endswith(".kif"):
        raise UnknownGameError(f"cannot load {key!r}: no such rule sheet (.kif) file; built-in games: {names}")
    raise UnknownGameError(f"unknown game {key!r}; the built-in games are: {names}")
