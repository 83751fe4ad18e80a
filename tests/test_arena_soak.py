"""The arena's soak (bench/arena_soak.py), short: players of every kind until each misbehaving one is paused.

``ggp web`` runs in a process of its own with the arena on loopback; nine
players of ours (three well-behaved, six misbehaving: slow, garbage, wrong
match ids, dropped connections, replies after the clock, vanishing mid-match)
are registered and the matchmaking loop runs on its own until 12 matches are
over and every misbehaving player has been paused. The checks are the long
soak's (``python bench/arena_soak.py --minutes 60``) but for memory growth,
which a minute cannot show: no match stuck or stored twice, every match a
player was sent START for stored with its record, every misbehaving player
paused with its reason recorded (also in the arena's pause history and on
its page), none of the others, and the server's threads back to their level
once the matches are drained. Nothing waits a fixed time: the run stops on
those conditions, and its deadline only bounds a hang.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

SOAK = Path(__file__).resolve().parent.parent / "bench" / "arena_soak.py"


def load_soak() -> Any:
    spec = importlib.util.spec_from_file_location("arena_soak", SOAK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["arena_soak"] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("arena_soak", None)
    return module


def test_the_arena_survives_players_that_misbehave(tmp_path: Path) -> None:
    soak = load_soak()
    lines: list[str] = []
    cfg = soak.Config(matches=12, players=9, deadline=600.0, work=tmp_path, log=lines.append)
    figures = soak.run(cfg)
    report = soak.summary(figures) + "\n" + "\n".join(lines)
    assert figures["failures"] == [], report
    kinds = {p["kind"] for p in figures["pauses"]}
    assert kinds == {"slow", "garbage", "wrongid", "drop", "late", "vanish"}, report
    matches = figures["matches"]
    assert matches["over"] >= 12 and matches.get("running", 0) == 0 and matches["duplicates"] == 0, report
    assert matches["records"] == matches["over"] and matches["stuck"] == 0, report
    assert figures["pause_history"] == len(figures["pauses"]), report
    # each kind of misbehaviour was done, and the records name the faults it makes
    assert set(figures["misdeeds"]) >= {
        "reply a byte at a time",
        "garbage",
        "wrong match id",
        "dropped connection",
        "reply after the clock",
        "vanished mid-match",
    }, report
    by_kind = figures["faults_by_player_kind"]
    assert "timeout" in by_kind["late"] and "timeout" in by_kind["slow"], report
    assert "exception" in by_kind["drop"] and "exception" in by_kind["wrongid"], report
    assert not any(by_kind.get(k, {}).get(f) for k in ("good", "sluggish") for f in ("illegal", "not_a_move")), report
    vanished = next(p["reason"] for p in figures["pauses"] if p["kind"] == "vanish")
    assert "stopped answering" in vanished or "did not answer" in vanished, report
    assert figures["server_exit"] is not None, report
