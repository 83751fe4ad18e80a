"""What the pages need to know about each game beyond the Game API.

Rules in short, how each role is drawn, the board size on the play page, and
:func:`annotate`, which tells the browser where a legal move starts and ends
on the board (so that it can highlight cells and map clicks and keys to moves).

>>> import ggp
>>> game = ggp.load("wallmaze")
>>> annotate(game, game.initial_state(), "white")[0]
{'move': '(move 2 5 3 5)', 'kind': 'step', 'from': [2, 5], 'to': [3, 5], 'dir': 'east'}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core.game import Game, Move, State

#: Rules in a few lines each (from RULES.md's facts).
RULES: dict[str, list[str]] = {
    "amazons_10x10": [
        "Two players, white and black, with four amazons each on a 10x10 board; white starts.",
        "A turn has two steps: move one of your amazons like a chess queen (any distance in a straight "
        "or diagonal line, never through or onto an amazon or an arrow) ...",
        "... then that amazon shoots an arrow the same way. The arrow's square is blocked for the rest of the game "
        "(shooting back over or onto the square just left is allowed).",
        "Whoever has to move and cannot loses: 0 points for them, 100 for the other. There are no draws.",
    ],
    "amazons_8x8": [
        "Amazons on a smaller 8x8 board, four amazons a side; white starts.",
        "Each turn: move an amazon like a queen through empty squares, then fire an arrow from where it landed; "
        "arrows block their square for good.",
        "The player who cannot move an amazon on their turn loses (0 to 100).",
    ],
    "bomberman": [
        "Bomberman (A, from 1,1) and bomberwoman (B, from 8,8) on an 8x8 grid with fixed walls. "
        "They take turns: bomberman in odd steps, bomberwoman in even ones.",
        "On your turn step north, south, east or west (not through a wall), stay, or drop a bomb where you stand.",
        "A bomb counts down 3, 2, 1, 0 and then burns for one state: its own cell and the neighbours to the north "
        "and east that no wall cuts off. Stand in fire and you are burned.",
        "One burned: 0 for them, 100 for the other; both burned, or 50 steps reached: 50 each.",
    ],
    "bomberman2p": [
        "The original GGP Bomberman: bomberman (A) and bomberwoman (B) move at the same time on an 8x8 grid "
        "with fixed walls.",
        "Each step: go north, south, east or west where no wall blocks, stay, or drop a bomb.",
        "A bomb counts down 3, 2, 1, 0 and then its fire sweeps the bomb's whole row and column, straight through "
        "walls, for one state (a bomb in a cell walled both north and east makes no fire).",
        "One burned: 0 for them, 100 for the other; both burned, or 50 steps reached: 50 each.",
    ],
    "wallmaze": [
        "White (W) starts at (2,5) and races to (12,5); black (B) races the other way. Both move at once.",
        "Each step: move one cell north, south, east or west into an open cell (not a wall, not the other "
        "marker), or wait. If both step onto the same cell, neither moves.",
        "The race ends at step 30 or when both have arrived. One arrival: 100 to 0. Both: 75 to whoever "
        "arrived first and 25 to the other (50 each on the same step). Nobody: 0 each.",
    ],
}

#: Board width in pixels on the play page (the SVG scales with the window).
BOARD_SIZE: dict[str, int] = {"amazons_10x10": 560, "amazons_8x8": 520, "bomberman": 520, "bomberman2p": 520}


FAMILIES = ("amazons", "bomberman", "wallmaze")


def family(game: Game) -> str:
    """``amazons``, ``bomberman``, ``wallmaze`` or ``other``: which controls the play page offers."""
    for name in FAMILIES:
        if game.name.startswith(name):
            return name
    return "other"


def board_svg(game: Game, state: State, size: int | None = None) -> str:
    """The game's SVG of ``state`` at the play page's size."""
    if size is None:
        size = BOARD_SIZE.get(game.name, 600 if family(game) == "wallmaze" else 520)
    return game.svg(state, size)


def agents_for(game: Game, registered: Iterable[str]) -> list[str]:
    """The registered agents to offer for ``game``: all but those named after another game family.

    >>> import ggp
    >>> agents_for(ggp.load("wallmaze"), ["random", "mcts", "amazons", "wallmaze"])
    ['mcts', 'random', 'wallmaze']
    """
    own = family(game)
    return sorted(name for name in registered if name not in FAMILIES or name == own)


_DIRS = {(0, 1): "north", (0, -1): "south", (1, 0): "east", (-1, 0): "west"}
_DELTA = {v: k for k, v in _DIRS.items()}


def annotate(game: Game, state: State, role: str, moves: list[Move] | None = None) -> list[dict[str, Any]]:
    """Each legal move of ``role`` with where it acts on the board.

    A dict per move: ``move`` (KIF text), ``kind`` (``move``/``fire`` for
    Amazons, ``step``/``bomb``/``noop`` otherwise), ``from`` and ``to`` as
    ``[x, y]`` or None, and ``dir`` (``north`` .. ``west``, ``stay``) or None.
    """
    if moves is None:
        moves = sorted(game.legal_moves(state, role))
    fam = family(game)
    where: list[int] | None = None
    if fam == "bomberman":
        doc = game.state_to_dict(state)
        where = list(doc[role])
    out = []
    for move in moves:
        out.append(_annotate_one(fam, move, where))
    return out


def _annotate_one(fam: str, move: Move, where: list[int] | None) -> dict[str, Any]:
    info: dict[str, Any] = {"move": move.text, "kind": "other", "from": None, "to": None, "dir": None}
    term = move.term
    if isinstance(term, str):
        if term == "noop":
            info.update(kind="noop", dir="stay" if fam == "wallmaze" else None)
        elif term == "dropBomb" and where is not None:
            info.update(kind="bomb", to=where)
        return info
    head, *args = term
    nums = [int(a) for a in args if isinstance(a, str) and a.isdigit()]
    if fam == "amazons" and head == "move" and len(nums) == 4:
        info.update(kind="move", **{"from": nums[:2], "to": nums[2:]})
    elif fam == "amazons" and head == "fire" and len(nums) == 2:
        info.update(kind="fire", to=nums)
    elif fam == "wallmaze" and head == "move" and len(nums) == 4:
        delta = (nums[2] - nums[0], nums[3] - nums[1])
        info.update(kind="step", dir=_DIRS.get(delta), **{"from": nums[:2], "to": nums[2:]})
    elif fam == "bomberman" and head == "move" and len(args) == 1 and where is not None:
        d = str(args[0])
        if d == "nowhere":
            info.update(kind="step", dir="stay", to=where, **{"from": where})
        elif d in _DELTA:
            dx, dy = _DELTA[d]
            info.update(kind="step", dir=d, to=[where[0] + dx, where[1] + dy], **{"from": where})
    return info
