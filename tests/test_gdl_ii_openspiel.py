"""A GDL-II sheet as an OpenSpiel game: our Kuhn poker has the tree of OpenSpiel's own, and CFR solves it."""

from __future__ import annotations

import pyspiel
from open_spiel.python.algorithms import cfr, expected_game_score, exploitability, get_all_states

import ggp.rl as rl
from ggp.gdl.examples import load_example


def tree(game):
    """(histories, information states at decision nodes) of a game, as OpenSpiel counts them."""
    states = get_all_states.get_all_states(game, include_terminals=True, include_chance_states=True)
    infos = {s.information_state_string() for s in states.values() if not s.is_terminal() and not s.is_chance_node()}
    return states, infos


def kuhn():
    return rl.openspiel_game(load_example("kuhn_poker"), goal_unit=25)


def test_kuhn_poker_from_our_sheet_has_openspiel_s_histories_and_information_states() -> None:
    ours, native = tree(kuhn()), tree(pyspiel.load_game("kuhn_poker"))
    assert (len(ours[0]), len(ours[1])) == (len(native[0]), len(native[1])) == (58, 12)


def test_each_information_state_has_one_tensor_and_no_two_share_one() -> None:
    states, infos = tree(kuhn())
    tensors: dict[str, set[tuple[float, ...]]] = {}
    for s in states.values():
        if not s.is_terminal() and not s.is_chance_node():
            tensors.setdefault(s.information_state_string(), set()).add(tuple(s.information_state_tensor()))
    assert all(len(t) == 1 for t in tensors.values())
    assert len({next(iter(t)) for t in tensors.values()}) == len(infos)


def test_a_player_knows_its_own_card_and_never_the_other_s() -> None:
    game = load_example("kuhn_poker")
    states, _ = tree(kuhn())
    checked = 0
    for s in states.values():
        if s.is_terminal() or s.is_chance_node():
            continue
        me, other = game.players[s.current_player()], game.players[1 - s.current_player()]
        facts = game.state_facts(s.game_state())
        mine = next(f.split()[-1][:-1] for f in facts if f.startswith(f"(holds {me} "))
        theirs = next(f.split()[-1][:-1] for f in facts if f.startswith(f"(holds {other} "))
        known = s.information_state_string()
        assert f"(your_card {mine})" in known and theirs not in known
        checked += 1
    assert checked == 24  # 6 deals x 4 decision nodes


def test_openspiel_s_random_simulation_checks_pass() -> None:
    for name, unit in (("kuhn_poker", 25), ("montyhall", 50)):
        pyspiel.random_sim_test(rl.openspiel_game(load_example(name), goal_unit=unit), 30, False, False)


def test_cfr_through_the_adapter_solves_kuhn_poker_as_on_openspiel_s_own_game() -> None:
    ours, native = kuhn(), pyspiel.load_game("kuhn_poker")
    solvers = [cfr.CFRSolver(ours), cfr.CFRSolver(native)]
    for _ in range(500):
        for solver in solvers:
            solver.evaluate_and_update_policy()
    gaps = [exploitability.nash_conv(g, s.average_policy()) for g, s in zip((ours, native), solvers, strict=True)]
    assert gaps[0] < 0.005 and abs(gaps[0] - gaps[1]) < 1e-9
    value = expected_game_score.policy_value(ours.new_initial_state(), [solvers[0].average_policy()] * 2)
    assert abs(value[0] - (-1 / 18)) < 0.005


def test_pettingzoo_observes_each_player_s_information_only() -> None:
    from pettingzoo.test import api_test

    for name in ("kuhn_poker", "montyhall"):
        api_test(rl.aec_env(load_example(name)), num_cycles=100)
    seen: dict[str, set[tuple[float, ...]]] = {}
    for seed in range(40):
        env = rl.aec_env(load_example("kuhn_poker"), goal_unit=25)
        env.reset(seed=seed)
        facts = load_example("kuhn_poker").state_facts(env.state_now())
        mine = next(f for f in facts if f.startswith("(holds first "))
        seen.setdefault(mine, set()).add(tuple(env.observe("first")["observation"]))
        assert env.agent_selection == "first" and env.observe("second")["action_mask"].sum() == 0
    # the first player's observation depends on its own card only, whatever the second holds
    assert len(seen) == 3 and all(len(v) == 1 for v in seen.values())


def test_the_web_app_refuses_a_gdl_ii_sheet_until_its_pages_show_each_seat_its_view() -> None:
    import pytest

    from ggp.gdl.examples import example_text
    from ggp.web.catalog import _load_text

    with pytest.raises(ValueError, match="GDL-II sheet"):
        _load_text(example_text("montyhall"), "montyhall")
