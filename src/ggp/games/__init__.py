"""The built-in games, one module per family: amazons, bomberman, wallmaze; their rule sheets in ``rules/``.

``ggp.load(name)`` builds them (:mod:`ggp.registry` lists them by name, and
``ggp.game_names()`` returns the names). A game module knows nothing of
agents, matches or the web: it imports ``ggp.core`` only.
"""

from __future__ import annotations

import sys
import types
import warnings


class _DeprecatedCallableModule(types.ModuleType):
    """Deprecated: ``ggp.games()`` (the names) is ``ggp.game_names()``; this goes once ggp/bench.py calls that."""

    def __call__(self) -> list[str]:
        warnings.warn("ggp.games() is deprecated: call ggp.game_names()", DeprecationWarning, stacklevel=2)
        names: list[str] = sys.modules["ggp"].game_names()  # looked up, not imported: games sit below the registry
        return names


sys.modules[__name__].__class__ = _DeprecatedCallableModule
