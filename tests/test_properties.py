"""Properties that hold in every state of every game, checked over random play with hypothesis.

Hypothesis draws the seeds of random games; each game is played to its end
(wall maze and Bomberman with a policy biased towards the targets and away
from fire, so that arrivals, collisions and burns all happen).
"""

from __future__ import annotations

import pickle
import random
import re
from collections import deque
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ggp
from conftest import GAME_NAMES, play, snapshot
from rules_reference import MAZE_OPEN, MAZE_TARGET, Reference

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FEW = settings(max_examples=12, deadline=None)
SOME = settings(max_examples=25, deadline=None)
TURN_BASED = {"amazons_10x10", "amazons_8x8", "bomberman"}


@cache
def maze_distance(role: str) -> dict[tuple[int, int], int]:
    """Steps from every open cell to ``role``'s target (walls only)."""
    target = MAZE_TARGET[role]
    dist = {target: 0}
    todo = deque([target])
    while todo:
        x, y = todo.popleft()
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if nxt in MAZE_OPEN and nxt not in dist:
                dist[nxt] = dist[(x, y)] + 1
                todo.append(nxt)
    return dist


def choose(game: ggp.Game, state: ggp.State, rng: random.Random) -> list[ggp.Move]:
    """A joint move: uniform for Amazons, biased towards the target in the wall maze."""
    joint = []
    for role in game.roles:
        moves = list(game.legal_moves(state, role))
        if game.name == "wallmaze" and rng.random() < 0.7:
            dist = maze_distance(role)
            here = dist[tuple(game.state_to_dict(state)[role])]
            closer = [m for m in moves if str(m) != "noop" and dist[tuple(map(int, m.term[3:]))] < here]
            moves = closer or moves
        if game.name.startswith("bomberman") and rng.random() < 0.5:
            moves = [m for m in moves if str(m) != "dropBomb"] or moves
        joint.append(rng.choice(moves))
    return joint


@cache
def random_game(name: str, seed: int) -> tuple[list[ggp.State], list[list[ggp.Move]]]:
    """The states of one random game (the last one terminal) and the joint moves between them."""
    game = ggp.load(name)
    rng = random.Random(seed)
    states, joints = [game.initial_state()], []
    while not game.is_terminal(states[-1]):
        joint = choose(game, states[-1], rng)
        joints.append(joint)
        states.append(game.next_state(states[-1], joint))
    return states, joints


def respell(text: str, rng: random.Random) -> str:
    """``text`` with random letter case and extra whitespace: ``( MoVe 1 3\\t 1 4 )``."""
    tokens = re.findall(r"\(|\)|[^\s()]+", text)
    out = rng.choice(["", " ", "\n"])
    for i, tok in enumerate(tokens):
        out += "".join(ch.upper() if rng.random() < 0.5 else ch.lower() for ch in tok)
        if i + 1 < len(tokens):
            out += rng.choice([" ", "  ", "\t", " \n "]) if tok not in "()" else rng.choice(["", " ", "   "])
    return out + rng.choice(["", " ", "\t"])


# --- the rules, against an independent statement of them ----------------------------------------


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@SOME
def test_random_play_follows_the_rules(name: str, seed: int) -> None:
    """Legal moves, next states, terminal flags and goals agree with rules_reference.py at every step."""
    game = ggp.load(name)
    ref = Reference(name)
    states, joints = random_game(name, seed)
    for i, state in enumerate(states):
        d = game.state_to_dict(state)
        for role in game.roles:
            assert {str(m) for m in game.legal_moves(state, role)} == ref.legal(d, role), f"state {i}, {role}"
        assert game.is_terminal(state) == ref.terminal(d), f"state {i}"
        assert game.goals(state) == ref.goals(d), f"state {i}"
        if i < len(joints):
            expected = ref.next(d, [str(m) for m in joints[i]])
            assert ref.normal(game.state_to_dict(states[i + 1])) == ref.normal(expected), f"after state {i}"


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@SOME
def test_non_terminal_states_give_every_role_a_move(name: str, seed: int) -> None:
    """Every role has a legal move until the end; in turn-based games the idle role's only move is noop."""
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    for state in states[:-1]:
        legal = {role: [str(m) for m in game.legal_moves(state, role)] for role in game.roles}
        assert all(legal.values())
        if name in TURN_BASED:
            idle = [role for role, moves in legal.items() if moves == ["noop"]]
            assert len(idle) == 1, legal
            assert "noop" not in legal[next(r for r in game.roles if r not in idle)]


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@SOME
def test_goals_are_between_0_and_100_and_the_final_ones_are_a_result(name: str, seed: int) -> None:
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    for state in states:
        assert all(0 <= g <= 100 for g in game.goals(state))
    final = game.goals(states[-1])
    results = {
        "amazons_10x10": {(0, 100), (100, 0)},
        "amazons_8x8": {(0, 100), (100, 0)},
        "bomberman": {(0, 100), (100, 0), (50, 50)},
        "bomberman2p": {(0, 100), (100, 0), (50, 50)},
        "wallmaze": {(0, 0), (100, 0), (0, 100), (75, 25), (25, 75), (50, 50)},
    }[name]
    assert final in results


