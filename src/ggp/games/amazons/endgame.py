"""Amazons endgames: once the board has split into regions that each hold one side's
amazons only, the game is a sum of one-player puzzles, and this module solves them.

Each turn fills exactly one square (the arrow's; the square an amazon leaves is
freed as it enters another), so a region with ``e`` empty squares gives its
owner at most ``e`` turns. Most regions give exactly ``e``; *defective* ones
give fewer, because some of their squares can only be filled by walling the
amazon in first. The sides cannot touch each other's regions, so the side to
move wins if and only if it has more turns left than the other side, and its
best play is to keep as many turns for itself as it can.

:func:`solve` labels the regions and finds the longest sequence of turns in
each by depth-first search. The bound ``turns <= empty squares`` ends the
search as soon as a region is found to fill completely; a table of region
positions already solved (kept across calls by :class:`EndgameSolver`) makes
the search of a defective region exhaustive. A node budget keeps it within a
move clock: when it runs out, the count is the longest sequence found (a lower
bound) and ``exact`` is False.

>>> import ggp
>>> game = ggp.load("amazons_8x8")
>>> state = game.state_from_dict({"to_act": "white", "phase": "move", "board":
...     "WxWxx..B/xxxxxxxB/Wxxxxxxx/xxxxxxxB/xxxxxxxx/xxxxxxxB/xxWxxxxx/x.x.xxxx"})
>>> result = solve(state)
>>> result.turns, result.exact, result.winner(to_act=0)
((1, 2), True, 1)

Only two amazons can still move. White's on c2 has two empty squares, b1 and
d1, but whichever it moves to, the other is out of its reach: one turn, not
two (a defective region). Black's on h8 and h7 share f8 and g8: two turns.
White, to move, has lost.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ...core.native import NativeState
from .rules import ARROW, EMPTY, check_array, padded_board, ray_targets

#: Nodes one region's search may visit by default (a few tenths of a second at most).
BUDGET = 100_000
TABLE_BITS = 18  # slots in a solver's table of solved regions (2^18 slots of 4 words: 8 MB)
_INEXACT = 1 << 8  # flag bit in the search's return value: the budget ran out below
_MIX = np.array([-7046029254386353131, -4658895280553007687, 0x2545F4914F6CDD1D], dtype=np.int64)
_MAX_DEPTH = 104  # more turns than a 10x10 board has empty squares


class Endgame(NamedTuple):
    """What :func:`solve` found.

    ``separated`` is False while some region holds amazons of both sides (then
    the rest is empty). ``turns`` is the most turns each side (white, black)
    can still make, ``exact`` whether both counts are proven, and ``move`` a
    best turn for the side to act as state cells ``(from, to, arrow)`` (None
    if it has no move).
    """

    separated: bool
    turns: tuple[int, int]
    exact: bool
    move: tuple[int, int, int] | None

    def winner(self, to_act: int) -> int | None:
        """The role index that wins with best play, if the counts prove it (else None)."""
        mine, theirs = self.turns[to_act], self.turns[1 - to_act]
        if not self.separated or not self.exact:
            return None
        return to_act if mine > theirs else 1 - to_act


#: Largest table :func:`new_table` makes: 2^24 slots, 512 MB.
MAX_TABLE_BITS = 24
#: Most nodes :func:`solve` may search per region.
MAX_BUDGET = 10**9


def new_table(bits: int = TABLE_BITS) -> np.ndarray:
    """An empty table of 2^``bits`` solved regions (rows: mask low word, mask high word, amazons + 1, turns).

    ``bits`` runs from 0 to :data:`MAX_TABLE_BITS`.
    """
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 0 <= bits <= MAX_TABLE_BITS:
        raise ValueError(f"new_table: bits must be an int from 0 to {MAX_TABLE_BITS}, got {bits!r}")
    return np.zeros((1 << int(bits), 4), dtype=np.int64)


@nb.njit(cache=True)
def _slot(table: np.ndarray, lo: int, hi: int, code: int) -> int:
    """Where region position ``(lo, hi, code)`` is, or may be written: open addressing,
    eight probes, and the last probed slot is overwritten when all are taken."""
    size = table.shape[0]
    h = (lo * _MIX[0] + hi * _MIX[1] + code * _MIX[2]) >> 24
    i = h & (size - 1)
    for _ in range(7):
        key = table[i, 2]
        if key == 0 or (key == code + 1 and table[i, 0] == lo and table[i, 1] == hi):
            return i
        i = (i + 1) & (size - 1)
    return i


@nb.njit(cache=True)
def _flip(lo: np.int64, hi: np.int64, c: int) -> tuple[np.int64, np.int64]:
    """The two-word square set ``(lo, hi)`` with cell ``c`` toggled."""
    if c < 64:
        return lo ^ (np.int64(1) << c), hi
    return lo, hi ^ (np.int64(1) << (c - 64))


@nb.njit(cache=True)
def _parts(
    board: np.ndarray,
    offsets: np.ndarray,
    queens: np.ndarray,
    m: int,
    cell: np.ndarray,
    work: np.ndarray,
    part_of: np.ndarray,
    part_lo: np.ndarray,
    part_hi: np.ndarray,
    part_empties: np.ndarray,
) -> int:
    """Split the squares the amazons ``queens[:m]`` can still reach into connected parts.

    Returns the number of parts; amazon ``i`` is in part ``part_of[i]``, whose
    empty squares are the set ``(part_lo, part_hi)``, ``part_empties`` of them.
    ``work`` is scratch: a mark counter, then per-square marks, part numbers and a stack.
    """
    size = board.shape[0]
    work[0] += 1
    mark = work[0]
    seen = work[1 : 1 + size]
    which = work[1 + size : 1 + 2 * size]
    stack = work[1 + 2 * size : 1 + 3 * size]
    parts = 0
    for i in range(m):
        q0 = queens[i]
        if seen[q0] == mark:
            part_of[i] = which[q0]
            continue
        part_of[i] = parts
        part_lo[parts] = 0
        part_hi[parts] = 0
        part_empties[parts] = 0
        seen[q0] = mark
        which[q0] = parts
        stack[0] = q0
        top = 1
        while top > 0:
            top -= 1
            p = stack[top]
            for d in range(8):
                q = p + offsets[d]
                if board[q] != ARROW and seen[q] != mark:
                    seen[q] = mark
                    which[q] = parts
                    stack[top] = q
                    top += 1
                    if board[q] == EMPTY:
                        part_lo[parts], part_hi[parts] = _flip(part_lo[parts], part_hi[parts], cell[q])
                        part_empties[parts] += 1
        parts += 1
    return parts


@nb.njit(cache=True)
def _code(queens: np.ndarray, m: int, cell: np.ndarray) -> int:
    """The amazons' cells in increasing order as one number (amazons are alike)."""
    code = 0
    prev = -1
    for _ in range(m):
        smallest = 1 << 30
        for j in range(m):
            c = cell[queens[j]]
            if prev < c < smallest:
                smallest = c
        prev = smallest
        code = code * 128 + smallest
    return code


