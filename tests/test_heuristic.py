"""The material heuristic: facts counted in groups, fitted on random games, used only where it predicts, and
blended with the rollouts at the search's leaves."""

from __future__ import annotations

import numpy as np
import pytest

import ggp
from conftest import SHARED
from ggp.agents.heuristic import (
    MIN_EXPLAINED,
    Material,
    feature_groups,
    find_material,
    find_pieces,
    fit,
    piece_evaluation,
    sample_states,
)
from ggp.agents.mcts import MCTSAgent
from ggp.agents.uct import UCTSearch
from ggp.agents.uct_loop import _back_up, _piece_prior, _piece_shift
from ggp.agents.uct_tree import Options
from ggp.gdl.game import from_text

BREAKTHROUGH = SHARED / "corpus" / "kif" / "breakthroughSmall.kif"

# Goals fixed whatever is played: nothing in a state can predict them.
_FIXED = (
    "(role a) (role b) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3) "
    "(<= (legal ?r x) (role ?r)) (<= (legal ?r y) (role ?r)) "
    "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n)) (<= (next (took ?r)) (does ?r x)) "
    "(<= terminal (true (step 3))) (goal a 50) (goal b 50)"
)


def test_facts_are_counted_by_predicate_by_argument_and_by_pairs_of_arguments() -> None:
    facts = ["(cell 1 1 black)", "(cell 1 1 white)", "(cell 1 2 white)", "(cell 2 2 white)", "(control white)"]
    groups = feature_groups(facts)
    rows = {tuple(np.flatnonzero(row)) for row in groups}
    assert (1, 2, 3) in rows  # (cell ?x ?y white): the white pieces
    assert (2, 3) in rows  # (cell ?x 2 ?p): whatever stands on row 2
    assert (2,) in rows  # (cell 1 2 white) is a pair of argument values: x = 1 and p = white, with y = 2 alone
    assert (4,) in rows  # (control white)
    assert groups.shape[1] == len(facts)


def test_breakthrough_material_is_found_and_predicts_random_games_better_than_a_rollout() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    states, goals, again = sample_states(game, 1500, seed=0)  # a count of games, not a time: any machine alike
    material = fit(states, goals, again, feature_groups(list(game.base_facts)))
    assert material is not None and material.explained >= MIN_EXPLAINED
    found = find_material(game, seconds=0.5, seed=0)  # what the player calls: a time, so maybe too few games
    assert found is None or found.explained >= MIN_EXPLAINED
    # On fresh random games: the evaluation of a state predicts its game's outcome better than one more
    # random game from it does (what one rollout at a leaf would say).
    states, goals, again = sample_states(game, 2000, seed=99)
    white = game.roles.index("white")
    values = np.array([material.value(s)[white] for s in states])
    assert np.corrcoef(values, goals[:, white])[0, 1] > np.corrcoef(again[:, white], goals[:, white])[0, 1]
    assert values.min() >= 0.0 and values.max() <= 1.0


def test_no_heuristic_where_the_state_tells_nothing_of_the_goals() -> None:
    game = from_text(_FIXED)
    states, goals, again = sample_states(game, 300, seed=1)
    assert len(states) > 0 and (goals == 50).all() and (again == 50).all()
    assert fit(states, goals, again, feature_groups(list(game.base_facts))) is None
    assert find_material(game, seconds=0.5) is None
    assert find_material(ggp.load("wallmaze")) is None  # a built-in game: its players have their own


def test_a_search_blending_material_keeps_its_statistics_whole() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    material = fit(*sample_states(game, 1500, seed=1), feature_groups(list(game.base_facts)))
    assert material is not None
    state = game.initial_state()
    for batch in (None, 1):  # the kernel's bit-parallel batch of rollouts, and one leaf at a time
        tree = UCTSearch(game, capacity=20_000, seed=2, material=material, batch=batch)
        result = tree.search(state, sims=3000)
        assert all(int(v.sum()) == result.simulations for v in result.visits)
        assert all(0.0 <= float(x) <= 100.0 for v in result.values for x in v)
    wrong = Material(weights=np.zeros((2, 3)), bias=np.zeros(2), explained=1.0, samples=1)
    with pytest.raises(ValueError, match="does not fit"):
        UCTSearch(game, capacity=100, material=wrong)


