"""Deprecated: the registry moved to :mod:`ggp.registry` (``ggp.load``, ``ggp.game_names``, ``ggp.register``).

This shim re-exports it while ``ggp.core.native`` (unpickling a state loads its
game by name) still imports it from here; it goes with that import. It points
up the layers (core must not know the games), so nothing else may use it.
"""

from __future__ import annotations

from ..registry import game_names, load

games = game_names  # the old name of game_names

__all__ = ["game_names", "games", "load"]
