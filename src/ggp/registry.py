"""The one door to every game: ``ggp.load(name_or_path)``, and the list of built-in games it knows.

A game is registered by name with the factory that builds it, in one line::

    register("wallmaze", "ggp.games.wallmaze.rules:WallMaze")
    register("amazons_8x8", "ggp.games.amazons.rules:Amazons", 8)

Game families (:class:`~ggp.core.family.Family`: games, agents, view) register
all their games at once with :func:`register_family`. The built-in families are
the packages of ``ggp.games``, found on first use; the environment variable
``GGP_FAMILIES`` adds others to every ggp process (the CLI, the web app, a
tournament's workers): module names or package folders, separated by ``,``.

The factory is a callable returning a :class:`~ggp.Game`, or the text
``"module:attribute"`` of one, imported on the first :func:`load` of the game,
so that ``import ggp`` imports no game. Each game is built once and shared.

This module sits above ``ggp.core``, ``ggp.games`` and ``ggp.gdl`` (it lists
the games and reads rule sheets) and below everything that plays them; it
imports a game only when that game is first loaded.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.errors import GGPError, UnknownGameError
from .core.family import Family, View
from .core.game import Game

# Name -> (factory or "module:attribute", arguments): see register.
_FACTORIES: dict[str, tuple[Callable[..., Game] | str, tuple[Any, ...]]] = {}
_LOADED: dict[str, Game] = {}
_LOCK = threading.RLock()  # a game is built once even when two threads load it first at the same time
_FAMILIES: dict[str, Family] = {}
_RESOLVED: dict[str, Any] = {}  # "module:attribute" -> the object, imported once
_FOUND = False  # whether the built-in families and GGP_FAMILIES have been registered

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def register(name: str, factory: Callable[..., Game] | str, *args: Any) -> None:
    """Make ``ggp.load(name)`` return the game ``factory(*args)`` (built on the first load, then shared).

    ``factory`` is a callable (a Game class, say) or the text
    ``"package.module:attribute"`` naming one, imported only when the game is
    first loaded. ``name`` is lower case: letters, digits, ``_`` and ``-``.
    Raises ``ValueError`` for a malformed name or reference, or a name
    already registered.

    >>> from ggp.games.wallmaze.rules import WallMaze
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
    _find_families()
    with _LOCK:
        if name in _FACTORIES:
            raise ValueError(f"a game called {name!r} is already registered; pick another name")
        _FACTORIES[name] = (factory, args)


def unregister(name: str) -> None:
    """Forget the game ``name`` (a game registered for a test, say); ``KeyError`` if it is not registered."""
    _find_families()
    with _LOCK:
        del _FACTORIES[name]
        _LOADED.pop(name, None)


def game_names() -> list[str]:
    """The names of the registered games, built-in ones first.

    >>> game_names()[:2]
    ['amazons_10x10', 'amazons_8x8']
    """
    _find_families()
    return list(_FACTORIES)


def load(name_or_path: str | Path) -> Game:
    """The game called ``name_or_path``: a registered name (see :func:`game_names`) or a GDL rule sheet's path.

    >>> import ggp
    >>> ggp.load("amazons_8x8").roles
    ('white', 'black')

    Raises :class:`~ggp.UnknownGameError` naming the built-in games otherwise.
    """
    _find_families()
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
                factory = resolve(factory)
            game = factory(*args)
            if not isinstance(game, Game):
                raise TypeError(f"the factory of game {name!r} made a {type(game).__name__}, not a ggp.Game")
            _LOADED[name] = game
        return game


class FamilyError(GGPError, ValueError):
    """A game family could not be loaded or registered."""


def resolve(reference: str) -> Any:
    """The object ``"package.module:attribute"`` names (imported on the first call, then remembered)."""
    found = _RESOLVED.get(reference)
    if found is None:
        module, _, attribute = reference.partition(":")
        found = getattr(importlib.import_module(module), attribute)
        _RESOLVED[reference] = found
    return found


