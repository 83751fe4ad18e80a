"""Summaries of match results: mean goal, wins/draws/losses and 95% confidence intervals.

A player *wins* a match when its goal is strictly higher than every other
role's, *draws* when it shares the highest goal, and *loses* otherwise.

>>> mean, (lo, hi) = mean_interval([100, 0, 100, 50])
>>> mean, round(lo, 1), round(hi, 1)
(62.5, -13.7, 138.7)
>>> mean_interval([100, 0, 100, 50], bounds=(0, 100))[1]
(0, 100)
>>> rate, (lo, hi) = wilson_interval(7, 10)
>>> rate, round(lo, 3), round(hi, 3)
(0.7, 0.397, 0.892)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054

# Student's t, 97.5% quantile, for 1..30 degrees of freedom; larger ones use a series.
_T975 = (
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
)

Interval = tuple[float, float]


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (two-sided 95%)."""
    if df < 1:
        raise ValueError("t needs at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95  # Cornish-Fisher expansion: error below 1e-6 for df > 30
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_interval(values: Sequence[float], bounds: Interval | None = None) -> tuple[float, Interval | None]:
    """The mean of ``values`` and its 95% t-interval (``None`` for fewer than two values).

    ``bounds`` clips the interval to the range the values can take (goals: 0..100).
    """
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = sum(values) / n
    if n < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = t975(n - 1) * math.sqrt(var / n)
    if bounds is None:
        return mean, (mean - half, mean + half)
    return mean, (max(bounds[0], mean - half), min(bounds[1], mean + half))


def wilson_interval(successes: float, n: int) -> tuple[float, Interval]:
    """The rate ``successes / n`` and its 95% Wilson score interval."""
    if n <= 0:
        raise ValueError("no trials")
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return p, (max(0.0, centre - half), min(1.0, centre + half))


def outcome(goals: Sequence[int], seat: int) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for the role at ``seat`` given every role's goal."""
    mine = goals[seat]
    others = [g for i, g in enumerate(goals) if i != seat]
    if all(mine > g for g in others):
        return "win"
    if all(mine >= g for g in others):
        return "draw"
    return "loss"


@dataclass
class PlayerSummary:
    """How one player (an agent spec) did over a series of matches."""

    label: str
    spec: str
    goals: list[int]
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return len(self.goals)

    @property
    def mean_goal(self) -> tuple[float, Interval | None]:
        return mean_interval(self.goals, bounds=(0, 100))

    @property
    def win_rate(self) -> tuple[float, Interval]:
        return wilson_interval(self.wins, self.games)

    def add(self, goals: Sequence[int], seat: int) -> None:
        self.goals.append(goals[seat])
        result = outcome(goals, seat)
        if result == "win":
            self.wins += 1
        elif result == "draw":
            self.draws += 1
        else:
            self.losses += 1


def player_labels(specs: Sequence[str]) -> list[str]:
    """Names for players: their specs, numbered ``#1``, ``#2`` where two players share a spec."""
    return [f"{s} #{i + 1}" if specs.count(s) > 1 else s for i, s in enumerate(specs)]


def summary_table(players: Sequence[PlayerSummary]) -> list[str]:
    """The players' results as aligned text lines (a header, then one line per player)."""
    header = ("player", "games", "mean goal", "95% CI", "W", "D", "L", "win rate", "95% CI")
    rows = [header]
    for p in players:
        mean, ci = p.mean_goal
        rate, (lo, hi) = p.win_rate
        rows.append(
            (
                p.label,
                str(p.games),
                f"{mean:.1f}",
                "n/a" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]",
                str(p.wins),
                str(p.draws),
                str(p.losses),
                f"{100 * rate:.1f}%",
                f"[{100 * lo:.1f}%, {100 * hi:.1f}%]",
            )
        )
    return align(rows, right={1, 2, 4, 5, 6, 7})


def align(rows: Sequence[Sequence[str]], right: set[int] | None = None) -> list[str]:
    """Rows of cells as lines with columns padded to a common width (``right``: right-aligned columns)."""
    right = right or set()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return lines
