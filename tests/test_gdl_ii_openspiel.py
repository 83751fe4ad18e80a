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


# Matching pennies with hidden coins: both choose in one step; each sees only its own coin until the end.
PENNIES = """
(role even) (role odd)
(side heads) (side tails)
(init (round 1))
(<= (legal ?r (show ?s)) (role ?r) (side ?s) (true (round 1)))
(<= (next (shown ?r ?s)) (does ?r (show ?s)))
(<= (next done) (true (round 1)))
(<= terminal (true done))
(<= same (true (shown even ?s)) (true (shown odd ?s)))
(<= (goal even 100) same) (<= (goal odd 0) same)
(<= (goal even 0) (not same)) (<= (goal odd 100) (not same))
(<= (sees ?r (mine ?s)) (does ?r (show ?s)))
"""


def test_a_move_made_earlier_in_a_simultaneous_step_stays_hidden_from_the_players_after_it() -> None:
    from ggp.gdl import from_text

    game = rl.openspiel_game(from_text(PENNIES, "hidden_pennies"))
    heads, tails = game.new_initial_state(), game.new_initial_state()
    assert heads.current_player() == 0
    heads.apply_action(heads.legal_actions()[0])
    tails.apply_action(tails.legal_actions()[1])
    assert heads.current_player() == tails.current_player() == 1
    assert heads.information_state_string() == tails.information_state_string()
    assert heads.information_state_tensor() == tails.information_state_tensor()
    # and CFR finds the mixed equilibrium: half heads, half tails
    solver = cfr.CFRSolver(game)
    for _ in range(200):
        solver.evaluate_and_update_policy()
    assert exploitability.nash_conv(game, solver.average_policy()) < 0.02


def test_a_game_made_again_with_another_scale_leaves_the_first_as_it_was() -> None:
    in_chips, halves = kuhn(), rl.openspiel_game(load_example("kuhn_poker"), goal_unit=50)
    for game, top in ((in_chips, 2.0), (halves, 1.0)):
        assert game.max_utility() == top
        state = game.new_initial_state()
        while not state.is_terminal():  # the first deals, then both bet: a showdown for two chips
            by_text = {state.action_to_string(state.current_player(), a): a for a in state.legal_actions()}
            state.apply_action(by_text.get("bet", state.legal_actions()[0]))
        assert max(state.returns()) == top


def test_a_public_observer_sees_no_card() -> None:
    state = kuhn().new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    public = pyspiel.IIGObservationType(
        perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
    )
    observer = kuhn().make_py_observer(public)
    assert observer.string_from(state, 0) == "step 2" and not observer.tensor.any()
