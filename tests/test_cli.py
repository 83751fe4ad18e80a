"""The ``ggp`` command line, through ``ggp.cli.main`` and (twice) ``python -m ggp``."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

import ggp
import ggp.agents
from conftest import GAME_NAMES
from ggp.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def play(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lines: list[str], *argv: str
) -> tuple[int, str, str, io.StringIO]:
    """Run ``ggp play ...`` with ``lines`` as the person's input."""
    stdin = io.StringIO("".join(line + "\n" for line in lines))
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, err = run(capsys, "play", *argv)
    return code, out, err, stdin


def api_perft(game: ggp.Game, state: ggp.State, depth: int) -> int:
    if game.is_terminal(state):
        return 0
    if depth == 0:
        return 1
    return sum(api_perft(game, game.next_state(state, joint), depth - 1) for joint in game.joint_moves(state))


# --- games, show --------------------------------------------------------------------------------------
def test_games_lists_all_five_with_descriptions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "games")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == GAME_NAMES
    for name, line in zip(GAME_NAMES, lines, strict=True):
        assert line.endswith(ggp.load(name).description)
    assert "\x1b[" not in out  # no colour codes when not writing to a terminal


def test_show_renders_initial_position(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "amazons_8x8")
    game = ggp.load("amazons_8x8")
    assert code == 0
    assert str(game.initial_state()) in out
    assert "white to move an amazon" in out
    assert "roles: white, black" in out


