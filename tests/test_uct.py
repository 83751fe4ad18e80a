"""The compiled decoupled-UCT search: root statistics, budgets, and obvious best moves."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import ggp
from conftest import SHARED, race_lost_to_sancho
from ggp.agents.uct import UCTSearch, search, visit_counts
from ggp.core.game import Move

GAMES = ["amazons_10x10", "amazons_8x8", "bomberman", "bomberman2p", "wallmaze"]


@pytest.mark.parametrize("name", GAMES)
def test_every_simulation_visits_one_root_move_per_role(name: str) -> None:
    game = ggp.load(name)
    state = game.initial_state()
    before = game.state_to_json(state)
    result = search(game, state, sims=3000, seed=3)
    assert result.simulations == 3000
    assert 1 < result.nodes <= 3001
    for r, role in enumerate(game.roles):
        assert sorted(result.moves[r]) == sorted(game.legal_moves(state, role))
        assert int(result.visits[r].sum()) == 3000
        assert np.all((result.values[r] >= 0) & (result.values[r] <= 100))
    assert game.state_to_json(state) == before


def test_same_seed_same_search() -> None:
    game = ggp.load("amazons_8x8")
    a = search(game, game.initial_state(), sims=2000, seed=11)
    b = search(game, game.initial_state(), sims=2000, seed=11)
    assert all(np.array_equal(x, y) for x, y in zip(a.visits, b.visits, strict=True))
    c = search(game, game.initial_state(), sims=2000, seed=12)
    assert not all(np.array_equal(x, y) for x, y in zip(a.visits, c.visits, strict=True))


def test_a_tiny_tree_keeps_simulating_and_makes_room_between_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drops: list[int] = []
    real = UCTSearch._make_room

    def spy(tree: UCTSearch) -> bool:
        drops.append(tree.nodes)
        return real(tree)

    monkeypatch.setattr(UCTSearch, "_make_room", spy)
    game = ggp.load("bomberman2p")
    result = search(game, game.initial_state(), sims=1000, seed=1, capacity=10)
    assert result.nodes <= 10
    assert result.simulations == 1000
    assert [int(v.sum()) for v in result.visits] == [1000, 1000]
    # Room is made between steps of at least 256 simulations, never inside one: a tiny tree is not pruned at
    # every simulation.
    assert 1 <= len(drops) <= -(-1000 // 256)


@pytest.mark.timing
def test_time_budget_is_respected() -> None:
    game = ggp.load("amazons_10x10")
    tree = UCTSearch(game, capacity=200_000, seed=2)
    # Loaded first (as an agent does in its start clock): on a cold numba cache, compiling or loading the
    # game's and the loop's code takes longer than the budget, and is no part of what is measured here.
    tree.search(game.initial_state(), sims=1)
    result = tree.search(game.initial_state(), seconds=0.3)
    assert result.simulations > 0
    assert result.seconds < 0.3 + 0.5  # chunks are a hundredth of the budget; the rest is slack for a busy machine


def test_white_steps_onto_its_target_when_it_can() -> None:
    # White stands next to (12,5) at step 29; black is far from (2,5). Arriving now wins outright; a step later
    # the race is over (at step 12, say, waiting a step would do as well: black can still arrive, 75-25 either way).
    game = ggp.load("wallmaze")
    state = game.state_from_dict({"step": 29, "white": [11, 5], "black": [7, 8]})
    result = search(game, state, sims=4000, seed=5)
    assert str(result.best("white")) == "(move 11 5 12 5)"
    r = result.roles.index("white")
    best = result.moves[r].index(result.best("white"))
    assert result.values[r][best] > 90


def test_an_amazon_move_that_boxes_in_the_opponent_is_found() -> None:
    # Three black amazons are walled in by arrows; the one on (8,8) can only step
    # to (7,7). White's (4,4) -> (7,7) takes that square, and after white's arrow
    # black must move and cannot: white wins at once.
    game = ggp.load("amazons_8x8")
    rows = [
        "......xB",  # y = 8
        "xxx....x",
        "xBx.....",
        "xxx.....",
        "...W....",
        "........",
        "xxxx....",
        "BxBxWW.W",  # y = 1
    ]
    state = game.state_from_dict({"board": "/".join(rows), "to_act": "white", "phase": "move", "just_moved": None})
    result = search(game, state, sims=20000, seed=7)
    white = result.roles.index("white")
    # MCTS-Solver proves the win and stops; another amazon can also take (7,7) away, by an arrow.
    assert result.solved == (100.0, 0.0)[:: 1 if white == 0 else -1]
    best = result.best("white")
    assert result.proven[white][result.moves[white].index(best)] == 100
    assert result.simulations < 20000
    after = game.next_state(state, [best, "noop"] if white == 0 else ["noop", best])
    ends = [
        game.next_state(after, [a, "noop"] if white == 0 else ["noop", a]) for a in game.legal_moves(after, "white")
    ]
    wins = [end for end in ends if game.is_terminal(end) and game.goals(end)[white] == 100]
    assert wins, f"{best} is not a win in one"
    assert visit_counts(result, "white")[0][1] > 0


def test_a_terminal_root_runs_no_simulation() -> None:
    game = ggp.load("wallmaze")
    state = game.state_from_dict({"step": 30, "white": [4, 8], "black": [10, 2]})
    assert game.is_terminal(state)
    result = search(game, state, sims=100)
    assert result.nodes == 1
    assert all(int(v.sum()) == 0 for v in result.visits)


def test_search_needs_a_compiled_game() -> None:
    class NotNative:
        name = "toy"

    with pytest.raises(TypeError, match="game with a kernel"):
        UCTSearch(NotNative())  # type: ignore[arg-type]


def test_exactly_one_budget() -> None:
    game = ggp.load("wallmaze")
    with pytest.raises(ValueError, match="exactly one"):
        UCTSearch(game).search(game.initial_state())


# --- transpositions ----------------------------------------------------------------------------------
KIF = SHARED / "corpus" / "kif"

# A move that leaves the position as it was: with transpositions, the root is its own child.
_LOOP = (
    "(role a) (role b) (init (cell 0)) (<= (legal a wait) (true (cell 0))) (<= (legal a end) (true (cell 0))) "
    "(<= (legal b noop) (true (cell 0))) (<= (next (cell 0)) (does a wait)) (<= (next (cell 1)) (does a end)) "
    "(<= terminal (true (cell 1))) (goal a 100) (goal b 0)"
)


def _key(game: ggp.Game, state: ggp.State) -> str:
    return json.dumps(game.state_to_json(state), sort_keys=True)


def transpositions(game: ggp.Game, depth: int) -> list[list[tuple[list[Move], ...]]]:
    """The sequences of ``depth`` joint moves from the initial state, grouped by the state they reach, for
    the states that two or more reach (found on the rules, by breadth-first search)."""
    frontier: list[tuple[ggp.State, tuple[list[Move], ...]]] = [(game.initial_state(), ())]
    for _ in range(depth):
        frontier = [
            (game.next_state(s, list(joint)), (*seq, list(joint)))
            for s, seq in frontier
            if not game.is_terminal(s)
            for joint in itertools.product(*(game.legal_moves(s, role) for role in game.roles))
        ]
    groups: dict[str, list[tuple[list[Move], ...]]] = {}
    for s, seq in frontier:
        groups.setdefault(_key(game, s), []).append(seq)
    found = [g for g in groups.values() if len(g) > 1]
    assert found, f"{game.name}: no two orders of {depth} joint moves reach one state"
    return found


def walk(tree: UCTSearch, joints: tuple[list[Move], ...]) -> int | None:
    """The node the tree's child links reach from its root by ``joints`` (None: the search did not go there)."""
    game, state, node = tree.game, tree._root_state, tree.root
    assert state is not None
    for joint in joints:
        if not tree.expanded[node]:
            return None
        j = 0
        for r, role in enumerate(game.roles):
            off, n = int(tree.offsets[node, r]), int(tree.counts[node, r])
            moves = [game.action_to_move(state, role, int(a)) for a in tree.act[off : off + n]]
            j = j * n + moves.index(joint[r])
        node = int(tree.child[int(tree.coff[node]) + j])
        if node < 0:
            return None
        state = game.next_state(state, joint)
    assert np.array_equal(tree.states[node], tree.game._array_of(state))
    return node


