"""The line that won a game on a grid: Connect Four's four, tic-tac-toe's three, found from the rules.

A rule sheet does not say why a state is terminal, but its rules can be asked. At a terminal state with one
winner, every straight run of three or more cells holding the same piece is a candidate; a run is the line
that won when taking any one of its pieces off the board gives a state that is no longer terminal with the
same goals. So Breakthrough's three pawns side by side, one of them arrived, are not a "line" (taking off
another pawn changes nothing), and a chess mate is not decorated with whatever pawns stand in a row.

>>> import ggp
>>> game = ggp.gdl.load_file(ggp.gdl.__path__[0] + "/tictactoe.kif")
>>> state = game.initial_state()
>>> for moves in (["(mark 1 1)", "noop"], ["noop", "(mark 2 1)"], ["(mark 1 2)", "noop"],
...               ["noop", "(mark 2 2)"], ["(mark 1 3)", "noop"]):
...     state = game.next_state(state, moves)
>>> sorted(winning_line(game, state))
[(0, 0), (0, 1), (0, 2)]
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict

from ..core.errors import GGPError
from ..core.game import Game, State
from ..gdl.grid import grid_of, is_blank

#: Straight lines on a grid: across, along, and the two diagonals.
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))
#: The shortest run that can be a line that won.
SHORTEST = 3
#: Candidate runs asked about, longest first (each costs a state per cell).
CANDIDATES = 8

_cache: OrderedDict[tuple[int, State], frozenset[tuple[int, int]]] = OrderedDict()


def winning_line(game: Game, state: State) -> frozenset[tuple[int, int]]:
    """The cells, ``(column, row)`` indexes of the game's grid, of the line that won at ``state``: empty when
    the state is not terminal, has no single winner, the game has no grid, or no run of pieces decided it."""
    key = (id(game), state)
    found = _cache.get(key)
    if found is None:
        found = _cache[key] = _find(game, state)
        while len(_cache) > 64:  # (a finished game's view is drawn again on every visit)
            _cache.popitem(last=False)
    return found


def _find(game: Game, state: State) -> frozenset[tuple[int, int]]:
    grid = grid_of(game)
    if grid is None or len(game.roles) < 2 or not game.is_terminal(state):
        return frozenset()
    goals = tuple(int(g) for g in game.goals(state))
    if goals.count(max(goals)) != 1:
        return frozenset()
    facts = game.state_facts(state)
    held: dict[tuple[int, int], dict[str, str]] = {}  # cell -> piece -> its fact
    for fact in facts:
        where = grid.place(fact)
        if where is not None and not is_blank(where[2]):
            held.setdefault((where[0], where[1]), {})[where[2]] = fact
    runs: list[tuple[str, list[tuple[int, int]]]] = []
    for (i, j), pieces in held.items():
        for piece in pieces:
            for dx, dy in DIRECTIONS:
                if piece in held.get((i - dx, j - dy), {}):
                    continue  # not where the run starts
                run = [(i, j)]
                while piece in held.get((run[-1][0] + dx, run[-1][1] + dy), {}):
                    run.append((run[-1][0] + dx, run[-1][1] + dy))
                if len(run) >= SHORTEST:
                    runs.append((piece, run))
    runs.sort(key=lambda r: -len(r[1]))
    won: set[tuple[int, int]] = set()
    length = 0
    for piece, run in runs[:CANDIDATES]:
        if won and len(run) < length:
            break  # (two lines of one length can win together; a shorter run beside them did not)
        if all(_decides(game, facts, held[cell][piece], goals) for cell in run):
            won.update(run)
            length = len(run)
    return frozenset(won)


def _decides(game: Game, facts: list[str], fact: str, goals: tuple[int, ...]) -> bool:
    """Whether the state without ``fact`` is not terminal with ``goals`` any more."""
    with contextlib.suppress(GGPError):
        without = game.state_from_dict({"game": game.name, "facts": [f for f in facts if f != fact]})
        return not game.is_terminal(without) or tuple(int(g) for g in game.goals(without)) != goals
    return False
