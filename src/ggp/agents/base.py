"""The :class:`Agent` interface: what every player (random, MCTS, a person's own) implements.

An agent is told the game and its role once (:meth:`Agent.start`), is asked
for a move in each state where it must act (:meth:`Agent.choose`, which an
agent writes as :meth:`Agent.select_move`), and hears the result at the end
(:meth:`Agent.stop`). This mirrors the GGP protocol's START, PLAY and STOP
messages, so one agent class serves the terminal, a local match runner and a
GGP server alike.

Callers speak to agents in value objects, as python-chess's engine module
does: a :class:`Limit` in, a :class:`Choice` out (the move, and what the
search saw of it), so that no caller probes an agent's attributes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.game import Game, Move, State


@dataclass(frozen=True)
class Limit:
    """How long an agent may think about one move: ``time`` seconds from the call (None: its own setting).

    >>> Limit(time=2.5)
    Limit(time=2.5)
    """

    time: float | None = None


@dataclass(frozen=True)
class Choice:
    """An agent's answer for one state: its ``move``, and what its search saw.

    ``policy`` pairs each legal move of the role with how often the search tried it (empty when the
    agent does not search, or had nothing to decide); ``info`` holds the search's figures for logs
    and people (``simulations``, ``seconds``, ``value``: the move's mean goal, 0-100).

    >>> import ggp
    >>> Choice(ggp.load("wallmaze").parse_move("noop"))
    Choice(move=Move('noop'), policy=(), info={})
    """

    move: Move
    policy: tuple[tuple[Move, int], ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)


class Agent(ABC):
    """A player of any game: subclasses implement :meth:`select_move`.

    A complete agent that always plays the first legal move in KIF order::

        >>> import ggp
        >>> from ggp.agents import Agent
        >>> class FirstMove(Agent):
        ...     def select_move(self, state, time_limit=None):
        ...         return sorted(self.game.legal_moves(state, self.role))[0]
        >>> game = ggp.load("wallmaze")
        >>> agent = FirstMove()
        >>> agent.start(game, "white", start_clock=10.0, play_clock=5.0)
        >>> agent.select_move(game.initial_state())
        Move('(move 2 5 3 5)')

    Protocol: ``start`` once per match, then ``select_move`` for every state
    in which the agent's role moves (also when its only legal move is
    ``noop``, so that it can think on the opponent's time), then ``stop``
    with the terminal state and its goals. An agent object may play several
    matches in a row; each begins with ``start``.

    Clocks are in seconds, ``None`` meaning no limit: ``start_clock`` is the
    time allowed for :meth:`start` (preparation), ``play_clock`` the time per
    move, and ``time_limit`` the time left for the current
    :meth:`select_move` call. Agents that search must return within it.
    """

    #: Short name shown in match listings; subclasses override it.
    name: str = "agent"
    #: Whether the agent decides on the whole state it is handed. A game with hidden information (GDL-II)
    #: refuses such agents: its players decide on what their role knows (:mod:`ggp.agents.hidden`).
    reads_state: bool = True

    def __init__(self) -> None:
        self._game: Game | None = None
        self._role: str | None = None
        self.start_clock: float | None = None
        self.play_clock: float | None = None

    # --- the match protocol ----------------------------------------------------
    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        """Begin a match of ``game`` as ``role``; overriders call ``super().start(...)`` first.

        Raises :class:`~ggp.IllegalMoveError` (a ``ValueError``) if ``game`` has no such role.
        """
        game.role_index(role)  # raises, naming the roles, if role is not one of them
        self._game = game
        self._role = role
        self.start_clock = start_clock
        self.play_clock = play_clock

    @abstractmethod
    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        """The move this agent's role makes in ``state``: one of ``game.legal_moves(state, role)``."""

    def choose(self, state: State, limit: Limit = Limit()) -> Choice:
        """The agent's :class:`Choice` in ``state`` within ``limit``: what every caller asks.

        The default is :meth:`select_move`'s move and nothing more; a searching agent also says what its
        search saw (the policy, the simulations).
        """
        return Choice(self.select_move(state, limit.time))

    def observe(self, state: State, joint: Sequence[Move]) -> None:  # noqa: B027 - an optional hook
        """After every step: the joint move played (role order) and the state it led to. The default does
        nothing; an agent of a game with hidden information keeps its own move and its percepts from it."""

    def ponder(self) -> None:  # noqa: B027 - an optional hook
        """Think on the opponents' time until the next call (after answering a PLAY). The default does nothing."""

    def stop_pondering(self) -> None:  # noqa: B027 - an optional hook
        """End the thinking :meth:`ponder` began; the next call does it anyway. The default does nothing."""

    def stop(self, state: State, goals: Sequence[int]) -> None:  # noqa: B027 - an optional hook
        """The match is over: ``state`` is terminal and ``goals`` holds each role's goal, in role order.

        The default does nothing; learning agents may override it.
        """

    # --- what start() set --------------------------------------------------------
    @property
    def game(self) -> Game:
        """The game of the current match; ``RuntimeError`` before :meth:`start`."""
        if self._game is None:
            raise RuntimeError(f"{type(self).__name__} has not been started: call start(game, role) first")
        return self._game

    @property
    def role(self) -> str:
        """The role this agent plays in the current match; ``RuntimeError`` before :meth:`start`."""
        if self._role is None:
            raise RuntimeError(f"{type(self).__name__} has not been started: call start(game, role) first")
        return self._role

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
