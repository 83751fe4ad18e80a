"""Ready means ready: on a bare install (empty numba and ggp caches), ``ggp serve mcts``'s first match, on a
rule sheet it has never seen with a 30 s start clock, is played by its agent from the first move to the last.

The player answers INFO ``busy`` while its warm-up compiles; the host, as a GGP game manager does, waits for
``available`` before START. Minutes of compiling: ``slow``. What the player compiled is then added to this
process's caches (``keep``), so the tests that ``make test`` runs after this one start warm.
"""

from __future__ import annotations

import pytest

from conftest import SHARED
from ggp.bench.startup import FIRST_MATCH_SHEET, first_match


@pytest.mark.slow
def test_a_bare_installs_first_match_on_an_unseen_sheet_plays_no_random_move() -> None:
    sheet = SHARED / "corpus" / "kif" / f"{FIRST_MATCH_SHEET}.kif"
    if not sheet.is_file():
        pytest.fail(f"{sheet} is missing: ../shared/ must sit beside the repository (or set GGP_SHARED)")
    got = first_match(sheet, start_clock=30.0, play_clock=2.0, keep=True)
    log = "\n".join(got["log"][-40:])
    assert got["warm"] is not None and got["started"] is not None and got["started"] >= got["warm"], log
    assert got["sent"] and got["sent"] > 0, log
    assert got["random"] == 0 and got["fallbacks"] == 0, log  # neither the prover's picks nor random moves
    assert not got["faults"], got["faults"]
