"""Compiled rules and the loops that run on them: one kernel protocol for every game.

Every game, built-in or read from a rule sheet, states its rules as five
numba functions over a small state array, its :class:`Kernel`:

* ``legal(ctx, s, role, out) -> n``: writes role's legal actions into ``out[:n]``;
* ``apply(ctx, s, joint)``: plays ``joint`` (one action per role, an int64 array) in place;
* ``terminal(ctx, s) -> bool`` and ``goals(ctx, s, out)`` (each role's goal into ``out``);
* ``rollout(ctx, s, rng)``: plays ``s`` in place to the end at random; ``rng`` is a
  one-element uint64 array (see :func:`rng_next`). Games may offer a faster rollout
  than the uniform one.

``ctx`` is whatever the game's rules need beside the state, made by
:meth:`Kernel.context`: nothing for a built-in game, the propositional network
and a scratch copy of its values for a rule sheet's game. A context belongs to
one thread at a time.

The loops every game shares (perft, random playouts, rollouts, tree search,
batched stepping) are written once as templates over those names and compiled
per game by :meth:`Kernel.specialise`, so each game gets loops with its rules
inlined. Why templates rather than passing the rule functions as arguments:
numba cannot cache a function that takes other compiled functions as
arguments (every process would recompile for seconds), and a closure is not
cached either. A renamed copy of a template, with the game's functions as its
globals, is an ordinary function to numba: cached on disk. Rule sheets share
one set of compiled loops per number of roles, since their rules are data in
``ctx``, not code.
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
    """A game's rules as compiled functions over its state array (see the module docstring).

    Actions of a role are ints below ``num_actions``; the game maps them to
    KIF text. No role ever has more than ``max_actions`` legal actions.

    These functions trust their input, as compiled code must to be fast: ``s``
    a state array of this game (:attr:`check` passes it), ``role`` below
    ``num_roles``, ``out`` at least ``max_actions`` long, the actions legal in
    ``s``, and ``ctx`` from :meth:`context`. Anything else may read or write
    outside the arrays. Every entry point of ggp checks before it calls them
    (``Game.next_state``, ``Game.apply_actions``, ``VectorGame.step``,
    :func:`perft`, :func:`rollouts`, :func:`random_playouts`, the searches);
    code that calls them directly takes that duty on.
    """

    legal: Callable[..., int]
    apply: Callable[..., None]
    terminal: Callable[..., bool]
    goals: Callable[..., None]
    rollout: Callable[..., None]
    num_roles: int
    num_actions: int
    max_actions: int
    #: The state arrays' dtype.
    dtype: np.dtype[Any]
    #: What templates compiled for this game see as globals.
    namespace: dict[str, Any] = field(repr=False)
    #: Makes a fresh ``ctx`` for the functions above.
    make_context: Callable[[], Any] = field(repr=False)
    #: Raises StateFormatError (a ValueError) unless its argument is a state array of this game:
    #: dtype, shape and contents (None: the game declares no check, only the shape is checked).
    check: Callable[[np.ndarray], None] | None = field(default=None, repr=False)
    #: A built-in game's own two-role functions ``legal(s, role, out)``, ``apply(s, a0, a1)``,
    #: ``terminal(s)``, ``goals(s)`` (None for rule sheets): what its players' own compiled code calls.
    native: NativeRules | None = field(default=None, repr=False)
    #: How many rollouts ``kernel_rollouts(ctx, states, n, rng, out)`` (a name of the namespace, where the kernel
    #: has it) should play together to be worth it: 1 where it has none, or where one at a time is as fast.
    #: A function: a rule sheet's kernel measures it once per network, when first asked.
    rollout_batch: Callable[[], int] = field(default=lambda: 1, repr=False)

    def context(self) -> Any:
        """A fresh ``ctx`` for this kernel's functions (one per thread or search)."""
        return self.make_context()

    def specialise(self, template: Callable[..., Any], **overrides: Any) -> Any:
        """``template`` compiled for this game: its free names are this kernel's (``kernel_legal``,
        ``kernel_apply``, ``kernel_terminal``, ``kernel_goals``, ``kernel_rollout``, ``num_roles``, and
        ``kernel_playout`` where the kernel has its own playout loop, as a rule sheet's does;
        a built-in game's templates may also use its own two-role ``legal``, ``apply``, ``terminal``,
        ``goals``, ``rollout`` and ``max_actions``), and ``overrides`` bind further names
        (compiled functions, by their ``__name__``).

        The result is cached on disk by numba, once per game (per number of roles for rule
        sheets), template and overrides.
        """
        namespace = {**self.namespace, **overrides}
        if overrides:
            # The overrides' names, digested: a template built from specialised parts (which are named after
            # their own parts) would otherwise get a name longer than a cache file's name may be.
            parts = "_".join(f"{k}={getattr(v, '__name__', v)}" for k, v in sorted(overrides.items()))
            namespace["_tag"] = f"{namespace['_tag']}_{hashlib.sha1(parts.encode()).hexdigest()[:10]}"
        return _specialise(template, namespace)


