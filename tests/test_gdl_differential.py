"""Random games played side by side on a native engine and on the GDL reasoner.

At every state of every game, both must give the same legal moves for every
role, the same terminal flag, the same goals and the same facts; both then take
the same random joint move. Run for the shared rule sheets and for ggp's own.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import ggp
from conftest import GAME_NAMES, SHARED
from ggp.gdl import builtin, load_file

# Games per pair: Amazons games are long (about 90 and 140 states) with many moves.
GAMES = {"amazons_10x10": 4, "amazons_8x8": 6, "bomberman": 30, "bomberman2p": 30, "wallmaze": 30}


def side_by_side(native: Any, gdl: Any, games: int, seed: int) -> int:
    rng = random.Random(seed)
    states = 0
    for g in range(games):
        a, b = native.initial_state(), gdl.initial_state()
        while True:
            where = f"{native.name} game {g} state {states}"
            legal = [sorted(str(m) for m in native.legal_moves(a, r)) for r in native.roles]
            assert [sorted(str(m) for m in gdl.legal_moves(b, r)) for r in gdl.roles] == legal, where
            assert gdl.is_terminal(b) is native.is_terminal(a), where
            assert gdl.goals(b) == native.goals(a), where
            assert gdl.state_facts(b) == native.state_facts(a), where
            states += 1
            if native.is_terminal(a):
                break
            joint = [rng.choice(moves) for moves in legal]
            a, b = native.next_state(a, joint), gdl.next_state(b, joint)
    return states


@pytest.mark.parametrize("name", GAME_NAMES)
def test_shared_sheet_agrees_with_the_native_engine(name: str) -> None:
    gdl = load_file(SHARED / "gdl" / f"{name}.kif")
    assert side_by_side(ggp.load(name), gdl, GAMES[name], seed=7) > GAMES[name]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_ggp_sheet_agrees_with_the_native_engine(name: str) -> None:
    assert side_by_side(ggp.load(name), builtin(name), GAMES[name], seed=11) > GAMES[name]


OUTCOMES = {
    "amazons_10x10": {(0, 100), (100, 0)},
    "amazons_8x8": {(0, 100), (100, 0)},
    "bomberman": {(0, 100), (100, 0), (50, 50)},
    "bomberman2p": {(0, 100), (100, 0), (50, 50)},
    "wallmaze": {(0, 0), (100, 0), (0, 100), (75, 25), (25, 75), (50, 50)},
}


@pytest.mark.parametrize("name", GAME_NAMES)
def test_compiled_playouts_end_in_outcomes_of_the_game(name: str) -> None:
    """The compiled playout loop on ggp's sheet: every game ends, with an outcome the rules allow."""
    goals, lengths, transitions = builtin(name).random_playouts(40, seed=3)
    assert transitions == int(lengths.sum()) > 0
    assert {(int(a), int(b)) for a, b in goals} <= OUTCOMES[name]
    assert (lengths > 0).all()


@pytest.mark.parametrize("name", GAME_NAMES)
@pytest.mark.parametrize("sheet", ["shared", "ggp"])
def test_incremental_and_sweeping_evaluators_play_the_same_games(name: str, sheet: str) -> None:
    """Same seed, same games: the incremental evaluator (also when its stack runs out) agrees with the sweep."""
    game = load_file(SHARED / "gdl" / f"{name}.kif") if sheet == "shared" else builtin(name)
    count = 6 if name.startswith("amazons") else 25
    sweep = game.random_playouts(count, seed=21, incremental=False)
    for scratch in (0, 10):
        incremental = game.random_playouts(count, seed=21, incremental=True, scratch=scratch)
        assert (incremental[0] == sweep[0]).all() and (incremental[1] == sweep[1]).all()
        assert incremental[2] == sweep[2]
