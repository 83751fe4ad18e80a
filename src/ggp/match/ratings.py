"""Bradley-Terry ratings with bootstrap confidence intervals.

The Bradley-Terry model gives agent ``i`` a strength ``theta_i`` and says ``i``
beats ``j`` with probability ``1 / (1 + exp(theta_j - theta_i))``. A draw
counts as half a win for each side. The fit maximises the likelihood by
Newton's method; to keep it finite when an agent won or lost every game, each
pair of agents that met gets ``prior`` virtual draws (default one). Ratings
are shown on the Elo scale (``400 / ln 10`` times ``theta``), centred on 0.

The 95% intervals come from a bootstrap stratified by pair: the games of each
pair are resampled with replacement, the model is refitted, and the 2.5% and
97.5% quantiles of each agent's rating are taken.

>>> games = [("a", "b", 1.0)] * 8 + [("a", "b", 0.0)] * 2
>>> table = rate(["a", "b"], games, resamples=200)
>>> [(r.agent, r.rating > 0) for r in table]
[('a', True), ('b', False)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ELO = 400.0 / math.log(10.0)


def fit(n: int, wins: np.ndarray, played: np.ndarray, prior: float = 1.0) -> np.ndarray:
    """Bradley-Terry strengths (natural scale, mean 0) of ``n`` agents.

    ``wins[i, j]`` is how often ``i`` beat ``j`` (draws as halves) and
    ``played[i, j]`` how often they met (symmetric). Agents that never played
    get strength 0.
    """
    return fit_many(wins[None], played[None], prior=prior)[0]


def fit_many(wins: np.ndarray, played: np.ndarray, prior: float = 1.0) -> np.ndarray:
    """:func:`fit` for a batch of result sets at once: ``wins`` and ``played`` are ``(B, n, n)``; returns ``(B, n)``.

    Newton's method on the log-likelihood, all sets together; each step is
    capped at 2 (natural units) so that no early step overshoots. A tiny ridge
    (1e-9) fixes the free additive constant (and separates agents that never
    met anyone).
    """
    met = played > 0
    w = wins + 0.5 * prior * met
    m = played + prior * met
    batch, n = w.shape[0], w.shape[1]
    theta = np.zeros((batch, n))
    ridge = 1e-9 * np.eye(n)
    for _ in range(200):
        d = theta[:, :, None] - theta[:, None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = np.sum(w - m * p, axis=2)
        weights = m * p * (1.0 - p)
        hessian = weights.sum(axis=2)[:, :, None] * np.eye(n) - weights + ridge  # minus the Hessian
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        size = np.max(np.abs(step), axis=1, keepdims=True)
        step *= np.minimum(1.0, 2.0 / np.maximum(size, 1e-300))
        theta += step
        theta -= theta.mean(axis=1, keepdims=True)
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta


@dataclass
class Rating:
    """One agent's line of the ratings table."""

    agent: str
    rating: float
    low: float
    high: float
    games: int
    wins: int
    draws: int
    losses: int
    mean_goal: float | None = None

    @property
    def score(self) -> float:
        """Wins plus half the draws, per game."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


def rate(
    agents: Sequence[str],
    games: Sequence[tuple[str, str, float]],
    *,
    resamples: int = 500,
    prior: float = 1.0,
    seed: int = 0,
    goals: dict[str, list[int]] | None = None,
) -> list[Rating]:
    """The ratings table of ``agents`` from ``games`` = ``(a, b, score of a)`` (1 win, 0.5 draw, 0 loss).

    Sorted best first; ``goals`` (agent -> goal values) fills in the mean goals.
    """
    index = {a: i for i, a in enumerate(agents)}
    n = len(agents)
    pairs: dict[tuple[int, int], list[float]] = {}
    record = np.zeros((n, 3), dtype=int)  # wins, draws, losses
    for a, b, score in games:
        i, j = index[a], index[b]
        if i == j:
            raise ValueError(f"agent {a!r} cannot play itself")
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game's score is 1, 0.5 or 0, not {score!r}")
        key, s = ((i, j), score) if i < j else ((j, i), 1.0 - score)
        pairs.setdefault(key, []).append(s)
        outcome = 0 if score == 1.0 else 1 if score == 0.5 else 2
        record[i, outcome] += 1
        record[j, 2 - outcome] += 1

    arrays = {k: np.array(v) for k, v in pairs.items()}
    wins_matrix = np.zeros((n, n))
    played_matrix = np.zeros((n, n))
    for (i, j), scores in arrays.items():
        wins_matrix[i, j] = scores.sum()
        wins_matrix[j, i] = len(scores) - scores.sum()
        played_matrix[i, j] = played_matrix[j, i] = len(scores)
    estimate = fit(n, wins_matrix, played_matrix, prior=prior) * ELO
    rng = np.random.default_rng(seed)
    if resamples:
        # Stratified by pair: each pair's games resampled with replacement, all resamples fitted in one batch.
        boot_wins = np.zeros((resamples, n, n))
        boot_played = np.zeros((resamples, n, n))
        for (i, j), scores in arrays.items():
            drawn = scores[rng.integers(0, len(scores), (resamples, len(scores)))].sum(axis=1)
            boot_wins[:, i, j] += drawn
            boot_wins[:, j, i] += len(scores) - drawn
            boot_played[:, i, j] += len(scores)
            boot_played[:, j, i] += len(scores)
        return ratings_table(index, record, estimate, fit_many(boot_wins, boot_played, prior=prior) * ELO, goals)
    return ratings_table(index, record, estimate, None, goals)


def ratings_table(
    index: dict[str, int],
    record: np.ndarray,
    estimate: np.ndarray,
    boot: np.ndarray | None,
    goals: dict[str, list[int]] | None = None,
) -> list[Rating]:
    """The table of a fit, best first: each agent's (``index``) rating (``estimate``), wins, draws and losses
    (``record``'s row), the 95 % interval of the bootstrap's fits (``boot``, resamples x agents; None: no
    interval) and mean goal (``goals``)."""
    if boot is not None:
        low, high = np.percentile(boot, 2.5, axis=0), np.percentile(boot, 97.5, axis=0)
    else:
        low = high = estimate
    table = []
    for a, i in index.items():
        wins, draws, losses = (int(x) for x in record[i])
        values = (goals or {}).get(a) or []
        table.append(
            Rating(
                agent=a,
                rating=float(estimate[i]),
                low=float(low[i]),
                high=float(high[i]),
                games=wins + draws + losses,
                wins=wins,
                draws=draws,
                losses=losses,
                mean_goal=sum(values) / len(values) if values else None,
            )
        )
    table.sort(key=lambda r: (-r.rating, r.agent))
    return table
