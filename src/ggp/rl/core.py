"""What every environment of :mod:`ggp.rl` shares: a game's kernel seen as an RL step function.

:class:`RLGame` wraps a loaded game (:func:`ggp.load`) and answers, on raw
state arrays, the questions environments ask at every step: legal masks, who
must choose (:meth:`RLGame.movers`), terminal, rewards. It calls the game's
compiled kernel directly and checks actions itself, so a step costs a few
microseconds of Python around the compiled rules. :class:`Turn` is what the
PettingZoo environments step: one game in progress whose every step (play,
end, legal masks, movers, observation) is one compiled call into buffers kept
for the environment's life.

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

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import GameOverError, GGPError, IllegalMoveError
from ..core.native import KernelGame
from ..registry import load
from . import observe
from .observe import Observer, observer_for

#: What ``illegal=`` accepts: ``"raise"`` (IllegalMoveError), ``"lose"`` (the game ends, the offender scores -1)
#: or ``"random"`` (a uniformly random legal action is played instead, drawn from the env's seeded generator).
ILLEGAL_MODES = ("raise", "lose", "random")


def action_int(action: Any) -> int | None:
    """``action`` as an int (an int, a numpy integer or a whole float), or None for anything else (bools too)."""
    if type(action) is int:
        return action
    if isinstance(action, (bool, np.bool_)):
        return None
    try:
        a = int(action)
    except (TypeError, ValueError):
        return None
    return a if a == action else None


def reward_of(goal: float) -> float:
    """A goal (0..100) as a reward in [-1, 1]: ``(goal - 50) / 50``."""
    return (float(goal) - 50.0) / 50.0


# --- an environment's turn: one compiled call -----------------------------------------------------
#: :class:`Turn` modes: play the joint move, or stay (the state was set by the caller: a restart); ``EVERY``
#: encodes every role's observation, not only the first mover's.
PLAY, STAY, EVERY = 0, 1, 2
#: What a turn returns beside the movers' bits: the state is terminal; a role's one legal action was never
#: classed noop or not (Python classes it, then the turn is run again with STAY); a role has no legal action.
TERMINAL, UNKNOWN_IDLE, STUCK = -1, -2, -3
#: The head of :attr:`Turn.ints`: the legal lists' width, the board's cell count, an observation's size, the
#: board tensor's size.
_HEAD = 4


def _turn_template(ctx, s, ints, flags, floats, aux, mode, version):  # type: ignore[no-untyped-def]
    # An environment's step in one call: play the joint move (unless STAY), test the end, list every role's
    # legal actions and update its int8 mask in place (the old list's entries cleared, then the new list's set:
    # Amazons 10x10's masks are 10,101 wide and its lists 144 long at most), find the roles with a choice
    # (``flags[1]``, a role's one legal action classed idle (1), not (0) or not yet (-1)), give the idle ones
    # their one action in the joint move, and encode the first mover's observation (every role's with EVERY)
    # and the board tensor. Returns the movers as bits, or TERMINAL (goals written), UNKNOWN_IDLE or STUCK.
    # The buffers' layout is Turn's (every int64 in ``ints``, the masks and idle classes in ``flags``, the
    # observations and the board in ``floats``); every value in them was checked by Python before.
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    width, cells, size, board_size = ints[0], ints[1], ints[2], ints[3]
    counts = ints[_HEAD : _HEAD + nr]
    goals = ints[_HEAD + nr : _HEAD + 2 * nr]
    seen = ints[_HEAD + 2 * nr : _HEAD + 3 * nr]
    joint = ints[_HEAD + 3 * nr : _HEAD + 4 * nr]
    lo = _HEAD + 4 * nr
    at = lo + nr * width
    masks = flags[0]
    idle = flags[1]
    if (mode & 1) == 0:
        kernel_apply(ctx, s, joint)  # type: ignore[name-defined]  # noqa: F821
    for r in range(nr):
        for i in range(counts[r]):
            masks[r, ints[lo + r * width + i]] = 0
        counts[r] = 0
    code = TERMINAL
    if kernel_terminal(ctx, s):  # type: ignore[name-defined]  # noqa: F821
        kernel_goals(ctx, s, goals)  # type: ignore[name-defined]  # noqa: F821
    else:
        bits = 0
        unknown = False
        stuck = False
        for r in range(nr):
            out = ints[lo + r * width : lo + (r + 1) * width]
            n = kernel_legal(ctx, s, r, out)  # type: ignore[name-defined]  # noqa: F821
            counts[r] = n
            for i in range(n):
                masks[r, out[i]] = 1
            if n == 0:
                stuck = True
            elif n == 1 and idle[r, out[0]] != 0:
                unknown = unknown or idle[r, out[0]] < 0
            else:
                bits |= 1 << r
        if stuck:
            code = STUCK
        elif unknown:
            code = UNKNOWN_IDLE
        else:
            if bits == 0:  # every role idle: all move
                bits = (1 << nr) - 1
            for r in range(nr):
                if not (bits >> r) & 1:
                    joint[r] = ints[lo + r * width]
            code = bits
    first = 0
    if code > 0:
        while not (code >> first) & 1:
            first += 1
    for r in range(nr):
        if r == first or (mode & EVERY) != 0:
            encode(s, r, aux, floats[r * size : (r + 1) * size])  # type: ignore[name-defined]  # noqa: F821
            seen[r] = version
    board = floats[nr * size : nr * size + board_size]
    for j in range(board_size):
        board[j] = 0.0
    for q in range(cells):
        board[ints[at + q]] = s[ints[at + cells + q]]
    return code


def _observe_digest() -> str:
    # numba's cache of a compiled turn checks this file only, not the encoders it calls: naming the turn after
    # the encoders' source makes a change there compile a new turn instead of reusing a stale one
    return "o" + hashlib.sha1(Path(observe.__file__).read_bytes()).hexdigest()[:10] if observe.__file__ else "o"


_OBSERVE_DIGEST = _observe_digest()


class Turn:
    """One environment's game in progress: its state, and a step as one compiled call (:meth:`play`).

    A turn fills buffers kept for the environment's life: each role's legal actions and int8 mask (updated
    in place), the movers, the goals at the end, the observations of the roles asked about and the board
    tensor. :attr:`version` counts the states the buffers were filled for, so an observation is encoded at
    most once per state (:meth:`observation`) and reads never compare states.

    >>> t = Turn(RLGame.of("amazons_8x8"))
    >>> t.restart(), t.movers(1)
    (1, (0,))
    >>> int(t.counts[0]), int(t.counts[1]), t.observation(0).shape
    (60, 1, (8, 8, 6))
    """

    def __init__(self, rg: RLGame, every: bool = False) -> None:
        self.rg = rg
        kernel, obs = rg.kernel, rg.observer
        nr, na = rg.num_roles, rg.num_actions
        if nr > 62:  # the movers are returned as the bits of an int64
            raise GGPError(f"{rg.name}: ggp.rl's environments play games of at most 62 roles, not {nr}")
        width = max(1, kernel.max_actions)
        size = int(np.prod(obs.shape))
        at = of = np.zeros(0, dtype=np.int64)
        board_size = 0
        if obs.board is not None and obs.board_shape is not None:
            b = obs.board
            at = np.ravel_multi_index((b.row, b.col, b.channel), obs.board_shape).astype(np.int64)
            of = np.asarray(b.index, dtype=np.int64)
            board_size = int(np.prod(obs.board_shape))
            if len(at) != len(of) or (len(of) and not 0 <= of.min() <= of.max() < len(rg.initial())):
                raise ValueError(f"{rg.name}: the board's cells do not match the state array")
        lo = _HEAD + 4 * nr
        self.ints = np.zeros(lo + nr * width + 2 * len(at), dtype=np.int64)
        self.ints[:_HEAD] = (width, len(at), size, board_size)
        self.ints[lo + nr * width :] = np.concatenate([at, of])
        self.counts = self.ints[_HEAD : _HEAD + nr]
        self.goals = self.ints[_HEAD + nr : _HEAD + 2 * nr]
        self.seen = self.ints[_HEAD + 2 * nr : _HEAD + 3 * nr]
        self.seen[:] = -1
        #: The joint move being chosen: the movers' actions are written here, the idle roles' by the turn.
        self.joint = self.ints[_HEAD + 3 * nr : _HEAD + 4 * nr]
        self.legal = self.ints[lo : lo + nr * width].reshape(nr, width)
        self.flags = np.zeros((2, nr, na), dtype=np.int8)
        self.flags[1] = -1
        #: Each role's legal actions as an int8 0/1 mask (all 0 at the end): the env's own, copy what you keep.
        self.masks = self.flags[0]
        self.floats = np.zeros(nr * size + board_size, dtype=np.float32)
        self._rows = [self.floats[r * size : (r + 1) * size] for r in range(nr)]  # what the encoder writes
        self._obs = [row.reshape(obs.shape) for row in self._rows]
        self._board = self.floats[nr * size :].reshape(obs.board_shape) if obs.board_shape is not None else None
        self._aux = obs.aux
        self._encode = obs.encoder
        self._mode = EVERY if every else 0
        self._fn = rg.turn_function()
        self.ctx = kernel.context()
        #: The state array, played in place.
        self.s = rg.initial()
        self.version = 0
        self._movers: dict[int, tuple[int, ...]] = {}

    def restart(self) -> int:
        """Back to the initial state; what :meth:`play` returns."""
        self.s[:] = self.rg._init
        return self._run(self._mode | STAY)

    def play(self) -> int:
        """Play :attr:`joint` (every mover's action written and checked legal by the caller; the state not
        terminal): the movers of the new state as bits (role r moves if bit r is set), or TERMINAL."""
        return self._run(self._mode)

    def _run(self, mode: int) -> int:
        self.version += 1
        code = int(self._fn(self.ctx, self.s, self.ints, self.flags, self.floats, self._aux, mode, self.version))
        if code == UNKNOWN_IDLE:  # a role's one legal action met for the first time: class it, then list again
            rg, idle = self.rg, self.flags[1]
            for r in range(rg.num_roles):
                if self.counts[r] == 1 and idle[r, self.legal[r, 0]] < 0:
                    idle[r, self.legal[r, 0]] = rg.is_noop(self.s, r, int(self.legal[r, 0]))
            code = int(
                self._fn(self.ctx, self.s, self.ints, self.flags, self.floats, self._aux, mode | STAY, self.version)
            )
        if code == STUCK:
            stuck = [self.rg.roles[r] for r in range(self.rg.num_roles) if self.counts[r] == 0]
            raise GGPError(
                f"{self.rg.name}: {', '.join(stuck)} has no legal action in a state that is not terminal "
                f"(the rules are not well formed)"
            )
        return code

    def movers(self, code: int) -> tuple[int, ...]:
        """The roles whose bits are set in ``code`` (what :meth:`play` returned), in role order."""
        found = self._movers.get(code)
        if found is None:
            found = self._movers[code] = tuple(r for r in range(self.rg.num_roles) if (code >> r) & 1)
        return found

    def legal_of(self, r: int) -> np.ndarray:
        """Role ``r``'s legal actions in the current state (a view of the env's buffer)."""
        return self.legal[r, : self.counts[r]]

    def observation(self, r: int) -> np.ndarray:
        """Role ``r``'s observation of the current state: a new array, the caller's to keep."""
        if self.seen[r] != self.version:
            self._encode(self.s, r, self._aux, self._rows[r])
            self.seen[r] = self.version
        return self._obs[r].copy()

    def board(self) -> np.ndarray:
        """The board tensor of the current state (rule sheets with a grid): a new array."""
        assert self._board is not None
        return self._board.copy()


class RLGame:
    """A game's kernel as an RL step function over state arrays (see the module docstring)."""

    def __init__(self, game: KernelGame) -> None:
        if not isinstance(game, KernelGame):
            raise TypeError(f"ggp.rl needs a game with a compiled kernel (any game ggp.load returns), not {game!r}")
        if game.hidden_information:
            # every role here sees the whole state and chance would take a seat: a GDL-II game needs its own
            raise GGPError(
                f"{game.name} is a GDL-II game (hidden information or chance): play it through "
                "ggp.rl.openspiel_game (chance nodes and each player's information state) or ggp.rl.aec_env "
                "(PettingZoo, observing each player's information)"
            )
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
        self._turn: Any = None

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
        a = action_int(action)
        return a if a is not None and bool((self.legal(s, role) == a).any()) else None

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

    def turn_function(self) -> Any:
        """This game's compiled turn (see :class:`Turn`), compiled or loaded from numba's cache once."""
        if self._turn is None:
            self._turn = self.kernel.specialise(
                _turn_template, encode=self.observer.encoder, observe_source=_OBSERVE_DIGEST
            )
        return self._turn

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
