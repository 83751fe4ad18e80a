"""The general player: tree reuse and root parallelism keep the statistics whole, the clock is kept over a
whole GGP match on a loaded machine, thinking between messages grows the tree, and puzzles are solved."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ggp
from conftest import SHARED, race_lost_to_sancho
from ggp.agents import fill, make_agent
from ggp.agents.fill import FillSearch
from ggp.agents.mcts import MCTSAgent, merge
from ggp.agents.puzzle import PuzzleSearch
from ggp.agents.solver import DFSolver
from ggp.agents.uct import UCTSearch
from ggp.gdl import from_text
from ggp.match.clock import ManualClock
from ggp.protocol import GGPServer, PlayerConfig, PlayerService, host_match

KIF = SHARED / "corpus" / "kif"


def sheet_path(name: str) -> str:
    path = Path(KIF / f"{name}.kif")
    if not path.is_file():
        pytest.fail(f"{path} is missing: ../shared/ must sit beside the repository (or set GGP_SHARED)")
    return str(path)


def root_sums(result: ggp.agents.uct.SearchResult) -> list[int]:
    return [int(v.sum()) for v in result.visits]


@pytest.mark.parametrize("name", ["wallmaze", "connectFour"])
def test_tree_reuse_keeps_visit_sums_equal_to_simulations(name: str) -> None:
    game = ggp.load(name if name == "wallmaze" else sheet_path(name))
    tree = UCTSearch(game, capacity=50_000, seed=1)
    state = game.initial_state()
    result = tree.search(state, sims=3000)
    assert root_sums(result) == [3000] * len(game.roles)
    for step in range(3):
        joint = [result.best(role) for role in game.roles]
        state = game.next_state(state, joint)
        kept = tree.advance(state)
        assert kept, f"step {step}: the subtree of the joint move played was not kept"
        carried = tree.result()
        assert carried.simulations > 0
        assert root_sums(carried) == [carried.simulations] * len(game.roles)
        tree.run(1000)
        result = tree.result()
        assert result.simulations == carried.simulations + 1000 or tree.solved
        assert root_sums(result) == [result.simulations] * len(game.roles)


def test_root_parallel_trees_merge_into_one_consistent_root() -> None:
    game = ggp.load(sheet_path("connectFour"))
    # The exhaustive solver off: while it searches it takes one of the two threads in place of a tree.
    agent = MCTSAgent(time=0.5, threads=2, seed=3, ponder=False, dfs=False)
    agent.start(game, "red")
    agent.select_move(game.initial_state(), time_limit=1.0)
    merged = agent.last_result
    assert merged is not None
    own = [t.result() for t in agent._trees]
    assert len(own) == 2 and all(r.simulations > 0 for r in own)
    assert merged.simulations == sum(r.simulations for r in own)
    assert root_sums(merged) == [merged.simulations] * 2
    again = merge(own)
    for a, b in zip(again.values, merged.values, strict=True):
        assert np.allclose(a, b)


def test_thinking_between_calls_grows_the_tree_the_next_move_reuses() -> None:
    game = ggp.load(sheet_path("connectFour"))
    agent = MCTSAgent(time=0.3, threads=1, seed=4)
    agent.start(game, "red")
    state = game.initial_state()
    move = agent.select_move(state, time_limit=0.5)
    tree = agent._trees[0]
    before = tree.result().simulations
    agent.ponder()
    deadline = time.monotonic() + 30
    while tree._sims <= before + 1000 and time.monotonic() < deadline:  # wait for the background search
        time.sleep(0.01)
    agent.stop_pondering()
    grown = tree.result().simulations
    assert grown > before + 1000
    assert root_sums(tree.result()) == [grown, grown]
    reply = game.legal_moves(game.next_state(state, [move, "noop"]), "black")[0]
    after = game.next_state(game.next_state(state, [move, "noop"]), ["noop", reply])
    assert tree.advance(after)  # two steps below: kept


def test_the_time_spent_stopping_the_thinking_ahead_comes_out_of_the_move_s_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A loaded machine took up to 1.5 s to end a chunk of pondering rollouts; the search after it was planned
    # as if the call had just begun, and the reply came past the play clock. The agent's clock here is a
    # counter that the stopping moves on by 0.6 s, so that the test does not depend on the machine's speed.
    import types

    from ggp.agents import mcts

    game = ggp.load(sheet_path("connectFour"))
    agent = MCTSAgent(threads=1, seed=5, dfs=False)
    agent.start(game, "red")
    now = [1000.0]
    monkeypatch.setattr(mcts, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(agent, "stop_pondering", lambda: now.__setitem__(0, now[0] + 0.6))
    planned: list[float | None] = []

    def search(state: object, sims: int | None, seconds: float | None) -> object:
        planned.append(seconds)
        return game.legal_moves(game.initial_state(), "red")[0]

    monkeypatch.setattr(agent, "_search", search)
    agent.select_move(game.initial_state(), time_limit=1.0)
    assert planned == [pytest.approx(mcts.budget(None, 1.0 - 0.6))]
    assert planned[0] is not None and planned[0] < mcts.budget(None, 1.0) - 0.5  # type: ignore[operator]


def test_a_start_search_still_in_a_chunk_at_its_clock_is_left_to_end_like_thinking_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A loaded machine once held a START 10 s past its clock in one chunk of the start's search. Here a chunk
    # ends only when the search is told to stop (at most a minute): the start returns at its clock, and the
    # next call waits for the chunk instead.
    from ggp.agents import mcts

    def one_long_chunk(tree: object, deadline: float, seconds: float, stop: threading.Event) -> None:
        stop.wait(60)

    monkeypatch.setattr(mcts, "_grow", one_long_chunk)
    game = ggp.load(sheet_path("connectFour"))
    agent = MCTSAgent(threads=1, seed=6, dfs=False)
    agent.start(game, "red", start_clock=0.5)
    assert agent._ponder_threads and agent._ponder_stop.is_set()  # told to stop, left running
    agent.stop_pondering()
    assert agent._ponder_threads == []


class Served:
    """A GGP player of ``spec`` behind its own server, its log kept."""

    def __init__(self, spec: str, name: str, seed: int) -> None:
        self.log: list[str] = []
        self.service = PlayerService(PlayerConfig(spec=spec, name=name, seed=seed), log=self.log.append)
        self.server = GGPServer("127.0.0.1", 0, self.service.handle).start()
        self.url = f"http://127.0.0.1:{self.server.port}"

    def close(self) -> None:
        self.server.close()


def test_no_reply_is_late_over_a_whole_match_at_a_one_second_clock() -> None:
    spec = "mcts:threads=1"
    # Two mcts players, one search thread each (the two cores between them, as in bench/), that think between
    # messages, on a machine others load too: the host gives no grace past the clock, so a late reply would be a
    # timeout fault. (Two threads each, four searches and their pondering beside the suite's other worker, overran
    # a move now and then: the player then answers in time, at random, which the last assertion counts.)
    path = sheet_path("tictactoe2")
    # What the players run compiled first (the search and the exhaustive solver for this sheet's kernel): on a
    # cold numba cache that takes longer than the start clock, and this test is about the play clock (a cold
    # player answering in time is tests/test_protocol*.py's).
    game = ggp.load(path)
    solver = DFSolver(game)
    solver.reset(game.initial_state())
    solver.run(100)
    for role in game.roles:
        agent = make_agent(spec, seed=0)
        agent.start(game, role, start_clock=3.0, play_clock=1.0)
        agent.select_move(game.initial_state(), time_limit=1.0)
        agent.stop(game.initial_state(), [0] * len(game.roles))
    players = [Served(spec, "a", 1), Served(spec, "b", 2)]
    try:
        roles = game.roles
        record = host_match(
            path,
            {roles[0]: players[0].url, roles[1]: players[1].url},
            # (a start clock that covers preparing the match however loaded the machine: a first PLAY that
            # comes while the rules still compile is answered at random, which is not what is tested here)
            start_clock=20.0,
            play_clock=1.0,
            grace=0.0,
            seed=5,
        )
    finally:
        for p in players:
            p.close()
    assert record.terminal and record.steps >= 5
    assert not list(record.all_faults()), [f.to_dict() for f in record.all_faults()]
    for p in players:
        summary = [line for line in p.log if "moves sent" in line]
        assert summary and summary[-1].endswith("0 of them random)"), p.log


def test_a_puzzle_is_played_along_the_best_line_found() -> None:
    # How good the line gets depends on the clock and the machine (bench/ggp_base_strength.py puzzles
    # measures it); what must hold is that the player never ends below a goal its search had found.
    game = ggp.load(sheet_path("blocksWorldSerial"))
    agent = make_agent("mcts", seed=6)
    agent.start(game, game.roles[0], start_clock=3.0, play_clock=1.0)
    assert isinstance(agent, MCTSAgent) and agent._puzzle is not None
    known = [agent._puzzle.improve(game.initial_state(), 0.0)]
    state = game.initial_state()
    while not game.is_terminal(state):
        state = game.next_state(state, [agent.select_move(state, time_limit=1.0)])
        known.append(agent._puzzle._goal)
    assert known == sorted(known) and known[0] >= 0
    assert game.goals(state)[0] == known[-1]


def test_a_puzzle_search_never_loses_its_best_line() -> None:
    game = ggp.load(sheet_path("hanoi"))
    search = PuzzleSearch(game, seed=7)
    state = game.initial_state()
    search.warm(state)
    goals = [search.improve(state, 0.3) for _ in range(3)]
    assert goals == sorted(goals) and goals[0] >= 0
    line = search.line()
    for move in line:
        state = game.next_state(state, [move])
    assert game.is_terminal(state) and game.goals(state)[0] == goals[-1]


def test_a_puzzle_that_random_lines_miss_is_solved_and_played_along_the_proof() -> None:
    # Six disks to move one at a time, a smaller never on a larger: 63 moves that must all be right, which
    # random playouts almost never find (the walks alone ended at 5 of 100). The exhaustive solver beside them
    # proves the top goal; its line is kept, and the search stops there: nothing can beat it.
    game = ggp.load(sheet_path("hanoi_6_disks"))
    search = PuzzleSearch(game, seed=1)
    state = game.initial_state()
    search.warm(state)
    assert search.improve(state, 60.0) == 100  # (returns as soon as it is proven)
    line = search.line()
    assert len(line) >= 63  # none shorter moves six disks
    following = game.next_state(state, [line[0]])
    assert search.improve(following, 60.0) == 100 and search.playouts == 0  # proven already: nothing searched
    for move in line:
        state = game.next_state(state, [move])
    assert game.is_terminal(state) and game.goals(state) == (100,)


def test_a_puzzle_lost_for_good_by_any_false_step_is_played_out_along_the_steps_that_keep_the_goal() -> None:
    # firefighter in small: any walk away from the fire loses for good (a goal latch); a random line of 24
    # steps holds in 1 of 6^24 playouts. Playouts that keep the goal as it stands from falling find the line at
    # once. (The exhaustive solver, which would read these 48 positions, is off: the walks alone are tested.)
    game = from_text(
        """
        (role p) (init (step 0))
        (<= (legal p hold) (true (step ?n)))
        (<= (legal p (walk ?d)) (true (step ?n)) (dir ?d))
        (dir 1) (dir 2) (dir 3) (dir 4) (dir 5)
        (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
        (<= (next lost) (does p (walk ?d)))
        (<= (next lost) (true lost))
        (<= terminal (true (step 24)))
        (<= (goal p 100) (not (true lost)))
        (<= (goal p 0) (true lost))
        """
        + " ".join(f"(succ {i} {i + 1})" for i in range(24)),
        "latch",
    )
    search = PuzzleSearch(game, seed=2, solve=False)
    assert search.guided  # its goals move during play
    state = game.initial_state()
    search.warm(state)
    assert search.improve(state, 30.0) == 100  # (returns as soon as the top goal is found)
    assert [str(m) for m in search.line()] == ["hold"] * 24


@pytest.mark.parametrize("name", ["futoshiki5", "sudokuGrade1"])
def test_a_board_to_fill_is_filled_most_constrained_blank_first(name: str) -> None:
    # Every move writes a value into a blank, in any order: branching on the blank the fewest moves fill
    # settles these in tens of positions, where the exhaustive solver's table filled (futoshiki5) or the
    # clock ran out (the sudoku) walking every partial filling.
    game = ggp.load(sheet_path(name))
    state = game.initial_state()
    search = FillSearch(game, state)
    while search.run(1.0) == fill.SEARCHING:
        pass
    assert search.status == fill.FOUND and search.nodes < 1000
    for action in search.line:
        state = game.apply_actions(state, [action])
    assert game.is_terminal(state) and game.goals(state) == (100,)


def test_the_fill_search_gives_up_on_a_puzzle_of_another_kind() -> None:
    # Twelve queens: a queen on a square clears it, but most squares stay empty in a solution, so "every
    # blank must be filled" does not hold; the search says so rather than searching on.
    game = ggp.load(sheet_path("queens12ug"))
    search = FillSearch(game, game.initial_state())
    while search.run(1.0) == fill.SEARCHING:
        pass
    assert search.status == fill.FAILED and search.line == [] and search.nodes < 100


def test_the_puzzle_search_plays_the_fill_searchs_line() -> None:
    game = ggp.load(sheet_path("sudokuGrade3"))
    search = PuzzleSearch(game, seed=3)
    state = game.initial_state()
    search.warm(state)
    assert search.improve(state, 60.0) == 100  # (returns once a line reaches the top goal)
    for move in search.line():
        state = game.next_state(state, [move])
    assert game.is_terminal(state) and game.goals(state) == (100,)


def test_joint_moves_that_come_while_the_rules_compile_are_applied_once_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # START answers ready by its clock and PLAY answers with the top-down prover's legal move while the rules
    # compile; the joint moves those PLAYs carry must still be applied, in order, or the player's state parts
    # from the game manager's.
    import ggp.protocol.player as player

    release = threading.Event()
    real = player.recognize

    def slow(*args: object, **kw: object) -> object:
        found = real(*args, **kw)  # type: ignore[arg-type] # within the compile deadline; the match learns of it only on release
        release.wait(30)
        return found

    monkeypatch.setattr(player, "recognize", slow)
    rules = Path(sheet_path("tictactoe2")).read_text()
    # The player's clock stands still (ManualClock): the prover's moves come in its time however slow the
    # machine, and START, come when its clock began, is answered at once. (The play clock gives the sheet
    # 30 s of real time to be read: a loaded machine's slowness must not cut it short.)
    clock = ManualClock()
    service = PlayerService(PlayerConfig(spec="random", seed=1), clock=clock)
    assert service.handle(f"(START m1 xPlayer ({rules}) 1 30)", received=clock.now() - 1).body.lower() == "ready"
    first = service.handle("(PLAY m1 nil)").body.lower()
    assert first in {f"(play {i} {j} x)" for i in range(1, 4) for j in range(1, 4)}  # any empty cell
    assert service.handle("(PLAY m1 ((play 1 1 x) noop))").body.lower() == "noop"  # o's turn: x has only noop
    release.set()
    match = service.match
    assert match is not None and match.game_ready.wait(30)
    reply = service.handle("(PLAY m1 (noop (play 2 2 o)))")
    assert reply.status == 200
    assert match.history == [("(play 1 1 x)", "noop"), ("noop", "(play 2 2 o)")]
    game, state = match.game, match.state
    assert game is not None and state is not None
    assert reply.body in {str(m) for m in game.legal_moves(state, "xPlayer")}


def test_the_exploration_constant_on_rule_sheets_and_built_in_games() -> None:
    sheet = ggp.load(sheet_path("tictactoe2"))
    agent = MCTSAgent(sims=10, seed=1)
    agent.start(sheet, "xPlayer")
    assert agent.c == MCTSAgent.sheet_c != MCTSAgent.default_c
    agent.start(ggp.load("wallmaze"), "white")  # the same agent on a built-in game
    assert agent.c == MCTSAgent.default_c
    chosen = MCTSAgent(sims=10, seed=1, c=2.0)
    chosen.start(sheet, "xPlayer")
    assert chosen.c == 2.0  # a spec's c is kept


def test_the_warm_up_moves_the_tree_down_so_keeping_a_subtree_is_compiled_before_a_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ggp.agents import uct
    from ggp.core.kif import parse_terms
    from ggp.protocol.recognize import gdl_game
    from ggp.protocol.warmup import _in_turn, play_a_move

    kept: list[int] = []
    real = uct.keep_subtree

    def spy(tree: object, root: int, transpose: bool, *rest: int) -> int:
        kept.append(root)
        return real(tree, root, transpose, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(uct, "keep_subtree", spy)
    play_a_move(make_agent("mcts:threads=1"), gdl_game(parse_terms(_in_turn(2))))
    assert kept and all(root > 0 for root in kept)


def test_the_move_about_to_be_played_is_checked_and_a_forced_loss_is_not_played() -> None:
    import dataclasses

    game = ggp.load(sheet_path("breakthroughSmall"))
    state = race_lost_to_sancho(game)
    agent = MCTSAgent(sims=3000, seed=2, threads=1, ponder=False)
    agent.start(game, "white")
    agent.select_move(state)
    found = agent.last_result
    assert found is not None
    # As if the search preferred the move after which black wins by force (it did in the match).
    i = [str(m) for m in found.moves[0]].index("(move 1 3 1 4)")
    visits = found.visits[0].copy()
    visits[i] = visits.max() + 1
    preferred = dataclasses.replace(found, visits=(visits, *found.visits[1:]))
    assert str(preferred.best("white")) == "(move 1 3 1 4)"
    checked = agent._verified(preferred, time.perf_counter() + 30.0)  # ends when it finds the refutation
    assert checked.proven[0][i] == 0.0
    assert str(checked.best("white")) != "(move 1 3 1 4)"


def test_a_sheet_too_large_to_ground_is_searched_by_the_served_player_not_answered_at_random() -> None:
    # ruleDepthExponential is built to blow up grounders: the top-down prover plays it, without a kernel. Going
    # on 19 times scores 100, giving up at once 5; random moves averaged 15 (bench/results/puzzle_strength.jsonl).
    path = sheet_path("ruleDepthExponential")
    player = Served("mcts:threads=1", "robot", 3)
    try:
        # (clocks that leave room on a loaded machine: the player's own work, the prover's next states and legal
        # moves at each step, comes out of the clock too, and grows with the step)
        record = host_match(path, {"robot": player.url}, start_clock=30.0, play_clock=5.0, seed=1)
    finally:
        player.close()
    assert record.terminal and record.goals == (100,)
    assert not list(record.all_faults()), [f.to_dict() for f in record.all_faults()]
    summary = [line for line in player.log if "moves sent" in line]
    assert summary and summary[-1].endswith("0 of them random)"), player.log