@nb.njit(cache=True)
def _step_queen(
    board: np.ndarray,
    offsets: np.ndarray,
    q: np.ndarray,
    i: int,
    src: int,
    dst: int,
    arrows: np.ndarray,
    crowd: np.ndarray,
) -> int:
    # Amazon ``i`` of ``q`` steps from src to dst; its arrow squares go to ``arrows`` (returns how many),
    # each with how many of its neighbours are empty in ``crowd``.
    board[dst] = board[src]
    board[src] = EMPTY
    q[i] = dst
    ka = ray_targets(board, offsets, dst, arrows)
    for t in range(ka):
        k = 0
        for d in range(8):
            k += board[arrows[t] + offsets[d]] == EMPTY
        crowd[t] = k
    return ka


@nb.njit(cache=True)
def _step_back(board: np.ndarray, q: np.ndarray, i: int, src: int, dst: int) -> None:
    # Undo _step_queen.
    board[src] = board[dst]
    board[dst] = EMPTY
    q[i] = src


@nb.njit(cache=True)
def _next_arrow(t: int, level: int, ka: int, crowd: np.ndarray, best: int, empties: int) -> tuple[int, int]:
    # The next arrow to try from (t, level): arrows into the most enclosed squares first (crowd == level,
    # level rising), since filling dead ends before open ground is how a region gets filled completely.
    # Level 9 means none is left (or the bound is met).
    while level < 9 and best < empties:
        if t >= ka:
            level += 1
            t = 0
        elif crowd[t] != level:
            t += 1
        else:
            break
    return t, level


