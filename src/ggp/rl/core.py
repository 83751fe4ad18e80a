"""What every environment of :mod:`ggp.rl` shares: a game's kernel seen as an RL step function.

:class:`RLGame` wraps a loaded game (:func:`ggp.load`) and answers, on raw
state arrays, the questions environments ask at every step: legal masks, who
must choose (:meth:`RLGame.movers`), terminal, rewards. It calls the game's
compiled kernel directly and checks actions itself, so a step costs a few
microseconds of Python around the compiled rules.

Rewards are the goals scaled to [-1, 1]: ``(goal - 50) / 50``, so a win (100)
is +1, a loss (0) is -1 and a draw (50) is 0, and given when the game ends.

>>> rg = RLGame.of("wallmaze")
>>> s = rg.initial()
>>> rg.legal(s, 0), rg.movers(s)
(array([3, 0]), [0, 1])
>>> rg.reward(100), rg.reward(25)
(1.0, -0.5)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import GameOverError, IllegalMoveError
from ..core.native import KernelGame
from ..registry import load
from .observe import Observer, observer_for

#: What ``illegal=`` accepts: ``"raise"`` (IllegalMoveError), ``"lose"`` (the game ends, the offender scores -1)
#: or ``"random"`` (a uniformly random legal action is played instead, drawn from the env's seeded generator).
ILLEGAL_MODES = ("raise", "lose", "random")


def reward_of(goal: float) -> float:
    """A goal (0..100) as a reward in [-1, 1]: ``(goal - 50) / 50``."""
    return (float(goal) - 50.0) / 50.0


def _advance_template(ctx, s, joint, legal, counts):  # type: ignore[no-untyped-def]
    # A step in one compiled call: play, test the end, and list every role's legal actions in the new state.
    kernel_apply(ctx, s, joint)  # type: ignore[name-defined]  # noqa: F821
    if kernel_terminal(ctx, s):  # type: ignore[name-defined]  # noqa: F821
        return True
    for r in range(num_roles):  # type: ignore[name-defined]  # noqa: F821
        counts[r] = kernel_legal(ctx, s, r, legal[r])  # type: ignore[name-defined]  # noqa: F821
    return False


class RLGame:
    """A game's kernel as an RL step function over state arrays (see the module docstring)."""

    def __init__(self, game: KernelGame) -> None:
        if not isinstance(game, KernelGame):
            raise TypeError(f"ggp.rl needs a game with a compiled kernel (any game ggp.load returns), not {game!r}")
        self.game = game
        self.name = game.name
        self.roles: tuple[str, ...] = tuple(game.roles)
        self.kernel = game.kernel
        self.num_roles = len(self.roles)
        self.num_actions = max(1, int(self.kernel.num_actions))
        self.observer: Observer = observer_for(game)
        self._ctx = self.kernel.context()
        self._buf = np.empty(max(1, self.kernel.max_actions), dtype=np.int64)
        self._goals = np.zeros(self.num_roles, dtype=np.int64)
        self._noop: dict[tuple[int, int], bool] = {}
        self._init = np.ascontiguousarray(game.initial_array(), dtype=self.kernel.dtype)
        self._memo_key = b""
        self._memo: dict[int, np.ndarray] = {}
        self._advance = self.kernel.specialise(_advance_template)
        self._legal_all = np.empty((self.num_roles, max(1, self.kernel.max_actions)), dtype=np.int64)
        self._counts = np.zeros(self.num_roles, dtype=np.int64)

    @classmethod
    def of(cls, game: str | Path | KernelGame | RLGame) -> RLGame:
        """An RLGame for a game name, a rule sheet's path or a loaded game."""
        if isinstance(game, RLGame):
            return game
        loaded = load(game) if isinstance(game, (str, Path)) else game
        return cls(loaded)  # type: ignore[arg-type]

    # --- states ----------------------------------------------------------------------------------
    def initial(self) -> np.ndarray:
        """A fresh copy of the initial state array."""
        return self._init.copy()

    def legal(self, s: np.ndarray, role: int) -> np.ndarray:
        """Role number ``role``'s legal actions in ``s`` (a read-only int64 array, the kernel's order).

        The legal actions of the last state asked about are kept: an environment asks several
        times per step (the check, the movers, the mask), and move generation is the costly part.
        """
        key = s.tobytes()
        if key != self._memo_key:
            self._memo_key = key
            self._memo = {}
        found = self._memo.get(role)
        if found is None:
            n = self.kernel.legal(self._ctx, s, role, self._buf)
            found = self._memo[role] = self._buf[:n].copy()
            found.flags.writeable = False
        return found

    def mask(self, s: np.ndarray, role: int) -> np.ndarray:
        """Role ``role``'s legal actions in ``s`` as an int8 0/1 vector of :attr:`num_actions` entries."""
        out = np.zeros(self.num_actions, dtype=np.int8)
        out[self.legal(s, role)] = 1
        return out

    def is_noop(self, s: np.ndarray, role: int, action: int) -> bool:
        """Whether ``action`` is the move ``noop`` (what an idle role plays in a turn-taking sheet)."""
        key = (role, action)
        known = self._noop.get(key)
        if known is None:
            game: Any = self.game
            if hasattr(game, "action_text"):  # a built-in game: its texts may depend on the state
                text = game.action_text(s, role, action)
            else:  # a rule sheet's action stands for one move in every state
                text = game.action_to_move(None, self.roles[role], action).text
            known = self._noop[key] = text.lower() == "noop"
        return known

    def movers(self, s: np.ndarray) -> list[int]:
        """The roles that have a choice to make in ``s``, in role order.

        A role moves unless its only legal move is ``noop`` (the idle role of a
        turn-taking game); in a state where every role is idle, all move.
        """
        out = []
        for r in range(self.num_roles):
            legal = self.legal(s, r)
            if len(legal) > 1 or (len(legal) == 1 and not self.is_noop(s, r, int(legal[0]))):
                out.append(r)
        return out if out else list(range(self.num_roles))

    def terminal(self, s: np.ndarray) -> bool:
        return bool(self.kernel.terminal(self._ctx, s))

    def goals(self, s: np.ndarray) -> np.ndarray:
        """Each role's goal (0..100) in ``s`` (a new int64 array)."""
        self.kernel.goals(self._ctx, s, self._goals)
        return self._goals.copy()

    def rewards(self, s: np.ndarray) -> list[float]:
        """Each role's reward for the terminal state ``s`` (see :func:`reward_of`)."""
        return [reward_of(g) for g in self.goals(s)]

    def reward(self, goal: float) -> float:
        return reward_of(goal)

    # --- moving -----------------------------------------------------------------------------------
    def check(self, s: np.ndarray, role: int, action: Any) -> int | None:
        """``action`` as an int if it is legal for ``role`` in ``s``, else None."""
        if isinstance(action, (bool, np.bool_)):
            return None
        try:
            a = int(action)
        except (TypeError, ValueError):
            return None
        if a != action:
            return None
        return a if bool((self.legal(s, role) == a).any()) else None

    def illegal(self, s: np.ndarray, role: int, action: Any) -> IllegalMoveError:
        """The error for ``action``, illegal for ``role`` in ``s``, naming the legal actions and their moves."""
        legal = self.legal(s, role)
        shown = ", ".join(f"{int(a)} {self._text(s, role, int(a))}" for a in legal[:10])
        more = f", ... ({len(legal)} in all)" if len(legal) > 10 else ""
        return IllegalMoveError(
            f"{self.name}: {action!r} is not a legal action for {self.roles[role]}; legal actions: {shown or 'none'}"
            f"{more} (the observation's action_mask marks them)",
            role=self.roles[role],
            move=str(action),
        )

    def _text(self, s: np.ndarray, role: int, action: int) -> str:
        game: Any = self.game
        if hasattr(game, "action_text"):
            return str(game.action_text(s, role, action))
        return str(game.action_to_move(None, self.roles[role], action))

    def apply(self, s: np.ndarray, joint: np.ndarray) -> None:
        """Play ``joint`` (int64, one legal action per role) in ``s``, in place; the caller checked legality."""
        if self.kernel.terminal(self._ctx, s):
            raise GameOverError(f"{self.name}: the game is over; reset the environment")
        self.kernel.apply(self._ctx, s, joint)

    def step(self, s: np.ndarray, joint: np.ndarray) -> bool:
        """Play ``joint`` (legal, ``s`` not terminal: the caller checked) in ``s`` in place; whether it ended the game.

        One compiled call plays the move, tests the end and lists the legal actions of the new state
        for every role, which :meth:`legal` then answers from.
        """
        if self._advance(self._ctx, s, joint, self._legal_all, self._counts):
            return True
        self._memo_key = s.tobytes()
        memo = self._memo = {}
        for r in range(self.num_roles):
            found = memo[r] = self._legal_all[r, : self._counts[r]].copy()
            found.flags.writeable = False
        return False

    def state(self, s: np.ndarray) -> Any:
        """``s`` as an immutable state of the Game API (for agents and rendering)."""
        return self.game.state_from_array(s)


def check_illegal_mode(illegal: str) -> str:
    if illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, not {illegal!r}")
    return illegal


def check_max_cycles(value: Any, name: str = "max_cycles") -> int | None:
    """A step limit: None (the game's own end) or an int from 1 to 10^9."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 10**9:
        raise ValueError(f"{name} must be None or an int from 1 to 1_000_000_000, not {value!r}")
    return int(value)
