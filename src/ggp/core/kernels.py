"""Compiled rules and the loops that run on them.

A native game states its rules as four numba functions over its state array
(its :class:`Kernel`). The loops every game shares (perft, random playouts,
search) are written once as templates and compiled per game by
:meth:`Kernel.specialise`, so each game gets loops with its rules inlined.

Why templates rather than passing the rule functions as arguments: numba
cannot cache a function that takes other compiled functions as arguments
(every process would recompile for seconds), and a closure is not cached
either. A renamed copy of a template, with the game's functions as its
globals, is an ordinary function to numba: cached on disk.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np


@dataclass(frozen=True, eq=False)
class Kernel:
    """A game's rules as compiled functions over its state array.

    * ``legal(s, role, out) -> n``: writes role's legal actions into ``out[:n]``.
    * ``apply(s, a0, a1)``: plays the joint action in place.
    * ``terminal(s) -> bool`` and ``goals(s) -> int64[2]``.
    * ``rollout(s, rng) -> None``: plays ``s`` in place to a terminal state at
      random; ``rng`` is a one-element uint64 array (see :func:`rng_next`).
      Games may offer a faster rollout than the uniform one.

    Actions are ints below ``num_actions``; the game maps them to KIF text.
    No role ever has more than ``max_actions`` legal actions.

    These functions trust their input, as compiled code must to be fast: ``s``
    a state array of this game (:attr:`check` passes it), ``role`` 0 or 1,
    ``out`` at least ``max_actions`` long, and the actions legal in ``s``.
    Anything else may read or write outside the arrays. Every entry point of
    ggp checks before it calls them (``Game.next_state``, ``VectorGame.step``,
    :func:`perft`, :func:`rollouts`, :func:`random_playouts`, the searches);
    code that calls them directly takes that duty on.
    """

    legal: Callable[..., int]
    apply: Callable[..., None]
    terminal: Callable[..., bool]
    goals: Callable[..., np.ndarray]
    num_actions: int
    max_actions: int
    #: What templates compiled for this game see as globals.
    namespace: dict[str, Any] = field(repr=False)
    #: Raises StateFormatError (a ValueError) unless its argument is a state array of this game:
    #: dtype, shape and contents (None: the game declares no check, only the shape is checked).
    check: Callable[[np.ndarray], None] | None = field(default=None, repr=False)
    _compiled: dict[str, Any] = field(default_factory=dict, repr=False)

    def specialise(self, template: Callable[..., Any], **overrides: Any) -> Any:
        """``template`` compiled for this game: its free names ``legal``, ``apply``,
        ``terminal``, ``goals``, ``rollout`` and ``max_actions`` are this kernel's,
        and ``overrides`` bind further names (compiled functions, by their ``__name__``).

        The result is cached on disk by numba, once per game, template and overrides.
        """
        suffix = "_".join(str(getattr(v, "__name__", v)) for _, v in sorted(overrides.items()))
        key = f"{template.__qualname__}_{suffix}"
        fn = self._compiled.get(key)
        if fn is None:
            namespace = {**self.namespace, **overrides}
            if overrides:
                namespace["_tag"] = f"{namespace['_tag']}_{suffix}"
            fn = self._compiled[key] = _specialise(template, namespace)
        return fn


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
            if n0 == 0 or n1 == 0:  # a role without a move: the game cannot go on
                break
            apply(work, buf0[np.random.randint(n0)], buf1[np.random.randint(n1)])  # type: ignore[name-defined]  # noqa: F821
            steps += 1
        res = goals(work)  # type: ignore[name-defined]  # noqa: F821
        out_goals[g, 0] = res[0]
        out_goals[g, 1] = res[1]
        out_lengths[g] = steps


@nb.njit(cache=True, inline="always")
def rng_next(rng: np.ndarray) -> np.uint64:
    """The next number of a xorshift64* generator whose state is ``rng[0]`` (never 0)."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(2685821657736338717)


