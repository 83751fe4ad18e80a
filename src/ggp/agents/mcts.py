"""The generic Monte Carlo tree search player: ``mcts``, ``mcts:time=1.0``, ``mcts:sims=5000,c=1.4``.

On every game :func:`ggp.load` returns, built-in or read from a rule sheet, it
runs the compiled decoupled UCT of :mod:`ggp.agents.uct` over the game's
kernel, and keeps the subtree of the position it reaches between moves.
"""

from __future__ import annotations

import random
import time
from typing import Annotated, Any

from ..core.game import Game, Move, State
from ..core.native import KernelGame
from .base import Agent
from .options import MAX_C, MAX_CAPACITY, MAX_SECONDS, MAX_SEED, MAX_SIMS, MIN_CAPACITY, Range, check_options
from .uct import MAX_TREE_BYTES, UCTSearch, tree_bytes

#: Fraction of the time limit kept back for the referee's round trip.
SAFETY = 0.15


def budget(own: float | None, time_limit: float | None) -> float | None:
    """Seconds to think: the agent's own setting, cut to the time limit less a safety margin."""
    if time_limit is None:
        return own
    room = max(0.01, time_limit * (1 - SAFETY) - 0.02)
    return room if own is None else min(own, room)


class MCTSAgent(Agent):
    """Decoupled UCT with random rollouts; for the role to act in a turn-based game, plain UCT.

    Give ``sims`` for a fixed number of simulations per move, or ``time``
    (seconds, default 1.0) for a time budget; a referee's tighter time limit
    always wins. ``c`` is the UCB1 constant for goals scaled to 0..1 and
    ``capacity`` the number of nodes the tree may hold. The values each option
    accepts are declared on ``__init__`` (:mod:`ggp.agents.options`); any
    other raises ValueError, whether it comes from a spec or from Python.

    Game-specific players subclass it and set the class attributes below: the
    game they are made for, a compiled leaf evaluation in place of the random
    rollout, its parameters, and their own UCB constant.
    """

    name = "mcts"
    #: The game class this player is made for (None: every game).
    plays: type[Game] | None = None
    #: A compiled leaf value ``(s, rng, out, params)`` (see UCTSearch); None: random rollouts.
    leaf_value: Any = None
    #: Initial ``params`` of the leaf value.
    leaf_params: tuple[float, ...] = ()
    #: ``c`` when the spec does not set it.
    default_c = 1.4

    @check_options
    def __init__(
        self,
        time: Annotated[float | None, Range(gt=0, le=MAX_SECONDS)] = None,
        sims: Annotated[int | None, Range(ge=1, le=MAX_SIMS)] = None,
        c: Annotated[float | None, Range(ge=0, le=MAX_C)] = None,
        seed: Annotated[int | None, Range(ge=0, le=MAX_SEED)] = None,
        reuse: bool = True,
        capacity: Annotated[int, Range(ge=MIN_CAPACITY, le=MAX_CAPACITY)] = 200_000,
    ) -> None:
        super().__init__()
        if time is not None and sims is not None:
            raise ValueError(f"{self.name}: give either time or sims, not both")
        if sims is None and time is None:
            time = 1.0
        self.time = time
        self.sims = sims
        self.c = self.default_c if c is None else c
        self.seed = seed
        self.reuse = reuse
        self.capacity = capacity
        self._tree: UCTSearch | None = None
        self.last_simulations = 0

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        if self.plays is not None and not isinstance(game, self.plays):
            raise ValueError(f"the {self.name} player does not play {game.name}")
        super().start(game, role, start_clock, play_clock)
        seed = self.seed if self.seed is not None else random.randrange(2**31)
        if not isinstance(game, KernelGame):
            raise ValueError(f"the {self.name} player needs a game with a kernel; {game.name} has none")
        self._tree = self._make_tree(game, seed)

    def _make_tree(self, game: KernelGame, seed: int) -> UCTSearch:
        leaf = type(self).leaf_value  # a compiled function, not a method
        # A rule sheet's states can be large: hold the tree to half the memory a tree may take.
        capacity = self.capacity
        while capacity > MIN_CAPACITY and tree_bytes(game, capacity) > MAX_TREE_BYTES // 2:
            capacity //= 2
        capacity = max(capacity, MIN_CAPACITY)
        return UCTSearch(game, capacity=capacity, c=self.c, seed=seed, leaf_value=leaf, params=self.leaf_params)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        legal = self.game.legal_moves(state, self.role)
        if not legal:
            raise RuntimeError(f"{self.game.name}: {self.role} has no legal move in this state")
        if len(legal) == 1:  # nothing to decide; the tree is picked up again on the next call
            return legal[0]
        return self._search(state, self.sims, budget(self.time, time_limit))

    def _search(self, state: State, sims: int | None, seconds: float | None) -> Move:
        assert self._tree is not None
        tree = self._tree
        if sims is not None and seconds is not None:  # a count, but never past the clock
            deadline = time.perf_counter() + seconds
            if not (self.reuse and tree.advance(state)):
                tree.reset(state)
            done = 0
            while done < sims and time.perf_counter() < deadline:
                step = min(256, sims - done)
                tree.run(step)
                done += step
            result = tree.result()
        else:
            result = tree.search(state, sims=sims, seconds=seconds, reuse=self.reuse)
        self.last_simulations = result.simulations
        return result.best(self.role)

    def __repr__(self) -> str:
        what = f"sims={self.sims}" if self.sims is not None else f"time={self.time}"
        return f"{type(self).__name__}({what}, c={self.c}, seed={self.seed!r})"
