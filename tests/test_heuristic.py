"""The material heuristic: facts counted in groups, fitted on random games, used only where it predicts, and
blended with the rollouts at the search's leaves."""

from __future__ import annotations

import numpy as np
import pytest

import ggp
from conftest import SHARED
from ggp.agents.heuristic import MIN_EXPLAINED, Material, feature_groups, find_material, fit, sample_states
from ggp.agents.mcts import MCTSAgent
from ggp.agents.uct import UCTSearch
from ggp.gdl.game import from_text

BREAKTHROUGH = SHARED / "corpus" / "kif" / "breakthroughSmall.kif"

# Goals fixed whatever is played: nothing in a state can predict them.
_FIXED = (
    "(role a) (role b) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3) "
    "(<= (legal ?r x) (role ?r)) (<= (legal ?r y) (role ?r)) "
    "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n)) (<= (next (took ?r)) (does ?r x)) "
    "(<= terminal (true (step 3))) (goal a 50) (goal b 50)"
)


def test_facts_are_counted_by_predicate_by_argument_and_by_pairs_of_arguments() -> None:
    facts = ["(cell 1 1 black)", "(cell 1 1 white)", "(cell 1 2 white)", "(cell 2 2 white)", "(control white)"]
    groups = feature_groups(facts)
    rows = {tuple(np.flatnonzero(row)) for row in groups}
    assert (1, 2, 3) in rows  # (cell ?x ?y white): the white pieces
    assert (2, 3) in rows  # (cell ?x 2 ?p): whatever stands on row 2
    assert (2,) in rows  # (cell 1 2 white) is a pair of argument values: x = 1 and p = white, with y = 2 alone
    assert (4,) in rows  # (control white)
    assert groups.shape[1] == len(facts)


def test_breakthrough_material_is_found_and_predicts_random_games_better_than_a_rollout() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    states, goals, again = sample_states(game, 1500, seed=0)  # a count of games, not a time: any machine alike
    material = fit(states, goals, again, feature_groups(list(game.base_facts)))
    assert material is not None and material.explained >= MIN_EXPLAINED
    found = find_material(game, seconds=0.5, seed=0)  # what the player calls: a time, so maybe too few games
    assert found is None or found.explained >= MIN_EXPLAINED
    # On fresh random games: the evaluation of a state predicts its game's outcome better than one more
    # random game from it does (what one rollout at a leaf would say).
    states, goals, again = sample_states(game, 2000, seed=99)
    white = game.roles.index("white")
    values = np.array([material.value(s)[white] for s in states])
    assert np.corrcoef(values, goals[:, white])[0, 1] > np.corrcoef(again[:, white], goals[:, white])[0, 1]
    assert values.min() >= 0.0 and values.max() <= 1.0


def test_no_heuristic_where_the_state_tells_nothing_of_the_goals() -> None:
    game = from_text(_FIXED)
    states, goals, again = sample_states(game, 300, seed=1)
    assert len(states) > 0 and (goals == 50).all() and (again == 50).all()
    assert fit(states, goals, again, feature_groups(list(game.base_facts))) is None
    assert find_material(game, seconds=0.5) is None
    assert find_material(ggp.load("wallmaze")) is None  # a built-in game: its players have their own


def test_a_search_blending_material_keeps_its_statistics_whole() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    material = fit(*sample_states(game, 1500, seed=1), feature_groups(list(game.base_facts)))
    assert material is not None
    state = game.initial_state()
    for batch in (None, 1):  # the kernel's bit-parallel batch of rollouts, and one leaf at a time
        tree = UCTSearch(game, capacity=20_000, seed=2, material=material, batch=batch)
        result = tree.search(state, sims=3000)
        assert all(int(v.sum()) == result.simulations for v in result.visits)
        assert all(0.0 <= float(x) <= 100.0 for v in result.values for x in v)
    wrong = Material(weights=np.zeros((2, 3)), bias=np.zeros(2), explained=1.0, samples=1)
    with pytest.raises(ValueError, match="does not fit"):
        UCTSearch(game, capacity=100, material=wrong)


def test_the_general_player_looks_for_material_at_the_start_clock_when_told_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ggp.agents import mcts

    game = ggp.load(str(BREAKTHROUGH))
    fitted = fit(*sample_states(game, 1500, seed=3), feature_groups(list(game.base_facts)))
    asked: list[float] = []

    def look(game: ggp.Game, seconds: float, seed: int) -> Material | None:
        asked.append(seconds)
        return fitted  # as found in time on an idle machine; the test does not depend on the machine's load

    monkeypatch.setattr(mcts, "find_material", look)
    on = MCTSAgent(sims=100, seed=3, material=True)
    on.start(game, "white")
    assert asked == [mcts.MATERIAL_SECONDS] and on.found_material is fitted is not None
    assert on._trees[0].params.shape[0] > 1  # the rollouts blend it in
    off = MCTSAgent(sims=100, seed=3)
    off.start(game, "white")
    assert off.found_material is None
    assert off._trees[0].params.shape[0] == 1  # plain rollouts
    assert str(off.select_move(game.initial_state())) in {
        str(m) for m in game.legal_moves(game.initial_state(), "white")
    }
