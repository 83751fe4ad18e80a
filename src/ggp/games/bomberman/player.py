"""The Bomberman player: it solves the game's safety and attack sets, then plays by them.

Both variants are small enough to solve. From the start, the player explores
every reachable position (players, bombs by countdown; the step counter only
by its parity, which decides whose turn it is in the alternating variant) and
records each joint action's outcome. On that graph it computes, for each role:

* ``safe``: the positions from which the role can avoid being burned forever,
  even against an opponent who sees its move first (the greatest fixed point
  of "some move of mine keeps me unburned and safe whatever you do");
* ``attack``: the positions from which the role can force the opponent to
  burn while staying unburned itself, with the number of steps it takes
  (the least fixed point, computed in rounds).

It then plays: a forcing move when it holds an attack (the one that wins
soonest); otherwise a safe move, preferring those that leave the opponent the
most replies that hand it an attack; a move that keeps it unburned for the
longest when no move is safe. With perfect play ``bomberman2p`` is a draw
(every position reached from the start is safe for both), so wins come from
the opponent's mistakes — and this player makes none.
"""

from __future__ import annotations

import hashlib
import io
import threading
from pathlib import Path
from typing import Annotated

import numba as nb
import numpy as np

from ...agents.base import Agent
from ...agents.options import MAX_SEED, Range, check_options
from ...core.cache import cache_folder, write_whole
from ...core.game import Game, Move, State
from ...core.kernels import Kernel
from .rules import ACTIONS, BOMB0, BOMB1, BOMB2, BOMB3, DROP, MAN, NEXT, STEP, WOMAN, Bomberman

ILLEGAL = -9  # no such joint action
BURNED = (-2, -3, -4)  # role 0 burned alone, role 1 burned alone, both burned
NA = len(ACTIONS)


def _explore_template(init, capacity):  # type: ignore[no-untyped-def]
    # Breadth-first over positions keyed by (players, step parity, bombs); fire
    # is left out of the key because it never outlives its state.
    index = {}
    states = np.empty((capacity, init.shape[0]), dtype=np.int64)
    succ = np.full((capacity, NA, NA), ILLEGAL, dtype=np.int32)
    buf0 = np.empty(NA, dtype=np.int64)
    buf1 = np.empty(NA, dtype=np.int64)
    states[0] = init
    index[(init[0], init[1], (init[2] % 2) * PARITY, init[3], init[4], init[5], init[6])] = 0  # type: ignore[name-defined]  # noqa: F821
    count = 1
    head = 0
    nxt = np.empty(init.shape[0], dtype=np.int64)
    while head < count:
        s = states[head]
        n0 = legal(s, 0, buf0)  # type: ignore[name-defined]  # noqa: F821
        n1 = legal(s, 1, buf1)  # type: ignore[name-defined]  # noqa: F821
        for i in range(n0):
            if NOBOMB == 1 and buf0[i] == DROP:  # type: ignore[name-defined]  # noqa: F821
                continue
            for j in range(n1):
                if NOBOMB == 2 and buf1[j] == DROP:  # type: ignore[name-defined]  # noqa: F821
                    continue
                nxt[:] = s
                apply(nxt, buf0[i], buf1[j])  # type: ignore[name-defined]  # noqa: F821
                nxt[2] = 2 - nxt[2] % 2  # keep only the parity of the step
                burned0 = (nxt[7] >> nxt[0]) & 1
                burned1 = (nxt[7] >> nxt[1]) & 1
                if burned0 and burned1:
                    outcome = -4
                elif burned0:
                    outcome = -2
                elif burned1:
                    outcome = -3
                else:
                    key = (nxt[0], nxt[1], (nxt[2] % 2) * PARITY, nxt[3], nxt[4], nxt[5], nxt[6])  # type: ignore[name-defined]  # noqa: F821
                    outcome = index.get(key, -1)
                    if outcome < 0:
                        if count == capacity:
                            return states, succ, -1
                        outcome = count
                        index[key] = count
                        states[count] = nxt
                        states[count, 7] = 0
                        count += 1
                succ[head, buf0[i], buf1[j]] = outcome
        head += 1
    return states[:count], succ[:count], count