def test_unknown_game_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["show", "x"], ["perft", "x", "1"], ["random", "x"], ["play", "x"]):
        code, out, err = run(capsys, *argv)
        assert code == 2, argv
        assert err.startswith("ggp: error: unknown game 'x'; the built-in games are: amazons_10x10, "), argv
        assert "Traceback" not in out + err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["fly"]) == 2
    assert main(["perft", "wallmaze", "-1"]) == 2
    assert main(["random", "wallmaze", "--games", "0"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'fly'" in err
    assert "-1 is negative" in err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert main(["play", "wallmaze", "--help"]) == 0
    out = capsys.readouterr().out
    assert "perft" in out
    assert "--white PLAYER" in out and "--black PLAYER" in out


def test_web_passes_its_options_to_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    calls: list[tuple[object, ...]] = []

    def fake_serve(host: str, port: int, db: str | None, allowed_hosts: list[str]) -> int:
        calls.append((host, port, db, allowed_hosts))
        return 0

    monkeypatch.setattr("ggp.web.server.serve", fake_serve)
    argv = ["web", "--port", "0", "--db", "x.sqlite", "--allow-host", "a.example", "--allow-host", "b.example"]
    assert main(argv) == 0
    assert calls == [("127.0.0.1", 0, "x.sqlite", ["a.example", "b.example"])]


# --- perft --------------------------------------------------------------------------------------------
def test_perft_amazons_8x8_depth_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "perft", "amazons_8x8", "2")
    assert code == 0
    assert out.splitlines()[-1] == "1232"


def test_perft_wallmaze_matches_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    game = ggp.load("wallmaze")
    expected = api_perft(game, game.initial_state(), 3)
    assert expected > 8  # more than one joint move per step, so the count says something
    code, out, _ = run(capsys, "perft", "wallmaze", "3")
    assert code == 0
    assert out.splitlines()[-1] == str(expected)
    code, out, _ = run(capsys, "perft", "wallmaze", "3", "--api")
    assert code == 0
    assert out.splitlines()[-1] == str(expected)


def test_perft_depth_0_counts_the_empty_sequence(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "perft", "bomberman", "0")
    assert (code, out.splitlines()[-1]) == (0, "1")


# --- random -------------------------------------------------------------------------------------------
def outcome_rows(out: str) -> dict[str, int]:
    rows = re.findall(r"^\s+(white \d+ / black \d+)\s+(\d+)\s+[\d.]+%$", out, re.MULTILINE)
    return {label: int(count) for label, count in rows}


@pytest.mark.parametrize("compiled", [False, True])
def test_random_wallmaze(capsys: pytest.CaptureFixture[str], compiled: bool) -> None:
    argv = ["random", "wallmaze", "--games", "20", "--seed", "1"] + (["--compiled"] if compiled else [])
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert re.search(r"^games\s+20$", out, re.MULTILINE)
    length = re.search(r"^length\s+([\d.]+) joint moves on average \(min (\d+), max (\d+)\)$", out, re.MULTILINE)
    assert length is not None
    avg, lo, hi = float(length[1]), int(length[2]), int(length[3])
    assert 1 <= lo <= avg <= hi <= 29  # wall maze ends at step 30 at the latest
    assert re.search(r"^speed\s+[\d,]+ games/second", out, re.MULTILINE)
    rows = outcome_rows(out)
    assert sum(rows.values()) == 20
    assert set(rows) <= {"white 0 / black 0", "white 100 / black 0", "white 0 / black 100"} | {
        f"white {a} / black {100 - a}" for a in (25, 50, 75)
    }
    counts = list(rows.values())
    assert counts == sorted(counts, reverse=True)  # most common first
    assert "\x1b[" not in out


@pytest.mark.parametrize("compiled", [False, True])
def test_random_is_reproducible(capsys: pytest.CaptureFixture[str], compiled: bool) -> None:
    extra = ["--compiled"] if compiled else []

    def report(seed: str) -> list[str]:
        code, out, _ = run(capsys, "random", "bomberman2p", "--games", "200", "--seed", seed, *extra)
        assert code == 0
        return [line for line in out.splitlines() if not line.startswith("speed")]

    first = report("5")
    assert report("5") == first
    assert report("6") != first
    rows = re.findall(r"^\s+bomberman (\d+) / bomberwoman (\d+)\s+(\d+)\s+", "\n".join(first), re.MULTILINE)
    assert sum(int(n) for _, _, n in rows) == 200
    assert all(a in ("0", "50", "100") and int(a) + int(b) == 100 for a, b, _ in rows)


# --- play ---------------------------------------------------------------------------------------------
def test_play_wallmaze_against_random_to_the_end(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # help, a move that is no move of the maze, a number from the help list, then east and wait in turn
    # (when black blocks the way east is refused, and the wait goes through): the game must end within 29 moves.
    lines = ["help", "(move 2 5 2 6)", "1"] + ["e", "."] * 40
    code, out, err, stdin = play(capsys, monkeypatch, lines, "wallmaze", "--white", "human", "--black", "random")
    assert code == 0 and err == ""
    assert "type n/s/e/w (or north, up, ...) to step, . to wait" in out
    # help lists the legal moves numbered and sorted
    assert re.search(r"1\. \(move 2 5 3 5\)\s+2\. noop", out)
    # the illegal entry is explained and asked again, without a move being made
    refused = out.index("(move 2 5 2 6) is not a legal move for white")
    assert refused < out.index("white> ", refused) < out.index("move 1: white (move 2 5 3 5), black ")
    # the game reached its end: final board and goals
    final = re.search(r"^game over: white (\d+), black (\d+)$", out, re.MULTILINE)
    assert final is not None
    assert (int(final[1]), int(final[2])) in {(0, 0), (100, 0), (0, 100)}
    assert re.search(r"^step \d+ - game over: white \d+, black \d+", out, re.MULTILINE)
    moves = re.findall(r"^move (\d+): ", out, re.MULTILINE)
    assert [int(n) for n in moves] == list(range(1, len(moves) + 1))
    assert len(moves) <= 29
    # the loop stopped reading when the game ended
    assert stdin.readline() != ""


def test_play_eof_mid_game_exits_cleanly(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err, _ = play(capsys, monkeypatch, ["e"], "wallmaze", "--seed", "3")
    assert code == 0
    assert "move 1: white (move 2 5 3 5)" in out
    assert "end of input" in out
    assert "game over" not in out
    assert "Traceback" not in out + err


def test_play_quit(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _, stdin = play(capsys, monkeypatch, ["quit", "e"], "wallmaze")
    assert code == 0
    assert "game abandoned" in out
    assert "move 1:" not in out
    assert stdin.readline() == "e\n"


class _CtrlC:
    """A stdin on which the person presses Ctrl-C at once."""

    def readline(self, size: int = -1) -> str:
        raise KeyboardInterrupt

    def isatty(self) -> bool:
        return False


def test_play_ctrl_c_exits_130(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _CtrlC())
    code, out, err = run(capsys, "play", "bomberman2p")
    assert code == 130
    assert "interrupted" in err
    assert "Traceback" not in out + err


def test_play_malformed_entries_are_explained(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = ["w", "xyzzy", "(move 2 5)", "9", "", "noop"]
    code, out, _, _ = play(capsys, monkeypatch, lines, "wallmaze", "--seed", "1")
    assert code == 0
    assert "white cannot step w from (2, 5): there is a wall" in out
    assert "'xyzzy' is not a wall maze shorthand" in out
    assert "'(move 2 5)' is not a move of this game" in out
    assert "there is no move number 9: white has 2 legal moves" in out
    assert "move 1: white noop, black " in out
    assert out.count("move 1:") == 1


def test_play_amazons_shorthand_plays_move_and_fire(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only one line: if the fire were not kept for white's next step, input would end before move 2.
    code, out, _, _ = play(capsys, monkeypatch, ["c1-c4/c6"], "amazons_8x8", "--black", "random:seed=2")
    assert code == 0
    assert "type d1-d5/d8 moves the amazon on d1 to d5 and fires at d8" in out
    assert "move 1: white (move 3 1 3 4), black noop" in out
    assert "move 2: white (fire 3 6), black noop" in out
    assert re.search(r"^move 3: white noop, black \(move ", out, re.MULTILINE)
    assert re.search(r"^move 4: white noop, black \(fire ", out, re.MULTILINE)
    assert "move 5:" not in out
    assert "end of input" in out


def test_play_amazons_shorthand_with_illegal_fire_is_refused_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # From c4 the arrow cannot reach h1 (f1 holds a white amazon): nothing is played, and white is asked again.
    code, out, _, _ = play(capsys, monkeypatch, ["c1-c4/h1", "c1-c4", "c1"], "amazons_8x8", "--seed", "4")
    assert code == 0
    assert "(fire 8 1) is not a legal move for white (after (move 3 1 3 4))" in out
    assert "move 1: white (move 3 1 3 4), black noop" in out
    assert "move 2: white (fire 3 1), black noop" in out  # firing back onto the cell just left is legal


def test_play_two_agents_needs_no_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _, _ = play(capsys, monkeypatch, [], "bomberman", "--bomberman", "random", "--seed", "9")
    assert code == 0
    assert re.search(r"^game over: bomberman (\d+), bomberwoman (\d+)$", out, re.MULTILINE)
    assert "bomberman>" not in out and "bomberwoman>" not in out


class _Junk(ggp.agents.Agent):
    """Answers every move with text, not a Move."""

    name = "junk"

    def select_move(self, state: ggp.State, time_limit: float | None = None) -> ggp.Move:
        return "noop"  # type: ignore[return-value]


def test_play_replaces_a_failing_agents_move_as_the_referee_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ggp play`` calls agents through ggp.match.calls: a non-move is a fault, a random legal move is played."""
    monkeypatch.setitem(ggp.agents.AGENTS, "junk", _Junk)
    code, out, _, _ = play(capsys, monkeypatch, [], "wallmaze", "--white", "junk", "--black", "random", "--seed", "4")
    assert code == 0 and re.search(r"^game over: white \d+, black \d+$", out, re.MULTILINE)
    faults = re.findall(
        r"^  agent fault: step (\d+): white not_a_move: select_move returned 'noop' .* \(played (.*)\)$",
        out,
        re.MULTILINE,
    )
    moves = dict(re.findall(r"^move (\d+): white (.*), black", out, re.MULTILINE))
    assert faults and len(faults) == len(moves)  # every white move was a replacement
    assert all(moves[step] == played for step, played in faults)


def test_play_bad_agent_spec_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "play", "wallmaze", "--black", "minimax")
    assert code == 2
    # refused by the option's type, argparse style, before the game starts
    assert "ggp play wallmaze: error: argument --black: minimax: unknown agent 'minimax'; the known agents are: " in err
    assert "wallmaze:" not in out
    assert "random (options: seed)" in err and "mcts (options: time, sims" in err
    code, _, err = run(capsys, "play", "wallmaze", "--black", "random:depth=2")
    assert code == 2
    assert "has no option 'depth'" in err
    assert "Traceback" not in out + err


def test_play_role_options_follow_the_game(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "play", "wallmaze", "--bomberman", "random")
    assert code == 2
    assert "unrecognized arguments: --bomberman random" in err
    assert main(["play", "bomberman2p", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--bomberman PLAYER" in out and "--bomberwoman PLAYER" in out and "--white" not in out


# --- python -m ggp --------------------------------------------------------------------------------------
def test_python_m_ggp_games() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ggp", "games"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == GAME_NAMES


def test_python_m_ggp_play_eof_and_unknown_game() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ggp", "play", "wallmaze", "--seed", "1"],
        input="help\ne\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0
    assert "move 1: white (move 2 5 3 5)" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "ggp", "show", "chess"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("ggp: error: unknown game 'chess'")


def test_clock_arguments_take_zero_only_where_zero_makes_sense() -> None:
    import argparse

    from ggp.cli.argtypes import non_negative_float, positive_float

    assert non_negative_float("0") == non_negative_float("0.0") == 0.0  # --grace 0.0: no slack
    assert positive_float("0.25") == 0.25
    for bad in ("0", "0.0", "-1", "inf", "soon"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_float(bad)
    for bad in ("-0.5", "inf", "nan"):
        with pytest.raises(argparse.ArgumentTypeError):
            non_negative_float(bad)
