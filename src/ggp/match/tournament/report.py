"""A tournament's report: progress, then Bradley-Terry ratings with bootstrap intervals and mean goals."""

from __future__ import annotations

from pathlib import Path

from ..ratings import rate
from ..stats import align, mean_interval, outcome
from .db import TournamentDB, TournamentError


def report_lines(db_path: str | Path, *, resamples: int = 500) -> list[str]:
    """The tournament in ``db_path`` as text: progress, then the ratings table."""
    with TournamentDB(db_path, create=False) as db:
        settings = db.settings()
        if settings is None:
            raise TournamentError(f"{db_path} holds no tournament yet")
        counts = db.counts()
        results = db.results()
        agents = db.agents()
        crashes = sum(1 for e in db.events() if e["kind"] in ("crash", "stall"))
        failed = [(row.id, *row.specs) for row in db.matches("failed")]
    total = sum(counts.values())
    lines = [
        f"{settings.game} round robin in {db_path}: {len(agents)} agents, {counts['done']} of {total} matches done"
        + (f", {counts['pending'] + counts['running']} to run" if counts["pending"] + counts["running"] else "")
        + (f", {counts['failed']} failed" if counts["failed"] else ""),
        f"clocks: start {settings.start_clock:g} s, play {settings.play_clock:g} s; seed {settings.seed}"
        + (f"; {crashes} worker crash(es), their matches re-run" if crashes else ""),
    ]
    if not results:
        lines.append("no results yet")
        return lines
    games: list[tuple[str, str, float]] = []
    goals: dict[str, list[int]] = {a: [] for a in agents}
    for res in results:
        score = {"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome((res["goal_a"], res["goal_b"]), 0)]
        games.append((res["agent_a"], res["agent_b"], score))
        goals[res["agent_a"]].append(res["goal_a"])
        goals[res["agent_b"]].append(res["goal_b"])
    active = [a for a in agents if goals[a]]
    table = rate(active, games, resamples=resamples, goals=goals)
    lines.append(
        f"Bradley-Terry ratings (Elo scale, mean 0; a draw is half a win; 95% CI: bootstrap of games, {resamples} resamples)"
    )
    rows = [("rank", "agent", "rating", "95% CI", "games", "W", "D", "L", "score", "mean goal", "95% CI")]
    for rank, r in enumerate(table, 1):
        mean, ci = mean_interval(goals[r.agent], bounds=(0, 100))
        rows.append(
            (
                str(rank),
                r.agent,
                f"{r.rating:+.0f}",
                f"[{r.low:+.0f}, {r.high:+.0f}]",
                str(r.games),
                str(r.wins),
                str(r.draws),
                str(r.losses),
                f"{100 * r.score:.1f}%",
                f"{mean:.1f}",
                "n/a" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]",
            )
        )
    lines.extend(align(rows, right={0, 2, 4, 5, 6, 7, 8, 9}))
    for match_id, a, b in failed:
        lines.append(
            f"failed: match {match_id} ({a} vs {b}); `ggp tournament --db {db_path} --retry-failed` re-runs it"
        )
    return lines