def test_the_general_player_looks_for_material_at_the_start_clock_when_told_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ggp.agents import mcts

    game = ggp.load(str(BREAKTHROUGH))
    fitted = fit(*sample_states(game, 1500, seed=3), feature_groups(list(game.base_facts)))
    asked: list[float] = []

    def look(game: ggp.Game, seconds: float, seed: int) -> Material | None:
        asked.append(seconds)
        return fitted  # as found in time on an idle machine; the test does not depend on the machine's load

    monkeypatch.setattr(mcts, "find_material", look)
    on = MCTSAgent(sims=100, seed=3, material=True)
    on.start(game, "white")
    assert asked == [mcts.MATERIAL_SECONDS] and on.found_material is fitted is not None
    assert on._trees[0].params.shape[0] > 1  # the rollouts blend it in
    off = MCTSAgent(sims=100, seed=3)
    off.start(game, "white")
    assert off.found_material is None
    assert off._trees[0].params.shape[0] == 1  # plain rollouts
    assert str(off.select_move(game.initial_state())) in {
        str(m) for m in game.legal_moves(game.initial_state(), "white")
    }


# --- progressive bias: captures start with virtual visits -------------------------------------------------------


def test_a_roles_pieces_are_the_board_facts_that_name_it() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    pieces = find_pieces(game)
    assert pieces is not None
    facts = list(game.base_facts)
    for r, role in enumerate(game.roles):
        named = {f for f in facts if f.startswith("(cell ") and f.endswith(f" {role})")}
        assert {facts[i] for i in np.flatnonzero(pieces[r])} == named
    assert not any(pieces[:, facts.index("(control white)")])  # whose turn it is is no piece
    assert find_pieces(from_text(_FIXED)) is None  # no fact names a role
    kif = SHARED / "corpus" / "kif"
    assert find_pieces(ggp.load(str(kif / "connectFour.kif"))) is None  # stones placed, none on the board at first
    assert find_pieces(ggp.load(str(kif / "tron_10x10.kif"))) is None  # one token a player: no army to count


def _capture_position(game, pieces):
    # A position of a random game where white, to move, can take a black piece; and which moves take one.
    state = game.initial_state()
    rng = np.random.default_rng(3)
    while True:
        legal = [game.legal_moves(state, r) for r in game.roles]
        if len(legal[0]) > 1:
            black = [pieces[1] @ (game.array_of(game.next_state(state, [m, legal[1][0]])) != 0) for m in legal[0]]
            if min(black) < max(black):
                return state, [b < max(black) for b in black]
        state = game.next_state(state, [m[rng.integers(len(m))] for m in legal])
        assert not game.is_terminal(state)


def test_a_capture_starts_with_virtual_visits_worth_more_than_a_quiet_move() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    pieces = find_pieces(game)
    assert pieces is not None and game.roles == ("white", "black")
    state, takes = _capture_position(game, pieces)
    assert any(takes) and not all(takes)
    tree = UCTSearch(game, capacity=10_000, seed=1, pieces=pieces, bias=5)
    tree.reset(state)
    tree.run(1)  # expands the root: each move's first statistics, then one simulation
    n = int(tree.counts[0, 0])
    visits = tree.act_visits[tree.offsets[0, 0] :][:n]
    value = tree.act_value[tree.offsets[0, 0] :][:n]
    assert n == len(takes)
    assert int(visits.sum()) == 5 * sum(takes) + 1
    white, black = pieces @ (game.array_of(state) != 0)
    # worth more than the even value a quiet move is assumed to have while the root's own is not credible
    prior = _piece_prior(np.array([[white, black], [white, black - 1]]), 0, 0.5)
    assert prior > 0.5
    for i in np.flatnonzero(takes):  # five visits worth the prior each, and the one simulation may be there
        assert visits[i] in (5, 6)
        simulated = value[i] - 5 * prior  # what the simulation added, if it went there
        assert -1e-5 <= simulated <= visits[i] - 5 + 1e-5
    plain = UCTSearch(game, capacity=10_000, seed=1)
    plain.reset(state)
    plain.run(1)
    assert int(plain.act_visits[plain.offsets[0, 0] :][:n].sum()) == 1  # without bias only the simulation


