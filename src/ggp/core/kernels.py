"""Compiled rules and the loops that run on them.

A native game states its rules as four numba functions over its state array
(its :class:`Kernel`). The loops every game shares (perft, random playouts)
are written once here as templates and compiled per game by
:func:`make_kernel`, so each game gets loops with its rules inlined.

Why templates rather than passing the rule functions as arguments: numba
cannot cache a function that takes other compiled functions as arguments
(every process would recompile for seconds), and a closure is not cached
either. A template copied into the game's module, with its own name, is an
ordinary module-level function: cached, and recompiled when the game's source
changes.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np


@dataclass(frozen=True)
class Kernel:
    """A game's rules as compiled functions over its state array.

    * ``legal(s, role, out) -> n``: writes role's legal actions into ``out[:n]``.
    * ``apply(s, a0, a1)``: plays the joint action in place.
    * ``terminal(s) -> bool`` and ``goals(s) -> int64[2]``.
    * ``perft`` and ``playouts``: the shared loops, compiled for this game
      (call them through :func:`perft` and :func:`random_playouts`).

    Actions are ints below ``num_actions``; the game maps them to KIF text.
    No role ever has more than ``max_actions`` legal actions.
    """

    legal: Callable[..., int]
    apply: Callable[..., None]
    terminal: Callable[..., bool]
    goals: Callable[..., np.ndarray]
    num_actions: int
    max_actions: int
    perft: Callable[..., int]
    playouts: Callable[..., None]


# --- loop templates: `legal`, `apply`, `terminal`, `goals` are the game's ------------------
# (ruff and mypy see free names here; make_kernel binds them.)


def _perft_template(s, depth, width):  # type: ignore[no-untyped-def]
    # Depth-first over joint moves with an explicit stack (a cached numba
    # function cannot call itself through a rebound global).
    if depth <= 0:
        return 1
    if terminal(s):  # type: ignore[name-defined]  # noqa: F821
        return 0
    states = np.empty((depth, s.shape[0]), dtype=s.dtype)
    moves0 = np.empty((depth, width), dtype=np.int64)
    moves1 = np.empty((depth, width), dtype=np.int64)
    n0 = np.zeros(depth, dtype=np.int64)
    n1 = np.zeros(depth, dtype=np.int64)
    nxt = np.zeros(depth, dtype=np.int64)
    states[0] = s
    n0[0] = legal(states[0], 0, moves0[0])  # type: ignore[name-defined]  # noqa: F821
    n1[0] = legal(states[0], 1, moves1[0])  # type: ignore[name-defined]  # noqa: F821
    total = 0
    level = 0
    while level >= 0:
        if level == depth - 1:
            total += n0[level] * n1[level]
            level -= 1
            continue
        j = nxt[level]
        if j >= n0[level] * n1[level]:
            level -= 1
            continue
        nxt[level] = j + 1
        child = states[level + 1]
        child[:] = states[level]
        apply(child, moves0[level, j // n1[level]], moves1[level, j % n1[level]])  # type: ignore[name-defined]  # noqa: F821
        if terminal(child):  # type: ignore[name-defined]  # noqa: F821
            continue
        level += 1
        n0[level] = legal(child, 0, moves0[level])  # type: ignore[name-defined]  # noqa: F821
        n1[level] = legal(child, 1, moves1[level])  # type: ignore[name-defined]  # noqa: F821
        nxt[level] = 0
    return total


def _playouts_template(s, count, seed, max_steps, width, out_goals, out_lengths):  # type: ignore[no-untyped-def]
    np.random.seed(seed)
    buf0 = np.empty(width, dtype=np.int64)
    buf1 = np.empty(width, dtype=np.int64)
    work = s.copy()
    for g in range(count):
        work[:] = s
        steps = 0
        while not terminal(work) and steps < max_steps:  # type: ignore[name-defined]  # noqa: F821
            n0 = legal(work, 0, buf0)  # type: ignore[name-defined]  # noqa: F821
            n1 = legal(work, 1, buf1)  # type: ignore[name-defined]  # noqa: F821
            apply(work, buf0[np.random.randint(n0)], buf1[np.random.randint(n1)])  # type: ignore[name-defined]  # noqa: F821
            steps += 1
        res = goals(work)  # type: ignore[name-defined]  # noqa: F821
        out_goals[g, 0] = res[0]
        out_goals[g, 1] = res[1]
        out_lengths[g] = steps


def _specialise(template: Callable[..., Any], namespace: dict[str, Any], name: str) -> Any:
    """Compile a copy of ``template`` whose globals are ``namespace`` and whose home is its module."""
    code = template.__code__.replace(co_filename=namespace["__file__"], co_name=name, co_qualname=name)
    fn = types.FunctionType(code, namespace, name)
    fn.__qualname__ = name
    fn.__module__ = namespace["__name__"]
    return nb.njit(cache=True)(fn)


def make_kernel(
    module_globals: dict[str, Any],
    tag: str,
    *,
    legal: Callable[..., int],
    apply: Callable[..., None],
    terminal: Callable[..., bool],
    goals: Callable[..., np.ndarray],
    num_actions: int,
    max_actions: int,
) -> Kernel:
    """A game's Kernel, with the shared loops compiled for it.

    Call it at the top level of the game's module with ``globals()``; ``tag``
    names the variant when one module holds several games.
    """
    namespace = {
        "__file__": module_globals["__file__"],
        "__name__": module_globals["__name__"],
        "np": np,
        "legal": legal,
        "apply": apply,
        "terminal": terminal,
        "goals": goals,
    }
    return Kernel(
        legal=legal,
        apply=apply,
        terminal=terminal,
        goals=goals,
        num_actions=num_actions,
        max_actions=max_actions,
        perft=_specialise(_perft_template, namespace, f"_perft_{tag}"),
        playouts=_specialise(_playouts_template, namespace, f"_playouts_{tag}"),
    )


def perft(kernel: Kernel, s: np.ndarray, depth: int) -> int:
    """The number of joint-move sequences of length ``depth`` from state array ``s``.

    Sequences stop at terminal states; depth 0 counts the empty sequence.
    """
    return int(kernel.perft(np.ascontiguousarray(s), depth, kernel.max_actions))


def random_playouts(
    kernel: Kernel, s: np.ndarray, count: int, seed: int = 0, max_steps: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``count`` uniformly random games from state array ``s`` in one compiled call.

    Returns ``(goals, lengths)``: an int64 array of shape (count, 2) with each
    game's goals, and the number of joint moves each game took.
    """
    out_goals = np.zeros((count, 2), dtype=np.int64)
    out_lengths = np.zeros(count, dtype=np.int64)
    kernel.playouts(s.copy(), count, seed, max_steps, kernel.max_actions, out_goals, out_lengths)
    return out_goals, out_lengths
