"""A series of matches between fixed players, in one process: what ``ggp match`` runs.

Players are agent specs, one per role as given; with ``swap`` the seats
rotate every game (two roles: the players change sides each game). Game ``i``
of a series with seed ``S`` has seed ``S + i``; the agents of a match are
built from their specs with :func:`agent_seed` as default seed, so a series
of seeded agents replays exactly.

>>> import ggp
>>> results = run_series(ggp.load("wallmaze"), ["random", "random:seed=9"], games=2, swap=True, seed=1,
...                      start_clock=1.0, play_clock=1.0)
>>> [r.record.agents for r in results]
[('random', 'random:seed=9'), ('random:seed=9', 'random')]
>>> [p.games for p in summarize(["random", "random:seed=9"], results)]
[2, 2]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..agents import Agent, make_agent
from ..agents.hidden import hidden_agent
from ..core.game import Game
from .record import MatchRecord
from .referee import CHANCE_AGENT, Referee
from .stats import PlayerSummary, player_labels


def agent_seed(match_seed: int, seat: int) -> int:
    """The default seed of the agent in role ``seat`` of a match with seed ``match_seed``."""
    return (match_seed * 1_000_003 + 7919 * (seat + 1)) % 2**31


def seating(players: int, index: int, swap: bool) -> list[int]:
    """Which player sits in each role in game ``index``: ``seats[role] = player``."""
    shift = index % players if swap else 0
    return [(role + shift) % players for role in range(players)]


@dataclass
class SeriesResult:
    """One game of a series: its number (from 0), who sat where, and its record."""

    index: int
    seats: list[int]
    record: MatchRecord
    path: Path | None = None


def play_one(
    game: Game,
    specs: Sequence[str],
    *,
    seed: int,
    start_clock: float | None,
    play_clock: float | None,
    grace: float = 0.25,
    on_step: Callable[[int, tuple[str, ...]], None] | None = None,
) -> tuple[MatchRecord, Referee]:
    """One match, ``specs[i]`` playing ``game.players[i]``: agents built from their specs and seeded by
    :func:`agent_seed` (in a game with hidden information, each spec's :func:`~ggp.agents.hidden.hidden_agent`)."""
    if game.hidden_information:
        seconds = 0.5 * play_clock if play_clock is not None else 1.0
        agents: list[Agent] = [
            hidden_agent(spec, seed=agent_seed(seed, i), seconds=seconds) for i, spec in enumerate(specs)
        ]
    else:
        agents = [make_agent(spec, seed=agent_seed(seed, i)) for i, spec in enumerate(specs)]
    referee = Referee(game, start_clock=start_clock, play_clock=play_clock, grace=grace, seed=seed, on_step=on_step)
    return referee.run(agents, specs=list(specs)), referee


def run_series(
    game: Game,
    players: Sequence[str],
    *,
    games: int,
    swap: bool = False,
    seed: int = 0,
    start_clock: float | None = 5.0,
    play_clock: float | None = 1.0,
    grace: float = 0.25,
    out: str | Path | None = None,
    on_game: Callable[[SeriesResult], None] | None = None,
) -> list[SeriesResult]:
    """Play ``games`` matches between ``players`` (agent specs in role order); returns their results.

    With ``out``, each record is written there as ``GAME-SEED-NNN.json``.
    """
    if len(players) != len(game.players):
        raise ValueError(f"{game.name} has {len(game.players)} roles to play, but {len(players)} players given")
    folder = Path(out) if out is not None else None
    results = []
    for index in range(games):
        seats = seating(len(players), index, swap)
        specs = [players[p] for p in seats]
        record, _ = play_one(
            game, specs, seed=seed + index, start_clock=start_clock, play_clock=play_clock, grace=grace
        )
        result = SeriesResult(index=index, seats=seats, record=record)
        if folder is not None:
            result.path = record.save(folder / f"{game.name}-{seed}-{index + 1:03d}.json")
        results.append(result)
        if on_game is not None:
            on_game(result)
    return results


def summarize(players: Sequence[str], results: Sequence[SeriesResult]) -> list[PlayerSummary]:
    """Each player's goals, wins, draws and losses over ``results``."""
    labels = player_labels(list(players))
    summaries = [PlayerSummary(label=labels[i], spec=spec, goals=[]) for i, spec in enumerate(players)]
    for result in results:
        seated = [i for i, agent in enumerate(result.record.agents) if agent != CHANCE_AGENT]
        for seat, player in enumerate(result.seats):
            summaries[player].add(result.record.goals, seated[seat])
    return summaries
