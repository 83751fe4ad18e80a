"""Tournaments on Ray: a local Ray instance with 2 CPUs, started once for the module.

The Ray backend must store the same results as the local process pool for
seeded agents, store every match exactly once when a worker is killed
mid-match, and cancel (and record) a match over its time budget.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from ggp.match.tournament import RunEvent, TournamentDB, TournamentError, run_tournament
from test_tournament import HEALTHY, check_complete, new_tournament

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

# Seeded random agents: their matches do not depend on timing, so both backends must store the same ones.
SPECS = ["random:seed=1", "random:seed=2", "random:seed=3"]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def moves_and_goals(path: Path) -> dict[int, tuple[tuple[str, ...], tuple[tuple[str, ...], ...], tuple[int, ...]]]:
    with TournamentDB(path, create=False) as db:
        out = {}
        for row in db.matches():
            record = db.record(row.id)
            out[row.id] = (record.agents, tuple(m.joint for m in record.moves), record.goals)
        return out


def test_ray_backend_stores_the_same_results_as_the_local_backend(tmp_path: Path, ray_cluster: None) -> None:
    local, remote = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
    scheduled = new_tournament(local, SPECS, games=4, seed=11)
    assert new_tournament(remote, SPECS, games=4, seed=11) == scheduled == 24
    run_tournament(local, workers=2)
    events: list[RunEvent] = []
    summary = run_tournament(remote, workers=2, backend="ray", on_event=events.append)
    assert summary.finished == scheduled and summary.crashes == 0 and summary.failed == 0
    check_complete(remote, scheduled)
    assert moves_and_goals(remote) == moves_and_goals(local)
    # At most two actors, each warmed up once (one "worker" event each), ran all 24 matches; a second actor
    # may still have been warming up when the first had played them all.
    ready = [e.pid for e in events if e.kind == "worker"]
    assert 1 <= len(ready) <= 2 and len(set(ready)) == len(ready)
    assert {e.pid for e in events if e.kind == "started"} <= set(ready)
    assert sorted(e.match_id for e in events if e.kind == "done") == list(range(1, scheduled + 1))
    # Resuming a finished tournament runs nothing.
    assert run_tournament(remote, backend="ray").finished == 0


def test_a_killed_ray_worker_has_its_match_rerun_and_stored_once(tmp_path: Path, ray_cluster: None) -> None:
    path = tmp_path / "t.sqlite"
    scheduled = new_tournament(path, SPECS, games=4, seed=12)
    killed: list[tuple[int, int]] = []

    def on_event(event: RunEvent) -> None:
        # The fifth match sent: kill its worker (found through Ray: the pid its actor reported) before it can finish.
        started = [e for e in events if e.kind == "started"]
        if event.kind == "started" and len(started) == 4 and not killed:
            assert event.pid is not None and event.match_id is not None
            os.kill(event.pid, signal.SIGKILL)
            killed.append((event.pid, event.match_id))
        events.append(event)

    events: list[RunEvent] = []
    summary = run_tournament(path, workers=2, backend="ray", on_event=on_event)
    assert len(killed) == 1
    pid, match_id = killed[0]
    crashes = [e for e in events if e.kind == "crash"]
    assert [e.match_id for e in crashes] == [match_id] and f"worker {pid}" in crashes[0].text
    assert summary.crashes == 1 and summary.failed == 0 and summary.finished == scheduled
    check_complete(path, scheduled)
    with TournamentDB(path, create=False) as db:
        starts = {row.id: (row.starts, row.crashes) for row in db.matches()}
    assert starts.pop(match_id) == (2, 1)
    assert set(starts.values()) == {(1, 0)}
    # The dead worker was sent nothing more; the re-run went to a live one.
    after = events[[e.kind for e in events].index("crash") :]
    assert [e.pid for e in after if e.kind == "started" and e.pid == pid] == []
    assert any(e.kind == "started" and e.match_id == match_id for e in after)


@pytest.mark.timing
def test_a_match_over_its_budget_is_cancelled_and_recorded(tmp_path: Path, ray_cluster: None) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "stopped"
    scheduled = new_tournament(path, ["random:seed=1", f"stop_once:marker={marker}"], games=2)
    events: list[RunEvent] = []
    # far more than a healthy worker needs to start and play a match, even beside a CPU hog (make test-stress)
    summary = run_tournament(path, workers=2, backend="ray", match_timeout=HEALTHY, on_event=events.append)
    assert marker.exists()
    cancelled = [e for e in events if e.kind == "cancelled"]
    assert len(cancelled) == 1 and f"over its time budget of {HEALTHY:g} s" in cancelled[0].text
    assert summary.cancelled == 1 and summary.finished == scheduled - 1
    with TournamentDB(path, create=False) as db:
        assert db.counts() == {"pending": 0, "running": 0, "done": scheduled - 1, "failed": 1}
        (failed,) = db.matches("failed")
        assert failed.id == cancelled[0].match_id
        assert [e["kind"] for e in db.events()] == ["cancelled"]
        assert db.retry_failed() == 1
    assert run_tournament(path, workers=2, backend="ray").finished == 1  # the marker exists: it plays now
    check_complete(path, scheduled)


@pytest.mark.timing
def test_a_stalled_ray_worker_is_killed_and_its_match_rerun(tmp_path: Path, ray_cluster: None) -> None:
    path = tmp_path / "t.sqlite"
    marker = tmp_path / "stopped"
    scheduled = new_tournament(path, ["random:seed=1", f"stop_once:marker={marker}"], games=2)
    events: list[RunEvent] = []
    # far more than a healthy worker goes without a sign of life, even beside a CPU hog (make test-stress)
    summary = run_tournament(path, workers=2, backend="ray", stall_timeout=HEALTHY, on_event=events.append)
    assert marker.exists()  # an actor stopped itself (SIGSTOP): it answers nothing, not even the driver's check
    stalls = [e for e in events if e.kind == "stall"]
    assert (
        len(stalls) == 1
        and f"no sign of life for {HEALTHY:g} s" in stalls[0].text
        and "it will be re-run" in stalls[0].text
    )
    assert summary.crashes == 1 and summary.failed == 0 and summary.finished == scheduled
    check_complete(path, scheduled)
    with TournamentDB(path, create=False) as db:
        assert [e["kind"] for e in db.events()] == ["stall"]


def test_ray_backend_checks_its_options(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    new_tournament(path, ["random:seed=1", "random:seed=2"])
    with pytest.raises(TournamentError, match="unknown backend 'dask'"):
        run_tournament(path, backend="dask")
    with pytest.raises(TournamentError, match="time budget"):
        run_tournament(path, backend="ray", match_timeout=-1.0)
    with TournamentDB(path, create=False) as db:
        assert db.counts()["pending"] == 2  # nothing touched


def test_selfplay_on_ray_writes_the_same_games_as_in_process(tmp_path: Path, ray_cluster: None) -> None:
    from ggp.match.selfplay import run_selfplay
    from test_selfplay import replay_all

    here, there = tmp_path / "here", tmp_path / "there"
    run_selfplay("wallmaze", "mcts:sims=32", games=6, out=here, seed=7)
    summary = run_selfplay("wallmaze", "mcts:sims=32", games=6, out=there, seed=7, backend="ray", workers=2, shard=4)
    assert summary.played == 6 and summary.shards == 2 and summary.crashes == 0
    assert replay_all(there) == replay_all(here)


def test_tournament_command_on_ray(tmp_path: Path, ray_cluster: None, capsys: pytest.CaptureFixture[str]) -> None:
    from ggp.cli import main

    path = tmp_path / "cli.sqlite"
    argv = ["tournament", "wallmaze", "random:seed=1", "random:seed=2", "--games", "2", "--backend", "ray"]
    assert main([*argv, "--workers", "2", "--db", str(path), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "this run finished 4 match(es)" in out and "Bradley-Terry ratings" in out
    check_complete(path, 4)
    assert main(["tournament", "--db", str(path), "--address", "auto"]) == 2
    assert "--address is the Ray cluster's: give it with --backend ray" in capsys.readouterr().err


def test_selfplay_on_ray_replays_the_game_of_a_dead_worker(
    tmp_path: Path, ray_cluster: None, isolated_agents: None
) -> None:
    # isolated_agents: run_selfplay imports the agent module here too, whose agents must not outlive the test
    from ggp.match.selfplay import SelfplayEvent, read_selfplay, run_selfplay
    from test_selfplay import replay_all
    from test_tournament import AGENT_MODULE

    out, marker = tmp_path / "sp", tmp_path / "exited"
    events: list[SelfplayEvent] = []
    summary = run_selfplay(
        "wallmaze",
        f"exit_once:marker={marker}",
        games=4,
        out=out,
        backend="ray",
        workers=2,
        agent_modules=(AGENT_MODULE,),
        on_event=events.append,
    )
    assert marker.exists()  # the first move ended its worker's process
    crashes = [e for e in events if e.kind == "crash"]
    assert len(crashes) == 1 and summary.crashes == 1 and summary.failed == []
    assert summary.played == 4
    # Every game once, the crashed one included, each replaying legally to its goals.
    assert sorted(replay_all(out)) == [0, 1, 2, 3]
    table = read_selfplay(out)
    assert table.num_rows == sum(len(moves) for moves in replay_all(out).values())
