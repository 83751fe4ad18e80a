"""Many games at once: B states of one native game in one array, advanced by one call.

This is the substrate for batched self-play and reinforcement learning, in the
spirit of pgx: the state of every row lives in one ``(B, L)`` array, and
:meth:`VectorGame.step` plays one joint action in every row in a single
compiled loop (the game's rules inlined, see :meth:`Kernel.specialise
<ggp.core.kernels.Kernel.specialise>`). Actions are the game's ints (its
docstring numbers them; ``num_actions`` is the size of the action space), not
KIF text.

>>> import numpy as np
>>> from ggp.vector import VectorGame
>>> vg = VectorGame("wallmaze", batch=4, autoreset=True, seed=1)
>>> vg.states.shape, vg.num_actions
((4, 5), 5)
>>> vg.legal_mask("white")[0]  # at the start white may wait (0) or step east (3)
array([ True, False, False,  True, False])
>>> vg.step(np.array([[3, 4]] * 4))  # in every row: white east, black west
>>> [str(m) for m in vg.game.legal_moves(vg.state(0), "white")]  # any row as a Game-API state
['(move 3 5 4 5)', '(move 3 5 2 5)', 'noop']
>>> played, points = 0, np.zeros(2, dtype=np.int64)
>>> for _ in range(300):  # random self-play
...     vg.step(vg.random_actions())
...     played += int(vg.terminal.sum())  # a finished row is terminal for one step, then starts again
...     points += vg.goals[vg.terminal].sum(axis=0)  # the final goals of the games that just ended
>>> played >= 40  # wallmaze ends by step 30
True

Conventions:

* ``states``, ``terminal`` and ``goals`` are read-only views of the live
  buffers: they always describe the current rows and change when
  :meth:`~VectorGame.step` or :meth:`~VectorGame.reset` runs, and only then.
  Copy them (``vg.states.copy()``) to keep a snapshot. ``goals`` are the rule
  sheet's goals of each current state, terminal or not (the result only when
  the row is terminal).
* Legal actions are the rule sheet's, in terminal rows too (as
  :meth:`Game.legal_moves <ggp.Game.legal_moves>` gives them).
* Autoreset is *next-step*, as gymnasium's vector environments do by default:
  the step that makes a row terminal leaves the terminal state in ``states``
  (with ``terminal`` True and its final ``goals``); the next :meth:`step`
  resets that row to the initial state instead of moving it, ignoring the
  actions given for it. So ``states``, ``terminal``, ``goals`` and the legal
  actions always describe the same state of each row. Without autoreset,
  stepping a terminal row raises :class:`~ggp.GameOverError` (a
  ``ValueError``); reset it first with ``vg.reset(vg.terminal)``.
* :meth:`~VectorGame.step` checks every row's actions against the row's legal
  actions before it changes anything: an illegal action raises
  :class:`~ggp.IllegalMoveError` naming the row, the role and the move, and
  leaves every row as it was.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.errors import GameOverError, IllegalMoveError
from .core.game import State, some_moves
from .core.kernels import MAX_SEED, rng_below, rng_state
from .core.native import KernelGame
from .registry import load

__all__ = ["MAX_BATCH", "VectorGame"]

#: Most rows a VectorGame holds (Amazons 10x10: 103 bytes a row, and a legal mask of 10,101 a row).
MAX_BATCH = 1 << 24


# --- loop templates, compiled per game by Kernel.specialise ---------------------------------
# (free names `kernel_*` and `num_roles` are the game's; rng_below is a global here.)


def _step_template(ctx, s, term, out_goals, actions, autoreset, init, buf, joint, res):  # type: ignore[no-untyped-def]
    # Returns 0, or 1 + (roles + 1) * row + kind for the first bad row (kind r < roles: that
    # role's action is illegal; kind == roles: the row is terminal and autoreset is off).
    # Nothing is written before every row has been checked.
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    batch = s.shape[0]
    for i in range(batch):
        if term[i]:
            if not autoreset:
                return 1 + (nr + 1) * i + nr
            continue
        for r in range(nr):
            a = actions[i, r]
            n = kernel_legal(ctx, s[i], r, buf)  # type: ignore[name-defined]  # noqa: F821
            ok = False
            for k in range(n):
                if buf[k] == a:
                    ok = True
                    break
            if not ok:
                return 1 + (nr + 1) * i + r
    for i in range(batch):
        row = s[i]
        if term[i]:
            row[:] = init
        else:
            for r in range(nr):
                joint[r] = actions[i, r]
            kernel_apply(ctx, row, joint)  # type: ignore[name-defined]  # noqa: F821
        term[i] = kernel_terminal(ctx, row)  # type: ignore[name-defined]  # noqa: F821
        kernel_goals(ctx, row, res)  # type: ignore[name-defined]  # noqa: F821
        for r in range(nr):
            out_goals[i, r] = res[r]
    return 0


def _random_actions_template(ctx, s, term, rng, buf, out):  # type: ignore[no-untyped-def]
    for i in range(s.shape[0]):
        for r in range(num_roles):  # type: ignore[name-defined]  # noqa: F821
            if term[i]:
                out[i, r] = -1
                continue
            n = kernel_legal(ctx, s[i], r, buf)  # type: ignore[name-defined]  # noqa: F821
            out[i, r] = buf[rng_below(rng, n)] if n > 0 else -1


def _legal_mask_template(ctx, s, role, buf, out):  # type: ignore[no-untyped-def]
    for i in range(s.shape[0]):
        n = kernel_legal(ctx, s[i], role, buf)  # type: ignore[name-defined]  # noqa: F821
        for k in range(n):
            out[i, buf[k]] = True


def _legal_actions_template(ctx, s, role, out, counts):  # type: ignore[no-untyped-def]
    for i in range(s.shape[0]):
        n = kernel_legal(ctx, s[i], role, out[i])  # type: ignore[name-defined]  # noqa: F821
        counts[i] = n
        out[i, n:] = -1  # legal may use the rest of its buffer as scratch


class VectorGame:
    """B states of one game in one array; one call advances all of them.

    ``game`` is a game name (``"wallmaze"``), a rule sheet's path or a game with a kernel
    (any game :func:`ggp.load` returns); every row
    starts in the initial state; ``batch`` runs from 1 to :data:`MAX_BATCH`.
    ``seed`` (0 to 2^63 - 1) seeds :meth:`random_actions`' own
    generator. See the module docstring for autoreset and the views. One
    VectorGame is not meant for several threads at once (it keeps scratch
    buffers); give each thread its own.
    """

    def __init__(self, game: str | KernelGame, batch: int, *, autoreset: bool = False, seed: int = 0) -> None:
        loaded = load(game) if isinstance(game, str) else game
        if not isinstance(loaded, KernelGame):
            raise TypeError(f"VectorGame needs a game with a compiled kernel, not {loaded!r}")
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"batch must be an int from 1 to {MAX_BATCH}, not {batch!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an int from 0 to {MAX_SEED}, not {seed!r}")
        self.game: KernelGame = loaded
        self.batch = int(batch)
        self.autoreset = bool(autoreset)
        self.roles: tuple[str, ...] = loaded.roles
        kernel = loaded.kernel
        self.num_actions: int = kernel.num_actions
        self.max_actions: int = max(1, kernel.max_actions)
        nr = kernel.num_roles
        self._ctx = kernel.context()
        self._joint = np.empty(nr, dtype=np.int64)
        self._res = np.empty(nr, dtype=np.int64)

        self._init = np.ascontiguousarray(loaded.initial_array(), dtype=kernel.dtype)
        self._init_terminal = bool(kernel.terminal(self._ctx, self._init))
        self._init_goals = np.zeros(nr, dtype=np.int64)
        kernel.goals(self._ctx, self._init, self._init_goals)
        self._s = np.tile(self._init, (self.batch, 1))
        self._term = np.full(self.batch, self._init_terminal, dtype=np.bool_)
        self._goals = np.tile(self._init_goals, (self.batch, 1))
        self._buf = np.empty(self.max_actions, dtype=np.int64)
        self._rng = rng_state(seed)

        self._step = kernel.specialise(_step_template)
        self._random = kernel.specialise(_random_actions_template)
        self._mask = kernel.specialise(_legal_mask_template)
        self._compact = kernel.specialise(_legal_actions_template)

        self._states_view = _read_only(self._s)
        self._terminal_view = _read_only(self._term)
        self._goals_view = _read_only(self._goals)

    def __repr__(self) -> str:
        return f"<VectorGame {self.game.name!r} batch={self.batch} autoreset={self.autoreset}>"

    # --- what the rows are ------------------------------------------------------------------
    @property
    def states(self) -> np.ndarray:
        """``(B, L)`` array of the game's dtype: row ``i`` is the state array of game ``i``.

        A read-only view of the live buffer: :meth:`step` and :meth:`reset` change it.
        """
        return self._states_view

    @property
    def terminal(self) -> np.ndarray:
        """``(B,)`` bool: whether each row's state is terminal (read-only live view)."""
        return self._terminal_view

    @property
    def goals(self) -> np.ndarray:
        """``(B, roles)`` int64: each row's goals in role order (read-only live view)."""
        return self._goals_view

    def state(self, i: int) -> State:
        """Row ``i`` as an immutable state of the Game API (a copy)."""
        row = range(self.batch)[i]  # IndexError out of range; negative indices count from the end
        return self.game.state_from_array(self._s[row])

    # --- legal actions ----------------------------------------------------------------------
    def _role(self, role: int | str) -> int:
        if isinstance(role, str):
            return self.game.role_index(role)
        if isinstance(role, (int, np.integer)) and not isinstance(role, bool) and 0 <= role < len(self.roles):
            return int(role)
        raise ValueError(
            f"{self.game.name}: a role is one of {self.roles} or its number 0..{len(self.roles) - 1}, not {role!r}"
        )

    def legal_mask(self, role: int | str) -> np.ndarray:
        """``(B, num_actions)`` bool, a new array: True where the action is legal for ``role`` in that row."""
        out = np.zeros((self.batch, self.num_actions), dtype=np.bool_)
        self._mask(self._ctx, self._s, self._role(role), self._buf, out)
        return out

    def legal_actions(self, role: int | str) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions of ``role`` in compact form, as new arrays.

        Returns ``(actions, counts)``: ``actions`` is ``(B, max_actions)`` int64,
        row ``i`` holding its ``counts[i]`` legal actions (in the kernel's order)
        then ``-1`` padding.
        """
        actions = np.empty((self.batch, self.max_actions), dtype=np.int64)
        counts = np.empty(self.batch, dtype=np.int64)
        self._compact(self._ctx, self._s, self._role(role), actions, counts)
        return actions, counts

    def random_actions(self) -> np.ndarray:
        """``(B, roles)`` int64, a new array: a uniformly random legal joint action for each row.

        Each role's action is drawn uniformly from its legal actions by this
        object's own generator (seeded by ``seed``). Terminal rows get ``-1``s,
        which :meth:`step` ignores under autoreset.
        """
        out = np.empty((self.batch, len(self.roles)), dtype=np.int64)
        self._random(self._ctx, self._s, self._term, self._rng, self._buf, out)
        return out

    # --- moving the rows ---------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[i]`` (the joint action, in role order) in every row ``i``.

        ``actions`` is a ``(B, roles)`` integer array (any list or array that
        numpy turns into one). Terminal rows are reset instead under autoreset
        (their actions are ignored) and refused otherwise. Raises
        :class:`~ggp.IllegalMoveError` for an illegal action and ValueError for
        an array of the wrong shape or type; either way no row changes.
        """
        if not (isinstance(actions, np.ndarray) and actions.dtype == np.int64 and actions.flags.c_contiguous):
            actions = self._coerce(actions)
        if actions.shape != (self.batch, len(self.roles)):
            raise ValueError(
                f"{self.game.name}: actions must have shape ({self.batch}, {len(self.roles)}), one joint action per row "
                f"in role order {self.roles}; got shape {actions.shape}"
            )
        code = self._step(
            self._ctx,
            self._s,
            self._term,
            self._goals,
            actions,
            self.autoreset,
            self._init,
            self._buf,
            self._joint,
            self._res,
        )
        if code:
            raise self._error(code - 1, actions)

    def _coerce(self, actions: Any) -> np.ndarray:
        arr = np.asarray(actions)
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{self.game.name}: actions must be integers, not an array of {arr.dtype}")
        return np.ascontiguousarray(arr, dtype=np.int64)

    def _error(self, code: int, actions: np.ndarray) -> ValueError:
        i, kind = divmod(code, len(self.roles) + 1)
        name = self.game.name
        if kind == len(self.roles):
            return GameOverError(
                f"{name}: row {i} is terminal and autoreset is off; reset it (vg.reset(vg.terminal)) before stepping"
            )
        role = self.roles[kind]
        a = int(actions[i, kind])
        move, text = f"action {a}", f"action {a}"
        if 0 <= a < self.num_actions:
            state = self.state(i)
            try:
                t = self.game.action_to_move(state, role, a).text
                if self.game.move_to_action(state, role, t) == a:  # trust the text only if it reads back
                    move, text = t, f"{t} (action {a})"
            except (IndexError, KeyError, ValueError):
                pass
        legal = tuple(str(m) for m in sorted(self.game.legal_moves(self.state(i), role)))
        return IllegalMoveError(
            f"{name}: row {i}: {text} is not a legal move for {role}; legal moves: {some_moves(legal)}",
            role=role,
            move=move,
            legal=legal,
        )

    def reset(self, mask: np.ndarray | None = None) -> None:
        """Put every row, or the rows where the ``(B,)`` bool ``mask`` is True, back to the initial state."""
        if mask is None:
            self._s[:] = self._init
            self._term[:] = self._init_terminal
            self._goals[:] = self._init_goals
            return
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != (self.batch,):
            raise ValueError(
                f"{self.game.name}: a reset mask is a bool array of shape ({self.batch},), not {m.dtype} {m.shape}"
            )
        self._s[m] = self._init
        self._term[m] = self._init_terminal
        self._goals[m] = self._init_goals


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view
