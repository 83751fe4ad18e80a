"""Perft: counting joint-move sequences from a position.

RULES.md gives the Amazons figures counted one joint move per GGP state
(move and fire are separate steps), REFERENCES.md gives one more depth. They
are checked through the compiled kernel; a plain recursion over the public
API (``joint_moves`` / ``next_state``) must find the same numbers, which also
checks the kernel against the API path for every game.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

import ggp
from conftest import GAME_NAMES
from ggp.core.kernels import perft, random_playouts


def api_perft(game: ggp.Game, state: ggp.State, depth: int) -> int:
    """Joint-move sequences of length ``depth``; a sequence stops at a terminal state."""
    if depth == 0:
        return 1
    if game.is_terminal(state):
        return 0
    joints = game.joint_moves(state)
    if depth == 1:
        return len(joints)
    return sum(api_perft(game, game.next_state(state, joint), depth - 1) for joint in joints)


def kernel_perft(game: ggp.Game, state: ggp.State, depth: int) -> int:
    return perft(game.kernel, state.array, depth)


# --- the published figures, through the kernel -------------------------------------------------

AMAZONS_8X8 = [60, 1_232, 70_386, 1_331_198]
AMAZONS_10X10 = [80, 2_176, 168_420, 4_307_152]


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_amazons_8x8_perft_by_steps(depth: int) -> None:
    """8x8 Amazons by GGP steps: 60, 1,232, 70,386, 1,331,198."""
    game = ggp.load("amazons_8x8")
    assert kernel_perft(game, game.initial_state(), depth) == AMAZONS_8X8[depth - 1]


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_amazons_10x10_perft_by_steps(depth: int) -> None:
    """10x10 Amazons by GGP steps: 80, 2,176, 168,420, 4,307,152 (2,176 and 4,307,152 are the whole-turn figures)."""
    game = ggp.load("amazons_10x10")
    assert kernel_perft(game, game.initial_state(), depth) == AMAZONS_10X10[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "expected"), [("amazons_8x8", 77_251_700), ("amazons_10x10", 343_825_704)])
def test_amazons_perft_depth_5(name: str, expected: int) -> None:
    """REFERENCES.md: depth 5 by steps is 77,251,700 on 8x8 and 343,825,704 on 10x10."""
    game = ggp.load(name)
    assert kernel_perft(game, game.initial_state(), 5) == expected


def test_perft_depth_zero_counts_the_empty_sequence() -> None:
    game = ggp.load("wallmaze")
    assert kernel_perft(game, game.initial_state(), 0) == 1
    assert api_perft(game, game.initial_state(), 0) == 1


# --- the plain API agrees ----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2])
def test_amazons_8x8_api_perft(depth: int) -> None:
    game = ggp.load("amazons_8x8")
    assert api_perft(game, game.initial_state(), depth) == AMAZONS_8X8[depth - 1]


@pytest.mark.parametrize("depth", [1, 2])
def test_amazons_10x10_api_perft(depth: int) -> None:
    game = ggp.load("amazons_10x10")
    assert api_perft(game, game.initial_state(), depth) == AMAZONS_10X10[depth - 1]


def test_first_steps_counted_by_hand() -> None:
    """Small figures that follow from the rules directly.

    * bomberman2p: at the start each player has north/east (or south/west), nowhere and
      dropBomb, and both move at once: 4 x 4 = 16.
    * bomberman: only bomberman acts in state 1 (4 moves), only bomberwoman in state 2
      (4 moves): 4, then 16.
    * wallmaze: each marker can step out of its corner or noop: 2 x 2 = 4; after that a marker
      that stepped out has 3 moves (back, on, noop), one that stayed has 2: 9 + 6 + 6 + 4 = 25.
    """
    counts = {}
    for name in ("bomberman2p", "bomberman", "wallmaze"):
        game = ggp.load(name)
        counts[name] = [api_perft(game, game.initial_state(), d) for d in (1, 2)]
    assert counts["bomberman2p"][0] == 16
    assert counts["bomberman"] == [4, 16]
    assert counts["wallmaze"] == [4, 25]


# Depths that keep the API recursion well under a second per game.
API_DEPTHS = {"amazons_10x10": 2, "amazons_8x8": 3, "bomberman": 5, "bomberman2p": 3, "wallmaze": 5}


@pytest.mark.parametrize("name", GAME_NAMES)
def test_kernel_agrees_with_api_from_the_start(name: str) -> None:
    game = ggp.load(name)
    start = game.initial_state()
    for depth in range(1, API_DEPTHS[name] + 1):
        assert kernel_perft(game, start, depth) == api_perft(game, start, depth), f"{name} depth {depth}"


def _random_positions(game: ggp.Game, seed: int, count: int) -> list[ggp.State]:
    """Positions along one random game (including states near its end)."""
    rng = random.Random(seed)
    state = game.initial_state()
    seen = [state]
    while not game.is_terminal(state):
        state = game.next_state(state, rng.choice(game.joint_moves(state)))
        seen.append(state)
    picks = seen[-4:] + rng.sample(seen, min(count, len(seen)))
    return picks


@pytest.mark.parametrize("name", GAME_NAMES)
def test_kernel_agrees_with_api_in_mid_game(name: str) -> None:
    """Along random games, including the last states before the end (terminal states count 0)."""
    game = ggp.load(name)
    depth = 2 if name.startswith("amazons") else 3
    checked_terminal = False
    for seed in range(3):
        for state in _random_positions(game, seed, 4):
            checked_terminal |= game.is_terminal(state)
            assert kernel_perft(game, state, depth) == api_perft(game, state, depth), game.state_to_json(state)
    assert checked_terminal  # the last state of each game is terminal: perft 0 there
    final = _random_positions(game, 0, 0)[-1]
    assert kernel_perft(game, final, 1) == 0


def test_the_compiled_perft_survives_new_processes_and_is_reused() -> None:
    """The compiled perft loop is cached: a new process must run it, and not store it again.

    Each run below is a fresh interpreter, as a user's scripts are. The first one may compile
    and store the loop; the second must find it (no new cache files) and, like the first, work.
    """
    import numba

    package = Path(ggp.__file__).parent
    cache_dirs = [package]
    if numba.config.CACHE_DIR:  # NUMBA_CACHE_DIR moves the cache
        cache_dirs.append(Path(numba.config.CACHE_DIR))

    def cache_files() -> list[str]:
        return sorted(str(p) for d in cache_dirs for p in d.rglob("*perft*") if p.suffix in (".nbi", ".nbc"))

    code = (
        "import ggp\n"
        "from ggp.core.kernels import perft\n"
        "g = ggp.load('wallmaze')\n"
        "print(perft(g.kernel, g.initial_state().array, 2))\n"
    )

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    assert run() == "25"
    before = cache_files()
    assert run() == "25"
    after = cache_files()
    assert after == before, f"{len(after) - len(before)} new cache files for an already compiled loop"


# --- the other compiled loop: random playouts ------------------------------------------------------


@pytest.mark.parametrize("name", ["amazons_8x8", "amazons_10x10"])
def test_random_amazons_playouts_end_at_a_move_phase_and_the_mover_loses(name: str) -> None:
    """A game ends when the role to move has no move: after an even number of steps, so after k whole
    turns; white is to move (and loses) when k is even."""
    game = ggp.load(name)
    goals, lengths = random_playouts(game.kernel, game.initial_state().array, 200, seed=7)
    assert lengths.min() > 0 and (lengths % 2 == 0).all()
    for (white, black), steps in zip(goals.tolist(), lengths.tolist(), strict=True):
        turns = steps // 2
        assert (white, black) == ((0, 100) if turns % 2 == 0 else (100, 0))


@pytest.mark.parametrize(
    ("name", "longest", "results"),
    [
        ("bomberman2p", 49, {(0, 100), (100, 0), (50, 50)}),
        ("bomberman", 49, {(0, 100), (100, 0), (50, 50)}),
        ("wallmaze", 29, {(0, 0), (100, 0), (0, 100), (75, 25), (25, 75), (50, 50)}),
    ],
)
def test_random_playouts_end_by_the_step_limit(name: str, longest: int, results: set[tuple[int, int]]) -> None:
    """Bomberman ends by step 50 (49 joint moves), the wall maze by step 30 (29), with one of the listed results."""
    game = ggp.load(name)
    goals, lengths = random_playouts(game.kernel, game.initial_state().array, 300, seed=3)
    assert lengths.max() <= longest
    assert {tuple(g) for g in goals.tolist()} <= results
    if name.startswith("bomberman"):
        assert lengths.min() >= 5  # the first fire can appear in state 6


def test_random_playouts_stop_at_max_steps() -> None:
    game = ggp.load("wallmaze")
    goals, lengths = random_playouts(game.kernel, game.initial_state().array, 50, seed=1, max_steps=3)
    assert (lengths == 3).all()
    assert (goals == 0).all()  # nobody can arrive in 3 moves: goals 0/0
