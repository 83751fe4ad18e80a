"""Leduc hold'em from our GDL-II sheet is OpenSpiel's leduc_poker: the same tree of histories and information
states, the same chips at every end, and the same CFR run."""

from __future__ import annotations

import random
from collections import Counter

import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability, get_all_states

import ggp.rl as rl
from ggp.gdl.examples import load_example

#: OpenSpiel's cards 0..5 by the sheet's names.
CARDS = ("j1", "j2", "q1", "q2", "k1", "k2")
#: The sheet's goals are 50 + 3 x the chips won.
UNIT = 3


@pytest.fixture(scope="module")
def games() -> tuple[pyspiel.Game, pyspiel.Game]:
    """(ours through the adapter, OpenSpiel's own)."""
    return rl.openspiel_game(load_example("leduc_holdem"), goal_unit=UNIT), pyspiel.load_game("leduc_poker")


def tree(game: pyspiel.Game) -> tuple[dict, set[str]]:
    """(histories, information states at decision nodes) of a game, as OpenSpiel counts them."""
    states = get_all_states.get_all_states(game, include_terminals=True, include_chance_states=True)
    infos = {s.information_state_string() for s in states.values() if not s.is_terminal() and not s.is_chance_node()}
    return states, infos


def meaning(state: pyspiel.State, action: int) -> str:
    """What an action does, in words both games share: a card's name for chance, else fold, call or raise."""
    text = state.action_to_string(state.current_player(), action)
    if state.is_chance_node():
        if text.startswith("Chance outcome:"):  # OpenSpiel's
            return CARDS[int(text.split(":")[1])]
        return text.strip("()").split()[1]  # ours: (deal q2)
    return text.lower()


def choices(state: pyspiel.State) -> dict[str, int]:
    return {meaning(state, a): a for a in state.legal_actions()}


def same_node(ours: pyspiel.State, native: pyspiel.State) -> None:
    """The two nodes agree on whether the game is over, who moves, what can be done, and with what chance."""
    assert ours.is_terminal() == native.is_terminal()
    if native.is_terminal():
        assert ours.returns() == pytest.approx(native.returns(), abs=1e-12)
        return
    assert ours.is_chance_node() == native.is_chance_node()
    assert ours.current_player() == native.current_player()
    assert choices(ours).keys() == choices(native).keys()
    if native.is_chance_node():
        assert sorted(p for _, p in ours.chance_outcomes()) == pytest.approx(
            sorted(p for _, p in native.chance_outcomes())
        )


def test_our_leduc_has_openspiel_s_histories_and_information_states(games) -> None:
    (ours_states, ours_infos), (native_states, native_infos) = tree(games[0]), tree(games[1])
    assert len(native_states) == 9457 and len(native_infos) == 936  # leduc_poker as OpenSpiel counts it
    assert (len(ours_states), len(ours_infos)) == (len(native_states), len(native_infos))


def test_every_history_matches_and_the_information_states_partition_them_alike(games) -> None:
    """Walk both trees side by side: each node agrees (every end paying the same chips), and two decision
    nodes share an information state in ours exactly when they do in OpenSpiel's."""
    pairs: dict[str, str] = {}
    back: dict[str, str] = {}
    ends: Counter[float] = Counter()

    def walk(ours: pyspiel.State, native: pyspiel.State) -> None:
        same_node(ours, native)
        if native.is_terminal():
            ends[native.returns()[0]] += 1
            return
        if not native.is_chance_node():
            mine, theirs = ours.information_state_string(), native.information_state_string()
            assert pairs.setdefault(theirs, mine) == mine and back.setdefault(mine, theirs) == theirs
        ours_by_meaning = choices(ours)
        for what, action in choices(native).items():
            walk(ours.child(ours_by_meaning[what]), native.child(action))

    walk(games[0].new_initial_state(), games[1].new_initial_state())
    assert len(pairs) == len(back) == 936
    assert sum(ends.values()) == 5520
    # the ends reach the biggest wins and losses (13 chips), the smallest (1) and split pots (0)
    assert {-13.0, -1.0, 0.0, 1.0, 13.0} <= set(ends) and max(ends) == 13.0 and min(ends) == -13.0


def test_random_plays_pay_the_same_chips_on_both(games) -> None:
    rng = random.Random(2024)
    endings: Counter[str] = Counter()
    for _ in range(300):
        ours, native = games[0].new_initial_state(), games[1].new_initial_state()
        while True:
            same_node(ours, native)
            if native.is_terminal():
                break
            what = meaning(native, rng.choice(native.legal_actions()))
            ours.apply_action(choices(ours)[what])
            native.apply_action(choices(native)[what])
        chips = native.returns()[0]
        endings["fold" if "Fold" in str(native) else "split pot" if chips == 0 else "showdown"] += 1
    assert min(endings.values()) >= 10 and len(endings) == 3  # the plays end every way


def test_cfr_through_the_adapter_matches_cfr_on_openspiel_s_leduc(games) -> None:
    solvers = [cfr.CFRSolver(g) for g in games]
    for _ in range(5):
        for solver in solvers:
            solver.evaluate_and_update_policy()
    ours, native = (exploitability.nash_conv(g, s.average_policy()) for g, s in zip(games, solvers, strict=True))
    assert native > 0.5  # far from equilibrium yet: agreement here is not two numbers near zero
    assert ours == pytest.approx(native, rel=0.01)
