"""The public GDL corpus (``../shared/corpus``): every sheet loads and plays exactly as ggp-base traced it.

For every sheet with a trace, every traced random game is replayed on the
reasoner: at each state each role's legal moves (as KIF text, the sheet's
letter case kept), the terminal flag, and at the end the goals, in the trace's
role order. Every sheet ggp-base could trace (MANIFEST status ``ok``) must load.

The corpus is large, so by default (CI, ``make test``) a fixed third of the
sheets runs: the slowest to load, then every third of the others by name.
``make test-corpus`` (``GGP_CORPUS=all``) runs every sheet.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

import ggp
from conftest import SHARED
from ggp.gdl import GDLGame, ProverGame
from ggp.gdl.game import from_text, load_text
from ggp.gdl.grid import grid_of
from ggp.testing import check_game
from ggp.web import notation

CORPUS = SHARED / "corpus"

pytestmark = pytest.mark.corpus


def _manifest() -> dict[str, dict[str, Any]]:
    path = CORPUS / "MANIFEST.json"
    if not path.is_file():
        return {}
    data: dict[str, dict[str, Any]] = json.loads(path.read_text())
    return data


MANIFEST = _manifest()

#: Always in the CI third: the sheets slowest to load and replay (bench/corpus_load.py), where the grounder's
#: speed and bounds show, and one sheet for each thing the corpus needed of the reader and the grounder.
ALWAYS = [
    # slowest: 5 to 25 s each
    "chineseCheckers3",
    "racer4",
    "checkers-mustjump-torus",
    "gt_two_thirds_6p",
    "checkers-cylinder-mustjump",
    "chineseCheckers2",
    "quartoSuicide",
    "kalaha_2009",
    # goal rules negating goal for another value; a rule body nested deeper than Python compiles; walls kept
    # by frame rules and a static relation of 6.7 million rows asked about few; frame rules over moves x cells
    "futoshiki4",
    "nineBoardTicTacToePie",
    "hitori",
    "mummymaze1p",
    "brawl",
    "hex",
    # too large to ground, refused by the grounder's estimate before it grounds: played top-down
    "ruleDepthExponential",
]

#: Sheets that cannot load yet, and why.
EXPECTED_TO_FAIL: dict[str, str] = {}

#: Sheets left out of the CI third: too large to ground, they load only after grounding has given up (about
#: 8 s of processor time) and are then played by the top-down prover (ggp.gdl.prover), slowly on amazonsTorus
#: (about 0.25 s a state for its 4,000 legal moves since the prover's rule bodies are compiled). ``make test-corpus`` runs them; tests/test_gdl_prover.py
#: tests the fallback in CI. (ruleDepthExponential, whose prereqN holds for every N-bit string, 2^20 atoms for
#: N = 20, is refused by the grounder's estimate before it grounds, and runs in CI.)
NOT_IN_CI = {
    "amazonsTorus": "a move is a queen move and an arrow in one: 259,202 legal moves, 2.9 million rule instances",
}
#: The sheets too large to ground, played by the top-down prover.
ON_PROVER = {*NOT_IN_CI, "ruleDepthExponential"}


def ci_sheets(names: list[str]) -> list[str]:
    """The third of ``names`` that runs by default: :data:`ALWAYS`, then evenly spread others by name."""
    chosen = [n for n in ALWAYS if n in names]
    rest = [n for n in sorted(names) if n not in chosen and n not in EXPECTED_TO_FAIL and n not in NOT_IN_CI]
    want = -(-len(names) // 3) - len(chosen)
    step = max(1, len(rest) // max(1, want))
    chosen += rest[::step][: max(0, want)]
    return sorted(chosen)


ALL = sorted(MANIFEST)
SHEETS = ALL if os.environ.get("GGP_CORPUS", "").lower() == "all" else ci_sheets(ALL)
TRACED = [n for n in SHEETS if MANIFEST[n]["status"] == "ok"]
UNTRACED = [n for n in SHEETS if MANIFEST[n]["status"] != "ok"]


def _params(names: list[str]) -> list[Any]:
    if not MANIFEST:  # the test fails and says why, instead of vanishing
        return [pytest.param("(corpus missing)", id="corpus-missing")]
    return [
        pytest.param(n, id=n, marks=[pytest.mark.xfail(strict=True, reason=EXPECTED_TO_FAIL[n])])
        if n in EXPECTED_TO_FAIL
        else pytest.param(n, id=n)
        for n in names
    ]


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """Games are not kept in ggp's load cache after their test: a worker would hold dozens of big networks."""
    yield
    from_text.cache_clear()
    load_text.cache_clear()


