"""The built-in games, one module per family: amazons, bomberman, wallmaze.

``ggp.games()`` lists the built-in games' names. Importing this package (as
``ggp.load`` does) rebinds the attribute ``ggp.games`` from that function to
this module, so the module is callable too and ``ggp.games()`` keeps working.
"""

from __future__ import annotations

import sys
import types

from ..core.registry import games as _games


class _CallableModule(types.ModuleType):
    def __call__(self) -> list[str]:
        """The names of the built-in games."""
        return _games()


sys.modules[__name__].__class__ = _CallableModule