def reached_twice(tree: UCTSearch, groups: list[list[tuple[list[Move], ...]]]) -> list[tuple[int, int]]:
    """For each state the tree reached by two orders, the nodes each order's child links lead to."""
    pairs = []
    for group in groups:
        ends = [n for n in (walk(tree, seq) for seq in group) if n is not None]
        pairs += [(ends[0], other) for other in ends[1:]]
    return pairs


@pytest.mark.parametrize(("name", "depth"), [("wallmaze", 3), ("bomberman2p", 2), ("tictactoe2.kif", 3)])
def test_a_state_reached_by_two_orders_is_one_node(name: str, depth: int) -> None:
    game = ggp.load(str(KIF / name) if name.endswith(".kif") else name)
    groups = transpositions(game, depth)
    sims = 20_000
    nodes = {}
    for transpose in (True, False):
        tree = UCTSearch(game, capacity=2 * sims, c=3.0, seed=3, solve=False, transpose=transpose)  # never full
        result = tree.search(game.initial_state(), sims=sims)
        assert all(int(v.sum()) == sims for v in result.visits)  # visit sums equal simulations
        pairs = reached_twice(tree, groups)
        assert pairs, "the search reached no state by two orders"
        if transpose:
            assert all(a == b for a, b in pairs)
        else:
            assert all(a != b for a, b in pairs)
        nodes[transpose] = result.nodes
    assert nodes[True] < nodes[False]