@nb.njit(cache=True)
def _solve(succ: np.ndarray, me: int) -> tuple[np.ndarray, np.ndarray]:
    """``safe`` (bool) and ``attack`` (steps to a forced burn, or -1) for role ``me``."""
    count = succ.shape[0]
    mine_burned = -2 if me == 0 else -3
    theirs_burned = -3 if me == 0 else -2
    safe = np.ones(count, dtype=np.bool_)
    changed = True
    while changed:
        changed = False
        for s in range(count):
            if not safe[s]:
                continue
            ok_any = False
            for a in range(NA):
                ok_all = True
                seen = False
                for b in range(NA):
                    o = succ[s, a, b] if me == 0 else succ[s, b, a]
                    if o == ILLEGAL:
                        continue
                    seen = True
                    if o == mine_burned or o == -4 or (o >= 0 and not safe[o]):
                        ok_all = False
                        break
                    if o == theirs_burned:
                        continue
                if seen and ok_all:
                    ok_any = True
                    break
            if not ok_any:
                safe[s] = False
                changed = True
    attack = np.full(count, -1, dtype=np.int64)
    rank = 0
    changed = True
    while changed:
        changed = False
        rank += 1
        for s in range(count):
            if attack[s] >= 0:
                continue
            for a in range(NA):
                ok_all = True
                seen = False
                for b in range(NA):
                    o = succ[s, a, b] if me == 0 else succ[s, b, a]
                    if o == ILLEGAL:
                        continue
                    seen = True
                    if o == theirs_burned:
                        continue
                    if o < 0 or attack[o] < 0 or attack[o] >= rank:
                        ok_all = False
                        break
                if seen and ok_all:
                    attack[s] = rank
                    changed = True
                    break
    return safe, attack


@nb.njit(cache=True)
def _values_vs_random(succ: np.ndarray, safe: np.ndarray, me: int, gamma: float, rounds: int) -> np.ndarray:
    """Our chance of winning (discounted per step) when we only make safe moves and the
    opponent moves uniformly at random: a best response to the random player."""
    count = succ.shape[0]
    mine_burned = -2 if me == 0 else -3
    theirs_burned = -3 if me == 0 else -2
    value = np.zeros(count)
    for _ in range(rounds):
        for s in range(count):
            best = 0.0
            for a in range(NA):
                total = 0.0
                n = 0
                ok = True
                for b in range(NA):
                    o = succ[s, a, b] if me == 0 else succ[s, b, a]
                    if o == ILLEGAL:
                        continue
                    n += 1
                    if o == theirs_burned:
                        total += 1.0
                    elif o == -4:
                        total += 0.5
                    elif o == mine_burned or not safe[o]:
                        ok = False
                    else:
                        total += gamma * value[o]
                if n > 0 and ok and total / n > best:
                    best = total / n
            value[s] = best
    return value


class _Solution:
    """The explored position graph of one variant, with the roles' safe and attack sets.

    Solving takes seconds, so the arrays are kept in a cache folder
    (``$GGP_CACHE``, else ``~/.cache/ggp``) and read back by later processes.
    """

    def __init__(self, game: Bomberman, nobomb: int) -> None:
        kernel: Kernel = game.kernel
        self.parity = 1 if game.alternating else 0  # whose turn it is matters only when turns alternate
        self.nobomb = nobomb
        roles = (0, 1) if nobomb < 0 else (nobomb,)
        digest = hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:10]
        path = cache_folder() / f"bomberman-{game.name}-{nobomb}-{kernel.namespace['_digest']}-{digest}.npz"
        arrays = _load(path)
        if arrays is not None and not _consistent(arrays, roles):
            arrays = None  # a damaged or foreign cache file: solve again rather than index by it
        if arrays is None:
            explore = kernel.specialise(_explore_template, PARITY=self.parity, NOBOMB=nobomb + 1)
            capacity = 1 << 18
            while True:
                states, succ, count = explore(game.initial_array(), capacity)
                if count >= 0:
                    break
                capacity *= 2
            arrays = {"states": states, "succ": succ}
            for me in roles:
                safe, attack = _solve(succ, me)
                arrays[f"safe{me}"] = safe
                arrays[f"attack{me}"] = attack
                arrays[f"value{me}"] = _values_vs_random(succ, safe, me, 0.98, 60)
            _save(path, arrays)
        self.states = arrays["states"]
        self.succ = arrays["succ"]
        self.count = len(self.states)
        self.index = {self.key(s): i for i, s in enumerate(self.states)}
        self.safe = [arrays.get(f"safe{me}") for me in (0, 1)]
        self.attack = [arrays.get(f"attack{me}") for me in (0, 1)]
        self.value = [arrays.get(f"value{me}") for me in (0, 1)]

    def for_role(self, me: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Role ``me``'s safe set, attack ranks and values against a random opponent."""
        safe, attack, value = self.safe[me], self.attack[me], self.value[me]
        if safe is None or attack is None or value is None:
            raise ValueError(f"this solution was made for role {self.nobomb} only")
        return safe, attack, value

    def key(self, s: np.ndarray) -> tuple[int, ...]:
        parity = (int(s[STEP]) % 2) * self.parity
        return (int(s[MAN]), int(s[WOMAN]), parity, int(s[BOMB3]), int(s[BOMB2]), int(s[BOMB1]), int(s[BOMB0]))


def _load(path: Path) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError):
        return None