def test_a_move_is_worth_what_it_gains_the_mover_over_the_average_role() -> None:
    base = 0.4  # the root's value for the mover
    assert _piece_prior(np.array([[12.0, 12.0], [12.0, 11.0]]), 0, base) > base  # a capture
    assert _piece_prior(np.array([[12.0, 12.0], [11.0, 12.0]]), 0, base) < base  # a piece lost
    assert _piece_prior(np.array([[12.0, 12.0], [12.0, 12.0]]), 0, base) == -1.0  # a quiet move: no prior
    assert _piece_prior(np.array([[5.0, 5.0], [5.0, 4.0]]), 0, base) > _piece_prior(
        np.array([[12.0, 12.0], [12.0, 11.0]]), 0, base
    )  # a piece counts more where fewer are left


def test_the_general_player_biases_its_trees_by_the_pieces_it_finds_when_told_to() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    agent = MCTSAgent(threads=1, bias=4, ponder=False, dfs=False, seed=0)
    agent.start(game, "white", start_clock=None, play_clock=None)
    assert agent.found_pieces is not None and (agent.found_pieces == find_pieces(game)).all()
    assert agent._tree is not None and agent._tree.bias == 4 and (agent._tree.pieces == agent.found_pieces).all()
    off = MCTSAgent(threads=1, ponder=False, dfs=False, seed=0)
    off.start(game, "white", start_clock=None, play_clock=None)
    assert off.found_pieces is None and off._tree is not None and off._tree.bias == 0


def test_progressive_bias_needs_pieces_that_fit_the_game() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    with pytest.raises(ValueError, match="pieces"):
        UCTSearch(game, capacity=10_000, bias=5)
    with pytest.raises(ValueError, match="shape"):
        UCTSearch(game, capacity=10_000, bias=5, pieces=np.ones((2, 3)))
    with pytest.raises(ValueError, match="bias"):
        UCTSearch(game, capacity=10_000, bias=-1, pieces=find_pieces(game))
    with pytest.raises(ValueError, match="bias"):
        UCTSearch(game, capacity=10_000, bias=0.5, pieces=find_pieces(game))  # type: ignore[arg-type]
    pieces = find_pieces(game)
    assert pieces is not None
    with pytest.raises(ValueError, match=">= 0"):
        UCTSearch(game, capacity=10_000, displace=True, pieces=-pieces)
    with pytest.raises(ValueError, match="at most"):
        UCTSearch(game, capacity=10_000, displace=True, pieces=pieces * 1e9)


# --- Sancho's two-role piece heuristic: values displaced on the way up ----------------------------------------


def test_a_change_of_balance_is_a_share_for_the_side_that_gained() -> None:
    assert _piece_shift(np.array([[12.0, 12.0], [12.0, 11.0]])) > 0.5  # role 0 took a piece
    assert _piece_shift(np.array([[12.0, 12.0], [11.0, 12.0]])) < 0.5  # role 1 took one
    assert _piece_shift(np.array([[12.0, 12.0], [12.0, 12.0]])) == 0.5
    taken = _piece_shift(np.array([[12.0, 12.0], [12.0, 11.0]]))
    assert _piece_shift(np.array([[12.0, 11.0], [12.0, 12.0]])) == pytest.approx(1 - taken, abs=0.01)


