"""The Amazons player: UCT whose leaves are scored by an Amazons evaluation.

Random rollouts are weak in Amazons: every strong program scores positions
with territory instead. This player runs the compiled decoupled UCT of
:mod:`ggp.agents.uct` (plain UCT for the side to move) and, as Lorentz's
Invader does, plays only a few random turns below each new leaf before it
scores the position with an evaluation after Lieberum (2005):

* queen- and king-move distances from each side to every empty square (BFS);
* territory ``t1``/``t2``: squares a side reaches first by queen/king moves
  (a small bonus to the side to move on ties);
* position ``c1 = 2 * sum(2^-Dw - 2^-Db)`` and ``c2 = sum(clamp((Db - Dw)/6))``;
* mobility, with a penalty for nearly trapped amazons;
* weights that move from ``c1``/``c2``/``t2`` early to ``t1`` late, by the
  phase ``w = sum 2^-|Dw - Db|`` over squares both sides reach;
* once no square is reachable by both sides, the endgame is decided by
  counting: every turn fills one square of the mover's own regions, so the
  side with more squares (ties go to the side not to move) makes the last move.

The score becomes white's winning chance through a logistic curve. Once the
sides' regions are separated the territory count is close to exact, and a
side left without moves scores as lost.

Once the board itself has split into regions that each hold one side's
amazons only, the player stops searching and plays the endgame solved by
:mod:`ggp.games.amazons.endgame`: a turn that keeps the most turns for itself.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from ...agents.mcts import MCTSAgent, budget
from ...core.errors import StateFormatError
from ...core.game import Game, Move, State
from .endgame import BUDGET, Endgame, new_table, solve
from .rules import EMPTY, Amazons, check_array, padded_board, random_turns

FAR = 99  # distance of a square a side cannot reach
PLIES = 2  # random turns played below a leaf before it is scored
ENDGAME = 0.97  # white's chance when the separated regions' square counts favour it


@nb.njit(cache=True)
def _distances(
    board: np.ndarray, offsets: np.ndarray, sources: np.ndarray, queen: bool, dist: np.ndarray, queue: np.ndarray
) -> None:
    """Multi-source BFS in queen moves (``queen``) or king moves over empty squares."""
    dist[:] = FAR
    head = 0
    tail = 0
    for i in range(sources.shape[0]):
        dist[sources[i]] = 0
        queue[tail] = sources[i]
        tail += 1
    while head < tail:
        c = queue[head]
        head += 1
        d = dist[c] + 1
        for k in range(8):
            o = offsets[k]
            p = c + o
            while board[p] == EMPTY:
                if dist[p] > d:
                    dist[p] = d
                    queue[tail] = p
                    tail += 1
                if not queen:
                    break
                p += o


@nb.njit(cache=True)
def _mobility(board: np.ndarray, offsets: np.ndarray, queens: np.ndarray, side: int) -> float:
    """Sum over the side's amazons of a concave function of their move counts."""
    total = 0.0
    for i in range(4):
        q = queens[side, i]
        moves = 0
        for k in range(8):
            o = offsets[k]
            p = q + o
            while board[p] == EMPTY:
                moves += 1
                p += o
        if moves == 0:
            total -= 3.0
        else:
            total += min(moves, 10) ** 0.5
    return total


def evaluate(s: np.ndarray) -> float:
    """White's winning chance (0..1) in Amazons state array ``s``, by the evaluation above.

    ``s`` is checked first (StateFormatError, a ValueError, for anything but an Amazons state array).
    """
    sizes = {8 * 8 + 3: 8, 10 * 10 + 3: 10}
    if not isinstance(s, np.ndarray) or s.ndim != 1 or s.shape[0] not in sizes:
        raise StateFormatError("evaluate takes an Amazons state array (state.array of amazons_8x8 or amazons_10x10)")
    check_array(s, sizes[s.shape[0]])
    return float(_evaluate(np.ascontiguousarray(s)))


