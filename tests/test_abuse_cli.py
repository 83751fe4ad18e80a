"""Hostile arguments to every ``ggp`` subcommand: a one-line error and exit code 2 (or 1), never a traceback.

Argument mistakes run in-process through :func:`ggp.cli.main`, many per test;
the crash-class cases (a spec that once killed the process, a tournament
worker that dies of a signal, endless input) run as real subprocesses, where
a death by signal shows as a negative return code.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ggp.agents import AGENTS, agent_options, make_agent
from ggp.cli import main

#: Seconds a whole ``ggp`` command run here may take: a guard against a hang, long enough for compiling on a
#: fresh clone's cold numba cache beside a CPU hog (make test-stress).
COMPILING = 1200
BUILTIN_AGENTS = ["amazons", "bomberman", "mcts", "random", "wallmaze"]
HOSTILE_VALUES = [
    "nan", "NaN", "inf", "-inf", "1e400", "1e300", "-1", "0", "-0", "1e-320", "", " ", "9" * 40, "0x10", "1_000",
    "1.5", "true", "none", "(", "\u00e9", "1=2", "\x00", "a\nb", "\x1b[31m",
]  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code: int, err: str, says: str, expected: int = 2) -> str:
    """Refused with ``expected``, an error on one (last) line naming ``says``, no traceback."""
    assert code == expected, err
    assert "Traceback" not in err
    lines = err.rstrip("\n").split("\n")
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1 and errors[0] == lines[-1], err
    assert says in errors[0], err
    return errors[0]


# --- agent specs: make_agent is the one judge, at every door -----------------------------------------------------
def hostile_specs() -> list[str]:
    specs = []
    for name in BUILTIN_AGENTS:
        for option in agent_options(name):
            specs.extend(f"{name}:{option}={value}" for value in HOSTILE_VALUES)
    specs += ["", " ", ":", "mcts:", "mcts:,", "mcts:c", "mcts:=1", "mcts:c=1,c=2", "MCTS:C=NAN", "nosuch:x=1"]
    return specs


def builds(spec: str) -> bool:
    try:
        make_agent(spec.strip())
    except ValueError:
        return False
    return True


def test_every_hostile_option_value_is_judged_at_the_door(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert set(BUILTIN_AGENTS) <= set(AGENTS)
    db = str(tmp_path / "t.sqlite")
    others = [f"random:seed={i}" for i in range(1, 11)]
    specs = hostile_specs()
    refused = 0
    for i, spec in enumerate(specs):
        good = builds(spec)
        refused += not good
        # each door fails on purpose after the spec: the spec is named only if the door refused it
        doors = [
            (["match", "wallmaze", "--white", spec, "--games", "0"], "argument --white", "argument --games"),
            (["serve", spec, "--port", "70000"], "argument SPEC", "argument --port"),
        ]
        if i % 4 == 0:  # a quarter of them at the slower doors
            doors += [
                (["play", "wallmaze", "--white", spec, "--seed", "-1"], "argument --white", "argument --seed"),
                (
                    ["host", "wallmaze", "--player", f"white={spec}", "--playclock", "0"],
                    "argument --player",
                    "--playclock",
                ),
                (
                    ["tournament", "wallmaze", spec, *others, "--games", "10000", "--db", db],
                    "agent ",
                    "at most 100,000",
                ),
            ]
        for argv, if_refused, if_built in doors:
            code, out, err = run(capsys, argv)
            assert_refused(code, err, if_built if good else if_refused)
            assert out == "", argv
    assert refused > len(specs) // 2  # most hostile values are refused...
    assert refused < len(specs)  # ...and the sweep also saw values that build (0, 1.5, true, none, ...)
    assert not Path(db).exists()  # nothing was scheduled


SPEC_CRASHES = """
import sys
from ggp.cli import main
codes = [
    main(["match", "wallmaze", "--white", "mcts:c=nan", "--games", "1", "--playclock", "0.2"]),
    main(["play", "wallmaze", "--white", "mcts:c=-1", "--black", "random"]),
    main(["host", "wallmaze", "--player", "white=mcts:c=nan", "--playclock", "0.2"]),
    main(["tournament", "wallmaze", "random", "mcts:c=nan", "--db", sys.argv[1]]),
    main(["serve", "mcts:c=inf", "--port", "0"]),
    # options at the edges of their ranges build and play: no crash either
    main(["match", "amazons_8x8", "--white", "mcts:c=0,capacity=2,sims=1", "--black", "amazons:c=100,capacity=2,sims=1",
          "--games", "1", "--playclock", "0.5", "--seed", "4294967295"]),
    main(["match", "wallmaze", "--white", "wallmaze:time=0.01,capacity=2", "--black", "mcts:sims=1,c=100",
          "--games", "1", "--playclock", "0.5"]),
]
print("codes", codes)
"""


def test_specs_that_crashed_the_process_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    proc = subprocess.run(
        [sys.executable, "-c", SPEC_CRASHES, str(db)], capture_output=True, text=True, timeout=COMPILING, check=False
    )
    assert proc.returncode == 0, f"died with {proc.returncode}: {proc.stderr[-3000:]}"
    assert "codes [2, 2, 2, 2, 2, 0, 0]" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 5 and all("must be" in line for line in errors), errors
    assert not db.exists()


# --- numbers, clocks, names, paths -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["perft", "wallmaze", "99999999999999999999"], "too large: at most 64"),
        (["perft", "wallmaze", "65"], "at most 64"),
        (["perft", "wallmaze", "nan"], "not a whole number"),
        (["perft", "wallmaze", "1" * 5000], "not a whole number"),
        (["random", "wallmaze", "--games", "10000001"], "at most 1,000,000"),
        (["random", "wallmaze", "--games", "0"], "at least 1"),
        (["random", "wallmaze", "--seed", "4294967296", "--compiled"], "at most 4,294,967,295"),
        (["random", "wallmaze", "--seed", "-1"], "is negative"),
        (["random", "wallmaze", "--seed", "1e3"], "not a whole number"),
        (["match", "wallmaze", "--playclock", "1e300"], "too long: at most 86400"),
        (["match", "wallmaze", "--playclock", "nan"], "positive number of seconds"),
        (["match", "wallmaze", "--startclock=-inf"], "positive number of seconds"),
        (["match", "wallmaze", "--startclock", "0"], "positive number of seconds"),
        (["match", "wallmaze", "--grace", "61"], "at most 60"),
        (["match", "wallmaze", "--grace", "-0.5"], "0 or a positive number"),
        (["match", "wallmaze", "--games", "99999999"], "at most 1,000,000"),
        (["match", "wallmaze", "--seed", "99999999999"], "at most 4,294,967,295"),
        (["match", "wallmaze", "--swap", "--black", "human"], "unknown agent 'human'"),
        (["tournament", "wallmaze", "random", "mcts", "--playclock", "inf"], "positive number of seconds"),
        (["tournament", "wallmaze", "random", "mcts", "--startclock", "86401"], "at most 86400"),
        (["tournament", "wallmaze", "random", "mcts", "--grace", "nan"], "0 or a positive number"),
        (["tournament", "wallmaze", "random", "mcts", "--games", "10001"], "at most 10,000"),
        (["tournament", "wallmaze", "random", "mcts", "--workers", "100000"], "at most 64"),
        (["tournament", "wallmaze", "random", "mcts", "--workers", "0"], "at least 1"),
        (["tournament", "wallmaze", "random", "mcts", "--stall-timeout", "nan"], "positive number of seconds"),
        (["tournament", "wallmaze", "random", "mcts", "--seed", "-3"], "is negative"),
        (["tournament", "wallmaze", "random", "mcts", "--limit", "0"], "at least 1"),
        (["web", "--port", "70000"], "at most 65,535"),
        (["web", "--port", "-1"], "is negative"),
        (["serve", "random", "--port", "99999999999"], "at most 65,535"),
        (["serve", "random", "--margin", "nan"], "0 or a positive number"),
        (["serve", "random", "--margin", "1e300"], "at most 86400"),
        (["serve", "random", "--idle-timeout", "0"], "positive number of seconds"),
        (["serve", "random", "--idle-timeout", "-1"], "positive number of seconds"),
        (["serve", "random", "--name", "two words"], "not one word"),
        (["serve", "random", "--name", "a)b"], "not one word"),
        (["serve", "random", "--name", ""], "not one word"),
        (["serve", "random", "--name", "x" * 201], "not one word"),
        (["serve", "random", "--seed", "4294967296"], "at most 4,294,967,295"),
        (["host", "wallmaze", "--playclock", "nan"], "positive number of seconds"),
        (["host", "wallmaze", "--playclock", "1e300"], "at most 86400"),
        (["host", "wallmaze", "--startclock", "0"], "positive number of seconds"),
        (["host", "wallmaze", "--grace", "inf"], "0 or a positive number"),
        (["host", "wallmaze", "--grace", "100"], "at most 60"),
        (["host", "wallmaze", "--match-id", "a b"], "not one word"),
        (["host", "wallmaze", "--match-id", "m(1)"], "not one word"),
        (["host", "wallmaze", "--player", "white"], "expected ROLE=URL or ROLE=SPEC"),
        (["host", "wallmaze", "--player", "=random"], "expected ROLE=URL or ROLE=SPEC"),
        (["host", "wallmaze", "--player", "white=http://[::1"], "not a URL"),
        (["host", "wallmaze", "--player", "white=http://127.0.0.1:99999/"], "not a URL"),
        (["host", "wallmaze", "--player", "white=http:///nohost"], "not a URL like"),
        (["host", "wallmaze", "--player", "white=http://a b:1/"], "spaces"),
        (["play", "wallmaze", "--white", "mcts:sims=0"], "sims must be"),
        (["play", "wallmaze", "--seed", "99999999999"], "at most 4,294,967,295"),
        (["bench", "--only", "nonsense"], "the sections are"),
    ],
)
def test_bad_numbers_names_and_urls_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    code, out, err = run(capsys, argv)
    assert_refused(code, err, says)
    assert out == ""


def test_bad_paths_are_refused_before_anything_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    under_file = str(a_file / "sub" / "x.json")
    cases = [
        (["host", "wallmaze", "--out", str(folder)], "is a folder; give a file name"),
        (["host", "wallmaze", "--out", under_file], "is not a folder"),
        (["host", "wallmaze", "--out", "/proc/ggp-test/record.json"], "cannot write in"),
        (["host", "wallmaze", "--out", ""], "empty path"),
        (["match", "wallmaze", "--out", str(a_file)], "exists and is not a folder"),
        (["match", "wallmaze", "--out", str(a_file / "sub")], "is not a folder"),
        (["match", "wallmaze", "--out", "/proc/ggp-test"], "cannot write in"),
        (["tournament", "wallmaze", "random", "mcts", "--db", str(folder)], "is a folder"),
        (["tournament", "wallmaze", "random", "mcts", "--db", under_file], "is not a folder"),
        (["tournament", "wallmaze", "random", "mcts", "--db", "/proc/ggp-test.sqlite"], "cannot write in"),
        (["tournament", "--report", "--db", str(folder)], "no tournament database"),
        (["tournament", "--report", "--db", str(a_file)], "file is not a database"),  # once overwritten by SQLite
        (["tournament", "wallmaze", "random", "mcts", "--db", str(a_file)], "file is not a database"),
        (["replay", str(folder)], "cannot read match record"),
        (["replay", str(tmp_path / "missing.json")], "cannot read match record"),
        (["replay", str(a_file)], "not JSON"),
    ]
    for argv, says in cases:
        code, out, err = run(capsys, argv)
        assert_refused(code, err, says)
        assert "step 1" not in out, argv  # no match was played
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "folder"]  # nothing written
    assert a_file.read_text() == "x"
    assert not any(folder.iterdir())


def test_hostile_rule_sheets_and_game_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.kif"
    garbage.write_bytes(bytes(range(256)) * 20)
    nul = tmp_path / "nul.kif"
    nul.write_bytes(b"(role a)\x00(init b)")
    deep = tmp_path / "deep.kif"
    deep.write_text("(role p) (init " + "(f " * 20_000 + "x" + ")" * 20_000 + ")")
    huge = tmp_path / "huge.kif"
    with huge.open("wb") as fh:  # 17 MiB of nothing, without writing them
        fh.truncate(17 * 2**20)
    unsafe = tmp_path / "unsafe.kif"
    unsafe.write_text("(role p)\n(<= (legal p ?m) (true s))\n")
    deep_record = tmp_path / "deep.json"
    deep_record.write_text("[" * 100_000 + "]" * 100_000)
    cases = [
        (["perft", str(tmp_path / "missing.kif"), "1"], "no such rule sheet"),
        (["perft", str(garbage), "1"], "must be UTF-8 text"),
        (["show", str(nul)], "holds NUL bytes"),
        (["random", str(deep), "--games", "1"], "nest more than 100 deep"),
        (["host", str(huge)], "at most 16 MiB"),
        (["show", str(unsafe)], "line 2: unsafe rule"),
        (["match", str(garbage)], "must be UTF-8 text"),
        (["replay", str(deep_record)], "nests too deeply"),
        (["show", ""], "neither a game nor a rule sheet"),
        (["show", "\x00"], "neither a game nor a rule sheet"),
        (["show", "../../no/such/game"], "unknown game"),
        (["show", "a\nb"], "unknown game"),
        (["show", "x" * 100_000], "neither a game nor a rule sheet"),
        (["host", "a\x00b"], "neither a game nor a rule sheet"),
        (["rules", str(garbage)], "no rule sheet for"),
        (["play", "chess"], "unknown game 'chess'"),
        (["tournament", "chess", "random", "mcts", "--db", str(tmp_path / "t.sqlite")], "unknown game"),
    ]
    for argv, says in cases:
        code, _, err = run(capsys, argv)
        line = assert_refused(code, err, says)
        assert len(line) < 2100, argv  # long names are clipped
    assert not (tmp_path / "t.sqlite").exists()


def test_endless_input_is_read_only_so_far() -> None:
    # /dev/zero as a match record: once read until memory ran out
    proc = subprocess.run(
        [sys.executable, "-m", "ggp", "replay", "/dev/zero"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 2 and "larger than 64 MiB" in proc.stderr and "Traceback" not in proc.stderr


# --- tournaments whose workers die ---------------------------------------------------------------------------------
SEGV_AGENTS = """
import multiprocessing
import os
import signal
import time

