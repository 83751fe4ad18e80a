"""The players: each returns a legal move in positions from real games, and the
game-specific ones know their game (a mirrored Amazons position scores the
mirrored value; the Bomberman player never lets itself be burned)."""

from __future__ import annotations

import itertools

import pytest

import ggp
from conftest import read_traces
from ggp.agents import make_agent
from ggp.games.amazons.player import evaluate

SPECS = {
    "amazons_10x10": ["random", "mcts:sims=60", "amazons:sims=60"],
    "amazons_8x8": ["random", "mcts:sims=60", "amazons:sims=60"],
    "bomberman": ["random", "mcts:sims=60", "bomberman"],
    "bomberman2p": ["random", "mcts:sims=60", "bomberman"],
    "wallmaze": ["random", "mcts:sims=60", "wallmaze:sims=60"],
}


def sampled_states(game: ggp.Game, name: str, every: int) -> list[ggp.State]:
    """Every ``every``-th state of every trace of ``name``, replayed through the API."""
    states = []
    for trace in read_traces(name):
        state = game.initial_state()
        for i, step in enumerate(trace["steps"]):
            if i % every == 0:
                states.append(state)
            state = game.next_state(state, step["joint"])
    return states


@pytest.mark.parametrize("name", list(SPECS))
def test_every_player_moves_legally_in_trace_positions(name: str) -> None:
    game = ggp.load(name)
    states = sampled_states(game, name, every=7 if name.startswith("amazons") else 5)
    assert len(states) > 20
    for spec, role in itertools.product(SPECS[name], game.roles):
        agent = make_agent(spec, seed=1)
        agent.start(game, role)
        for state in states:
            move = agent.select_move(state, time_limit=5.0)
            assert move in game.legal_moves(state, role), f"{spec} as {role}: {move} is not legal"


def test_a_mirrored_amazons_position_scores_the_other_way() -> None:
    game = ggp.load("amazons_8x8")
    state = game.initial_state()
    for move in ["(move 3 1 3 5)", "(fire 5 3)", "(move 6 8 6 2)", "(fire 6 4)"]:
        mover = game.roles[0] if game.legal_moves(state, "black")[0].text == "noop" else game.roles[1]
        state = game.next_state(state, [move, "noop"] if mover == "white" else ["noop", move])
    doc = game.state_to_dict(state)
    swap = str.maketrans("WB", "BW")
    mirrored = game.state_from_dict(
        {
            "board": "/".join(row.translate(swap) for row in reversed(doc["board"].split("/"))),
            "to_act": "black" if doc["to_act"] == "white" else "white",
            "phase": doc["phase"],
            "just_moved": None,
        }
    )
    assert evaluate(state.array) == pytest.approx(1 - evaluate(mirrored.array))
    assert 0 < evaluate(state.array) < 1


def test_amazons_evaluation_favours_the_side_with_more_territory() -> None:
    game = ggp.load("amazons_8x8")
    rows = [
        "B.x.....",
        "xxx.....",
        "........",
        "...W....",
        "........",
        "..W..W..",
        "xxx....W",
        "BxB.xxxB",
    ]
    boxed_black = game.state_from_dict(
        {"board": "/".join(rows), "to_act": "black", "phase": "move", "just_moved": None}
    )
    assert not game.is_terminal(boxed_black)  # (8,1) black can still move
    assert evaluate(boxed_black.array) > 0.9


@pytest.mark.parametrize("name", ["bomberman", "bomberman2p"])
def test_the_bomberman_player_is_never_burned_by_random_play(name: str) -> None:
    game = ggp.load(name)
    for seed, seat in itertools.product(range(6), range(2)):
        agents = [make_agent("random", seed=seed), make_agent("random", seed=seed)]
        agents[seat] = make_agent("bomberman", seed=seed)
        for agent, role in zip(agents, game.roles, strict=True):
            agent.start(game, role)
        state = game.initial_state()
        while not game.is_terminal(state):
            state = game.next_state(state, [a.select_move(state) for a in agents])
        goals = game.goals(state)
        assert goals[seat] >= 50, f"seed {seed}: the bomberman player lost in seat {seat}"


def test_a_sprung_trap_burns_even_a_careful_opponent() -> None:
    # Find positions of random bomberman2p games where the player sees a trap,
    # then let the player spring it against its own careful escaping: the
    # opponent must burn within five states, and the player must not.
    game = ggp.load("bomberman2p")
    hunter = make_agent("bomberman", seed=0)
    hunter.start(game, "bomberman")
    found = 0
    for seed in range(300):
        walkers = [make_agent("random", seed=seed), make_agent("random", seed=seed + 1000)]
        for agent, role in zip(walkers, game.roles, strict=True):
            agent.start(game, role)
        state = game.initial_state()
        while not game.is_terminal(state) and found < 4:
            if hunter._springs_trap(game._array_of(state), 0):  # type: ignore[attr-defined]
                found += 1
                prey = make_agent("bomberman", seed=seed)
                prey.start(game, "bomberwoman")
                end = state
                for _ in range(6):
                    if game.is_terminal(end):
                        break
                    end = game.next_state(end, [hunter.select_move(end), prey.select_move(end)])
                assert game.is_terminal(end) and game.goals(end) == (100, 0), game.state_to_json(state)
                break
            state = game.next_state(state, [a.select_move(state) for a in walkers])
        if found >= 4:
            break
    assert found >= 1


def test_separated_regions_are_counted_out() -> None:
    # Arrows wall the board into a white half (x <= 3) and a black half (x >= 5):
    # white's side has more empty squares, so white makes the last move,
    # whoever is to move; with equal halves the side not to move wins.
    game = ggp.load("amazons_8x8")

    def board(white_cols: int, to_act: str) -> ggp.State:
        rows = []
        for y in range(8, 0, -1):
            row = ""
            for x in range(1, 9):
                if x == white_cols + 1:
                    row += "x"
                elif (x, y) in {(1, 1), (1, 3), (1, 5), (1, 7)}:
                    row += "W"
                elif (x, y) in {(8, 2), (8, 4), (8, 6), (8, 8)}:
                    row += "B"
                else:
                    row += "."
            rows.append(row)
        return game.state_from_dict({"board": "/".join(rows), "to_act": to_act, "phase": "move", "just_moved": None})

    assert evaluate(board(4, "white").array) > 0.9  # 28 empty squares against 20
    assert evaluate(board(4, "black").array) > 0.9
    assert evaluate(board(3, "white").array) < 0.1  # 20 against 28
    assert evaluate(board(3, "black").array) < 0.1