def test_a_value_backed_up_through_a_capture_is_displaced_towards_the_capturer_at_every_step_above_it() -> None:
    # A path root -> a -> b -> leaf (nodes 0, 1, 2, 3), one move for each of two roles at each step; the step
    # into node 2 was role 0's capture (hval 0.6: every value through it moves a fifth of the way to role 0).
    path = np.array([[0, 0, 0, 1], [1, 0, 0, 2], [2, 0, 0, 3]], dtype=np.int64)
    offsets = np.array([[0, 1], [2, 3], [4, 5], [6, 7]], dtype=np.int64)
    hval = np.array([0.5, 0.5, 0.6, 0.5])
    visits, act_visits, act_value = np.zeros(4, np.int64), np.zeros(8, np.int32), np.zeros(8, np.float32)
    opts = Options(0.7, True, False, True, 0.0, True)
    _back_up(3, 3, False, False, path, np.array([0.5, 0.5]), visits, offsets, act_visits, act_value, hval, opts)
    assert list(visits) == [1, 1, 1, 1] and list(act_visits[:6]) == [1] * 6
    assert act_value[4:6] == pytest.approx([0.5, 0.5])  # the step into the leaf: below the capture
    assert act_value[2:4] == pytest.approx([0.6, 0.4])  # the step into the capture, and every step above
    assert act_value[0:2] == pytest.approx([0.6, 0.4])
    off = opts._replace(displace=False)
    act_value[:] = 0
    _back_up(3, 3, False, False, path, np.array([0.5, 0.5]), visits, offsets, act_visits, act_value, hval, off)
    assert act_value[0:2] == pytest.approx([0.5, 0.5])


def test_a_tree_that_displaces_marks_the_nodes_a_capture_made() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    pieces = find_pieces(game)
    state, takes = _capture_position(game, pieces)
    tree = UCTSearch(game, capacity=20_000, seed=2, pieces=pieces, displace=True)
    tree.reset(state)
    tree.run(3000)
    n = int(tree.counts[0, 0])
    kids = tree.child[tree.coff[0] :][:n]  # the root's children, one per white move (black has one)
    assert (kids >= 0).all()
    for i, node in enumerate(kids):
        assert (tree.hval[node] > 0.5) if takes[i] else (tree.hval[node] == 0.5)
    with pytest.raises(ValueError, match="roles"):
        UCTSearch(ggp.load(str(SHARED / "corpus" / "kif" / "tictactoe_3player.kif")), capacity=10_000, displace=True)


def test_a_batch_of_leaves_is_displaced_as_one_leaf_is() -> None:
    # One waiting leaf, a finished game (its rollout is its goals), two steps above it: root (0) -> 1 -> 2,
    # the step into node 2 a capture by the loser (hval towards it): both steps get the displaced value.
    game = ggp.load(str(BREAKTHROUGH))
    tree = UCTSearch(game, capacity=1000, pieces=find_pieces(game), displace=True)
    state, rng = game.initial_state(), np.random.default_rng(0)
    while not game.is_terminal(state):
        legal = [game.legal_moves(state, r) for r in game.roles]
        state = game.next_state(state, [m[rng.integers(len(m))] for m in legal])
    goals = game.goals(state)
    winner = 0 if goals[0] > goals[1] else 1
    tree.bstates[0] = game.array_of(state)
    tree.bpath[:2] = [[0, 0, 0, 1], [1, 0, 0, 2]]
    tree.bstart[:2], tree.bdepth[0] = (0, 2), 2
    tree.offsets[:3] = [[0, 1], [2, 3], [4, 5]]
    act_value = tree.act_value
    act_value[:6] = 0
    tree.hval[:3] = [0.5, 0.5, 0.4 if winner == 0 else 0.6]  # a fifth of the way to the loser
    opts = Options(0.7, True, False, True, 0.0, True)
    score = tree._score_batch
    score(tree.ctx, tree.rng, tree.params, 1, tree._tree, tree._waiting, opts)
    displaced = [0.8, 0.2] if winner == 0 else [0.2, 0.8]
    assert act_value[2:4] == pytest.approx(displaced) and act_value[0:2] == pytest.approx(displaced)
    act_value[:6] = 0
    score(tree.ctx, tree.rng, tree.params, 1, tree._tree, tree._waiting, opts._replace(displace=False))
    assert act_value[0:2] == pytest.approx([g / 100 for g in goals])


# --- implicit minimax ----------------------------------------------------------------------------


