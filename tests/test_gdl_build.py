"""A sheet's network is made once: built here, or by a child process in a player (``ggp serve``, ``ggp web``),
and kept in ggp's cache folder for the sheet's next load."""

from __future__ import annotations

import gc
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import sheet_text
from ggp.gdl import GDLError, ProverGame, aside, build, load_text
from ggp.gdl.build import FROM_CACHE, HERE, IN_CHILD, Built, build_here, keep
from ggp.gdl.game import GDLGame
from ggp.gdl.grounder import GroundingTooLarge
from ggp.gdl.memory import no_cyclic_gc
from ggp.gdl.parser import parse_program
from ggp.gdl.sheet import GDLLimitError, bounded


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("GGP_CACHE", str(tmp_path))
    return tmp_path / "networks"


@pytest.fixture
def in_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """Children build the networks (as in ``ggp serve``), every sheet, however small, and every network is kept."""
    monkeypatch.setattr(aside, "_on", threading.Event())
    aside.compile_aside()
    monkeypatch.setattr(build, "TRY_HERE_SECONDS", 0.0)
    monkeypatch.setattr(build, "KEEP_IF_SECONDS", 0.0)


def same_network(game: GDLGame, built: Built) -> bool:
    pa, pb = game.propnet, built.propnet
    arrays = all(np.array_equal(x, y) for x, y in zip(pa.net, pb.net, strict=True))
    texts = (pa.base_texts, pa.move_texts, pa.roles) == (pb.base_texts, pb.move_texts, pb.roles)
    inputs = tuple(tuple(game.declared_inputs(r)) for r in game.roles)
    return arrays and texts and (tuple(game.declared_base), inputs) == (built.declared_base, built.declared_inputs)


def test_a_child_builds_the_network_this_process_would_and_the_next_load_reads_it(cache: Path, in_child: None) -> None:
    text, _ = sheet_text("corpus:connectFour")
    here = build_here(parse_program(text, "c4"))
    first = GDLGame(text, "c4")
    assert first.network_source == IN_CHILD and same_network(first, here)
    second = GDLGame(text, "c4-again")
    assert second.network_source == FROM_CACHE and second.ground_seconds == 0.0 and same_network(second, here)
    moves = [[m.text for m in g.legal_moves(g.initial_state(), "red")] for g in (first, second)]
    assert moves[0] == moves[1] and len(moves[0]) == 8
    assert len(list(cache.glob("*.pickle"))) == 1


def test_a_small_sheet_is_built_here_and_not_kept(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "_on", threading.Event())
    aside.compile_aside()
    game = GDLGame(sheet_text("tictactoe")[0], "ttt-small")
    assert game.network_source == HERE  # it grounds in far less than half a second: no child's start paid
    assert not cache.exists() or not list(cache.glob("*.pickle"))


def test_a_sheet_too_large_to_ground_in_the_child_is_played_by_the_prover(cache: Path, in_child: None) -> None:
    text, name = sheet_text("corpus:ruleDepthExponential")
    with pytest.raises(GroundingTooLarge, match="too large to ground"):
        build._build_in_child(text, parse_program(text, name))
    game = load_text(text, name)
    load_text.cache_clear()
    assert isinstance(game, ProverGame) and "too large to ground" in game.engine_reason
    assert not cache.exists() or not list(cache.glob("*.pickle"))


def test_a_sheet_the_child_cannot_build_is_refused_here_with_its_line(cache: Path, in_child: None) -> None:
    text = "(role p)\n(init s)\n(<= (legal p go) (true s))\n(<= (next s) (does p go))\n(<= terminal (true s))\n(<= (goal p high) (true s))"
    with pytest.raises(GDLError, match="line 6: goal value high is not an integer"):
        GDLGame(text, "bad-goal")
    assert not cache.exists() or not list(cache.glob("*.pickle"))


def test_a_sheet_larger_than_a_pipe_holds_reaches_the_child_whole(cache: Path, in_child: None) -> None:
    text, _ = sheet_text("corpus:connectFour")
    text += "".join(
        f"; a comment line {i:06d}, to make the text longer than a pipe's 64 KiB buffer\n" for i in range(3000)
    )
    assert len(text.encode()) > 2 * 65536
    cancel = threading.Event()
    bound = threading.Timer(120.0, cancel.set)  # (a bound on a failure, which would otherwise wait for ever)
    bound.start()
    try:
        with bounded(cancel=cancel):
            got = build._build_in_child(text, parse_program(text, "c4-long"))
    finally:
        bound.cancel()
    assert got is not None
    assert same_network(GDLGame(sheet_text("corpus:connectFour")[0], "c4"), got[0])


def test_a_cancelled_load_stops_its_child(cache: Path, in_child: None, monkeypatch: pytest.MonkeyPatch) -> None:
    children: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        children.append(real(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(build.subprocess, "Popen", popen)
    cancel = threading.Event()
    cancel.set()  # (the child takes longer to start than the first look at the event: it is running then)
    text, _ = sheet_text("corpus:connectFour")
    program = parse_program(text, "c4")
    with bounded(cancel=cancel), pytest.raises(GDLLimitError, match="building the network was cancelled"):
        build._build_in_child(text, program)
    assert len(children) == 1 and children[0].returncode is not None  # ended, and reaped
    assert not cache.exists() or not list(cache.glob("*.pickle"))


def test_the_cache_keeps_the_most_recently_used_networks(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "KEEP", 2)
    built = build_here(parse_program(sheet_text("tictactoe")[0], "ttt"))
    paths = [cache / f"{n}.pickle" for n in ("a", "b", "c")]
    for age, path in enumerate(paths[:2]):
        keep(path, built)
        os.utime(path, (1_000_000 + age, 1_000_000 + age))  # a older than b
    keep(paths[2], built)
    assert sorted(p.name for p in cache.glob("*.pickle")) == ["b.pickle", "c.pickle"]


def test_a_damaged_cache_file_is_built_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "KEEP_IF_SECONDS", 0.0)
    text = sheet_text("tictactoe")[0]
    first = GDLGame(text, "ttt-kept")
    (path,) = cache.glob("*.pickle")
    path.write_bytes(b"not a network")
    again = GDLGame(text, "ttt-damaged")
    assert again.network_source == HERE and len(again.propnet.base_texts) == len(first.propnet.base_texts)
    assert GDLGame(text, "ttt-mended").network_source == FROM_CACHE


def test_the_collector_comes_back_when_the_last_pause_ends() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        with no_cyclic_gc():
            with no_cyclic_gc():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer block still runs
        assert gc.isenabled()
    finally:
        if not was:
            gc.disable()
