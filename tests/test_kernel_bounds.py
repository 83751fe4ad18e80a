"""Every compiled function on edge inputs and along random games: bad input is refused in Python, and the
kernels themselves never index outside their arrays.

Run under ``NUMBA_BOUNDSCHECK=1`` (``make test`` does) an out-of-range index
in compiled code raises IndexError instead of reading or writing memory it
does not own, so these tests then prove the kernels stay in bounds; in an
ordinary run they still check that every door refuses bad values with a
ValueError. numba's on-disk cache ignores NUMBA_BOUNDSCHECK (see
:func:`test_numba_cache_ignores_boundscheck`), so that run keeps its own cache.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np
import pytest

import ggp
from conftest import GAME_NAMES
from ggp.core.errors import IllegalMoveError, StateFormatError
from ggp.core.kernels import (
    MAX_GAMES,
    MAX_PERFT_DEPTH,
    MAX_PLAYOUT_SEED,
    MAX_SEED,
    make_kernel,
    perft,
    random_playouts,
    rollouts,
)
from ggp.core.native import NativeGame
from ggp.vector import MAX_BATCH, VectorGame

pytestmark = pytest.mark.kernels

BOUNDS_CHECKED = bool(nb.config.BOUNDSCHECK)


def native(name: str) -> NativeGame:
    game = ggp.load(name)
    assert isinstance(game, NativeGame)
    return game


def random_game(game: ggp.Game, seed: int, every: int = 1) -> list[ggp.State]:
    """Every ``every``-th state of a uniformly random game, and always its terminal state."""
    rng = random.Random(seed)
    state = game.initial_state()
    seen = [state]
    step = 0
    while not game.is_terminal(state):
        state = game.next_state(state, [rng.choice(game.legal_moves(state, r)) for r in game.roles])
        step += 1
        if step % every == 0 or game.is_terminal(state):
            seen.append(state)
    return seen


# --- the bounds check itself ---------------------------------------------------------------------------
OUT_OF_RANGE = """
import numba as nb, numpy as np
@nb.njit(cache=True)
def peek(a, i):
    return a[i]
try:
    peek(np.arange(4), 1000)
    print("unchecked")
except IndexError:
    print("IndexError")
