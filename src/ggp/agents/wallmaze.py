"""The wall maze player: decoupled UCT whose rollouts race along shortest paths.

Uniformly random rollouts almost never reach a target within 30 steps, so
they say little about a wall maze position. In this player's rollouts each
marker steps along a shortest path to its target (distances precomputed by
BFS over the open cells) with some probability, and at random otherwise, so
collisions, blocking in the one-lane corridor and the detour through the ring
show up in the statistics the search collects. The simultaneous moves are
searched by decoupled UCT, so the player weighs racing against yielding the
lane to an opponent it cannot pass.

The probabilities are an opponent model: the player counts how often the
opponent's moves have shortened its way home, beyond the third or so of
steps that do so by chance, and lets the opponent's rollout moves be that
greedy (a random walker is modelled as one, a racer as a racer), while its
own rollout moves stay mostly greedy.
"""

from __future__ import annotations

from collections import deque

import numba as nb
import numpy as np

from ..core.game import Game, Move, State
from ..core.kernels import rng_below
from ..games.wallmaze import NEXT, NOOP, OPEN, TARGET, WallMaze, goals, terminal
from ..games.wallmaze import apply as apply_moves
from .mcts import MCTSAgent

OWN_GREED = 0.8  # chance that our own rollout step follows a shortest path
PRIOR = (0.5, 4.0)  # the opponent's greed before any evidence: mean and weight in moves
CHANCE = 0.35  # how often a random walker's step happens to shorten its way home


def _distances() -> np.ndarray:
    """DIST[r, c]: steps from cell c to role r's target through open cells (99: unreachable)."""
    dist = np.full((2, OPEN.shape[0]), 99, dtype=np.int64)
    for r in range(2):
        dist[r, TARGET[r]] = 0
        todo = deque([int(TARGET[r])])
        while todo:
            c = todo.popleft()
            for d in range(1, 5):
                n = int(NEXT[c, d])
                if n >= 0 and dist[r, n] > dist[r, c] + 1:
                    dist[r, n] = dist[r, c] + 1
                    todo.append(n)
    return dist


DIST = _distances()


@nb.njit(cache=True)
def _greedy_action(s: np.ndarray, role: int, rng: np.ndarray, greed: float) -> int:
    me = s[role]
    other = s[1 - role]
    if me == TARGET[role]:
        return NOOP
    options = np.empty(5, dtype=np.int64)
    k = 0
    best = 99
    for d in range(1, 5):
        t = NEXT[me, d]
        if t >= 0 and t != other:
            options[k] = d
            k += 1
            if DIST[role, t] < best:
                best = DIST[role, t]
    if k == 0 or rng_below(rng, 1000) >= greed * 1000:
        options[k] = NOOP
        return options[rng_below(rng, k + 1)]
    pick = -1
    seen = 0
    for i in range(k):
        if DIST[role, NEXT[me, options[i]]] == best:
            seen += 1
            if rng_below(rng, seen) == 0:
                pick = options[i]
    return pick


@nb.njit(cache=True)
def wallmaze_leaf(s: np.ndarray, rng: np.ndarray, out: np.ndarray, params: np.ndarray) -> None:
    """Leaf value for UCT: each marker races along shortest paths with chance ``params[role]``."""
    while not terminal(s):
        apply_moves(s, _greedy_action(s, 0, rng, params[0]), _greedy_action(s, 1, rng, params[1]))
    g = goals(s)
    out[0] = g[0] / 100.0
    out[1] = g[1] / 100.0


class WallMazeAgent(MCTSAgent):
    """Decoupled UCT with shortest-path rollouts and an opponent model (module docstring)."""

    name = "wallmaze"
    plays = WallMaze
    leaf_value = wallmaze_leaf
    leaf_params = (OWN_GREED, OWN_GREED)
    default_c = 0.7

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        self._greedy_moves, self._moves_seen = PRIOR[0] * PRIOR[1], PRIOR[1]
        self._last: np.ndarray | None = None

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        s = self.game._array_of(state) if isinstance(self.game, WallMaze) else None
        assert s is not None and self._tree is not None
        me = self.game.roles.index(self.role)
        them = 1 - me
        if self._last is not None and s[2] == self._last[2] + 1:
            # Did the opponent's last move shorten its way home? (A blocked or colliding move counts as not.)
            before, after = int(self._last[them]), int(s[them])
            self._moves_seen += 1
            self._greedy_moves += float(DIST[them, after] < DIST[them, before])
        self._last = s.copy()
        self._tree.params[me] = OWN_GREED
        # Greed beyond what chance gives: a random walker is modelled as random, a racer as a racer.
        seen = self._greedy_moves / self._moves_seen
        self._tree.params[them] = max(0.0, (seen - CHANCE) / (1.0 - CHANCE))
        return super().select_move(state, time_limit)