# --- game families ------------------------------------------------------------------------------
def register_family(family: Family, package: str = "") -> Family:
    """Register ``family``: each of its games (as :func:`register` does), its agents and its view.

    ``package`` is where its relative references (``.rules:X``) are read, if the family does
    not say. Returns the family as registered. Raises ``ValueError`` for a family or game name
    already taken, or a reference that is not ``module:attribute``.
    """
    import dataclasses

    if not isinstance(family, Family):
        raise ValueError(f"a game family is a ggp.core.family.Family, not {type(family).__name__}")
    if package and not family.package:
        family = dataclasses.replace(family, package=package)
    refs = [ref for ref, _ in family.games.values()] + list(family.agents.values()) + [family.view] * bool(family.view)
    for ref in refs:
        if not _REFERENCE.fullmatch(family.resolve(ref)):
            raise ValueError(f"family {family.name!r}: {ref!r} is not a 'package.module:attribute' reference")
    with _LOCK:
        if family.name in _FAMILIES:
            raise ValueError(f"a game family called {family.name!r} is already registered")
        taken = [name for name in family.games if name in _FACTORIES]
        if taken:
            raise ValueError(f"family {family.name!r}: games {', '.join(taken)} are already registered")
        for name, (ref, args) in family.games.items():
            register(name, family.resolve(ref), *args)
        _FAMILIES[family.name] = family
    return family


def load_family(module_or_folder: str) -> Family:
    """Import a family's package (a module name, or the folder holding its ``__init__.py``) and register
    its ``FAMILY``, as ``GGP_FAMILIES`` does for each entry. Returns the family as registered.

    Raises ``ValueError`` if the package defines no ``FAMILY`` or a name it uses is taken.
    """
    _find_families()
    return _register_module(_import_family(module_or_folder))


def unregister_family(name: str) -> None:
    """Forget the family ``name`` and its games (a family registered for a test, say); ``KeyError`` if unknown."""
    _find_families()
    with _LOCK:
        family = _FAMILIES.pop(name)
        for game in family.games:
            _FACTORIES.pop(game, None)
            _LOADED.pop(game, None)


def families() -> dict[str, Family]:
    """The registered game families by name, built-in ones first."""
    _find_families()
    return dict(_FAMILIES)


def family_of(game: Game) -> Family | None:
    """The family ``game`` belongs to (its :attr:`~ggp.Game.board_kind` names it), or None."""
    _find_families()
    return _FAMILIES.get(game.board_kind)


_PLAIN_VIEW = View()


def view_of(game: Game) -> View:
    """How the pages show ``game``: its family's :class:`~ggp.core.family.View`, or the plain one."""
    family = family_of(game)
    if family is None or not family.view:
        return _PLAIN_VIEW
    return part(family, family.view)


def part(family: Family, reference: str) -> Any:
    """What one of ``family``'s references names (``family.view``, ``family.planes``), imported once."""
    return resolve(family.resolve(reference))


def family_agents() -> dict[str, tuple[str, str]]:
    """Every family's agents: spec name -> (family name, factory reference)."""
    out: dict[str, tuple[str, str]] = {}
    for family in families().values():
        for name, ref in family.agents.items():
            out.setdefault(name, (family.name, family.resolve(ref)))
    return out


def _find_families() -> None:
    """Register the built-in families (the packages of ``ggp.games``) and ``GGP_FAMILIES``'s, once."""
    global _FOUND
    if _FOUND:
        return
    with _LOCK:
        if _FOUND:
            return
        _FOUND = True
        import ggp.games

        names = sorted(m.name for m in pkgutil.iter_modules(ggp.games.__path__) if m.ispkg)
        for name in names:
            _register_module(importlib.import_module(f"ggp.games.{name}"))
        for item in os.environ.get("GGP_FAMILIES", "").split(","):
            if item.strip():
                try:
                    _register_module(_import_family(item.strip()))
                except Exception as exc:  # the variable is a person's input: say which entry, and why
                    raise FamilyError(
                        f"GGP_FAMILIES names {item.strip()!r}, which is not a game family ggp can load "
                        f"({type(exc).__name__}: {exc}); give module names or package folders, separated by ','"
                    ) from None


def _register_module(module: Any) -> Family:
    family = getattr(module, "FAMILY", None)
    if not isinstance(family, Family):
        raise ValueError(f"module {module.__name__} defines no FAMILY (a ggp.core.family.Family)")
    return register_family(family, module.__name__)


def _import_family(item: str) -> Any:
    """A family's package: a module name, or a folder (imported by its name, its parent put on sys.path)."""
    from pathlib import Path

    path = Path(item).expanduser()
    if not path.is_dir():
        return importlib.import_module(item)
    path = path.resolve()
    if not (path / "__init__.py").is_file():
        raise ValueError(f"GGP_FAMILIES: folder {item!r} is not a package (it has no __init__.py)")
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    return importlib.import_module(path.name)
