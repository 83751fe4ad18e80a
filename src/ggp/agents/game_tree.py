"""A search over any game's own methods, for the rule sheets no kernel can be built for.

The general player searches compiled kernels; a sheet too large to ground is
played by the top-down prover (:class:`~ggp.gdl.prover_game.ProverGame`),
which has none. Random moves there would throw away what even a slow search
finds in a few hundred playouts: the rules of such sheets are often simple
once asked top-down (ruleDepthExponential, built to make grounders blow up,
is a puzzle of 20 steps). :class:`GameTreeSearch` plays any
:class:`~ggp.core.game.Game` through :meth:`~ggp.core.game.Game.legal_moves`
and :meth:`~ggp.core.game.Game.play` alone:

* each role chooses its own move at a node by UCB1 on its own statistics (the
  decoupled UCT of simultaneous-move games; where one role has a choice it is
  plain UCT), and playouts go on at random to the end;
* nodes are kept by state, so a position reached by two orders is one node,
  and the tree below the position reached is kept from move to move;
* with one role, the best line any playout found is remembered and followed
  (a deterministic puzzle's value is the best line, not the mean of random
  ones), as the compiled puzzle search does.

>>> from pathlib import Path
>>> import ggp, ggp.gdl
>>> from ggp.gdl.prover_game import ProverGame
>>> game = ProverGame((Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), "tictactoe")
>>> search = GameTreeSearch(game, "xplayer", seed=1)
>>> search.move(game.initial_state(), playouts=2000)  # the centre, as tic-tac-toe players know
Move('(mark 2 2)')
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.game import Game, Move, State
from ..gdl.sheet import GDLLimitError, bounded

#: UCB1 exploration (goals scaled to 0..1).
C = 0.7
#: Most nodes kept; past it playouts go on from the leaves without adding nodes.
MAX_NODES = 100_000
#: Longest playout, in joint moves: a sheet whose random play never ends scores as it stands there.
MAX_PLAYOUT = 400


@dataclass
class _Node:
    """A position's statistics: per role, its moves and, per move, visits and summed values (0..1)."""

    moves: tuple[tuple[Move, ...], ...]
    visits: list[list[int]]
    totals: list[list[float]]
    #: Per role and move, the best value a playout through it gave (what a puzzle's move is worth).
    best: list[list[float]]
    count: int = 0
    children: dict[tuple[int, ...], State] = field(default_factory=dict)