@nb.njit(cache=True)
def _part_queens(q: np.ndarray, m: int, part_of: np.ndarray, k: int, out: np.ndarray) -> int:
    # The amazons of ``q[:m]`` in part ``k`` into ``out``; returns how many.
    ms = 0
    for i in range(m):
        if part_of[i] == k:
            out[ms] = q[i]
            ms += 1
    return ms


# The phases of a frame of the search below.
_ENTER, _AMAZON, _DEST, _ARROW, _CHILD, _SUM, _SUMMED = 0, 1, 2, 3, 4, 5, 6

# A frame of :func:`_turns` is one row of a table of ints, with these columns: its phase, its amazons'
# count, its region (lo, hi bits) and empty squares, its table slot and code, the turns found (a search)
# or summed (parts) and the flag saying some count below is a lower bound, the amazon (or part), the
# destination and arrow being tried with their counts and level, the move's squares and the parts' count.
_PH, _M, _LO, _HI, _E, _SLOT, _CODE, _BEST, _FLAG, _I, _J, _KD, _KA, _LEVEL, _T, _SRC, _DST, _PARTS = range(18)
_COLUMNS = 18
# The parts a frame's region split into: for each, which amazons (of), and its region (lo, hi, empties).
_OF, _PLO, _PHI, _PE = 0, 1, 2, 3


@nb.njit(cache=True)
def _enter(
    board: np.ndarray,
    offsets: np.ndarray,
    cell: np.ndarray,
    table: np.ndarray,
    work: np.ndarray,
    fr: np.ndarray,
    fq: np.ndarray,
    fp: np.ndarray,
    f: int,
    nodes: int,
) -> tuple[int, int, int]:
    """A frame entered: its parts to sum, a known or exhausted answer (popped), or its amazons to try."""
    q = fq[f]
    if fr[f, _E] == 0:
        return f - 1, 0, nodes
    # After a split the parts are searched apart (a sum, not a product, of searches); squares no amazon
    # reaches drop out of the bound.
    parts = _parts(board, offsets, q, fr[f, _M], cell, work, fp[f, _OF], fp[f, _PLO], fp[f, _PHI], fp[f, _PE])
    if parts > 1:
        fr[f, _PARTS] = parts
        fr[f, _I] = 0
        fr[f, _BEST] = 0
        fr[f, _FLAG] = 0
        fr[f, _PH] = _SUM
        return f, 0, nodes
    fr[f, _LO] = fp[f, _PLO, 0]
    fr[f, _HI] = fp[f, _PHI, 0]
    fr[f, _E] = fp[f, _PE, 0]
    if fr[f, _E] == 0:
        return f - 1, 0, nodes
    code = _code(q, fr[f, _M], cell)
    slot = _slot(table, fr[f, _LO], fr[f, _HI], code)
    fr[f, _CODE] = code
    fr[f, _SLOT] = slot
    known = table[slot, 2] == code + 1 and table[slot, 0] == fr[f, _LO] and table[slot, 1] == fr[f, _HI]
    if known and (f > 0 or table[slot, 3] == 0):  # the root still needs its move
        return f - 1, table[slot, 3], nodes
    if nodes <= 0:
        return f - 1, _INEXACT, nodes
    fr[f, _BEST] = 0
    fr[f, _FLAG] = 0
    fr[f, _I] = 0
    fr[f, _PH] = _AMAZON
    return f, 0, nodes - 1


