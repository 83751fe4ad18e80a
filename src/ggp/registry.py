"""The one door to every game: ``ggp.load(name_or_path)``, and the list of built-in games it knows.

A game is registered by name with the factory that builds it, in one line::

    register("wallmaze", "ggp.games.wallmaze:WallMaze")
    register("amazons_8x8", "ggp.games.amazons:Amazons", 8)

The factory is a callable returning a :class:`~ggp.Game`, or the text
``"module:attribute"`` of one, imported on the first :func:`load` of the game,
so that ``import ggp`` imports no game. Each game is built once and shared.

This module sits above ``ggp.core``, ``ggp.games`` and ``ggp.gdl`` (it lists
the games and reads rule sheets) and below everything that plays them; it
imports a game only when that game is first loaded.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.errors import UnknownGameError
from .core.game import Game

# Name -> (factory or "module:attribute", arguments): see register.
_FACTORIES: dict[str, tuple[Callable[..., Game] | str, tuple[Any, ...]]] = {}
_LOADED: dict[str, Game] = {}
_LOCK = threading.RLock()  # a game is built once even when two threads load it first at the same time

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def register(name: str, factory: Callable[..., Game] | str, *args: Any) -> None:
    """Make ``ggp.load(name)`` return the game ``factory(*args)`` (built on the first load, then shared).

    ``factory`` is a callable (a Game class, say) or the text
    ``"package.module:attribute"`` naming one, imported only when the game is
    first loaded. ``name`` is lower case: letters, digits, ``_`` and ``-``.
    Raises ``ValueError`` for a malformed name or reference, or a name
    already registered.

    >>> from ggp.games.wallmaze import WallMaze
    >>> register("my_maze", WallMaze)
    >>> load("my_maze").roles
    ('white', 'black')
    >>> unregister("my_maze")
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"a game name is lower case letters, digits, '_' and '-' (like 'amazons_8x8'), not {name!r}")
    if isinstance(factory, str):
        if not _REFERENCE.fullmatch(factory):
            raise ValueError(f"a game factory is a callable or 'package.module:attribute', not {factory!r}")
    elif not callable(factory):
        raise ValueError(f"a game factory is a callable or 'package.module:attribute', not {factory!r}")
    with _LOCK:
        if name in _FACTORIES:
            raise ValueError(f"a game called {name!r} is already registered; pick another name")
        _FACTORIES[name] = (factory, args)


def unregister(name: str) -> None:
    """Forget the game ``name`` (a game registered for a test, say); ``KeyError`` if it is not registered."""
    with _LOCK:
        del _FACTORIES[name]
        _LOADED.pop(name, None)


def game_names() -> list[str]:
    """The names of the registered games, built-in ones first.

    >>> game_names()[:2]
    ['amazons_10x10', 'amazons_8x8']
    """
    return list(_FACTORIES)


def load(name_or_path: str | Path) -> Game:
    """The game called ``name_or_path``: a registered name (see :func:`game_names`) or a GDL rule sheet's path.

    >>> import ggp
    >>> ggp.load("amazons_8x8").roles
    ('white', 'black')

    Raises :class:`~ggp.UnknownGameError` naming the built-in games otherwise.
    """
    key = str(name_or_path).strip()
    if key.lower() in _FACTORIES:
        return _build(key.lower())
    names = ", ".join(_FACTORIES)
    if Path(key).is_file():
        from .gdl import load_file  # a GDL rule sheet: parsed, grounded and compiled (cached per text)

        return load_file(key)
    if key.lower().endswith(".kif"):
        raise UnknownGameError(f"cannot load {key!r}: no such rule sheet (.kif) file; built-in games: {names}")
    raise UnknownGameError(f"unknown game {key!r}; the built-in games are: {names}")


def _build(name: str) -> Game:
    game = _LOADED.get(name)
    if game is not None:
        return game
    with _LOCK:
        game = _LOADED.get(name)
        if game is None:
            factory, args = _FACTORIES[name]
            if isinstance(factory, str):
                module, _, attribute = factory.partition(":")
                factory = getattr(importlib.import_module(module), attribute)
            game = factory(*args)
            if not isinstance(game, Game):
                raise TypeError(f"the factory of game {name!r} made a {type(game).__name__}, not a ggp.Game")
            _LOADED[name] = game
        return game


# The built-in games, in the order ggp.game_names() lists them. A new game: a module in ggp/games,
# its rule sheet in ggp/games/rules, and one line here.
register("amazons_10x10", "ggp.games.amazons:Amazons", 10)
register("amazons_8x8", "ggp.games.amazons:Amazons", 8)
register("bomberman", "ggp.games.bomberman:Bomberman", True)
register("bomberman2p", "ggp.games.bomberman:Bomberman", False)
register("wallmaze", "ggp.games.wallmaze:WallMaze")
