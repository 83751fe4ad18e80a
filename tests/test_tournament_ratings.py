"""Ratings and summary statistics: Bradley-Terry fits, bootstrap intervals, t and Wilson intervals."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ggp.match.ratings import ELO, fit, fit_many, rate
from ggp.match.stats import (
    PlayerSummary,
    mean_interval,
    outcome,
    player_labels,
    t975,
    wilson_interval,
)


def games_between(a: str, b: str, wins: int, draws: int, losses: int) -> list[tuple[str, str, float]]:
    return [(a, b, 1.0)] * wins + [(a, b, 0.5)] * draws + [(a, b, 0.0)] * losses


def test_two_agents_have_the_closed_form_rating() -> None:
    # With one virtual draw per pair: a has 8.5 "wins" and 2.5 "losses", so theta_a - theta_b = ln(8.5 / 2.5).
    table = rate(["a", "b"], games_between("a", "b", 8, 0, 2), resamples=0)
    diff = ELO * math.log(8.5 / 2.5)
    assert [r.agent for r in table] == ["a", "b"]
    assert table[0].rating == pytest.approx(diff / 2) and table[1].rating == pytest.approx(-diff / 2)
    assert (table[0].wins, table[0].draws, table[0].losses, table[0].games) == (8, 0, 2, 10)
    assert table[0].score == pytest.approx(0.8)


def test_a_clearly_stronger_set_is_ranked_in_order_with_intervals_around_the_estimates() -> None:
    rng = random.Random(5)
    strength = {"strong": 1.5, "middle": 0.0, "weak": -1.5}
    names = list(strength)
    games = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = 1 / (1 + math.exp(strength[b] - strength[a]))
            for _ in range(40):
                u = rng.random()
                games.append((a, b, 1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0))
    table = rate(["weak", "middle", "strong"], games, resamples=300, seed=1)
    assert [r.agent for r in table] == ["strong", "middle", "weak"]
    assert table[0].rating > 150 and table[2].rating < -150
    assert sum(r.rating for r in table) == pytest.approx(0, abs=1e-6)
    for r in table:
        assert r.low < r.rating < r.high
        assert r.games == 80
    assert table[0].low > table[2].high  # clearly separated
    # Deterministic for a seed.
    again = rate(["weak", "middle", "strong"], games, resamples=300, seed=1)
    assert [(r.low, r.high) for r in again] == [(r.low, r.high) for r in table]


def test_all_draws_give_equal_ratings_and_an_unbeaten_agent_stays_finite() -> None:
    table = rate(["a", "b", "c"], games_between("a", "b", 0, 6, 0) + games_between("b", "c", 0, 6, 0), resamples=50)
    assert all(r.rating == pytest.approx(0, abs=1e-9) for r in table)
    table = rate(["a", "b"], games_between("a", "b", 10, 0, 0), resamples=50)
    assert all(math.isfinite(x) for r in table for x in (r.rating, r.low, r.high))
    assert table[0].agent == "a" and table[0].rating > 0 and table[0].low <= table[0].rating <= table[0].high


def test_batched_fit_agrees_with_single_fits() -> None:
    rng = np.random.default_rng(3)
    n = 4
    played = rng.integers(1, 6, (5, n, n)).astype(float)
    played = np.triu(played, 1)
    played = played + played.transpose(0, 2, 1)
    share = rng.random((5, n, n))
    wins = np.triu(played * share, 1)
    wins = wins + np.triu(played - played * share, 1).transpose(0, 2, 1)
    batch = fit_many(wins, played)
    for k in range(5):
        single = fit(n, wins[k], played[k])
        assert single == pytest.approx(batch[k], abs=1e-8)
        # The likelihood's gradient vanishes at the fit (one virtual draw per pair).
        w = wins[k] + 0.5 * (played[k] > 0)
        m = played[k] + (played[k] > 0)
        p = 1 / (1 + np.exp(-(single[:, None] - single[None, :])))
        assert np.abs(np.sum(w - m * p, axis=1)).max() < 1e-6


def test_rate_checks_its_input() -> None:
    with pytest.raises(ValueError, match="cannot play itself"):
        rate(["a"], [("a", "a", 1.0)])
    with pytest.raises(ValueError, match=r"score is 1, 0\.5 or 0"):
        rate(["a", "b"], [("a", "b", 0.7)])


# --- summary statistics ---------------------------------------------------------------------------------
def test_t_quantiles() -> None:
    assert t975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t975(10) == pytest.approx(2.2281, abs=1e-4)
    assert t975(31) == pytest.approx(2.0395, abs=1e-4)
    assert t975(60) == pytest.approx(2.0003, abs=1e-4)
    assert t975(120) == pytest.approx(1.9799, abs=1e-4)
    assert t975(10**6) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        t975(0)


def test_mean_and_wilson_intervals() -> None:
    mean, ci = mean_interval([50, 50, 50])
    assert mean == 50 and ci == (50, 50)
    assert mean_interval([100]) == (100, None)
    mean, ci = mean_interval([0, 100] * 10, bounds=(0, 100))
    assert mean == 50 and ci is not None
    half = t975(19) * math.sqrt(sum((v - 50) ** 2 for v in [0, 100] * 10) / 19 / 20)
    assert ci == pytest.approx((50 - half, 50 + half))
    rate_, (lo, hi) = wilson_interval(0, 10)
    assert rate_ == 0 and lo == 0 and 0.25 < hi < 0.35
    rate_, (lo, hi) = wilson_interval(10, 10)
    assert rate_ == 1 and hi == pytest.approx(1) and 0.65 < lo < 0.75


def test_outcomes_and_player_summaries() -> None:
    assert outcome((100, 0), 0) == "win" and outcome((100, 0), 1) == "loss"
    assert outcome((50, 50), 1) == "draw" and outcome((75, 25), 1) == "loss"
    assert outcome((0, 0), 0) == "draw"
    p = PlayerSummary(label="x", spec="x", goals=[])
    for goals, seat in [((100, 0), 0), ((0, 100), 1), ((50, 50), 0), ((25, 75), 0)]:
        p.add(goals, seat)
    assert (p.games, p.wins, p.draws, p.losses) == (4, 2, 1, 1)
    assert p.mean_goal[0] == pytest.approx(68.75)
    assert p.win_rate[0] == 0.5
    assert player_labels(["random", "random", "mcts"]) == ["random #1", "random #2", "mcts"]
