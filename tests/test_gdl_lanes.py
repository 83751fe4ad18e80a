"""Sixty-four playouts at once (ggp.gdl.lanes): each bit of a node's word is the node in one game.

A sweep of the words must give, game by game, what the one-game evaluator gives; a batch of rollouts must
play each game to its end by the rules, and the search that scores its leaves in batches must keep its
statistics whole.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ggp
from conftest import SHARED
from ggp.agents.uct import MAX_BATCH, UCTSearch, next_chunk
from ggp.core.kernels import random_playouts, rng_state
from ggp.gdl import from_text
from ggp.gdl import kernel as kernel_module
from ggp.gdl.evaluate import sweep_phase
from ggp.gdl.kernel import rollouts
from ggp.gdl.lanes import LANES, WORDS, _next, _next_program, _sweep, lane_rollouts, traced_lane_rollouts
from ggp.gdl.network import H_C0, H_C1, H_NBASE, H_NDOES, H_NNODES


def _sheet(name: str) -> str:
    for path in (
        SHARED / "gdl" / f"{name}.kif",
        SHARED / "corpus" / "kif" / f"{name}.kif",
        Path(ggp.gdl.__file__).parent / f"{name}.kif",
    ):
        if path.is_file():
            return path.read_text()
    raise FileNotFoundError(name)


# amazons_8x8: guarded gates and thousands of moves; atariGoVariant_7x7: cyclic blocks (a least fixpoint)
SHEETS = ["amazons_8x8", "bomberman2p", "wallmaze", "tictactoe", "atariGoVariant_7x7"]


def _reached_states(game, count: int, seed: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``count`` states of random games (each a random number of steps in), as rows of base bits."""
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < count:
        state = game.initial_state()
        for _ in range(int(rng.integers(0, 40))):
            if game.is_terminal(state):
                break
            joint = [moves[int(rng.integers(len(moves)))] for moves in (game.legal_moves(state, r) for r in game.roles)]
            state = game.next_state(state, joint)
        rows.append(state.array.copy())
    return np.array(rows)


def _words(nnodes: int, rows: dict[int, np.ndarray]) -> np.ndarray:
    """Words holding, for each node ``n`` in ``rows``, its value per game (``rows[n][b]``); node 1 true."""
    words = np.zeros(WORDS * nnodes, dtype=np.uint64)
    rows = {1: np.ones(LANES, dtype=bool), **rows}
    for node, bits in rows.items():
        for q in range(WORDS):
            part = np.asarray(bits[64 * q : 64 * q + 64], dtype=bool)
            words[WORDS * node + q] = np.bitwise_or.reduce(
                np.where(part, np.uint64(1) << np.arange(64, dtype=np.uint64), np.uint64(0))
            )
    return words