def _consistent(arrays: dict[str, np.ndarray], roles: tuple[int, ...]) -> bool:
    """Whether cached arrays fit together: every successor a position or an outcome, one entry per position."""
    states, succ = arrays.get("states"), arrays.get("succ")
    if states is None or succ is None or states.ndim != 2 or states.shape[1:] != (8,) or succ.shape[1:] != (NA, NA):
        return False
    count = states.shape[0]
    if succ.shape[0] != count or count == 0 or not np.issubdtype(succ.dtype, np.integer):
        return False
    outcome = (succ == ILLEGAL) | ((succ <= BURNED[0]) & (succ >= BURNED[-1]))
    if succ.max() >= count or not ((succ >= 0) | outcome).all():
        return False
    for me in roles:
        for name in ("safe", "attack", "value"):
            a = arrays.get(f"{name}{me}")
            if a is None or a.shape != (count,):
                return False
    return True


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    # a cache that cannot be written only costs the next process the solving time
    data = io.BytesIO()
    np.savez(data, **arrays)  # type: ignore[arg-type]
    write_whole(path, data.getvalue())


_SOLUTIONS: dict[tuple[str, int], _Solution] = {}
_LOCK = threading.Lock()


def solution(game: Bomberman, nobomb: int = -1) -> _Solution:
    """The solved graph of ``game``, computed once per process; role ``nobomb`` (0, 1, or -1: neither)
    never drops a bomb."""
    if not isinstance(game, Bomberman):
        raise ValueError(f"solution takes a Bomberman game, not {getattr(game, 'name', type(game).__name__)}")
    if isinstance(nobomb, bool) or nobomb not in (-1, 0, 1):
        raise ValueError(f"nobomb is -1 (every role bombs), 0 or 1, not {nobomb!r}")
    with _LOCK:
        key = (game.name, nobomb)
        if key not in _SOLUTIONS:
            _SOLUTIONS[key] = _Solution(game, nobomb)
        return _SOLUTIONS[key]


def _fire_of(mask: int, table: np.ndarray) -> int:
    """The fire bitboard that the bombs in ``mask`` set alight."""
    fire = 0
    m = mask & ((1 << 64) - 1)
    while m:
        low = m & -m
        fire |= int(table[low.bit_length() - 1]) & ((1 << 64) - 1)
        m ^= low
    return fire


def _schedule(s: np.ndarray, table: np.ndarray) -> list[int]:
    """Fire in state ``s`` and each of the next four states, from the bombs already down."""
    u = (1 << 64) - 1
    return [int(s[7]) & u] + [_fire_of(int(s[k]) & u, table) for k in (BOMB0, BOMB1, BOMB2, BOMB3)]


def survives(pos: int, fires: list[int]) -> bool:
    """Whether a player on ``pos`` in the first state can keep out of ``fires`` (one mask a state) throughout."""
    if (fires[0] >> pos) & 1:
        return False
    frontier = {pos}
    for fire in fires[1:]:
        frontier = {q for p in frontier for q in _steps(p) if not (fire >> q) & 1}
        if not frontier:
            return False
    return True


def _steps(p: int) -> list[int]:
    return [p] + [int(q) for q in NEXT[p, 1:5] if q >= 0]


