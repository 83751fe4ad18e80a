"""Every game of ../shared/traces replayed on the GDL reasoner.

Two sets of rule sheets: the shared ones (``../shared/gdl/*.kif``, the sheets
the traces were made from) and ggp's own sheets of the built-in games
(``ggp rules GAME``). At every state of every game the legal moves of every
role, the terminal flag and the state's facts must be the trace's, and at the
end the goals too.
"""

from __future__ import annotations

import pytest

import ggp
from conftest import GAME_NAMES, SHARED, replay
from ggp.gdl import GDLGame, builtin


@pytest.mark.parametrize("name", GAME_NAMES)
def test_shared_rule_sheet_replays_every_trace(name: str) -> None:
    game = ggp.load(SHARED / "gdl" / f"{name}.kif")
    assert isinstance(game, GDLGame)
    assert replay(game, name) > 0


@pytest.mark.parametrize("name", GAME_NAMES)
def test_ggp_rule_sheet_replays_every_trace(name: str) -> None:
    """ggp's own sheet states the same game: same legal moves, terminal flags, goals and facts."""
    assert replay(builtin(name), name) > 0
