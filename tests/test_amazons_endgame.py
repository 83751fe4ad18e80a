"""The Amazons endgame solver: once each region holds one side's amazons only,
the side with more turns left wins, and the solver counts those turns exactly.

The counts are checked against a plain-Python search written from the rules
(``rules_reference``), and the verdicts against a full game-tree search
through the Game API.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import ggp
from ggp.agents import make_agent
from ggp.core.kernels import rng_state
from ggp.games.amazons.endgame import new_table, solve
from ggp.games.amazons.rules import random_turns
from rules_reference import amazons_board, queen_reach

GAME = ggp.load("amazons_8x8")


def position(board: str, to_act: str = "white") -> ggp.State:
    return GAME.state_from_dict({"board": board, "to_act": to_act, "phase": "move"})


def separated_positions(game: ggp.Game, seed: int, count: int, max_empty: int) -> list[np.ndarray]:
    """Arrays of random games, taken once the regions have split and at most ``max_empty`` squares are empty."""
    rng = rng_state(seed)
    found = []
    while len(found) < count:
        s = game.initial_state().array.copy()  # type: ignore[attr-defined]
        while random_turns(s, rng, 1):
            if int((s[:-3] == 0).sum()) <= max_empty and solve(s).separated:
                found.append(s.copy())
                break
    return found


def reference_turns(board: dict[tuple[int, int], str], side: str) -> int:
    """Most turns ``side`` ('W' or 'B') can make while the other side never moves: every sequence, tried."""

    @functools.cache
    def most(key: tuple[tuple[tuple[int, int], str], ...]) -> int:
        b = dict(key)
        top = 0
        for q in [c for c, v in b.items() if v == side]:
            for dst in queen_reach(b, q):
                moved = {**b, q: ".", dst: side}
                for arrow in queen_reach(moved, dst):
                    top = max(top, 1 + most(tuple(sorted({**moved, arrow: "x"}.items()))))
        return top

    return most(tuple(sorted(board.items())))


def test_a_region_that_cannot_be_filled_gives_fewer_turns_than_squares() -> None:
    # White's amazon on c2 has b1 and d1, but from either the other is out of reach.
    state = position("WxWxx..B/xxxxxxxB/Wxxxxxxx/xxxxxxxB/xxxxxxxx/xxxxxxxB/xxWxxxxx/x.x.xxxx")
    result = solve(state)
    assert result.separated and result.exact
    assert result.turns == (1, 2)
    assert result.winner(to_act=0) == 1


def test_a_corridor_is_filled_square_by_square() -> None:
    # White walks along row 1 shooting behind itself: five squares, five turns.
    state = position("WxWxxxxB/xxxxxxx./Wxxxxxxx/xxxxxxxB/xxxxxxxB/xxxxxxxx/xxxxxxxx/W.....xB")
    result = solve(state)
    assert result.turns == (5, 1)
    assert result.winner(to_act=0) == 0
    assert result.winner(to_act=1) == 0  # black to move has one turn to white's five


def test_a_board_with_both_sides_in_one_region_is_not_an_endgame() -> None:
    result = solve(GAME.initial_state())
    assert not result.separated and result.move is None and result.winner(0) is None


def test_the_fire_phase_is_refused() -> None:
    state = GAME.next_state(GAME.initial_state(), ["(move 1 3 1 4)", "noop"])
    with pytest.raises(ValueError, match="move phase"):
        solve(state)


@pytest.mark.parametrize("seed", [1, 2])
def test_turn_counts_match_a_search_of_every_sequence(seed: int) -> None:
    for s in separated_positions(GAME, seed, count=6, max_empty=10):
        board = amazons_board(GAME.state_to_dict(GAME.state_from_array(s)))  # type: ignore[attr-defined]
        result = solve(s, table=new_table(12))
        assert result.exact
        assert result.turns == (reference_turns(board, "W"), reference_turns(board, "B"))


def test_the_verdict_matches_a_search_of_the_whole_game_tree() -> None:
    @functools.cache
    def to_act_wins(state: ggp.State) -> bool:
        if GAME.is_terminal(state):
            return False
        role = "white" if GAME.legal_moves(state, "black")[0].text == "noop" else "black"
        seat = [0, 1] if role == "white" else [1, 0]
        for move in GAME.legal_moves(state, role):
            landed = GAME.next_state(state, [[move, "noop"][i] for i in seat])
            for fire in GAME.legal_moves(landed, role):
                if not to_act_wins(GAME.next_state(landed, [[fire, "noop"][i] for i in seat])):
                    return True
        return False

    for s in separated_positions(GAME, 3, count=8, max_empty=8):
        state = GAME.state_from_array(s)  # type: ignore[attr-defined]
        to_act = int(s[-3])
        winner = solve(s).winner(to_act)
        assert winner is not None
        assert (winner == to_act) == to_act_wins(state)


@pytest.mark.parametrize("name", ["amazons_8x8", "amazons_10x10"])
def test_the_solver_s_turn_keeps_every_turn_the_mover_had(name: str) -> None:
    game = ggp.load(name)
    for s in separated_positions(game, 4, count=10, max_empty=40):
        result = solve(s)
        to_act = int(s[-3])
        if result.move is None:
            assert result.turns[to_act] == 0
            continue
        src, dst, arrow = result.move
        after = s.copy()
        after[dst], after[src], after[arrow] = after[src], 0, 3
        after[-3] = 1 - to_act
        assert solve(after).turns[to_act] == result.turns[to_act] - 1


def test_the_amazons_player_plays_the_solved_turn() -> None:
    state = position("WxWxxxxB/xxxxxxx./Wxxxxxxx/xxxxxxxB/xxxxxxxB/xxxxxxxx/xxxxxxxx/W.....xB")
    agent = make_agent("amazons:time=0.2", seed=1)
    agent.start(GAME, "white")
    for _ in range(5):  # black passes its turns in the corner with the one square it has, or not at all
        move = agent.select_move(state, time_limit=1.0)
        assert agent.last_endgame is not None and agent.last_endgame.separated  # type: ignore[attr-defined]
        landed = GAME.next_state(state, [move, "noop"])
        fire = agent.select_move(landed, time_limit=1.0)
        state = GAME.next_state(landed, [fire, "noop"])
        doc = GAME.state_to_dict(state)
        state = position(doc["board"], "white")  # white moves again: the count must drop by one each turn
    assert solve(state).turns[0] == 0
