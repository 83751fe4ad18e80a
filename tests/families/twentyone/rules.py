"""Twenty-one: two players add 1, 2 or 3 to a count that starts at 0, in turn (the other plays ``noop``);
whoever brings it to 21 wins 100 to 0.

State array (``int64``, 2 entries): the count, the role to move. Actions: 0 ``noop``, k = 1..3 ``(add k)``.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ggp.core.errors import StateFormatError
from ggp.core.game import State
from ggp.core.kernels import make_kernel
from ggp.core.native import NativeGame

GOAL = 21
COUNT, TURN = 0, 1


@nb.njit(cache=True)
def legal(s: np.ndarray, role: int, out: np.ndarray) -> int:
    if s[TURN] != role or s[COUNT] >= GOAL:
        out[0] = 0
        return 1
    n = min(3, GOAL - s[COUNT])
    for k in range(n):
        out[k] = k + 1
    return n


@nb.njit(cache=True)
def apply(s: np.ndarray, a0: int, a1: int) -> None:
    s[COUNT] += a0 if s[TURN] == 0 else a1
    s[TURN] = 1 - s[TURN]


@nb.njit(cache=True)
def terminal(s: np.ndarray) -> bool:
    return s[COUNT] >= GOAL


@nb.njit(cache=True)
def goals(s: np.ndarray) -> np.ndarray:
    g = np.zeros(2, dtype=np.int64)
    if s[COUNT] >= GOAL:
        g[1 - s[TURN]] = 100  # the role that moved last said 21
    return g


def check_array(s: np.ndarray) -> None:
    if s.dtype != np.int64 or s.shape != (2,) or not 0 <= s[COUNT] <= GOAL or s[TURN] not in (0, 1):
        raise StateFormatError(f"twentyone: a state is [count 0..{GOAL}, role to move 0 or 1]")


KERNEL = make_kernel(
    globals(),
    "twentyone",
    legal=legal,
    apply=apply,
    terminal=terminal,
    goals=goals,
    num_actions=4,
    max_actions=3,
    dtype=np.int64,
    check=check_array,
)


class TwentyOne(NativeGame):
    name = "twentyone"
    roles = ("first", "second")
    description = "Twenty-one: add 1, 2 or 3 to the count in turn; whoever says 21 wins"
    rules_summary = ("Add 1, 2 or 3 to the count in turn.", "Whoever brings the count to 21 wins.")
    board_kind = "twentyone"  # its family: the view in view.py draws and reads its moves
    board_size = 420
    move_forms = ("noop", ("add", ["1", "2", "3"]))
    move_help = "moves are (add 1), (add 2), (add 3) or noop"

    def __init__(self) -> None:
        super().__init__()
        self.dtype = np.dtype(np.int64)
        self.kernel = KERNEL

    def initial_array(self) -> np.ndarray:
        return np.array([0, 0], dtype=np.int64)

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        return "noop" if action == 0 else f"(add {action})"

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        return 0 if text == "noop" else int(text[5]) if text.startswith("(add ") else -1

    def validate_array(self, s: np.ndarray) -> None:
        check_array(s)

    def render(self, state: State) -> str:
        s = self._array_of(state)
        return f"count {int(s[COUNT])} of {GOAL}, {self.roles[int(s[TURN])]} to add"

    def svg(self, state: State, size: int = 420) -> str:
        count = int(self._array_of(state)[COUNT])
        w = 20
        cells = "".join(
            f'<rect x="{i * w}" y="0" width="{w}" height="{w}" fill="{"#2b6cb0" if i < count else "#eee"}" '
            f'stroke="#999" data-cell="{i + 1} 1"/>'
            for i in range(GOAL)
        )
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" viewBox="0 0 {GOAL * w} {w}">{cells}</svg>'

    def state_to_dict(self, state: State) -> dict[str, Any]:
        s = self._array_of(state)
        return {"game": self.name, "count": int(s[COUNT]), "to_add": self.roles[int(s[TURN])]}

    def array_from_dict(self, data: dict[str, Any]) -> np.ndarray:
        return np.array([int(data["count"]), self.roles.index(data["to_add"])], dtype=np.int64)

    def state_facts(self, state: State) -> list[str]:
        s = self._array_of(state)
        return sorted([f"(count {int(s[COUNT])})", f"(control {self.roles[int(s[TURN])]})"])