from ggp.agents import AGENTS, Agent


class Segfault(Agent):
    '''Dies of SIGSEGV in its first move, as a crash in compiled code would.'''

    def select_move(self, state, time_limit=None):
        os.kill(os.getpid(), signal.SIGSEGV)


AGENTS["segv"] = Segfault
if os.environ.get("GGP_TEST_HANG_WORKERS") and multiprocessing.current_process().name == "ggp-tournament-worker":
    time.sleep(3600)  # a module that hangs on import, in the workers only
"""


def test_a_tournament_whose_worker_dies_of_a_signal_goes_on(tmp_path: Path) -> None:
    module = tmp_path / "segv_agents.py"
    module.write_text(textwrap.dedent(SEGV_AGENTS))
    db = tmp_path / "t.sqlite"
    argv = ["tournament", "wallmaze", "random:seed=1", "random:seed=2", "segv", "--games", "1", "--workers", "2"]
    proc = subprocess.run(
        [sys.executable, "-m", "ggp", *argv, "--db", str(db), "--agent-module", str(module), "--playclock", "0.5"],
        capture_output=True,
        text=True,
        timeout=COMPILING,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "killed by SIGSEGV" in proc.stdout and "given up" in proc.stdout, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    with sqlite3.connect(db) as conn:
        statuses = dict(conn.execute("SELECT status, count(*) FROM matches GROUP BY status").fetchall())
        assert statuses == {"done": 2, "failed": 4}, statuses  # the segv agent's 4 matches failed, the rest played
        # no half-written result: a result for every done match and for nothing else
        rows = conn.execute("SELECT m.status FROM results r JOIN matches m ON m.id = r.match_id").fetchall()
        assert [r[0] for r in rows] == ["done", "done"]
        crashes = conn.execute("SELECT count(*) FROM events WHERE kind = 'crash'").fetchone()[0]
        assert crashes == 4 * 3  # each failed match was tried three times


def test_a_tournament_whose_workers_never_start_stops_with_a_clear_message(tmp_path: Path) -> None:
    module = tmp_path / "segv_agents.py"
    module.write_text(textwrap.dedent(SEGV_AGENTS))
    db = tmp_path / "t.sqlite"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "ggp", "tournament", "wallmaze", "random:seed=1", "random:seed=2"),
            *("--games", "1", "--workers", "1", "--stall-timeout", "1", "--db", str(db)),
            *("--agent-module", str(module)),
        ],
        capture_output=True,
        text=True,
        timeout=COMPILING,
        check=False,
        env={**os.environ, "GGP_TEST_HANG_WORKERS": "1"},
    )
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert "worker processes fail to start (no sign of life for 1 s)" in last and "agent modules" in last, last
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM matches WHERE status = 'running'").fetchone()[0] == 0


def test_no_signal_deaths_from_the_command_line() -> None:
    """A few whole commands as a user types them: never a death by signal (returncode < 0)."""
    for argv in (
        ["perft", "wallmaze", "65"],
        ["random", "wallmaze", "--games", "2", "--seed", "4294967295", "--compiled"],
        ["match", "wallmaze", "--white", "mcts:c=nan"],
        ["serve", "mcts:capacity=1"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "ggp", *argv], capture_output=True, text=True, timeout=COMPILING, check=False
        )
        assert proc.returncode >= 0, (argv, proc.returncode, signal.Signals(-proc.returncode).name)
        assert "Traceback" not in proc.stderr, argv
        assert proc.returncode == (0 if argv[0] == "random" else 2), (argv, proc.stderr)
