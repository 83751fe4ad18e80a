"""Amazons on 10x10 and 8x8, as in ``amazons_10x10.kif`` and ``amazons_8x8.kif``.

Each player's turn is two GGP steps: a move phase, in which one of the
player's amazons moves like a chess queen through empty cells, then a fire
phase, in which that amazon shoots an arrow the same way; the arrow's cell is
blocked for good. The idle role plays ``noop``. The role that must move and
cannot loses: 0 for it, 100 for the other.

State array (``uint8``, N*N + 3 entries): cell ``(y-1)*N + (x-1)`` holds 0
(empty), 1 (white), 2 (black) or 3 (arrow); then the role to act (0 white,
1 black), the phase (0 move, 1 fire) and the cell of the amazon that just
moved (255 in the move phase).

Actions: 0 is ``noop``; ``1 + from*N*N + to`` is ``(move ...)``;
``1 + N*N*N + cell`` is ``(fire ...)``.
"""

from __future__ import annotations

import re
from typing import Any

import numba as nb
import numpy as np

from ...core.errors import MoveSyntaxError, StateFormatError
from ...core.game import Move, State
from ...core.kernels import make_kernel, rng_below, with_sizes
from ...core.native import NativeGame

EMPTY, WHITE, BLACK, ARROW = 0, 1, 2, 3
NONE = 255
# The eight queen directions, (dx, dy).
DX = np.array([0, 1, 1, 1, 0, -1, -1, -1], dtype=np.int64)
DY = np.array([1, 1, 0, -1, -1, -1, 0, 1], dtype=np.int64)


@nb.njit(cache=True)
def _side(s: np.ndarray) -> int:
    nn = s.shape[0] - 3
    return 10 if nn == 100 else 8


@nb.njit(cache=True)
def _rays(s: np.ndarray, n: int, cell: int, out: np.ndarray, k: int, base: int) -> int:
    """Append ``base + target`` for every empty cell a queen on ``cell`` reaches."""
    x0 = cell % n
    y0 = cell // n
    for d in range(8):
        x = x0 + DX[d]
        y = y0 + DY[d]
        while 0 <= x < n and 0 <= y < n and s[y * n + x] == EMPTY:
            out[k] = base + y * n + x
            k += 1
            x += DX[d]
            y += DY[d]
    return k


@nb.njit(cache=True)
def legal(s: np.ndarray, role: int, out: np.ndarray) -> int:
    n = _side(s)
    nn = n * n
    if s[nn] != role:
        out[0] = 0
        return 1
    k = 0
    if s[nn + 1] == 0:
        piece = role + 1
        for c in range(nn):
            if s[c] == piece:
                k = _rays(s, n, c, out, k, 1 + c * nn)
    else:
        k = _rays(s, n, s[nn + 2], out, k, 1 + nn * nn)
    return k


@nb.njit(cache=True)
def _can_step(s: np.ndarray, n: int, cell: int) -> bool:
    x0 = cell % n
    y0 = cell // n
    for d in range(8):
        x = x0 + DX[d]
        y = y0 + DY[d]
        if 0 <= x < n and 0 <= y < n and s[y * n + x] == EMPTY:
            return True
    return False


@nb.njit(cache=True)
def terminal(s: np.ndarray) -> bool:
    n = _side(s)
    nn = n * n
    if s[nn + 1] == 1:
        return not _can_step(s, n, s[nn + 2])
    piece = s[nn] + 1
    for c in range(nn):  # noqa: SIM110 - numba compiles loops, not generators
        if s[c] == piece and _can_step(s, n, c):
            return False
    return True


@nb.njit(cache=True)
def goals(s: np.ndarray) -> np.ndarray:
    nn = s.shape[0] - 3
    g = np.full(2, 100, dtype=np.int64)
    g[s[nn]] = 0
    return g


@nb.njit(cache=True)
def apply(s: np.ndarray, a0: int, a1: int) -> None:
    n = _side(s)
    nn = n * n
    turn = s[nn]
    a = (a0 if turn == 0 else a1) - 1
    if s[nn + 1] == 0:
        src = a // nn
        dst = a % nn
        s[dst] = s[src]
        s[src] = EMPTY
        s[nn + 1] = 1
        s[nn + 2] = dst
    else:
        s[a - nn * nn] = ARROW
        s[nn + 1] = 0
        s[nn + 2] = NONE
        s[nn] = 1 - turn


