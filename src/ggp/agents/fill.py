"""Most constrained first: a search for puzzles that fill a board, each move filling a blank.

In a futoshiki or a sudoku every move writes a value into a blank cell, the
order of the moves does not matter, and a line wins only once no blank is
left. The exhaustive solver (:mod:`ggp.agents.solver`) reads such a puzzle
poorly: at each position it tries every move into every blank, so it walks
every partial filling, and futoshiki5's fills its table in seconds. A
constraint solver branches instead on one blank only, the one the fewest
moves can fill (a blank none can fill is a dead end), which settles an easy
sudoku almost without backtracking. :class:`FillSearch` does that over any
one-role game's kernel.

Which facts are the blanks is read from what the rules do, not from their
names: the base propositions that some move of the first position clears.
Where that reading does not fit the puzzle (moves that do not commute, blanks
that need not all be filled: the eight queens, a sliding puzzle) the search
finds no line and says so, usually at once. Whatever line it finds was played
out by the rules to the top goal, so it is never wrong.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.game import Game, State
from ..core.native import KernelGame

#: :attr:`FillSearch.status`: still searching.
SEARCHING = 0
#: A line to the top goal was found (:attr:`FillSearch.line`).
FOUND = 1
#: Every branch tried ends short of the top goal: the puzzle is not one this search can fill.
FAILED = 2

#: The goal a line must end with to be a solution.
TOP_GOAL = 100


class FillSearch:
    """A depth-first search from ``state`` that branches on the most constrained blank (see the module
    docstring), resumable: :meth:`run` searches for a while and returns :attr:`status`.

    ``line`` holds the actions (the kernel's ints) from ``state`` to the top goal once it is FOUND.
    """

    def __init__(self, game: Game, state: State) -> None:
        if not isinstance(game, KernelGame):
            raise TypeError(f"the fill search needs a game with a kernel; {game.name} has none")
        if len(game.roles) != 1:
            raise ValueError(f"the fill search plays one-role games; {game.name} has {len(game.roles)} roles")
        self.game = game
        self._kernel = game.kernel
        self._ctx = self._kernel.context()
        self._buf = np.zeros(max(1, self._kernel.max_actions), dtype=np.int64)
        self._goals = np.zeros(1, dtype=np.int64)
        root = game._array_of(state).copy()
        self._blanks = np.zeros(root.shape[0], dtype=np.bool_)
        if not self._kernel.terminal(self._ctx, root):
            for action in self._legal(root):
                self._blanks |= (root != 0) & (self._play(root, action) == 0)
        #: Positions expanded so far.
        self.nodes = 0
        #: The actions from the search's first state to the top goal (once FOUND).
        self.line: list[int] = []
        self.status = SEARCHING
        self._path: list[int] = []
        # Per depth: the candidate moves (action, position after it) and the index of the next to try.
        self._stack: list[tuple[list[tuple[int, np.ndarray]], list[int]]] = []
        first = self._expand(root)
        if first is True:
            self.status = FOUND
        elif first is False:
            self.status = FAILED
        else:
            self._stack.append((first, [0]))
        # A line clears a blank a step, or ends: deeper than twice the blanks, it is going round in circles.
        self._max_depth = 2 * int(self._blanks.sum()) + 1

    def _legal(self, s: np.ndarray) -> np.ndarray:
        n = self._kernel.legal(self._ctx, s, 0, self._buf)
        return self._buf[:n].copy()

    def _play(self, s: np.ndarray, action: int) -> np.ndarray:
        child = s.copy()
        self._kernel.apply(self._ctx, child, np.array([action], dtype=np.int64))
        return child

    def _won(self, s: np.ndarray) -> bool:
        self._kernel.goals(self._ctx, s, self._goals)
        return bool(self._goals[0] >= TOP_GOAL)

    def _expand(self, s: np.ndarray) -> list[tuple[int, np.ndarray]] | bool:
        # True: ``s`` ends the game at the top goal; False: a dead end; else the moves to try from it.
        self.nodes += 1
        if self._kernel.terminal(self._ctx, s):
            return self._won(s)
        actions = self._legal(s)
        open_ = self._blanks & (s != 0)
        if not open_.any():  # every blank filled: only a move that ends the game at the top goal is left to find
            for action in actions:
                child = self._play(s, int(action))
                if self._kernel.terminal(self._ctx, child) and self._won(child):
                    return [(int(action), child)]
            return False
        children = []
        fills = np.zeros(s.shape[0], dtype=np.int64)  # per blank, the moves that fill it
        for action in actions:
            child = self._play(s, int(action))
            cleared = open_ & (child == 0)
            fills += cleared
            children.append((int(action), child, cleared))
        counts = np.where(open_, fills, np.iinfo(np.int64).max)
        blank = int(np.argmin(counts))
        if fills[blank] == 0:  # a blank nothing can fill any more
            return False
        return [(action, child) for action, child, cleared in children if cleared[blank]]

    def run(self, seconds: float) -> int:
        """Search on for about ``seconds``; returns :attr:`status`."""
        deadline = time.perf_counter() + seconds
        stack, path = self._stack, self._path
        while self.status == SEARCHING:
            if not stack:
                self.status = FAILED
                break
            if time.perf_counter() >= deadline:
                break
            moves, at = stack[-1]
            if at[0] >= len(moves):  # every move from here tried
                stack.pop()
                if path:
                    path.pop()
                continue
            action, child = moves[at[0]]
            at[0] += 1
            found = self._expand(child)
            if found is True:
                self.line = [*path, action]
                self.status = FOUND
            elif found is not False and len(path) + 1 < self._max_depth:
                path.append(action)
                stack.append((found, [0]))
        return self.status