# --- states are values ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS, data=st.data())
@FEW
def test_next_state_never_changes_its_input(name: str, seed: int, data: Any) -> None:
    """Every legal joint move from a state (or a sample, for Amazons) leaves that state as it was."""
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    state = data.draw(st.sampled_from(states[:-1]))
    before = snapshot(game, state)
    joints = game.joint_moves(state)
    if len(joints) > 40:
        joints = data.draw(st.lists(st.sampled_from(joints), min_size=1, max_size=40))
    for joint in joints:
        child = game.next_state(state, joint)
        assert snapshot(game, state) == before
        assert child != state


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@SOME
def test_json_round_trip_gives_an_equal_state(name: str, seed: int) -> None:
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    for state in states:
        text = game.state_to_json(state)
        back = game.state_from_json(text)
        assert back == state
        assert hash(back) == hash(state)
        assert game.state_to_json(back) == text
        assert game.state_from_dict(game.state_to_dict(state)) == state
        assert game.state_from_json(game.state_to_dict(state)) == state  # a parsed dict is accepted too


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS, spelling_seed=SEEDS)
@FEW
def test_parse_move_reads_back_every_legal_move(name: str, seed: int, spelling_seed: int) -> None:
    """``parse_move(str(m)) == m``, and letter case and spacing do not matter."""
    spelling = random.Random(spelling_seed)
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    for state in states[:: max(1, len(states) // 12)]:
        for role in game.roles:
            for move in game.legal_moves(state, role):
                text = str(move)
                assert game.parse_move(text) == move
                variant = respell(text, spelling)
                parsed = game.parse_move(variant)
                assert parsed == move, f"{variant!r}"
                assert str(parsed) == text


@pytest.mark.parametrize(
    ("name", "variant", "canonical"),
    [
        ("amazons_8x8", "( MOVE 1 3  1 4 )", "(move 1 3 1 4)"),
        ("amazons_10x10", "(Fire\t10 10)", "(fire 10 10)"),
        ("amazons_8x8", "NOOP", "noop"),
        ("bomberman2p", "dropbomb", "dropBomb"),
        ("bomberman", " DROPBOMB ", "dropBomb"),
        ("bomberman2p", "(MOVE North)", "(move north)"),
        ("bomberman2p", "(move   NOWHERE)", "(move nowhere)"),
        ("wallmaze", "(move 2 5\n3 5)", "(move 2 5 3 5)"),
    ],
)
def test_parse_move_restores_the_rule_sheet_spelling(name: str, variant: str, canonical: str) -> None:
    game = ggp.load(name)
    move = game.parse_move(variant)
    assert str(move) == canonical
    assert move == game.parse_move(canonical) == ggp.Move(canonical)


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@SOME
def test_state_array_is_read_only(name: str, seed: int) -> None:
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    state = states[len(states) // 2]
    before = snapshot(game, state)
    arr = state.array
    assert not arr.flags.writeable
    with pytest.raises(ValueError):
        arr[0] = 1
    with pytest.raises(ValueError):
        state.array[:] = 0
    with pytest.raises(ValueError):
        np.copyto(state.array, 0)
    assert snapshot(game, state) == before


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@FEW
def test_pickling_a_state_round_trips(name: str, seed: int) -> None:
    game = ggp.load(name)
    states, _ = random_game(name, seed)
    for state in (states[0], states[len(states) // 2], states[-1]):
        back = pickle.loads(pickle.dumps(state))
        assert back == state
        assert hash(back) == hash(state)
        assert back.game.name == name
        assert game.state_to_json(back) == game.state_to_json(state)
        assert game.is_terminal(back) == game.is_terminal(state)
        for role in game.roles:
            assert game.legal_moves(back, role) == game.legal_moves(state, role)


@pytest.mark.parametrize("name", GAME_NAMES)
@given(seed=SEEDS)
@FEW
def test_replaying_the_same_moves_gives_equal_states(name: str, seed: int) -> None:
    """The same position built twice is equal and hashes equal; successive positions differ."""
    game = ggp.load(name)
    states, joints = random_game(name, seed)
    again = [game.initial_state()]
    for joint in joints:
        again.append(game.next_state(again[-1], [str(m) for m in joint]))  # as text this time
    assert again == states
    assert [hash(s) for s in again] == [hash(s) for s in states]
    assert len(set(states)) == len(states)  # a step counter or a phase always moves on
    assert len(set(again) | set(states)) == len(states)


def test_two_move_orders_reach_the_same_amazons_position() -> None:
    """White plays its two turns in either order (black answers the same): one position."""
    game = ggp.load("amazons_8x8")
    first = [("(move 1 3 1 4)", "noop"), ("(fire 1 5)", "noop")]
    second = [("(move 8 3 8 4)", "noop"), ("(fire 8 5)", "noop")]
    black = [("noop", "(move 3 8 3 7)"), ("noop", "(fire 3 6)")]
    a = play(game, game.initial_state(), *first, *black, *second)
    b = play(game, game.initial_state(), *second, *black, *first)
    assert a is not b
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert game.state_to_json(a) == game.state_to_json(b)


def test_two_move_orders_reach_the_same_wallmaze_and_bomberman_positions() -> None:
    maze = ggp.load("wallmaze")
    start = maze.initial_state()
    a = play(maze, start, ("(move 2 5 3 5)", "noop"), ("noop", "(move 12 5 11 5)"))
    b = play(maze, start, ("(move 2 5 3 5)", "(move 12 5 11 5)"), ("noop", "noop"))
    assert a == b and hash(a) == hash(b)
    bomb = ggp.load("bomberman2p")
    start = bomb.initial_state()
    there_and_back = play(bomb, start, ("(move east)", "(move west)"), ("(move west)", "(move east)"))
    stay = play(bomb, start, ("(move nowhere)", "(move nowhere)"), ("(move nowhere)", "(move nowhere)"))
    assert there_and_back == stay and hash(there_and_back) == hash(stay)


def test_states_of_different_games_are_never_equal() -> None:
    """bomberman and bomberman2p start from the same array, yet their states are different values."""
    seed_game, original = ggp.load("bomberman"), ggp.load("bomberman2p")
    a, b = seed_game.initial_state(), original.initial_state()
    assert a.array.tobytes() == b.array.tobytes()
    assert a != b
    assert len({a, b}) == 2
