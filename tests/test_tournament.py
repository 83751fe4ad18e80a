"""Tournaments: parallel round robins in SQLite that lose no game and count none twice, crashes and all."""

from __future__ import annotations

import collections
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ggp.agents import AGENTS
from ggp.cli import main
from ggp.match.tournament import RunEvent, Settings, TournamentDB, TournamentError, report_lines, run_tournament

AGENT_MODULE = str(Path(__file__).with_name("match_agents.py"))
GAME = "bomberman2p"
#: Seconds a healthy worker never goes without a sign of life, nor takes for a match, even on a loaded machine
#: (the tests of stalled and overlong matches wait this out for the one that misbehaves).
HEALTHY = 15.0


def new_tournament(path: Path, specs: list[str], games: int = 1, seed: int = 1) -> int:
    """Create a tournament database with the test agents' module; returns the number of scheduled matches.

    The clocks are far longer than the test agents need (they answer in milliseconds): a clock that a loaded
    machine could overrun would have the referee play a random move for the late agent (changing the match)
    and leave its thread running (retiring the worker), so results would depend on how busy the machine is.
    """
    with TournamentDB(path) as db:
        db.init_settings(Settings(game=GAME, start_clock=HEALTHY, play_clock=HEALTHY, grace=0.5, seed=seed))
        db.add_agent_modules([AGENT_MODULE])
        return db.schedule(specs, games)


def check_complete(path: Path, scheduled: int) -> list[dict[str, object]]:
    """Every scheduled match is done, with exactly one result whose record replays and matches its row."""
    with TournamentDB(path, create=False) as db:
        assert db.counts() == {"pending": 0, "running": 0, "done": scheduled, "failed": 0}
        results = db.results()
        matches = {row.id: row for row in db.matches()}
        assert sorted(r["id"] for r in results) == sorted(matches)  # one result per match, none missing
        for result in results:
            row = matches[int(str(result["id"]))]
            record = db.record(row.id)
            record.verify()
            assert record.agents == row.specs and record.seed == row.seed
            goal_a = record.goals[0] if row.seats == "ab" else record.goals[1]
            assert result["goal_a"] == goal_a and result["steps"] == record.steps
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT count(*), count(DISTINCT match_id) FROM results").fetchone() == (scheduled, scheduled)
    raw.close()
    return results