@nb.njit(cache=True)
def _evaluate(s: np.ndarray) -> float:
    nn = s.shape[0] - 3
    n = 10 if nn == 100 else 8
    w = n + 2
    board = np.empty(w * w, dtype=np.uint8)
    queens = np.empty((2, 4), dtype=np.int64)
    offsets = padded_board(s, board, queens)
    queue = np.empty(w * w, dtype=np.int64)
    qw = np.empty(w * w, dtype=np.int64)
    qb = np.empty(w * w, dtype=np.int64)
    kw = np.empty(w * w, dtype=np.int64)
    kb = np.empty(w * w, dtype=np.int64)
    _distances(board, offsets, queens[0], True, qw, queue)
    _distances(board, offsets, queens[1], True, qb, queue)
    _distances(board, offsets, queens[0], False, kw, queue)
    _distances(board, offsets, queens[1], False, kb, queue)
    to_move = s[nn]  # 0 white, 1 black (a fire phase is finished before scoring)
    tie = 0.2 if to_move == 0 else -0.2
    t1 = 0.0
    t2 = 0.0
    c1 = 0.0
    c2 = 0.0
    phase = 0.0
    shared = 0  # squares both sides reach
    own_w = 0  # squares only white reaches
    own_b = 0
    for p in range(w * w):
        if board[p] != EMPTY:
            continue
        a, b = qw[p], qb[p]
        if a < b:
            t1 += 1.0
        elif b < a:
            t1 -= 1.0
        elif a < FAR:
            t1 += tie
        ka, kb_ = kw[p], kb[p]
        if ka < kb_:
            t2 += 1.0
        elif kb_ < ka:
            t2 -= 1.0
        elif ka < FAR:
            t2 += tie
        if a < FAR or b < FAR:
            c1 += 2.0 * (2.0 ** -min(a, 30) - 2.0 ** -min(b, 30))
            c2 += min(1.0, max(-1.0, (min(kb_, 12) - min(ka, 12)) / 6.0))
        if a < FAR and b < FAR:
            phase += 2.0 ** -abs(a - b)
            shared += 1
        elif a < FAR:
            own_w += 1
        elif b < FAR:
            own_b += 1
    if shared == 0:
        # The regions are separated: each turn fills one square of the mover's own
        # regions, so the side with more squares makes the last move. (Regions
        # that cannot be filled square by square make this a close guess.)
        white_wins = own_w > own_b if to_move == 0 else own_w >= own_b
        return ENDGAME if white_wins else 1.0 - ENDGAME
    mob = _mobility(board, offsets, queens, 0) - _mobility(board, offsets, queens, 1)
    late = 1.0 / (1.0 + phase / 8.0)  # near 1 once the regions are separated
    score = late * t1 + (1.0 - late) * (0.4 * t2 + 0.3 * c1 + 0.3 * c2) + 0.5 * (1.0 - late) * mob
    return 1.0 / (1.0 + np.exp(-score / (1.5 + 0.04 * nn)))


@nb.njit(cache=True)
def amazons_leaf(ctx: np.ndarray, s: np.ndarray, rng: np.ndarray, out: np.ndarray, params: np.ndarray) -> None:
    """Leaf value for UCT: a few random turns, then the evaluation (or the result, if the game ended)."""
    nn = s.shape[0] - 3
    alive = random_turns(s, rng, PLIES)
    p = _evaluate(s) if alive else (0.0 if s[nn] == 0 else 1.0)  # a side left without a move loses
    out[0] = p
    out[1] = 1.0 - p


class AmazonsAgent(MCTSAgent):
    """UCT with evaluation-scored leaves (see the module docstring); ``time`` or ``sims`` per move."""

    name = "amazons"
    plays = Amazons
    leaf_value = amazons_leaf
    default_c = 0.35
    #: Endgame-solver nodes per second of clock, a low estimate (budgets scale with the time given).
    SOLVER_RATE = 200_000

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        self._table: np.ndarray | None = None  # solved regions, made on the first separated position
        solve(self.game.initial_state().array, 1, new_table(1))  # type: ignore[attr-defined]  # compiled now, on the start clock
        self._arrow: tuple[int, int] | None = None  # (landing cell, arrow cell) of a solved turn
        #: What the endgame solver said at this player's last move phase (None: not tried).
        self.last_endgame: Endgame | None = None

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        began = time.perf_counter()
        game = self.game
        assert isinstance(game, Amazons)
        s = game._array_of(state)
        nn = game.n * game.n
        me = game.roles.index(self.role)
        if s[nn] == me and s[nn + 1] == 1 and self._arrow is not None and self._arrow[0] == s[nn + 2]:
            arrow = self._arrow[1]
            self._arrow = None
            return game._move(game.action_text(s, me, 1 + nn * nn + arrow))
        self._arrow = None
        if s[nn] == me and s[nn + 1] == 0:
            seconds = budget(self.time if self.sims is None else None, time_limit)
            nodes = BUDGET if seconds is None else max(2_000, min(BUDGET, int(seconds * self.SOLVER_RATE)))
            if self._table is None:
                self._table = new_table()
            self.last_endgame = result = solve(s, nodes, self._table)
            if result.separated and result.move is not None:
                src, dst, arrow = result.move
                self._arrow = (dst, arrow)
                return game._move(game.action_text(s, me, 1 + src * nn + dst))
        if time_limit is not None:  # the endgame solver's time came out of the clock
            time_limit = max(0.01, time_limit - (time.perf_counter() - began))
        return super().select_move(state, time_limit)
