"""A slow, plain-Python statement of the rules in RULES.md, written independently of ``src/``.

It works on the documented ``state_to_dict`` forms, so the property tests can
check the engine's legal moves, next states, terminal flags and goals against
it. Bomberman's barriers are read from the rule sheet ``gdl/bomberman2p.kif``.
"""

from __future__ import annotations

import re
from typing import Any

from conftest import SHARED

Cell = tuple[int, int]

# --- Amazons -----------------------------------------------------------------------------------

QUEEN_DIRECTIONS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]


def amazons_board(d: dict[str, Any]) -> dict[Cell, str]:
    rows = d["board"].split("/")
    n = len(rows)
    return {(x + 1, n - i): ch for i, row in enumerate(rows) for x, ch in enumerate(row)}


def queen_reach(board: dict[Cell, str], start: Cell) -> list[Cell]:
    out = []
    for dx, dy in QUEEN_DIRECTIONS:
        x, y = start[0] + dx, start[1] + dy
        while board.get((x, y)) == ".":
            out.append((x, y))
            x, y = x + dx, y + dy
    return out


def amazons_legal(d: dict[str, Any], role: str) -> set[str]:
    if d["to_act"] != role:
        return {"noop"}
    board = amazons_board(d)
    if d["phase"] == "fire":
        return {f"(fire {x} {y})" for x, y in queen_reach(board, tuple(d["just_moved"]))}
    mine = "W" if role == "white" else "B"
    return {
        f"(move {a[0]} {a[1]} {b[0]} {b[1]})" for a, ch in board.items() if ch == mine for b in queen_reach(board, a)
    }


def amazons_next(d: dict[str, Any], joint: list[str]) -> dict[str, Any]:
    roles = ["white", "black"]
    move = joint[roles.index(d["to_act"])].strip("()").split()
    board = amazons_board(d)
    n = round(len(board) ** 0.5)
    out = dict(d)
    if move[0] == "move":
        x1, y1, x2, y2 = map(int, move[1:])
        board[(x2, y2)], board[(x1, y1)] = board[(x1, y1)], "."
        out.update(phase="fire", just_moved=[x2, y2])
    else:
        board[(int(move[1]), int(move[2]))] = "x"
        other = roles[1 - roles.index(d["to_act"])]
        out.update(phase="move", just_moved=None, to_act=other)
    out["board"] = "/".join("".join(board[(x, y)] for x in range(1, n + 1)) for y in range(n, 0, -1))
    return out


def amazons_terminal(d: dict[str, Any]) -> bool:
    return amazons_legal(d, d["to_act"]) == set()


def amazons_goals(d: dict[str, Any]) -> tuple[int, int]:
    return (0, 100) if d["to_act"] == "white" else (100, 0)


# --- Bomberman -----------------------------------------------------------------------------------


def _barriers(kind: str) -> frozenset[Cell]:
    text = (SHARED / "gdl" / "bomberman2p.kif").read_text()
    return frozenset((int(x), int(y)) for x, y in re.findall(rf"\(init \({kind} (\d) (\d)\)\)", text))


BLOCKED_NORTH = _barriers("blockedNorth")
BLOCKED_EAST = _barriers("blockedEast")
STEPS = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0), "nowhere": (0, 0)}
BOMB_ROLES = ["bomberman", "bomberwoman"]


def edge_open(a: Cell, b: Cell) -> bool:
    """Whether a player may step from ``a`` to the orthogonal neighbour ``b``."""
    if not (1 <= b[0] <= 8 and 1 <= b[1] <= 8):
        return False
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        return (x1, min(y1, y2)) not in BLOCKED_NORTH
    return (min(x1, x2), y1) not in BLOCKED_EAST


def bomberman_acting(alternating: bool, step: int, role: str) -> bool:
    return not alternating or (step % 2 == 1) == (role == "bomberman")


def bomberman_legal(alternating: bool, d: dict[str, Any], role: str) -> set[str]:
    if not bomberman_acting(alternating, d["step"], role):
        return {"noop"}
    x, y = d[role]
    moves = {"(move nowhere)", "dropBomb"}
    for name, (dx, dy) in STEPS.items():
        if name != "nowhere" and edge_open((x, y), (x + dx, y + dy)):
            moves.add(f"(move {name})")
    return moves


def fire_of(alternating: bool, bomb: Cell) -> set[Cell]:
    x, y = bomb
    if alternating:  # the seed: the bomb's cell, north and east neighbours unless barred
        cells = {(x, y)}
        if y < 8 and (x, y) not in BLOCKED_NORTH:
            cells.add((x, y + 1))
        if x < 8 and (x, y) not in BLOCKED_EAST:
            cells.add((x + 1, y))
        return cells
    cells = set()
    if (x, y) not in BLOCKED_EAST:
        cells |= {(i, y) for i in range(1, 9)}
    if (x, y) not in BLOCKED_NORTH:
        cells |= {(x, j) for j in range(1, 9)}
    return cells


def bomberman_next(alternating: bool, d: dict[str, Any], joint: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"game": d["game"], "step": d["step"] + 1}
    new_bombs = []
    for role, move in zip(BOMB_ROLES, joint, strict=True):
        x, y = d[role]
        if move.startswith("(move"):
            dx, dy = STEPS[move[6:-1]]
            x, y = x + dx, y + dy
        elif move == "dropBomb":
            new_bombs.append((x, y, 3))
        out[role] = [x, y]
    fire: set[Cell] = set()
    bombs = set(new_bombs)
    for x, y, t in d["bombs"]:
        if t == 0:
            fire |= fire_of(alternating, (x, y))
        else:
            bombs.add((x, y, t - 1))
    out["bombs"] = sorted(bombs)
    out["fire"] = sorted(fire)
    return out