class GameTreeSearch:
    """Decoupled UCT with transpositions over any game's methods (see the module docstring)."""

    def __init__(self, game: Game, role: str, seed: int | None = None, max_nodes: int = MAX_NODES) -> None:
        if role not in game.roles:
            raise ValueError(
                f"GameTreeSearch: {role!r} is not a role of {game.name} (its roles: {', '.join(game.roles)})"
            )
        self.game = game
        self.role = role
        self.me = game.roles.index(role)
        self.rng = random.Random(seed)
        self.max_nodes = max_nodes
        self.nodes: dict[State, _Node] = {}
        #: Playouts made by the last :meth:`move`.
        self.playouts = 0
        # With one role: the best line found so far, from the state it starts at, and its goal.
        self._line: list[Move] = []
        self._line_from: State | None = None
        self._line_goal = -1

    def move(self, state: State, seconds: float | None = None, playouts: int | None = None) -> Move:
        """The move to play in ``state`` after searching for ``seconds`` or ``playouts`` (whichever given)."""
        legal = self.game.legal_moves(state, self.role)
        if not legal:
            raise RuntimeError(f"{self.game.name}: {self.role} has no legal move in this state")
        self.improve(state, seconds, playouts)
        if len(self.game.roles) == 1 and self._line_from == state and self._line:
            return self._line[0]
        node = self.nodes.get(state)
        if node is None or len(legal) == 1:
            return legal[0]
        visits, totals = node.visits[self.me], node.totals[self.me]
        best = max(range(len(visits)), key=lambda i: (visits[i], totals[i]))
        return node.moves[self.me][best]

    def improve(self, state: State, seconds: float | None = None, playouts: int | None = None) -> None:
        """Search from ``state`` for ``seconds`` or ``playouts``, keeping the tree for later calls."""
        if (seconds is None) == (playouts is None):
            raise ValueError("GameTreeSearch: give either seconds or playouts")
        deadline = time.perf_counter() + seconds if seconds is not None else math.inf
        self._follow(state)
        done = 0
        self.playouts = 0
        # A sheet the prover plays can make one question take seconds (ruleDepthExponential's legal moves cost
        # twice as much at each step): the prover checks the deadline as it answers, and a playout it breaks
        # off is dropped.
        with bounded(deadline=time.monotonic() + seconds if seconds is not None else None):
            while (playouts is None or done < playouts) and time.perf_counter() < deadline:
                if self.game.is_terminal(state):
                    break
                try:
                    self._iterate(state)
                except GDLLimitError:
                    if time.perf_counter() < deadline:
                        raise  # a limit of the prover's own (a question too large), not the clock
                    break
                done += 1
                self.playouts = done
                if len(self.game.roles) == 1 and self._line_goal >= 100 and self._line_from == state:
                    break  # the top goal is reached by the line kept: nothing to improve

    def _follow(self, state: State) -> None:
        # The puzzle's kept line moves with the play: where ``state`` is on it, the line starts there.
        at, line = self._line_from, self._line
        while at is not None and at != state and line and not self.game.is_terminal(at):
            at, line = self.game.play(at, [line[0]]), line[1:]
        if at == state:
            self._line_from, self._line = state, line
        else:
            self._line_from, self._line, self._line_goal = None, [], -1

    def _node(self, state: State) -> _Node:
        node = self.nodes.get(state)
        if node is None:
            moves = tuple(tuple(self.game.legal_moves(state, r)) for r in self.game.roles)
            node = _Node(
                moves, [[0] * len(m) for m in moves], [[0.0] * len(m) for m in moves], [[0.0] * len(m) for m in moves]
            )
            if len(self.nodes) < self.max_nodes:
                self.nodes[state] = node
        return node

    def _iterate(self, root: State) -> None:
        game = self.game
        path: list[tuple[_Node, tuple[int, ...]]] = []
        line: list[Move] = []
        state = root
        seen = {root}
        while not game.is_terminal(state):
            known = state in self.nodes
            node = self._node(state)
            if any(not m for m in node.moves):
                break  # a role without a move: the game cannot go on, and scores as it stands
            pick = tuple(self._pick(node, r) for r in range(len(game.roles)))
            path.append((node, pick))
            joint = [node.moves[r][i] for r, i in enumerate(pick)]
            if len(game.roles) == 1:
                line.append(joint[0])
            child = node.children.get(pick)
            if child is None:
                child = game.play(state, joint)
                node.children[pick] = child
            state = child
            if not known or state in seen:
                break  # a new node (or a cycle): from here a playout
            seen.add(state)
        values = self._playout(state, line)
        for node, pick in path:
            node.count += 1
            for r, i in enumerate(pick):
                node.visits[r][i] += 1
                node.totals[r][i] += values[r]
                node.best[r][i] = max(node.best[r][i], values[r])
        if len(game.roles) == 1 and values[0] * 100 > self._line_goal:
            self._line_from, self._line, self._line_goal = root, line, round(values[0] * 100)

    def _pick(self, node: _Node, role: int) -> int:
        visits, totals = node.visits[role], node.totals[role]
        if len(visits) == 1:
            return 0
        untried = [i for i, v in enumerate(visits) if v == 0]
        if untried:
            return self.rng.choice(untried)
        log_n = math.log(max(1, node.count))
        if len(self.game.roles) == 1:  # a puzzle: a move is worth the best line through it as much as its mean
            best = node.best[role]
            return max(
                range(len(visits)),
                key=lambda i: (best[i] + totals[i] / visits[i]) / 2 + C * math.sqrt(log_n / visits[i]),
            )
        return max(range(len(visits)), key=lambda i: totals[i] / visits[i] + C * math.sqrt(log_n / visits[i]))

    def _playout(self, state: State, line: list[Move]) -> Sequence[float]:
        game = self.game
        steps = 0
        while not game.is_terminal(state) and steps < MAX_PLAYOUT:
            legal = [game.legal_moves(state, r) for r in game.roles]
            if not all(legal):
                break
            joint = [self.rng.choice(m) for m in legal]
            if len(game.roles) == 1:
                line.append(joint[0])
            state = game.play(state, joint)
            steps += 1
        return [g / 100.0 for g in game.goals(state)]


__all__ = ["GameTreeSearch"]
