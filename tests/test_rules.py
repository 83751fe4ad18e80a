"""The rules of RULES.md, one example at a time.

Positions are reached by playing real moves where that is practical, and
otherwise written with ``game.state_from_dict`` in each game's documented
dict form. Coordinates are (x, y), 1-based, x east, y north.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

import ggp
from conftest import legal_texts, play

NOWHERE = "(move nowhere)"


# ==============================================================================================
# Bomberman (bomberman2p: the GGP original, simultaneous; bomberman: the seed text, alternating)
# ==============================================================================================


def bomb_state(
    game: ggp.Game,
    *,
    step: int = 10,
    man: tuple[int, int] = (1, 1),
    woman: tuple[int, int] = (8, 8),
    bombs: list[tuple[int, int, int]] | None = None,
    fire: list[tuple[int, int]] | None = None,
) -> ggp.State:
    return game.state_from_dict(
        {
            "game": game.name,
            "step": step,
            "bomberman": list(man),
            "bomberwoman": list(woman),
            "bombs": [list(b) for b in bombs or []],
            "fire": [list(c) for c in fire or []],
        }
    )


def fire_cells(game: ggp.Game, state: ggp.State) -> set[tuple[int, int]]:
    return {(x, y) for x, y in game.state_to_dict(state)["fire"]}


def bombs_of(game: ggp.Game, state: ggp.State) -> set[tuple[int, int, int]]:
    return {(x, y, t) for x, y, t in game.state_to_dict(state)["bombs"]}


def at(game: ggp.Game, state: ggp.State, role: str) -> tuple[int, int]:
    x, y = game.state_to_dict(state)[role]
    return (x, y)


def explode(game: ggp.Game, bomb: tuple[int, int], **where: Any) -> ggp.State:
    """The state after a bomb with timer 0 at ``bomb``, both players staying where they are."""
    step = where.pop("step", 10)
    state = bomb_state(game, step=step, bombs=[(*bomb, 0)], **where)
    if game.name == "bomberman":  # the seed: bomberman acts in odd states, bomberwoman in even ones
        return game.next_state(state, [NOWHERE, "noop"] if step % 2 else ["noop", NOWHERE])
    return game.next_state(state, [NOWHERE, NOWHERE])


def row(y: int) -> set[tuple[int, int]]:
    return {(x, y) for x in range(1, 9)}


def column(x: int) -> set[tuple[int, int]]:
    return {(x, y) for y in range(1, 9)}


@pytest.fixture(scope="module")
def b2p() -> ggp.Game:
    return ggp.load("bomberman2p")


@pytest.fixture(scope="module")
def seed_bomberman() -> ggp.Game:
    return ggp.load("bomberman")


# --- movement -----------------------------------------------------------------------------------


def test_bomberman2p_starts_in_opposite_corners_and_both_move(b2p: ggp.Game) -> None:
    start = b2p.initial_state()
    assert b2p.roles == ("bomberman", "bomberwoman")
    assert at(b2p, start, "bomberman") == (1, 1) and at(b2p, start, "bomberwoman") == (8, 8)
    assert b2p.state_to_dict(start)["step"] == 1
    assert legal_texts(b2p, start, "bomberman") == {"(move north)", "(move east)", NOWHERE, "dropBomb"}
    assert legal_texts(b2p, start, "bomberwoman") == {"(move south)", "(move west)", NOWHERE, "dropBomb"}


def test_a_blocked_north_edge_stops_a_player(b2p: ggp.Game) -> None:
    """(blockedNorth 2 1) cuts (2,1) from (2,2): from (2,1) only east and west lead anywhere."""
    state = bomb_state(b2p, man=(2, 1))
    assert legal_texts(b2p, state, "bomberman") == {"(move east)", "(move west)", NOWHERE, "dropBomb"}
    with pytest.raises(ggp.IllegalMoveError):
        b2p.next_state(state, ["(move north)", NOWHERE])


def test_blocked_east_edges_stop_a_player_both_ways(b2p: ggp.Game) -> None:
    """(3,2) sits between (blockedEast 2 2) and (blockedEast 3 2): it can only go north or south."""
    state = bomb_state(b2p, man=(3, 2), woman=(1, 2))
    assert legal_texts(b2p, state, "bomberman") == {"(move north)", "(move south)", NOWHERE, "dropBomb"}
    # (blockedEast 1 2): from (1,2) not east; west is off the board.
    assert legal_texts(b2p, state, "bomberwoman") == {"(move north)", "(move south)", NOWHERE, "dropBomb"}
    for joint in (["(move east)", NOWHERE], ["(move west)", NOWHERE], [NOWHERE, "(move east)"]):
        with pytest.raises(ggp.IllegalMoveError):
            b2p.next_state(state, joint)


@pytest.mark.parametrize(
    ("corner", "moves"),
    [
        ((1, 1), {"(move north)", "(move east)"}),
        ((8, 1), {"(move north)", "(move west)"}),
        ((1, 8), {"(move south)", "(move east)"}),
        ((8, 8), {"(move south)", "(move west)"}),
    ],
)
def test_moves_off_the_board_are_not_legal(b2p: ggp.Game, corner: tuple[int, int], moves: set[str]) -> None:
    state = bomb_state(b2p, man=corner)
    assert legal_texts(b2p, state, "bomberman") == moves | {NOWHERE, "dropBomb"}


def test_moving_in_each_direction(b2p: ggp.Game) -> None:
    state = bomb_state(b2p, man=(3, 3), woman=(6, 6))
    for move, there in [("north", (3, 4)), ("south", (3, 2)), ("east", (4, 3)), ("west", (2, 3))]:
        after = b2p.next_state(state, [f"(move {move})", NOWHERE])
        assert at(b2p, after, "bomberman") == there
        assert at(b2p, after, "bomberwoman") == (6, 6)
    dropped = b2p.next_state(state, ["dropBomb", "dropBomb"])
    assert at(b2p, dropped, "bomberman") == (3, 3)
    assert at(b2p, dropped, "bomberwoman") == (6, 6)


def test_the_walkable_cells_are_rows_and_columns_1_3_6_8() -> None:
    """From (1,1) a player reaches exactly the 48 cells outside the walled-in pillars."""
    game = ggp.load("bomberman2p")
    seen = {(1, 1)}
    todo = deque([(1, 1)])
    while todo:
        here = todo.popleft()
        state = bomb_state(game, man=here)
        for move in legal_texts(game, state, "bomberman") - {NOWHERE, "dropBomb"}:
            there = at(game, game.next_state(state, [move, NOWHERE]), "bomberman")
            if there not in seen:
                seen.add(there)
                todo.append(there)
    lines = {1, 3, 6, 8}
    assert seen == {(x, y) for x in range(1, 9) for y in range(1, 9) if x in lines or y in lines}
    assert len(seen) == 48


def test_players_may_share_a_cell(b2p: ggp.Game) -> None:
    state = bomb_state(b2p, man=(3, 1), woman=(5, 1))
    after = b2p.next_state(state, ["(move east)", "(move west)"])
    assert at(b2p, after, "bomberman") == at(b2p, after, "bomberwoman") == (4, 1)
    assert not b2p.is_terminal(after)
    assert legal_texts(b2p, after, "bomberman") == legal_texts(b2p, after, "bomberwoman")
    # ...and walk into each other's cell while the other stays.
    after = b2p.next_state(after, [NOWHERE, "(move east)"])
    assert at(b2p, after, "bomberwoman") == (5, 1)
    after = b2p.next_state(after, ["(move east)", NOWHERE])
    assert at(b2p, after, "bomberman") == at(b2p, after, "bomberwoman") == (5, 1)


def test_bombs_never_block_movement(b2p: ggp.Game) -> None:
    state = bomb_state(b2p, man=(1, 1), bombs=[(2, 1, 2), (1, 2, 3)])
    assert {"(move east)", "(move north)"} <= legal_texts(b2p, state, "bomberman")
    assert at(b2p, b2p.next_state(state, ["(move east)", NOWHERE]), "bomberman") == (2, 1)
    assert at(b2p, b2p.next_state(state, ["(move north)", NOWHERE]), "bomberman") == (1, 2)


# --- bombs and fire in bomberman2p ----------------------------------------------------------------


def test_bomb_countdown_and_fire_last_one_state(b2p: ggp.Game) -> None:
    """Dropped in state t: bomb3 in t+1, bomb2, bomb1, bomb0, fire in t+5, gone in t+6."""
    s1 = b2p.initial_state()
    s2 = b2p.next_state(s1, ["dropBomb", NOWHERE])
    s3 = b2p.next_state(s2, ["(move east)", NOWHERE])  # bomberman runs: (2,1)
    s4 = b2p.next_state(s3, ["(move east)", NOWHERE])  # (3,1)
    s5 = b2p.next_state(s4, ["(move north)", NOWHERE])  # (3,2): out of row 1 and column 1
    s6 = b2p.next_state(s5, [NOWHERE, NOWHERE])
    s7 = b2p.next_state(s6, [NOWHERE, NOWHERE])
    assert [b2p.state_to_dict(s)["step"] for s in (s1, s2, s3, s4, s5, s6, s7)] == [1, 2, 3, 4, 5, 6, 7]
    assert bombs_of(b2p, s1) == set()
    assert bombs_of(b2p, s2) == {(1, 1, 3)}
    assert bombs_of(b2p, s3) == {(1, 1, 2)}
    assert bombs_of(b2p, s4) == {(1, 1, 1)}
    assert bombs_of(b2p, s5) == {(1, 1, 0)}
    assert bombs_of(b2p, s6) == set()
    for s in (s1, s2, s3, s4, s5):
        assert fire_cells(b2p, s) == set()
    assert fire_cells(b2p, s6) == row(1) | column(1)  # 15 cells
    assert len(fire_cells(b2p, s6)) == 15
    assert fire_cells(b2p, s7) == set()  # fire lasts exactly one state
    assert bombs_of(b2p, s7) == set()
    for s in (s1, s2, s3, s4, s5, s6, s7):
        assert not b2p.is_terminal(s)
        assert b2p.goals(s) == (0, 0)


def test_several_bombs_may_be_live_at_once(b2p: ggp.Game) -> None:
    s = play(b2p, b2p.initial_state(), ["dropBomb", "dropBomb"], ["(move east)", "(move west)"], ["dropBomb", NOWHERE])
    assert bombs_of(b2p, s) == {(1, 1, 1), (8, 8, 1), (2, 1, 3)}


def test_fire_sweeps_a_row_through_barriers(b2p: ggp.Game) -> None:
    """A bomb at (4,2) (no blockedEast there) burns all of row 2, barriers or not.

    Bomberman at (1,2) is behind three east barriers ((1,2)|(2,2), (2,2)|(3,2), (3,2)|(4,2)) and is
    burned. (4,2) has blockedNorth, so column 4 does not burn: bomberwoman at (4,1) is safe.
    (The bomb sits on a walled-in cell, a position only a state document reaches; the rule
    sheet's fire rule covers every cell.)
    """
    after = explode(b2p, (4, 2), man=(1, 2), woman=(4, 1))
    assert fire_cells(b2p, after) == row(2)
    assert b2p.is_terminal(after)
    assert b2p.goals(after) == (0, 100)


def test_fire_sweeps_a_column_through_barriers(b2p: ggp.Game) -> None:
    """A bomb at (2,4) (blockedEast, no blockedNorth) burns column 2 only, across the north barriers."""
    after = explode(b2p, (2, 4), man=(1, 4), woman=(2, 8))
    assert fire_cells(b2p, after) == column(2)
    assert b2p.is_terminal(after)
    assert b2p.goals(after) == (100, 0)


def test_fire_sweeps_row_and_column_of_a_free_cell(b2p: ggp.Game) -> None:
    after = explode(b2p, (3, 3), man=(1, 1), woman=(8, 8))
    assert fire_cells(b2p, after) == row(3) | column(3)
    assert not b2p.is_terminal(after)
    assert b2p.goals(after) == (0, 0)


def test_a_cell_with_blocked_east_makes_no_row_fire(b2p: ggp.Game) -> None:
    """(3,2) has blockedEast only: column 3 burns, row 2 does not; (1,2) in that row is safe."""
    after = explode(b2p, (3, 2), man=(1, 2), woman=(3, 8))
    assert fire_cells(b2p, after) == column(3)
    assert b2p.goals(after) == (100, 0)


def test_fire_burns_where_players_stand_after_the_move(b2p: ggp.Game) -> None:
    """Fire of (3,3) covers row 3 and column 3: stepping out of it escapes, stepping in burns."""
    state = bomb_state(b2p, man=(3, 1), woman=(6, 3), bombs=[(3, 3, 0)])
    escaped = b2p.next_state(state, ["(move east)", "(move north)"])  # (4,1) and (6,4): both out
    assert not b2p.is_terminal(escaped)
    state = bomb_state(b2p, man=(4, 1), woman=(6, 4), bombs=[(3, 3, 0)])
    walked_in = b2p.next_state(state, ["(move west)", NOWHERE])  # (3,1) is in column 3
    assert b2p.is_terminal(walked_in)
    assert b2p.goals(walked_in) == (0, 100)


NO_FIRE_CELLS = {(2, 2), (2, 5), (2, 7), (5, 2), (5, 5), (5, 7), (7, 2), (7, 5), (7, 7), (8, 8)}


def test_exactly_ten_cells_make_no_fire(b2p: ggp.Game) -> None:
    """A cell with both blockedNorth and blockedEast makes no fire at all (REFERENCES.md lists ten)."""
    silent = set()
    for x in range(1, 9):
        for y in range(1, 9):
            if not fire_cells(b2p, explode(b2p, (x, y), man=(3, 3), woman=(6, 6))):
                silent.add((x, y))
    assert silent == NO_FIRE_CELLS


def test_a_bomb_at_8_8_makes_no_fire(b2p: ggp.Game) -> None:
    """Bomberwoman drops a bomb on her own corner and waits beside it: nothing burns."""
    states = [b2p.initial_state()]
    states.append(b2p.next_state(states[-1], [NOWHERE, "dropBomb"]))
    for _ in range(5):
        states.append(b2p.next_state(states[-1], [NOWHERE, NOWHERE]))
    assert bombs_of(b2p, states[1]) == {(8, 8, 3)}
    assert bombs_of(b2p, states[4]) == {(8, 8, 0)}
    assert bombs_of(b2p, states[5]) == set()  # the state where its fire would be
    assert all(fire_cells(b2p, s) == set() for s in states)
    assert at(b2p, states[6], "bomberwoman") == (8, 8)
    assert not b2p.is_terminal(states[6])


def test_a_column_fire_reaches_8_8(b2p: ggp.Game) -> None:
    """(8,1) has blockedEast but no blockedNorth: column 8 burns, up to bomberwoman on (8,8)."""
    after = explode(b2p, (8, 1), man=(1, 1), woman=(8, 8))
    assert fire_cells(b2p, after) == column(8)
    assert b2p.goals(after) == (100, 0)


# --- the end of a Bomberman game -----------------------------------------------------------------


def test_both_burned_is_a_draw(b2p: ggp.Game) -> None:
    after = explode(b2p, (1, 3), man=(1, 5), woman=(8, 3))  # column 1 and row 3
    assert b2p.is_terminal(after)
    assert b2p.goals(after) == (50, 50)


def test_one_burned_loses(b2p: ggp.Game) -> None:
    man_burned = explode(b2p, (1, 3), man=(1, 5), woman=(8, 8))
    assert b2p.is_terminal(man_burned) and b2p.goals(man_burned) == (0, 100)
    woman_burned = explode(b2p, (1, 3), man=(3, 1), woman=(8, 3))
    assert b2p.is_terminal(woman_burned) and b2p.goals(woman_burned) == (100, 0)


def test_timeout_at_step_50_is_a_draw(b2p: ggp.Game) -> None:
    """After 49 joint moves the step counter reads 50: the game ends 50/50."""
    state = b2p.initial_state()
    for _ in range(48):
        state = b2p.next_state(state, [NOWHERE, NOWHERE])
    assert b2p.state_to_dict(state)["step"] == 49
    assert not b2p.is_terminal(state)
    assert b2p.goals(state) == (0, 0)
    state = b2p.next_state(state, [NOWHERE, NOWHERE])
    assert b2p.state_to_dict(state)["step"] == 50
    assert b2p.is_terminal(state)
    assert b2p.goals(state) == (50, 50)


def test_a_burn_on_step_50_beats_the_timeout(b2p: ggp.Game) -> None:
    after = explode(b2p, (1, 3), step=49, man=(1, 5), woman=(8, 8))
    assert b2p.state_to_dict(after)["step"] == 50
    assert b2p.goals(after) == (0, 100)


def test_non_terminal_goals_are_zero(b2p: ggp.Game) -> None:
    ticking = bomb_state(b2p, step=30, man=(1, 3), woman=(3, 1), bombs=[(1, 1, 0)])
    for state in (b2p.initial_state(), ticking):
        assert not b2p.is_terminal(state)
        assert b2p.goals(state) == (0, 0)


# --- bomberman as the seed tells it ----------------------------------------------------------------


def test_seed_bomberman_players_alternate(seed_bomberman: ggp.Game) -> None:
    """Bomberman acts in odd states, bomberwoman in even ones; the idle role's only move is noop."""
    game = seed_bomberman
    s1 = game.initial_state()
    assert legal_texts(game, s1, "bomberman") == {"(move north)", "(move east)", NOWHERE, "dropBomb"}
    assert legal_texts(game, s1, "bomberwoman") == {"noop"}
    s2 = game.next_state(s1, ["(move north)", "noop"])
    assert legal_texts(game, s2, "bomberman") == {"noop"}
    assert legal_texts(game, s2, "bomberwoman") == {"(move south)", "(move west)", NOWHERE, "dropBomb"}
    s3 = game.next_state(s2, ["noop", "(move west)"])
    assert at(game, s3, "bomberman") == (1, 2) and at(game, s3, "bomberwoman") == (7, 8)
    assert legal_texts(game, s3, "bomberwoman") == {"noop"}
    assert "noop" not in legal_texts(game, s3, "bomberman")
    for joint in (["(move north)", NOWHERE], ["(move north)", "(move south)"], ["noop", "noop"]):
        with pytest.raises(ggp.IllegalMoveError):
            game.next_state(s3, joint)


@pytest.mark.parametrize(
    ("bomb", "cells"),
    [
        ((1, 1), {(1, 1), (1, 2), (2, 1)}),  # a corner: itself, north and east
        ((2, 1), {(2, 1), (3, 1)}),  # blockedNorth: no north arm
        ((1, 2), {(1, 2), (1, 3)}),  # blockedEast: no east arm
        ((2, 2), {(2, 2)}),  # both
        ((3, 3), {(3, 3), (3, 4), (4, 3)}),
        ((8, 1), {(8, 1), (8, 2)}),  # the right column is marked blockedEast
        ((1, 8), {(1, 8), (2, 8)}),  # the top row is marked blockedNorth
        ((8, 8), {(8, 8)}),
    ],
)
def test_seed_fire_is_the_cell_and_its_north_and_east_neighbours(
    seed_bomberman: ggp.Game, bomb: tuple[int, int], cells: set[tuple[int, int]]
) -> None:
    after = explode(seed_bomberman, bomb, step=7, man=(6, 6), woman=(6, 3))
    assert fire_cells(seed_bomberman, after) == cells


def test_seed_fire_on_8_8_burns_bomberwoman_there(seed_bomberman: ggp.Game) -> None:
    """Unlike bomberman2p, a seed bomb at (8,8) burns its own cell."""
    after = explode(seed_bomberman, (8, 8), step=8, man=(1, 1), woman=(8, 8))
    assert seed_bomberman.is_terminal(after)
    assert seed_bomberman.goals(after) == (100, 0)


def test_seed_bomb_countdown_runs_once_per_state(seed_bomberman: ggp.Game) -> None:
    """The countdown advances in every state, whoever acts: dropped in state 1, fire in state 6."""
    game = seed_bomberman
    states = [game.initial_state()]
    for joint in (
        ["dropBomb", "noop"],
        ["noop", NOWHERE],
        ["(move east)", "noop"],  # (2,1)
        ["noop", NOWHERE],
        ["(move east)", "noop"],  # (3,1): outside the fire
        ["noop", NOWHERE],
    ):
        states.append(game.next_state(states[-1], joint))
    assert [bombs_of(game, s) for s in states] == [
        set(),
        {(1, 1, 3)},
        {(1, 1, 2)},
        {(1, 1, 1)},
        {(1, 1, 0)},
        set(),
        set(),
    ]
    assert fire_cells(game, states[5]) == {(1, 1), (1, 2), (2, 1)}
    assert fire_cells(game, states[6]) == set()
    assert not any(game.is_terminal(s) for s in states)


def test_seed_timeout_is_still_step_50(seed_bomberman: ggp.Game) -> None:
    game = seed_bomberman
    state = game.initial_state()
    for i in range(49):
        assert not game.is_terminal(state)
        state = game.next_state(state, [NOWHERE, "noop"] if i % 2 == 0 else ["noop", NOWHERE])
    assert game.state_to_dict(state)["step"] == 50
    assert game.is_terminal(state)
    assert game.goals(state) == (50, 50)


def test_seed_bomberman_is_burned_by_its_own_bomb(seed_bomberman: ggp.Game) -> None:
    game = seed_bomberman
    state = bomb_state(game, step=5, man=(1, 2), woman=(8, 8), bombs=[(1, 1, 0)])
    after = game.next_state(state, [NOWHERE, "noop"])
    assert game.is_terminal(after)
    assert game.goals(after) == (0, 100)


# ==============================================================================================
# Wall maze
# ==============================================================================================

WHITE_HOME, BLACK_HOME = (2, 5), (12, 5)


def race(game: ggp.Game, white: list[tuple[int, int]], black: list[tuple[int, int]]) -> list[ggp.State]:
    """Play the game where ``white[t]``, ``black[t]`` are the cells after joint move t+1; a repeated cell is noop."""
    assert len(white) == len(black)
    states = [game.initial_state()]
    here = {"white": WHITE_HOME, "black": BLACK_HOME}
    for w, b in zip(white, black, strict=True):
        joint = []
        for role, to in (("white", w), ("black", b)):
            frm = here[role]
            joint.append("noop" if to == frm else f"(move {frm[0]} {frm[1]} {to[0]} {to[1]})")
            here[role] = to
        states.append(game.next_state(states[-1], joint))
    return states


def row5(a: int, b: int) -> list[tuple[int, int]]:
    step = 1 if b >= a else -1
    return [(x, 5) for x in range(a, b + step, step)]


# The ring: rows 2 and 8 with columns 4 and 10 (16 moves end to end).
WHITE_OVER_THE_TOP = [(3, 5), (4, 5), (4, 6), (4, 7), (4, 8), *[(x, 8) for x in range(5, 11)], (10, 7), (10, 6), (10, 5), (11, 5), (12, 5)]  # fmt: skip
BLACK_UNDER_THE_BOTTOM = [(11, 5), (10, 5), (10, 4), (10, 3), (10, 2), *[(x, 2) for x in range(9, 3, -1)], (4, 3), (4, 4), (4, 5), (3, 5), (2, 5)]  # fmt: skip


@pytest.fixture(scope="module")
def maze() -> ggp.Game:
    return ggp.load("wallmaze")


def maze_state(game: ggp.Game, **fields: Any) -> ggp.State:
    doc = {
        "game": "wallmaze",
        "step": 5,
        "white": [3, 5],
        "black": [8, 5],
        "white_arrived": None,
        "black_arrived": None,
    }
    doc.update(fields)
    return game.state_from_dict(doc)


def where(game: ggp.Game, state: ggp.State) -> tuple[tuple[int, int], tuple[int, int]]:
    d = game.state_to_dict(state)
    return (d["white"][0], d["white"][1]), (d["black"][0], d["black"][1])


def test_wallmaze_start(maze: ggp.Game) -> None:
    start = maze.initial_state()
    assert maze.roles == ("white", "black")
    assert where(maze, start) == (WHITE_HOME, BLACK_HOME)
    assert legal_texts(maze, start, "white") == {"(move 2 5 3 5)", "noop"}
    assert legal_texts(maze, start, "black") == {"(move 12 5 11 5)", "noop"}
    assert maze.goals(start) == (0, 0)


def test_wallmaze_no_step_into_a_wall_or_onto_the_other_marker(maze: ggp.Game) -> None:
    """White on (3,5) has walls north and south and black east of it: it can only go back."""
    states = race(maze, [(3, 5)] * 8, row5(11, 4))
    state = states[-1]
    assert where(maze, state) == ((3, 5), (4, 5))
    assert legal_texts(maze, state, "white") == {"(move 3 5 2 5)", "noop"}
    assert legal_texts(maze, state, "black") == {"(move 4 5 5 5)", "(move 4 5 4 6)", "(move 4 5 4 4)", "noop"}
    for bad in ("(move 3 5 4 5)", "(move 3 5 3 6)", "(move 3 5 3 4)", "(move 3 5 5 5)"):
        with pytest.raises(ggp.IllegalMoveError):
            maze.next_state(state, [bad, "noop"])
    with pytest.raises(ggp.IllegalMoveError):
        maze.next_state(state, ["noop", "(move 4 5 3 5)"])


def test_wallmaze_collision_leaves_both_in_place(maze: ggp.Game) -> None:
    """Both step onto (4,5) at once: neither moves, but the step counter advances."""
    states = race(maze, [(3, 5)] * 7, row5(11, 5))
    before = states[-1]
    assert where(maze, before) == ((3, 5), (5, 5))
    assert "(move 3 5 4 5)" in legal_texts(maze, before, "white")
    assert "(move 5 5 4 5)" in legal_texts(maze, before, "black")
    after = maze.next_state(before, ["(move 3 5 4 5)", "(move 5 5 4 5)"])
    assert where(maze, after) == ((3, 5), (5, 5))
    assert maze.state_to_dict(after)["step"] == maze.state_to_dict(before)["step"] + 1 == 9
    # One of them alone moves fine.
    assert where(maze, maze.next_state(before, ["(move 3 5 4 5)", "noop"])) == ((4, 5), (5, 5))


def test_wallmaze_alone_the_route_is_10_moves_and_only_white_arriving_wins(maze: ggp.Game) -> None:
    """Black steps aside into column 10; white runs row 5 in 10 moves. White 100, black 0."""
    black = [(11, 5), (10, 5), (10, 4)] + [(10, 4)] * 7
    states = race(maze, row5(3, 12), black)
    arrived = states[-1]
    assert where(maze, arrived)[0] == (12, 5)
    assert maze.state_to_dict(arrived)["step"] == 11
    assert maze.state_to_dict(arrived)["white_arrived"] == 11
    assert maze.goals(arrived) == (100, 0)
    assert not maze.is_terminal(arrived)  # black has not arrived and step < 30
    assert legal_texts(maze, arrived, "white") == {"noop"}  # on its target white can only wait
    assert len(legal_texts(maze, arrived, "black")) > 1
    state = arrived
    while maze.state_to_dict(state)["step"] < 30:
        assert not maze.is_terminal(state)
        state = maze.next_state(state, ["noop", "noop"])
    assert maze.is_terminal(state)
    assert maze.goals(state) == (100, 0)


def test_wallmaze_only_black_arriving_wins(maze: ggp.Game) -> None:
    white = [(3, 5), (4, 5), (4, 6)] + [(4, 6)] * 7
    states = race(maze, white, row5(11, 2))
    state = states[-1]
    assert where(maze, state)[1] == (2, 5)
    assert maze.goals(state) == (0, 100)
    assert legal_texts(maze, state, "black") == {"noop"}
    assert not maze.is_terminal(state)
    state = play(maze, state, *[["noop", "noop"]] * (30 - 11))
    assert maze.is_terminal(state)
    assert maze.goals(state) == (0, 100)


def test_wallmaze_both_arrive_together_50_50_in_14_moves(maze: ggp.Game) -> None:
    """Cooperating: white waits in the pocket (7,6) while black passes; both arrive after 14 joint moves."""
    white = [(3, 5), (4, 5), (5, 5), (6, 5), (7, 5), (7, 6), (7, 6), (7, 6), (7, 5), (8, 5), (9, 5), (10, 5), (11, 5), (12, 5)]  # fmt: skip
    black = [(11, 5), (10, 5), (9, 5), (8, 5), (8, 5), (8, 5), (7, 5), (6, 5), (5, 5), (4, 5), (3, 5), (3, 5), (3, 5), (2, 5)]  # fmt: skip
    states = race(maze, white, black)
    assert not any(maze.is_terminal(s) for s in states[:-1])
    final = states[-1]
    assert maze.state_to_dict(final)["step"] == 15
    assert maze.is_terminal(final)  # both on their targets, long before step 30
    assert maze.goals(final) == (50, 50)


def test_wallmaze_earlier_arrival_scores_75(maze: ggp.Game) -> None:
    """Both take the ring; black waits one move at home, so white arrives first: 75 / 25."""
    states = race(maze, [*WHITE_OVER_THE_TOP, (12, 5)], [BLACK_HOME, *BLACK_UNDER_THE_BOTTOM])
    white_in = states[16]
    assert where(maze, white_in)[0] == (12, 5)
    assert not maze.is_terminal(white_in)
    assert maze.goals(white_in) == (100, 0)  # for now only white has arrived
    final = states[17]
    assert maze.is_terminal(final)
    assert maze.state_to_dict(final)["white_arrived"] == 17
    assert maze.state_to_dict(final)["black_arrived"] == 18
    assert maze.goals(final) == (75, 25)


def test_wallmaze_later_arrival_scores_25(maze: ggp.Game) -> None:
    """Black passes white waiting in the pocket and arrives two moves earlier: white 25, black 75."""
    white = [(3, 5), (4, 5), (5, 5), (6, 5), (7, 5), (7, 6), (7, 6), (7, 6), (7, 5), (8, 5), (9, 5), (10, 5), (11, 5), (12, 5)]  # fmt: skip
    black = [(11, 5), (10, 5), (9, 5), (8, 5), (8, 5), (8, 5), (7, 5), (6, 5), (5, 5), (4, 5), (3, 5), (2, 5), (2, 5), (2, 5)]  # fmt: skip
    states = race(maze, white, black)
    assert maze.goals(states[12]) == (0, 100)
    assert maze.is_terminal(states[14])
    assert maze.goals(states[14]) == (25, 75)


def test_wallmaze_both_take_the_ring_at_once_50_50(maze: ggp.Game) -> None:
    states = race(maze, WHITE_OVER_THE_TOP, BLACK_UNDER_THE_BOTTOM)
    assert len(states) == 17
    assert maze.is_terminal(states[16])
    assert maze.goals(states[16]) == (50, 50)


def test_wallmaze_nobody_arriving_by_step_30_is_0_0(maze: ggp.Game) -> None:
    state = maze.initial_state()
    for _ in range(28):
        state = maze.next_state(state, ["noop", "noop"])
    assert maze.state_to_dict(state)["step"] == 29
    assert not maze.is_terminal(state)
    state = maze.next_state(state, ["noop", "noop"])
    assert maze.state_to_dict(state)["step"] == 30
    assert maze.is_terminal(state)
    assert maze.goals(state) == (0, 0)


def test_wallmaze_goals_from_documents(maze: ggp.Game) -> None:
    """The same scoring, read off written positions (arrival steps as documented)."""
    both = {"white": [12, 5], "black": [2, 5], "step": 20}
    assert maze.goals(maze_state(maze, **both, white_arrived=12, black_arrived=19)) == (75, 25)
    assert maze.goals(maze_state(maze, **both, white_arrived=19, black_arrived=12)) == (25, 75)
    assert maze.goals(maze_state(maze, **both, white_arrived=20, black_arrived=20)) == (50, 50)
    assert maze.is_terminal(maze_state(maze, **both, white_arrived=20, black_arrived=20))
    only_white = maze_state(maze, white=[12, 5], black=[7, 4], step=30, white_arrived=15)
    assert maze.is_terminal(only_white) and maze.goals(only_white) == (100, 0)
    assert legal_texts(maze, only_white, "white") == {"noop"}
    assert legal_texts(maze, maze_state(maze, white=[11, 5], black=[2, 5], step=25, black_arrived=20), "black") == {
        "noop"
    }


# ==============================================================================================
# Amazons
# ==============================================================================================


@pytest.fixture(scope="module")
def am8() -> ggp.Game:
    return ggp.load("amazons_8x8")


@pytest.fixture(scope="module")
def am10() -> ggp.Game:
    return ggp.load("amazons_10x10")


def board_of(game: ggp.Game, state: ggp.State) -> dict[tuple[int, int], str]:
    rows = game.state_to_dict(state)["board"].split("/")
    n = len(rows)
    return {(x + 1, n - i): ch for i, r in enumerate(rows) for x, ch in enumerate(r)}


def test_amazons_start_positions(am8: ggp.Game, am10: ggp.Game) -> None:
    b8 = board_of(am8, am8.initial_state())
    assert {c for c, ch in b8.items() if ch == "W"} == {(1, 3), (3, 1), (6, 1), (8, 3)}
    assert {c for c, ch in b8.items() if ch == "B"} == {(1, 6), (3, 8), (6, 8), (8, 6)}
    b10 = board_of(am10, am10.initial_state())
    assert {c for c, ch in b10.items() if ch == "W"} == {(1, 4), (4, 1), (7, 1), (10, 4)}
    assert {c for c, ch in b10.items() if ch == "B"} == {(1, 7), (4, 10), (7, 10), (10, 7)}


def test_an_amazon_moves_like_a_queen_through_empty_cells(am8: ggp.Game) -> None:
    """From (1,3) at the start: north to (1,5) (black on (1,6)), south to (1,1), east to (7,3)
    (white on (8,3)), north-east to (5,7) (black on (6,8)), south-east to (2,2) (white on (3,1))."""
    moves = {m for m in legal_texts(am8, am8.initial_state(), "white") if m.startswith("(move 1 3 ")}
    reach = [(1, 4), (1, 5), (1, 2), (1, 1), *[(x, 3) for x in range(2, 8)], (2, 4), (3, 5), (4, 6), (5, 7), (2, 2)]
    assert moves == {f"(move 1 3 {x} {y})" for x, y in reach}
    for blocked in ("(move 1 3 1 6)", "(move 1 3 1 7)", "(move 1 3 8 3)", "(move 1 3 6 8)"):
        with pytest.raises(ggp.IllegalMoveError):
            am8.next_state(am8.initial_state(), [blocked, "noop"])


def test_amazons_phases_alternate(am8: ggp.Game) -> None:
    """White move, white fire, black move, black fire, white move; the idle role plays noop."""
    game = am8
    s0 = game.initial_state()
    s1 = game.next_state(s0, ["(move 1 3 1 5)", "noop"])
    s2 = game.next_state(s1, ["(fire 1 1)", "noop"])
    s3 = game.next_state(s2, ["noop", "(move 3 8 3 6)"])
    s4 = game.next_state(s3, ["noop", "(fire 5 4)"])
    phases = [(game.state_to_dict(s)["to_act"], game.state_to_dict(s)["phase"]) for s in (s0, s1, s2, s3, s4)]
    assert phases == [("white", "move"), ("white", "fire"), ("black", "move"), ("black", "fire"), ("white", "move")]
    for s, mover, kind in ((s0, "white", "(move"), (s1, "white", "(fire"), (s2, "black", "(move"), (s3, "black", "(fire"), (s4, "white", "(move")):  # fmt: skip
        idle = "black" if mover == "white" else "white"
        assert legal_texts(game, s, idle) == {"noop"}
        moves = legal_texts(game, s, mover)
        assert moves and all(m.startswith(kind) for m in moves)
    assert game.state_to_dict(s1)["just_moved"] == [1, 5]
    assert game.state_to_dict(s2)["just_moved"] is None
    assert game.state_to_dict(s3)["just_moved"] == [3, 6]
    board = board_of(game, s4)
    assert board[(1, 5)] == "W" and board[(1, 3)] == "." and board[(1, 1)] == "x"
    assert board[(3, 6)] == "B" and board[(3, 8)] == "." and board[(5, 4)] == "x"
    # Out of turn or out of phase is illegal.
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(s0, ["noop", "(move 1 6 1 5)"])
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(s0, ["(fire 4 4)", "noop"])
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(s1, ["(move 1 5 1 4)", "noop"])


def test_the_arrow_flies_from_the_amazon_that_just_moved(am8: ggp.Game) -> None:
    s1 = am8.next_state(am8.initial_state(), ["(move 6 1 6 4)", "noop"])
    fires = legal_texts(am8, s1, "white")
    assert "(fire 6 7)" in fires  # straight north from (6,4)
    assert "(fire 3 2)" not in fires  # reachable from (3,1), which did not move
    with pytest.raises(ggp.IllegalMoveError):
        am8.next_state(s1, ["(fire 3 2)", "noop"])


def test_firing_back_onto_and_through_the_vacated_cell_is_legal(am8: ggp.Game) -> None:
    """(1,3) -> (1,5): the arrow may land on (1,3) or fly through it to (1,2) and (1,1)."""
    s1 = am8.next_state(am8.initial_state(), ["(move 1 3 1 5)", "noop"])
    fires = legal_texts(am8, s1, "white")
    assert {"(fire 1 4)", "(fire 1 3)", "(fire 1 2)", "(fire 1 1)"} <= fires
    onto = am8.next_state(s1, ["(fire 1 3)", "noop"])
    through = am8.next_state(s1, ["(fire 1 1)", "noop"])
    assert board_of(am8, onto)[(1, 3)] == "x"
    assert board_of(am8, through)[(1, 1)] == "x" and board_of(am8, through)[(1, 3)] == "."


def test_amazons_10x10_arrow_after_4_1_to_6_1_has_23_targets(am10: ggp.Game) -> None:
    """REFERENCES.md: the amazon on (4,1) has 20 destinations; from (6,1) its arrow has 23, counting (4,1)."""
    start = am10.initial_state()
    assert len([m for m in legal_texts(am10, start, "white") if m.startswith("(move 4 1 ")]) == 20
    s1 = am10.next_state(start, ["(move 4 1 6 1)", "noop"])
    fires = legal_texts(am10, s1, "white")
    assert len(fires) == 23
    assert "(fire 4 1)" in fires


@pytest.mark.parametrize(("name", "per_amazon"), [("amazons_10x10", 544), ("amazons_8x8", 308)])
def test_every_amazon_has_the_same_number_of_full_moves_at_the_start(name: str, per_amazon: int) -> None:
    """REFERENCES.md: 544 move+arrow pairs per amazon on 10x10 (2,176 in all), 308 on 8x8 (1,232)."""
    game = ggp.load(name)
    start = game.initial_state()
    per_origin: dict[tuple[str, str], int] = {}
    for move in game.legal_moves(start, "white"):
        after = game.next_state(start, [move, "noop"])
        _, x1, y1, _, _ = move.term
        per_origin[(x1, y1)] = per_origin.get((x1, y1), 0) + len(game.legal_moves(after, "white"))
    assert len(per_origin) == 4
    assert set(per_origin.values()) == {per_amazon}


BOXED_WHITE = "/".join(
    [
        "......BB",  # y = 8
        ".......B",
        "........",
        "....B...",  # y = 5: black on (5,5)
        "........",
        "xx......",  # y = 3: (3,3) still open
        "WWx.....",
        "WWx.....",  # y = 1
    ]
)
WALLED_IN_WHITE = BOXED_WHITE.replace("xx......", "xxx.....")


def test_the_mover_with_no_move_loses(am8: ggp.Game) -> None:
    """Black's arrow on (3,3) walls in the last white amazon: white, to move, cannot: white 0, black 100."""
    before = am8.state_from_dict({"board": BOXED_WHITE, "to_act": "black", "phase": "fire", "just_moved": [5, 5]})
    assert not am8.is_terminal(before)
    assert "(fire 3 3)" in legal_texts(am8, before, "black")
    after = am8.next_state(before, ["noop", "(fire 3 3)"])
    assert am8.state_to_dict(after)["to_act"] == "white"
    assert am8.legal_moves(after, "white") == ()
    assert am8.is_terminal(after)
    assert am8.goals(after) == (0, 100)
    with pytest.raises(ggp.GameOverError):
        am8.next_state(after, ["noop", "noop"])


def test_a_boxed_in_side_loses_only_when_it_must_move(am8: ggp.Game) -> None:
    """The same walled-in white amazons with black to move: the game goes on (goals: the role to act holds 0)."""
    board = WALLED_IN_WHITE
    black_to_move = am8.state_from_dict({"board": board, "to_act": "black", "phase": "move", "just_moved": None})
    assert not am8.is_terminal(black_to_move)
    assert am8.goals(black_to_move) == (100, 0)
    white_to_move = am8.state_from_dict({"board": board, "to_act": "white", "phase": "move", "just_moved": None})
    assert am8.is_terminal(white_to_move)
    assert am8.goals(white_to_move) == (0, 100)


def test_a_boxed_in_black_loses(am10: ggp.Game) -> None:
    rows = ["." * 10 for _ in range(10)]
    rows[0] = "BBx......."  # y = 10
    rows[1] = "BBx......."  # y = 9
    rows[2] = "xxx......."  # y = 8
    rows[9] = "...WWWW..."  # y = 1
    state = am10.state_from_dict({"board": "/".join(rows), "to_act": "black", "phase": "move", "just_moved": None})
    assert am10.is_terminal(state)
    assert am10.goals(state) == (100, 0)


def test_amazons_goals_before_the_end_follow_the_rule_sheet(am8: ggp.Game) -> None:
    """The rule sheet gives the role to act 0 and the other 100 in every state; only the end counts."""
    s0 = am8.initial_state()
    assert not am8.is_terminal(s0)
    assert am8.goals(s0) == (0, 100)
    s2 = play(am8, s0, ["(move 1 3 1 5)", "noop"], ["(fire 1 1)", "noop"])
    assert am8.goals(s2) == (100, 0)