def burned(d: dict[str, Any], role: str) -> bool:
    return tuple(d[role]) in {tuple(c) for c in d["fire"]}


def bomberman_terminal(d: dict[str, Any]) -> bool:
    return burned(d, "bomberman") or burned(d, "bomberwoman") or d["step"] == 50


def bomberman_goals(d: dict[str, Any]) -> tuple[int, int]:
    man, woman = burned(d, "bomberman"), burned(d, "bomberwoman")
    if man and woman:
        return (50, 50)
    if man:
        return (0, 100)
    if woman:
        return (100, 0)
    return (50, 50) if d["step"] == 50 else (0, 0)


def bomberman_normal(d: dict[str, Any]) -> dict[str, Any]:
    """A dict form with its lists made comparable (sorted tuples)."""
    return {
        "game": d["game"],
        "step": d["step"],
        "bomberman": tuple(d["bomberman"]),
        "bomberwoman": tuple(d["bomberwoman"]),
        "bombs": sorted(tuple(b) for b in d["bombs"]),
        "fire": sorted(tuple(c) for c in d["fire"]),
    }


# --- Wall maze ---------------------------------------------------------------------------------

MAZE = [  # RULES.md, y = 9 first
    "#############",
    "###.......###",
    "###.#####.###",
    "###.##.##.###",
    "#...........#",
    "###.##.##.###",
    "###.#####.###",
    "###.......###",
    "#############",
]
MAZE_OPEN = {(x + 1, 9 - i) for i, row in enumerate(MAZE) for x, ch in enumerate(row) if ch == "."}
MAZE_TARGET = {"white": (12, 5), "black": (2, 5)}
MAZE_ROLES = ["white", "black"]


def wallmaze_legal(d: dict[str, Any], role: str) -> set[str]:
    me, other = tuple(d[role]), tuple(d["black" if role == "white" else "white"])
    moves = {"noop"}
    if me == MAZE_TARGET[role]:
        return moves
    for dx, dy in [(0, 1), (0, -1), (1, 0), (-1, 0)]:
        to = (me[0] + dx, me[1] + dy)
        if to in MAZE_OPEN and to != other:
            moves.add(f"(move {me[0]} {me[1]} {to[0]} {to[1]})")
    return moves


def wallmaze_next(d: dict[str, Any], joint: list[str]) -> dict[str, Any]:
    targets = []
    for role, move in zip(MAZE_ROLES, joint, strict=True):
        targets.append(tuple(d[role]) if move == "noop" else tuple(map(int, move.strip("()").split()[3:])))
    both_moved = all(m != "noop" for m in joint)
    if both_moved and targets[0] == targets[1]:
        targets = [tuple(d["white"]), tuple(d["black"])]
    step = d["step"] + 1
    out = {"game": d["game"], "step": step, "white": list(targets[0]), "black": list(targets[1])}
    for role, at in zip(MAZE_ROLES, targets, strict=True):
        before = d[f"{role}_arrived"]
        out[f"{role}_arrived"] = before if before is not None else (step if at == MAZE_TARGET[role] else None)
    return out


def wallmaze_terminal(d: dict[str, Any]) -> bool:
    arrived = all(tuple(d[r]) == MAZE_TARGET[r] for r in MAZE_ROLES)
    return d["step"] == 30 or arrived


def wallmaze_goals(d: dict[str, Any]) -> tuple[int, int]:
    white = tuple(d["white"]) == MAZE_TARGET["white"]
    black = tuple(d["black"]) == MAZE_TARGET["black"]
    if white and black:
        w, b = d["white_arrived"], d["black_arrived"]
        return (75, 25) if w < b else (25, 75) if w > b else (50, 50)
    return (100 if white else 0, 100 if black else 0)


# --- one door --------------------------------------------------------------------------------------


class Reference:
    """The rules of one game over its dict form."""

    def __init__(self, name: str) -> None:
        self.name = name

    def legal(self, d: dict[str, Any], role: str) -> set[str]:
        if self.name.startswith("amazons"):
            return amazons_legal(d, role)
        if self.name.startswith("bomberman"):
            return bomberman_legal(self.name == "bomberman", d, role)
        return wallmaze_legal(d, role)

    def next(self, d: dict[str, Any], joint: list[str]) -> dict[str, Any]:
        if self.name.startswith("amazons"):
            return amazons_next(d, joint)
        if self.name.startswith("bomberman"):
            return bomberman_next(self.name == "bomberman", d, joint)
        return wallmaze_next(d, joint)

    def terminal(self, d: dict[str, Any]) -> bool:
        if self.name.startswith("amazons"):
            return amazons_terminal(d)
        if self.name.startswith("bomberman"):
            return bomberman_terminal(d)
        return wallmaze_terminal(d)

    def goals(self, d: dict[str, Any]) -> tuple[int, int]:
        if self.name.startswith("amazons"):
            return amazons_goals(d)
        if self.name.startswith("bomberman"):
            return bomberman_goals(d)
        return wallmaze_goals(d)

    def normal(self, d: dict[str, Any]) -> dict[str, Any]:
        return bomberman_normal(d) if self.name.startswith("bomberman") else d
