"""A search for single-player games: nested Monte Carlo search (NMCS) that keeps the best line found, beside
an exhaustive depth-first walk that proves the best goal where the puzzle is small enough, and a fill search.

UCT with random playouts averages over playouts, which suits opponents but
wastes a puzzle: there the best line found is a line the player can play
(the rules are deterministic). Nested Monte Carlo search (Cazenave 2009)
plays, at each step of its walk, every move followed by a random playout,
follows the best line seen so far, and remembers it. Its level-1 walk runs
compiled over the game's kernel; :class:`PuzzleSearch` repeats walks from
the current state until the clock, each starting from the best line known
(so it never gets worse), keeps that line from move to move and plays
along it.

Random playouts rarely finish a puzzle whose moves are few but must all be
right (a futoshiki, the towers of Hanoi, a maze of zombies): there the
exhaustive solver (:class:`~ggp.agents.solver.DFSolver`, its transposition
table merging the orders that reach one position) reads the whole tree in
seconds, or finds a line to the top goal, which ends its walk. With ``solve``
it takes turns with the walks, each turn as long as the last walk, until it has proven the
best goal (whose line then replaces theirs, and the search stops: nothing
can beat it) or its table is full (then it is dropped, its memory freed).
A puzzle that fills a board (a sudoku: a move per blank, in any order) is
read better still by the fill search (:mod:`ggp.agents.fill`, most
constrained blank first), which takes its turns too, until it finds a line
to the top goal or finds that the puzzle is not of that kind.

>>> import ggp
>>> from ggp.gdl import from_text
>>> game = from_text('''
...   (role p) (init (at 0))
...   (succ 0 1) (succ 1 2) (succ 2 3)
...   (<= (legal p up) (true (at ?x)))
...   (<= (legal p stay) (true (at ?x)))
...   (<= (next (at ?y)) (does p up) (true (at ?x)) (succ ?x ?y))
...   (<= (next (at ?x)) (does p stay) (true (at ?x)))
...   (<= (next (at 3)) (true (at 3)))
...   (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
...   (init (step 0))
...   (<= terminal (true (step 3)))
...   (<= (goal p 100) (true (at 3)))
...   (<= (goal p 0) (not (true (at 3))))''')
>>> search = PuzzleSearch(game, seed=1)
>>> search.warm(game.initial_state())  # compiles, or loads numba's cache
>>> search.improve(game.initial_state(), seconds=2.0)
100
>>> [str(m) for m in search.line()]
['up', 'up', 'up']
"""

from __future__ import annotations

import time
from typing import Annotated

import numpy as np

from ..core.game import Game, Move, State
from ..core.kernels import rng_below, rng_state
from ..core.native import KernelGame
from . import fill
from .heuristic import goals_move
from .options import MAX_SEED, Range, check_option
from .solver import FULL, PROVEN, SEARCHING, DFSolver

#: Longest line kept; deeper playouts are scored where they stop.
MAX_LINE = 4096
#: Shortest turn of the exhaustive solver, in seconds (its first, before a walk has been timed).
MIN_TURN = 0.005
#: Most seconds spent finding whether the goals move during play (a few random walks, at the start).
GOALS_SECONDS = 0.25

_SEED = Annotated[int, Range(ge=0, le=MAX_SEED)]