@dataclass(frozen=True)
class NativeRules:
    """A built-in game's own compiled two-role rules (see :attr:`Kernel.native`)."""

    legal: Callable[..., int]
    apply: Callable[..., None]
    terminal: Callable[..., bool]
    goals: Callable[..., np.ndarray]
    rollout: Callable[..., None]


# --- loop templates over the kernel protocol ---------------------------------------------------
# (ruff and mypy see free names here; Kernel.specialise binds them.)


def _perft_template(ctx, s, depth, width):  # type: ignore[no-untyped-def]
    # Depth-first over joint moves with an explicit stack (a cached numba
    # function cannot call itself through a rebound global). Joint moves are
    # numbered in mixed radix, the last role's action varying fastest.
    if depth <= 0:
        return 1
    if kernel_terminal(ctx, s):  # type: ignore[name-defined]  # noqa: F821
        return 0
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    states = np.empty((depth, s.shape[0]), dtype=s.dtype)
    moves = np.empty((depth, nr, width), dtype=np.int64)
    counts = np.zeros((depth, nr), dtype=np.int64)
    joints = np.zeros(depth, dtype=np.int64)
    nxt = np.zeros(depth, dtype=np.int64)
    joint = np.empty(nr, dtype=np.int64)
    states[0] = s
    product = 1
    for r in range(nr):
        counts[0, r] = kernel_legal(ctx, states[0], r, moves[0, r])  # type: ignore[name-defined]  # noqa: F821
        product *= counts[0, r]
    joints[0] = product
    total = 0
    level = 0
    while level >= 0:
        if level == depth - 1:
            total += joints[level]
            level -= 1
            continue
        j = nxt[level]
        if j >= joints[level]:
            level -= 1
            continue
        nxt[level] = j + 1
        for r in range(nr - 1, -1, -1):
            k = counts[level, r]
            joint[r] = moves[level, r, j % k]
            j //= k
        child = states[level + 1]
        child[:] = states[level]
        kernel_apply(ctx, child, joint)  # type: ignore[name-defined]  # noqa: F821
        if kernel_terminal(ctx, child):  # type: ignore[name-defined]  # noqa: F821
            continue
        level += 1
        product = 1
        for r in range(nr):
            counts[level, r] = kernel_legal(ctx, child, r, moves[level, r])  # type: ignore[name-defined]  # noqa: F821
            product *= counts[level, r]
        joints[level] = product
        nxt[level] = 0
    return total


def _playouts_template(ctx, s, count, seed, max_steps, width, out_goals, out_lengths):  # type: ignore[no-untyped-def]
    np.random.seed(seed)
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    buf = np.empty((nr, width), dtype=np.int64)
    joint = np.empty(nr, dtype=np.int64)
    res = np.empty(nr, dtype=np.int64)
    work = s.copy()
    for g in range(count):
        work[:] = s
        steps = 0
        while not kernel_terminal(ctx, work) and steps < max_steps:  # type: ignore[name-defined]  # noqa: F821
            stuck = False
            for r in range(nr):
                n = kernel_legal(ctx, work, r, buf[r])  # type: ignore[name-defined]  # noqa: F821
                if n == 0:  # a role without a move: the game cannot go on
                    stuck = True
                    break
                joint[r] = buf[r, np.random.randint(n)]
            if stuck:
                break
            kernel_apply(ctx, work, joint)  # type: ignore[name-defined]  # noqa: F821
            steps += 1
        kernel_goals(ctx, work, res)  # type: ignore[name-defined]  # noqa: F821
        for r in range(nr):
            out_goals[g, r] = res[r]
        out_lengths[g] = steps


def _fused_playouts_template(ctx, s, count, seed, max_steps, width, out_goals, out_lengths):  # type: ignore[no-untyped-def]
    # _playouts_template for a kernel with its own playout loop (kernel_playout, drawing the same moves)
    np.random.seed(seed)
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    res = np.empty(nr, dtype=np.int64)
    work = s.copy()
    for g in range(count):
        work[:] = s
        out_lengths[g] = kernel_playout(ctx, work, max_steps)  # type: ignore[name-defined]  # noqa: F821
        kernel_goals(ctx, work, res)  # type: ignore[name-defined]  # noqa: F821
        for r in range(nr):
            out_goals[g, r] = res[r]