@nb.njit(cache=True)
def ray_targets(board: np.ndarray, offsets: np.ndarray, src: int, out: np.ndarray) -> int:
    k = 0
    for d in range(8):
        o = offsets[d]
        p = src + o
        while board[p] == EMPTY:
            out[k] = p
            k += 1
            p += o
    return k


@nb.njit(cache=True)
def padded_board(s: np.ndarray, board: np.ndarray, queens: np.ndarray) -> np.ndarray:
    """Copy state ``s``'s board into ``board`` ((n+2)^2 cells, a border of arrows, so
    rays need no bounds checks) and each side's amazons into ``queens``; returns
    the eight direction offsets on that board."""
    n = _side(s)
    w = n + 2
    board[:] = ARROW
    count = np.zeros(2, dtype=np.int64)
    for c in range(n * n):
        p = (c // n + 1) * w + c % n + 1
        board[p] = s[c]
        if s[c] == WHITE or s[c] == BLACK:
            queens[s[c] - 1, count[s[c] - 1]] = p
            count[s[c] - 1] += 1
    return np.array([w, w + 1, 1, 1 - w, -w, -w - 1, -1, w - 1], dtype=np.int64)


@nb.njit(cache=True)
def random_turns(s: np.ndarray, rng: np.ndarray, turns: int) -> bool:
    """Play up to ``turns`` whole turns in place as OpenSpiel's random player would: a
    random amazon that can move, a random destination, a random arrow (a pending
    fire is finished first). Returns False if the side to move is left without a move.
    """
    n = _side(s)
    nn = n * n
    w = n + 2
    board = np.empty(w * w, dtype=np.uint8)
    queens = np.empty((2, 4), dtype=np.int64)
    offsets = padded_board(s, board, queens)
    buf = np.empty(4 * (n - 1), dtype=np.int64)
    turn = s[nn]
    alive = True
    if s[nn + 1] == 1:
        moved = s[nn + 2]
        k = ray_targets(board, offsets, (moved // n + 1) * w + moved % n + 1, buf)
        if k == 0:  # the amazon that moved cannot fire: the game is over as it stands (buf holds nothing)
            return False
        board[buf[rng_below(rng, k)]] = ARROW
        turn = 1 - turn
    for _ in range(turns):
        # A uniformly random amazon among those that can move: draw among all
        # four and redraw on one that cannot (its targets are needed anyway).
        stuck = 0
        k = 0
        i = 0
        while stuck != 15:
            i = int(rng_below(rng, 4))
            if (stuck >> i) & 1:
                continue
            k = ray_targets(board, offsets, queens[turn, i], buf)
            if k > 0:
                break
            stuck |= 1 << i
        if k == 0:
            alive = False
            break
        src = queens[turn, i]
        dst = buf[rng_below(rng, k)]
        board[dst] = board[src]
        board[src] = EMPTY
        queens[turn, i] = dst
        board[buf[rng_below(rng, ray_targets(board, offsets, dst, buf))]] = ARROW
        turn = 1 - turn
    for c in range(nn):
        s[c] = board[(c // n + 1) * w + c % n + 1]
    s[nn] = turn
    s[nn + 1] = 0
    s[nn + 2] = NONE
    return alive


@nb.njit(cache=True)
def rollout(s: np.ndarray, rng: np.ndarray) -> None:
    """Play ``s`` to the end by :func:`random_turns` (no game lasts 2^30 turns)."""
    random_turns(s, rng, 1 << 30)


def check_array(s: np.ndarray, n: int) -> None:
    """Raise StateFormatError unless ``s`` is a state array of Amazons on an ``n`` x ``n`` board.

    Beyond the shape: cell, role and phase values in range, four amazons a
    side (the compiled code keeps them in arrays of four) and, in a fire
    phase, the mover's amazon on the cell that just moved.
    """
    name = f"amazons_{n}x{n}"
    nn = n * n
    if not isinstance(s, np.ndarray) or s.dtype != np.uint8 or s.shape != (nn + 3,):
        what = f"{s.dtype} array of shape {s.shape}" if isinstance(s, np.ndarray) else type(s).__name__
        raise StateFormatError(f"{name}: a state array is {nn + 3} uint8 entries, not a {what}")
    if s[:nn].max() > ARROW or s[nn] > 1 or s[nn + 1] > 1:
        raise StateFormatError(f"{name}: cell, role or phase value out of range")
    for piece in (WHITE, BLACK):
        if int(np.count_nonzero(s[:nn] == piece)) != 4:
            raise StateFormatError(f"{name}: each side has exactly four amazons")
    moved = int(s[nn + 2])
    if s[nn + 1] == 0 and moved != NONE:
        raise StateFormatError(f"{name}: no amazon has just moved in a move phase")
    if s[nn + 1] == 1 and (moved >= nn or s[moved] != s[nn] + 1):
        raise StateFormatError(f"{name}: in a fire phase the amazon that just moved must be the mover's")


#: The rules in a few lines, for people (from RULES.md's facts).
_RULES_10 = (
    "Two players, white and black, with four amazons each on a 10x10 board; white starts.",
    "A turn has two steps: move one of your amazons like a chess queen (any distance in a straight or diagonal line, never through or onto an amazon or an arrow) ...",
    "... then that amazon shoots an arrow the same way. The arrow's square is blocked for the rest of the game (shooting back over or onto the square just left is allowed).",
    "Whoever has to move and cannot loses: 0 points for them, 100 for the other. There are no draws.",
)
_RULES_8 = (
    "Amazons on a smaller 8x8 board, four amazons a side; white starts.",
    "Each turn: move an amazon like a queen through empty squares, then fire an arrow from where it landed; arrows block their square for good.",
    "The player who cannot move an amazon on their turn loses (0 to 100).",
)

# One set of compiled loops serves both boards: the size is read off the array.
# A queen has at most 4(n-1) targets.
KERNEL_10 = make_kernel(
    globals(),
    "amazons",
    legal=legal,
    apply=apply,
    terminal=terminal,
    goals=goals,
    rollout=rollout,
    num_actions=10101,
    max_actions=144,
    check=lambda s: check_array(s, 10),
)
KERNEL_8 = with_sizes(KERNEL_10, num_actions=4161, max_actions=112, check=lambda s: check_array(s, 8))

START = {
    10: {WHITE: [(1, 4), (4, 1), (7, 1), (10, 4)], BLACK: [(1, 7), (4, 10), (7, 10), (10, 7)]},
    8: {WHITE: [(1, 3), (3, 1), (6, 1), (8, 3)], BLACK: [(1, 6), (3, 8), (6, 8), (8, 6)]},
}
_PIECE_CHAR = {EMPTY: ".", WHITE: "W", BLACK: "B", ARROW: "x"}
_CHAR_PIECE = {v: k for k, v in _PIECE_CHAR.items()}
_SHORT = re.compile(r"^\s*(?:([a-j])(\d+)\s*-\s*([a-j])(\d+))?\s*(?:[/x]?\s*([a-j])(\d+))?\s*$", re.IGNORECASE)


class Amazons(NativeGame):
    """Amazons on an N x N board (N = 10 or 8), move and fire as separate steps."""

    roles = ("white", "black")
    shorthand_help = (
        "d1-d5/d8 moves the amazon on d1 to d5 and fires at d8 (letters a.. are x = 1.., numbers are y); "
        "d1-d5 and d8 alone are the two halves"
    )

    board_kind = "amazons"
    constant_sum = True

    def __init__(self, n: int) -> None:
        self.n = n
        self.max_steps = 2 * n * n  # a turn is two steps, and each fills a square
        self.init_args = (n,)
        self.board_size = 560 if n == 10 else 520
        self.rules_summary = _RULES_10 if n == 10 else _RULES_8
        self.name = f"amazons_{n}x{n}"
        self.description = f"Amazons on {n}x{n}: move a queen, then fire an arrow; the player left without a move loses"
        self.dtype = np.dtype(np.uint8)
        nn = n * n
        self.kernel = KERNEL_10 if n == 10 else KERNEL_8
        coords = [str(i) for i in range(1, n + 1)]
        self.move_forms = ("noop", ("move", coords, coords, coords, coords), ("fire", coords, coords))
        self.move_help = f"moves look like (move X1 Y1 X2 Y2), (fire X Y) or noop, with X and Y in 1..{n}"
        # Every action's text, built once: legal_moves only looks them up.
        texts = ["noop"]
        for src in range(nn):
            for dst in range(nn):
                texts.append(f"(move {src % n + 1} {src // n + 1} {dst % n + 1} {dst // n + 1})")
        texts += [f"(fire {c % n + 1} {c // n + 1})" for c in range(nn)]
        self._texts = texts
        self._actions = {t: i for i, t in enumerate(texts)}
        super().__init__()

    # --- kernel glue ----------------------------------------------------------
    def initial_array(self) -> np.ndarray:
        n = self.n
        s = np.zeros(n * n + 3, dtype=self.dtype)
        for piece, cells in START[n].items():
            for x, y in cells:
                s[(y - 1) * n + x - 1] = piece
        s[n * n + 2] = NONE
        return s

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        return self._texts[action]

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        return self._actions.get(text, -1)

    def validate_array(self, s: np.ndarray) -> None:
        check_array(s, self.n)

    # --- views --------------------------------------------------------------------
    def _view(self, state: State) -> tuple[np.ndarray, int, int, int | None]:
        s = self._array_of(state)
        nn = self.n * self.n
        moved = int(s[nn + 2])
        return s[:nn], int(s[nn]), int(s[nn + 1]), (None if moved == NONE else moved)

    def render(self, state: State) -> str:
        n = self.n
        cells, turn, phase, moved = self._view(state)
        files = "".join(f"{chr(ord('a') + i):>3}" for i in range(n))
        lines = [f"     {files}"]
        for y in range(n, 0, -1):
            row = []
            for x in range(1, n + 1):
                c = (y - 1) * n + x - 1
                mark = _PIECE_CHAR[int(cells[c])]
                row.append(f"[{mark}]" if c == moved else f" {mark} ")
            lines.append(f"{y:>4} {''.join(row)} {y}")
        lines.append(f"     {''.join(f'{x:>3}' for x in range(1, n + 1))}   (x)")
        who = self.roles[turn]
        if self.is_terminal(state):
            lines.append(f"game over: {who} cannot move; {self.roles[1 - turn]} wins")
        else:
            lines.append(f"{who} to {'move an amazon' if phase == 0 else 'fire an arrow from [ ]'}")
        return "\n".join(lines)

    def svg(self, state: State, size: int = 360) -> str:
        n = self.n
        cells, _, _, moved = self._view(state)
        m = 24  # margin for coordinates
        sq = (size - 2 * m) / n
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" width="{size}" height="{size}">',
            f'<rect width="{size}" height="{size}" fill="#f4efe4"/>',
        ]
        for y in range(1, n + 1):
            for x in range(1, n + 1):
                px, py = m + (x - 1) * sq, m + (n - y) * sq
                fill = "#d8c3a0" if (x + y) % 2 else "#efe2c8"
                c = (y - 1) * n + x - 1
                out.append(
                    f'<rect x="{px:.1f}" y="{py:.1f}" width="{sq:.1f}" height="{sq:.1f}" fill="{fill}" '
                    f'data-cell="{x} {y}"/>'
                )
                v = int(cells[c])
                cx, cy, r = px + sq / 2, py + sq / 2, sq * 0.36
                if v == ARROW:
                    out.append(
                        f'<rect x="{px + sq * 0.18:.1f}" y="{py + sq * 0.18:.1f}" width="{sq * 0.64:.1f}" '
                        f'height="{sq * 0.64:.1f}" rx="3" fill="#6b3e26"/>'
                    )
                elif v in (WHITE, BLACK):
                    fill, stroke = ("#ffffff", "#222222") if v == WHITE else ("#222222", "#dddddd")
                    ring = ' stroke-dasharray="4 2"' if c == moved else ""
                    out.append(
                        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="{fill}" stroke="{stroke}" '
                        f'stroke-width="2"{ring}/>'
                    )
        for i in range(1, n + 1):
            fx = m + (i - 0.5) * sq
            # files are letters, ranks numbers: the board's axes read as its moves do (c1-c5)
            out.append(f'<text x="{fx:.1f}" y="{size - 7}" font-size="12" text-anchor="middle">{chr(96 + i)}</text>')
            fy = m + (n - i + 0.5) * sq + 4
            out.append(f'<text x="{m / 2:.1f}" y="{fy:.1f}" font-size="12" text-anchor="middle">{i}</text>')
        out.append("</svg>")
        return "".join(out)

    def state_to_dict(self, state: State) -> dict[str, Any]:
        """``{"game", "board", "to_act", "phase", "just_moved"}``.

        ``board`` lists the rows from y = N down to y = 1, joined by ``/``, one
        character a cell: ``.`` empty, ``W`` white, ``B`` black, ``x`` arrow.
        ``just_moved`` is ``[x, y]`` in the fire phase, else null.
        """
        cells, turn, phase, moved = self._view(state)
        n = self.n
        rows = ["".join(_PIECE_CHAR[int(cells[(y - 1) * n + x])] for x in range(n)) for y in range(n, 0, -1)]
        return {
            "game": self.name,
            "board": "/".join(rows),
            "to_act": self.roles[turn],
            "phase": "move" if phase == 0 else "fire",
            "just_moved": None if moved is None else [moved % n + 1, moved // n + 1],
        }

    def array_from_dict(self, data: dict[str, Any]) -> np.ndarray:
        n = self.n
        rows = str(data["board"]).split("/")
        if len(rows) != n or any(len(r) != n for r in rows):
            raise StateFormatError(f"{self.name}: board must be {n} rows of {n} cells joined by '/'")
        s = np.zeros(n * n + 3, dtype=self.dtype)
        for i, row in enumerate(rows):
            y = n - i
            for x, ch in enumerate(row):
                if ch not in _CHAR_PIECE:
                    raise StateFormatError(f"{self.name}: unknown cell mark {ch!r} (use . W B x)")
                s[(y - 1) * n + x] = _CHAR_PIECE[ch]
        s[n * n] = self.roles.index(data["to_act"])
        s[n * n + 1] = ("move", "fire").index(data["phase"])
        jm = data.get("just_moved")
        if jm is None:
            s[n * n + 2] = NONE
        else:
            x, y = int(jm[0]), int(jm[1])
            if not (1 <= x <= n and 1 <= y <= n):
                raise StateFormatError(f"{self.name}: just_moved ({x}, {y}) is off the board")
            s[n * n + 2] = (y - 1) * n + x - 1
        return s

    def state_facts(self, state: State) -> list[str]:
        cells, turn, phase, moved = self._view(state)
        n = self.n
        names = {WHITE: "white", BLACK: "black", ARROW: "arrow"}
        facts = [f"(cell {c % n + 1} {c // n + 1} {names[int(v)]})" for c, v in enumerate(cells) if int(v) != EMPTY]
        facts.append(f"(turn {self.roles[turn]} {'move' if phase == 0 else 'fire'})")
        if moved is not None:
            facts.append(f"(justMoved {moved % n + 1} {moved // n + 1})")
        return sorted(facts)

    def shorthand(self, state: State, role: str, text: str) -> list[Move]:
        """Moves written the short way: ``d1-d5`` (move), ``d8`` (fire), ``d1-d5/d8`` (both).

        Columns are letters from ``a`` (x = 1); rows are numbers (y). Returns the
        moves for successive steps; raises MoveSyntaxError if ``text`` is not
        in this notation.
        """
        m = _SHORT.match(text)
        if not m or not (m.group(1) or m.group(5)):
            raise MoveSyntaxError(f"{text!r} is not Amazons shorthand (d1-d5, d8 or d1-d5/d8)")
        out = []
        if m.group(1):
            x1, x2 = ord(m.group(1).lower()) - 96, ord(m.group(3).lower()) - 96
            out.append(self.parse_move(f"(move {x1} {m.group(2)} {x2} {m.group(4)})"))
        if m.group(5):
            out.append(self.parse_move(f"(fire {ord(m.group(5).lower()) - 96} {m.group(6)})"))
        return out
