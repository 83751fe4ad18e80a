"""Games whose rules are compiled kernels over a small numpy array.

A native game keeps its whole state in one flat numpy array (a few dozen
bytes) and states its rules as four numba functions over that array, the
game's :class:`Kernel`. The :class:`NativeGame` class puts the Game API on
top: it turns actions (small ints) into KIF moves and back, checks legality
and wraps arrays into immutable :class:`NativeState` values. Search code that
wants speed calls the kernel directly on arrays.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from .errors import MoveSyntaxError, StateFormatError
from .game import Game, Move, State
from .kernels import Kernel, NativeRules
from .kif import KifSyntaxError, Term, parse_term, term_text


class KernelState(State):
    """A state of a :class:`KernelGame`, which keeps with it what the game has worked out about it (each
    role's legal actions and moves): a state is a value, so the answers never change."""

    __slots__ = ("_memo",)
    _memo: dict[Any, Any] | None


class NativeState(KernelState):
    """A state of a native game: its array, read-only, and the game it belongs to."""

    __slots__ = ("_array", "_game", "_hash")

    def __init__(self, game: NativeGame, array: np.ndarray) -> None:
        self._game = game
        self._array = array  # private and never written after this point
        self._hash: int | None = None
        # Each role's legal actions (under r) and moves (under (r,)), worked out once: a state is a value.
        self._memo: dict[Any, Any] | None = None

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
        return (_restore_state, (self._game, self._array.tobytes()))


def _restore_state(game: NativeGame, data: bytes) -> NativeState:
    return game.state_from_array(np.frombuffer(data, dtype=game.dtype))


@functools.cache
def _shared_game(cls: type[NativeGame], args: tuple[Any, ...]) -> NativeGame:
    # Unpickled states of one game share one game object, as loaded ones do.
    return cls(*args)


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


class KernelGame(Game):
    """The Game API over a :class:`Kernel`: a built-in game or a rule sheet's, any number of roles.

    Subclasses give the state arrays (:meth:`initial_array`, :meth:`state_from_array`,
    :meth:`array_of`) and the meaning of actions (:meth:`action_to_move`,
    :meth:`move_to_action`); the rules are the kernel's. Each thread asks the
    kernel through a context of its own, so one game object serves many threads.
    Each state's legal moves are worked out once and kept with the state, since
    a caller (a web page, a referee, an agent) asks about one state many times.
    """

    dtype: np.dtype[Any]
    kernel: Kernel

    def _context(self) -> Any:
        local = self.__dict__.get("_local")
        if local is None:
            local = self.__dict__["_local"] = threading.local()
        ctx = getattr(local, "ctx", None)
        if ctx is None:
            ctx = local.ctx = self.kernel.context()
        return ctx

    def _legal(self, s: np.ndarray, role: int) -> np.ndarray:
        # A fresh buffer per call keeps one game object safe to share between threads.
        buf = np.empty(max(1, self.kernel.max_actions), dtype=np.int64)
        return buf[: self.kernel.legal(self._context(), s, role, buf)]

    # --- what each game supplies -------------------------------------------
    def initial_array(self) -> np.ndarray:
        """The initial state's array."""
        raise NotImplementedError

    def state_from_array(self, array: np.ndarray) -> State:
        """Wrap a state array (copied) as an immutable state, after checking it."""
        raise NotImplementedError

    def _array_of(self, state: State) -> np.ndarray:
        """The array of ``state`` (not copied: never write it); TypeError for another game's state."""
        raise NotImplementedError

    def array_of(self, state: State) -> np.ndarray:
        """``state``'s array, read-only: what the kernel works on."""
        view = self._array_of(state).view()
        view.flags.writeable = False
        return view

    # --- the action core ------------------------------------------------------
    def legal_actions(self, state: State, role: str) -> np.ndarray:
        """The legal actions of ``role`` (ints, in the kernel's order; a read-only array)."""
        return self._legal_of(state, self.role_index(role))

    def _apply_legal(self, state: State, actions: Sequence[int]) -> State:
        out = self._array_of(state).copy()
        self.kernel.apply(self._context(), out, np.asarray(actions, dtype=np.int64))
        return self._wrap(out)

    def _wrap(self, array: np.ndarray) -> State:
        """A state around ``array``, which the caller hands over and never writes again."""
        raise NotImplementedError

    # --- the Game API -------------------------------------------------------
    def legal_moves(self, state: State, role: str) -> tuple[Move, ...]:
        r = self.role_index(role)
        memo = self._memo_of(state)
        moves: tuple[Move, ...] | None = memo.get((r,))
        if moves is None:
            moves = memo[(r,)] = tuple(self.action_to_move(state, role, a) for a in self._legal_of(state, r).tolist())
        return moves

    def _legal_of(self, state: State, r: int) -> np.ndarray:
        # role r's legal actions in state, read-only, worked out once per state
        memo = self._memo_of(state)
        actions: np.ndarray | None = memo.get(r)
        if actions is None:
            actions = self._legal(self._array_of(state), r)
            actions.flags.writeable = False
            memo[r] = actions
        return actions

    def _memo_of(self, state: State) -> dict[Any, Any]:
        """What this game has worked out about ``state`` (a value: the answers never change), kept with it."""
        s = self._state_of(state)
        memo: dict[Any, Any] | None = s._memo
        if memo is None:
            memo = s._memo = {}
        return memo

    def _state_of(self, state: State) -> KernelState:
        """``state``, checked to be one of this game's; TypeError for another game's state."""
        raise NotImplementedError

    def is_terminal(self, state: State) -> bool:
        return bool(self.kernel.terminal(self._context(), self._array_of(state)))

    def goals(self, state: State) -> tuple[int, ...]:
        out = np.zeros(len(self.roles), dtype=np.int64)
        self.kernel.goals(self._context(), self._array_of(state), out)
        return tuple(int(g) for g in out)


class NativeGame(KernelGame):
    """A built-in two-role game: its kernel from its own compiled rules, its moves by form."""

    #: What parse_move accepts, and how to say so when it does not.
    move_forms: Sequence[MoveForm]
    move_help: str

    #: The arguments the game's class was called with (a game pickles as its class and these).
    init_args: tuple[Any, ...] = ()

    def __init__(self) -> None:
        self._moves: dict[str, Move] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_shared_game, (type(self), self.init_args))

    # --- what each game supplies -------------------------------------------
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

    def _wrap(self, array: np.ndarray) -> NativeState:
        return NativeState(self, array)

    def _array_of(self, state: State) -> np.ndarray:
        return self._state_of(state)._array

    def _state_of(self, state: State) -> NativeState:
        if not isinstance(state, NativeState) or state.game.name != self.name:
            got = state.game.name if isinstance(state, State) else type(state).__name__
            raise TypeError(f"{self.name}: expected a state of {self.name}, got {got}")
        return state

    @property
    def rules(self) -> NativeRules:
        """This game's own compiled two-role rules: what its players' compiled code calls."""
        assert self.kernel.native is not None
        return self.kernel.native

    def _move(self, text: str, term: Term | None = None) -> Move:
        # one Move per text, shared: its term, once read, is read for every state it is legal in
        move = self._moves.get(text)
        if move is None:
            move = self._moves[text] = Move(text, term)
        return move

    # --- the action core ------------------------------------------------------
    def num_actions(self, role: str) -> int:
        self.role_index(role)
        return self.kernel.num_actions

    def action_to_move(self, state: State, role: str, action: int) -> Move:
        return self._move(self.action_text(self._array_of(state), self.role_index(role), int(action)))

    def move_to_action(self, state: State, role: str, move: Move | str) -> int:
        text = move.text if isinstance(move, Move) else self.parse_move(move).text
        return int(self.text_action(self._array_of(state), self.role_index(role), text))

    # --- the Game API -------------------------------------------------------
    def initial_state(self) -> NativeState:
        return NativeState(self, self.initial_array())

    def parse_move(self, text: str) -> Move:
        if not isinstance(text, str):
            raise MoveSyntaxError(f"{self.name}: a move is KIF text, not {type(text).__name__}")
        try:
            term = parse_term(text)
        except KifSyntaxError as exc:
            raise MoveSyntaxError(f"{self.name}: {text!r} is not a move ({exc}); {self.move_help}") from None
        return self._from_term(term, text)

    def move_from_term(self, term: Term) -> Move:
        return self._from_term(term, None)

    def _from_term(self, term: Term, text: str | None) -> Move:
        canon = match_move_form(term, self.move_forms)
        if canon is None:
            shown = text if text is not None else term_text(term)
            raise MoveSyntaxError(f"{self.name}: {shown!r} is not a move of this game; {self.move_help}")
        return self._move(term_text(canon), canon)

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
