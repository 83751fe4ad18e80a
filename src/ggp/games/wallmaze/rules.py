"""The wall maze race (``wallmaze.kif``): two markers swap ends of a one-lane maze.

White starts at (2,5) and races to (12,5); black does the reverse. Both move
at once, one orthogonal step into an open cell or ``noop``; if both step onto
the same cell, neither moves. The game ends at step 30 or when both have
arrived. Arriving alone wins 100-0; both arriving scores 75-25 for the earlier
arrival and 50-50 for a tie; nobody arriving is 0-0.

State array (``int64``, 5 entries): white's cell, black's cell, the step
counter, and the step at which white and black first stood on their targets
(0 until then). Cell ``(y-1)*13 + (x-1)``.

Actions: 0 ``noop``, 1-4 a step north, south, east, west (the KIF text names
the cells: ``(move 2 5 3 5)``).
"""

from __future__ import annotations

import re
from typing import Any

import numba as nb
import numpy as np

from ...core.errors import MoveSyntaxError, StateFormatError
from ...core.game import Move, State
from ...core.kernels import make_kernel
from ...core.native import NativeGame

W, H = 13, 9
MAP = (  # y = 9 at the top, as in RULES.md
    "#############",
    "###.......###",
    "###.#####.###",
    "###.##.##.###",
    "#...........#",
    "###.##.##.###",
    "###.#####.###",
    "###.......###",
    "#############",
)
WHITE_AT, BLACK_AT, STEP, WHITE_ARRIVED, BLACK_ARRIVED = range(5)
TIMEOUT = 30
NOOP, NORTH, SOUTH, EAST, WEST = range(5)
DIRECTIONS = {NORTH: (0, 1), SOUTH: (0, -1), EAST: (1, 0), WEST: (-1, 0)}


def cell(x: int, y: int) -> int:
    """The cell index of (x, y), 1-based coordinates."""
    return (y - 1) * W + (x - 1)


def xy(c: int) -> tuple[int, int]:
    """The (x, y) coordinates of cell index ``c``."""
    return c % W + 1, c // W + 1