def _rollouts_template(ctx, s, count, rng, out_goals):  # type: ignore[no-untyped-def]
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    res = np.empty(nr, dtype=np.int64)
    work = s.copy()
    for g in range(count):
        work[:] = s
        kernel_rollout(ctx, work, rng)  # type: ignore[name-defined]  # noqa: F821
        kernel_goals(ctx, work, res)  # type: ignore[name-defined]  # noqa: F821
        for r in range(nr):
            out_goals[g, r] = res[r]


# --- a built-in game's two-role rules, seen through the kernel protocol ------------------------
# (free names: the game's own `legal`, `apply`, `terminal`, `goals`, `rollout`.)


def _native_legal(ctx, s, role, out):  # type: ignore[no-untyped-def]
    return legal(s, role, out)  # type: ignore[name-defined]  # noqa: F821


def _native_apply(ctx, s, joint):  # type: ignore[no-untyped-def]
    apply(s, joint[0], joint[1])  # type: ignore[name-defined]  # noqa: F821


def _native_terminal(ctx, s):  # type: ignore[no-untyped-def]
    return terminal(s)  # type: ignore[name-defined]  # noqa: F821


def _native_goals(ctx, s, out):  # type: ignore[no-untyped-def]
    res = goals(s)  # type: ignore[name-defined]  # noqa: F821
    out[0] = res[0]
    out[1] = res[1]


def _native_rollout(ctx, s, rng):  # type: ignore[no-untyped-def]
    rollout(s, rng)  # type: ignore[name-defined]  # noqa: F821


def _uniform_rollout_template(s, rng):  # type: ignore[no-untyped-def]
    buf0 = np.empty(max_actions, dtype=np.int64)  # type: ignore[name-defined]  # noqa: F821
    buf1 = np.empty(max_actions, dtype=np.int64)  # type: ignore[name-defined]  # noqa: F821
    while not terminal(s):  # type: ignore[name-defined]  # noqa: F821
        n0 = legal(s, 0, buf0)  # type: ignore[name-defined]  # noqa: F821
        n1 = legal(s, 1, buf1)  # type: ignore[name-defined]  # noqa: F821
        if n0 == 0 or n1 == 0:  # a role without a move: the game cannot go on (no built-in game gets here)
            return
        apply(s, buf0[rng_below(rng, n0)], buf1[rng_below(rng, n1)])  # type: ignore[name-defined]  # noqa: F821


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


# Compiled copies by name: every kernel with the same tag and digest (all rule sheets with the
# same number of roles) shares them, so a second sheet costs no compilation and no cache load.
_SPECIALISED: dict[str, Any] = {}


def _specialise(template: Callable[..., Any], namespace: dict[str, Any], inline: bool = False) -> Any:
    """Compile a copy of ``template`` whose globals are ``namespace``.

    The copy is named after the template, the game and a digest of the game's
    source, so numba caches one copy per game and drops it when either the
    template's file (numba's own check) or the game's source changes. Loops
    release the GIL (``nogil``), so a server's other threads run while an agent searches.
    """
    name = f"{template.__name__}_{namespace['_tag']}_{namespace['_digest']}"
    fn = _SPECIALISED.get(name)
    if fn is None:
        code = template.__code__.replace(co_name=name, co_qualname=name)
        copy = types.FunctionType(code, {**template.__globals__, **namespace}, name)
        copy.__qualname__ = name
        options: dict[str, Any] = {"inline": "always"} if inline else {"nogil": True}
        fn = _SPECIALISED[name] = nb.njit(cache=True, **options)(copy)
    return fn


