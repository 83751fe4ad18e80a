"""Bad input gets the documented error, with a message that says what went wrong.

Every error a caller can cause is a ``ggp.GGPError`` and also the matching
built-in (``ValueError`` or ``LookupError``); the state the call was given is
never changed by a failed call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import ggp
from conftest import GAME_NAMES, play, snapshot

# --- ggp.load ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["chess", "", "amazons", "amazons_9x9", "tictactoe"])
def test_unknown_game_lists_the_built_in_names(name: str) -> None:
    with pytest.raises(ggp.UnknownGameError) as info:
        ggp.load(name)
    assert isinstance(info.value, LookupError)
    assert isinstance(info.value, ggp.GGPError)
    message = str(info.value)
    for builtin in GAME_NAMES:
        assert builtin in message
    if name:
        assert repr(name) in message


def test_unknown_game_error_is_a_lookup_error() -> None:
    with pytest.raises(LookupError):
        ggp.load("chess")


def test_a_missing_kif_file_is_an_unknown_game() -> None:
    with pytest.raises(ggp.UnknownGameError, match=r"no such rule sheet \(\.kif\) file"):
        ggp.load("some/rules.kif")


def test_load_accepts_any_case_and_surrounding_space() -> None:
    assert ggp.load("  WallMaze ") is ggp.load("wallmaze")
    assert ggp.load("AMAZONS_8X8").name == "amazons_8x8"


def test_game_names_lists_the_built_in_games_after_a_game_is_loaded() -> None:
    """``ggp.game_names()`` is the list of names, also once loading a game has imported ``ggp.games.*``."""
    ggp.load("wallmaze")
    assert ggp.game_names() == GAME_NAMES


def test_every_built_in_game_has_a_rule_sheet() -> None:
    """A built-in game is named in its family's FAMILY record and has a sheet in the family's folder: the two
    lists agree."""
    from ggp.gdl import BUILTIN_RULES

    assert list(BUILTIN_RULES) == ggp.game_names() == GAME_NAMES


def test_a_registered_game_loads_by_name_once_and_is_listed() -> None:
    from ggp.games.wallmaze.rules import WallMaze
    from ggp.registry import unregister

    made: list[object] = []

    def factory(label: str) -> WallMaze:
        made.append(label)
        return WallMaze()

    ggp.register("maze_copy", factory, "copy")
    try:
        assert ggp.game_names() == [*GAME_NAMES, "maze_copy"]
        game = ggp.load(" Maze_Copy ")
        assert game is ggp.load("maze_copy") and made == ["copy"]  # built once, shared
        assert game.roles == ("white", "black")
    finally:
        unregister("maze_copy")
    assert ggp.game_names() == GAME_NAMES
    with pytest.raises(ggp.UnknownGameError, match="unknown game 'maze_copy'"):
        ggp.load("maze_copy")


def test_a_game_registered_by_reference_is_imported_on_its_first_load() -> None:
    from ggp.registry import unregister

    ggp.register("maze_by_name", "ggp.games.wallmaze.rules:WallMaze")
    try:
        assert ggp.load("maze_by_name").name == "wallmaze"
    finally:
        unregister("maze_by_name")


@pytest.mark.parametrize(
    ("name", "factory", "why"),
    [
        ("wallmaze", "ggp.games.wallmaze.rules:WallMaze", "already registered"),
        ("Big Maze", "ggp.games.wallmaze.rules:WallMaze", "lower case letters"),
        ("", "ggp.games.wallmaze.rules:WallMaze", "lower case letters"),
        ("maze2", "ggp.games.wallmaze.rules.WallMaze", "package.module:attribute"),
        ("maze2", 42, "a callable"),
    ],
)
def test_register_refuses_a_bad_name_or_factory_and_changes_nothing(name: str, factory: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        ggp.register(name, factory)  # type: ignore[arg-type]
    assert ggp.game_names() == GAME_NAMES
    assert ggp.load("wallmaze").name == "wallmaze"


def test_a_factory_that_makes_no_game_is_refused_on_load() -> None:
    from ggp.registry import unregister

    ggp.register("not_a_game", lambda: "a string")
    try:
        with pytest.raises(TypeError, match=r"made a str, not a ggp\.Game"):
            ggp.load("not_a_game")
    finally:
        unregister("not_a_game")


# --- parse_move ----------------------------------------------------------------------------------

MALFORMED = [
    ("amazons_8x8", "(move 1 3"),  # never closed
    ("amazons_8x8", "move 1 3 1 4)"),  # closed without an opening
    ("amazons_8x8", "(jump 1 2)"),  # no such move
    ("amazons_8x8", "(move 0 3 1 4)"),  # coordinates run 1..8
    ("amazons_8x8", "(move 9 3 1 4)"),
    ("amazons_8x8", "(move 1 3 1)"),  # too few arguments
    ("amazons_8x8", "(move 1 3 1 4 5)"),  # too many
    ("amazons_8x8", "(fire (1) 3)"),
    ("amazons_8x8", ""),
    ("amazons_8x8", "noop noop"),  # two terms
    ("amazons_10x10", "(fire 11 1)"),
    ("bomberman2p", "(move up)"),
    ("bomberman2p", "bomb"),
    ("bomberman2p", "(dropBomb north)"),
    ("bomberman", "(move north east)"),
    ("wallmaze", "(move 2 5 3)"),
    ("wallmaze", "(move 14 5 13 5)"),
    ("wallmaze", "(fire 2 5)"),
    ("wallmaze", "dropBomb"),
]


@pytest.mark.parametrize(("name", "text"), MALFORMED)
def test_malformed_move_text_is_a_move_syntax_error(name: str, text: str) -> None:
    game = ggp.load(name)
    with pytest.raises(ggp.MoveSyntaxError) as info:
        game.parse_move(text)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ggp.GGPError)
    message = str(info.value)
    assert name in message
    assert repr(text) in message  # the message quotes what it was given


@pytest.mark.parametrize("value", [None, 42, 1.5, ("move", "1", "3", "1", "4"), b"noop"])
def test_a_move_that_is_not_text_is_a_move_syntax_error(value: Any) -> None:
    game = ggp.load("amazons_8x8")
    with pytest.raises(ggp.MoveSyntaxError, match="KIF text"):
        game.parse_move(value)


def test_parse_move_does_not_check_legality() -> None:
    """A well-formed move that is not legal now still parses; next_state is where legality is checked."""
    game = ggp.load("amazons_8x8")
    assert str(game.parse_move("(move 8 8 1 1)")) == "(move 8 8 1 1)"


# --- illegal moves ---------------------------------------------------------------------------------


def test_an_illegal_move_names_the_role_the_move_and_legal_moves() -> None:
    game = ggp.load("amazons_8x8")
    state = game.initial_state()
    before = snapshot(game, state)
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, ["(move 1 3 1 8)", "noop"])  # black on (1,6) is in the way
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, ggp.GGPError)
    assert err.role == "white"
    assert err.move == "(move 1 3 1 8)"
    legal = {str(m) for m in game.legal_moves(state, "white")}
    assert set(err.legal) == legal and len(err.legal) == 60
    message = str(err)
    assert "white" in message and "(move 1 3 1 8)" in message
    assert sum(m in message for m in legal) >= 3  # shows some of the legal moves
    assert "60" in message  # ... and how many there are
    assert snapshot(game, state) == before


def test_the_idle_role_playing_a_move_is_illegal() -> None:
    game = ggp.load("amazons_8x8")
    state = game.initial_state()
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, ["(move 1 3 1 4)", "(move 1 6 1 5)"])
    assert info.value.role == "black"
    assert info.value.move == "(move 1 6 1 5)"
    assert info.value.legal == ("noop",)
    assert "noop" in str(info.value)


def test_an_illegal_wallmaze_step_is_reported_for_its_role() -> None:
    game = ggp.load("wallmaze")
    state = game.initial_state()
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, ["noop", "(move 12 5 12 6)"])  # a wall
    assert info.value.role == "black"
    assert set(info.value.legal) == {"(move 12 5 11 5)", "noop"}
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, ["(move 3 5 4 5)", "noop"])  # white is not on (3,5)
    assert info.value.role == "white"


def test_malformed_text_in_a_joint_move_is_an_illegal_move() -> None:
    game = ggp.load("bomberman2p")
    state = game.initial_state()
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, ["(move north)", "(move up)"])
    assert info.value.role == "bomberwoman"
    assert "(move up)" in str(info.value)


@pytest.mark.parametrize(
    "joint",
    [
        ["noop"],  # one move for two roles
        ["(move 2 5 3 5)", "noop", "noop"],  # three
        [],
        "noop",  # a bare string is not a sequence of moves
        "(move 2 5 3 5) noop",
        ggp.Move("noop"),
        None,
        42,
    ],
)
def test_a_joint_move_needs_one_move_per_role(joint: Any) -> None:
    game = ggp.load("wallmaze")
    state = game.initial_state()
    before = snapshot(game, state)
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, joint)
    assert "white" in str(info.value) and "black" in str(info.value)  # it says which roles need a move
    assert snapshot(game, state) == before


@pytest.mark.parametrize("bad", [42, None, 3.5, ("move", "2", "5", "3", "5"), b"noop"])
def test_a_move_of_the_wrong_type_is_an_illegal_move(bad: Any) -> None:
    game = ggp.load("wallmaze")
    state = game.initial_state()
    before = snapshot(game, state)
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, [bad, "noop"])
    assert info.value.role == "white"
    assert type(bad).__name__ in str(info.value)
    assert snapshot(game, state) == before


@pytest.mark.parametrize(
    "move",
    [
        ggp.Move("dropBomb"),  # a move of another game
        ggp.load("bomberman2p").parse_move("(move north)"),
        ggp.load("amazons_8x8").parse_move("(fire 2 5)"),
        ggp.Move("(move 2 5 3 5 1)"),
    ],
    ids=str,
)
def test_a_move_object_that_is_no_move_of_this_game_is_an_illegal_move(move: ggp.Move) -> None:
    """next_state raises IllegalMoveError for a malformed move, even one handed over as a Move."""
    game = ggp.load("wallmaze")
    state = game.initial_state()
    before = snapshot(game, state)
    with pytest.raises(ggp.IllegalMoveError) as info:
        game.next_state(state, [move, "noop"])
    assert info.value.role == "white"
    assert snapshot(game, state) == before


@pytest.mark.parametrize("name", ["bomberman2p", "amazons_10x10"])
def test_a_move_object_of_another_game_is_illegal_in_the_other_games(name: str) -> None:
    game = ggp.load(name)
    state = game.initial_state()
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(state, [ggp.Move("(move 2 5 3 5 1)"), game.legal_moves(state, game.roles[1])[0]])


def test_an_unknown_role_is_a_value_error_naming_the_roles() -> None:
    game = ggp.load("amazons_8x8")
    with pytest.raises(ValueError, match="white, black"):
        game.legal_moves(game.initial_state(), "red")


# --- after the end ------------------------------------------------------------------------------


def test_a_move_after_the_game_ended_is_a_game_over_error() -> None:
    game = ggp.load("wallmaze")
    state = play(game, game.initial_state(), *[["noop", "noop"]] * 29)
    assert game.is_terminal(state)
    before = snapshot(game, state)
    legal = [game.legal_moves(state, role)[0] for role in game.roles]
    with pytest.raises(ggp.GameOverError) as info:
        game.next_state(state, legal)
    assert isinstance(info.value, ggp.IllegalMoveError)
    assert isinstance(info.value, ValueError)
    assert "over" in str(info.value)
    assert snapshot(game, state) == before


def test_a_move_after_a_burn_is_a_game_over_error() -> None:
    game = ggp.load("bomberman2p")
    state = game.state_from_dict(
        {"step": 7, "bomberman": [1, 1], "bomberwoman": [8, 8], "bombs": [], "fire": [[1, 1], [2, 1]]}
    )
    assert game.is_terminal(state)
    with pytest.raises(ggp.GameOverError):
        game.next_state(state, ["(move nowhere)", "(move nowhere)"])


# --- reading states -----------------------------------------------------------------------------

GARBAGE = ["", "not json", "{", "[1, 2, 3]", '"a string"', "42", "null", "{}"]


@pytest.mark.parametrize("name", GAME_NAMES)
@pytest.mark.parametrize("text", GARBAGE)
def test_garbage_is_a_state_format_error(name: str, text: str) -> None:
    game = ggp.load(name)
    with pytest.raises(ggp.StateFormatError) as info:
        game.state_from_json(text)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ggp.GGPError)
    assert name in str(info.value)


@pytest.mark.parametrize("name", GAME_NAMES)
@pytest.mark.parametrize("value", [None, 42, ["not", "a", "state"], b"{}"])
def test_a_state_document_that_is_not_text_or_a_dict_is_a_state_format_error(name: str, value: Any) -> None:
    with pytest.raises(ggp.StateFormatError):
        ggp.load(name).state_from_json(value)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_state_of_another_game_is_a_state_format_error(name: str) -> None:
    game = ggp.load(name)
    for other in GAME_NAMES:
        if other == name:
            continue
        other_game = ggp.load(other)
        text = other_game.state_to_json(other_game.initial_state())
        with pytest.raises(ggp.StateFormatError) as info:
            game.state_from_json(text)
        assert other in str(info.value) and name in str(info.value)


def _doc(name: str) -> dict[str, Any]:
    game = ggp.load(name)
    return game.state_to_dict(game.initial_state())


BOARD8 = _doc("amazons_8x8")["board"]

BAD_DOCUMENTS = [
    # Amazons
    pytest.param("amazons_8x8", {"board": "........"}, id="amazons_8x8: board=........"),
    pytest.param("amazons_8x8", {"board": "/".join(["........"] * 7)}, id="amazons_8x8: 7 rows"),
    pytest.param("amazons_8x8", {"board": BOARD8.replace("W", "Q", 1)}, id="amazons_8x8: unknown mark"),
    pytest.param("amazons_8x8", {"board": BOARD8.replace("B", "W", 1)}, id="amazons_8x8: five white amazons"),
    pytest.param("amazons_8x8", {"board": BOARD8.replace("W", ".", 1)}, id="amazons_8x8: three white amazons"),
    pytest.param("amazons_8x8", {"to_act": "red"}, id="amazons_8x8: to_act=red"),
    pytest.param("amazons_8x8", {"phase": "shoot"}, id="amazons_8x8: phase=shoot"),
    pytest.param("amazons_8x8", {"just_moved": [1, 3]}, id="amazons_8x8: nothing just moved in a move phase"),
    pytest.param("amazons_8x8", {"phase": "fire", "just_moved": [4, 4]}, id="amazons_8x8: just_moved on an empty cell"),
    pytest.param(
        "amazons_8x8", {"phase": "fire", "just_moved": [1, 6]}, id="amazons_8x8: black's amazon, white to act"
    ),
    pytest.param("amazons_8x8", {"phase": "fire", "just_moved": None}, id="amazons_8x8: phase=fire, just_moved=None"),
    pytest.param(
        "amazons_8x8", {"phase": "fire", "just_moved": [0, 0]}, id="amazons_8x8: just_moved (0, 0) off the board"
    ),
    pytest.param(
        "amazons_8x8",
        {"phase": "fire", "just_moved": [100, 100]},
        id="amazons_8x8: just_moved (100, 100) off the board",
    ),
    pytest.param(
        "amazons_8x8", {"phase": "fire", "just_moved": [9, 2]}, id="amazons_8x8: just_moved (9, 2) off the board"
    ),
    pytest.param("amazons_10x10", {"board": BOARD8}, id="amazons_10x10: an 8x8 board"),
    # Bomberman
    pytest.param("bomberman2p", {"step": 0}, id="bomberman2p: step=0"),
    pytest.param("bomberman2p", {"step": 51}, id="bomberman2p: step=51"),
    pytest.param("bomberman2p", {"step": -1}, id="bomberman2p: step=-1"),
    pytest.param("bomberman2p", {"step": 10**20}, id="bomberman2p: step=10**20"),
    pytest.param("bomberman2p", {"step": "ten"}, id="bomberman2p: step=ten"),
    pytest.param("bomberman2p", {"bomberman": [9, 1]}, id="bomberman2p: bomberman=[9, 1]"),
    pytest.param("bomberman2p", {"bomberwoman": [0, 8]}, id="bomberman2p: bomberwoman=[0, 8]"),
    pytest.param("bomberman2p", {"bomberman": [1]}, id="bomberman2p: bomberman=[1]"),
    pytest.param("bomberman2p", {"bomberman": [10**30, 1]}, id="bomberman2p: bomberman=[10**30, 1]"),
    pytest.param("bomberman2p", {"bombs": [[1, 1, 4]]}, id="bomberman2p: bombs=[[1, 1, 4]]"),
    pytest.param("bomberman2p", {"bombs": [[1, 1, -1]]}, id="bomberman2p: bombs=[[1, 1, -1]]"),
    pytest.param("bomberman2p", {"bombs": [[1, 9, 3]]}, id="bomberman2p: bombs=[[1, 9, 3]]"),
    pytest.param("bomberman2p", {"bombs": [[1, 1]]}, id="bomberman2p: bombs=[[1, 1]]"),
    pytest.param("bomberman2p", {"fire": [[0, 1]]}, id="bomberman2p: fire=[[0, 1]]"),
    # Wall maze
    pytest.param("wallmaze", {"white": [1, 1]}, id="wallmaze: a wall"),
    pytest.param("wallmaze", {"white": [14, 5]}, id="wallmaze: off the grid"),
    pytest.param("wallmaze", {"black": [2, 5]}, id="wallmaze: on white's cell"),
    pytest.param("wallmaze", {"step": 0}, id="wallmaze: step=0"),
    pytest.param("wallmaze", {"step": 31}, id="wallmaze: step=31"),
    pytest.param("wallmaze", {"step": 10**20}, id="wallmaze: step=10**20"),
    pytest.param("wallmaze", {"white_arrived": 1}, id="wallmaze: white is not on its target"),
    pytest.param(
        "wallmaze", {"white": [12, 5], "black": [11, 5]}, id="wallmaze: on its target without an arrival step"
    ),
    pytest.param(
        "wallmaze",
        {"white": [12, 5], "black": [11, 5], "white_arrived": 5},
        id="wallmaze: white_arrived after the current step",
    ),
    pytest.param(
        "wallmaze", {"white": [12, 5], "black": [11, 5], "white_arrived": 10**30}, id="wallmaze: white_arrived=10**30"
    ),
    pytest.param("wallmaze", {"black_arrived": "soon"}, id="wallmaze: black_arrived=soon"),
]


@pytest.mark.parametrize(("name", "change"), BAD_DOCUMENTS)
def test_out_of_range_state_documents_are_state_format_errors(name: str, change: dict[str, Any]) -> None:
    game = ggp.load(name)
    doc = {**_doc(name), **change}
    with pytest.raises(ggp.StateFormatError):
        game.state_from_dict(doc)
    with pytest.raises(ggp.StateFormatError):
        game.state_from_json(json.dumps(doc))


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_document_missing_a_field_is_a_state_format_error(name: str) -> None:
    game = ggp.load(name)
    doc = _doc(name)
    for key in doc:
        if key in ("game", "bombs", "fire", "just_moved", "white_arrived", "black_arrived"):
            continue  # optional: the game's own name, and empty layers
        partial = {k: v for k, v in doc.items() if k != key}
        with pytest.raises(ggp.StateFormatError):
            game.state_from_dict(partial)


# --- states and games do not mix ----------------------------------------------------------------


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_state_of_one_game_given_to_another_is_a_type_error(name: str) -> None:
    game = ggp.load(name)
    for other in GAME_NAMES:
        if other == name:
            continue
        foreign = ggp.load(other).initial_state()
        before = snapshot(foreign.game, foreign)
        with pytest.raises(TypeError, match=other):
            game.legal_moves(foreign, game.roles[0])
        with pytest.raises(TypeError):
            game.is_terminal(foreign)
        with pytest.raises(TypeError):
            game.goals(foreign)
        with pytest.raises(TypeError):
            game.next_state(foreign, ["noop", "noop"])
        with pytest.raises(TypeError):
            game.state_to_json(foreign)
        assert snapshot(foreign.game, foreign) == before


@pytest.mark.parametrize("thing", [None, "state", {"game": "wallmaze"}])
def test_something_that_is_not_a_state_is_a_type_error(thing: Any) -> None:
    game = ggp.load("wallmaze")
    with pytest.raises(TypeError):
        game.legal_moves(thing, "white")
