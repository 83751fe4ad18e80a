"""The compiled decoupled-UCT search: root statistics, budgets, and obvious best moves."""

from __future__ import annotations

import numpy as np
import pytest

import ggp
from ggp.agents.uct import UCTSearch, search, visit_counts

GAMES = ["amazons_10x10", "amazons_8x8", "bomberman", "bomberman2p", "wallmaze"]


@pytest.mark.parametrize("name", GAMES)
def test_every_simulation_visits_one_root_move_per_role(name: str) -> None:
    game = ggp.load(name)
    state = game.initial_state()
    before = game.state_to_json(state)
    result = search(game, state, sims=3000, seed=3)
    assert result.simulations == 3000
    assert 1 < result.nodes <= 3001
    for r, role in enumerate(game.roles):
        assert sorted(result.moves[r]) == sorted(game.legal_moves(state, role))
        assert int(result.visits[r].sum()) == 3000
        assert np.all((result.values[r] >= 0) & (result.values[r] <= 100))
    assert game.state_to_json(state) == before


def test_same_seed_same_search() -> None:
    game = ggp.load("amazons_8x8")
    a = search(game, game.initial_state(), sims=2000, seed=11)
    b = search(game, game.initial_state(), sims=2000, seed=11)
    assert all(np.array_equal(x, y) for x, y in zip(a.visits, b.visits, strict=True))
    c = search(game, game.initial_state(), sims=2000, seed=12)
    assert not all(np.array_equal(x, y) for x, y in zip(a.visits, c.visits, strict=True))


def test_a_full_tree_keeps_simulating_without_new_nodes() -> None:
    game = ggp.load("bomberman2p")
    result = search(game, game.initial_state(), sims=1000, seed=1, capacity=10)
    assert result.nodes == 10
    assert result.simulations == 1000
    assert [int(v.sum()) for v in result.visits] == [1000, 1000]


def test_time_budget_is_respected() -> None:
    game = ggp.load("amazons_10x10")
    result = UCTSearch(game, capacity=200_000, seed=2).search(game.initial_state(), seconds=0.3)
    assert result.simulations > 0
    assert result.seconds < 0.3 + 0.5  # chunks are a hundredth of the budget; the rest is slack for a busy machine


def test_white_steps_onto_its_target_when_it_can() -> None:
    # White stands next to (12,5); black is far from (2,5). Arriving now wins outright.
    game = ggp.load("wallmaze")
    state = game.state_from_dict({"step": 12, "white": [11, 5], "black": [7, 8]})
    result = search(game, state, sims=4000, seed=5)
    assert str(result.best("white")) == "(move 11 5 12 5)"
    r = result.roles.index("white")
    best = result.moves[r].index(result.best("white"))
    assert result.values[r][best] > 90


def test_an_amazon_move_that_boxes_in_the_opponent_is_found() -> None:
    # Three black amazons are walled in by arrows; the one on (8,8) can only step
    # to (7,7). White's (4,4) -> (7,7) takes that square, and after white's arrow
    # black must move and cannot: white wins at once.
    game = ggp.load("amazons_8x8")
    rows = [
        "......xB",  # y = 8
        "xxx....x",
        "xBx.....",
        "xxx.....",
        "...W....",
        "........",
        "xxxx....",
        "BxBxWW.W",  # y = 1
    ]
    state = game.state_from_dict({"board": "/".join(rows), "to_act": "white", "phase": "move", "just_moved": None})
    result = search(game, state, sims=20000, seed=7)
    white = result.roles.index("white")
    # MCTS-Solver proves the win and stops; another amazon can also take (7,7) away, by an arrow.
    assert result.solved == (100.0, 0.0)[:: 1 if white == 0 else -1]
    best = result.best("white")
    assert result.proven[white][result.moves[white].index(best)] == 100
    assert result.simulations < 20000
    after = game.next_state(state, [best, "noop"] if white == 0 else ["noop", best])
    ends = [
        game.next_state(after, [a, "noop"] if white == 0 else ["noop", a]) for a in game.legal_moves(after, "white")
    ]
    wins = [end for end in ends if game.is_terminal(end) and game.goals(end)[white] == 100]
    assert wins, f"{best} is not a win in one"
    assert visit_counts(result, "white")[0][1] > 0


def test_a_terminal_root_runs_no_simulation() -> None:
    game = ggp.load("wallmaze")
    state = game.state_from_dict({"step": 30, "white": [4, 8], "black": [10, 2]})
    assert game.is_terminal(state)
    result = search(game, state, sims=100)
    assert result.nodes == 1
    assert all(int(v.sum()) == 0 for v in result.visits)


def test_search_needs_a_compiled_game() -> None:
    class NotNative:
        name = "toy"

    with pytest.raises(TypeError, match="game with a kernel"):
        UCTSearch(NotNative())  # type: ignore[arg-type]


def test_exactly_one_budget() -> None:
    game = ggp.load("wallmaze")
    with pytest.raises(ValueError, match="exactly one"):
        UCTSearch(game).search(game.initial_state())
