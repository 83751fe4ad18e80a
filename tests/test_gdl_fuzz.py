"""Differential fuzzing of the GDL engines (ggp.gdl.fuzz): the generator, the mutator, the comparer, the
shrinker, a bounded sample of the run CI makes each time, and the sheets the fuzzer found disagreements on.

``make fuzz-gdl`` runs the long version (see ``python -m ggp.gdl.fuzz --help``).
"""

from __future__ import annotations

import dataclasses
import io
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import SHARED
from ggp.gdl.fuzz import ENGINES, compare, generate, mutate, run, shrink
from ggp.gdl.fuzz.runner import main
from ggp.gdl.kernel import DIFFERENTIAL, gdl_kernel
from ggp.gdl.parser import GDLError, parse_program

CORPUS = SHARED / "corpus" / "kif"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # compiled networks of generated sheets are kept apart from the user's cache
    monkeypatch.setenv("GGP_CACHE", str(tmp_path_factory.getbasetemp() / "gdl-fuzz-cache"))


def test_generated_sheets_are_valid_gdl_and_the_same_for_a_seed() -> None:
    texts = [generate(seed) for seed in range(400)]
    for seed, text in enumerate(texts):
        program = parse_program(text, f"seed{seed}")  # (raises GDLError on a generator bug)
        assert program.roles and 1 <= len(program.roles) <= 3
        assert any(rule.relation == "terminal" for rule in program.rules)
        assert {str(rule.head[1]) for rule in program.rules if rule.relation == "goal"} & set(program.roles) or any(
            str(rule.head[1]).startswith("?") for rule in program.rules if rule.relation == "goal"
        )
    assert texts[:20] == [generate(seed) for seed in range(20)]
    assert len(set(texts)) == len(texts)
    # what the sheets are made of, over the sample
    joined = "\n".join(texts)
    for feature in ("(not ", "(distinct ", "(or ", "(not (distinct", "(does ", "(init (", "(<= (init", "(nbr ?y ?x)"):
        assert feature in joined, feature
    assert sum("(role " in t and t.count("(role ") == 3 for t in texts) > 20  # three roles
    assert sum("(control " in t for t in texts) > 50  # turn-taking, else simultaneous moves


def test_mutants_of_corpus_sheets_are_counted_when_invalid() -> None:
    text = (CORPUS / "connectFour.kif").read_text()
    rng = random.Random(1)
    kinds, valid = set(), 0
    for _ in range(30):
        mutant, how = mutate(text, rng)
        assert mutant != text or how.startswith("nothing")
        kinds.add(how.split()[0])
        try:
            parse_program(mutant, "mutant")
            valid += 1
        except GDLError:
            pass
    assert kinds == {"dropped", "negated", "swapped"}
    assert 0 < valid < 30


def test_the_engines_agree_on_a_sheet_and_its_walks() -> None:
    outcome = compare(generate(3), seed=3)
    assert outcome.status == "agreed", [str(d) for d in outcome.disagreements]
    assert outcome.states > 3
    assert set(outcome.engines) >= {"raw", "pn", "sweep", "differential", "lanes", "playouts"}


def test_an_invalid_sheet_is_invalid_not_a_disagreement() -> None:
    assert compare("(role p) (<= (legal p ?x) (not (true ?x)))").status == "invalid"


def _wrong_terminal(propnet: Any, mode: int) -> Any:
    """The real kernel, except that in differential mode a state is also terminal where its first and last
    facts both hold (a planted bug)."""
    kernel = gdl_kernel(propnet, mode)
    if mode != DIFFERENTIAL:
        return kernel
    real = kernel.terminal

    def terminal(ctx: Any, s: np.ndarray) -> bool:
        return bool(real(ctx, s)) or (s.size >= 2 and s[0] == 1 and s[-1] == 1)

    return dataclasses.replace(kernel, terminal=terminal)


def test_a_planted_disagreement_is_found_and_shrunk_to_a_small_sheet() -> None:
    engines = ("pn", "differential")
    for seed in range(100):
        text = generate(seed)
        found = compare(text, seed=seed, engines=engines, kernel_factory=_wrong_terminal)
        if found.status == "disagreed":
            break
    else:
        pytest.fail("the planted bug went unnoticed on 100 sheets")
    assert found.keys == {("differential", "terminal")}

    def still(candidate: str) -> bool:
        got = compare(candidate, seed=seed, engines=engines, kernel_factory=_wrong_terminal)
        return got.status == "disagreed" and ("differential", "terminal") in got.keys

    small = shrink(text, still, seconds=60)
    assert still(small)
    assert len(small.splitlines()) <= 6 < len(text.splitlines())
    assert compare(small, seed=seed, engines=engines).status == "agreed"  # the real kernel agrees


def test_an_engine_that_raises_is_a_disagreement() -> None:
    def broken(propnet: Any, mode: int) -> Any:
        kernel = gdl_kernel(propnet, mode)

        def legal(ctx: Any, s: np.ndarray, role: int, out: np.ndarray) -> int:
            raise IndexError("planted")

        return dataclasses.replace(kernel, legal=legal) if mode == DIFFERENTIAL else kernel

    outcome = compare(generate(5), seed=5, engines=("pn", "differential"), kernel_factory=broken)
    assert outcome.status == "disagreed"
    assert ("differential", "crash") in outcome.keys
    assert "IndexError: planted" in str(outcome.disagreements[0])


def test_a_bounded_sample_of_generated_sheets_and_corpus_mutants(tmp_path: Path) -> None:
    """What CI runs each time: 200 sheets, a tenth of them mutants of corpus sheets, every engine (the network
    compiled for one in 25), no disagreement and no generated sheet the parser rejects."""
    log = io.StringIO()
    counts = run(
        200,
        seed=20261126,
        corpus=CORPUS,
        mutant_share=0.1,
        out=tmp_path,
        compiled_every=25,
        walks=2,
        max_steps=10,
        log=log,
    )
    assert counts.tried == 200 and counts.mutants > 5
    assert counts.invalid_generated == 0, counts.saved
    assert counts.disagreed == 0, log.getvalue()
    assert counts.agreed >= 150 and counts.states > 1000
    assert (tmp_path / "summary.json").is_file()


def test_the_command_prints_its_counts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--count", "3", "--seed", "7", "--out", str(tmp_path), "--compiled-every", "0"]) == 0
    out = capsys.readouterr().out
    assert "tried 3, valid 3, agreed 3, disagreements 0" in out and "sheets/s" in out


@pytest.mark.slow
def test_a_longer_run() -> None:
    counts = run(2000, seed=777, corpus=CORPUS, mutant_share=0.1, compiled_every=20)
    assert counts.disagreed == 0 and counts.invalid_generated == 0


# --- regression tests: the sheets the fuzzer found disagreements on, shrunk ------------------------------------
REGRESSIONS: dict[str, str] = {}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_a_sheet_the_fuzzer_found_now_agrees(name: str) -> None:
    outcome = compare(REGRESSIONS[name], seed=0, engines=ENGINES)
    assert outcome.status == "agreed", [str(d) for d in outcome.disagreements]