"""


def run_snippet(tmp_path: Path, cache: str, boundscheck: bool) -> str:
    script = tmp_path / "oob.py"
    script.write_text(OUT_OF_RANGE)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_BOUNDSCHECK"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / cache)
    if boundscheck:
        env["NUMBA_BOUNDSCHECK"] = "1"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_boundscheck_is_live() -> None:
    # In a `make test` run this process checks bounds; elsewhere a child with the switch on shows it works.
    if BOUNDS_CHECKED:

        @nb.njit
        def peek(a: np.ndarray, i: int) -> int:
            return a[i]

        with pytest.raises(IndexError):
            peek(np.arange(4), 4)
        assert peek(np.arange(4), 3) == 3
    else:
        proc = subprocess.run(
            [sys.executable, "-c", OUT_OF_RANGE.replace("cache=True", "cache=False")],
            capture_output=True,
            text=True,
            env={**os.environ, "NUMBA_BOUNDSCHECK": "1"},
            timeout=120,
        )
        assert proc.stdout.strip() == "IndexError", proc.stderr


def test_numba_cache_ignores_boundscheck(tmp_path: Path) -> None:
    # A function cached without bounds checks is reused, unchecked, by a run that asks for them (and the
    # other way round): why `make test` gives numba a cache directory of its own for them.
    assert run_snippet(tmp_path, "shared", boundscheck=False) == "unchecked"
    assert run_snippet(tmp_path, "shared", boundscheck=True) == "unchecked"
    assert run_snippet(tmp_path, "own", boundscheck=True) == "IndexError"


def test_make_test_checks_bounds_in_a_cache_of_its_own() -> None:
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    bounds = makefile[makefile.index("\nBOUNDS :=") :].split("\n")[1]
    assert "NUMBA_BOUNDSCHECK=1" in bounds and "NUMBA_CACHE_DIR=" in bounds
    for name in ("test", "test-kernels"):
        target = makefile[makefile.index(f"\n{name}:") :].split("\n\n")[0]
        assert re.search(
            r'\$\(BOUNDS\) \$\(BIN\)/python -m pytest -q -n 2 [^\n]*-m "bounds_checked and not slow"', target
        ), name
    test = makefile[makefile.index("\ntest:") :].split("\n\n")[0]
    assert '-m "not bounds_checked or slow"' in test  # and every other test, once, without the checks


# --- the UCB pick never leaves its node's moves -----------------------------------------------------
def test_ucb_pick_stays_in_range_on_nan_and_negative_scores() -> None:
    from ggp.agents.uct_tree import _ucb_pick
    from ggp.core.kernels import rng_state

    rng = rng_state(1)
    n = 5
    amaf = (np.full(n + 3, 3, dtype=np.int32), np.full(n + 3, np.nan, dtype=np.float32))  # RAVE's, gone wrong
    child = np.full(n + 3, -1, dtype=np.int32)
    none = (child, 0, np.zeros(1, dtype=np.bool_), np.zeros((1, 2)), -1, *amaf, 0.0, np.zeros((1, 2)), -1, 0.0)
    rave = (*none[:-4], 0.05, *none[-3:])
    # implicit minimax on, the children made (nodes 0 .. n+2) with NaN values: the pick stays in range too
    mixed = (np.arange(n + 3, dtype=np.int32), *none[1:-3], np.full((n + 3, 2), np.nan), 0, 0.5)
    visits = np.full(n + 3, 7, dtype=np.int32)
    for values, c in [
        (np.full(n + 3, np.nan, dtype=np.float32), 1.4),
        (np.zeros(n + 3, dtype=np.float32), float("nan")),
        (np.zeros(n + 3, dtype=np.float32), -1.0),
        (np.full(n + 3, -np.inf, dtype=np.float32), 0.0),
    ]:
        for off in (0, 3):
            assert 0 <= _ucb_pick(visits, values, off, n, np.log(35.0), c, rng, *none) < n
            assert 0 <= _ucb_pick(visits, values, off, n, np.log(35.0), c, rng, *rave) < n
            assert 0 <= _ucb_pick(visits, values, off, n, np.log(35.0), c, rng, *mixed) < n
            assert 0 <= _ucb_pick(np.zeros(n + 3, dtype=np.int32), values, off, n, 0.0, c, rng, *rave) < n
    overflowed = np.full(n, -(2**31), dtype=np.int32)  # counts that wrapped around
    assert 0 <= _ucb_pick(overflowed, np.ones(n, dtype=np.float32), 0, n, 3.0, 1.4, rng, *none) < n


# --- searches on every game: edge budgets and capacities, along random games ---------------------
@pytest.mark.parametrize("name", GAME_NAMES)
def test_search_along_a_random_game(name: str) -> None:
    from ggp.agents.uct import UCTSearch

    game = native(name)
    states = random_game(game, seed=len(name), every=7 if name.startswith("amazons") else 3)
    full = UCTSearch(game, capacity=2, c=0.0, seed=0)  # full after its first child
    small = UCTSearch(game, capacity=60, c=100.0, seed=2**63 - 1)
    for state in states:
        for tree, sims in ((full, 40), (small, 300)):
            if not (tree is small and tree.advance(state)):  # the small tree keeps its subtree, as agents do
                tree.reset(state)
            before = tree.result().simulations
            tree.run(sims)
            result = tree.result()
            assert result.nodes <= len(tree.states)
            if game.is_terminal(state):
                assert result.simulations == before
                continue
            if result.solved is None:
                assert result.simulations == before + sims
            else:  # MCTS-Solver: a proven root is not searched further
                assert before <= result.simulations <= before + sims
            for role in game.roles:
                assert result.best(role) in game.legal_moves(state, role)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_terminal_root_is_not_searched(name: str) -> None:
    from ggp.agents.uct import search

    game = native(name)
    final = random_game(game, seed=5, every=1000)[-1]
    assert game.is_terminal(final)
    result = search(game, final, sims=100, seed=1)
    assert result.simulations == 0 and result.nodes == 1


def test_visit_counts_never_overflow() -> None:
    from ggp.agents.uct import UCTSearch

    game = native("wallmaze")
    tree = UCTSearch(game, capacity=100, seed=1)
    tree.reset(game.initial_state())
    tree.run(10)
    tree.node_visits[tree.root] = 2**31 - 5  # as after two billion simulations
    tree.run(10)  # would pass int32: the tree starts afresh instead
    assert tree.result().simulations == 10
    assert int(tree.act_visits[: tree.meta[1]].max()) <= 10


# --- a made-up native game for what no built-in game does ---------------------------------------
WIDTH = 40
STEP, STUCK, SCORE, LENGTH, MOVES = range(5)


@nb.njit(cache=True)
def _toy_legal(s: np.ndarray, role: int, out: np.ndarray) -> int:
    if s[STUCK] == 1 and role == 1 and s[STEP] == 2:
        return 0  # a broken rule sheet: role 1 has no move although the game goes on
    for k in range(s[MOVES]):
        out[k] = k
    return s[MOVES]


@nb.njit(cache=True)
def _toy_apply(s: np.ndarray, a0: int, a1: int) -> None:
    s[STEP] += 1
    s[SCORE] = (s[SCORE] * 7 + a0 * WIDTH + a1) % 101


@nb.njit(cache=True)
def _toy_terminal(s: np.ndarray) -> bool:
    return s[STEP] >= s[LENGTH]


@nb.njit(cache=True)
def _toy_goals(s: np.ndarray) -> np.ndarray:
    g = np.zeros(2, dtype=np.int64)
    g[0] = s[SCORE]
    g[1] = 100 - s[SCORE]
    return g


@nb.njit(cache=True)
def _even(ctx: np.ndarray, s: np.ndarray, rng: np.ndarray, out: np.ndarray, params: np.ndarray) -> None:
    out[0] = 0.5
    out[1] = 0.5


TOY_KERNEL = make_kernel(
    globals(),
    "toy",
    legal=_toy_legal,
    apply=_toy_apply,
    terminal=_toy_terminal,
    goals=_toy_goals,
    num_actions=WIDTH,
    max_actions=WIDTH,
    dtype=np.int64,
)


class Toy(NativeGame):
    """Two roles pick numbers; ``moves`` of them each step, for ``length`` steps (role 1 stuck at step 2 if asked)."""

    roles = ("a", "b")

    def __init__(self, moves: int = WIDTH, length: int = 6, stuck: bool = False) -> None:
        self.name = f"toy-{moves}-{length}-{int(stuck)}"
        self.dtype = np.dtype(np.int64)
        self.kernel = TOY_KERNEL
        self.move_forms = (("pick", [str(i) for i in range(WIDTH)]),)
        self.move_help = "(pick N)"
        self._start = np.array([0, int(stuck), 0, length, moves], dtype=np.int64)
        super().__init__()

    def initial_array(self) -> np.ndarray:
        return self._start.copy()

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        return f"(pick {action})"

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        return int(text[6:-1])

    def render(self, state: ggp.State) -> str:
        return str(self._array_of(state))

    def svg(self, state: ggp.State, size: int = 360) -> str:
        return "<svg/>"

    def state_to_dict(self, state: ggp.State) -> dict[str, Any]:
        return {"game": self.name}

    def state_facts(self, state: ggp.State) -> list[str]:
        return []


def test_a_node_wider_than_the_move_pool_is_scored_without_expanding() -> None:
    from ggp.agents.uct import UCTSearch

    game = Toy()
    for capacity in (2, 10, 100):  # pools of 80, 320 and 3200 entries; a node needs 40 + 40 and 1600 children
        tree = UCTSearch(game, capacity=capacity, seed=capacity)
        tree.reset(game.initial_state())
        tree.run(500)
        result = tree.result()
        assert result.simulations == 500
        assert result.nodes <= capacity
        assert int(tree.meta[2]) <= len(tree.child) and int(tree.meta[1]) <= len(tree.act)
        assert result.best("a") in game.legal_moves(game.initial_state(), "a")


def test_a_role_without_moves_scores_the_node_as_it_stands() -> None:
    from ggp.agents.uct import UCTSearch, search

    game = Toy(moves=3, length=6, stuck=True)
    result = search(game, game.initial_state(), sims=2000, seed=4)
    assert result.simulations == 2000
    assert all(int(v.sum()) == 2000 for v in result.visits)
    stuck = game.next_state(game.next_state(game.initial_state(), ["(pick 0)", "(pick 0)"]), ["(pick 1)", "(pick 2)"])
    assert game.legal_moves(stuck, "b") == ()
    tree = UCTSearch(game, capacity=50, seed=1)
    tree.reset(stuck)
    tree.run(100)  # the root has no move for b: it is scored as it stands, and so proven, like a terminal state
    assert tree.result().simulations == 1
    assert tree.result().solved is not None
    with pytest.raises(ValueError, match="b has no move"):
        tree.result().best("b")


def test_paths_longer_than_max_depth_are_cut() -> None:
    from ggp.agents.uct import MAX_DEPTH, UCTSearch

    game = Toy(moves=1, length=3 * MAX_DEPTH)  # one long corridor: each two simulations go one node deeper
    tree = UCTSearch(game, capacity=3 * MAX_DEPTH, seed=1, leaf_value=_even)
    tree.reset(game.initial_state())
    tree.run(2 * MAX_DEPTH + 200)
    assert tree.nodes == MAX_DEPTH + 1  # grown down to the deepest path allowed, and no further
    assert tree.result().simulations == 2 * MAX_DEPTH + 200


def test_compiled_loops_stop_when_a_role_has_no_move() -> None:
    game = Toy(moves=2, length=6, stuck=True)
    start = game.initial_array()
    goals, lengths = random_playouts(game.kernel, start, 50, seed=3)
    assert set(lengths.tolist()) == {2}  # stopped where role b has no move
    assert ((goals >= 0) & (goals <= 100)).all()
    assert rollouts(game.kernel, start, 50, seed=3).shape == (50, 2)
    assert perft(game.kernel, start, 2) == 4 * 4
    assert perft(game.kernel, start, 3) == 0  # no sequence passes step 2


# --- perft, rollouts and random playouts ---------------------------------------------------------
@pytest.mark.parametrize("name", GAME_NAMES)
def test_kernel_loops_along_a_random_game(name: str) -> None:
    game = native(name)
    kernel = game.kernel
    states = random_game(game, seed=11, every=9 if name.startswith("amazons") else 4)
    for state in states:
        s = state.array
        terminal = game.is_terminal(state)
        assert perft(kernel, s, 0) == 1
        assert perft(kernel, s, 1) == (0 if terminal else len(game.joint_moves(state)))
        if not name.startswith("amazons") or terminal:
            perft(kernel, s, 2)
        out = rollouts(kernel, s, 20, seed=MAX_SEED)
        goals, lengths = random_playouts(kernel, s, 20, seed=MAX_PLAYOUT_SEED)
        if terminal:
            expected = list(game.goals(state))
            assert all(list(row) == expected for row in out.tolist())
            assert all(list(row) == expected for row in goals.tolist()) and not lengths.any()
        assert ((out >= 0) & (out <= 100)).all() and ((goals >= 0) & (goals <= 100)).all()
    assert rollouts(kernel, states[0].array, 0).shape == (0, 2)
    assert random_playouts(kernel, states[0].array, 5, max_steps=0)[1].tolist() == [0] * 5


def test_an_amazon_that_cannot_fire_ends_the_rollout() -> None:
    # White's amazon just moved to a1 and is walled in: no arrow can be fired, the game is over, white lost.
    game = native("amazons_8x8")
    board = "B.B.B.B./......../......../......../...WWW../......../xx....../Wx......"
    state = game.state_from_dict({"board": board, "to_act": "white", "phase": "fire", "just_moved": [1, 1]})
    assert game.is_terminal(state) and game.goals(state) == (0, 100)
    assert rollouts(game.kernel, state.array, 30, seed=1).tolist() == [[0, 100]] * 30

    from ggp.core.kernels import rng_state
    from ggp.games.amazons.player import evaluate
    from ggp.games.amazons.rules import random_turns

    s = state.array.copy()
    assert not random_turns(s, rng_state(1), 5)
    assert np.array_equal(s, state.array)  # nothing was played
    assert 0 <= evaluate(state.array) <= 1


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda k, s: perft(k, s, -1), "perft: depth must be an int from 0 to 1000"),
        (lambda k, s: perft(k, s, MAX_PERFT_DEPTH + 1), "perft: depth must be"),
        (lambda k, s: perft(k, s, True), "perft: depth must be"),
        (lambda k, s: perft(k, s, 2.0), "perft: depth must be"),
        (lambda k, s: rollouts(k, s, -1), "rollouts: count must be an int from 0 to"),
        (lambda k, s: rollouts(k, s, MAX_GAMES + 1), "rollouts: count must be"),
        (lambda k, s: rollouts(k, s, 10**30), "rollouts: count must be"),
        (lambda k, s: rollouts(k, s, 5, seed=-1), "rollouts: seed must be"),
        (lambda k, s: rollouts(k, s, 5, seed=float("nan")), "rollouts: seed must be"),
        (lambda k, s: random_playouts(k, s, -3), "random_playouts: count must be"),
        (lambda k, s: random_playouts(k, s, 3, seed=MAX_PLAYOUT_SEED + 1), "random_playouts: seed must be"),
        (lambda k, s: random_playouts(k, s, 3, max_steps=-1), "random_playouts: max_steps must be"),
    ],
)
def test_kernel_loops_refuse_bad_counts(call: Any, needle: str) -> None:
    game = native("wallmaze")
    with pytest.raises(ValueError) as info:
        call(game.kernel, game.initial_state().array)
    assert needle in str(info.value)


def bad_arrays(game: NativeGame) -> list[Any]:
    """State arrays the kernel must never see: wrong type, dtype, shape, or values it would index by."""
    s = game.initial_array()
    out: list[Any] = [s.tolist(), s.astype(np.float64), s[:-1], np.concatenate([s, s]), s.reshape(1, -1), s[:0]]
    big = s.copy()
    big[0] = 200 if s.dtype == np.uint8 else 10**6  # a cell index, or a cell's contents, out of range
    out.append(big)
    neg = s.copy()
    if s.dtype != np.uint8:
        neg[1] = -1
        out.append(neg)
    return out


@pytest.mark.parametrize("name", GAME_NAMES)
def test_malformed_state_arrays_are_refused_before_compiled_code(name: str) -> None:
    game = native(name)
    for bad in bad_arrays(game):
        for call in (
            lambda a: perft(game.kernel, a, 2),
            lambda a: rollouts(game.kernel, a, 3),
            lambda a: random_playouts(game.kernel, a, 3),
        ):
            with pytest.raises(StateFormatError):
                call(bad)


def test_amazons_arrays_with_a_fifth_amazon_are_refused() -> None:
    game = native("amazons_10x10")
    s = game.initial_array()
    s[int(np.flatnonzero(s[:100] == 0)[0])] = 1  # five white amazons: the kernels keep four a side
    with pytest.raises(StateFormatError, match="four amazons"):
        rollouts(game.kernel, s, 1)
    with pytest.raises(StateFormatError, match="four amazons"):
        game.state_from_array(s)
    eight = native("amazons_8x8")
    with pytest.raises(StateFormatError):
        perft(eight.kernel, game.initial_array(), 1)  # a 10x10 array for the 8x8 kernel


# --- actions the kernels must never apply ----------------------------------------------------------
@pytest.mark.parametrize("name", GAME_NAMES)
def test_illegal_action_indices_never_reach_apply(name: str) -> None:
    game = native(name)
    vg = VectorGame(game, 3, seed=1)
    before = vg.states.copy()
    for a in (-1, -(2**63), game.kernel.num_actions, 2**62, 10**6):
        actions = vg.random_actions()
        actions[1, 0] = a
        with pytest.raises(IllegalMoveError, match="row 1"):
            vg.step(actions)
        assert np.array_equal(vg.states, before)
    with pytest.raises(ValueError):
        vg.step(np.array([[0.5, 1.0]] * 3))
    state = game.initial_state()
    legal = {str(m) for m in game.legal_moves(state, game.roles[0])}
    for text in ("(move 99 99 99 99)", "(fire 0 0)", "(move north)", "(move nowhere)", "dropBomb", "noop"):
        joint = [text, str(game.legal_moves(state, game.roles[1])[0])]
        if text in legal:
            game.next_state(state, joint)
        else:
            with pytest.raises(ValueError):
                game.next_state(state, joint)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_vector_game_steps_random_rows_to_the_end_and_beyond(name: str) -> None:
    game = native(name)
    vg = VectorGame(game, 1, autoreset=True, seed=MAX_SEED)
    wide = VectorGame(game, 64, autoreset=True, seed=0)
    ends = 0
    for _ in range(250):
        for v in (vg, wide):
            v.step(v.random_actions())
            assert v.legal_mask(0).shape == (v.batch, game.kernel.num_actions)
            actions, counts = v.legal_actions(1)
            live = ~v.terminal  # a finished Amazons game may leave the mover without moves
            assert ((counts[live] >= 1) & (counts <= game.kernel.max_actions)[live]).all()
            assert (actions[np.flatnonzero(live), counts[live] - 1] >= 0).all()
            assert all((actions[i, counts[i] :] == -1).all() for i in range(v.batch))
        ends += int(wide.terminal.sum())
    assert ends > 0


@pytest.mark.parametrize(
    "kwargs", [{"batch": 0}, {"batch": -1}, {"batch": MAX_BATCH + 1}, {"batch": 2**70}, {"batch": True}]
)
def test_vector_game_refuses_bad_batches(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="batch must be an int from 1 to"):
        VectorGame("wallmaze", **kwargs)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, float("nan"), "1", True])
def test_vector_game_refuses_bad_seeds(seed: Any) -> None:
    with pytest.raises(ValueError, match="seed must be an int from 0 to"):
        VectorGame("wallmaze", 2, seed=seed)


# --- the players' own compiled code ----------------------------------------------------------------
def test_amazons_endgame_solver_on_tiny_tables_and_budgets() -> None:
    from ggp.core.kernels import rng_state
    from ggp.games.amazons.endgame import MAX_TABLE_BITS, new_table, solve
    from ggp.games.amazons.rules import random_turns

    game = native("amazons_8x8")
    rng = rng_state(7)
    positions: list[np.ndarray] = []
    while len(positions) < 4:  # separated positions of random games, as the player meets them
        s = game.initial_array()
        while random_turns(s, rng, 1):
            if int((s[:-3] == 0).sum()) <= 24 and solve(s, 0, new_table(0)).separated:
                positions.append(s.copy())
                break
    solved = 0
    for s in positions:
        for bits, budget in ((0, 0), (0, 1), (1, 50), (4, 10_000)):
            result = solve(s, budget, new_table(bits))
            if result.separated and result.exact and result.move is not None:
                src, dst, arrow = result.move
                assert min(src, dst, arrow) >= 0 and max(src, dst, arrow) < 64
                solved += 1
    assert solved > 0
    for bad_table in (np.zeros((3, 4), dtype=np.int64), np.zeros((4, 3), dtype=np.int64), np.zeros((0, 4), np.int64)):
        with pytest.raises(ValueError, match="table"):
            solve(game.initial_state(), 10, bad_table)
    with pytest.raises(ValueError, match="table"):
        solve(game.initial_state(), 10, np.zeros((4, 4), dtype=np.int32))
    for budget in (-1, 10**12, 1.5, True):
        with pytest.raises(ValueError, match="budget"):
            solve(game.initial_state(), budget)
    for bits in (-1, MAX_TABLE_BITS + 1, 2.0):
        with pytest.raises(ValueError, match="bits"):
            new_table(bits)
    with pytest.raises(ValueError, match="four amazons"):
        solve(np.zeros(67, dtype=np.uint8))  # no amazons at all
    with pytest.raises(ValueError, match="Amazons position"):
        solve(native("wallmaze").initial_state())


def test_amazons_player_and_evaluation_along_a_game() -> None:
    from ggp.agents import make_agent
    from ggp.games.amazons.player import evaluate

    game = native("amazons_8x8")
    for state in random_game(game, seed=3, every=5):
        assert 0.0 <= evaluate(state.array) <= 1.0
    with pytest.raises(StateFormatError):
        evaluate(np.zeros(67, dtype=np.uint8))
    with pytest.raises(StateFormatError):
        evaluate(native("wallmaze").initial_array())
    agent = make_agent("amazons:sims=30,capacity=40", seed=1)
    agent.start(game, "white")
    state = game.initial_state()
    rng = random.Random(1)
    while not game.is_terminal(state):
        mine = agent.select_move(state)
        assert mine in game.legal_moves(state, "white")
        state = game.next_state(state, [mine, rng.choice(game.legal_moves(state, "black"))])


def test_wallmaze_player_helpers_check_their_arguments() -> None:
    from ggp.agents.uct import UCTSearch
    from ggp.games.wallmaze.player import hold_values, move_chances, reply_values, solve, table, wallmaze_leaf

    game = native("wallmaze")
    actions, chances = np.empty(5, dtype=np.int64), np.empty(5)
    value, hold = table(0.0), table(None)
    for state in random_game(game, seed=2):
        s = state.array
        for role in (0, 1):
            n = move_chances(s, role, 0.85, actions, chances)
            assert 1 <= n <= 5 and abs(chances[:n].sum() - 1) < 1e-9
            assert 1 <= reply_values(value, 0.0, s, role, actions, chances) <= 5
            assert 1 <= hold_values(hold, s, role, actions, chances) <= 5
    s = game.initial_state().array
    for call in (
        lambda: move_chances(s, 2, 0.5, actions, chances),
        lambda: move_chances(s, 0, float("nan"), actions, chances),
        lambda: move_chances(s, 0, 0.5, np.empty(4, dtype=np.int64), chances),
        lambda: move_chances(s, 0, 0.5, actions, np.empty(5, dtype=np.float32)),
        lambda: move_chances(np.array([0, 1, 2, 0, 0]), 0, 0.5, actions, chances),
        lambda: reply_values(np.zeros((2, 3)), 0.0, s, 0, actions, chances),
        lambda: hold_values(value[:, :5], s, 0, actions, chances),
        lambda: solve(1.5),
        lambda: table(float("nan")),
    ):
        with pytest.raises(ValueError):
            call()
    # A leaf value given fewer parameters than roles reads its defaults, not past the array.
    tree = UCTSearch(game, capacity=200, seed=1, leaf_value=wallmaze_leaf, params=())
    assert tree.search(game.initial_state(), sims=300).simulations == 300


def test_bomberman_solver_on_a_small_graph_and_a_full_table() -> None:
    from ggp.games.bomberman.player import ILLEGAL, NA, _explore_template, _solve, _values_vs_random, solution

    # Three positions: 0 -> 1 -> 2 -> 0 by (noop, noop); from 0, role 0's move 1 burns role 1, role 1's move 1 burns 0.
    succ = np.full((3, NA, NA), ILLEGAL, dtype=np.int32)
    succ[0, 0, 0], succ[1, 0, 0], succ[2, 0, 0] = 1, 2, 0
    succ[0, 1, 0], succ[0, 0, 1], succ[0, 1, 1] = -3, -2, -4
    for me in (0, 1):
        safe, attack = _solve(succ, me)
        assert safe.tolist() == [False, False, False]  # the other can always burn me at 0
        assert attack.shape == (3,)
        value = _values_vs_random(succ, safe, me, 0.9, 5)
        assert value.shape == (3,) and ((value >= 0) & (value <= 1)).all()
    game = ggp.load("bomberman2p")
    kernel = game.kernel  # type: ignore[attr-defined]
    explore = kernel.specialise(_explore_template, PARITY=0, NOBOMB=1)
    states, table, count = explore(game.initial_array(), 500)  # type: ignore[attr-defined]
    assert count == -1  # the table filled up: the caller retries with more room
    assert states.shape[0] == 500 and ((table == ILLEGAL) | (table >= -4)).all() and table.max() < 500
    for bad in (2, -2, True):
        with pytest.raises(ValueError, match="nobomb"):
            solution(game, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Bomberman"):
        solution(native("wallmaze"), 0)  # type: ignore[arg-type]


# --- one GDL sheet -------------------------------------------------------------------------------
def test_gdl_propnet_along_random_games_and_at_its_doors() -> None:
    from ggp.gdl import builtin
    from ggp.gdl.differential import dn_init, dn_set
    from ggp.gdl.evaluate import pn_goals, pn_load, pn_next

    game = builtin("bomberman")
    for seed in range(3):
        for state in random_game(game, seed=seed, every=5):
            for role in game.roles:
                game.legal_moves(state, role)
            if game.is_terminal(state):
                assert all(0 <= g <= 100 for g in game.goals(state))
    for incremental in (False, True):
        for scratch in (0, 1, 40):
            goals, lengths, _ = game.random_playouts(30, seed=5, incremental=incremental, scratch=scratch)
            assert ((goals >= 0) & (goals <= 100)).all() and (lengths > 0).all()
    assert game.random_playouts(0, seed=1)[0].shape == (0, 2)
    net = game.propnet.net
    nodes, nbase = game.propnet.num_nodes, game.propnet.num_base
    vals = np.zeros(nodes, dtype=np.uint8)
    with pytest.raises(ValueError, match="pn_load"):
        pn_load(net, vals, np.zeros(nbase - 1, dtype=np.uint8))
    with pytest.raises(ValueError, match="pn_load"):
        pn_load(net, np.zeros(nodes - 1, dtype=np.uint8), np.zeros(nbase, dtype=np.uint8))
    pn_load(net, vals, game.initial_state().array)
    with pytest.raises(ValueError, match="pn_next"):
        pn_next(net, vals, np.array([nodes + 5, -1], dtype=np.int32), np.zeros(nbase, dtype=np.uint8))
    with pytest.raises(ValueError, match="pn_next"):
        pn_next(net, vals, np.array([0, -1], dtype=np.int32), np.zeros(nbase, dtype=np.uint8))
    with pytest.raises(ValueError, match="pn_goals"):
        pn_goals(net, vals.copy(), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    cnt = np.zeros(nodes, dtype=np.int32)
    dn_init(net, vals, cnt, game.initial_state().array)
    stack = np.zeros(4 * nodes, dtype=np.int32)
    dirty = np.zeros(2 * (net[5].shape[0] // 3) + 1, dtype=np.int32)
    for node in (-1, nodes, 2**31 - 1):
        with pytest.raises(ValueError, match="dn_set"):
            dn_set(net, vals, cnt, stack, dirty, node, 1)
    assert dn_set(net, vals, cnt, np.zeros(2, dtype=np.int32), dirty, 2, 1 - int(vals[2])) in (True, False)
