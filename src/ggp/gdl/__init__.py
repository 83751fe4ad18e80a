"""GDL: games defined by rule sheets in the Game Description Language.

``ggp.load("path/to/game.kif")`` reads a rule sheet and returns a
:class:`GDLGame`, which implements the same Game API as the built-in games.
The sheet is parsed (:mod:`ggp.gdl.parser`) and checked (:mod:`ggp.gdl.validity`), grounded bottom-up
(:mod:`ggp.gdl.grounder`) and built into a propositional network
(:mod:`ggp.gdl.propnet` builds it, :mod:`ggp.gdl.network` says what its arrays
mean), evaluated by compiled code shared by every game. A sheet too large to
ground is played instead by a top-down prover (:mod:`ggp.gdl.prover`), chosen
by itself (:func:`load_text`; ``game.engine`` says which reasoner plays).

Compiled code sees a game as ``game.propnet.net``, a :class:`~ggp.gdl.network.Network`
of int32 arrays, and the numba functions of :mod:`ggp.gdl.evaluate` (sweeps) and
:mod:`ggp.gdl.differential` (propagation) over it:
``pn_load``/``pn_next``/``pn_goals`` evaluate a state by sweeping the network,
``dn_reset``/``dn_step`` keep a loaded state up to date by propagating only what
changes (the faster for most games); :meth:`GDLGame.random_playouts` runs whole
random games in one call, and ``game.kernel`` (:mod:`ggp.gdl.kernel`) gives the
network the kernel protocol every search and batch loop runs on.

ggp also ships its own rule sheet for each built-in game; :func:`rules_text`
returns it and :func:`builtin` plays it through the reasoner:

>>> game = builtin("wallmaze")
>>> game.roles
('white', 'black')
>>> sorted(str(m) for m in game.legal_moves(game.initial_state(), "white"))
['(move 2 5 3 5)', 'noop']
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from ..core.errors import UnknownGameError
from .game import GDLGame, GDLState, from_text, load_file, load_text
from .parser import parse_program
from .prover_game import ProverGame
from .sheet import GDLError


def _sheets() -> dict[str, Any]:
    """ggp's own rule sheets, each in its family's folder: ``ggp/games/FAMILY/NAME.kif`` by NAME."""
    return {
        p.name[: -len(".kif")]: p
        for family in resources.files("ggp.games").iterdir()
        if family.is_dir()
        for p in family.iterdir()
        if p.name.endswith(".kif")
    }


_SHEETS = _sheets()
#: The games ggp ships a rule sheet for: every ``ggp/games/FAMILY/NAME.kif`` (a new game's sheet is found there).
BUILTIN_RULES: tuple[str, ...] = tuple(sorted(_SHEETS))


def rules_text(name: str) -> str:
    """ggp's own GDL rule sheet for the built-in game ``name``.

    >>> rules_text("wallmaze").startswith(";")
    True
    """
    key = str(name).strip().lower()
    if key not in BUILTIN_RULES:
        raise UnknownGameError(f"no rule sheet for {name!r}; the built-in games are: {', '.join(BUILTIN_RULES)}")
    return str(_SHEETS[key].read_text(encoding="utf-8"))


def builtin(name: str) -> GDLGame:
    """The built-in game ``name`` played through the GDL reasoner on ggp's own rule sheet."""
    key = str(name).strip().lower()
    return from_text(rules_text(key), key)


__all__ = [
    "BUILTIN_RULES",
    "GDLError",
    "GDLGame",
    "GDLState",
    "ProverGame",
    "builtin",
    "from_text",
    "load_file",
    "load_text",
    "parse_program",
    "rules_text",
]
