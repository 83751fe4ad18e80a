"""The line that won a game on a grid: Connect Four's four, tic-tac-toe's three, found from the rules.

A rule sheet does not say why a state is terminal, but its rules can be asked. At a terminal state with one
winner, every straight run of three or more cells holding the same piece is a candidate. A run won when,
with the other candidates' pieces taken off (a row and a column completed by one move are two lines), a
stretch of it wins alone and taking any one piece of that stretch off gives a state that is no longer
terminal with the same goals (so a five where four win is a line too). So Breakthrough's three pawns side
by side, one of them arrived, are not a "line" (taking off another pawn changes nothing), and a chess mate
is not decorated with whatever pawns stand in a row.

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
    if grid_of(game) is None or len(game.roles) < 2 or not game.is_terminal(state):
        return frozenset()
    key = (id(game), state)  # (a state holds its game: the id is not reused while the entry lives)
    found = _cache.get(key)
    if found is None:
        found = _cache[key] = _find(game, state)
        while len(_cache) > 64:  # (a finished game's view is drawn again on every visit)
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    return found


def _find(game: Game, state: State) -> frozenset[tuple[int, int]]:
    grid = grid_of(game)
    assert grid is not None
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
    runs = runs[:CANDIDATES]
    won: set[tuple[int, int]] = set()
    for piece, run in runs:
        others = {held[c][p] for p, r in runs if r is not run for c in r if c not in run}
        alone = [f for f in facts if f not in others]
        if _won_by(game, alone, run, piece, held, goals):
            won.update(run)
    return frozenset(won)


def _won_by(
    game: Game,
    facts: list[str],
    run: list[tuple[int, int]],
    piece: str,
    held: dict[tuple[int, int], dict[str, str]],
    goals: tuple[int, ...],
) -> bool:
    """Whether some stretch of ``run`` wins alone in the state of ``facts`` (the rest of the run taken off),
    each of its pieces deciding it."""
    for width in range(SHORTEST, len(run) + 1):
        for start in range(len(run) - width + 1):
            stretch = run[start : start + width]
            rest = {held[c][piece] for c in run if c not in stretch}
            kept = [f for f in facts if f not in rest]
            if _outcome(game, kept) == goals and all(
                _outcome(game, [f for f in kept if f != held[c][piece]]) != goals for c in stretch
            ):
                return True
    return False


def _outcome(game: Game, facts: list[str]) -> tuple[int, ...] | None:
    """The goals of the state of ``facts`` if it is terminal, else None (also for a state the game refuses)."""
    with contextlib.suppress(GGPError):
        state = game.state_from_dict({"game": game.name, "facts": facts})
        return tuple(int(g) for g in game.goals(state)) if game.is_terminal(state) else None
    return None
