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

from collections.abc import Mapping
from typing import Any

from ..core.game import Game, Move, State


def family(game: Game) -> str:
    """``amazons``, ``bomberman``, ``wallmaze`` or ``other``: which controls the play page offers (the game says)."""
    return game.board_kind


def board_svg(game: Game, state: State, size: int | None = None) -> str:
    """The game's SVG of ``state`` at the play page's size."""
    return game.svg(state, game.board_size if size is None else size)


def agents_for(game: Game, registered: Mapping[str, Any]) -> list[str]:
    """The registered agents (name -> factory) to offer for ``game``: all but those made for another game.

    An agent made for one game says so by its ``plays`` attribute (a Game class).

    >>> import ggp
    >>> from ggp.agents import AGENTS
    >>> agents_for(ggp.load("wallmaze"), AGENTS)
    ['mcts', 'random', 'wallmaze']
    """
    out = []
    for name, factory in registered.items():
        plays = getattr(factory, "plays", None)
        if plays is None or isinstance(game, plays):
            out.append(name)
    return sorted(out)


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
