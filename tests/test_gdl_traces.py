"""Every game of ../shared/traces replayed on the GDL reasoner.

Two sets of rule sheets: the shared ones (``../shared/gdl/*.kif``, the sheets
the traces were made from) and ggp's own sheets of the built-in games
(``ggp rules GAME``). At every state of every game the legal moves of every
role, the terminal flag and the state's facts must be the trace's, and at the
end the goals too.
"""

from __future__ import annotations

from typing import Any

import pytest

import ggp
from conftest import GAME_NAMES, SHARED, read_traces
from ggp.gdl import GDLGame, builtin


def replay(game: Any, name: str) -> int:
    replayed = 0
    for trace in read_traces(name):
        assert tuple(trace["roles"]) == game.roles
        state = game.initial_state()
        for i, step in enumerate(trace["steps"]):
            where = f"{name} seed {trace['seed']} state {i}"
            for role in game.roles:
                ours = sorted(str(m) for m in game.legal_moves(state, role))
                assert ours == step["legal"][role], f"{where}: legal moves of {role}"
            assert game.is_terminal(state) is step["terminal"], f"{where}: terminal flag"
            assert game.state_facts(state) == sorted(step["facts"]), f"{where}: facts"
            state = game.next_state(state, [game.parse_move(m) for m in step["joint"]])
        final = trace["final"]
        where = f"{name} seed {trace['seed']} final state"
        assert game.is_terminal(state) is True, where
        assert game.goals(state) == tuple(final["goals"][r] for r in game.roles), where
        for role in game.roles:
            assert sorted(str(m) for m in game.legal_moves(state, role)) == final["legal"][role], where
        assert game.state_facts(state) == sorted(final["facts"]), where
        replayed += 1
    return replayed


@pytest.mark.parametrize("name", GAME_NAMES)
def test_shared_rule_sheet_replays_every_trace(name: str) -> None:
    game = ggp.load(SHARED / "gdl" / f"{name}.kif")
    assert isinstance(game, GDLGame)
    assert replay(game, name) > 0


@pytest.mark.parametrize("name", GAME_NAMES)
def test_ggp_rule_sheet_replays_every_trace(name: str) -> None:
    """ggp's own sheet states the same game: same legal moves, terminal flags, goals and facts."""
    assert replay(builtin(name), name) > 0
