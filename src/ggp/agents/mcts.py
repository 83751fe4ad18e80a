"""The generic Monte Carlo tree search player: ``mcts``, ``mcts:time=1.0``, ``mcts:sims=5000,c=1.4``.

On a native game it runs the compiled decoupled UCT of :mod:`ggp.agents.uct`
and keeps the subtree of the position it reaches between moves. On any other
game (a GDL rule sheet, say) it runs the same algorithm in plain Python over
the Game API: slower, but it plays everything :func:`ggp.load` returns.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

from ..core.game import Game, Move, State, random_playout
from ..core.native import NativeGame
from .base import Agent
from .options import MAX_C, MAX_CAPACITY, MAX_SECONDS, MAX_SEED, MAX_SIMS, MIN_CAPACITY, Range, check_options
from .uct import UCTSearch

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
        self._plain: _PlainUCT | None = None
        self.last_simulations = 0

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        if self.plays is not None and not isinstance(game, self.plays):
            raise ValueError(f"the {self.name} player does not play {game.name}")
        super().start(game, role, start_clock, play_clock)
        seed = self.seed if self.seed is not None else random.randrange(2**31)
        if isinstance(game, NativeGame):
            self._tree = self._make_tree(game, seed)
            self._plain = None
        else:
            self._tree = None
            self._plain = _PlainUCT(game, self.c, random.Random(seed))

    def _make_tree(self, game: NativeGame, seed: int) -> UCTSearch:
        leaf = type(self).leaf_value  # a compiled function, not a method
        return UCTSearch(game, capacity=self.capacity, c=self.c, seed=seed, leaf_value=leaf, params=self.leaf_params)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        legal = self.game.legal_moves(state, self.role)
        if not legal:
            raise RuntimeError(f"{self.game.name}: {self.role} has no legal move in this state")
        if len(legal) == 1:  # nothing to decide; the tree is picked up again on the next call
            return legal[0]
        return self._search(state, self.sims, budget(self.time, time_limit))

    def _search(self, state: State, sims: int | None, seconds: float | None) -> Move:
        if self._plain is not None:
            move, self.last_simulations = self._plain.best(state, self.role, sims, seconds)
            return move
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


# --- the same search over the plain Game API (for games without a kernel) ------------------------
@dataclass
class _Node:
    moves: tuple[tuple[Move, ...], ...]
    visits: list[list[int]]
    totals: list[list[float]]
    children: dict[tuple[int, ...], State] = field(default_factory=dict)
    count: int = 0


class _PlainUCT:
    """Decoupled UCT over the Game API, with a transposition table keyed by state."""

    def __init__(self, game: Game, c: float, rng: random.Random) -> None:
        self.game = game
        self.c = c
        self.rng = rng
        self.nodes: dict[State, _Node] = {}

    def _node(self, state: State) -> _Node:
        node = self.nodes.get(state)
        if node is None:
            moves = tuple(tuple(self.game.legal_moves(state, role)) for role in self.game.roles)
            node = self.nodes[state] = _Node(moves, [[0] * len(m) for m in moves], [[0.0] * len(m) for m in moves])
        return node

    def _pick(self, node: _Node, r: int) -> int:
        visits = node.visits[r]
        unvisited = [i for i, v in enumerate(visits) if v == 0]
        if unvisited:
            return self.rng.choice(unvisited)
        log_n = math.log(max(node.count, 1))
        return max(
            range(len(visits)),
            key=lambda i: node.totals[r][i] / visits[i] + self.c * math.sqrt(log_n / visits[i]),
        )

    def _rollout(self, state: State) -> tuple[float, ...]:
        final, _ = random_playout(self.game, state, self.rng)
        return tuple(g / 100 for g in self.game.goals(final))

    def simulate(self, root: State) -> None:
        game = self.game
        path: list[tuple[_Node, tuple[int, ...]]] = []
        state = root
        while True:
            if game.is_terminal(state):
                values = tuple(g / 100 for g in game.goals(state))
                break
            fresh = state not in self.nodes
            node = self._node(state)
            if fresh and path:
                values = self._rollout(state)
                break
            pick = tuple(self._pick(node, r) for r in range(len(game.roles)))
            path.append((node, pick))
            child = node.children.get(pick)
            if child is None:
                child = node.children[pick] = game.next_state(state, [node.moves[r][i] for r, i in enumerate(pick)])
            state = child
        for node, pick in path:
            node.count += 1
            for r, i in enumerate(pick):
                node.visits[r][i] += 1
                node.totals[r][i] += values[r]

    def best(self, state: State, role: str, sims: int | None, seconds: float | None) -> tuple[Move, int]:
        if len(self.nodes) > 200_000:
            self.nodes.clear()
        deadline = time.perf_counter() + (seconds if seconds is not None else math.inf)
        done = 0
        while (sims is None or done < sims) and time.perf_counter() < deadline:
            self.simulate(state)
            done += 1
        node = self._node(state)
        r = self.game.roles.index(role)
        i = max(range(len(node.moves[r])), key=lambda k: node.visits[r][k])
        return node.moves[r][i], done