def test_schedule_is_a_round_robin_with_unique_keys(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    specs = ["random:seed=1", "random:seed=2", "random:seed=3"]
    assert new_tournament(path, specs, games=2) == 3 * 2 * 2
    with TournamentDB(path) as db:
        rows = db.matches()
        keys = collections.Counter((r.agent_a, r.agent_b, r.game_index, r.seats) for r in rows)
        assert len(keys) == 12 and set(keys.values()) == {1}
        seatings = collections.Counter(r.specs for r in rows)
        assert len(seatings) == 6 and set(seatings.values()) == {2}  # every ordered pair, twice
        assert len({r.seed for r in rows}) == 12
        # Scheduling again adds nothing; a fourth agent or more games extend the schedule.
        assert db.schedule(specs, 2) == 0
        assert db.schedule([*specs, "random:seed=4"], 2) == 3 * 2 * 2
        assert db.schedule(specs, 3) == 3 * 2
        with pytest.raises(TournamentError, match="listed twice"):
            db.schedule(["random", "random"], 1)
        with pytest.raises(TournamentError, match="already holds a tournament"):
            db.init_settings(Settings(game=GAME, start_clock=1.0, play_clock=1.0))


def test_round_robin_of_three_random_agents_on_two_workers(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    specs = ["random:seed=1", "random:seed=2", "random:seed=3"]
    scheduled = new_tournament(path, specs, games=2)
    events: list[RunEvent] = []
    summary = run_tournament(path, workers=2, on_event=events.append)
    assert summary.finished == scheduled == 12 and summary.crashes == 0
    assert [e.kind for e in events if e.kind != "started"] == ["done"] * 12
    # Each match was sent once, to one of the two workers, before it was done.
    started = [e for e in events if e.kind == "started"]
    assert sorted(e.match_id for e in started) == list(range(1, 13)) and len({e.pid for e in started}) <= 2
    for event in started:
        done = next(i for i, e in enumerate(events) if e.kind == "done" and e.match_id == event.match_id)
        assert events.index(event) < done
    results = check_complete(path, scheduled)
    per_agent = collections.Counter()
    for r in results:
        per_agent[r["agent_a"]] += 1
        per_agent[r["agent_b"]] += 1
    assert per_agent == {s: 8 for s in specs}
    with TournamentDB(path) as db:
        assert {row.starts for row in db.matches()} == {1}
    # Nothing left: running again does nothing.
    assert run_tournament(path, workers=2).finished == 0
    check_complete(path, scheduled)
    lines = report_lines(path, resamples=50)
    assert f"{GAME} round robin in {path}: 3 agents, 12 of 12 matches done" in lines[0]
    table = lines[lines.index(next(line for line in lines if line.startswith("rank"))) + 1 :]
    assert sorted(line.split()[1] for line in table) == specs
    for line in table:
        assert line.split()[5] == "8"  # games (the interval takes two words)


def test_a_worker_that_dies_mid_match_has_its_match_rerun(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "exited"
    specs = ["random:seed=1", "random:seed=2", f"exit_once:marker={marker}"]
    scheduled = new_tournament(path, specs)
    events: list[RunEvent] = []
    summary = run_tournament(path, workers=2, on_event=events.append)
    assert marker.exists()  # the agent did end its worker process
    assert summary.crashes == 1 and summary.failed == 0
    crash = [e for e in events if e.kind not in ("done", "started")]
    assert len(crash) == 1 and crash[0].kind == "crash"
    assert "died (exit code 17)" in crash[0].text and "it will be re-run" in crash[0].text
    check_complete(path, scheduled)
    with TournamentDB(path) as db:
        rows = db.matches()
        rerun = [r for r in rows if r.starts == 2]
        assert len(rerun) == 1 and rerun[0].crashes == 1 and rerun[0].id == crash[0].match_id
        assert f"exit_once:marker={marker}" in rerun[0].specs
        assert all(r.starts == 1 and r.crashes == 0 for r in rows if r is not rerun[0])
        assert [e["kind"] for e in db.events()] == ["crash"]


def test_a_match_that_keeps_crashing_fails_and_can_be_retried(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "exited"
    new_tournament(path, ["random:seed=1", f"exit_once:marker={marker}"])
    events: list[RunEvent] = []
    summary = run_tournament(path, workers=1, max_crashes=1, on_event=events.append)
    assert summary.failed == 1 and summary.counts == {"pending": 0, "running": 0, "done": 1, "failed": 1}
    failed = [e for e in events if e.kind == "failed"]
    assert len(failed) == 1 and "given up" in failed[0].text
    lines = report_lines(path, resamples=10)
    assert "1 of 2 matches done, 1 failed" in lines[0]
    # The failed match is whichever seating crashed first; either way both agents are named.
    pair = {"random:seed=1", f"exit_once:marker={marker}"}
    shown = lines[-1].removeprefix(f"failed: match {failed[0].match_id} (").split(")")[0]
    assert lines[-1].startswith(f"failed: match {failed[0].match_id} (") and set(shown.split(" vs ")) == pair
    with TournamentDB(path) as db:
        assert db.retry_failed() == 1
    assert run_tournament(path, workers=1).finished == 1  # the marker exists now: it plays
    check_complete(path, 2)


@pytest.mark.timing
def test_a_stalled_worker_is_killed_and_its_match_rerun(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "stopped"
    scheduled = new_tournament(path, ["random:seed=1", f"stop_once:marker={marker}"])
    events: list[RunEvent] = []
    # far more than a healthy worker needs to start or play, even beside a CPU hog (make test-stress)
    summary = run_tournament(path, workers=2, stall_timeout=HEALTHY, on_event=events.append)
    assert marker.exists()
    assert summary.crashes == 1
    stalls = [e for e in events if e.kind == "stall"]
    assert len(stalls) == 1 and f"no sign of life for {HEALTHY:g} s" in stalls[0].text
    check_complete(path, scheduled)


@pytest.mark.timing
def test_a_match_over_its_time_budget_is_cancelled_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "stopped"
    scheduled = new_tournament(path, ["random:seed=1", f"stop_once:marker={marker}"], games=2)
    events: list[RunEvent] = []
    # far more than a healthy worker needs to start and play a match, even beside a CPU hog (make test-stress)
    summary = run_tournament(path, workers=2, match_timeout=HEALTHY, on_event=events.append)
    assert marker.exists()
    cancelled = [e for e in events if e.kind == "cancelled"]
    assert len(cancelled) == 1 and f"over its time budget of {HEALTHY:g} s" in cancelled[0].text
    assert summary.cancelled == 1 and summary.crashes == 0 and summary.finished == scheduled - 1
    with TournamentDB(path) as db:
        assert db.counts() == {"pending": 0, "running": 0, "done": scheduled - 1, "failed": 1}
        assert [e["kind"] for e in db.events()] == ["cancelled"]
        assert db.retry_failed() == 1
    assert run_tournament(path, workers=1).finished == 1
    check_complete(path, scheduled)


def test_interrupted_run_resumes_with_exactly_the_scheduled_games(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    scheduled = new_tournament(path, ["random:seed=1", "random:seed=2", "random:seed=3"])
    first = run_tournament(path, workers=2, limit=2)
    assert first.finished == 2 and first.counts == {"pending": 4, "running": 0, "done": 2, "failed": 0}
    with TournamentDB(path) as db:
        before = {r["id"]: r for r in db.results()}
    second = run_tournament(path, workers=2)
    assert second.finished == 4
    results = check_complete(path, scheduled)
    for r in results:
        if r["id"] in before:
            assert r == before[r["id"]]  # the finished games were not played again
    with TournamentDB(path) as db:
        assert {row.starts for row in db.matches()} == {1}


def test_a_killed_runner_is_resumed_without_losing_or_repeating_games(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "killed"
    specs = ["random:seed=1", "random:seed=2", f"killgroup_once:marker={marker}"]
    argv = [sys.executable, "-m", "ggp", "tournament", GAME, *specs, "--games", "1", "--workers", "1"]
    argv += ["--db", str(path), "--seed", "5", "--agent-module", AGENT_MODULE]
    # Its own session, so that the agent's killpg takes the runner, its forkserver and its worker, not pytest.
    proc = subprocess.run(argv, start_new_session=True, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert marker.exists()
    with TournamentDB(path) as db:
        counts = db.counts()
        # One worker, matches in schedule order: the two of the first pair finished, the third was running.
        assert counts == {"pending": 3, "running": 1, "done": 2, "failed": 0}
        running = db.matches("running")[0]
        assert f"killgroup_once:marker={marker}" in running.specs
        assert db.agent_modules() == [AGENT_MODULE]
    events: list[RunEvent] = []
    summary = run_tournament(path, workers=2, on_event=events.append)
    assert summary.reclaimed == 1 and summary.finished == 4
    assert events[0].kind == "reclaimed"
    check_complete(path, 6)
    with TournamentDB(path) as db:
        assert {r.id: r.starts for r in db.matches()} == {1: 1, 2: 1, 3: 2, 4: 1, 5: 1, 6: 1}
        assert [e["kind"] for e in db.events()] == ["reclaimed"]


def test_one_runner_at_a_time(tmp_path: Path) -> None:
    from ggp.match.tournament import runner_lock

    path = tmp_path / "t.sqlite"
    new_tournament(path, ["random:seed=1", "random:seed=2"])
    with runner_lock(path), pytest.raises(TournamentError, match=f"another tournament runner .pid {os.getpid()}"):
        run_tournament(path, workers=1)


def test_tournament_command_runs_reports_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], isolated_agents: None
) -> None:
    path = tmp_path / "cli.sqlite"
    argv = ["tournament", GAME, "random:seed=1", "random:seed=2", "--games", "2", "--workers", "2"]
    code = main([*argv, "--db", str(path), "--seed", "3", "--playclock", "0.5"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"{GAME} round robin in {path}: 4 matches, 0 done, 4 newly scheduled" in out
    assert "this run finished 4 match(es)" in out
    assert "Bradley-Terry ratings" in out
    check_complete(path, 4)

    code = main(["tournament", "--db", str(path), "--report"])
    report, _ = capsys.readouterr()
    assert code == 0 and "4 of 4 matches done" in report
    assert report.splitlines() == report_lines(path)

    # A resumed command may not change the game or the clocks.
    code = main(["tournament", "wallmaze", "random", "random:seed=1", "--db", str(path)])
    assert code == 2 and f"holds a {GAME} tournament, not wallmaze" in capsys.readouterr().err
    code = main(["tournament", "--db", str(path), "--playclock", "2"])
    assert code == 2 and "created with --playclock 0.5" in capsys.readouterr().err
    # Extending with a third agent schedules (and plays) its matches only.
    code = main(
        ["tournament", GAME, "random:seed=1", "random:seed=2", "random:seed=7", "--games", "2", "--db", str(path)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "12 matches, 4 done, 8 newly scheduled" in out and "this run finished 8 match(es)" in out
    check_complete(path, 12)

    # Agents from an agent module, here and in the workers; the database remembers the module.
    assert main(["tournament", GAME, "random", "wrongtype", "--db", str(tmp_path / "new.sqlite")]) == 2
    assert "unknown agent 'wrongtype'" in capsys.readouterr().err  # not without the module
    other = tmp_path / "other.sqlite"
    code = main(["tournament", GAME, "random", "wrongtype", "--db", str(other), "--agent-module", AGENT_MODULE])
    out, err = capsys.readouterr()
    assert code == 0, err
    with TournamentDB(other) as db:
        assert db.agent_modules() == [AGENT_MODULE]
        results = db.results()
        assert len(results) == 4
        for result in results:
            record = db.record(int(result["id"]))
            role = record.roles[record.agents.index("wrongtype")]
            assert result["faults"] == record.steps  # every move of wrongtype was replaced
            assert {f.kind for f in record.all_faults()} == {"not_a_move"}
            assert {f.role for f in record.all_faults()} == {role}
    # As in a fresh process, without the module: the database brings it back.
    AGENTS.pop("wrongtype")
    for name in [m for m in sys.modules if m.startswith("ggp_agent_module_")]:
        del sys.modules[name]
    assert main(["tournament", "--db", str(other), "--report"]) == 0
    assert "wrongtype" in capsys.readouterr().out
    assert main(["tournament", GAME, "random", "wrongtype", "--db", str(other), "--games", "3"]) == 0
    assert "this run finished 2 match(es)" in capsys.readouterr().out

    assert main(["tournament", "--db", str(tmp_path / "none.sqlite"), "--report"]) == 2
    assert "no tournament database" in capsys.readouterr().err
    assert main(["tournament", "--db", str(tmp_path / "new.sqlite")]) == 2
    assert "give the game and at least two agent specs" in capsys.readouterr().err
    assert main(["tournament", GAME, "random", "bogus", "--db", str(tmp_path / "new.sqlite")]) == 2
    assert "agent bogus: unknown agent 'bogus'" in capsys.readouterr().err
    assert not (tmp_path / "new.sqlite").exists()  # nothing created for a mistake


def test_report_of_a_database_with_no_results(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    new_tournament(path, ["random:seed=1", "random:seed=2"])
    lines = report_lines(path)
    assert "0 of 2 matches done, 2 to run" in lines[0] and lines[-1] == "no results yet"


def test_not_a_tournament_database(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE x (y)")
    conn.commit()
    conn.close()
    with pytest.raises(TournamentError, match="not a ggp tournament"):
        TournamentDB(path)
    with pytest.raises(TournamentError, match="no tournament database"):
        TournamentDB(tmp_path / "missing.sqlite", create=False)


def test_the_live_table_and_progress_columns() -> None:
    import io

    from rich.console import Console

    from ggp.cli.tournament import Standings, live_progress

    standings = Standings()
    assert standings.table() is None
    standings.add(("a", "b"), (100, 0))
    standings.add(("b", "a"), (50, 50))
    standings.add(("b", "a"), (100, 0))
    buf = io.StringIO()
    out = Console(file=buf, force_terminal=True, width=120, color_system=None)
    with live_progress(out, "matches", standings.table) as progress:
        task = progress.add_task("matches", total=5, running=2, failed=1)
        progress.advance(task, 3)
    text = buf.getvalue()
    rows = {tuple(line.split()[-7:]) for line in text.splitlines() if line.rstrip().endswith("50.0")}
    # a: a win, a draw and a loss (score 50%, mean goal 50); b the same from its side (redrawn, same rows).
    assert rows == {("a", "3", "1", "1", "1", "50.0%", "50.0"), ("b", "3", "1", "1", "1", "50.0%", "50.0")}
    assert "3/5" in text and "2 running, 1 failed" in text and "matches/s" in text
    # Not on a terminal: the bar alone (no table in logs and pipes).
    plain = io.StringIO()
    with live_progress(Console(file=plain, width=120), "matches", standings.table) as progress:
        progress.add_task("matches", total=1, running=0, failed=0)
    assert "mean goal" not in plain.getvalue()
