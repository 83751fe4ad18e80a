"""Every game of ../shared/traces, replayed move for move.

The traces come from an independent GDL reasoner; at each state the legal
moves of every role, the terminal flag and, at the end, the goals must agree.
"""

from __future__ import annotations

import pytest

import ggp
from conftest import GAME_NAMES, read_traces


@pytest.mark.parametrize("name", GAME_NAMES)
def test_trace_replay(name: str) -> None:
    game = ggp.load(name)
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
    assert replayed > 0