def _no_context() -> np.ndarray:
    return np.zeros(1, dtype=np.uint8)  # a built-in game's rules need nothing beside the state


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
    dtype: Any = np.uint8,
    rollout: Callable[..., None] | None = None,
    check: Callable[[np.ndarray], None] | None = None,
) -> Kernel:
    """A built-in two-role game's Kernel, from its own two-role rules.

    Call it at the top level of the game's module with ``globals()``; ``tag``
    names the variant when one module holds several games. The game states
    its rules as ``legal(s, role, out) -> n``, ``apply(s, a0, a1)``,
    ``terminal(s)`` and ``goals(s) -> int64[2]``; they are seen through the
    kernel protocol by inlined wrappers, at no cost in the compiled loops.
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
    namespace["rollout"] = rollout if rollout is not None else _specialise(_uniform_rollout_template, namespace)
    return _native_kernel(namespace, num_actions, max_actions, np.dtype(dtype), check)


def _native_kernel(
    namespace: dict[str, Any], num_actions: int, max_actions: int, dtype: np.dtype[Any], check: Any
) -> Kernel:
    wrappers = {
        "kernel_legal": _specialise(_native_legal, namespace, inline=True),
        "kernel_apply": _specialise(_native_apply, namespace, inline=True),
        "kernel_terminal": _specialise(_native_terminal, namespace, inline=True),
        "kernel_goals": _specialise(_native_goals, namespace, inline=True),
        "kernel_rollout": _specialise(_native_rollout, namespace, inline=True),
    }
    namespace = {**namespace, **wrappers, "num_roles": 2}
    rules = NativeRules(
        namespace["legal"], namespace["apply"], namespace["terminal"], namespace["goals"], namespace["rollout"]
    )
    return Kernel(
        wrappers["kernel_legal"],
        wrappers["kernel_apply"],
        wrappers["kernel_terminal"],
        wrappers["kernel_goals"],
        wrappers["kernel_rollout"],
        num_roles=2,
        num_actions=num_actions,
        max_actions=max_actions,
        dtype=dtype,
        namespace=namespace,
        make_context=_no_context,
        check=check,
        native=rules,
    )


def with_sizes(
    kernel: Kernel, num_actions: int, max_actions: int, check: Callable[[np.ndarray], None] | None = None
) -> Kernel:
    """The same compiled rules for a game of another size (Amazons 8x8 beside 10x10), with its own state check."""
    namespace = {**kernel.namespace, "max_actions": max_actions, "_tag": f"{kernel.namespace['_tag']}_{max_actions}"}
    return _native_kernel(namespace, num_actions, max_actions, kernel.dtype, check)


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
    if s.dtype != kernel.dtype:
        raise StateFormatError(f"a state array of this game has dtype {kernel.dtype}, not {s.dtype}")
    if kernel.check is not None:
        kernel.check(s)
    return np.ascontiguousarray(s).copy()


def rollouts(kernel: Kernel, s: np.ndarray, count: int, seed: int = 0) -> np.ndarray:
    """The goals of ``count`` games played from ``s`` by the game's own random rollout.

    That is the uniform random player unless the game offers a faster one
    (Amazons: a random amazon that can move, then a random destination, then a
    random arrow, as OpenSpiel's action decomposition does). Returns an int64
    array of shape (count, roles). ``count`` runs from 0 to :data:`MAX_GAMES`,
    ``seed`` from 0 to 2^63 - 1; ``s`` must pass the game's state check.
    """
    count = _whole("rollouts: count", count, 0, MAX_GAMES)
    seed = _whole("rollouts: seed", seed, 0, MAX_SEED)
    start = state_array(kernel, s)
    out = np.zeros((count, kernel.num_roles), dtype=np.int64)
    kernel.specialise(_rollouts_template)(kernel.context(), start, count, rng_state(seed), out)
    return out


def perft(kernel: Kernel, s: np.ndarray, depth: int) -> int:
    """The number of joint-move sequences of length ``depth`` (0 to 1000) from state array ``s``.

    Sequences stop at terminal states; depth 0 counts the empty sequence.
    """
    depth = _whole("perft: depth", depth, 0, MAX_PERFT_DEPTH)
    start = state_array(kernel, s)
    return int(kernel.specialise(_perft_template)(kernel.context(), start, depth, max(1, kernel.max_actions)))


def random_playouts(
    kernel: Kernel, s: np.ndarray, count: int, seed: int = 0, max_steps: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``count`` uniformly random games from state array ``s`` in one compiled call.

    Returns ``(goals, lengths)``: an int64 array of shape (count, roles) with each
    game's goals, and the number of joint moves each game took. ``count`` runs
    from 0 to :data:`MAX_GAMES`, ``seed`` from 0 to 2^32 - 1 (numba's generator
    keeps 32 bits of it) and ``max_steps`` from 0 to 2^62.
    """
    count = _whole("random_playouts: count", count, 0, MAX_GAMES)
    seed = _whole("random_playouts: seed", seed, 0, MAX_PLAYOUT_SEED)
    max_steps = _whole("random_playouts: max_steps", max_steps, 0, 2**62)
    start = state_array(kernel, s)
    out_goals = np.zeros((count, kernel.num_roles), dtype=np.int64)
    out_lengths = np.zeros(count, dtype=np.int64)
    width = max(1, kernel.max_actions)
    # a kernel with its own playout loop (a rule sheet's) plays the same games in one call a playout
    template = _fused_playouts_template if "kernel_playout" in kernel.namespace else _playouts_template
    kernel.specialise(template)(kernel.context(), start, count, seed, max_steps, width, out_goals, out_lengths)
    return out_goals, out_lengths
