"""MCTS-Solver: proven values propagate up the compiled tree, and the proven move is played; the exhaustive
depth-first solver proves what minimax over the rules proves.

Every proof is checked against the rules themselves (a minimax over the Game
API, or the game's own terminal goals), not against remembered answers.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest

import ggp
from conftest import SHARED
from ggp.agents.mcts import MCTSAgent
from ggp.agents.solver import FULL, PROVEN, SEARCHING, UNKNOWN, DFSolver
from ggp.agents.uct import UCTSearch, search
from ggp.gdl import from_text

KIF = SHARED / "corpus" / "kif"


def sheet(name: str) -> ggp.Game:
    path = Path(KIF / f"{name}.kif")
    if not path.is_file():
        pytest.fail(f"{path} is missing: ../shared/ must sit beside the repository (or set GGP_SHARED)")
    return ggp.load(str(path))


def mover(game: ggp.Game, state: ggp.State) -> int:
    """The role to move (turn-taking sheets: the other has only noop)."""
    legal = [game.legal_moves(state, role) for role in game.roles]
    return max(range(len(legal)), key=lambda r: (len(legal[r]), str(legal[r][0]) != "noop"))


def play(game: ggp.Game, state: ggp.State, *moves: str) -> ggp.State:
    """Play ``moves`` in turn, each by the role to move (the other plays noop)."""
    for move in moves:
        joint = ["noop"] * len(game.roles)
        joint[mover(game, state)] = move
        state = game.next_state(state, joint)
    return state


def after(game: ggp.Game, state: ggp.State, role: int, move: ggp.Move) -> ggp.State:
    joint: list[ggp.Move | str] = [game.legal_moves(state, r)[0] for r in game.roles]
    joint[role] = move
    return game.next_state(state, joint)


def minimax(game: ggp.Game, state: ggp.State) -> tuple[int, ...]:
    """The exact goals of a small turn-taking position, each role maximising its own goal."""

    @functools.cache
    def value(s: ggp.State) -> tuple[int, ...]:
        if game.is_terminal(s):
            return tuple(game.goals(s))
        r = mover(game, s)
        return max((value(after(game, s, r, m)) for m in game.legal_moves(s, game.roles[r])), key=lambda v: v[r])

    return value(state)


@pytest.fixture(scope="module")
def tictactoe() -> ggp.Game:
    return sheet("tictactoe2")


@pytest.fixture(scope="module")
def connect_four() -> ggp.Game:
    return sheet("connectFour")


@pytest.mark.timing
def test_a_win_in_one_is_proven_and_played_at_once(tictactoe: ggp.Game) -> None:
    # x holds (1 1) and (1 2), o holds (2 1) and (2 2): (play 1 3 x) completes the row.
    state = play(tictactoe, tictactoe.initial_state(), "(play 1 1 x)", "(play 2 1 o)", "(play 1 2 x)", "(play 2 2 o)")
    result = search(tictactoe, state, sims=5000, seed=1)
    assert result.solved == (100.0, 0.0)
    assert str(result.best("xPlayer")) == "(play 1 3 x)"
    assert result.simulations < 5000  # a solved root is not searched further
    assert int(result.visits[0].sum()) == result.simulations
    agent = MCTSAgent(time=60.0, seed=2)
    agent.start(tictactoe, "xPlayer")
    assert str(agent.select_move(state, time_limit=60.0)) == "(play 1 3 x)"
    assert agent.last_result is not None and agent.last_result.solved == (100.0, 0.0)
    assert agent.last_result.seconds < 30  # stopped when solved, not at the clock


def test_a_forced_draw_is_proven_with_every_move_valued_exactly(tictactoe: ggp.Game) -> None:
    # x must block o's (1 2); whatever follows, a draw is the best either side can force.
    state = play(tictactoe, tictactoe.initial_state(), "(play 2 2 x)", "(play 1 1 o)", "(play 3 3 x)", "(play 1 3 o)")
    exact = minimax(tictactoe, state)
    assert exact == (50, 50)
    result = search(tictactoe, state, sims=200_000, seed=3)
    assert result.solved == (50.0, 50.0)
    x = tictactoe.roles.index("xPlayer")
    proven = result.proven[x]
    assert not np.isnan(proven).any()
    for move, value in zip(result.moves[x], proven, strict=True):
        assert value == minimax(tictactoe, after(tictactoe, state, x, move))[x], str(move)
    best = result.best("xPlayer")
    assert minimax(tictactoe, after(tictactoe, state, x, best))[x] == 50
    assert sorted(set(proven.tolist())) == [0.0, 50.0]  # some moves lose: the draw is a choice, not luck


def test_a_connect_four_double_threat_is_proven(connect_four: ggp.Game) -> None:
    # red on (3,1) and (4,1), black on top of both: red's 2 or 5 opens a three with both ends free.
    game = connect_four
    state = play(game, game.initial_state(), "(drop 3)", "(drop 3)", "(drop 4)", "(drop 4)")
    result = search(game, state, sims=50_000, seed=4)
    assert result.solved == (100.0, 0.0)
    best = result.best("red")
    # The proof, checked on the rules: whatever black replies, red wins at once.
    reached = after(game, state, 0, best)
    for reply in game.legal_moves(reached, "black"):
        s = after(game, reached, 1, reply)
        wins = [m for m in game.legal_moves(s, "red") if game.goals(after(game, s, 0, m))[0] == 100]
        assert wins and game.is_terminal(after(game, s, 0, wins[0])), f"{best} then {reply}: no win"


def test_a_connect_four_threat_is_blocked(connect_four: ggp.Game) -> None:
    # black has three on column 1; every red move but (drop 1) is proven lost, so red blocks.
    game = connect_four
    state = play(game, game.initial_state(), "(drop 5)", "(drop 1)", "(drop 6)", "(drop 1)", "(drop 2)", "(drop 1)")
    result = search(game, state, sims=20_000, seed=5)
    red = game.roles.index("red")
    assert str(result.best("red")) == "(drop 1)"
    proven = result.proven[red]
    lost = [str(m) for m, v in zip(result.moves[red], proven, strict=True) if v == 0]
    assert len(lost) >= 5 and "(drop 1)" not in lost
    for text in lost:  # each is lost in one: black completes its column
        s = after(game, state, red, game.parse_move(text))
        assert game.goals(after(game, s, 1, game.parse_move("(drop 1)")))[1] == 100


def test_without_the_solver_only_terminal_nodes_are_proven(tictactoe: ggp.Game) -> None:
    state = play(tictactoe, tictactoe.initial_state(), "(play 1 1 x)", "(play 2 1 o)", "(play 1 2 x)", "(play 2 2 o)")
    tree = UCTSearch(tictactoe, capacity=10_000, seed=1, solve=False)
    result = tree.search(state, sims=3000)
    assert result.solved is None and result.simulations == 3000
    assert str(result.best("xPlayer")) == "(play 1 3 x)"  # the terminal child is still scored exactly


def test_decisive_moves_prove_a_win_in_one_on_the_first_simulation(tictactoe: ggp.Game) -> None:
    state = play(tictactoe, tictactoe.initial_state(), "(play 1 1 x)", "(play 2 1 o)", "(play 1 2 x)", "(play 2 2 o)")
    tree = UCTSearch(tictactoe, capacity=1000, seed=1, decisive=True)
    result = tree.search(state, sims=1)
    assert result.solved == (100.0, 0.0)
    assert str(result.best("xPlayer")) == "(play 1 3 x)"
    without = UCTSearch(tictactoe, capacity=1000, seed=1).search(state, sims=1)
    assert without.solved is None  # one sample cannot prove it without the check


def test_decisive_moves_prove_the_moves_that_allow_a_win_lost(connect_four: ggp.Game) -> None:
    # black has three on column 1: every red move but (drop 1) lets black win at once.
    game = connect_four
    state = play(game, game.initial_state(), "(drop 5)", "(drop 1)", "(drop 6)", "(drop 1)", "(drop 2)", "(drop 1)")
    red = game.roles.index("red")
    found = {}
    for decisive in (True, False):
        result = UCTSearch(game, capacity=10_000, seed=5, decisive=decisive).search(state, sims=30)
        found[decisive] = [str(m) for m, v in zip(result.moves[red], result.proven[red], strict=True) if v == 0]
        if decisive:
            assert str(result.best("red")) == "(drop 1)"
    assert sorted(found[True]) == sorted(str(m) for m in game.legal_moves(state, "red") if str(m) != "(drop 1)")
    assert len(found[False]) < len(found[True])  # the plain solver needs more samples to find them all


def test_decisive_moves_look_below_the_root_once_a_node_has_the_visits_asked(
    tictactoe: ggp.Game, connect_four: ggp.Game
) -> None:
    # The root is tried as it is expanded whatever the count: x wins at once with (play 1 3 x).
    state = play(tictactoe, tictactoe.initial_state(), "(play 1 1 x)", "(play 2 1 o)", "(play 1 2 x)", "(play 2 2 o)")
    assert UCTSearch(tictactoe, capacity=1000, seed=1, decisive=True, decisive_at=10**6).search(state, sims=1).solved
    # Below it, a node is tried once it has that many visits: every red move but (drop 1) lets black win.
    game = connect_four
    state = play(game, game.initial_state(), "(drop 5)", "(drop 1)", "(drop 6)", "(drop 1)", "(drop 2)", "(drop 1)")
    red = game.roles.index("red")
    lost = sorted(str(m) for m in game.legal_moves(state, "red") if str(m) != "(drop 1)")

    def found(at: int, sims: int) -> list[str]:
        result = UCTSearch(game, capacity=10_000, seed=5, decisive=True, decisive_at=at).search(state, sims=sims)
        return sorted(str(m) for m, v in zip(result.moves[red], result.proven[red], strict=True) if v == 0)

    assert found(1, 30) == lost
    assert len(found(10**6, 30)) < len(lost)  # below the root, only what the samples proved
    assert found(4, 60) == lost
    assert len(found(10**6, 60)) < len(lost)  # at 60 samples, only the nodes tried at 4 visits are all proven
    for bad in (0, -1, 2**31, 1.5, True):
        with pytest.raises(ValueError, match="decisive_at"):
            UCTSearch(game, decisive=True, decisive_at=bad)  # type: ignore[arg-type]


def test_a_root_kept_from_the_last_search_is_tried_for_a_win_at_once_before_it_has_the_visits_asked(
    connect_four: ggp.Game,
) -> None:
    # Red's (drop 3) lets black win with (drop 1). Searched from red's turn, the node after it gets a couple of
    # visits, too few to be tried; kept as the next root, it is tried at its first pass, not left to the samples.
    game = connect_four
    state = play(game, game.initial_state(), "(drop 5)", "(drop 1)", "(drop 6)", "(drop 1)", "(drop 2)", "(drop 1)")
    reached = play(game, state, "(drop 3)")
    solved_in_one = []
    for seed in range(1, 5):
        for decisive in (True, False):
            tree = UCTSearch(game, capacity=10_000, seed=seed, decisive=decisive, decisive_at=10**6)
            tree.search(state, sims=12)
            assert tree.advance(reached)  # the subtree is kept
            tree.run(1)
            solved_in_one.append((decisive, tree.solved))
    assert all(solved for decisive, solved in solved_in_one if decisive)
    assert not all(solved for decisive, solved in solved_in_one if not decisive)  # by samples alone: by luck


def test_a_move_proven_lost_counts_at_its_proven_value_not_the_mean_of_its_earlier_samples() -> None:
    from ggp.agents.uct_tree import _ucb_pick
    from ggp.core.kernels import rng_state

    rng = rng_state(1)
    visits = np.array([10, 10], dtype=np.int32)
    values = np.array([9.0, 5.0], dtype=np.float32)  # means 0.9 and 0.5 for the mover
    child = np.array([1, 2], dtype=np.int32)  # the nodes the two moves lead to
    proven = np.array([False, True, False])
    pval = np.array([[0.5, 0.5], [0.0, 1.0], [0.5, 0.5]])  # the first move's node: proven lost for role 0

    def pick(solved: int) -> int:
        none = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.float32)  # (no RAVE statistics)
        off = np.zeros((1, 2)), -1, 0.0  # (no implicit minimax)
        return int(
            _ucb_pick(
                visits, values, 0, 2, float(np.log(20)), 0.7, rng, child, 0, proven, pval, solved, *none, 0.0, *off
            )
        )

    assert pick(-1) == 0  # by its samples' means alone, the first move looks best
    assert pick(0) == 1  # for role 0, it is known lost
    assert pick(1) == 0  # for role 1, the same node is a proven win: the role asked is the one read
    proven[1] = False
    assert pick(0) == 0  # not proven: its samples' mean again
    proven[1] = True
    child[0] = -1  # a move whose node was dropped, or never made: its samples' mean
    assert pick(0) == 0


# --- the exhaustive depth-first solver (ggp.agents.solver) ------------------------------------------
def solve_fully(game: ggp.Game, state: ggp.State, budget: int = 1_000_000, **kw: int) -> DFSolver:
    solver = DFSolver(game, **kw)
    solver.reset(state)
    for _ in range(100_000):
        if solver.status != SEARCHING:
            break
        solver.run(budget)
    return solver


def test_the_exhaustive_solver_agrees_with_minimax_on_every_root_move(tictactoe: ggp.Game) -> None:
    # x in the centre, o on an edge: x wins with correct play, though not in one.
    state = play(tictactoe, tictactoe.initial_state(), "(play 2 2 x)", "(play 1 2 o)")
    assert minimax(tictactoe, state) == (100, 0)
    solver = solve_fully(tictactoe, state)
    assert solver.status == PROVEN and solver.value() == (100.0, 0.0)
    x = tictactoe.roles.index("xPlayer")
    values = solver.move_values()
    assert values and max(values.values()) == 100.0
    for move, value in values.items():  # the walk stops at the first win; each move it valued is exact
        assert value == minimax(tictactoe, after(tictactoe, state, x, move))[x], str(move)
    # A walk of a few expansions at a time, resumed, proves the same.
    step = solve_fully(tictactoe, state, budget=3)
    assert step.value() == (100.0, 0.0) and step.move_values() == values


def test_the_exhaustive_solver_proves_the_initial_position_a_draw_and_keeps_its_table(tictactoe: ggp.Game) -> None:
    start = tictactoe.initial_state()
    solver = solve_fully(tictactoe, start)
    assert solver.value() == (50.0, 50.0) == tuple(float(v) for v in minimax(tictactoe, start))
    known = solver.positions
    # A later position's moves are read from the table at once: nothing new is walked.
    state = play(tictactoe, start, "(play 1 1 x)", "(play 2 2 o)")
    solver.reset(state)
    assert solver.status == PROVEN and solver.value() == (50.0, 50.0) and solver.positions == known
    x = tictactoe.roles.index("xPlayer")
    values = solver.move_values()
    assert len(values) == len(tictactoe.legal_moves(state, "xPlayer"))
    for move, value in values.items():
        assert value == minimax(tictactoe, after(tictactoe, state, x, move))[x], str(move)


def test_a_walk_deepened_a_ply_at_a_time_proves_the_shortest_win_first_and_keeps_only_proofs(
    connect_four: ggp.Game,
) -> None:
    # red on (3,1) and (4,1), black on top of both: red's 2 or 5 opens a three with both ends free, a win in
    # three plies (red, any black reply, red). Walked one ply deep, nothing is proven and nothing is stored;
    # three plies deep, the win is proven, with every position the proof stands on.
    game = connect_four
    state = play(game, game.initial_state(), "(drop 3)", "(drop 3)", "(drop 4)", "(drop 4)")
    solver = DFSolver(game, role="red")
    solver.deepen(1, state)
    while solver.status == SEARCHING:
        solver.run(10_000)
    assert solver.status == UNKNOWN and solver.limit == 1 and solver.positions == 0
    for plies in (2, 3):
        solver.deepen(plies)
        while solver.status == SEARCHING:
            solver.run(10_000)
    assert solver.status == PROVEN and solver.value() == (100.0, 0.0)
    red = game.roles.index("red")
    for move, value in solver.move_values().items():  # each move valued is exact: a win checked on the rules
        if value == 100.0:
            reached = after(game, state, red, move)
            for reply in game.legal_moves(reached, "black"):
                s = after(game, reached, 1 - red, reply)
                assert any(game.goals(after(game, s, red, m))[red] == 100 for m in game.legal_moves(s, "red"))
    assert 0 < solver.positions < 1000  # proofs only: the unknown positions of the shallower walks are not kept
    with pytest.raises(ValueError, match="limit"):
        solver.deepen(-1)


def test_with_deepen_a_given_up_exhaustive_solver_is_replaced_by_one_that_walks_a_ply_deeper_at_a_time(
    connect_four: ggp.Game,
) -> None:
    game = connect_four
    state = play(game, game.initial_state(), "(drop 3)", "(drop 3)", "(drop 4)", "(drop 4)")
    agent = MCTSAgent(seed=3, ponder=False, threads=1, solve=False, deepen=True)  # proofs come from the solvers
    agent.start(game, "red", start_clock=0.01, play_clock=30.0)
    assert agent._dfs is not None and agent._dfs.limit == 0
    agent._dfs_left = 0.0  # its allowance spent (8 play clocks of search that proved nothing)
    move = agent.select_move(state, time_limit=30.0)
    solver = agent._dfs
    assert solver is not None and solver.root_state == state and solver.value() == (100.0, 0.0)
    assert 3 <= solver.limit <= 4  # the win is three plies deep
    reached = after(game, state, 0, move)  # the move played wins by force: every reply loses at once
    for reply in game.legal_moves(reached, "black"):
        s = after(game, reached, 1, reply)
        assert any(game.goals(after(game, s, 0, m))[0] == 100 for m in game.legal_moves(s, "red")), str(reply)
    off = MCTSAgent(seed=3, ponder=False, threads=1, solve=False)  # off by default: given up for good
    off.start(game, "red", start_clock=0.01, play_clock=30.0)
    off._dfs_left = 0.0
    off.select_move(state, time_limit=0.5)
    assert off._dfs is None


def test_the_exhaustive_solver_leaves_simultaneous_moves_and_repetitions_unknown() -> None:
    simultaneous = sheet("connectFourSimultaneous")
    solver = DFSolver(simultaneous)
    solver.reset(simultaneous.initial_state())
    assert solver.status == UNKNOWN and solver.run(1000) == 0 and solver.value() is None
    assert solver.simultaneous
    three = from_text(
        "(role a) (role b) (role c) (init (round 1)) (<= (legal ?r x) (role ?r)) (<= (legal ?r y) (role ?r)) "
        "(<= (next over) (true (round 1))) (<= terminal (true over)) (<= (goal ?r 50) (role ?r))"
    )
    agent = MCTSAgent(seed=1, ponder=False)
    agent.start(three, "a", start_clock=0.5, play_clock=0.5)
    agent.select_move(three.initial_state(), time_limit=0.5)
    assert agent._dfs is None  # three roles choosing at once: given up, its thread goes back to the trees
    # White may end the game drawn, or pass; black may then pass back (the position repeats) or resign.
    # Passing forever has no value, so neither side's choice is proven; ending is worth 50.
    game = from_text("""
        (role white) (role black) (init (control white))
        (<= (legal white end) (true (control white)))
        (<= (legal white pass) (true (control white)))
        (<= (legal black back) (true (control black)))
        (<= (legal black resign) (true (control black)))
        (<= (legal white noop) (true (control black)))
        (<= (legal black noop) (true (control white)))
        (<= (next (control black)) (does white pass))
        (<= (next (control white)) (does black back))
        (<= (next done) (does white end))
        (<= (next resigned) (does black resign))
        (<= terminal (true done)) (<= terminal (true resigned))
        (<= (goal white 50) (true done)) (<= (goal black 50) (true done))
        (<= (goal white 100) (true resigned)) (<= (goal black 0) (true resigned))
        (<= (goal white 0) (not (true done)) (not (true resigned)))
        (<= (goal black 0) (not (true done)) (not (true resigned)))
    """)
    solver = solve_fully(game, game.initial_state())
    assert solver.status == UNKNOWN and solver.value() is None
    assert {str(m): v for m, v in solver.move_values().items()} == {"end": 50.0}


# Two roles choose at once: a says x, y or "safe", b says x or y; then b alone says "fine" or "oops". Saying
# what b said wins for a, saying the other loses, "safe" draws; b's "oops" gives a the game whatever was said.
_AT_ONCE = """
    (role a) (role b) (init (round 1)) (word x) (word y)
    (<= (legal a (say ?w)) (true (round 1)) (word ?w)) (<= (legal a safe) (true (round 1)))
    (<= (legal b (say ?w)) (true (round 1)) (word ?w))
    (<= (legal a noop) (true (round 2))) (<= (legal b fine) (true (round 2))) (<= (legal b oops) (true (round 2)))
    (<= (next (said ?r ?w)) (does ?r (say ?w))) (<= (next (said ?r ?w)) (true (said ?r ?w)))
    (<= (next safe) (does a safe)) (<= (next safe) (true safe))
    (<= (next (round 2)) (true (round 1))) (<= (next over) (true (round 2))) (<= (next oops) (does b oops))
    (<= same (true (said a ?w)) (true (said b ?w)))
    (<= terminal (true over))
    (<= (goal a 100) (true oops)) (<= (goal b 0) (true oops))
    (<= (goal a 50) (not (true oops)) (true safe)) (<= (goal b 50) (not (true oops)) (true safe))
    (<= (goal a 100) (not (true oops)) (not (true safe)) same) (<= (goal b 0) (not (true oops)) (not (true safe)) same)
    (<= (goal a 0) (not (true oops)) (not (true safe)) (not same))
    (<= (goal b 100) (not (true oops)) (not (true safe)) (not same))
