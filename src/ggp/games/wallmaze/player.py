"""The wall maze player: exact best replies to an opponent that moves by chance, else decoupled UCT.

The player first asks what kind of opponent it faces. It keeps the posterior
probability of two hypotheses about the opponent's moves: "uniformly random
over its legal moves" and "a racer", which with chance 0.85 takes one of the
steps that shorten its way home and otherwise any legal move. The state
shows where the opponent went, not what it chose, so each update adds up the
chances of every opponent move that, with the player's own move, leads to
the state seen (given its own move that is one move; if the referee replaced
it, every own move is considered). Before each step the opponent may switch
kinds with a small chance, so old evidence fades and an opponent whose play
changes during the game is read afresh within a few steps.

Against an opponent of either kind the best play is known exactly: the step
counter makes the game finite, and backward induction over every (white
cell, black cell, step) gives each role's best expected goal against it
(92.25 from the start against a random opponent, for either role). Each
table takes about ten milliseconds over the game's own compiled rules and
is kept for the process. When the posterior is confident the opponent is
random, the player takes the move with the best expected goal against random
play. While it is unsure, as in the first few steps, it takes the move with
the best posterior-weighted expectation, each kind's valued as if that kind
were then known for the rest of the game: a reply good against both, where
searching would cost about half a point a game against a random opponent.

Once the opponent is probably a racer, which stands in for any opponent that
plays to win, the player searches: decoupled UCT whose rollouts race along
shortest paths. Uniformly random rollouts almost never reach a target within
30 steps, so they say little about a position. In this player's rollouts
each marker steps along a shortest path to its target (distances by BFS over
the open cells) with some probability, and at random otherwise, so
collisions, blocking in the one-lane corridor and the detour through the
ring show up in the statistics; the simultaneous moves are searched by
decoupled UCT, so the player weighs racing against yielding the lane to an
opponent it cannot pass. The opponent's rollout greed is its observed share
of steps that shortened its way home, beyond the third or so that do so by
chance, while the player's own rollout moves stay mostly greedy.

Whatever it plays, once the player cannot reach its target in the steps
left, its own goal is 0 whatever it does, and only the opponent's can still
change. It then keeps the opponent from its target where it can: a third
table holds, for each role, the least goal the other can hold it to (moving
first, the role replying as best it can), and the player takes a move that
keeps the opponent's bound lowest. A lost standoff in the lane becomes a draw.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import numba as nb
import numpy as np

from ...agents.mcts import MCTSAgent
from ...core.game import Game, Move, State
from ...core.kernels import rng_below
from .rules import NEXT, NOOP, OPEN, STEP, TARGET, TIMEOUT, WallMaze, check_array, goals, legal, terminal
from .rules import apply as apply_moves

OWN_GREED = 0.8  # chance that our own rollout step follows a shortest path
PRIOR = (0.5, 4.0)  # the opponent's greed before any evidence: mean and weight in moves
CHANCE = 0.35  # how often a random walker's step happens to shorten its way home

PRIOR_RANDOM = 0.5  # P(the opponent moves at random) before its first move
RACER_GREED = 0.85  # the racer hypothesis: the chance of a shortening step, else any legal move
SWITCH = 0.03  # chance per step that the opponent changes its kind of play
CONFIDENT = 0.9  # above this P(random), play the best reply to a random opponent
DOUBT = 0.2  # from here up to CONFIDENT, the best reply to the mixture of the two kinds; below, search


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


# --- what the compiled functions below are given, checked once in Python ------------------------
def _checked(s: np.ndarray, role: int, greed: float, **buffers: tuple[np.ndarray, Any]) -> None:
    """Raise ValueError unless ``s`` is a wall maze state array, ``role`` 0 or 1, ``greed`` in 0..1 and
    each buffer a writable 1-D array of its dtype with room for every move (5)."""
    check_array(s)
    if isinstance(role, bool) or not isinstance(role, (int, np.integer)) or role not in (0, 1):
        raise ValueError(f"wallmaze: role must be 0 or 1, got {role!r}")
    if isinstance(greed, bool) or not isinstance(greed, (int, float, np.integer, np.floating)) or not 0 <= greed <= 1:
        raise ValueError(f"wallmaze: greed must be a number from 0 to 1, got {greed!r}")
    for name, (buf, dtype) in buffers.items():
        if not (isinstance(buf, np.ndarray) and buf.dtype == dtype and buf.ndim == 1 and buf.shape[0] >= 5):
            raise ValueError(f"wallmaze: {name} must be a 1-D {np.dtype(dtype)} array of at least 5 entries")
        if not buf.flags.writeable:
            raise ValueError(f"wallmaze: {name} must be writable")


def _checked_table(value: np.ndarray) -> None:
    cells = OPEN.shape[0]
    shape = (2, TIMEOUT + 1, cells, cells)
    if not (isinstance(value, np.ndarray) and value.dtype == np.float64 and value.shape == shape):
        raise ValueError(f"wallmaze: a value table is a float64 array of shape {shape}, as table() gives it")


# --- best replies to an opponent that moves by chance ---------------------------------------------
def move_chances(s: np.ndarray, role: int, greed: float, actions: np.ndarray, chances: np.ndarray) -> int:
    """Role's legal actions in ``s`` (into ``actions``) and their chances for a player of that ``greed``.

    With chance ``greed`` it takes one of the steps that shorten its way home,
    each equally likely, else any legal move (``noop`` included); with no
    such step it picks among its legal moves uniformly. ``greed`` 0 is a
    uniformly random player. Every argument is checked (ValueError) first.
    """
    _checked(s, role, greed, actions=(actions, np.int64), chances=(chances, np.float64))
    return int(_move_chances(s, int(role), float(greed), actions, chances))


@nb.njit(cache=True)
def _move_chances(s: np.ndarray, role: int, greed: float, actions: np.ndarray, chances: np.ndarray) -> int:
    n = legal(s, role, actions)
    here = s[role]
    shorter = 0
    for i in range(n):
        if actions[i] != NOOP and DIST[role, NEXT[here, actions[i]]] < DIST[role, here]:
            shorter += 1
    for i in range(n):
        chances[i] = 1.0 / n
        if shorter > 0:
            chances[i] *= 1.0 - greed
            if actions[i] != NOOP and DIST[role, NEXT[here, actions[i]]] < DIST[role, here]:
                chances[i] += greed / shorter
    return n


@nb.njit(cache=True)
def _probe(s: np.ndarray, w: int, b: int, step: int) -> None:
    # The state array of (w, b, step). An arrival step matters only once both have
    # arrived, which ends the game; one that arrived before any later arrival
    # (step 1) scores as the real one does.
    s[0], s[1], s[2] = w, b, step
    s[3] = 1 if w == TARGET[0] else 0
    s[4] = 1 if b == TARGET[1] else 0


@nb.njit(cache=True)
def _after(value: np.ndarray, s: np.ndarray, a0: int, a1: int, t: np.ndarray, out: np.ndarray) -> None:
    # Both roles' values after the joint move (played in t): its goals if it ends the game, else the table's.
    t[:] = s
    apply_moves(t, a0, a1)
    if terminal(t):
        g = goals(t)
        out[0], out[1] = g[0], g[1]
    else:
        out[0] = value[0, t[STEP], t[0], t[1]]
        out[1] = value[1, t[STEP], t[0], t[1]]


@nb.njit(cache=True)
def _induct(greed: float, hold: bool) -> np.ndarray:
    """Backward induction over every (step, white's cell, black's cell), from the last step.

    For each role r: with ``hold`` False, r's best expected goal against the
    other's chance moves (:func:`move_chances` for ``greed``); with ``hold``
    True, the least goal of r that the other, moving first, can make sure of.
    """
    cells = OPEN.shape[0]
    value = np.zeros((2, TIMEOUT + 1, cells, cells))
    moves = np.empty((2, 5), dtype=np.int64)
    chances = np.empty((2, 5))
    n = np.zeros(2, dtype=np.int64)
    q = np.zeros((2, 5, 5))  # q[r, white's move, black's move]: r's value after the joint move
    out = np.zeros(2)
    s = np.empty(5, dtype=np.int64)
    t = np.empty(5, dtype=np.int64)
    for step in range(TIMEOUT - 1, 0, -1):
        for w in range(cells):
            for b in range(cells):
                if not OPEN[w] or not OPEN[b] or w == b:
                    continue
                _probe(s, w, b, step)
                if terminal(s):
                    continue
                n[0] = _move_chances(s, 0, greed, moves[0], chances[0])
                n[1] = _move_chances(s, 1, greed, moves[1], chances[1])
                for i in range(n[0]):
                    for j in range(n[1]):
                        _after(value, s, moves[0, i], moves[1, j], t, out)
                        q[0, i, j] = out[0]
                        q[1, i, j] = out[1]
                for r in range(2):
                    if hold:  # the other picks i first, r replies with its best j
                        found = 100.0
                        for i in range(n[1 - r]):
                            most = 0.0
                            for j in range(n[r]):
                                most = max(most, q[r, j, i] if r == 0 else q[r, i, j])
                            found = min(found, most)
                    else:  # r picks i, the other's j comes by chance
                        found = 0.0
                        for i in range(n[r]):
                            total = 0.0
                            for j in range(n[1 - r]):
                                total += (q[0, i, j] if r == 0 else q[1, j, i]) * chances[1 - r, j]
                            found = max(found, total)
                    value[r, step, w, b] = found
    return value


def solve(greed: float) -> np.ndarray:
    """VALUE[r, step, white's cell, black's cell]: role r's best expected goal against the other's chance moves.

    The other moves as :func:`move_chances` says for ``greed`` (0: uniformly
    at random). Backward induction from the last step, over the game's own
    rules: r takes the move with the best expectation over the other's
    moves. Terminal and impossible positions hold 0; a non-terminal
    position's value does not depend on when a marker standing on its target
    got there.
    """
    if isinstance(greed, bool) or not isinstance(greed, (int, float, np.integer, np.floating)) or not 0 <= greed <= 1:
        raise ValueError(f"wallmaze: greed must be a number from 0 to 1, got {greed!r}")
    return _induct(float(greed), False)


@nb.njit(cache=True)
def _action_values(
    value: np.ndarray, greed: float, hold: bool, s: np.ndarray, role: int, actions: np.ndarray, out: np.ndarray
) -> int:
    """Role's legal actions in ``s`` (into ``actions``) and, per action, the value one step on in
    :func:`_induct`'s table: role's expected goal over the other's chance moves, or with ``hold``
    the most the other can still make sure of, replying knowing the action."""
    mine = legal(s, role, actions)
    theirs = np.empty(5, dtype=np.int64)
    chances = np.empty(5)
    n = _move_chances(s, 1 - role, greed, theirs, chances)
    after = np.zeros(2)
    t = np.empty_like(s)
    for i in range(mine):
        found = 0.0
        for j in range(n):
            if role == 0:
                _after(value, s, actions[i], theirs[j], t, after)
            else:
                _after(value, s, theirs[j], actions[i], t, after)
            found = max(found, after[1 - role]) if hold else found + chances[j] * after[role]
        out[i] = found
    return mine


def reply_values(
    value: np.ndarray, greed: float, s: np.ndarray, role: int, actions: np.ndarray, out: np.ndarray
) -> int:
    """Role's legal actions in ``s`` (into ``actions``), each one's expected goal in ``value``'s game.

    ``value`` is :func:`solve`'s table for the opponent's ``greed``. Every argument is checked (ValueError) first.
    """
    _checked_table(value)
    _checked(s, role, greed, actions=(actions, np.int64), out=(out, np.float64))
    return int(_action_values(value, float(greed), False, s, int(role), actions, out))


def solve_hold() -> np.ndarray:
    """HOLD[r, step, white's cell, black's cell]: the least goal of role r that the other can make sure of.

    The other moves first and r, seeing its move, replies as best it can: a
    bound the other can keep whatever r does. It matters once the other
    cannot arrive any more, when stopping r is all it can still do.
    """
    return _induct(0.0, True)


def hold_values(hold: np.ndarray, s: np.ndarray, role: int, actions: np.ndarray, out: np.ndarray) -> int:
    """Role's legal actions in ``s`` (into ``actions``), each with the goal the other can still make sure of.

    ``hold`` is :func:`solve_hold`'s table; the other replies knowing the action. Every argument is checked
    (ValueError) first.
    """
    _checked_table(hold)
    _checked(s, role, 0.0, actions=(actions, np.int64), out=(out, np.float64))
    return int(_action_values(hold, 0.0, True, s, int(role), actions, out))


_TABLES: dict[float | None, np.ndarray] = {}
_LOCK = threading.Lock()


def table(greed: float | None) -> np.ndarray:
    """:func:`solve`'s table for ``greed`` (None: :func:`solve_hold`'s), computed once per process."""
    if greed is not None:
        if isinstance(greed, bool) or not isinstance(greed, (int, float, np.integer, np.floating)):
            raise ValueError(f"wallmaze: greed must be a number from 0 to 1, got {greed!r}")
        greed = float(greed)  # one key per value, and NaN (never equal to itself) is refused by solve
    with _LOCK:
        if greed not in _TABLES:
            _TABLES[greed] = solve_hold() if greed is None else solve(greed)
        return _TABLES[greed]


# --- who is the opponent? ------------------------------------------------------------------------
class OpponentModel:
    """P(the opponent moves uniformly at random) against "it races", from the transitions seen.

    The racer takes a shortening step with chance ``RACER_GREED``
    (:func:`move_chances`). A two-state filter: before each step the opponent
    may have switched kinds with chance ``SWITCH``, so old evidence fades and
    the posterior follows an opponent whose play changes during the game.
    """

    def __init__(self, role: int, p_random: float = PRIOR_RANDOM) -> None:
        self.role = role  # the opponent's role index
        self.p_random = p_random

    def observe(self, before: np.ndarray, after: np.ndarray, mine: int | None) -> None:
        """Update on the step from ``before`` to ``after``, in which we (the other role) played ``mine``.

        The opponent's move is whichever of its legal moves leads there
        with ours; given ours, that is one move. If ``mine`` is None or does
        not lead there (the referee replaced it, say), every legal move of
        ours is tried, and several of the opponent's may fit (both waiting
        looks like both stepping into one cell): their chances add up.
        """
        them = self.role
        actions = np.empty(5, dtype=np.int64)
        uniform, racer = np.empty(5), np.empty(5)
        n = move_chances(before, them, 0.0, actions, uniform)
        move_chances(before, them, RACER_GREED, actions, racer)
        buf = np.empty(5, dtype=np.int64)
        ours = [int(a) for a in buf[: legal(before, 1 - them, buf)]]
        for own in ([mine], ours) if mine in ours else (ours,):
            fits = np.zeros(5, dtype=np.bool_)
            for i in range(n):
                for a in own:
                    t = before.copy()
                    if them == 1:
                        apply_moves(t, a, actions[i])
                    else:
                        apply_moves(t, actions[i], a)
                    fits[i] |= t[0] == after[0] and t[1] == after[1]
            if fits.any():
                break
        else:
            return  # no step of this game leads from ``before`` to ``after``: no evidence
        l_random, l_racer = float(uniform[fits].sum()), float(racer[fits].sum())
        p = self.p_random * (1 - SWITCH) + (1 - self.p_random) * SWITCH
        self.p_random = p * l_random / (p * l_random + (1 - p) * l_racer)


# --- the search -------------------------------------------------------------------------------------
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
def wallmaze_leaf(ctx: np.ndarray, s: np.ndarray, rng: np.ndarray, out: np.ndarray, params: np.ndarray) -> None:
    """Leaf value for UCT: each marker races along shortest paths with chance ``params[role]``
    (``OWN_GREED`` for a role ``params`` is too short to hold)."""
    greed0 = params[0] if params.shape[0] > 0 else OWN_GREED
    greed1 = params[1] if params.shape[0] > 1 else OWN_GREED
    while not terminal(s):
        apply_moves(s, _greedy_action(s, 0, rng, greed0), _greedy_action(s, 1, rng, greed1))
    g = goals(s)
    out[0] = g[0] / 100.0
    out[1] = g[1] / 100.0


class WallMazeAgent(MCTSAgent):
    """Exact best replies while the opponent may be random, else decoupled UCT (module docstring)."""

    name = "wallmaze"
    plays = WallMaze
    leaf_value = wallmaze_leaf
    leaf_params = (OWN_GREED, OWN_GREED)
    default_c = 0.7

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        self._vs_random, self._vs_racer, self._hold = table(0.0), table(RACER_GREED), table(None)
        assert isinstance(game, WallMaze)
        s = game.initial_array()  # compiled now, on the start clock, not on the first move's
        self._reply(s, 0, 0.5)
        self._spoil(s, 0, game.legal_moves(game.initial_state(), game.roles[0])[0])
        self._greedy_moves, self._moves_seen = PRIOR[0] * PRIOR[1], PRIOR[1]
        self._opponent = OpponentModel(1 - game.roles.index(role))
        self._last: np.ndarray | None = None
        self._mine: int | None = None

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        game = self.game
        assert isinstance(game, WallMaze) and self._tree is not None
        s = game._array_of(state)
        me = game.roles.index(self.role)
        them = 1 - me
        if self._last is not None and s[STEP] == self._last[STEP] + 1:
            self._opponent.observe(self._last, s, self._mine)
            # Did the opponent's last move shorten its way home? (A blocked or colliding move counts as not.)
            before, after = int(self._last[them]), int(s[them])
            self._moves_seen += 1
            self._greedy_moves += float(DIST[them, after] < DIST[them, before])
        self._last = s.copy()
        p = self._opponent.p_random
        if p > CONFIDENT:
            move = self._reply(s, me, 1.0)
        elif p >= DOUBT:
            move = self._reply(s, me, p)
        else:
            self._tree.params[me] = OWN_GREED
            # Greed beyond what chance gives: a random walker is modelled as random, a racer as a racer.
            seen = self._greedy_moves / self._moves_seen
            self._tree.params[them] = max(0.0, (seen - CHANCE) / (1.0 - CHANCE))
            move = super().select_move(state, time_limit)
        if DIST[me, s[me]] > TIMEOUT - s[STEP]:
            move = self._spoil(s, me, move)
        self._mine = game.text_action(s, me, move.text)
        return move

    def _spoil(self, s: np.ndarray, me: int, move: Move) -> Move:
        """``move``, or one that does more to keep the opponent from its target.

        Our own goal is 0 whatever we do once we cannot arrive in time, so
        the opponent's is all our move can still change: the difference
        between a draw and a loss, say, when we stand in its lane.
        """
        actions, held = np.empty(5, dtype=np.int64), np.empty(5)
        n = hold_values(self._hold, s, me, actions, held)
        mine = self.game.text_action(s, me, move.text)  # type: ignore[attr-defined]
        best = min(range(n), key=lambda i: (held[i], actions[i] != mine))
        return self.game._move(self.game.action_text(s, me, int(actions[best])))  # type: ignore[attr-defined]

    def _reply(self, s: np.ndarray, me: int, p_random: float) -> Move:
        """The move with the best expected goal if the opponent is random with chance ``p_random``, else a racer."""
        actions = np.empty(5, dtype=np.int64)
        vs_random, vs_racer = np.zeros(5), np.zeros(5)
        n = reply_values(self._vs_random, 0.0, s, me, actions, vs_random)
        if p_random < 1.0:
            reply_values(self._vs_racer, RACER_GREED, s, me, actions, vs_racer)
        values = p_random * vs_random + (1.0 - p_random) * vs_racer
        here = int(s[me])

        def rank(i: int) -> tuple[float, int]:
            # Equal values: the step that shortens the way home, which also serves against a racer.
            a = int(actions[i])
            return round(float(values[i]), 9), -int(DIST[me, here if a == NOOP else NEXT[here, a]])

        best = max(range(n), key=rank)
        return self.game._move(self.game.action_text(s, me, int(actions[best])))  # type: ignore[attr-defined]