def _playout_template(ctx, s, rng, line, start, buf, joint, res, guided, work):  # type: ignore[no-untyped-def]
    # A playout of a one-role game from s (in place), its moves written to line[start:]; returns (goal, end),
    # end being where the line stops. At random; ``guided``: each step's moves are tried in a random order
    # until one keeps the goal as it stands from falling (the last one tried if none does), so that a
    # puzzle whose goal drops for good at a false step (a goal latch: firefighter's walk away from the fire)
    # is played out along the steps that keep it. ``work``: a state's room, for the steps tried.
    n_line = line.shape[0]
    pos = start
    now = 0
    if guided:
        kernel_goals(ctx, s, res)  # type: ignore[name-defined]  # noqa: F821
        now = res[0]
    while not kernel_terminal(ctx, s) and pos < n_line:  # type: ignore[name-defined]  # noqa: F821
        n = kernel_legal(ctx, s, 0, buf)  # type: ignore[name-defined]  # noqa: F821
        if n == 0:
            break
        if guided:
            a = buf[0]
            for t in range(n):  # a random order, drawn as it goes (Fisher-Yates)
                j = t + rng_below(rng, n - t)
                a = buf[j]
                buf[j] = buf[t]
                buf[t] = a
                work[:] = s
                joint[0] = a
                kernel_apply(ctx, work, joint)  # type: ignore[name-defined]  # noqa: F821
                kernel_goals(ctx, work, res)  # type: ignore[name-defined]  # noqa: F821
                if res[0] >= now:
                    break
            s[:] = work
            now = res[0]
        else:
            a = buf[rng_below(rng, n)]
            joint[0] = a
            kernel_apply(ctx, s, joint)  # type: ignore[name-defined]  # noqa: F821
        line[pos] = a
        pos += 1
    kernel_goals(ctx, s, res)  # type: ignore[name-defined]  # noqa: F821
    return res[0], pos


def _level1_template(ctx, s, rng, best, best_len, best_goal, budget, width, guided):  # type: ignore[no-untyped-def]
    # Level-1 NMCS from s: at each step every move is tried with one random playout; the walk follows the
    # best line seen, which is kept in best[:best_len] (moves from s) when it beats best_goal.
    # ``budget`` bounds the playouts run (a clock's worth); returns (goal, length, playouts).
    # ``width``: the kernel's max_actions, an argument (not a bound name) so that one compiled copy serves
    # every sheet with as many roles. ``guided``: the playouts keep the goal from falling (see the playout).
    buf = np.empty(width, dtype=np.int64)
    moves = np.empty(width, dtype=np.int64)
    joint = np.zeros(1, dtype=np.int64)
    res = np.zeros(1, dtype=np.int64)
    n_line = best.shape[0]
    line = np.empty(n_line, dtype=best.dtype)
    cur = s.copy()
    work = s.copy()
    spare = s.copy()
    goal = best_goal
    length = best_len
    pos = 0
    runs = 0
    while not kernel_terminal(ctx, cur) and pos < n_line and runs < budget:  # type: ignore[name-defined]  # noqa: F821
        n = kernel_legal(ctx, cur, 0, buf)  # type: ignore[name-defined]  # noqa: F821
        if n == 0:
            break
        moves[:n] = buf[:n]
        for i in range(n):
            if runs >= budget:  # checked per playout: a wide step must not overrun the clock
                break
            work[:] = cur
            joint[0] = moves[i]
            kernel_apply(ctx, work, joint)  # type: ignore[name-defined]  # noqa: F821
            line[pos] = moves[i]
            g, end = playout(ctx, work, rng, line, pos + 1, buf, joint, res, guided, spare)  # type: ignore[name-defined]  # noqa: F821
            runs += 1
            if g > goal:
                goal = g
                best[pos:end] = line[pos:end]
                length = end
        if length <= pos or runs >= budget:  # out of playouts, or no line through here: the walk ends
            break
        joint[0] = best[pos]
        kernel_apply(ctx, cur, joint)  # type: ignore[name-defined]  # noqa: F821
        line[pos] = best[pos]
        pos += 1
    return goal, length, runs


