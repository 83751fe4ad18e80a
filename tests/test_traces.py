"""Every game of ../shared/traces, replayed move for move.

The traces come from an independent GDL reasoner; at each state the legal
moves of every role, the terminal flag and, at the end, the goals must agree.
"""

from __future__ import annotations

import pytest

import ggp
from conftest import GAME_NAMES, replay


@pytest.mark.parametrize("name", GAME_NAMES)
def test_trace_replay(name: str) -> None:
    assert replay(ggp.load(name), name) > 0
