"""Compiled loops over any native game's kernel: perft and random playouts.

These take a game's kernel functions as arguments, so one compiled loop
serves every game (numba specialises it per game and caches the result).
"""

from __future__ import annotations

from collections.abc import Callable

import numba as nb
import numpy as np

from .native import Kernel


@nb.njit(cache=True)
def _perft(
    legal: Callable[..., int],
    apply: Callable[..., None],
    terminal: Callable[..., bool],
    s: np.ndarray,
    depth: int,
    width: int,
) -> int:
    if terminal(s):
        return 0
    buf0 = np.empty(width, dtype=np.int64)
    buf1 = np.empty(width, dtype=np.int64)
    n0 = legal(s, 0, buf0)
    n1 = legal(s, 1, buf1)
    if depth == 1:
        return n0 * n1
    total = 0
    child = s.copy()
    for i in range(n0):
        for j in range(n1):
            child[:] = s
            apply(child, buf0[i], buf1[j])
            total += _perft(legal, apply, terminal, child, depth - 1, width)
    return total


def perft(kernel: Kernel, s: np.ndarray, depth: int) -> int:
    """The number of joint-move sequences of length ``depth`` from state array ``s``.

    Sequences stop at terminal states; depth 0 counts the empty sequence.
    """
    if depth <= 0:
        return 1
    return int(_perft(kernel.legal, kernel.apply, kernel.terminal, s.copy(), depth, kernel.max_actions))


@nb.njit(cache=True)
def _playouts(
    legal: Callable[..., int],
    apply: Callable[..., None],
    terminal: Callable[..., bool],
    goals: Callable[..., np.ndarray],
    s: np.ndarray,
    count: int,
    seed: int,
    max_steps: int,
    width: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
) -> None:
    np.random.seed(seed)
    buf0 = np.empty(width, dtype=np.int64)
    buf1 = np.empty(width, dtype=np.int64)
    work = s.copy()
    for g in range(count):
        work[:] = s
        steps = 0
        while not terminal(work) and steps < max_steps:
            n0 = legal(work, 0, buf0)
            n1 = legal(work, 1, buf1)
            apply(work, buf0[np.random.randint(n0)], buf1[np.random.randint(n1)])
            steps += 1
        res = goals(work)
        out_goals[g, 0] = res[0]
        out_goals[g, 1] = res[1]
        out_lengths[g] = steps


def random_playouts(
    kernel: Kernel, s: np.ndarray, count: int, seed: int = 0, max_steps: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``count`` uniformly random games from state array ``s`` in one compiled call.

    Returns ``(goals, lengths)``: an int64 array of shape (count, 2) with each
    game's goals, and the number of joint moves each game took.
    """
    out_goals = np.zeros((count, 2), dtype=np.int64)
    out_lengths = np.zeros(count, dtype=np.int64)
    _playouts(
        kernel.legal,
        kernel.apply,
        kernel.terminal,
        kernel.goals,
        s.copy(),
        count,
        seed,
        max_steps,
        kernel.max_actions,
        out_goals,
        out_lengths,
    )
    return out_goals, out_lengths
