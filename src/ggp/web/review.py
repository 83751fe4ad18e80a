"""A finished game reviewed by the engine: its estimate of the first role's result after every step, drawn as a
graph with the largest swings marked, as lichess's analysis does.

The estimate is the compiled MCTS's at the position (the mean goal of its simulations, or the proven goal once
the search has solved it), with the same number of simulations for every position of a game and a fixed seed,
so a review is the same every time it is asked for. Games without a compiled kernel (sheets played on the
prover) are not reviewed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..agents.uct import UCTSearch
from ..core.game import Game, State
from ..core.native import KernelGame

#: Simulations for a whole review, shared by its positions (each gets 50 to 400).
BUDGET = 20_000
#: Swings marked on the graph.
SWINGS = 3
_CACHE: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
_LOCK = threading.Lock()


def estimates(game: Game, states: Sequence[State], budget: int = BUDGET) -> list[float] | None:
    """The first role's expected goal (0 to 100) at each of ``states``; None for a game without a kernel."""
    if not isinstance(game, KernelGame) or not states:
        return None
    sims = max(50, min(400, budget // len(states)))
    tree = UCTSearch(game, capacity=max(4096, 4 * sims), seed=0)
    out = []
    for state in states:
        if game.is_terminal(state):
            out.append(float(game.goals(state)[0]))
            continue
        result = tree.search(state, sims=sims)
        if result.solved is not None:
            out.append(float(result.solved[0]))
            continue
        visits, values = result.visits[0], result.values[0]
        total = int(visits.sum())
        out.append(float((visits * values).sum() / total) if total else 50.0)
    return out


def swings(values: Sequence[float], count: int = SWINGS) -> list[int]:
    """The steps (indices into ``values``, from 1) where the estimate moved most, largest first.

    >>> swings([50, 52, 20, 25, 90], 2)
    [4, 2]
    """
    moves = sorted(range(1, len(values)), key=lambda k: -abs(values[k] - values[k - 1]))
    return [k for k in moves[:count] if abs(values[k] - values[k - 1]) >= 10]


def graph_svg(role: str, values: Sequence[float], marked: Sequence[int], width: int = 360, height: int = 96) -> str:
    """The estimates as a line over the steps (top: ``role`` wins), the marked swings as dots that name the step."""
    pad = 6
    n = max(1, len(values) - 1)

    def at(k: int) -> tuple[float, float]:
        return pad + k * (width - 2 * pad) / n, pad + (100 - values[k]) * (height - 2 * pad) / 100

    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(at, range(len(values))))
    mid = height / 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="the engine\'s estimate of {role}\'s result at each step" class="review-graph">',
        f'<rect width="{width}" height="{height}" fill="#f7f5ef" stroke="#ccc"/>',
        f'<line x1="0" y1="{mid}" x2="{width}" y2="{mid}" stroke="#bbb" stroke-dasharray="3 3"/>',
        f'<polyline points="{line}" fill="none" stroke="#1d4ed8" stroke-width="2"/>',
    ]
    for k in marked:
        x, y = at(k)
        said = f"step {k}: {role} {values[k - 1]:.0f} to {values[k]:.0f}"
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#c0392b" class="swing" data-step="{k}">'
            f"<title>{said}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def review(match_id: str, game: Game, roles: Sequence[str], states: Sequence[State]) -> dict[str, Any] | None:
    """A match's review (``values``, ``swings``, ``svg``), computed once per match and number of steps."""
    key = (match_id, len(states))
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    values = estimates(game, states)
    if values is None:
        return None
    marked = swings(values)
    out = {"role": roles[0], "values": [round(v, 1) for v in values], "swings": marked}
    out["svg"] = graph_svg(roles[0], values, marked)
    with _LOCK:
        _CACHE[key] = out
        while len(_CACHE) > 64:
            _CACHE.popitem(last=False)
    return out