OPEN = np.array([MAP[H - 1 - (c // W)][c % W] != "#" for c in range(W * H)], dtype=np.bool_)
# Each role's start is the other's target.
WHITE_START, BLACK_START = cell(2, 5), cell(12, 5)
TARGET = np.array([BLACK_START, WHITE_START], dtype=np.int64)


def _steps() -> np.ndarray:
    """NEXT[c, d]: the open cell one step from c in direction d (1..4), or -1."""
    nxt = np.full((W * H, 5), -1, dtype=np.int64)
    for c in range(W * H):
        x, y = xy(c)
        for d, (dx, dy) in DIRECTIONS.items():
            if 1 <= x + dx <= W and 1 <= y + dy <= H and OPEN[cell(x + dx, y + dy)]:
                nxt[c, d] = cell(x + dx, y + dy)
    return nxt


NEXT = _steps()


@nb.njit(cache=True)
def legal(s: np.ndarray, role: int, out: np.ndarray) -> int:
    me = s[role]
    other = s[1 - role]
    k = 0
    if me != TARGET[role]:
        for d in range(1, 5):
            t = NEXT[me, d]
            if t >= 0 and t != other:
                out[k] = d
                k += 1
    out[k] = NOOP
    return k + 1


@nb.njit(cache=True)
def apply(s: np.ndarray, a0: int, a1: int) -> None:
    w = s[WHITE_AT] if a0 == NOOP else NEXT[s[WHITE_AT], a0]
    b = s[BLACK_AT] if a1 == NOOP else NEXT[s[BLACK_AT], a1]
    if not (a0 != NOOP and a1 != NOOP and w == b):  # a collision leaves both where they were
        s[WHITE_AT] = w
        s[BLACK_AT] = b
    s[STEP] += 1
    if s[WHITE_ARRIVED] == 0 and s[WHITE_AT] == TARGET[0]:
        s[WHITE_ARRIVED] = s[STEP]
    if s[BLACK_ARRIVED] == 0 and s[BLACK_AT] == TARGET[1]:
        s[BLACK_ARRIVED] = s[STEP]


@nb.njit(cache=True)
def terminal(s: np.ndarray) -> bool:
    return s[STEP] >= TIMEOUT or (s[WHITE_AT] == TARGET[0] and s[BLACK_AT] == TARGET[1])


@nb.njit(cache=True)
def goals(s: np.ndarray) -> np.ndarray:
    g = np.zeros(2, dtype=np.int64)
    white = s[WHITE_AT] == TARGET[0]
    black = s[BLACK_AT] == TARGET[1]
    if white and black:
        if s[WHITE_ARRIVED] < s[BLACK_ARRIVED]:
            g[0], g[1] = 75, 25
        elif s[WHITE_ARRIVED] > s[BLACK_ARRIVED]:
            g[0], g[1] = 25, 75
        else:
            g[0], g[1] = 50, 50
    elif white:
        g[0] = 100
    elif black:
        g[1] = 100
    return g


def check_array(s: np.ndarray, name: str = "wallmaze") -> None:
    """Raise StateFormatError unless ``s`` is a wall maze state array: every value the kernel indexes by is in range."""
    if not isinstance(s, np.ndarray) or s.dtype != np.int64 or s.shape != (5,):
        what = f"{s.dtype} array of shape {s.shape}" if isinstance(s, np.ndarray) else type(s).__name__
        raise StateFormatError(f"{name}: a state array is 5 int64 entries, not a {what}")
    for who in (WHITE_AT, BLACK_AT):
        if not (0 <= s[who] < W * H and OPEN[s[who]]):
            raise StateFormatError(f"{name}: markers stand on open cells")
    if s[WHITE_AT] == s[BLACK_AT]:
        raise StateFormatError(f"{name}: the two markers cannot share a cell")
    if not 1 <= s[STEP] <= TIMEOUT:
        raise StateFormatError(f"{name}: the step counter runs from 1 to {TIMEOUT}")
    for r, (at, arrived) in enumerate(((WHITE_AT, WHITE_ARRIVED), (BLACK_AT, BLACK_ARRIVED))):
        on_target = s[at] == TARGET[r]
        if on_target != (1 <= s[arrived] <= s[STEP]) or (not on_target and s[arrived] != 0):
            raise StateFormatError(
                f"{name}: {('white', 'black')[r]}'s arrival step must be set exactly when it stands on its target"
            )


KERNEL = make_kernel(
    globals(),
    "wallmaze",
    legal=legal,
    apply=apply,
    terminal=terminal,
    goals=goals,
    num_actions=5,
    max_actions=5,
    dtype=np.int64,
    check=check_array,
)

_SHORT = {
    "n": NORTH, "north": NORTH, "up": NORTH,
    "s": SOUTH, "south": SOUTH, "down": SOUTH,
    "e": EAST, "east": EAST, "right": EAST,
    "w": WEST, "west": WEST, "left": WEST,
    "noop": NOOP, ".": NOOP, "stay": NOOP, "wait": NOOP, "pass": NOOP,
}  # fmt: skip
_WORD = re.compile(r"^\s*(\S+)\s*$")
_MOVE_TEXT = re.compile(r"^\(move (\d+) (\d+) (\d+) (\d+)\)$")


class WallMaze(NativeGame):
    """The wall maze race on a 13 x 9 grid."""

    name = "wallmaze"
    roles = ("white", "black")
    shorthand_help = "n/s/e/w (or north, up, ...) to step, . to wait"
    description = "Wall maze: race your marker to the other's start through a one-lane maze; both move at once"

    board_kind = "wallmaze"
    max_steps = TIMEOUT
    board_size = 600
    #: The rules in a few lines, for people (from RULES.md's facts).
    rules_summary = (
        "White (W) starts at (2,5) and races to (12,5); black (B) races the other way. Both move at once.",
        "Each step: move one cell north, south, east or west into an open cell (not a wall, not the other marker), or wait. If both step onto the same cell, neither moves.",
        "The race ends at step 30 or when both have arrived. One arrival: 100 to 0. Both: 75 to whoever arrived first and 25 to the other (50 each on the same step). Nobody: 0 each.",
    )

    def __init__(self) -> None:
        self.dtype = np.dtype(np.int64)
        self.kernel = KERNEL
        xs = [str(i) for i in range(1, W + 1)]
        ys = [str(i) for i in range(1, H + 1)]
        self.move_forms = ("noop", ("move", xs, ys, xs, ys))
        self.move_help = "moves are noop and (move X1 Y1 X2 Y2), one orthogonal step from (X1, Y1)"
        super().__init__()

    def initial_array(self) -> np.ndarray:
        return np.array([WHITE_START, BLACK_START, 1, 0, 0], dtype=np.int64)

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        if action == NOOP:
            return "noop"
        src = int(s[role])
        x1, y1 = xy(src)
        x2, y2 = xy(int(NEXT[src, action]))
        return f"(move {x1} {y1} {x2} {y2})"

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        if text == "noop":
            return NOOP
        m = _MOVE_TEXT.match(text)
        if m is None:  # a Move of another game, say: no action of this one
            return -1
        x1, y1, x2, y2 = (int(t) for t in m.groups())
        if cell(x1, y1) != s[role]:
            return -1
        for d, (dx, dy) in DIRECTIONS.items():
            if (x2 - x1, y2 - y1) == (dx, dy):
                return d
        return -1

    def validate_array(self, s: np.ndarray) -> None:
        check_array(s, self.name)

    # --- views ---------------------------------------------------------------------------
    def render(self, state: State) -> str:
        """The maze: ``W`` white, ``B`` black, ``#`` wall; ``w``/``b`` mark the targets."""
        s = self._array_of(state)
        lines = ["     " + "".join(f"{x:>3}" for x in range(1, W + 1))]
        for y in range(H, 0, -1):
            row = []
            for x in range(1, W + 1):
                c = cell(x, y)
                ch = "#" if not OPEN[c] else "."
                if c == TARGET[0]:
                    ch = "w"
                if c == TARGET[1]:
                    ch = "b"
                if c == s[WHITE_AT]:
                    ch = "W"
                if c == s[BLACK_AT]:
                    ch = "B"
                row.append(f"{ch:>3}")
            lines.append(f"{y:>4} " + "".join(row))
        status = f"step {int(s[STEP])}"
        if self.is_terminal(state):
            g = self.goals(state)
            status += f" - game over: white {g[0]}, black {g[1]}"
        lines.append(status + "   (W white -> w, B black -> b, # wall)")
        return "\n".join(lines)

    def svg(self, state: State, size: int = 390) -> str:
        s = self._array_of(state)
        m = 22
        sq = (size - 2 * m) / W
        height = int(2 * m + H * sq)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {height}" width="{size}" height="{height}">',
            f'<rect width="{size}" height="{height}" fill="#f1f3f6"/>',
        ]
        for c in range(W * H):
            x, y = xy(c)
            X, Y = m + (x - 1) * sq, m + (H - y) * sq
            fill = "#3c4250" if not OPEN[c] else "#ffffff"
            out.append(
                f'<rect x="{X:.1f}" y="{Y:.1f}" width="{sq:.1f}" height="{sq:.1f}" fill="{fill}" stroke="#c9ced8" data-cell="{x} {y}"/>'
            )
        for r, (color, label) in enumerate((("#e8e8e8", "W"), ("#1f1f1f", "B"))):
            tx, ty = xy(int(TARGET[r]))
            X, Y = m + (tx - 1) * sq, m + (H - ty) * sq
            out.append(
                f'<rect x="{X + 3:.1f}" y="{Y + 3:.1f}" width="{sq - 6:.1f}" height="{sq - 6:.1f}" fill="none" '
                f'stroke="{"#888" if r == 0 else "#1f1f1f"}" stroke-dasharray="3 2" stroke-width="2"/>'
            )
            px, py = xy(int(s[r]))
            X, Y = m + (px - 1) * sq + sq / 2, m + (H - py) * sq + sq / 2
            text = "#000" if r == 0 else "#fff"
            out.append(
                f'<circle cx="{X:.1f}" cy="{Y:.1f}" r="{sq * 0.36:.1f}" fill="{color}" stroke="#000" stroke-width="1.5"/>'
                f'<text x="{X:.1f}" y="{Y + 4:.1f}" font-size="{sq * 0.4:.0f}" fill="{text}" text-anchor="middle">{label}</text>'
            )
        for x in range(1, W + 1):
            out.append(
                f'<text x="{m + (x - 0.5) * sq:.1f}" y="{height - 6}" font-size="11" text-anchor="middle">{x}</text>'
            )
        for y in range(1, H + 1):
            out.append(
                f'<text x="{m / 2:.1f}" y="{m + (H - y + 0.5) * sq + 4:.1f}" font-size="11" text-anchor="middle">{y}</text>'
            )
        out.append("</svg>")
        return "".join(out)

    def state_to_dict(self, state: State) -> dict[str, Any]:
        """``{"game", "step", "white": [x, y], "black": [x, y], "white_arrived", "black_arrived"}``.

        ``*_arrived`` is the step at which that marker first stood on its
        target, or null.
        """
        s = self._array_of(state)
        return {
            "game": self.name,
            "step": int(s[STEP]),
            "white": list(xy(int(s[WHITE_AT]))),
            "black": list(xy(int(s[BLACK_AT]))),
            "white_arrived": int(s[WHITE_ARRIVED]) or None,
            "black_arrived": int(s[BLACK_ARRIVED]) or None,
        }

    def array_from_dict(self, data: dict[str, Any]) -> np.ndarray:
        def at(p: Any) -> int:
            x, y = int(p[0]), int(p[1])
            if not (1 <= x <= W and 1 <= y <= H):
                raise StateFormatError(f"{self.name}: ({x}, {y}) is off the board")
            return cell(x, y)

        return np.array(
            [
                at(data["white"]),
                at(data["black"]),
                int(data["step"]),
                int(data.get("white_arrived") or 0),
                int(data.get("black_arrived") or 0),
            ],
            dtype=np.int64,
        )

    def state_facts(self, state: State) -> list[str]:
        s = self._array_of(state)
        facts = []
        for c in range(W * H):
            x, y = xy(c)
            mark = "w" if not OPEN[c] else "a" if c == s[WHITE_AT] else "b" if c == s[BLACK_AT] else "o"
            facts.append(f"(cell {x} {y} {mark})")
        step = int(s[STEP])
        facts.append(f"(step {step})")
        # The rule sheet records an arrival one state late: `whitedone` still
        # reads 30 in the state where white arrives.
        for name, arrived in (("whitedone", WHITE_ARRIVED), ("blackdone", BLACK_ARRIVED)):
            a = int(s[arrived])
            facts.append(f"({name} {a if 0 < a < step else 30})")
        return sorted(facts)

    def shorthand(self, state: State, role: str, text: str) -> list[Move]:
        """Words for moves: ``n``/``north``/``up``, ``s``, ``e``, ``w`` and ``noop``/``.``."""
        m = _WORD.match(text)
        d = _SHORT.get(m.group(1).lower()) if m else None
        if d is None:
            raise MoveSyntaxError(f"{text!r} is not a wall maze shorthand (n s e w noop)")
        s = self._array_of(state)
        r = self.role_index(role)
        if d == NOOP:
            return [self._move("noop")]
        target = int(NEXT[s[r], d])
        if target < 0:
            raise MoveSyntaxError(f"{role} cannot step {text.strip()} from {xy(int(s[r]))}: there is a wall")
        return [self._move(self.action_text(s, r, d))]