@nb.njit(cache=True)
def _amazon(
    board: np.ndarray, offsets: np.ndarray, table: np.ndarray, fr: np.ndarray, fq: np.ndarray, dests: np.ndarray, f: int
) -> tuple[int, int]:
    """The next amazon's destinations, or the frame's answer (stored when exact) once all are tried."""
    if fr[f, _I] >= fr[f, _M] or fr[f, _BEST] == fr[f, _E]:
        if fr[f, _BEST] == fr[f, _E]:
            fr[f, _FLAG] = 0  # the bound is met: nothing unsearched could do better
        if fr[f, _FLAG] == 0:
            slot = fr[f, _SLOT]
            table[slot, 0] = fr[f, _LO]
            table[slot, 1] = fr[f, _HI]
            table[slot, 2] = fr[f, _CODE] + 1
            table[slot, 3] = fr[f, _BEST]
        return f - 1, fr[f, _BEST] | fr[f, _FLAG]
    fr[f, _SRC] = fq[f, fr[f, _I]]
    fr[f, _KD] = ray_targets(board, offsets, fr[f, _SRC], dests[f])
    fr[f, _J] = 0
    fr[f, _PH] = _DEST
    return f, 0


@nb.njit(cache=True)
def _arrow(
    board: np.ndarray, cell: np.ndarray, fr: np.ndarray, fq: np.ndarray, arrows: np.ndarray, crowd: np.ndarray, f: int
) -> int:
    """The next arrow of the move being tried, entering the child frame; or the next destination."""
    t, level = _next_arrow(fr[f, _T], fr[f, _LEVEL], fr[f, _KA], crowd[f], fr[f, _BEST], fr[f, _E])
    if level >= 9 or fr[f, _BEST] == fr[f, _E]:
        _step_back(board, fq[f], fr[f, _I], fr[f, _SRC], fr[f, _DST])
        fr[f, _J] += 1
        fr[f, _PH] = _DEST
        return f
    fr[f, _T] = t
    fr[f, _LEVEL] = level
    a = arrows[f, t]
    board[a] = ARROW
    # dst and a are filled, src freed.
    nlo, nhi = _flip(fr[f, _LO], fr[f, _HI], cell[fr[f, _DST]])
    nlo, nhi = _flip(nlo, nhi, cell[fr[f, _SRC]])
    nlo, nhi = _flip(nlo, nhi, cell[a])
    fr[f, _PH] = _CHILD
    g = f + 1
    fq[g, :] = fq[f]
    fr[g, _M] = fr[f, _M]
    fr[g, _LO] = nlo
    fr[g, _HI] = nhi
    fr[g, _E] = fr[f, _E] - 1
    fr[g, _PH] = _ENTER
    return g


@nb.njit(cache=True)
def _child(board: np.ndarray, fr: np.ndarray, arrows: np.ndarray, f: int, ret: int, best_move: np.ndarray) -> None:
    """A child frame's answer ``ret`` taken in: the arrow taken back, the best count (and root move) kept."""
    a = arrows[f, fr[f, _T]]
    board[a] = EMPTY
    fr[f, _FLAG] |= ret & _INEXACT
    v = 1 + (ret & (_INEXACT - 1))
    if v > fr[f, _BEST]:
        fr[f, _BEST] = v
        if f == 0:
            best_move[0] = fr[f, _SRC]
            best_move[1] = fr[f, _DST]
            best_move[2] = a
    fr[f, _T] += 1
    fr[f, _PH] = _ARROW