class PuzzleSearch:
    """Nested Monte Carlo search over a one-role game with a kernel, keeping its best line between calls.

    :meth:`improve` searches from a state for a while and returns the best goal
    known from there; :meth:`move` does so and plays the first move of that
    line. The line stays valid as the game follows it (a one-role game is
    deterministic); from any other state it is searched afresh. ``solve``
    runs the exhaustive solver and the fill search beside the walks (see the
    module docstring).
    """

    def __init__(self, game: Game, seed: int = 0, solve: bool = True) -> None:
        if not isinstance(game, KernelGame):
            raise TypeError(f"compiled search needs a game with a kernel; {game.name} has none")
        if len(game.roles) != 1:
            raise ValueError(f"a puzzle search plays one-role games; {game.name} has {len(game.roles)} roles")
        self.game = game
        seed = check_option("PuzzleSearch", "seed", seed, _SEED)
        kernel = game.kernel
        self.ctx = kernel.context()
        self.rng = rng_state(seed)
        self._width = max(1, kernel.max_actions)
        playout = kernel.specialise(_playout_template)
        self._level1 = kernel.specialise(_level1_template, playout=playout)
        self._from: np.ndarray | None = None  # the state the line starts from
        self._line = np.zeros(MAX_LINE, dtype=np.int64)
        self._length = 0
        self._goal = -1
        #: Playouts run by the last call.
        self.playouts = 0
        self._solve_on = solve
        self._solver: DFSolver | None = DFSolver(game) if solve else None
        self._fill: fill.FillSearch | None = None  # the fill search from the line's start, while it may find one
        self._proven = False  # whether the line's goal is the best the puzzle allows from its start
        self._expansions_per_second = 0.0
        #: Whether every other walk's playouts keep the goal from falling: where the goals move during play.
        self.guided = goals_move(game, seconds=GOALS_SECONDS)

    def warm(self, state: State) -> None:
        """Compile (or load numba's cache) with a tiny search from ``state``."""
        s = self.game._array_of(state).copy()  # writable, as the search's own copies are: one compiled signature
        scratch = np.zeros(MAX_LINE, dtype=np.int64)
        for guided in (False, True):
            self._level1(self.ctx, s, self.rng, scratch, 0, -1, 1, self._width, guided)
        if self._solver is not None and not self.game.is_terminal(state):
            self._solver.reset(state)
            self._solver.run(1)

    def line(self) -> list[Move]:
        """The best line known, as moves from the state it starts from."""
        if self._from is None:
            return []
        game = self.game
        state = game.state_from_array(self._from)
        role = game.roles[0]
        out = []
        for a in self._line[: self._length]:
            move = game.action_to_move(state, role, int(a))
            out.append(move)
            state = game.next_state(state, [move])
        return out

    def _follow(self, state: State) -> None:
        # Keep the line if ``state`` is on it (its start, or reached along it); else forget it.
        s = self.game._array_of(state)
        if self._from is None:
            self._reset(s)
            return
        if np.array_equal(self._from, s):
            return
        if self._length > 0:
            work = self._from.copy()
            self.game.kernel.apply(self.ctx, work, np.array([self._line[0]], dtype=np.int64))
            if np.array_equal(work, s):
                self._line[: self._length - 1] = self._line[1 : self._length]
                self._length -= 1
                self._from = work
                if self._fill is not None:  # still searching: from here on (its lines start where it starts)
                    self._fill = fill.FillSearch(self.game, state)
                return
        self._reset(s)

    def _reset(self, s: np.ndarray) -> None:
        self._from = s.copy()
        self._length = 0
        self._goal = -1
        self._proven = False
        self._fill = fill.FillSearch(self.game, self.game.state_from_array(s)) if self._solve_on else None

    def improve(self, state: State, seconds: float) -> int:
        """Search from ``state`` for about ``seconds`` (level-1 walks, each within a quarter of it, and the
        exhaustive solver's and the fill search's turns); returns the best goal known from ``state`` (-1: none
        yet, as when ``state`` is terminal)."""
        seconds = check_option("PuzzleSearch", "seconds", seconds, Annotated[float, Range(ge=0)])
        deadline = time.perf_counter() + seconds
        self._follow(state)
        assert self._from is not None
        if self.game.is_terminal(state):
            return self._goal
        self.playouts = 0
        # Per kind of walk (random, guided: see the playout), playouts per second measured, and the budget.
        rates = [0.0, 0.0]
        budgets = [1, 1]
        walks = 0
        spent = 0.0  # the last walk's time: the solver's next turn is as long (the walks' budgets grow by turns)
        while self._goal < 100 and not self._proven:
            t0 = time.perf_counter()
            if t0 >= deadline and walks > 0:  # out of time; one walk (a single playout at least) always runs
                break
            if self._fill is not None:
                self._fill_turn(min(max(spent, MIN_TURN), (deadline - t0) / 3))
                if self._goal >= 100:
                    break
                t0 = time.perf_counter()
            if self._solver is not None:
                self._solve(state, min(max(spent, MIN_TURN), (deadline - t0) / 2))
                if self._proven:
                    break
                t0 = time.perf_counter()
            walks += 1
            kind = int(self.guided and walks % 2 == 0)
            if rates[kind] > 0:  # at most doubling, as a slow playout may follow fast ones
                room = max(0.0, min(deadline - t0, seconds / 4))
                budgets[kind] = max(1, min(2 * budgets[kind], int(rates[kind] * room)))
            self._walk(budgets[kind], bool(kind))
            spent = time.perf_counter() - t0
            runs = max(1, self._runs)
            rates[kind] = runs / max(spent, 1e-6)
        return self._goal

    def _fill_turn(self, seconds: float) -> None:
        # The fill search's turn; the line it finds (to the top goal) replaces the walks'. It is dropped once it
        # has found its line or cannot find one.
        search = self._fill
        assert search is not None
        status = search.run(seconds)
        if status == fill.FOUND and self._goal < fill.TOP_GOAL and len(search.line) <= MAX_LINE:
            line = search.line
            self._line[: len(line)] = line
            self._length = len(line)
            self._goal = fill.TOP_GOAL
        if status != fill.SEARCHING:
            self._fill = None

    def _solve(self, state: State, seconds: float) -> None:
        # The exhaustive solver's turn from ``state`` (the line's start): about ``seconds`` of expansions; where
        # it proves the best goal, its line replaces the walks'.
        solver = self._solver
        assert solver is not None
        if solver.root_state != state:
            solver.reset(state)
        if solver.status == SEARCHING:
            count = 1000 if self._expansions_per_second <= 0 else max(1, int(self._expansions_per_second * seconds))
            t0 = time.perf_counter()
            done = solver.run(count)
            self._expansions_per_second = max(1.0, done) / max(time.perf_counter() - t0, 1e-6)
        if solver.status == FULL:  # no room to go on: its table's memory back
            self._solver = None
        elif solver.status == PROVEN:
            self._adopt(state, solver)
        elif solver.status != SEARCHING:  # it cannot prove this puzzle (a path that repeats a position)
            self._solver = None

    def _adopt(self, state: State, solver: DFSolver) -> None:
        # The solver proved ``state``'s best goal: the line of proven moves down to the end replaces the walks'.
        value = solver.value()
        assert value is not None
        best = round(value[0])
        game, role = self.game, self.game.roles[0]
        line: list[int] = []
        at = state
        while not game.is_terminal(at) and len(line) < MAX_LINE:
            for a in game.legal_actions(at, role):
                child = game.apply_actions(at, [int(a)])
                known = solver.proven(child)
                if known is not None and known[0] >= best:
                    line.append(int(a))
                    at = child
                    break
            else:
                return  # a step of the line is no longer in the table (it was full): the walks go on
        if game.is_terminal(at) and best >= self._goal:
            self._line[: len(line)] = line
            self._length = len(line)
            self._goal = best
            self._proven = True

    def _walk(self, budget: int, guided: bool = False) -> None:
        # One level-1 walk from the line's start, within ``budget`` playouts (``guided``: see the playout); it
        # starts from the best line known, so it never makes it worse.
        assert self._from is not None
        line = self._line.copy()
        goal, length, runs = self._level1(
            self.ctx, self._from, self.rng, line, self._length, self._goal, budget, self._width, guided
        )
        self._runs = int(runs)
        self.playouts += int(runs)
        if goal > self._goal:
            self._goal, self._length = int(goal), int(length)
            self._line[:] = line

    def move(self, state: State, seconds: float) -> Move:
        """The first move of the best line from ``state`` after searching it for ``seconds``."""
        self.improve(state, seconds)
        game = self.game
        role = game.roles[0]
        if self._length == 0:  # no line found in time: any legal move
            return game.legal_moves(state, role)[0]
        return game.action_to_move(state, role, int(self._line[0]))
