"""``ggp bench``: a quick smoke run gives every section with positive figures, and copes without OpenSpiel."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from conftest import GAME_NAMES
from ggp.bench import OPENSPIEL_MISSING, SECTIONS
from ggp.cli import main

NUMERIC = {"int", "float", "rate", "ratio", "seconds", "bytes"}


def bench_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = main(["bench", "--quick", "--json", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def numbers(section: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (column, value) pairs of the section's numeric columns, over all rows."""
    keys = [key for key, _, kind in section["columns"] if kind in NUMERIC]
    return [(key, row.get(key)) for row in section["rows"] for key in keys]


def test_quick_json_reports_every_section_with_positive_figures(capsys: pytest.CaptureFixture[str]) -> None:
    report = bench_json(capsys)
    assert {"quick", "seconds", "machine", "open_spiel", "sections"} <= set(report)
    assert report["quick"] is True
    machine = report["machine"]
    assert machine["cpu"] and machine["cores"] >= 1
    assert machine["python"] and machine["numba"] and machine["numpy"]
    assert list(report["sections"]) == list(SECTIONS)
    for key, section in report["sections"].items():
        assert {"title", "status", "error", "columns", "rows", "notes"} <= set(section), key
        assert section["status"] in ("ok", "partial", "not available"), (key, section["error"])
        for column, value in numbers(section):
            assert value is None or value > 0, (key, column, value)
    sections = report["sections"]

    # Our own figures never depend on anything optional: all present and positive.
    for key in ("random", "perft", "compile", "import"):
        assert sections[key]["status"] == "ok", sections[key]["error"]
        assert all(value is not None for _, value in numbers(sections[key])), key
    assert [row["game"] for row in sections["random"]["rows"]] == GAME_NAMES
    assert [row["game"] for row in sections["perft"]["rows"]] == GAME_NAMES
    for row in sections["perft"]["rows"]:
        assert row["count"] > 0 and row["rate"] > 0
    (check,) = sections["import"]["rows"]
    assert check["numba_imported"] is False and check["ok"] is True
    for row in sections["compile"]["rows"]:
        assert row["cold"] > 0 and row["warm"] > 0

    amazons = sections["amazons"]["rows"]
    assert {row["game"] for row in amazons} == {"amazons_10x10", "amazons_8x8"}
    for row in amazons:
        if row["measure"].startswith("random games"):
            assert row["ours"] > 0
    (wallmaze,) = sections["wallmaze"]["rows"]
    assert wallmaze["ours"] > 0
    if report["open_spiel"]["available"]:
        assert all(row["theirs"] > 0 for row in amazons if not row["measure"].startswith("MCTS"))
        assert wallmaze["theirs"] > 0 and wallmaze["ratio"] > 0
    if sections["vector"]["status"] == "ok":
        assert {(row["game"], row["batch"]) for row in sections["vector"]["rows"]} == {
            (game, batch) for game in GAME_NAMES for batch in (1, 64, 1024)
        }


def test_without_open_spiel_our_figures_are_still_reported(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # `import pyspiel` now raises ImportError
    report = bench_json(capsys, "--only", "amazons,wallmaze")
    assert report["open_spiel"] == {"available": False, "version": None, "message": OPENSPIEL_MISSING}
    assert "pip install 'ggp[bench]'" in OPENSPIEL_MISSING
    assert list(report["sections"]) == ["amazons", "wallmaze"]
    for section in report["sections"].values():
        assert section["status"] == "partial"
        assert OPENSPIEL_MISSING in section["notes"]
    for row in report["sections"]["amazons"]["rows"]:
        if row["measure"].startswith("random games"):
            assert row["ours"] > 0
        if "plain C" not in row["measure"]:
            assert row["theirs"] is None and row["ratio"] is None and row["met"] is None
    (wallmaze,) = report["sections"]["wallmaze"]["rows"]
    assert wallmaze["ours"] > 0 and wallmaze["theirs"] is None

    code = main(["bench", "--quick", "--only", "wallmaze"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert OPENSPIEL_MISSING in out
    assert "wallmaze" in out and "n/a" in out


def test_unknown_section_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--quick", "--only", "random,nonsense"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "the sections are random, amazons" in err


def test_a_failing_section_is_reported_and_the_others_still_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ggp import bench

    def broken(cfg: bench.Config) -> bench.Section:
        raise RuntimeError("kernel exploded")

    monkeypatch.setitem(bench._RUNNERS, "perft", broken)
    report = bench_json(capsys, "--only", "perft,import")
    perft, check = report["sections"]["perft"], report["sections"]["import"]
    assert perft["status"] == "failed" and perft["error"] == "RuntimeError: kernel exploded"
    assert check["status"] == "ok" and check["rows"][0]["numba_imported"] is False

    code = main(["bench", "--quick", "--only", "perft"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "FAILED: RuntimeError: kernel exploded" in out