@nb.njit(cache=True)
def _turns(
    board: np.ndarray,
    offsets: np.ndarray,
    queens: np.ndarray,
    m: int,
    cell: np.ndarray,
    lo: np.int64,
    hi: np.int64,
    empties: int,
    table: np.ndarray,
    budget: int,
    best_move: np.ndarray,
) -> int:
    """Most turns the amazons ``queens[:m]`` can make in their region, ORed with
    ``_INEXACT`` if the node budget ran out (then it is the longest sequence
    found). ``(lo, hi)`` has bit ``cell[p]`` set for each empty square ``p`` of
    the region. The first turn of the longest sequence goes to ``best_move``.

    A depth-first search over turns, written with an explicit stack of frames
    (numba cannot cache a recursive function). A frame either searches the
    turns of one position or, when the amazons' squares have split into parts,
    adds up the parts' own searches.
    """
    size = board.shape[0]
    frames = 2 * _MAX_DEPTH + 8
    width = 4 * int(np.sqrt(size) - 3)  # most squares a queen reaches: 4 (n - 1)
    fr = np.zeros((frames, _COLUMNS), dtype=np.int64)
    fq = np.empty((frames, 4), dtype=np.int64)  # each frame's amazons
    fp = np.empty((frames, 4, 4), dtype=np.int64)  # each frame's parts
    dests = np.empty((frames, width), dtype=np.int64)
    arrows = np.empty((frames, width), dtype=np.int64)
    crowd = np.empty((frames, width), dtype=np.int64)
    work = np.zeros(1 + 3 * size, dtype=np.int64)
    nodes = budget
    ret = 0

    f = 0
    fr[0, _PH] = _ENTER
    fq[0, :m] = queens[:m]
    fr[0, _M] = m
    fr[0, _LO] = lo
    fr[0, _HI] = hi
    fr[0, _E] = empties
    while f >= 0:
        ph = fr[f, _PH]
        if ph == _ENTER:
            f, ret, nodes = _enter(board, offsets, cell, table, work, fr, fq, fp, f, nodes)
        elif ph == _AMAZON:
            f, ret = _amazon(board, offsets, table, fr, fq, dests, f)
        elif ph == _DEST:
            if fr[f, _J] >= fr[f, _KD] or fr[f, _BEST] == fr[f, _E]:
                fr[f, _I] += 1
                fr[f, _PH] = _AMAZON
                continue
            fr[f, _DST] = dests[f, fr[f, _J]]
            fr[f, _KA] = _step_queen(board, offsets, fq[f], fr[f, _I], fr[f, _SRC], fr[f, _DST], arrows[f], crowd[f])
            fr[f, _LEVEL] = 0
            fr[f, _T] = 0
            fr[f, _PH] = _ARROW
        elif ph == _ARROW:
            f = _arrow(board, cell, fr, fq, arrows, crowd, f)
        elif ph == _CHILD:
            _child(board, fr, arrows, f, ret, best_move)
        elif ph == _SUM:
            k = fr[f, _I]
            if k >= fr[f, _PARTS]:
                ret = fr[f, _BEST] | fr[f, _FLAG]
                f -= 1
                continue
            g = f + 1
            fr[g, _M] = _part_queens(fq[f], fr[f, _M], fp[f, _OF], k, fq[g])
            fr[g, _LO] = fp[f, _PLO, k]
            fr[g, _HI] = fp[f, _PHI, k]
            fr[g, _E] = fp[f, _PE, k]
            fr[g, _PH] = _ENTER
            fr[f, _PH] = _SUMMED
            f = g
        else:  # _SUMMED
            fr[f, _BEST] += ret & (_INEXACT - 1)
            fr[f, _FLAG] |= ret & _INEXACT
            fr[f, _I] += 1
            fr[f, _PH] = _SUM
    return ret