def _lane(words: np.ndarray, nnodes: int, b: int) -> np.ndarray:
    """Game ``b``'s value of every node."""
    return ((words.reshape(nnodes, WORDS)[:, b // 64] >> np.uint64(b % 64)) & np.uint64(1)).astype(np.uint8)


@pytest.mark.parametrize("name", SHEETS)
def test_a_sweep_of_words_is_the_one_game_sweep_in_every_game(name: str) -> None:
    game = from_text(_sheet(name), name)
    net = game.propnet.net
    nnodes, nbase, ndoes = int(net.header[H_NNODES]), int(net.header[H_NBASE]), int(net.header[H_NDOES])
    states = _reached_states(game, LANES, seed=3)
    # any does nodes at all (the next-state phase is a function of them, legal or not)
    does = np.random.default_rng(5).random((LANES, ndoes)) < 0.05
    rows = {2 + i: states[:, i] for i in range(nbase)} | {2 + nbase + i: does[:, i] for i in range(ndoes)}
    words = _words(nnodes, rows)
    for phase in (0, 1, 2):
        _sweep(net, words, phase)
    for b in range(LANES):
        vals = np.zeros(nnodes, dtype=np.uint8)
        vals[1] = 1
        vals[2 : 2 + nbase] = states[b]
        vals[2 + nbase : 2 + nbase + ndoes] = does[b]
        for phase in (0, 1, 2):
            sweep_phase(net, vals, phase)
        mine = _lane(words, nnodes, b)
        assert np.array_equal(mine, vals), f"game {b}: nodes {np.flatnonzero(mine != vals)[:8]}"


@pytest.mark.parametrize("name", SHEETS)
def test_the_next_state_from_the_moves_made_is_the_sweep_of_it(name: str) -> None:
    # a step sets one move per role and game, and scatters the moves into the next state's ORs
    game = from_text(_sheet(name), name)
    net = game.propnet.net
    nnodes, nbase = int(net.header[H_NNODES]), int(net.header[H_NBASE])
    states = _reached_states(game, LANES, seed=8)
    rng = np.random.default_rng(9)
    lptr, ldoes = net.legal_ptr, net.legal_does
    does = np.array(
        [[int(ldoes[rng.integers(lptr[r], lptr[r + 1])]) for r in range(len(game.roles))] for _ in range(LANES)]
    )
    does[::7, 0] = -1  # (some games make no move for a role)
    active = np.full(WORDS, np.uint64(2**64 - 1))
    active[-1] = np.uint64(2**40 - 1)  # and some games take no part
    words = _words(nnodes, {2 + i: states[:, i] for i in range(nbase)})
    _sweep(net, words, 0)
    swept = words.copy()
    for b in range(LANES):
        q, t = b // 64, np.uint64(1) << np.uint64(b % 64)
        for d in does[b]:
            if d >= 0 and active[q] & t:
                swept[WORDS * d + q] |= t
    _sweep(net, swept, 2)
    split = _next_program(net)
    blocks = net.blocks.reshape(-1, 3)[int(net.header[H_C0]) : int(net.header[H_C1])]
    assert (len(split[3]) == 0) == bool(blocks[:, 2].any())  # (a cyclic block: the phase swept whole)
    made = np.zeros(LANES * len(game.roles) + 1, dtype=np.int64)
    assert _next(net, split, words, does, active, made) == LANES - 64 + 40  # the games that take part
    listed = list(made[: list(made).index(-1)])
    assert sorted(listed) == sorted(int(d) for b, row in enumerate(does[: LANES - 24]) for d in row if d >= 0)
    assert np.array_equal(words, swept)


@pytest.mark.parametrize("name", SHEETS)
@pytest.mark.parametrize("n", [1, 37, 100, LANES])
def test_every_game_of_a_batch_plays_to_its_end_and_scores_its_goals(name: str, n: int) -> None:
    game = from_text(_sheet(name), name)
    kernel = game.kernel
    ctx = kernel.context()
    states = _reached_states(game, LANES, seed=n)
    before = states.copy()
    goals = np.full((LANES, kernel.num_roles), -7, dtype=np.int64)
    made = rollouts(ctx, states, n, rng_state(n), goals)
    assert made >= 0
    assert np.array_equal(states[n:], before[n:]) and (goals[n:] == -7).all()  # rows past n untouched
    for b in range(n):
        final = game.state_from_array(states[b])
        assert game.is_terminal(final) or any(not game.legal_moves(final, r) for r in game.roles)
        assert list(goals[b]) == [int(g) for g in game.goals(final)]


def test_a_batch_plays_as_many_moves_as_its_games_take() -> None:
    # amazons_8x8 from the start: each game ends within the 2 * 92 steps a game can take, and the moves
    # made are the games' lengths summed, about 91 each (the differential evaluator's playouts: 91.1)
    game = from_text(_sheet("amazons_8x8"), "amazons_8x8")
    states = np.tile(game.initial_state().array, (LANES, 1))
    goals = np.zeros((LANES, 2), dtype=np.int64)
    made = lane_rollouts(game.propnet.net, states, LANES, rng_state(1), 10_000, goals)
    _, lengths = random_playouts(game.kernel, game.initial_state().array, 256, seed=1)
    assert LANES * 60 < made < LANES * 2 * 92
    assert abs(made / LANES - lengths.mean()) < 10
    assert sorted(set(goals.sum(axis=1))) == [100]  # one wins, one loses, in every game


def test_a_batch_stops_at_max_steps() -> None:
    game = from_text(_sheet("amazons_8x8"), "amazons_8x8")
    net = game.propnet.net
    states = np.tile(game.initial_state().array, (5, 1))
    goals = np.zeros((5, 2), dtype=np.int64)
    start = states[0].copy()
    assert lane_rollouts(net, states, 5, rng_state(2), 3, goals) == 15
    for row in states:  # three joint moves made (queen, arrow, queen): not the end, not the start
        assert not game.is_terminal(game.state_from_array(row))
        assert not np.array_equal(row, start)


@pytest.mark.parametrize("name", ["amazons_8x8", "bomberman2p", "tictactoe"])
def test_the_search_scores_leaves_in_batches_and_counts_every_simulation(name: str) -> None:
    game = from_text(_sheet(name), name)
    tree = UCTSearch(game, capacity=5000, seed=4, batch=LANES)
    result = tree.search(game.initial_state(), sims=3000)
    assert result.simulations == 3000
    assert int(result.visits[0].sum()) == 3000
    # every simulation's value arrived: each move's mean goal is a mean of scored games (0..100), and
    # the root's moves together carry value (a waiting leaf's value would be missing: a mean of 0)
    for values in result.values:
        assert ((values >= 0) & (values <= 100)).all()
    assert max(float(v.max()) for v in result.values) > 0
    again = UCTSearch(game, capacity=5000, seed=4, batch=LANES).search(game.initial_state(), sims=3000)
    assert [list(v) for v in again.visits] == [list(v) for v in result.visits]  # the same seed, the same tree


@pytest.mark.parametrize("batch", [0, MAX_BATCH + 1, -3])
def test_a_batch_size_out_of_range_is_refused(batch: int) -> None:
    game = from_text(_sheet("tictactoe"), "tictactoe")
    with pytest.raises(ValueError, match="batch"):
        UCTSearch(game, batch=batch)


def test_a_sheet_plays_its_rollouts_in_batches_where_they_are_faster(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GGP_CACHE", str(tmp_path))
    game = from_text(_sheet("amazons_8x8"), "amazons_8x8")
    propnet = game.propnet
    monkeypatch.setattr(kernel_module, "_time_lanes", lambda propnet, budget: (1.0, 0.02))
    monkeypatch.setattr(kernel_module, "_time_modes", lambda propnet, contexts, budget: dict.fromkeys(contexts, 1.4))
    assert not kernel_module.batch_pays(propnet, kernel_module.DIFFERENTIAL)  # 1.4 times faster: not enough
    monkeypatch.setattr(kernel_module, "_time_modes", lambda propnet, contexts, budget: dict.fromkeys(contexts, 1.6))
    assert kernel_module.batch_pays(propnet, kernel_module.DIFFERENTIAL)
    monkeypatch.setattr(kernel_module, "_time_lanes", lambda propnet, budget: (1.0, 0.5))
    assert not kernel_module.batch_pays(propnet, kernel_module.DIFFERENTIAL)  # a batch's call too long for a clock
    monkeypatch.setattr(kernel_module, "_time_lanes", lambda propnet, budget: (1.0, 0.02))
    assert kernel_module.chosen_batch(propnet, kernel_module.DIFFERENTIAL) == LANES
    # measured once: the choice is read back, whatever a new measurement would say
    monkeypatch.setattr(kernel_module, "_time_lanes", lambda propnet, budget: (9.0, 0.02))
    assert kernel_module.chosen_batch(propnet, kernel_module.DIFFERENTIAL) == LANES
    assert game.kernel.rollout_batch() in (1, LANES)
    assert UCTSearch(game, capacity=100).batch == game.kernel.rollout_batch()


def test_a_native_game_scores_one_leaf_at_a_time_unless_asked() -> None:
    game = ggp.load("wallmaze")
    assert UCTSearch(game, capacity=100).batch == 1
    tree = UCTSearch(game, capacity=3000, seed=2, batch=8)  # batches of its own rollouts: allowed
    result = tree.search(game.initial_state(), sims=1000)
    assert int(result.visits[0].sum()) == 1000


def test_a_timed_search_runs_whole_batches_at_the_rate_measured() -> None:
    # one at a time: the rate of the last chunk, at most doubling
    assert next_chunk(10, 0.010, 0.5) == 20
    assert next_chunk(10, 0.010, 0.005) == 5
    assert next_chunk(1, 1.0, 0.001) == 1
    # batches of 128: a chunk of 1 cost a whole batch's call (8 ms); 0.1 s holds 12 calls, at most 2 now
    assert next_chunk(1, 0.008, 0.1, 128) == 2 * 128
    assert next_chunk(256, 0.016, 0.1, 128) == 4 * 128
    assert next_chunk(1024, 0.064, 0.1, 128) == 12 * 128
    # a call longer than the room: still one whole batch (a part of one would cost as much)
    assert next_chunk(128, 0.5, 0.01, 128) == 128


def test_a_batch_out_of_range_is_refused() -> None:
    # compiled code indexes its 128 lanes unchecked: what it is given is checked where it enters
    game = from_text(_sheet("tictactoe"), "tictactoe")
    net = game.propnet.net
    good = np.tile(game.initial_state().array, (LANES + 1, 1))
    goals = np.zeros((LANES + 1, 2), dtype=np.int64)
    for n, states, out, steps in (
        (0, good, goals, 5),
        (LANES + 1, good, goals, 5),
        (4, good[:3], goals, 5),
        (4, good[:, :-1].copy(), goals, 5),
        (4, good, goals[:3], 5),
        (4, good, goals[:, :1].copy(), 5),
        (4, good, goals, -1),
    ):
        with pytest.raises(ValueError, match="lane_rollouts"):
            lane_rollouts(net, states, n, rng_state(1), steps, out)
    assert np.array_equal(good, np.tile(game.initial_state().array, (LANES + 1, 1)))  # nothing played
    assert lane_rollouts(net, good, LANES, rng_state(1), 5, goals) > 0


def test_a_traced_batch_marks_the_moves_each_game_made() -> None:
    # tic-tac-toe from the start: a cell ends with a mark exactly where its role marked it (a mark is never
    # undone), so each game's marked moves are its final board, role by role; noop is marked for the role
    # that waited at least once, and rows past n are left as they were.
    game = from_text(_sheet("tictactoe"), "tictactoe")
    net = game.propnet.net
    n, nr = 100, 2
    width = max(len(texts) for texts in game.propnet.move_texts)
    states = np.tile(game.initial_state().array, (LANES, 1))
    played = np.ones((LANES, nr, width), dtype=np.bool_)
    goals = np.zeros((LANES, nr), dtype=np.int64)
    traced_lane_rollouts(net, states, n, rng_state(5), 100, goals, played)
    assert played[n:].all()
    bases = game.propnet.base_texts
    for b in range(n):
        on = {bases[i] for i in np.flatnonzero(states[b])}
        for r, mark in enumerate("xo"):
            texts = game.propnet.move_texts[r]
            marked = {texts[i] for i in np.flatnonzero(played[b, r, : len(texts)])}
            cells = {f"(mark {t.split()[1]} {t.split()[2]})" for t in on if t.startswith("(cell") and t[-2] == mark}
            assert marked - {"noop"} == cells
            assert "noop" in marked


def test_a_traced_batch_refuses_rows_too_short_for_a_role_s_moves() -> None:
    game = from_text(_sheet("tictactoe"), "tictactoe")
    states = np.tile(game.initial_state().array, (4, 1))
    goals = np.zeros((4, 2), dtype=np.int64)
    with pytest.raises(ValueError, match="a column per move"):
        traced_lane_rollouts(game.propnet.net, states, 4, rng_state(5), 100, goals, np.zeros((4, 2, 3), np.bool_))
    with pytest.raises(ValueError, match="a row per game"):
        traced_lane_rollouts(game.propnet.net, states, 4, rng_state(5), 100, goals, np.zeros((2, 2, 10), np.bool_))
