"""ggp's own rule sheets of the built-in games: shipped as package data, printed by ``ggp rules``."""

from __future__ import annotations

import pytest

import ggp
from conftest import GAME_NAMES, SHARED
from ggp.cli import main
from ggp.gdl import GDLGame, builtin, parse_program, rules_text


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_built_in_game_has_a_rule_sheet(name: str) -> None:
    text = rules_text(name)
    program = parse_program(text, name)
    assert program.roles == tuple(r.lower() for r in ggp.load(name).roles)
    assert text != (SHARED / "gdl" / f"{name}.kif").read_text()
    game = builtin(name)
    assert isinstance(game, GDLGame) and game.name == name
    assert game.roles == ggp.load(name).roles
    assert rules_text(f"  {name.upper()} ") == text


@pytest.mark.parametrize("name", GAME_NAMES)
def test_initial_states_agree_with_the_native_engine(name: str) -> None:
    native, gdl = ggp.load(name), builtin(name)
    assert gdl.state_facts(gdl.initial_state()) == native.state_facts(native.initial_state())


def test_unknown_rule_sheet() -> None:
    with pytest.raises(ggp.UnknownGameError, match="no rule sheet for 'chess'"):
        rules_text("chess")


def test_cli_prints_the_rule_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "bomberman2p"]) == 0
    assert capsys.readouterr().out == rules_text("bomberman2p")
    assert main(["rules", "chess"]) == 2
    assert "no rule sheet for 'chess'" in capsys.readouterr().err


def test_move_spelling_is_the_sheets() -> None:
    game = builtin("bomberman")
    assert game.parse_move("dropbomb").text == "dropBomb"
    assert game.parse_move("( MOVE  North )").text == "(move north)"
    assert "(blockedNorth 2 1)" in game.state_facts(game.initial_state())


def perft(game: GDLGame, state: ggp.State, depth: int) -> int:
    if depth == 0:
        return 1
    if game.is_terminal(state):
        return 0
    return sum(perft(game, game.next_state(state, joint), depth - 1) for joint in game.joint_moves(state))


@pytest.mark.parametrize(("name", "counts"), [("amazons_8x8", [60, 1232]), ("amazons_10x10", [80, 2176])])
def test_amazons_perft_on_both_rule_sheets(name: str, counts: list[int]) -> None:
    """The published counts (RULES.md), by GGP steps, through the reasoner on ggp's and the shared sheet."""
    for game in (builtin(name), ggp.load(SHARED / "gdl" / f"{name}.kif")):
        assert isinstance(game, GDLGame)
        assert [perft(game, game.initial_state(), d) for d in (1, 2)] == counts