@nb.njit(cache=True)
def _solve(s: np.ndarray, budget: int, table: np.ndarray, out: np.ndarray) -> None:
    """``out``: separated, white turns, black turns, exact, from, to, arrow (padded squares, -1: none)."""
    nn = s.shape[0] - 3
    n = 10 if nn == 100 else 8
    w = n + 2
    board = np.empty(w * w, dtype=np.uint8)
    all_queens = np.empty((2, 4), dtype=np.int64)
    offsets = padded_board(s, board, all_queens)
    out[:] = 0
    out[4:7] = -1
    cell = np.zeros(w * w, dtype=np.int64)  # padded square -> state cell (the bit in a region's mask)
    for c in range(nn):
        cell[(c // n + 1) * w + c % n + 1] = c
    # Regions: 8-connected groups of squares that are empty or hold an amazon;
    # only those with amazons matter, and each must hold one side's only.
    amazons = all_queens.reshape(8)  # white's four, then black's
    part_of = np.empty(8, dtype=np.int64)
    part_lo = np.empty(8, dtype=np.int64)
    part_hi = np.empty(8, dtype=np.int64)
    part_e = np.empty(8, dtype=np.int64)
    work = np.zeros(1 + 3 * w * w, dtype=np.int64)
    regions = _parts(board, offsets, amazons, 8, cell, work, part_of, part_lo, part_hi, part_e)
    owner = np.full(regions, -1, dtype=np.int64)
    for i in range(8):
        r = part_of[i]
        if owner[r] == -1:
            owner[r] = i // 4
        elif owner[r] != i // 4:
            return
    out[0] = 1
    out[3] = 1
    to_act = s[nn]
    best_turns = -1
    move = np.full(3, -1, dtype=np.int64)
    queens = np.empty(4, dtype=np.int64)
    for r in range(regions):
        m = 0
        for i in range(8):
            if part_of[i] == r:
                queens[m] = amazons[i]
                m += 1
        move[:] = -1
        v = _turns(board, offsets, queens, m, cell, part_lo[r], part_hi[r], part_e[r], table, budget, move)
        if v & _INEXACT:
            out[3] = 0
        v &= _INEXACT - 1
        out[1 + owner[r]] += v
        if owner[r] == to_act and v > best_turns and move[0] >= 0:
            best_turns = v
            out[4:7] = move


_DEFAULT_TABLE: list[np.ndarray] = []


def solve(position: NativeState | np.ndarray, budget: int = BUDGET, table: np.ndarray | None = None) -> Endgame:
    """Solve an Amazons move-phase position (a state, or its array) if its regions are separated.

    ``budget`` (0 to :data:`MAX_BUDGET`) caps the nodes searched per region;
    ``table`` (from :func:`new_table`) keeps solved regions for later calls (by
    default one module-wide table). Anything else raises ValueError.
    """
    array = position.array if isinstance(position, NativeState) else position
    sizes = {8 * 8 + 3: 8, 10 * 10 + 3: 10}
    if not isinstance(array, np.ndarray) or array.ndim != 1 or array.shape[0] not in sizes:
        raise ValueError("solve takes an Amazons position (a state of amazons_8x8 or amazons_10x10, or its array)")
    check_array(array, sizes[array.shape[0]])
    nn = array.shape[0] - 3
    if array[nn + 1] != 0:
        raise ValueError("solve takes an Amazons position in its move phase")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or not 0 <= budget <= MAX_BUDGET:
        raise ValueError(f"solve: budget must be an int from 0 to {MAX_BUDGET}, got {budget!r}")
    if table is None:
        if not _DEFAULT_TABLE:
            _DEFAULT_TABLE.append(new_table())
        table = _DEFAULT_TABLE[0]
    rows = table.shape[0] if isinstance(table, np.ndarray) and table.ndim == 2 else 0
    if (
        not isinstance(table, np.ndarray)
        or table.dtype != np.int64
        or table.shape != (rows, 4)
        or rows == 0
        or rows & (rows - 1)
        or not table.flags.c_contiguous
        or not table.flags.writeable
    ):
        raise ValueError("solve: table must be a table of solved regions made by new_table()")
    out = np.zeros(7, dtype=np.int64)
    _solve(np.ascontiguousarray(array), int(budget), table, out)
    if not out[0]:
        return Endgame(False, (0, 0), False, None)
    w = (10 if nn == 100 else 8) + 2

    def cell(p: int) -> int:  # padded square -> state cell
        return (p // w - 1) * (w - 2) + p % w - 1

    move = None if out[4] < 0 else (cell(int(out[4])), cell(int(out[5])), cell(int(out[6])))
    return Endgame(True, (int(out[1]), int(out[2])), bool(out[3]), move)
