"""Tournaments on a multi-node Ray cluster simulated on this machine (``ray.cluster_utils.Cluster``).

A head node with no CPU (so no worker runs beside the driver) and two worker
nodes of one CPU each, started once for the module. Removing a node
mid-match, or killing the driver mid-tournament, must leave every scheduled
match stored exactly once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ggp.match.tournament import RunEvent, TournamentDB, run_tournament
from test_tournament import check_complete, new_tournament

ray = pytest.importorskip("ray", reason="the ray extra is not installed")
from ray.cluster_utils import Cluster  # noqa: E402

SPECS = ["random:seed=1", "random:seed=2", "random:seed=3"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_the_matches_of_a_removed_node_are_rerun_elsewhere(tmp_path: Path, cluster: Any) -> None:
    path = tmp_path / "t.sqlite"
    scheduled = new_tournament(path, SPECS, games=4, seed=21)  # 24 matches
    assert scheduled == 24
    events: list[RunEvent] = []
    removed: list[tuple[str, int]] = []
    workers = {node.node_id: node for node in cluster.worker_nodes}

    def on_event(event: RunEvent) -> None:
        events.append(event)
        # The sixth match sent: remove the node its worker runs on, while the match is in flight.
        if event.kind == "started" and sum(e.kind == "started" for e in events) == 6:
            assert event.node in workers and event.match_id is not None
            cluster.remove_node(workers[event.node])
            removed.append((event.node, event.match_id))

    summary = run_tournament(path, backend="ray", on_event=on_event)
    assert len(removed) == 1
    node, match_id = removed[0]
    crashes = [e for e in events if e.kind == "crash"]
    assert [e.match_id for e in crashes] == [match_id]
    assert summary.crashes == 1 and summary.failed == 0 and summary.finished == scheduled
    check_complete(path, scheduled)
    with TournamentDB(path, create=False) as db:
        starts = {row.id: (row.starts, row.crashes) for row in db.matches()}
    assert starts.pop(match_id) == (2, 1) and set(starts.values()) == {(1, 0)}
    # After the removal every match ran on the node that is left.
    later = [e for e in events[events.index(crashes[0]) :] if e.kind == "started"]
    assert later and {e.node for e in later} == {n for n in workers if n != node}
    cluster.add_node(num_cpus=1)  # for the next test: two worker nodes again
    cluster.wait_for_nodes()


def test_a_killed_driver_is_resumed_without_losing_or_repeating_games(tmp_path: Path, cluster: Any) -> None:
    path = tmp_path / "t.sqlite"
    scheduled = new_tournament(path, SPECS, games=2, seed=22)
    # Another driver on the same cluster dies (os._exit, no clean-up) after its fourth match is stored.
    script = textwrap.dedent(
        f"""
        import os, ray
        from ggp.match.tournament import run_tournament
        ray.init(address={cluster.address!r}, include_dashboard=False, log_to_driver=False)
        done = []
        def on_event(event):
            if event.kind == "done":
                done.append(event.match_id)
                if len(done) == 4:
                    os._exit(9)
        run_tournament({str(path)!r}, backend="ray", on_event=on_event)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr[-2000:]
    with TournamentDB(path, create=False) as db:
        counts = db.counts()
    assert counts["done"] == 4 and counts["failed"] == 0
    events: list[RunEvent] = []
    summary = run_tournament(path, backend="ray", on_event=events.append)
    assert summary.reclaimed == counts["running"] and summary.finished == scheduled - 4
    check_complete(path, scheduled)


def test_a_run_sized_by_its_workers_starts_its_own_instance_beside_a_running_cluster(
    tmp_path: Path, cluster: Any
) -> None:
    """Without ``--address``, ``--workers N`` starts a local instance of N CPUs, even where a cluster runs on
    the machine (``ray.init`` would otherwise join that one and refuse the size, as a tutorial's self-play did
    beside this module's cluster)."""
    selfplay = ["selfplay", "wallmaze", "--agent", "mcts:sims=20", "--games", "2", "--workers", "2"]
    run = subprocess.run(
        [sys.executable, "-m", "ggp", *selfplay, "--out", str(tmp_path / "sp"), "--backend", "ray"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "played 2 game(s)" in run.stdout
