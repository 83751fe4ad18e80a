"""The ``ggp`` commands over any rule sheet: info, perft, random and play on a GDL file, propnet or prover."""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import ggp
from conftest import SHARED
from ggp.cli import main
from ggp.cli.loading import load_game
from ggp.cli.perft import perft_api
from ggp.gdl import build as gdl_build
from ggp.gdl import grounder, load_text

SHEET = SHARED / "corpus" / "kif" / "connectFour.kif"

#: A small sheet with a left-recursive relation; grounding it is made to give up by lowering the bound.
REACH = """
(role p)
(init (at a))
(edge a b) (edge b c) (edge c d)
(<= (path ?x ?y) (path ?x ?z) (edge ?z ?y))
(<= (path ?x ?y) (edge ?x ?y))
(<= (legal p (go ?y)) (true (at ?x)) (path ?x ?y))
(<= (next (at ?y)) (does p (go ?y)))
(<= terminal (true (at d)))
(<= (goal p 100) (true (at d)))
(<= (goal p 0) (not (true (at d))))
"""


@pytest.fixture
def prover_sheet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A rule sheet file that loads on the prover: grounding gives up past 10 atoms here."""
    monkeypatch.setattr(grounder, "MAX_ATOMS", 10)
    path = tmp_path / "reach.kif"
    path.write_text(REACH)
    yield str(path)
    load_text.cache_clear()


def test_info_on_a_corpus_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    assert SHEET.is_file(), f"the GDL corpus is missing: {SHEET}"
    assert main(["info", str(SHEET)]) == 0
    out = capsys.readouterr().out
    game = ggp.load(SHEET)
    pn = game.propnet  # type: ignore[attr-defined]
    assert re.search(r"^roles\s+" + ", ".join(game.roles) + "$", out, re.M)
    assert re.search(r"^engine\s+propnet", out, re.M)
    assert re.search(rf"^base\s+{pn.num_base:,} propositions", out, re.M)
    assert re.search(rf"^gates\s+{pn.num_gates:,}$", out, re.M)
    inputs = sum(len(t) for t in pn.move_texts)
    assert re.search(rf"^inputs\s+{inputs:,} propositions", out, re.M)
    assert re.search(
        r"^load\s+[\d.]+ s \(parse [\d.]+ s, ground [\d.]+ s, build [\d.]+ s, kernel [\d.]+ s\)$", out, re.M
    )
    assert re.search(r"^network\s+(built here|read from ggp's cache)$", out, re.M)  # (no child outside a player)


def test_info_says_when_the_prover_plays_and_why(prover_sheet: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", prover_sheet]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^engine\s+prover \(grounding is infeasible: reach: grounding gave up", out, re.M)
    assert re.search(r"^rules\s+\d+ \(not grounded", out, re.M)
    # the load counts the grounding that gave up as well as the prover's start
    found = re.search(
        r"^load\s+([\d.]+) s \(parse and ground until it gave up ([\d.]+) s, prover ([\d.]+) s\)$", out, re.M
    )
    assert found is not None
    assert abs(float(found.group(1)) - float(found.group(2)) - float(found.group(3))) <= 0.015


def test_info_on_a_built_in_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "wallmaze"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^engine\s+native", out, re.M) and re.search(r"^roles\s+white, black$", out, re.M)


def test_info_on_a_missing_sheet_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "no/such/sheet.kif"]) == 2
    assert "no such rule sheet" in capsys.readouterr().err


def test_perft_on_a_sheet_compiled_matches_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", str(SHEET), "3"]) == 0
    compiled = capsys.readouterr().out.splitlines()
    assert main(["perft", str(SHEET), "3", "--api"]) == 0
    api = capsys.readouterr().out.splitlines()
    assert "compiled kernel" in compiled[0] and "Game API" in api[0]
    assert compiled[-1] == api[-1] and int(api[-1]) > 0


def test_perft_on_a_prover_sheet(prover_sheet: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", prover_sheet, "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    game = ggp.load(prover_sheet)
    assert "Game API" in out[0]
    assert int(out[-1]) == perft_api(game, game.initial_state(), 2) == 2 + 1  # a-b then c or d; a-c then d


@pytest.mark.parametrize("compiled", [False, True])
def test_random_on_a_sheet(capsys: pytest.CaptureFixture[str], compiled: bool) -> None:
    args = ["random", str(SHEET), "--games", "6", "--seed", "4"] + (["--compiled"] if compiled else [])
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "6 uniformly random games, seed 4" in out
    tallies = [int(m) for m in re.findall(r"^\s+\S.* (\d+)\s+[\d.]+%$", out, re.M)]
    assert sum(tallies) == 6


def test_random_on_a_prover_sheet(prover_sheet: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["random", prover_sheet, "--games", "5", "--seed", "1"]) == 0
    assert "5 uniformly random games" in capsys.readouterr().out
    assert main(["random", prover_sheet, "--compiled"]) == 2
    assert "has no compiled kernel; run without --compiled" in capsys.readouterr().err


def test_play_a_sheet_shows_the_facts(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """No board view for a rule sheet: the state is shown as its facts; a person moves by number or KIF."""
    path = Path(ggp.gdl.__file__).parent / "tictactoe.kif"
    game = ggp.load(path)
    first, second = game.roles
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n(mark 3 3)\nquit\n"))
    code = main(["play", str(path), f"--{first}", "human", f"--{second}", "random", "--seed", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "facts:" in out and "(cell 1 1 b)" in out
    assert "move 1: " in out and "game abandoned" in out


def test_play_a_prover_sheet_to_the_end(prover_sheet: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", prover_sheet, "--p", "random", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "(at a)" in out and "game over: p 100" in out


def test_a_slow_load_reports_its_stage(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The grounding waits until the progress line has been written: the line cannot be missed."""
    reported = threading.Event()

    class Err(io.StringIO):
        def write(self, text: str) -> int:
            n = super().write(text)
            if "grounding" in self.getvalue():
                reported.set()
            return n

    real_ground = gdl_build.ground

    def slow_ground(program: object) -> object:
        assert reported.wait(30), "no progress line while grounding"
        return real_ground(program)  # type: ignore[arg-type]

    monkeypatch.setattr(gdl_build, "ground", slow_ground)
    path = tmp_path / "reach_slow.kif"
    path.write_text(REACH)
    err = Err()
    game = load_game(str(path), err=err, first=0.0)
    assert game.roles == ("p",)
    assert "loading " + str(path) + ": grounding the rules" in err.getvalue()
    load_text.cache_clear()


def test_bench_corpus_quick(capsys: pytest.CaptureFixture[str]) -> None:
    """``ggp bench --corpus``: transitions/s per sheet, the native ratio where ggp has the game, the median."""
    import json

    from ggp.bench.corpus import QUICK

    assert main(["bench", "--quick", "--corpus", "--json"]) == 0
    (section,) = json.loads(capsys.readouterr().out)["sections"].values()
    assert section["status"] == "ok", section["error"]
    *rows, median = section["rows"]
    assert [r["sheet"] for r in rows] == sorted(QUICK)
    assert all(r["engine"] == "propnet" and r["kernel"] > 0 and r["load"] > 0 for r in rows)
    (amazons,) = [r for r in rows if r["sheet"] == "amazons_8x8"]
    assert amazons["native"] > 0 and amazons["ratio"] == pytest.approx(amazons["native"] / amazons["kernel"])
    rates = sorted(r["kernel"] for r in rows)
    assert median["sheet"] == "median of 3 sheets" and median["kernel"] == rates[1]
    assert main(["bench", "--corpus", "--only", "random"]) == 2
    assert "--corpus is --only corpus" in capsys.readouterr().err