def games_of(name: str) -> list[list[dict[str, Any]]]:
    """The traced games of ``name``, each a list of states in order."""
    games: dict[int, list[dict[str, Any]]] = {}
    with (CORPUS / "traces" / f"{name}.jsonl").open() as fh:
        for line in fh:
            if line.strip():
                step = json.loads(line)
                games.setdefault(step["game"], []).append(step)
    return [games[g] for g in sorted(games)]


def replay(game: GDLGame | ProverGame, name: str) -> int:
    """Replay every traced game of ``name``; returns the number of states compared."""
    compared = 0
    traced = games_of(name)
    assert traced, f"{name}: the trace holds no game"
    for steps in traced:
        state = game.initial_state()
        for k, step in enumerate(steps):
            where = f"{name} game {step['game']} step {step['step']}"
            assert step["step"] == k, f"{where}: the trace skips a step"
            assert list(game.roles) == step["roles"], f"{where}: roles"
            terminal = game.is_terminal(state)
            assert terminal is step["terminal"], f"{where}: terminal flag"
            compared += 1
            if terminal:  # the tracer records no legal moves in a terminal state, only the goals
                assert list(game.goals(state)) == step["goals"], f"{where}: goals"
                assert k == len(steps) - 1, f"{where}: the trace goes on past a terminal state"
                break
            for role in game.roles:
                ours = sorted(str(m) for m in game.legal_moves(state, role))
                assert ours == sorted(step["legal"][role]), f"{where}: legal moves of {role}"
            if step.get("truncated"):
                break
            assert "joint" in step, f"{where}: the trace ends neither terminal nor truncated"
            state = game.next_state(state, step["joint"])
    return compared


@pytest.mark.usefixtures("fresh_cache")
@pytest.mark.parametrize("name", _params(TRACED))
def test_sheet_loads_and_replays_every_traced_game(name: str) -> None:
    assert MANIFEST, f"the GDL corpus is missing: {CORPUS} must hold MANIFEST.json, kif/ and traces/"
    game = ggp.load(CORPUS / "kif" / f"{name}.kif")
    assert isinstance(game, ProverGame if name in ON_PROVER else GDLGame), f"{name}: {type(game).__name__}"
    assert replay(game, name) > 0
    # and the Game API's promises, along a random walk (short on the prover, which steps slowly)
    assert check_game(game, walks=1, max_steps=5 if name in ON_PROVER else 40, moves_per_role=8) > 0
    readable_along_a_walk(game, name)


def readable_along_a_walk(game: GDLGame | ProverGame, name: str) -> None:
    """On a sheet whose facts lay out a grid, every legal move along the first traced game reads as the squares
    it names (``knight b1-a3``, ``column c``), unique among its role's legal moves."""
    if grid_of(game) is None:
        return
    state = game.initial_state()
    for step in games_of(name)[0][:30]:
        if game.is_terminal(state):
            break
        for role in game.roles:
            moves = [m.text for m in game.legal_moves(state, role)]
            said = notation.readable_set(game, moves)
            assert len(set(said)) == len(said), f"{name} step {step['step']}: {role}'s moves read alike"
            for move, text in zip(moves, said, strict=True):
                named = grid_of(game).move_cells(move)  # type: ignore[union-attr]
                if named and said.count(notation.readable(game, move)) == 1:  # a square, or a column: c
                    where = notation.square(grid_of(game), *named[-1])  # type: ignore[arg-type]
                    assert text != move and (where in text or "column " in text), f"{name}: {move}"
        if "joint" not in step:
            break
        state = game.next_state(state, step["joint"])


@pytest.mark.usefixtures("fresh_cache")
@pytest.mark.parametrize("name", _params(UNTRACED))
def test_sheet_ggp_base_could_not_trace_loads_and_plays(name: str) -> None:
    """ggp-base's prover timed out on these: the propnet still loads them and plays a few random steps."""
    game = ggp.load(CORPUS / "kif" / f"{name}.kif")
    assert isinstance(game, ProverGame if name in ON_PROVER else GDLGame), f"{name}: {type(game).__name__}"
    state = game.initial_state()
    for _ in range(5):
        if game.is_terminal(state):
            break
        joint = [game.legal_moves(state, role)[0] for role in game.roles]
        state = game.next_state(state, joint)
    assert game.state_facts(state)
    assert check_game(game, walks=1, max_steps=5, moves_per_role=8) > 0


def test_ci_third_holds_the_slowest_sheets_and_a_third_of_all() -> None:
    assert MANIFEST, f"the GDL corpus is missing: {CORPUS} must hold MANIFEST.json, kif/ and traces/"
    chosen = ci_sheets(ALL)
    assert len(chosen) == -(-len(ALL) // 3)
    assert set(ALWAYS) <= set(chosen) <= set(ALL)
    assert chosen == ci_sheets(list(reversed(ALL)))  # fixed: the same sheets whatever the order found