def test_a_piece_evaluation_gives_the_side_ahead_its_lead_over_the_average() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    pieces = find_pieces(game)
    evaluation = piece_evaluation(pieces, game.initial_array())
    start = game.initial_array()
    assert evaluation.value(start) == pytest.approx([0.5, 0.5])  # even armies
    state, takes = _capture_position(game, pieces)
    taken = game.array_of(
        game.next_state(
            state, [game.legal_moves(state, "white")[takes.index(True)], game.legal_moves(state, "black")[0]]
        )
    )
    white, black = evaluation.value(taken)
    assert white > 0.5 > black and white + black == pytest.approx(1.0)


def _minimax_of(tree: UCTSearch, node: int) -> np.ndarray | None:
    # What a node's minimax value should be from its children made so far (None: none made).
    counts = tree.counts[node]
    movers = np.flatnonzero(counts > 1)
    kids = tree.child[tree.coff[node] :][: int(np.prod(counts))]
    kids = kids[kids >= 0]
    if kids.size == 0:
        return None
    values = np.array([tree.pval[k] if tree.proven[k] else tree.mm[k] for k in kids])
    if movers.size > 1:
        return values.mean(axis=0)
    return values[int(np.argmax(values[:, movers[0] if movers.size else 0]))]


def test_every_node_holds_the_minimax_of_its_childrens_evaluations() -> None:
    # Without proofs (solve off), only terminal nodes are exact: every expanded node's value is then the best
    # child's for the role choosing there, whatever order the simulations made them in.
    game = ggp.load(str(BREAKTHROUGH))
    pieces = find_pieces(game)
    evaluation = piece_evaluation(pieces, game.initial_array())
    state, _ = _capture_position(game, pieces)
    tree = UCTSearch(game, capacity=20_000, seed=3, solve=False, minimax=0.5, evaluation=evaluation)
    tree.reset(state)
    tree.run(3000)
    checked = 0
    for node in range(tree.nodes):
        if tree.expanded[node] and not tree.proven[node]:
            want = _minimax_of(tree, node)
            if want is not None:
                assert tree.mm[node] == pytest.approx(want), node
                checked += 1
    assert checked > 100
    assert tree.mm[0][0] >= evaluation.value(game.array_of(state))[0]  # white, to move, can take a piece


def test_implicit_minimax_steers_the_selection_to_the_move_its_minimax_value_favours() -> None:
    from ggp.agents.uct_tree import _ucb_pick
    from ggp.core.kernels import rng_state

    visits = np.array([10, 10], dtype=np.int32)
    values = np.array([6.0, 5.0], dtype=np.float32)  # means 0.6 and 0.5 for role 1, the chooser
    child = np.array([1, 2], dtype=np.int32)
    proven, pval = np.zeros(3, dtype=np.bool_), np.zeros((3, 2))
    mm = np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])  # by minimax, the first move loses for role 1
    rave = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.float32), 0.0

    def pick(minimax: float) -> int:
        rng = rng_state(1)
        return int(_ucb_pick(visits, values, 0, 2, float(np.log(20)), 0.0, rng, child, 0, proven, pval, -1, *rave, mm, 1, minimax))  # fmt: skip

    assert pick(0.0) == 0  # by the samples alone
    assert pick(0.5) == 1  # mixed: 0.3 against 0.75


def test_the_general_player_backs_up_an_evaluation_where_it_finds_one() -> None:
    game = ggp.load(str(BREAKTHROUGH))
    agent = MCTSAgent(sims=300, seed=1, minimax=0.4)
    agent.start(game, "white")
    assert agent.found_evaluation is not None and agent._tree is not None
    assert agent._tree.minimax == 0.4 and agent._tree.mm.shape == (agent._tree.states.shape[0], 2)
    assert agent.select_move(game.initial_state()) in game.legal_moves(game.initial_state(), "white")
    plain = MCTSAgent(sims=300, seed=1)
    plain.start(game, "white")
    assert plain._tree is not None and plain._tree.minimax == 0.0 and plain._tree.mm.shape == (1, 2)
    with pytest.raises(ValueError, match="minimax and rave"):
        MCTSAgent(minimax=0.4, rave=0.05)
    with pytest.raises(ValueError, match="evaluation"):
        UCTSearch(game, capacity=1000, minimax=0.4)
