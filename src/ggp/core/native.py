"""Games whose rules are compiled kernels over a small numpy array.

A native game keeps its whole state in one flat numpy array (a few dozen
bytes) and states its rules as four numba functions over that array, the
game's :class:`Kernel`. The :class:`NativeGame` class puts the Game API on
top: it turns actions (small ints) into KIF moves and back, checks legality
and wraps arrays into immutable :class:`NativeState` values. Search code that
wants speed calls the kernel directly on arrays.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from .errors import GameOverError, MoveSyntaxError, StateFormatError
from .game import Game, Move, State, coerce_move, illegal_move_error, joint_list
from .kernels import Kernel
from .kif import KifSyntaxError, Term, parse_term, term_text


class NativeState(State):
    """A state of a native game: its array, read-only, and the game it belongs to."""

    __slots__ = ("_array", "_game", "_hash")

    def __init__(self, game: NativeGame, array: np.ndarray) -> None:
        self._game = game
        self._array = array  # private and never written after this point
        self._hash: int | None = None

    @property
    def game(self) -> NativeGame:
        return self._game

    @property
    def array(self) -> np.ndarray:
        """The state array (a read-only view): what the game's kernel works on."""
        view = self._array.view()
        view.flags.writeable = False
        return view

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NativeState):
            return NotImplemented
        return self._game.name == other._game.name and np.array_equal(self._array, other._array)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self._game.name, self._array.tobytes()))
        return self._hash

    def __repr__(self) -> str:
        return f"<State {self._game.name} {self._game.state_to_json(self)}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_state, (self._game.name, self._array.tobytes()))


def _restore_state(name: str, data: bytes) -> NativeState:
    from .registry import load

    game = load(name)
    assert isinstance(game, NativeGame)
    return game.state_from_array(np.frombuffer(data, dtype=game.dtype))


# A move form is a symbol ("noop") or a tuple whose items are a fixed symbol or
# a collection of allowed symbols: ("move", XS, YS, XS, YS).
MoveForm = str | tuple[str | Collection[str], ...]


def match_move_form(term: Term, forms: Sequence[MoveForm]) -> Term | None:
    """``term`` in canonical spelling if it fits one of ``forms``, else None.

    Symbols compare without regard to case, as GDL's do.
    """
    for form in forms:
        if isinstance(form, str):
            if isinstance(term, str) and term.lower() == form.lower():
                return form
            continue
        if isinstance(term, str) or len(term) != len(form):
            continue
        out: list[Term] = []
        for item, allowed in zip(term, form, strict=True):
            if not isinstance(item, str):
                break
            if isinstance(allowed, str):
                if item.lower() != allowed.lower():
                    break
                out.append(allowed)
            else:
                canon = next((a for a in allowed if a.lower() == item.lower()), None)
                if canon is None:
                    break
                out.append(canon)
        else:
            return tuple(out)
    return None


class NativeGame(Game):
    """The Game API over a :class:`Kernel` for a two-role game."""

    dtype: np.dtype[Any]
    kernel: Kernel
    #: What parse_move accepts, and how to say so when it does not.
    move_forms: Sequence[MoveForm]
    move_help: str

    def __init__(self) -> None:
        self._moves: dict[str, Move] = {}

    def _legal(self, s: np.ndarray, role: int) -> np.ndarray:
        # A fresh buffer per call keeps one game object safe to share between threads.
        buf = np.empty(self.kernel.max_actions, dtype=np.int64)
        return buf[: self.kernel.legal(s, role, buf)]

    # --- what each game supplies -------------------------------------------
    def initial_array(self) -> np.ndarray:
        """The initial state's array."""
        raise NotImplementedError

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        """The KIF text of ``action`` for role number ``role`` in state array ``s``."""
        raise NotImplementedError

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        """The action written ``text`` (canonical) in ``s``, or -1 if there is none."""
        raise NotImplementedError

    def validate_array(self, s: np.ndarray) -> None:
        """Raise StateFormatError if ``s`` is not a state of this game."""

    # --- arrays and states ----------------------------------------------------
    def state_from_array(self, array: np.ndarray) -> NativeState:
        """Wrap a state array (copied) as an immutable state, after checking it."""
        arr = np.array(array, dtype=self.dtype, copy=True).reshape(-1)
        self.validate_array(arr)
        return NativeState(self, arr)

    def _array_of(self, state: State) -> np.ndarray:
        if not isinstance(state, NativeState) or state.game.name != self.name:
            got = state.game.name if isinstance(state, State) else type(state).__name__
            raise TypeError(f"{self.name}: expected a state of {self.name}, got {got}")
        return state._array

    def legal_actions(self, state: State, role: str) -> np.ndarray:
        """The legal actions of ``role`` (ints, in the kernel's order)."""
        return self._legal(self._array_of(state), self.role_index(role))

    def _move(self, text: str) -> Move:
        move = self._moves.get(text)
        if move is None:
            move = self._moves[text] = Move(text)
        return move

    # --- the Game API -------------------------------------------------------
    def initial_state(self) -> NativeState:
        return NativeState(self, self.initial_array())

    def legal_moves(self, state: State, role: str) -> tuple[Move, ...]:
        s = self._array_of(state)
        r = self.role_index(role)
        return tuple(self._move(self.action_text(s, r, int(a))) for a in self._legal(s, r))

    def next_state(self, state: State, joint_move: Sequence[Move | str]) -> NativeState:
        s = self._array_of(state)
        if self.kernel.terminal(s):
            raise GameOverError(f"{self.name}: the game is over; no move can be made from a terminal state")
        joint = joint_list(self, joint_move)
        actions = []
        for r, (role, raw) in enumerate(zip(self.roles, joint, strict=True)):
            move = coerce_move(self, state, role, raw)
            a = self.text_action(s, r, move.text)
            if a < 0 or a not in self._legal(s, r):
                raise illegal_move_error(self, state, role, move)
            actions.append(a)
        out = s.copy()
        self.kernel.apply(out, actions[0], actions[1])
        return NativeState(self, out)

    def is_terminal(self, state: State) -> bool:
        return bool(self.kernel.terminal(self._array_of(state)))

    def goals(self, state: State) -> tuple[int, ...]:
        g = self.kernel.goals(self._array_of(state))
        return (int(g[0]), int(g[1]))

    def parse_move(self, text: str) -> Move:
        if not isinstance(text, str):
            raise MoveSyntaxError(f"{self.name}: a move is KIF text, not {type(text).__name__}")
        try:
            term = parse_term(text)
        except KifSyntaxError as exc:
            raise MoveSyntaxError(f"{self.name}: {text!r} is not a move ({exc}); {self.move_help}") from None
        canon = match_move_form(term, self.move_forms)
        if canon is None:
            raise MoveSyntaxError(f"{self.name}: {text!r} is not a move of this game; {self.move_help}")
        return self._move(term_text(canon))

    def state_from_dict(self, data: dict[str, Any]) -> NativeState:
        if not isinstance(data, dict):
            raise StateFormatError(f"{self.name}: a state must be a JSON object, not {type(data).__name__}")
        game = data.get("game", self.name)
        if game != self.name:
            raise StateFormatError(f"this state is of {game!r}, not of {self.name!r}")
        try:
            arr = self.array_from_dict(data)
        except StateFormatError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            raise StateFormatError(f"{self.name}: malformed state document: {exc!r}") from None
        return self.state_from_array(arr)

    def array_from_dict(self, data: dict[str, Any]) -> np.ndarray:
        """The state array a :meth:`state_to_dict` document describes."""
        raise NotImplementedError
