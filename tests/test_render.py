"""Text and SVG pictures of states: coordinates in the text, well-formed SVG for every game."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import ggp
from conftest import GAME_NAMES, play

SVG = "{http://www.w3.org/2000/svg}"


def some_states(name: str) -> list[ggp.State]:
    """The start, a position with something going on, and an end."""
    game = ggp.load(name)
    start = game.initial_state()
    if name.startswith("amazons"):
        mid = game.next_state(start, [game.legal_moves(start, "white")[0], "noop"])  # fire phase
        boxed = {
            "amazons_8x8": "BBx...../BBx...../xxx...../......../......../......../......../WWWW....",
            "amazons_10x10": "BBx......./BBx......./xxx......./........../........../........../........../........../........../WWWW......",
        }[name]
        end = game.state_from_dict({"board": boxed, "to_act": "black", "phase": "move", "just_moved": None})
    elif name.startswith("bomberman"):
        mid = game.state_from_dict(
            {"step": 5, "bomberman": [3, 3], "bomberwoman": [3, 3], "bombs": [[1, 1, 2], [8, 8, 0]], "fire": [[6, 1]]}
        )
        end = game.state_from_dict({"step": 50, "bomberman": [1, 1], "bomberwoman": [8, 8]})
    else:
        mid = play(game, start, ["(move 2 5 3 5)", "(move 12 5 11 5)"])
        end = game.state_from_dict(
            {"step": 30, "white": [12, 5], "black": [4, 5], "white_arrived": 12, "black_arrived": None}
        )
    assert game.is_terminal(end) and not game.is_terminal(mid)
    return [start, mid, end]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_str_of_a_state_is_its_rendering(name: str) -> None:
    game = ggp.load(name)
    for state in some_states(name):
        text = game.render(state)
        assert str(state) == text
        assert len(text.splitlines()) > 5


@pytest.mark.parametrize("name", ["amazons_8x8", "amazons_10x10"])
def test_amazons_text_shows_files_ranks_and_pieces(name: str) -> None:
    game = ggp.load(name)
    n = 8 if name == "amazons_8x8" else 10
    lines = game.render(game.initial_state()).splitlines()
    assert lines[0].split() == [chr(ord("a") + i) for i in range(n)]
    board = game.state_to_dict(game.initial_state())["board"].split("/")
    for i, y in enumerate(range(n, 0, -1)):
        cells = lines[1 + i].split()
        assert cells[0] == cells[-1] == str(y)  # ranks on both sides
        assert "".join(cells[1:-1]) == board[i]
    assert "white" in game.render(game.initial_state())
    end = some_states(name)[2]
    assert "black" in game.render(end) and "white" in game.render(end)


def test_amazons_text_marks_the_amazon_that_just_moved() -> None:
    game = ggp.load("amazons_8x8")
    s1 = game.next_state(game.initial_state(), ["(move 1 3 1 5)", "noop"])
    row5 = next(line for line in game.render(s1).splitlines() if line.split()[:1] == ["5"])
    assert "[W]" in row5


def test_bomberman_text_shows_coordinates_players_bombs_and_fire() -> None:
    game = ggp.load("bomberman2p")
    start, mid, end = some_states("bomberman2p")
    text = game.render(start)
    assert [line.split()[0] for line in text.splitlines() if line[:3].strip().isdigit()] == [
        str(y) for y in range(8, 0, -1)
    ]
    x_axis = next(line for line in text.splitlines() if "(x)" in line)
    assert x_axis.split()[:8] == [str(x) for x in range(1, 9)]
    assert "A" in text and "B" in text
    mid_text = game.render(mid)
    assert "AB" in mid_text  # two players on one cell
    assert "*" in mid_text and "2" in mid_text
    assert "step 5" in mid_text
    assert "50" in game.render(end)


def test_wallmaze_text_shows_coordinates_and_markers() -> None:
    game = ggp.load("wallmaze")
    text = game.render(game.initial_state())
    lines = text.splitlines()
    assert lines[0].split() == [str(x) for x in range(1, 14)]
    row5 = lines[1 + 9 - 5].split()
    assert row5[0] == "5"
    assert row5[1:] == ["#", "W", ".", ".", ".", ".", ".", ".", ".", ".", ".", "B", "#"]
    end = some_states("wallmaze")[2]
    assert "100" in game.render(end)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_svg_is_well_formed_for_every_game(name: str) -> None:
    game = ggp.load(name)
    for state in some_states(name):
        text = game.svg(state)
        root = ET.fromstring(text)
        assert root.tag.endswith("svg")
        assert root.tag == f"{SVG}svg"
        assert len(list(root.iter(f"{SVG}rect"))) > 0
        assert state._repr_svg_() == text
        # the grid is labelled with its coordinates
        labels = {t.text for t in root.iter(f"{SVG}text")}
        assert {"1", "2", "8"} <= labels


@pytest.mark.parametrize("name", GAME_NAMES)
def test_svg_size_is_the_requested_width(name: str) -> None:
    game = ggp.load(name)
    root = ET.fromstring(game.svg(game.initial_state(), size=500))
    assert root.get("width") == "500"


def test_svg_changes_with_the_position() -> None:
    for name in GAME_NAMES:
        game = ggp.load(name)
        start, mid, _ = some_states(name)
        assert game.svg(start) != game.svg(mid), name
