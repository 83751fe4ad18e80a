"""The Game protocol, moves and states.

A :class:`Game` is what ggp-base calls a state machine: roles, an initial state,
the legal moves of each role, the next state for a joint move, a terminal test
and goals. Everything else in ggp (agents, referees, the GGP protocol, the web
app) sees games only through this class.

>>> import ggp
>>> game = ggp.load("wallmaze")
>>> game.roles
('white', 'black')
>>> s = game.initial_state()
>>> [str(m) for m in game.legal_moves(s, "white")]
['(move 2 5 3 5)', 'noop']
>>> s2 = game.next_state(s, ["(move 2 5 3 5)", "noop"])
>>> game.is_terminal(s2), game.goals(s2)
(False, (0, 0))
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

from .errors import GameOverError, IllegalMoveError, MoveSyntaxError, StateFormatError
from .kif import Term, parse_term, term_text


@dataclass(frozen=True, order=True, slots=True)
class Move:
    """A move, identified by its KIF text: ``(move 1 3 1 4)``, ``noop``, ``dropBomb``.

    Build moves with :meth:`Game.parse_move`, which checks the text against the
    game's vocabulary and restores the rule sheet's spelling; ``Move(text)``
    trusts its argument. A move keeps its term once read (from the wire, or
    the first time :attr:`term` is asked), so that no text is parsed twice.
    """

    text: str
    _term: Term | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Move({self.text!r})"

    @property
    def term(self) -> Term:
        """The move as a KIF term: ``('move', '1', '3', '1', '4')``."""
        term = self._term
        if term is None:
            term = parse_term(self.text)
            object.__setattr__(self, "_term", term)  # a cache of a value: the move itself does not change
        return term


class State(ABC):
    """An immutable game position.

    States are values: hashable, equal when they describe the same position of
    the same game, and never changed by :meth:`Game.next_state`. ``str(state)``
    draws the board; in a notebook the state shows as SVG.
    """

    __slots__ = ()

    @property
    @abstractmethod
    def game(self) -> Game:
        """The game this state belongs to."""

    def __str__(self) -> str:
        return self.game.render(self)

    # a value: a copy is the value itself (OpenSpiel clones its states by deepcopy, and must not copy the game)
    def __copy__(self) -> State:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> State:
        return self

    def _repr_svg_(self) -> str:
        return self.game.svg(self)


class Game(ABC):
    """A game with simultaneous moves; turn-based games give the idle role ``noop``.

    Subclasses implement the rule methods and the action core; :meth:`next_state`
    and :meth:`apply_actions` are written once, here.
    """

    #: Short name, as accepted by :func:`ggp.load`.
    name: str
    #: The roles, in the rule sheet's order; joint moves follow this order.
    roles: tuple[str, ...]
    #: One line saying what the game is.
    description: str = ""
    #: How a person types moves in :meth:`shorthand` (empty: KIF text only).
    shorthand_help: str = ""
    #: The rules in a few lines, for people (a page's rules box, ``ggp show``).
    rules_summary: tuple[str, ...] = ()
    #: The kind of board a viewer draws and the controls it offers: ``amazons``, ``bomberman``,
    #: ``wallmaze``, or ``other`` (the game's SVG and a list of legal moves).
    board_kind: str = "other"
    #: The most joint moves a match lasts, when the rules bound it (None: not known).
    max_steps: int | None = None
    #: Whether the goals of every end add up to the same total (a win for one is a loss for the others).
    constant_sum: bool = False
    #: The board's width in pixels on a play page (its SVG scales with the window).
    board_size: int = 520
    #: The role that stands for chance (GDL-II's ``random``): it moves uniformly among its legal moves and
    #: takes no seat. None in games without chance.
    chance_role: str | None = None
    #: Whether each role sees only its own moves and percepts (GDL-II's ``sees``), not the state. True for
    #: every GDL-II game, those with chance too: the doors that would show a player the state ask this alone.
    hidden_information: bool = False

    @property
    def players(self) -> tuple[str, ...]:
        """The roles that take a seat: every role but :attr:`chance_role`."""
        return tuple(r for r in self.roles if r != self.chance_role)

    def percepts(self, state: State, role: str) -> tuple[str, ...]:
        """What ``role`` perceived of the transition that led to ``state`` (GDL-II's ``sees``), as KIF texts.

        Empty at the initial state, and always in a game of perfect information (where every role sees the
        state and every move, and needs no percepts).
        """
        return ()

    # --- the rules -------------------------------------------------------
    @abstractmethod
    def initial_state(self) -> State:
        """The state the game starts in."""

    @abstractmethod
    def legal_moves(self, state: State, role: str) -> Sequence[Move]:
        """The moves ``role`` may make in ``state``, as the rule sheet defines them.

        Terminal states have legal moves too when the rule sheet gives them,
        but :meth:`next_state` refuses to go on from a terminal state.
        """

    def next_state(self, state: State, joint_move: Sequence[Move | str]) -> State:
        """The state after every role makes its move; ``joint_move`` is in role order.

        Raises :class:`~ggp.IllegalMoveError` if a move is illegal, malformed or
        missing, and :class:`~ggp.GameOverError` if ``state`` is terminal.
        Written once for every game, over the action core: each move becomes
        its action (:meth:`move_to_action`), and :meth:`apply_actions` plays them.
        """
        if self.is_terminal(state):
            raise GameOverError(f"{self.name}: the game is over; no move can be made from a terminal state")
        joint = joint_list(self, joint_move)
        return self.play(
            state, [self.check_move(state, role, raw) for role, raw in zip(self.roles, joint, strict=True)]
        )

    def check_move(self, state: State, role: str, move: object) -> Move:
        """The game's own legal move for ``move`` (a :class:`Move` or KIF text) of ``role`` in ``state``.

        The one legality check of ggp, as python-chess's ``parse_uci``: every
        door (the web, the GGP player and host, a referee judging an agent)
        checks a move here once, and :meth:`play` trusts what it returns.
        Raises :class:`~ggp.IllegalMoveError` naming some legal moves.

        >>> import ggp
        >>> game = ggp.load("wallmaze")
        >>> s = game.initial_state()
        >>> game.check_move(s, "white", "( MOVE 2 5 3 5 )")
        Move('(move 2 5 3 5)')
        """
        found = coerce_move(self, state, role, move)
        for legal in self.legal_moves(state, role):
            if legal == found:
                return legal
        raise illegal_move_error(self, state, role, found)

    def play(self, state: State, joint: Sequence[Move]) -> State:
        """The state after ``joint``, one move per role already known legal (from :meth:`legal_moves` or
        :meth:`check_move`): python-chess's ``push``, which checks nothing again.

        Raises :class:`~ggp.GameOverError` if ``state`` is terminal; a move that stands for no action at all
        is refused too, so that the compiled rules never see one.
        """
        if self.is_terminal(state):
            raise GameOverError(f"{self.name}: the game is over; no move can be made from a terminal state")
        actions = [self.move_to_action(state, role, move) for role, move in zip(self.roles, joint, strict=True)]
        for role, move, action in zip(self.roles, joint, actions, strict=True):
            if action < 0:
                raise illegal_move_error(self, state, role, move)
        return self._apply_legal(state, actions)

    @abstractmethod
    def is_terminal(self, state: State) -> bool:
        """Whether the game is over in ``state``."""

    @abstractmethod
    def goals(self, state: State) -> tuple[int, ...]:
        """Each role's goal value (0..100) in ``state``, in role order.

        The rule sheet defines goals in every state; they are the result only
        in a terminal state.
        """

    def move_from_term(self, term: Term) -> Move:
        """The move written by an already parsed KIF ``term`` (a GGP message's): :meth:`parse_move` without
        reading the text again. Raises :class:`~ggp.MoveSyntaxError` as it does."""
        return self.parse_move(term_text(term))

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """The move written by ``text``; the inverse of ``str(move)``.

        Spacing and letter case are free: ``"( MOVE 1 3  1 4 )"`` and
        ``"dropbomb"`` give ``(move 1 3 1 4)`` and ``dropBomb``. Raises
        :class:`~ggp.MoveSyntaxError` for text that is no move of this game;
        legality is checked by :meth:`next_state`.
        """

    # --- the action core: integers in the core, move texts at the edges ---
    # Each role's moves are numbered 0 .. num_actions(role) - 1 (OpenSpiel's and
    # pgx's integer actions); the number stands for one move text, possibly
    # depending on the state (a wall maze step is written with its cells).
    @abstractmethod
    def num_actions(self, role: str) -> int:
        """The size of ``role``'s action space: every action is an int below it."""

    @abstractmethod
    def legal_actions(self, state: State, role: str) -> Any:
        """``role``'s legal actions in ``state``: an int64 numpy array, in the kernel's order."""

    @abstractmethod
    def action_to_move(self, state: State, role: str, action: int) -> Move:
        """The move that ``action`` stands for when ``role`` plays it in ``state``."""

    @abstractmethod
    def move_to_action(self, state: State, role: str, move: Move | str) -> int:
        """The action that stands for ``move`` of ``role`` in ``state``, or -1 if no action does."""

    def apply_actions(self, state: State, actions: Sequence[int]) -> State:
        """The state after each role plays its action (in role order); checked like :meth:`next_state`."""
        if self.is_terminal(state):
            raise GameOverError(f"{self.name}: the game is over; no move can be made from a terminal state")
        if isinstance(actions, (str, bytes)) or len(actions) != len(self.roles):
            raise IllegalMoveError(f"{self.name}: give one action per role ({', '.join(self.roles)})")
        checked = []
        for role, action in zip(self.roles, actions, strict=True):
            legal = self.legal_actions(state, role)
            if isinstance(action, bool) or not isinstance(action, (int, Integral)) or int(action) not in legal:
                shown = ", ".join(str(int(a)) for a in legal[:12]) + (" ..." if len(legal) > 12 else "")
                raise IllegalMoveError(
                    f"{self.name}: {action!r} is not a legal action for {role}; legal actions: {shown or 'none'}",
                    role=role,
                    move=str(action),
                )
            checked.append(int(action))
        return self._apply_legal(state, checked)

    @abstractmethod
    def _apply_legal(self, state: State, actions: Sequence[int]) -> State:
        """The next state for actions already known to be legal in non-terminal ``state``."""

    # --- presentation and storage ---------------------------------------
    @abstractmethod
    def render(self, state: State) -> str:
        """The state as text a person can read, with coordinates."""

    @abstractmethod
    def svg(self, state: State, size: int = 360) -> str:
        """The state as an SVG picture, ``size`` pixels wide."""

    @abstractmethod
    def state_to_dict(self, state: State) -> dict[str, Any]:
        """A JSON-ready dict describing ``state``; :meth:`state_from_dict` reads it back."""

    @abstractmethod
    def state_from_dict(self, data: dict[str, Any]) -> State:
        """Read a state written by :meth:`state_to_dict`; raises :class:`~ggp.StateFormatError`."""

    @abstractmethod
    def state_facts(self, state: State) -> list[str]:
        """The state as the sorted GDL facts of the rule sheet, e.g. ``(cell 1 3 white)``."""

    def shorthand(self, state: State, role: str, text: str) -> list[Move]:
        """Moves written in the game's short notation (``north``, ``d1-d5/d8``).

        Returns the moves of ``role`` for one or more successive steps, or raises
        :class:`~ggp.MoveSyntaxError` when ``text`` is not in that notation.
        Games without a notation accept none.
        """
        raise MoveSyntaxError(f"{self.name} has no short notation; write moves as KIF text")

    # --- shared helpers ---------------------------------------------------
    def state_to_json(self, state: State) -> str:
        """The state as a compact JSON document (see :meth:`state_to_dict`)."""
        return json.dumps(self.state_to_dict(state), separators=(",", ":"))

    def state_from_json(self, text: str | dict[str, Any]) -> State:
        """Read a state from :meth:`state_to_json`'s text (or its parsed dict)."""
        if isinstance(text, dict):
            return self.state_from_dict(text)
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise StateFormatError(f"{self.name}: a state must be a JSON object: {exc}") from None
        if not isinstance(data, dict):
            raise StateFormatError(f"{self.name}: a state must be a JSON object, not {type(data).__name__}")
        return self.state_from_dict(data)

    def role_index(self, role: str) -> int:
        """The position of ``role`` in :attr:`roles`; raises ``ValueError`` naming the roles."""
        try:
            return self.roles.index(role)
        except ValueError:
            raise IllegalMoveError(
                f"{self.name} has no role {role!r}; its roles are {', '.join(self.roles)}", role=role
            ) from None

    def joint_moves(self, state: State) -> list[tuple[Move, ...]]:
        """Every joint move in ``state`` (the product of each role's legal moves)."""
        combos: list[tuple[Move, ...]] = [()]
        for role in self.roles:
            moves = self.legal_moves(state, role)
            combos = [(*c, m) for c in combos for m in moves]
        return combos

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def random_playout(game: Game, state: State, rng: random.Random) -> tuple[State, int]:
    """Uniformly random joint moves from ``state`` to the end of the game: the final state and the steps taken."""
    steps = 0
    while not game.is_terminal(state):
        state = game.next_state(state, [rng.choice(game.legal_moves(state, role)) for role in game.roles])
        steps += 1
    return state, steps


def some_moves(legal: Sequence[str]) -> str:
    """The first few of ``legal`` for an error message: ``a, b, ... (12 in all)``, or ``none``."""
    shown = ", ".join(legal[:8]) + (f", ... ({len(legal)} in all)" if len(legal) > 8 else "")
    return shown or "none"


def illegal_move_error(game: Game, state: State, role: str, move: object, why: str = "") -> IllegalMoveError:
    """An :class:`IllegalMoveError` that names the role, the move and some legal moves."""
    legal = tuple(str(m) for m in sorted(game.legal_moves(state, role)))
    what = str(move) if isinstance(move, (str, Move)) else f"{move!r} (a {type(move).__name__}, not a move)"
    reason = f" ({why})" if why else ""
    msg = f"{game.name}: {what} is not a legal move for {role}{reason}; legal moves: {some_moves(legal)}"
    return IllegalMoveError(msg, role=role, move=str(move), legal=legal)


def coerce_move(game: Game, state: State, role: str, move: object) -> Move:
    """Turn a Move or KIF text into a Move, raising IllegalMoveError for anything else."""
    if isinstance(move, Move):
        return move
    if isinstance(move, str):
        try:
            return game.parse_move(move)
        except MoveSyntaxError as exc:
            raise illegal_move_error(game, state, role, move, str(exc)) from None
    raise illegal_move_error(game, state, role, move)


def joint_list(game: Game, joint_move: Sequence[Move | str]) -> list[Move | str]:
    """``joint_move`` as a list of one move per role; IllegalMoveError for a wrong shape."""
    if isinstance(joint_move, (str, Move)) or not isinstance(joint_move, Sequence):
        raise IllegalMoveError(
            f"{game.name}: a joint move is a sequence of {len(game.roles)} moves, one per role "
            f"({', '.join(game.roles)}), not {type(joint_move).__name__}"
        )
    joint = list(joint_move)
    if len(joint) != len(game.roles):
        raise IllegalMoveError(
            f"{game.name}: a joint move has one move per role ({', '.join(game.roles)}): "
            f"expected {len(game.roles)} moves, got {len(joint)}"
        )
    return joint