class BombermanAgent(Agent):
    """Plays both Bomberman variants by solved safety and attack sets (module docstring)."""

    name = "bomberman"
    #: The games this player is made for.
    plays = Bomberman

    @check_options
    def __init__(self, seed: Annotated[int | None, Range(ge=0, le=MAX_SEED)] = None) -> None:
        super().__init__()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._solution: _Solution | None = None

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        if not isinstance(game, Bomberman):
            raise ValueError(f"the bomberman player plays bomberman and bomberman2p, not {game.name}")
        super().start(game, role, start_clock, play_clock)
        me = game.roles.index(role)
        # Alternating turns: the whole game solves. Simultaneous: solve it for a
        # player who never bombs (157,824 positions), and bomb only to spring a trap.
        self._solution = solution(game, -1 if game.alternating else me)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        game = self.game
        assert isinstance(game, Bomberman) and self._solution is not None
        legal = game.legal_moves(state, self.role)
        if len(legal) == 1:
            return legal[0]
        me = game.roles.index(self.role)
        s = game._array_of(state)
        if not game.alternating and self._springs_trap(s, me):
            return game.parse_move("dropBomb")
        sol = self._solution
        node = sol.index.get(sol.key(s))
        if node is None:  # off the solved graph (our own trap bomb is down, or a written position)
            return self._escape(s, me, legal)
        return self._by_table(sol, node, me)

    def _by_table(self, sol: _Solution, node: int, me: int) -> Move:
        rows = sol.succ[node] if me == 0 else sol.succ[node].T
        mine, theirs = (-2, -3) if me == 0 else (-3, -2)
        safe, attack, value = sol.for_role(me)
        best: list[int] = []
        best_score: tuple[float, ...] | None = None
        for a in range(NA):
            outcomes = [int(o) for o in rows[a] if o != ILLEGAL]
            if not outcomes:
                continue
            score: tuple[float, ...]
            if attack[node] >= 0 and all(o == theirs or (o >= 0 and 0 <= attack[o] < attack[node]) for o in outcomes):
                score = (3.0,)  # forcing: every reply burns them or keeps a faster attack
            elif all(o == theirs or (o >= 0 and safe[o]) for o in outcomes):
                # Safe; among safe moves, the best against an opponent who errs at random.
                chance = sum(1.0 if o == theirs else float(value[o]) for o in outcomes) / len(outcomes)
                score = (2.0, chance)
            else:
                survive = sum(1 for o in outcomes if o != mine and o != -4 and (o < 0 or safe[o]))
                score = (1.0, survive / len(outcomes))
            if best_score is None or score > best_score:
                best, best_score = [a], score
            elif score == best_score:
                best.append(a)
        action = best[int(self.rng.integers(len(best)))]
        return self.game.parse_move(ACTIONS[action])

    def _springs_trap(self, s: np.ndarray, me: int) -> bool:
        """Whether a bomb dropped now burns the opponent whatever it does, while we stay clear.

        Only the bombs already down and this one can burn anyone in the next five
        states (a bomb dropped later burns later), so both fates are fixed by the
        fire schedule: the opponent is trapped if no path of its keeps out of the
        fire, and we are clear if one path of ours does.
        """
        game = self.game
        assert isinstance(game, Bomberman)
        buf = np.empty(NA, dtype=np.int64)
        if DROP not in buf[: game.rules.legal(s, me, buf)]:
            return False
        n = game.rules.legal(s, 1 - me, buf)
        for b in buf[:n]:
            after = s.copy()
            game.rules.apply(after, DROP if me == 0 else b, b if me == 0 else DROP)
            fires = _schedule(after, game.fire_table)
            if survives(int(after[1 - me]), fires) or not survives(int(after[me]), fires):
                return False
        return True

    def _escape(self, s: np.ndarray, me: int, legal: tuple[Move, ...]) -> Move:
        """A move that keeps us out of the fire already scheduled, whatever the opponent does."""
        game = self.game
        assert isinstance(game, Bomberman)
        buf = np.empty(NA, dtype=np.int64)
        replies = buf[: game.rules.legal(s, 1 - me, buf)].copy()
        scored = []
        for move in legal:
            a = ACTIONS.index(move.text)
            if a == DROP:
                continue
            ok = 0
            for b in replies:
                after = s.copy()
                game.rules.apply(after, a if me == 0 else b, b if me == 0 else a)
                ok += survives(int(after[me]), _schedule(after, game.fire_table))
            scored.append((ok, float(self.rng.random()), move))
        return max(scored, key=lambda x: (x[0], x[1]))[2] if scored else legal[0]

    def __repr__(self) -> str:
        return f"BombermanAgent(seed={self.seed!r})"
