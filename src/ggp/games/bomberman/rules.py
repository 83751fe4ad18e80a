"""Bomberman on the 8x8 barrier grid: ``bomberman2p`` (the GGP original) and ``bomberman`` (the seed text).

Both roles drop bombs that burn four states later; a player standing in fire
is burned and loses. ``bomberman2p`` is simultaneous and its fire sweeps the
bomb's whole row and column (through barriers); ``bomberman`` alternates turns
(the idle role plays ``noop``) and its fire covers only the bomb's cell and the
neighbours to the north and east that no barrier cuts off.

State array (``int64``, 8 entries): bomberman's cell, bomberwoman's cell, the
step counter, then four bitboards of bombs by countdown (``bomb3`` .. ``bomb0``)
and the fire bitboard. Cell ``(y-1)*8 + (x-1)`` is bit ``cell`` of a bitboard.

Actions: 0 ``noop``, 1-4 ``(move north|south|east|west)``, 5 ``(move nowhere)``,
6 ``dropBomb``.
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

N = 8
MAN, WOMAN, STEP, BOMB3, BOMB2, BOMB1, BOMB0, FIRE = range(8)
TIMEOUT = 50
ACTIONS = ("noop", "(move north)", "(move south)", "(move east)", "(move west)", "(move nowhere)", "dropBomb")
NOOP, NORTH, SOUTH, EAST, WEST, NOWHERE, DROP = range(7)

# The barriers of bomberman2p.kif: blockedNorth (x, y) cuts (x,y)-(x,y+1) and
# blockedEast (x, y) cuts (x,y)-(x+1,y). The top row and the right column are
# marked too, which matters for fire.
BLOCKED_NORTH = frozenset([(x, y) for x in (2, 4, 5, 7) for y in (1, 2, 3, 5, 6, 7)] + [(x, 8) for x in range(1, 9)])
BLOCKED_EAST = frozenset([(x, y) for x in (1, 2, 3, 5, 6, 7) for y in (2, 4, 5, 7)] + [(8, y) for y in range(1, 9)])


def cell(x: int, y: int) -> int:
    """The cell index of (x, y), 1-based coordinates."""
    return (y - 1) * N + (x - 1)


def xy(c: int) -> tuple[int, int]:
    """The (x, y) coordinates of cell index ``c``."""
    return c % N + 1, c // N + 1


def _signed(mask: int) -> int:
    """A 64-bit mask as the signed value an int64 array holds (cell 63 is the sign bit)."""
    return mask - (1 << 64) if mask >= 1 << 63 else mask


def _neighbours() -> np.ndarray:
    """NEXT[c, d] is the cell a step in direction d (1..4) leads to, or -1 where barred."""
    nxt = np.full((N * N, 5), -1, dtype=np.int64)
    for x in range(1, N + 1):
        for y in range(1, N + 1):
            c = cell(x, y)
            if y < N and (x, y) not in BLOCKED_NORTH:
                nxt[c, NORTH] = cell(x, y + 1)
            if y > 1 and (x, y - 1) not in BLOCKED_NORTH:
                nxt[c, SOUTH] = cell(x, y - 1)
            if x < N and (x, y) not in BLOCKED_EAST:
                nxt[c, EAST] = cell(x + 1, y)
            if x > 1 and (x - 1, y) not in BLOCKED_EAST:
                nxt[c, WEST] = cell(x - 1, y)
    return nxt


def _fire_masks(sweep: bool) -> np.ndarray:
    """FIRE[c]: the bitboard a bomb on c sets alight in the next state."""
    masks = np.zeros(N * N, dtype=np.int64)
    for x in range(1, N + 1):
        for y in range(1, N + 1):
            cells: set[int] = set()
            if sweep:  # bomberman2p: the whole row and/or column, through barriers
                if (x, y) not in BLOCKED_EAST:
                    cells |= {cell(i, y) for i in range(1, N + 1)}
                if (x, y) not in BLOCKED_NORTH:
                    cells |= {cell(x, j) for j in range(1, N + 1)}
            else:  # seed: own cell, north and east neighbours unless barred
                cells.add(cell(x, y))
                if y < N and (x, y) not in BLOCKED_NORTH:
                    cells.add(cell(x, y + 1))
                if x < N and (x, y) not in BLOCKED_EAST:
                    cells.add(cell(x + 1, y))
            masks[cell(x, y)] = _signed(sum(1 << c for c in cells))
    return masks


NEXT = _neighbours()


def _walkable() -> frozenset[int]:
    """The cells a player can reach from the start; the rest are pillars walled in by barriers."""
    seen, todo = {cell(1, 1)}, [cell(1, 1)]
    while todo:
        c = todo.pop()
        for d in range(NORTH, WEST + 1):
            nxt = int(NEXT[c, d])
            if nxt >= 0 and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


WALKABLE = _walkable()
FIRE_SWEEP = _fire_masks(sweep=True)
FIRE_SEED = _fire_masks(sweep=False)


@nb.njit(cache=True)
def _legal(s: np.ndarray, role: int, out: np.ndarray, alternating: bool) -> int:
    if alternating and (s[STEP] % 2 == 1) != (role == 0):
        out[0] = NOOP
        return 1
    p = s[role]
    k = 0
    for d in range(1, 5):
        if NEXT[p, d] >= 0:
            out[k] = d
            k += 1
    out[k] = NOWHERE
    out[k + 1] = DROP
    return k + 2


@nb.njit(cache=True)
def _apply(s: np.ndarray, a0: int, a1: int, fire_table: np.ndarray) -> None:
    drop = np.int64(0)
    for r in range(2):
        a = a0 if r == 0 else a1
        if NORTH <= a <= WEST:
            s[r] = NEXT[s[r], a]
        elif a == DROP:
            drop |= np.int64(1) << s[r]
    fire = np.int64(0)
    b0 = s[BOMB0]
    if b0 != 0:
        for c in range(N * N):
            if (b0 >> c) & 1:
                fire |= fire_table[c]
    s[FIRE] = fire
    s[BOMB0] = s[BOMB1]
    s[BOMB1] = s[BOMB2]
    s[BOMB2] = s[BOMB3]
    s[BOMB3] = drop
    s[STEP] += 1


@nb.njit(cache=True)
def legal_seed(s: np.ndarray, role: int, out: np.ndarray) -> int:
    return _legal(s, role, out, True)


@nb.njit(cache=True)
def legal_2p(s: np.ndarray, role: int, out: np.ndarray) -> int:
    return _legal(s, role, out, False)


@nb.njit(cache=True)
def apply_seed(s: np.ndarray, a0: int, a1: int) -> None:
    _apply(s, a0, a1, FIRE_SEED)


@nb.njit(cache=True)
def apply_2p(s: np.ndarray, a0: int, a1: int) -> None:
    _apply(s, a0, a1, FIRE_SWEEP)


@nb.njit(cache=True)
def terminal(s: np.ndarray) -> bool:
    burned = ((s[FIRE] >> s[MAN]) & 1) | ((s[FIRE] >> s[WOMAN]) & 1)
    return burned != 0 or s[STEP] >= TIMEOUT


@nb.njit(cache=True)
def goals(s: np.ndarray) -> np.ndarray:
    g = np.zeros(2, dtype=np.int64)
    man = (s[FIRE] >> s[MAN]) & 1
    woman = (s[FIRE] >> s[WOMAN]) & 1
    if man and woman:
        g[0] = 50
        g[1] = 50
    elif man:
        g[1] = 100
    elif woman:
        g[0] = 100
    elif s[STEP] >= TIMEOUT:
        g[0] = 50
        g[1] = 50
    return g


def check_array(s: np.ndarray, name: str = "bomberman") -> None:
    """Raise StateFormatError unless ``s`` is a Bomberman state array: every value the kernel indexes by is in range."""
    if not isinstance(s, np.ndarray) or s.dtype != np.int64 or s.shape != (8,):
        what = f"{s.dtype} array of shape {s.shape}" if isinstance(s, np.ndarray) else type(s).__name__
        raise StateFormatError(f"{name}: a state array is 8 int64 entries, not a {what}")
    if not (0 <= s[MAN] < N * N and 0 <= s[WOMAN] < N * N):
        raise StateFormatError(f"{name}: player cells must lie on the board")
    if not 1 <= s[STEP] <= TIMEOUT:
        raise StateFormatError(f"{name}: the step counter runs from 1 to {TIMEOUT}")


#: The rules in a few lines, for people (from RULES.md's facts).
_RULES_SEED = (
    "Bomberman (A, from 1,1) and bomberwoman (B, from 8,8) on an 8x8 grid with fixed walls. They take turns: bomberman in odd steps, bomberwoman in even ones.",
    "On your turn step north, south, east or west (not through a wall), stay, or drop a bomb where you stand.",
    "A bomb counts down 3, 2, 1, 0 and then burns for one state: its own cell and the neighbours to the north and east that no wall cuts off. Stand in fire and you are burned.",
    "One burned: 0 for them, 100 for the other; both burned, or 50 steps reached: 50 each.",
)
_RULES_2P = (
    "The original GGP Bomberman: bomberman (A) and bomberwoman (B) move at the same time on an 8x8 grid with fixed walls.",
    "Each step: go north, south, east or west where no wall blocks, stay, or drop a bomb.",
    "A bomb counts down 3, 2, 1, 0 and then its fire sweeps the bomb's whole row and column, straight through walls, for one state (a bomb in a cell walled both north and east makes no fire).",
    "One burned: 0 for them, 100 for the other; both burned, or 50 steps reached: 50 each.",
)

KERNEL_SEED = make_kernel(
    globals(),
    "seed",
    legal=legal_seed,
    apply=apply_seed,
    terminal=terminal,
    goals=goals,
    num_actions=len(ACTIONS),
    max_actions=len(ACTIONS),
    dtype=np.int64,
    check=lambda s: check_array(s, "bomberman"),
)
KERNEL_2P = make_kernel(
    globals(),
    "2p",
    legal=legal_2p,
    apply=apply_2p,
    terminal=terminal,
    goals=goals,
    num_actions=len(ACTIONS),
    max_actions=len(ACTIONS),
    dtype=np.int64,
    check=lambda s: check_array(s, "bomberman2p"),
)


def _cells(mask: int) -> list[int]:
    m = int(np.int64(mask).view(np.uint64))
    return [c for c in range(N * N) if (m >> c) & 1]


_SHORT = {
    "n": NORTH, "north": NORTH, "up": NORTH,
    "s": SOUTH, "south": SOUTH, "down": SOUTH,
    "e": EAST, "east": EAST, "right": EAST,
    "w": WEST, "west": WEST, "left": WEST,
    ".": NOWHERE, "stay": NOWHERE, "nowhere": NOWHERE, "wait": NOWHERE,
    "b": DROP, "bomb": DROP, "drop": DROP,
    "noop": NOOP, "pass": NOOP,
}  # fmt: skip
_WORD = re.compile(r"^\s*(\S+)\s*$")


class Bomberman(NativeGame):
    """Two-player Bomberman; ``alternating=True`` is the seed's ``bomberman``, else ``bomberman2p``."""

    roles = ("bomberman", "bomberwoman")
    shorthand_help = "n/s/e/w (or north, up, ...) to move, . to stay, b to drop a bomb"

    board_kind = "bomberman"
    max_steps = TIMEOUT
    constant_sum = True

    def __init__(self, alternating: bool) -> None:
        self.alternating = alternating
        self.init_args = (alternating,)
        self.rules_summary = _RULES_SEED if alternating else _RULES_2P
        self.name = "bomberman" if alternating else "bomberman2p"
        if alternating:
            self.description = "Bomberman as the seed tells it: turns alternate, fire burns a bomb's cell and its north and east neighbours"
        else:
            self.description = (
                "Bomberman, the GGP original: both move at once, fire sweeps a bomb's whole row and column"
            )
        self.dtype = np.dtype(np.int64)
        self.fire_table = FIRE_SEED if alternating else FIRE_SWEEP
        self.kernel = KERNEL_SEED if alternating else KERNEL_2P
        dirs = ["north", "south", "east", "west", "nowhere"]
        self.move_forms = ("noop", "dropBomb", ("move", dirs))
        self.move_help = "moves are (move north|south|east|west|nowhere), dropBomb and noop"
        self._actions = {t: i for i, t in enumerate(ACTIONS)}
        super().__init__()

    def initial_array(self) -> np.ndarray:
        s = np.zeros(8, dtype=np.int64)
        s[MAN], s[WOMAN], s[STEP] = cell(1, 1), cell(8, 8), 1
        return s

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        return ACTIONS[action]

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        return self._actions.get(text, -1)

    def validate_array(self, s: np.ndarray) -> None:
        check_array(s, self.name)

    # --- views ---------------------------------------------------------------------------
    def _layers(self, state: State) -> dict[str, Any]:
        s = self._array_of(state)
        return {
            "players": (int(s[MAN]), int(s[WOMAN])),
            "step": int(s[STEP]),
            "bomb_list": sorted(
                (c, t) for t, k in ((3, BOMB3), (2, BOMB2), (1, BOMB1), (0, BOMB0)) for c in _cells(s[k])
            ),
            "fire": set(_cells(s[FIRE])),
        }

    def render(self, state: State) -> str:
        """The grid with its barriers: ``A`` bomberman, ``B`` bomberwoman, digits bomb timers, ``*`` fire."""
        v = self._layers(state)
        man, woman = v["players"]
        lines = []
        for y in range(N, 0, -1):
            top = "   +"
            for x in range(1, N + 1):
                top += ("---" if (x, y) in BLOCKED_NORTH else "   ") + "+"
            lines.append(top)
            row = f"{y:>2} |"
            for x in range(1, N + 1):
                c = cell(x, y)
                body = ["", "", ""]
                body[0] = "A" if man == c else ""
                body[0] += "B" if woman == c else ""
                timers = "".join(str(t) for cc, t in v["bomb_list"] if cc == c)
                text = (body[0] + timers + ("*" if c in v["fire"] else ""))[:3] or "."
                row += f"{text:^3}" + ("|" if (x, y) in BLOCKED_EAST else " ")
            lines.append(row)
        lines.append("   +" + "---+" * N)
        lines.append("    " + "".join(f"{x:^4}" for x in range(1, N + 1)) + "(x)")
        status = f"step {v['step']}"
        if self.is_terminal(state):
            g = self.goals(state)
            status += f" - game over: bomberman {g[0]}, bomberwoman {g[1]}"
        elif self.alternating:
            status += f" - {self.roles[(v['step'] + 1) % 2]} to act"
        lines.append(status + "   (A bomberman, B bomberwoman, 3-0 bomb timers, * fire)")
        return "\n".join(lines)

    def svg(self, state: State, size: int = 360) -> str:
        v = self._layers(state)
        m = 22
        sq = (size - 2 * m) / N
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" width="{size}" height="{size}">',
            f'<rect width="{size}" height="{size}" fill="#eef0e8"/>',
        ]

        def px(x: int, y: int) -> tuple[float, float]:
            return m + (x - 1) * sq, m + (N - y) * sq

        for y in range(1, N + 1):
            for x in range(1, N + 1):
                X, Y = px(x, y)
                c = cell(x, y)
                fill = "#ff8a3d" if c in v["fire"] else "#fbfbf7" if c in WALKABLE else "#c9ccc0"
                out.append(
                    f'<rect x="{X:.1f}" y="{Y:.1f}" width="{sq:.1f}" height="{sq:.1f}" fill="{fill}" '
                    f'stroke="#d0d3c8" data-cell="{x} {y}"/>'
                )
        for x, y in BLOCKED_NORTH:
            if y < N:
                X, Y = px(x, y)
                out.append(
                    f'<line x1="{X:.1f}" y1="{Y:.1f}" x2="{X + sq:.1f}" y2="{Y:.1f}" stroke="#333" stroke-width="4"/>'
                )
        for x, y in BLOCKED_EAST:
            if x < N:
                X, Y = px(x, y)
                out.append(
                    f'<line x1="{X + sq:.1f}" y1="{Y:.1f}" x2="{X + sq:.1f}" y2="{Y + sq:.1f}" stroke="#333" stroke-width="4"/>'
                )
        out.append(
            f'<rect x="{m}" y="{m}" width="{N * sq:.1f}" height="{N * sq:.1f}" fill="none" stroke="#333" stroke-width="4"/>'
        )
        for c, t in v["bomb_list"]:
            X, Y = px(*xy(c))
            out.append(
                f'<circle cx="{X + sq / 2:.1f}" cy="{Y + sq / 2:.1f}" r="{sq * 0.3:.1f}" fill="#222"/>'
                f'<text x="{X + sq / 2:.1f}" y="{Y + sq / 2 + 5:.1f}" font-size="{sq * 0.4:.0f}" fill="#fff" '
                f'text-anchor="middle" class="bomb-timer">{t}</text>'
            )
        for c, label, color, dx in ((v["players"][0], "A", "#2b6cb0", -0.14), (v["players"][1], "B", "#c53030", 0.14)):
            X, Y = px(*xy(c))
            share = v["players"][0] == v["players"][1]
            cx = X + sq / 2 + (dx * sq if share else 0)
            out.append(
                f'<circle cx="{cx:.1f}" cy="{Y + sq / 2:.1f}" r="{sq * 0.26:.1f}" fill="{color}" stroke="#fff" stroke-width="2"/>'
                f'<text x="{cx:.1f}" y="{Y + sq / 2 + 5:.1f}" font-size="{sq * 0.32:.0f}" fill="#fff" text-anchor="middle">{label}</text>'
            )
        for i in range(1, N + 1):
            out.append(
                f'<text x="{m + (i - 0.5) * sq:.1f}" y="{size - 6}" font-size="12" text-anchor="middle">{i}</text>'
            )
            out.append(
                f'<text x="{m / 2:.1f}" y="{m + (N - i + 0.5) * sq + 4:.1f}" font-size="12" text-anchor="middle">{i}</text>'
            )
        out.append("</svg>")
        return "".join(out)

    def state_to_dict(self, state: State) -> dict[str, Any]:
        """``{"game", "step", "bomberman": [x, y], "bomberwoman": [x, y], "bombs": [[x, y, timer], ...], "fire": [[x, y], ...]}``.

        A bomb's timer counts 3, 2, 1, 0; the state after timer 0 has its fire.
        """
        v = self._layers(state)
        return {
            "game": self.name,
            "step": v["step"],
            "bomberman": list(xy(v["players"][0])),
            "bomberwoman": list(xy(v["players"][1])),
            "bombs": [[*xy(c), t] for c, t in v["bomb_list"]],
            "fire": [list(xy(c)) for c in sorted(v["fire"])],
        }

    def array_from_dict(self, data: dict[str, Any]) -> np.ndarray:
        def at(p: Any) -> int:
            x, y = int(p[0]), int(p[1])
            if not (1 <= x <= N and 1 <= y <= N):
                raise StateFormatError(f"{self.name}: ({x}, {y}) is off the board")
            return cell(x, y)

        s = np.zeros(8, dtype=np.int64)
        s[MAN], s[WOMAN], s[STEP] = at(data["bomberman"]), at(data["bomberwoman"]), int(data["step"])
        layer = {3: BOMB3, 2: BOMB2, 1: BOMB1, 0: BOMB0}
        for x, y, t in data.get("bombs", []):
            if int(t) not in layer:
                raise StateFormatError(f"{self.name}: a bomb timer is 3, 2, 1 or 0, not {t}")
            s[layer[int(t)]] |= _signed(1 << at((x, y)))
        for p in data.get("fire", []):
            s[FIRE] |= _signed(1 << at(p))
        return s

    def state_facts(self, state: State) -> list[str]:
        v = self._layers(state)
        facts = [f"(blockedNorth {x} {y})" for x, y in BLOCKED_NORTH]
        facts += [f"(blockedEast {x} {y})" for x, y in BLOCKED_EAST]
        for role, c in zip(self.roles, v["players"], strict=True):
            facts.append(f"(location {role} {c % N + 1} {c // N + 1})")
        facts += [f"(location bomb{t} {c % N + 1} {c // N + 1})" for c, t in v["bomb_list"]]
        facts += [f"(location fire {c % N + 1} {c // N + 1})" for c in v["fire"]]
        facts.append(f"(step {v['step']})")
        if self.alternating:
            facts.append(f"(control {self.roles[(v['step'] + 1) % 2]})")
        return sorted(facts)

    def shorthand(self, state: State, role: str, text: str) -> list[Move]:
        """Words for moves: ``n``/``north``/``up``, ``s``, ``e``, ``w``, ``.``/``stay``, ``b``/``bomb``, ``noop``."""
        m = _WORD.match(text)
        a = _SHORT.get(m.group(1).lower()) if m else None
        if a is None:
            raise MoveSyntaxError(f"{text!r} is not a Bomberman shorthand (n s e w . bomb noop)")
        return [self._move(ACTIONS[a])]
