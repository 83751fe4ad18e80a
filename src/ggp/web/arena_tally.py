"""Arena ratings from tallies: wins, draws and losses per pair of players, kept as matches end, and the
Bradley-Terry fit with bootstrap intervals drawn from those counts."""

from __future__ import annotations

import numpy as np

from ..match.ratings import ELO, Rating, fit, fit_many, ratings_table

#: A player's rating is provisional (shown without an interval) until it has played this many games: before, the
#: fit is mostly its prior, and an interval such as "95 to 95" would claim a certainty it does not have.
PROVISIONAL_GAMES = 10


class Tally:
    """The outcomes of finished matches, per pair of players: what a ratings fit needs.

    ``pairs[(a, b)]`` (``a < b``) is ``[a's wins, draws, b's wins]`` over every pair of players of every match
    counted. Its size is set by the players who met, not by the number of matches, so that the arena's
    memory stays flat however long its history grows (a fit from the stored rows would decode the whole
    history each time, and a bootstrap over the games one by one takes ``resamples`` times 16 bytes per game:
    3 KB a match at 200 resamples, which is what made the server grow by about 4 KB a match).

    >>> t = Tally()
    >>> t.add(["p", "q", "r"], [100, 0, 100])
    >>> t.matches, t.pairs
    (1, {('p', 'q'): [1, 0, 0], ('p', 'r'): [0, 1, 0], ('q', 'r'): [0, 0, 1]})
    """

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], list[int]] = {}
        self.matches = 0

    def add(self, players: list[str], goals: list[int]) -> None:
        """Count one finished match (players and goals in role order; the higher goal wins)."""
        if len(players) != len(goals):
            raise ValueError(f"{len(players)} players but {len(goals)} goals")
        self.matches += 1
        for i, (a, ga) in enumerate(zip(players, goals, strict=True)):
            for b, gb in zip(players[i + 1 :], goals[i + 1 :], strict=True):
                if a == b:
                    continue  # an agent filling two roles does not play itself
                (x, gx), (y, gy) = sorted(((a, ga), (b, gb)))
                outcome = 0 if gx > gy else 1 if gx == gy else 2
                self.pairs.setdefault((x, y), [0, 0, 0])[outcome] += 1

    def copy(self) -> Tally:
        out = Tally()
        out.pairs = {k: list(v) for k, v in self.pairs.items()}
        out.matches = self.matches
        return out


def rate_tally(tally: Tally, resamples: int = 200, seed: int = 0, prior: float = 1.0) -> list[Rating]:
    """Bradley-Terry ratings with 95 % bootstrap intervals from a :class:`Tally`, best first.

    The fit of :func:`ggp.match.ratings.rate`, and its bootstrap stratified by pair, but drawn from the
    counts: resampling a pair's n scores (each 1, 0.5 or 0) with replacement is drawing its wins, draws and
    losses from a multinomial of n trials, so each resample costs the same whatever n is.

    >>> t = Tally()
    >>> for _ in range(30):
    ...     t.add(["a", "b"], [100, 0])
    >>> t.add(["a", "b"], [0, 100])
    >>> [(r.agent, r.games, r.wins, r.losses, r.low < r.rating < r.high) for r in rate_tally(t)]
    [('a', 31, 30, 1, True), ('b', 31, 1, 30, True)]
    """
    agents = sorted({p for pair in tally.pairs for p in pair})
    index = {a: i for i, a in enumerate(agents)}
    n = len(agents)
    record = np.zeros((n, 3), dtype=int)  # wins, draws, losses
    wins = np.zeros((n, n))
    played = np.zeros((n, n))
    for (a, b), (w, d, lost) in tally.pairs.items():
        i, j = index[a], index[b]
        record[i] += (w, d, lost)
        record[j] += (lost, d, w)
        wins[i, j] += w + 0.5 * d
        wins[j, i] += lost + 0.5 * d
        played[i, j] += w + d + lost
        played[j, i] += w + d + lost
    estimate = fit(n, wins, played, prior=prior) * ELO
    if resamples:
        rng = np.random.default_rng(seed)
        boot_wins = np.zeros((resamples, n, n))
        boot_played = np.zeros((resamples, n, n))
        for (a, b), counts in tally.pairs.items():
            i, j = index[a], index[b]
            total = sum(counts)
            if not total:
                continue
            drawn = rng.multinomial(total, np.array(counts) / total, size=resamples)  # (resamples, 3)
            score = drawn[:, 0] + 0.5 * drawn[:, 1]
            boot_wins[:, i, j] += score
            boot_wins[:, j, i] += total - score
            boot_played[:, i, j] += total
            boot_played[:, j, i] += total
        return ratings_table(index, record, estimate, fit_many(boot_wins, boot_played, prior=prior) * ELO)
    return ratings_table(index, record, estimate, None)