def test_transpositions_keep_tree_reuse_and_visit_sums() -> None:
    game = ggp.load("wallmaze")
    groups = transpositions(game, 3)
    tree = UCTSearch(game, capacity=50_000, c=3.0, seed=4, transpose=True)
    state = game.initial_state()
    tree.search(state, sims=20_000)
    # A state three plies down that the tree holds (as a searched node), reached by another order of moves:
    # the root moves there, found by its state (the child links of two plies down would not reach it).
    held = [(walk(tree, g[0]), g[1]) for g in groups]
    shared, order = next((node, seq) for node, seq in held if node is not None and tree.expanded[node])
    target = state
    for joint in order:
        target = game.next_state(target, joint)
    searched_there = int(tree.node_visits[shared])
    result = tree.search(target, sims=3000, reuse=True)
    # found by its state, not by the path: it is the root now, its subtree moved to the front of the arrays
    assert np.array_equal(tree.states[tree.root], game._array_of(target))
    assert searched_there > 0 and result.simulations > 3000  # the kept node's own simulations count on
    assert all(int(v.sum()) == result.simulations for v in result.visits)


def test_a_move_back_to_a_position_on_the_path_ends_the_simulation() -> None:
    from ggp.gdl.game import from_text

    game = from_text(_LOOP)
    for transpose in (True, False):
        tree = UCTSearch(game, capacity=1000, seed=1, solve=False, transpose=transpose)
        result = tree.search(game.initial_state(), sims=500)
        assert all(int(v.sum()) == 500 for v in result.visits)
        if transpose:  # the root, and the end: "wait" links the root to itself
            assert result.nodes == 2
            assert int(tree.node_visits[tree.root]) <= 500
        else:
            assert result.nodes > 2
    solved = UCTSearch(game, capacity=1000, seed=1, transpose=True).search(game.initial_state(), sims=500)
    assert solved.solved == (100.0, 0.0) and str(solved.best("a")) == "end"


def test_a_full_tree_keeps_the_subtree_of_the_position_reached_and_grows_again() -> None:
    from ggp.agents.uct_tree import _reachable

    game = ggp.load("wallmaze")
    tree = UCTSearch(game, capacity=2000, seed=1)
    state = game.initial_state()
    tree.reset(state)
    tree._simulate(20_000, make_room=False)
    result = tree.result()
    assert tree.nodes == 2000  # full: the search went on without adding nodes
    after = game.next_state(state, [result.best(role) for role in game.roles])
    node = tree._find_below(after)
    assert node > 0
    below, _ = _reachable(
        node, tree.nodes, tree.expanded, tree.counts, tree.coff, tree.child, tree.node_visits, tree.proven, 0
    )
    seen = [
        tree.act_visits[tree.offsets[node, r] : tree.offsets[node, r] + tree.counts[node, r]].copy()
        for r in range(len(game.roles))
    ]
    assert tree.advance(after)  # kept, however full the tree was
    assert tree.root == 0 and tree.nodes == len(below) < 2000  # only the subtree: the rest is free again
    kept = tree.result()
    assert [list(v) for v in kept.visits] == [list(v) for v in seen]  # its statistics unchanged
    tree._simulate(3000, make_room=False)
    grown = tree.result()
    assert tree.nodes > len(below)  # room to grow again
    assert all(int(v.sum()) == grown.simulations for v in grown.visits)
    for role in game.roles:
        assert grown.best(role) in game.legal_moves(after, role)