@nb.njit(cache=True, inline="always")
def rng_below(rng: np.ndarray, n: int) -> np.int64:
    """A random int in ``[0, n)``, for n below 2^31.

    Multiply-shift (Lemire) on the top 32 bits instead of a modulo: a division
    costs as much as the rest of a playout step.
    """
    return np.int64(((rng_next(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


def rng_state(seed: int) -> np.ndarray:
    """A generator state for :func:`rng_next`, from any int seed."""
    x = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)  # int(): numpy ints would overflow
    return np.array([x or 1], dtype=np.uint64)


def _uniform_rollout_template(s, rng):  # type: ignore[no-untyped-def]
    buf0 = np.empty(max_actions, dtype=np.int64)  # type: ignore[name-defined]  # noqa: F821
    buf1 = np.empty(max_actions, dtype=np.int64)  # type: ignore[name-defined]  # noqa: F821
    while not terminal(s):  # type: ignore[name-defined]  # noqa: F821
        n0 = legal(s, 0, buf0)  # type: ignore[name-defined]  # noqa: F821
        n1 = legal(s, 1, buf1)  # type: ignore[name-defined]  # noqa: F821
        if n0 == 0 or n1 == 0:  # a role without a move: the game cannot go on (no built-in game gets here)
            return
        apply(s, buf0[rng_below(rng, n0)], buf1[rng_below(rng, n1)])  # type: ignore[name-defined]  # noqa: F821


def _specialise(template: Callable[..., Any], namespace: dict[str, Any]) -> Any:
    """Compile a copy of ``template`` whose globals are ``namespace``.

    The copy is named after the template, the game and a digest of the game's
    source, so numba caches one copy per game and drops it when either the
    template's file (numba's own check) or the game's source changes.
    """
    name = f"{template.__name__}_{namespace['_tag']}_{namespace['_digest']}"
    code = template.__code__.replace(co_name=name, co_qualname=name)
    fn = types.FunctionType(code, {**template.__globals__, **namespace}, name)
    fn.__qualname__ = name
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
    rollout: Callable[..., None] | None = None,
    check: Callable[[np.ndarray], None] | None = None,
) -> Kernel:
    """A game's Kernel. Call it at the top level of the game's module with
    ``globals()``; ``tag`` names the variant when one module holds several games.
    Without ``rollout``, the uniform random rollout is compiled for the game.
    ``check`` is the game's state-array check (see :attr:`Kernel.check`).
    """
    source = Path(module_globals["__file__"]).read_bytes()
    namespace: dict[str, Any] = {
        "_tag": tag,
        "_digest": hashlib.sha1(source).hexdigest()[:10],
        "legal": legal,
        "apply": apply,
        "terminal": terminal,
        "goals": goals,
        "max_actions": max_actions,
    }
    kernel = Kernel(legal, apply, terminal, goals, num_actions, max_actions, namespace, check)
    namespace["rollout"] = rollout if rollout is not None else kernel.specialise(_uniform_rollout_template)
    return kernel


def with_sizes(
    kernel: Kernel, num_actions: int, max_actions: int, check: Callable[[np.ndarray], None] | None = None
) -> Kernel:
    """The same compiled rules for a game of another size (Amazons 8x8 beside 10x10), with its own state check."""
    namespace = {**kernel.namespace, "max_actions": max_actions, "_tag": f"{kernel.namespace['_tag']}_{max_actions}"}
    return Kernel(kernel.legal, kernel.apply, kernel.terminal, kernel.goals, num_actions, max_actions, namespace, check)


def _rollouts_template(s, count, rng, out_goals):  # type: ignore[no-untyped-def]
    work = s.copy()
    for g in range(count):
        work[:] = s
        rollout(work, rng)  # type: ignore[name-defined]  # noqa: F821
        res = goals(work)  # type: ignore[name-defined]  # noqa: F821
        out_goals[g, 0] = res[0]
        out_goals[g, 1] = res[1]


#: Most games :func:`rollouts` and :func:`random_playouts` play in one call (their results take 24 bytes a game).
MAX_GAMES = 10_000_000
#: Deepest :func:`perft`; far beyond what finishes, but it bounds the search's stack arrays.
MAX_PERFT_DEPTH = 1000
#: Largest seed :func:`rollouts` takes (its generator mixes any 64-bit seed).
MAX_SEED = 2**63 - 1
#: Largest seed :func:`random_playouts` takes: numba's ``np.random.seed`` keeps only 32 bits.
MAX_PLAYOUT_SEED = 2**32 - 1


def _whole(name: str, value: Any, low: int, high: int) -> int:
    """``value`` if it is an int from ``low`` to ``high`` (numpy ints too, bools not); ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 24 else repr(value)[:21] + "..."
        raise ValueError(f"{name} must be an int from {low} to {high}, got {shown}")
    return int(value)


def state_array(kernel: Kernel, s: Any) -> np.ndarray:
    """``s`` as a contiguous copy, once it is known to be a state array of ``kernel``'s game.

    Raises StateFormatError (a ValueError) for anything else, so compiled code
    never walks off a malformed state.
    """
    from .errors import StateFormatError

    if not isinstance(s, np.ndarray) or s.ndim != 1 or s.size == 0:
        what = f"an array of shape {s.shape}" if isinstance(s, np.ndarray) else type(s).__name__
        raise StateFormatError(f"a state array is a non-empty 1-D numpy array (a state's .array), not {what}")
    if kernel.check is not None:
        kernel.check(s)
    return np.ascontiguousarray(s).copy()


def rollouts(kernel: Kernel, s: np.ndarray, count: int, seed: int = 0) -> np.ndarray:
    """The goals of ``count`` games played from ``s`` by the game's own random rollout.

    That is the uniform random player unless the game offers a faster one
    (Amazons: a random amazon that can move, then a random destination, then a
    random arrow, as OpenSpiel's action decomposition does). Returns an int64
    array of shape (count, 2). ``count`` runs from 0 to :data:`MAX_GAMES`,
    ``seed`` from 0 to 2^63 - 1; ``s`` must pass the game's state check.
    """
    count = _whole("rollouts: count", count, 0, MAX_GAMES)
    seed = _whole("rollouts: seed", seed, 0, MAX_SEED)
    start = state_array(kernel, s)
    out = np.zeros((count, 2), dtype=np.int64)
    kernel.specialise(_rollouts_template)(start, count, rng_state(seed), out)
    return out


def perft(kernel: Kernel, s: np.ndarray, depth: int) -> int:
    """The number of joint-move sequences of length ``depth`` (0 to 1000) from state array ``s``.

    Sequences stop at terminal states; depth 0 counts the empty sequence.
    """
    depth = _whole("perft: depth", depth, 0, MAX_PERFT_DEPTH)
    start = state_array(kernel, s)
    return int(kernel.specialise(_perft_template)(start, depth, kernel.max_actions))


def random_playouts(
    kernel: Kernel, s: np.ndarray, count: int, seed: int = 0, max_steps: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``count`` uniformly random games from state array ``s`` in one compiled call.

    Returns ``(goals, lengths)``: an int64 array of shape (count, 2) with each
    game's goals, and the number of joint moves each game took. ``count`` runs
    from 0 to :data:`MAX_GAMES`, ``seed`` from 0 to 2^32 - 1 (numba's generator
    keeps 32 bits of it) and ``max_steps`` from 0 to 2^62.
    """
    count = _whole("random_playouts: count", count, 0, MAX_GAMES)
    seed = _whole("random_playouts: seed", seed, 0, MAX_PLAYOUT_SEED)
    max_steps = _whole("random_playouts: max_steps", max_steps, 0, 2**62)
    start = state_array(kernel, s)
    out_goals = np.zeros((count, 2), dtype=np.int64)
    out_lengths = np.zeros(count, dtype=np.int64)
    kernel.specialise(_playouts_template)(start, count, seed, max_steps, kernel.max_actions, out_goals, out_lengths)
    return out_goals, out_lengths
