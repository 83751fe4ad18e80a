"""Shared fixtures: where the shared specification files live."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# `ggp web` servers the tests start skip the launch warm-up (a child compiling every game at low priority):
# the suite compiles what it plays itself, and a warm-up per server would only add load.
os.environ.setdefault("GGP_WEB_WARM", "0")
# ../shared beside the repository, or GGP_SHARED when it lives elsewhere.
SHARED = Path(os.environ.get("GGP_SHARED", Path(__file__).resolve().parents[2] / "shared"))
TRACES = SHARED / "traces"
GAME_NAMES = ["amazons_10x10", "amazons_8x8", "bomberman", "bomberman2p", "wallmaze"]


def sheet_text(which: str) -> tuple[str, str]:
    """A rule sheet's text and name, by ``kind:name``: ``shared:`` (../shared/gdl), ``corpus:`` (the GDL
    corpus), ``ggp:`` (ggp's own sheet of a built-in game), anything else ggp's tic-tac-toe."""
    kind, _, name = which.partition(":")
    if kind == "shared":
        return (SHARED / "gdl" / f"{name}.kif").read_text(), name
    if kind == "corpus":
        return (SHARED / "corpus" / "kif" / f"{name}.kif").read_text(), name
    if kind == "ggp":
        from ggp.gdl import rules_text

        return rules_text(name), name
    import ggp.gdl

    return (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), "tictactoe"


def read_traces(name: str) -> Iterator[dict[str, Any]]:
    path = TRACES / f"{name}.jsonl"
    if not path.is_file():
        pytest.fail(f"trace file {path} is missing: ../shared/ must sit beside the repository (or set GGP_SHARED)")
    with path.open() as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


# --- helpers shared by the rule and property tests ---------------------------------------------


def play(game: Any, state: Any, *joint_moves: Any) -> Any:
    """The state after playing ``joint_moves`` (each a sequence of move texts, in role order) from ``state``."""
    for joint in joint_moves:
        state = game.next_state(state, list(joint))
    return state


def legal_texts(game: Any, state: Any, role: str) -> set[str]:
    """The legal moves of ``role`` in ``state``, as a set of KIF texts."""
    return {str(m) for m in game.legal_moves(state, role)}


def snapshot(game: Any, state: Any) -> tuple[str, bytes, int]:
    """Everything that identifies a state's value: its JSON, its raw array and its hash."""
    return game.state_to_json(state), state.array.tobytes(), hash(state)


def replay(game: Any, name: str) -> int:
    """Replay every trace of ``name`` on ``game``, asserting legal sets, terminal flags, facts and goals."""
    replayed = 0
    for trace in read_traces(name):
        assert tuple(trace["roles"]) == game.roles
        state = game.initial_state()
        for i, step in enumerate(trace["steps"]):
            where = f"{name} seed {trace['seed']} state {i}"
            for role in game.roles:
                ours = sorted(str(m) for m in game.legal_moves(state, role))
                assert ours == step["legal"][role], f"{where}: legal moves of {role}"
            assert game.is_terminal(state) is step["terminal"], f"{where}: terminal flag"
            assert game.state_facts(state) == sorted(step["facts"]), f"{where}: facts"
            state = game.next_state(state, [game.parse_move(m) for m in step["joint"]])
        final = trace["final"]
        where = f"{name} seed {trace['seed']} final state"
        assert game.is_terminal(state) is True, where
        assert game.goals(state) == tuple(final["goals"][r] for r in game.roles), where
        for role in game.roles:
            assert sorted(str(m) for m in game.legal_moves(state, role)) == final["legal"][role], where
        assert game.state_facts(state) == sorted(final["facts"]), where
        replayed += 1
    return replayed


# --- the browser tests' browser (tests/test_web_browser.py, tests/test_web_play_browser.py) -------------------
#: Debian's chromium, driven by Playwright; GGP_CHROMIUM names another.
CHROMIUM = os.environ.get("GGP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


#: How a browser test skipped for want of chromium says so (counted by the last line of the run).
NO_CHROMIUM = "no chromium at"
#: The one command that enables the browser tests (``make test`` runs it when this user may install packages).
ENABLE_CHROMIUM = "sudo apt-get install chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for a module's tests; without it they are skipped, except under CI (``CI`` set)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        message = f"{NO_CHROMIUM} {CHROMIUM}: `{ENABLE_CHROMIUM}` enables the browser tests"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def watch_page(page: Any) -> list[str]:
    """What went wrong on ``page`` while a test drove it, as it happens: uncaught JavaScript errors, console
    errors (a failed resource among them) and requests that got no answer (not those aborted by leaving the
    page). Every page a test visits is watched,
    and the test fails if the list is not empty at its end."""
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"JavaScript error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.on("requestfailed", lambda req: _failed(problems, req))
    return problems


def _failed(problems: list[str], request: Any) -> None:
    # A page left while a request is open (an event stream, a form being answered) aborts it: no failure.
    if "ERR_ABORTED" not in str(request.failure):
        problems.append(f"request failed: {request.method} {request.url} {request.failure}")


def _skipped_for_chromium(config: pytest.Config) -> int:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return 0
    return sum(1 for report in reporter.stats.get("skipped", []) if NO_CHROMIUM in str(report.longrepr))


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's last line, after pytest's counts, when browser tests were skipped because chromium is missing:
    how many, and the one command that enables them (only the skip reasons said so before)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        return
    skipped = _skipped_for_chromium(config)
    if skipped:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(
            f"{skipped} browser test{'s' if skipped != 1 else ''} skipped: chromium is not installed ({CHROMIUM}); "
            f"`{ENABLE_CHROMIUM}` enables them (make test installs it when you may install packages)",
            yellow=True,
            bold=True,
        )


#: Timing-sensitive tests in files whose own marks are kept elsewhere: marked ``timing`` here, so that
#: ``make test-stress`` (and CI) run them beside the CPU hog too.
TIMING_TESTS = {
    "test_protocol.py": {
        "test_an_agent_that_never_answers_still_gets_a_legal_move_in_time",
        "test_a_play_waits_part_of_its_clock_for_an_agent_still_starting",
    },
    "test_protocol_matches.py": {"test_illegal_malformed_late_and_failed_replies_are_replaced_and_recorded"},
    "test_gdl_ii_protocol.py": {"test_the_belief_player_behind_ggp_serve_switches_doors"},
    "test_general_player.py": {"test_no_reply_is_late_over_a_whole_match_at_a_one_second_clock"},
}


#: The files whose tests run every compiled function: ``make test`` runs them (but their slow ones) with numba's
#: bounds checks on, marked ``bounds_checked``.
BOUNDS_CHECKED_FILES = {
    "test_kernel_bounds.py",
    "test_agent_options.py",
    "test_uct.py",
    "test_vector.py",
    "test_perft.py",
    "test_amazons_endgame.py",
    "test_wallmaze_player.py",
    "test_players.py",
    "test_traces.py",
    "test_gdl_differential.py",
    "test_action_core.py",
    "test_solver.py",
    "test_rl_gymnasium.py",
    "test_rl_pettingzoo.py",
    "test_gdl_compiled.py",
    "test_gdl_lanes.py",
    "test_gdl_ii.py",
    "test_heuristic.py",
    "test_greedy.py",
    "test_factor.py",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in BOUNDS_CHECKED_FILES:
            item.add_marker(pytest.mark.bounds_checked)
        names = TIMING_TESTS.get(item.path.name)
        if names and getattr(item, "originalname", item.name) in names:
            item.add_marker(pytest.mark.timing)
    # The slow tests (minutes each, on one worker) first: begun last, one of them would leave the other
    # workers idle at the end of the run.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def isolated_agents() -> Iterator[None]:
    """Undo the registrations of an agent module imported in this process (by a CLI run)."""
    from ggp.agents import AGENTS

    saved = dict(AGENTS)
    modules = set(sys.modules)
    yield
    AGENTS.clear()
    AGENTS.update(saved)
    for name in set(sys.modules) - modules:
        if name.startswith("ggp_agent_module_"):
            del sys.modules[name]


def wait_until_available(url: str, log: Path, within: float = 1800.0) -> None:
    """Wait until the GGP player at ``url`` answers INFO with ``available``: a launched ``ggp serve`` says
    ``busy`` while its warm-up compiles (minutes on a cold numba cache). ``within`` only bounds a hang."""
    import time

    import httpx

    end = time.monotonic() + within
    while True:
        reply = httpx.post(url + "/", content="(INFO)", headers={"Content-Type": "text/acl"}, timeout=30).text
        if "available" in reply.lower():
            return
        assert time.monotonic() < end, f"{url} still says {reply!r} after {within:g} s: {log.read_text()[-2000:]}"
        time.sleep(0.2)  # polling the player's own answer, with a deadline


def race_lost_to_sancho(game: Any) -> Any:
    """breakthroughSmall (``game``), white to move at step 17 of a match lost to Sancho (2026-11-28): every move
    looks alike to a search of the root, but after (move 1 3 1 4) black wins by force with (move 2 4 1 3)."""
    white = ["(move 3 2 4 3)", "(move 2 1 3 2)", "(move 4 2 3 3)", "(move 2 2 3 3)"]
    white += ["(move 3 1 2 2)", "(move 2 2 3 3)", "(move 1 1 2 2)", "(move 1 2 1 3)"]
    black = ["(move 1 5 2 4)", "(move 1 6 1 5)", "(move 2 4 3 3)", "(move 3 5 2 4)"]
    black += ["(move 2 4 3 3)", "(move 2 5 2 4)", "(move 2 6 3 5)", "(move 5 5 4 4)"]
    state = game.initial_state()
    for w, b in zip(white, black, strict=True):
        state = game.next_state(state, [game.parse_move(w), game.parse_move("noop")])
        state = game.next_state(state, [game.parse_move("noop"), game.parse_move(b)])
    return state
