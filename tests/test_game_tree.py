"""The search of games without a kernel: sheets only the top-down prover plays (ggp.agents.game_tree)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ggp.gdl
from ggp.agents import make_agent
from ggp.agents.game_tree import GameTreeSearch
from ggp.gdl.prover_game import ProverGame

#: ruleDepthExponential in small: going on pays only at the end, giving up ends at once with little.
LADDER = """
(role climber)
(init (step 0))
(<= (legal climber go) (true (step ?n)))
(<= (legal climber giveUp) (true (step ?n)))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m) (does climber go))
(<= (next (step ?n)) (true (step ?n)) (does climber giveUp))
(<= (next over) (does climber giveUp))
(<= terminal (true over))
(<= terminal (true (step 10)))
(<= (goal climber 100) (true (step 10)))
(<= (goal climber ?g) (true (step ?n)) (worth ?n ?g) (not (true (step 10))))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8) (succ 8 9) (succ 9 10)
(worth 0 0) (worth 1 5) (worth 2 10) (worth 3 15) (worth 4 20) (worth 5 25) (worth 6 30) (worth 7 35) (worth 8 40)
(worth 9 45)
"""


def tictactoe() -> ProverGame:
    return ProverGame((Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), "tictactoe")


def test_the_general_player_climbs_a_ladder_random_play_falls_off() -> None:
    # A random line reaches the top in 1 of 1,024 games; the kept best line is followed to it.
    game = ProverGame(LADDER, "ladder")
    agent = make_agent("mcts:sims=400,seed=3")
    agent.start(game, "climber")
    state = game.initial_state()
    while not game.is_terminal(state):
        state = game.next_state(state, [agent.select_move(state)])
    assert game.goals(state) == (100,)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_win_in_one_is_taken_and_a_loss_in_one_blocked(seed: int) -> None:
    game = tictactoe()
    s = game.initial_state()
    for joint in (["(mark 1 1)", "noop"], ["noop", "(mark 2 2)"], ["(mark 1 2)", "noop"]):
        s = game.next_state(s, joint)
    # x has (1 1) and (1 2): o must take (1 3) or lose
    assert str(GameTreeSearch(game, "oplayer", seed=seed).move(s, playouts=600)) == "(mark 1 3)"
    s = game.next_state(s, ["noop", "(mark 3 3)"])
    # o did not: x wins at (1 3)
    assert str(GameTreeSearch(game, "xplayer", seed=seed).move(s, playouts=600)) == "(mark 1 3)"


def test_the_tree_below_the_position_reached_is_kept_and_states_are_shared() -> None:
    game = tictactoe()
    search = GameTreeSearch(game, "xplayer", seed=0)
    s = game.initial_state()
    search.move(s, playouts=500)
    after = game.next_state(s, ["(mark 2 2)", "noop"])
    kept = search.nodes[after].count
    assert kept > 0
    search.move(after, playouts=100)
    assert search.nodes[after].count == kept + 100


def test_a_game_specific_player_still_refuses_a_game_without_a_kernel() -> None:
    with pytest.raises(ValueError, match="does not play tictactoe"):
        make_agent("amazons").start(tictactoe(), "xplayer")


def test_search_asks_for_one_budget() -> None:
    search = GameTreeSearch(tictactoe(), "xplayer")
    with pytest.raises(ValueError, match="either seconds or playouts"):
        search.improve(tictactoe().initial_state())
    with pytest.raises(ValueError, match="not a role"):
        GameTreeSearch(tictactoe(), "nobody")