"""


def test_where_two_roles_choose_at_once_the_solver_proves_what_its_role_is_sure_of() -> None:
    game = from_text(_AT_ONCE)
    start = game.initial_state()
    assert solve_fully(game, start).status == UNKNOWN  # no role given: nothing proven where both choose
    # a is sure of a draw, by "safe": b would answer a word with the other one (and then say "fine")
    for_a = solve_fully(game, start, role="a")
    assert for_a.status == PROVEN and for_a.value()[0] == 50.0
    assert {str(m): v for m, v in for_a.move_values().items()} == {"(say x)": 0.0, "(say y)": 0.0, "safe": 50.0}
    # b is sure of nothing: a could say what b says
    for_b = solve_fully(game, start, role="b")
    assert for_b.status == PROVEN and for_b.value()[1] == 0.0
    assert {str(m): v for m, v in for_b.move_values().items()} == {"(say x)": 0.0, "(say y)": 0.0}
    with pytest.raises(ValueError, match="not a role"):
        DFSolver(game, role="c")


def test_the_player_never_bids_what_can_be_beaten_in_bidding_tictactoe() -> None:
    # Sancho proves bids of 2 and 3 lost at the start and wins wherever they are played (0 of 4 matches).
    game = sheet("biddingTicTacToe")
    values_x: dict[str, float] = {}
    for role in game.roles:
        solver = solve_fully(game, game.initial_state(), role=role)
        assert solver.status == PROVEN and solver.value()[game.roles.index(role)] == 50.0  # a draw, sure
        values = {str(m): v for m, v in solver.move_values().items()}
        values_x = values_x or values
        assert {m for m, v in values.items() if v == 50.0} >= {"(bid 1 no_tiebreaker)"}
        assert all(v == 0.0 for m, v in values.items() if m.startswith(("(bid 2", "(bid 3")))
    # and the player, its solver done, bids one of the draws whatever its trees say
    agent = MCTSAgent(time=0.2, seed=3, threads=1, ponder=False)
    agent.start(game, game.roles[0])
    assert agent._dfs is not None
    while agent._dfs.status == SEARCHING:
        agent._dfs.run(1_000_000)
    assert str(agent.select_move(game.initial_state())) in {m for m, v in values_x.items() if v == 50.0}


def test_a_full_table_stops_the_solver_and_the_agent_gives_it_up(tictactoe: ggp.Game) -> None:
    solver = solve_fully(tictactoe, tictactoe.initial_state(), max_bytes=1 << 16)
    assert solver.status == FULL and solver.positions == solver.capacity < 5478  # tic-tac-toe's positions
    agent = MCTSAgent(time=0.2, seed=1)
    agent.start(tictactoe, "xPlayer")
    assert agent._dfs is not None
    agent._dfs = solver
    agent.select_move(tictactoe.initial_state(), time_limit=1.0)
    assert agent._dfs is None


@pytest.mark.timing
def test_the_agent_plays_the_move_the_exhaustive_solver_proves(tictactoe: ggp.Game) -> None:
    state = play(tictactoe, tictactoe.initial_state(), "(play 2 2 x)", "(play 1 2 o)")
    x = tictactoe.roles.index("xPlayer")
    agent = MCTSAgent(seed=7, solve=False)  # MCTS-Solver off: the proof is the exhaustive solver's
    # the trees' and the solver's code compiled first: on a cold numba cache (a fresh clone) beside a CPU hog,
    # compiling takes longer than any start clock; then a start clock the solver needs a fraction of
    MCTSAgent(seed=7, solve=False).start(tictactoe, "xPlayer", start_clock=0.01, play_clock=1.0)
    assert solve_fully(tictactoe, tictactoe.initial_state()).value() == (50.0, 50.0)
    agent.start(tictactoe, "xPlayer", start_clock=10.0, play_clock=1.0)
    assert agent._dfs is not None and agent._dfs.value() == (50.0, 50.0)  # the start clock solved the game
    move = agent.select_move(state, time_limit=1.0)
    assert minimax(tictactoe, after(tictactoe, state, x, move))[x] == 100
    result = agent.last_result
    assert result is not None and result.solved == (100.0, 0.0)
    assert result.proven[x][list(result.moves[x]).index(move)] == 100.0
    assert MCTSAgent(dfs=False, time=0.1).dfs is False
    off = MCTSAgent(dfs=False, seed=1)
    off.start(tictactoe, "xPlayer", start_clock=1.0, play_clock=1.0)
    assert off._dfs is None


@pytest.mark.timing
def test_at_a_step_with_one_move_the_clock_goes_to_the_exhaustive_solver(tictactoe: ggp.Game) -> None:
    agent = MCTSAgent(seed=8, ponder=False)
    # no time to walk at the start; a play clock the walk never needs all of (it stops when the game is solved)
    agent.start(tictactoe, "oPlayer", start_clock=0.01, play_clock=60.0)
    assert agent._dfs is not None and agent._dfs.positions == 0
    state = tictactoe.initial_state()
    assert str(agent.select_move(state, time_limit=60.0)) == "noop"  # x moves: o has only noop
    assert agent._dfs.value() == (50.0, 50.0)
    assert agent._dfs.positions > 1000
    # Without a referee's clock nothing is spent at such a step.
    local = MCTSAgent(seed=8, ponder=False, time=1.0)
    local.start(tictactoe, "oPlayer")
    assert local._dfs is not None
    local.select_move(state)
    assert local._dfs.positions == 0


@pytest.mark.timing
def test_with_one_thread_the_solver_takes_turns_with_the_tree_on_it(
    tictactoe: ggp.Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``threads=1`` is one search thread (as a benchmark against another one-thread player requires): the
    # exhaustive solver shares it with the tree instead of adding a thread of its own, and still proves.
    import threading

    from ggp.agents import mcts

    MCTSAgent(seed=3, threads=1, ponder=False).start(tictactoe, "xPlayer", start_clock=0.01, play_clock=1.0)
    started: list[str] = []
    real = threading.Thread.start

    def counted(self: threading.Thread) -> None:
        started.append(self.name)
        real(self)

    monkeypatch.setattr(threading.Thread, "start", counted)
    agent = MCTSAgent(seed=3, threads=1, ponder=False)
    agent.start(tictactoe, "xPlayer", start_clock=0.01, play_clock=30.0)
    allowance = mcts.budget(None, 0.01) + mcts.DFS_PLAY_CLOCKS * mcts.budget(None, 30.0)
    assert agent._dfs is not None and agent._dfs_left <= allowance
    started.clear()
    state = play(tictactoe, tictactoe.initial_state(), "(play 2 2 x)", "(play 1 2 o)")
    agent.select_move(state, time_limit=30.0)  # the proof ends the search long before the clock
    assert started == []  # no thread beside the caller's
    assert agent._dfs is not None and agent._dfs.positions > 0  # the solver searched, on this thread
    # its time is charged as if it had had the thread: a share of the time costs the whole of it
    assert agent._dfs_left <= allowance
    result = agent.last_result
    assert result is not None and result.solved == (100.0, 0.0)  # x wins from here


# A counter to 4 (or past it): every line wins, by a step of one or a leap of two; leaping twice is quickest.
RACE = (
    "(role a) (role b) (init (count 0)) (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) "
    "(<= (legal a step) (true (count ?n))) (<= (legal a leap) (true (count ?n))) (legal b noop) "
    "(<= (next (count ?m)) (does a step) (true (count ?n)) (succ ?n ?m)) "
    "(<= (next (count ?m)) (does a leap) (true (count ?n)) (succ ?n ?k) (succ ?k ?m)) "
    "(<= terminal (true (count 4))) (<= terminal (true (count 5))) "
    "(<= (goal a 100) (true (count ?n))) (<= (goal b 0) (true (count ?n)))"
)


def test_of_the_wins_it_has_proven_the_player_plays_the_quickest() -> None:
    game = from_text(RACE, "race")
    agent = MCTSAgent(sims=2000, seed=1, ponder=False)
    agent.start(game, "a")
    s = game.initial_state()
    result = UCTSearch(game, seed=1).search(s, sims=2000)
    assert [str(m) for m in result.moves[0]] == ["leap", "step"]
    # MCTS-Solver proves some win, not the quickest: say it proved the slow one, stepping first
    slow = dataclasses.replace(result, proven=(np.array([np.nan, 100.0]), np.array([np.nan])))
    assert str(slow.best("a")) == "step"
    assert str(agent._quickest_win(s, slow, deadline=float("inf"))) == "leap"  # two leaps: won in two steps
    two = play(game, s, "step", "step")
    result = UCTSearch(game, seed=1).search(two, sims=2000)
    slow = dataclasses.replace(result, proven=(np.array([np.nan, 100.0]), np.array([np.nan])))
    assert str(agent._quickest_win(two, slow, deadline=float("inf"))) == "leap"  # a win now, not in two
    # with no proven win, there is nothing to hurry
    assert agent._quickest_win(s, dataclasses.replace(result, proven=()), deadline=float("inf")) is None
