"""``ggp perft GAME DEPTH``: count the joint-move sequences of a given length (the rules' speed and correctness)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..core.game import Game, State
from .argtypes import MAX_PERFT_DEPTH, game_ref, perft_depth
from .loading import load_game


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "perft",
        help="count the joint-move sequences of a given length",
        description=(
            "Count the joint-move sequences of length DEPTH from the initial state (stopping at terminal "
            "states), with the game's compiled kernel when it has one. The count is the last line."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("depth", metavar="DEPTH", type=perft_depth, help=f"0 to {MAX_PERFT_DEPTH}")
    p.add_argument("--api", action="store_true", help="recurse through the Game API instead of the kernel")
    p.set_defaults(func=cmd_perft)


def kernel_and_array(game: Game, state: State) -> tuple[Any, Any] | None:
    """The game's compiled kernel and the state's array, if the game has them."""
    kernel = getattr(game, "kernel", None)
    array = getattr(state, "array", None)
    if kernel is None or array is None:
        return None
    return kernel, array


def perft_api(game: Game, state: State, depth: int) -> int:
    """Perft through the Game API: joint-move sequences of length ``depth``, stopping at terminal states."""
    if depth <= 0:
        return 1
    if game.is_terminal(state):
        return 0
    joints = game.joint_moves(state)
    if depth == 1:
        return len(joints)
    return sum(perft_api(game, game.next_state(state, joint), depth - 1) for joint in joints)


def cmd_perft(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    state = game.initial_state()
    fast = None if args.api else kernel_and_array(game, state)
    compiled_in = 0.0
    if fast is not None:
        from ..core.kernels import perft

        began = time.perf_counter()
        perft(fast[0], fast[1], 1)  # compile (or load numba's cache) before timing
        compiled_in = time.perf_counter() - began
        began = time.perf_counter()
        count = perft(fast[0], fast[1], args.depth)
        how = f"compiled kernel, {compiled_in:.1f} s to compile"
    else:
        began = time.perf_counter()
        count = perft_api(game, state, args.depth)
        how = "Game API"
    elapsed = time.perf_counter() - began
    rate = f", {count / elapsed:,.0f} per second" if elapsed > 0 else ""
    print(f"perft({args.depth}) of {game.name} ({how}): {count:,} sequences in {elapsed:.3f} s{rate}")
    print(count)
    return 0
