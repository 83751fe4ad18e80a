"""GDL-II: chance and hidden information, from the rule sheet to OpenSpiel's CFR and a player that knows what it
knows. The sheets are ggp's own examples (ggp/gdl/examples)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from ggp.agents.hidden import Belief, HiddenPlayer, RandomHiddenPlayer
from ggp.core.errors import GGPError
from ggp.core.information import Information, Seen, chance_move
from ggp.gdl import ProverGame, from_text
from ggp.gdl.examples import EXAMPLES, example_text, load_example
from ggp.match.hidden import play_hidden_match
from ggp.match.loop import Steps


def walk(game, state):
    """Every (state, joint move, next state) of a small game, depth first."""
    if game.is_terminal(state):
        return
    import itertools

    for joint in itertools.product(*(game.legal_moves(state, r) for r in game.roles)):
        after = game.play(state, joint)
        yield state, joint, after
        yield from walk(game, after)


def test_the_examples_are_gdl_ii_and_every_role_but_chance_a_player() -> None:
    for name in EXAMPLES:
        game = load_example(name)
        assert game.hidden_information and game.chance_role == ("random" if "random" in game.roles else None)
        assert game.players == tuple(r for r in game.roles if r != "random")
    assert load_example("kuhn_poker").chance_role == "random"


def test_a_gdl_i_sheet_is_unchanged() -> None:
    game = from_text(
        "(role p) (init s) (<= (legal p go) (true s)) (<= (next t) (does p go)) (<= terminal (true t)) (goal p 100)",
        "plain",
    )
    assert not game.hidden_information and game.chance_role is None and game.players == ("p",)
    after = game.next_state(game.initial_state(), ["go"])
    assert game.percepts(after, "p") == () and game.state_facts(after) == ["t"]


def test_kuhn_poker_deals_one_card_per_chance_step_and_each_player_sees_only_its_own() -> None:
    game = load_example("kuhn_poker")
    s = game.initial_state()
    assert sorted(str(m) for m in game.legal_moves(s, "random")) == ["(deal jack)", "(deal king)", "(deal queen)"]
    s = game.next_state(s, ["noop", "noop", "(deal king)"])
    assert game.percepts(s, "first") == ("(your_card king)",) and game.percepts(s, "second") == ()
    assert "(deal king)" not in [str(m) for m in game.legal_moves(s, "random")]  # one deck
    s = game.next_state(s, ["noop", "noop", "(deal jack)"])
    assert game.percepts(s, "second") == ("(your_card jack)",) and game.percepts(s, "first") == ()
    s = game.next_state(s, ["bet", "noop", "noop"])
    assert game.percepts(s, "second") == ("(did first bet)",)
    s = game.next_state(s, ["noop", "pass", "noop"])
    assert game.is_terminal(s) and game.goals(s)[:2] == (75, 25)  # the second folds: one chip to the first


def test_no_player_ever_perceives_the_other_players_card() -> None:
    game = load_example("kuhn_poker")
    transitions = 0
    for _, joint, after in walk(game, game.initial_state()):
        transitions += 1
        dealt = {r: str(m)[len("(deal ") : -1] for r, m in zip(game.roles, joint, strict=True) if r == "random"}
        for role in game.players:
            for percept in game.percepts(after, role):
                if percept.startswith("(your_card"):
                    card = percept[len("(your_card ") : -1]
                    assert card == dealt["random"]
                    assert game.state_facts(after).count(f"(holds {role} {card})") == 1
    assert transitions == 57  # every node of the tree but the root is reached once


def test_the_prover_and_the_propnet_give_the_same_percepts() -> None:
    text = example_text("kuhn_poker")
    net, prover = load_example("kuhn_poker"), ProverGame(text, "kuhn_prover")
    rng = random.Random(5)
    for _ in range(20):
        a, b = net.initial_state(), prover.initial_state()
        while not net.is_terminal(a):
            joint = [str(rng.choice(net.legal_moves(a, r))) for r in net.roles]
            a, b = net.next_state(a, joint), prover.next_state(b, joint)
            for role in net.players:
                assert net.percepts(a, role) == prover.percepts(b, role)
        assert prover.is_terminal(b) and net.goals(a) == prover.goals(b)


def test_the_one_step_engine_plays_chance_uniformly_from_its_own_generator() -> None:
    game = load_example("montyhall")
    seen = Counter()
    for seed in range(300):
        steps = Steps(game, random.Random(seed))
        steps.take_chance()
        steps.settle("candidate", game.parse_move("(choose 1)"))
        steps.play()
        seen[next(f for f in game.state_facts(steps.state) if f.startswith("(car"))] += 1
    assert set(seen) == {"(car 1)", "(car 2)", "(car 3)"} and min(seen.values()) > 70


def test_information_is_a_role_s_own_moves_and_percepts() -> None:
    game = load_example("montyhall")
    s = game.initial_state()
    joint = [game.parse_move("(choose 2)"), game.parse_move("(hide_car 2)")]
    s = game.next_state(s, joint)
    info = Information("candidate").after(game, s, joint)
    joint = [game.parse_move("noop"), chance_move(game, s, random.Random(1))]
    s = game.next_state(s, joint)
    info = info.after(game, s, joint)
    assert info.steps[0] == Seen(game.parse_move("(choose 2)"))
    assert info.steps[1].percepts in (("(open_door 1)",), ("(open_door 3)",))
    assert "hide_car" not in info.text()  # chance's move is not the candidate's to know


def test_a_belief_weights_each_history_by_its_chance() -> None:
    game = load_example("montyhall")
    for weighted, expected in ((True, {"(car 2)": 2 / 3, "(car 1)": 1 / 3}), (False, {"(car 2)": 0.5, "(car 1)": 0.5})):
        belief = Belief(game, "candidate", weighted=weighted, rng=random.Random(0))
        belief.update(Seen(game.parse_move("(choose 1)")))
        belief.update(Seen(game.parse_move("noop"), ("(open_door 3)",)))
        got = {game.state_facts(s)[0]: w for s, w in belief.hypotheses()}
        assert got == pytest.approx(expected)


def test_a_belief_that_lost_the_truth_is_rebuilt_from_the_start() -> None:
    game = load_example("kuhn_poker")
    belief = Belief(game, "second", size=1, rng=random.Random(2))
    belief.update(Seen(game.parse_move("noop")))
    belief.update(Seen(game.parse_move("noop"), ("(your_card queen)",)))
    belief.update(Seen(game.parse_move("noop"), ("(did first bet)",)))
    (state,) = [s for s, _ in belief.hypotheses()]
    assert "(holds second queen)" in game.state_facts(state)
    with pytest.raises(ValueError, match="no history"):
        belief.update(Seen(game.parse_move("noop"), ("(did first pass)",)))  # no one acts twice: impossible


def test_the_hidden_information_player_switches_and_wins_two_thirds_of_monty_hall() -> None:
    game = load_example("montyhall")
    wins = Counter()
    for weighted in (True, False):
        for i in range(300):
            player = HiddenPlayer(weighted=weighted, samples=48, playouts=1, seed=i)
            match = play_hidden_match(game, {"candidate": player}, seed=1000 + i)
            wins[weighted] += match.goals[0] == 100
            assert not match.faults
    # 300 games: two thirds is 200 (sd 8); a half is 150
    assert wins[True] >= 175 and 125 <= wins[False] <= 175


def test_a_random_player_finds_its_legal_moves_from_what_it_knows() -> None:
    game = load_example("kuhn_poker")
    for seed in range(30):
        players = {role: RandomHiddenPlayer(seed=seed * 7 + i) for i, role in enumerate(game.players)}
        match = play_hidden_match(game, players, seed=seed)
        assert not match.faults and sum(match.goals[:2]) == 100


def test_compiled_playouts_play_a_gdl_ii_sheet_to_its_end_with_chance_among_the_roles() -> None:
    game = load_example("kuhn_poker")
    goals, lengths, _ = game.random_playouts(500, seed=3)
    assert set(np.unique(lengths)) <= {4, 5} and np.all(goals[:, 0] + goals[:, 1] == 100)


def test_the_kernel_environments_refuse_a_gdl_ii_game_in_words() -> None:
    from ggp.rl.core import RLGame

    with pytest.raises(GGPError, match="GDL-II game"):
        RLGame(load_example("kuhn_poker"))


def test_a_belief_that_cannot_take_a_step_in_is_left_as_it_was() -> None:
    game = load_example("montyhall")
    belief = Belief(game, "candidate", rng=random.Random(0))
    belief.update(Seen(game.parse_move("(choose 1)")))
    before = belief.hypotheses()
    with pytest.raises(ValueError, match="no history"):
        belief.update(Seen(game.parse_move("noop"), ("(open_door 1)",)))  # the host never opens the chosen door
    assert belief.hypotheses() == before and len(belief.steps) == 1
    belief.update(Seen(game.parse_move("noop"), ("(open_door 2)",)))  # and it goes on from there
    assert len(belief.steps) == 2


def test_a_player_told_another_history_starts_its_belief_again() -> None:
    game = load_example("montyhall")
    player = HiddenPlayer(samples=8, playouts=1, seed=1)
    player.start(game, "candidate")
    choose = Seen(game.parse_move("(choose 1)"))
    player.choose(Information("candidate", (choose, Seen(game.parse_move("noop"), ("(open_door 3)",)))))
    again = Information("candidate", (choose, Seen(game.parse_move("noop"), ("(open_door 2)",))))
    assert str(player.choose(again).move) in ("switch", "stay")
    assert [s.percepts for s in player.belief.steps] == [(), ("(open_door 2)",)]  # type: ignore[union-attr]


def test_the_referee_plays_chance_and_refuses_agents_that_would_read_the_state() -> None:
    from ggp.agents import make_agent
    from ggp.agents.hidden import hidden_agent
    from ggp.match.referee import CHANCE_AGENT, Referee

    game = load_example("kuhn_poker")
    with pytest.raises(ValueError, match="hides information"):
        Referee(game).run([make_agent("random"), make_agent("random")])
    agents = [hidden_agent("mcts", seed=1, seconds=0.05), hidden_agent("random", seed=2)]
    record = Referee(game, start_clock=30, play_clock=30, seed=4).run(agents, specs=["mcts", "random"])
    assert record.agents == ("mcts", "random", CHANCE_AGENT) and not list(record.all_faults())
    # the agent decided on what it was told after each step: its own moves and percepts
    views = record.views(game)
    assert agents[0]._information == views["first"]


def test_a_series_of_a_gdl_ii_game_seats_its_players_only() -> None:
    from ggp.match.series import run_series, summarize

    game = load_example("kuhn_poker")
    results = run_series(game, ["mcts:time=0.05", "random"], games=4, swap=True, start_clock=30, play_clock=30)
    totals = [s.goals for s in summarize(["mcts:time=0.05", "random"], results)]
    assert all(len(t) == 4 for t in totals)
    assert all(g1 + g2 == 100 for g1, g2 in zip(totals[0], totals[1], strict=True))  # chance's 0 counted nowhere


def test_determinized_uct_plays_krieg_tic_tac_toe_from_its_belief() -> None:
    from ggp.agents.hidden import DeterminizedUCTPlayer

    game = load_example("krieg_tictactoe")
    for seed in range(2):  # the same player over two matches: a tree per match
        player = DeterminizedUCTPlayer(determinizations=4, simulations=200, seed=seed)
        match = play_hidden_match(game, {"xplayer": player, "oplayer": RandomHiddenPlayer(seed=9)}, seed=seed)
        assert not match.faults and match.goals[0] + match.goals[1] == 100


def test_a_step_with_more_joint_moves_than_the_belief_may_try_is_sampled_and_still_weighed_right() -> None:
    import ggp.agents.hidden as hidden

    game = load_example("montyhall")
    exact = Belief(game, "candidate", rng=random.Random(0))
    sampled = Belief(game, "candidate", rng=random.Random(0))
    steps = [Seen(game.parse_move("(choose 1)")), Seen(game.parse_move("noop"), ("(open_door 3)",))]
    for seen in steps:
        exact.update(seen)
    before = hidden.UPDATE_JOINTS, hidden.MIN_JOINTS
    hidden.UPDATE_JOINTS, hidden.MIN_JOINTS = 2, 2  # chance's three doors, then its one or two, are sampled
    try:
        for seen in steps:
            sampled.update(seen)
    finally:
        hidden.UPDATE_JOINTS, hidden.MIN_JOINTS = before
    cars = {game.state_facts(s)[0] for s, _ in sampled.hypotheses()}
    assert cars <= {"(car 1)", "(car 2)"} and cars  # only histories that give the candidate its information
    assert {game.state_facts(s)[0] for s, _ in exact.hypotheses()} == {"(car 1)", "(car 2)"}


def test_doors_that_would_show_the_state_refuse_a_gdl_ii_game_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    from ggp.cli import main
    from ggp.gdl.examples import example_path
    from ggp.match.selfplay import SelfplayError, run_selfplay

    assert main(["play", str(example_path("kuhn_poker"))]) != 0
    assert "GDL-II game" in capsys.readouterr().err
    with pytest.raises(SelfplayError, match="GDL-II game"):
        run_selfplay(str(example_path("kuhn_poker")), "mcts", games=1, out="/nonexistent/never-written")