def _most_visited_line(tree: UCTSearch) -> int:
    """How deep the tree follows the line of each role's most visited moves."""
    node, depth = tree.root, 0
    while tree.expanded[node]:
        j = 0
        for r in range(tree.counts.shape[1]):
            o, k = int(tree.offsets[node, r]), int(tree.counts[node, r])
            j = j * k + int(np.argmax(tree.act_visits[o : o + k]))
        node = int(tree.child[tree.coff[node] + j])
        if node < 0:
            break
        depth += 1
    return depth


def test_a_full_tree_drops_its_least_visited_nodes_and_grows_on_where_it_looks_most() -> None:
    game = ggp.load(str(SHARED / "corpus" / "kif" / "breakthroughSmall.kif"))
    state = game.initial_state()
    frozen = UCTSearch(game, capacity=20_000, seed=1)
    frozen.reset(state)
    frozen._simulate(200_000, make_room=False)
    assert frozen.nodes == 20_000  # full after a tenth of the simulations: the rest scored leaves below it
    tree = UCTSearch(game, capacity=20_000, seed=1)
    result = tree.search(state, sims=200_000)
    assert tree.nodes <= 20_000 and result.simulations == 200_000
    assert all(int(v.sum()) == 200_000 for v in result.visits)  # the root's statistics lost nothing
    assert _most_visited_line(tree) > _most_visited_line(frozen)  # room was made, and used down the main line


def test_a_tree_where_nothing_can_be_dropped_stays_full_instead_of_pruning_every_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = ggp.load("wallmaze")
    tree = UCTSearch(game, capacity=2000, seed=1, solve=False)
    tree.reset(game.initial_state())
    tree._simulate(5000, make_room=False)
    assert tree._nearly_full()
    tree.proven[1 : tree.nodes] = True  # proven nodes always stay: nothing can be dropped
    calls: list[int] = []
    real = UCTSearch._make_room

    def spy(t: UCTSearch) -> bool:
        calls.append(t.nodes)
        return real(t)

    monkeypatch.setattr(UCTSearch, "_make_room", spy)
    tree.run(3000)  # a dozen steps of 256 simulations
    assert calls == [2000] and tree.nodes == 2000  # looked for room once; the rest simulated in a full tree
    assert all(int(v.sum()) == 8000 for v in tree.result().visits)


def test_making_room_keeps_the_moves_statistics_and_drops_only_the_rarely_visited() -> None:
    from ggp.agents.uct_tree import keep_subtree

    game = ggp.load("wallmaze")
    tree = UCTSearch(game, capacity=5000, seed=1)
    before = tree.search(game.initial_state(), sims=3000)
    used = tree.nodes
    rare = int(np.sum((tree.node_visits[1:used] < 5) & ~tree.proven[1:used]))
    assert 0 < rare < used - 1
    kept = keep_subtree(tree._tree, 0, tree.transpose, 5)
    assert kept <= used - rare
    assert all(int(tree.node_visits[n]) >= 5 or tree.proven[n] for n in range(1, kept))
    after = tree.result()  # the root's moves keep their statistics; a dropped node is made again when needed
    assert [list(v) for v in after.visits] == [list(v) for v in before.visits]
    assert [list(v) for v in after.values] == [list(v) for v in before.values]
    tree.run(2000)
    assert all(int(v.sum()) == 5000 for v in tree.result().visits)


def test_searching_below_one_root_move_finds_the_reply_that_wins_by_force() -> None:
    # breakthroughSmall, white to move (a position from a match lost to Sancho): every move looks alike to the
    # root's search, but after (move 1 3 1 4) black wins by force, starting with (move 2 4 1 3).
    game = ggp.load(str(SHARED / "corpus" / "kif" / "breakthroughSmall.kif"))
    state = race_lost_to_sancho(game)
    tree = UCTSearch(game, capacity=200_000, c=0.7, seed=1, decisive=True)
    before = tree.search(state, sims=2000)
    i = [str(m) for m in before.moves[0]].index("(move 1 3 1 4)")
    node = tree.child_of(i)
    assert node > 0 and not tree.proven[node]
    root_visits = [v.copy() for v in tree.result().visits]
    for _ in range(200):
        if tree.proven[node]:
            break
        tree.run_below(node, 1000)
    assert tree.proven[node] and tree.pval[node, 0] == 0.0  # lost for white
    after = tree.result()
    assert after.simulations == before.simulations  # the root's own statistics are left as they were
    assert all((a == b).all() for a, b in zip(after.visits, root_visits, strict=True))
    assert after.proven[0][i] == 0.0
    assert str(after.best("white")) != "(move 1 3 1 4)"
    with pytest.raises(ValueError, match="no node"):
        tree.run_below(0, 10)
