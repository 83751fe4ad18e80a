"""Match records: round trips, replay to the same result for every game, validation, `ggp replay`, `ggp match`."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

import ggp
from conftest import GAME_NAMES
from ggp.agents import RandomAgent
from ggp.cli import main
from ggp.match import MatchRecord, RecordFormatError, Referee
from ggp.match.record import FORMAT, VERSION


def random_record(name: str, seed: int = 1) -> MatchRecord:
    game = ggp.load(name)
    # clocks no random answer overruns on a loaded machine (the referee does not wait them out)
    referee = Referee(game, start_clock=60.0, play_clock=30.0, seed=seed)
    return referee.run([RandomAgent(seed=seed), RandomAgent(seed=seed + 100)], specs=["random:a", "random:b"])


@pytest.fixture(scope="module")
def wallmaze_record() -> MatchRecord:
    return random_record("wallmaze", seed=3)


# --- round trips and replay ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", GAME_NAMES)
def test_record_round_trips_and_replays_to_the_same_result(name: str, tmp_path: Path) -> None:
    game = ggp.load(name)
    record = random_record(name)
    data = json.loads(record.to_json())
    assert data["format"] == FORMAT and data["version"] == VERSION
    assert data["game"] == name and data["roles"] == list(game.roles)
    assert data["agents"] == dict(zip(game.roles, ["random:a", "random:b"], strict=True))
    assert data["clocks"]["play"] == 30.0 and data["clocks"]["start"] == 60.0 and data["seed"] == 1
    assert data["steps"] == len(data["moves"]) > 0
    assert all(len(m["joint"]) == len(m["times"]) == len(game.roles) for m in data["moves"])
    assert data["started"] <= data["finished"]

    path = record.save(tmp_path / "sub" / "match.json")
    loaded = MatchRecord.load(path, verify=True)
    assert loaded.to_dict() == record.to_dict()
    states = loaded.replay()
    final = states[-1]
    assert game.is_terminal(final) and not any(game.is_terminal(s) for s in states[:-1])
    assert tuple(game.goals(final)) == record.goals
    assert game.state_to_json(final) == json.dumps(record.final_state, separators=(",", ":"))
    assert game.state_from_dict(loaded.final_state) == final


def test_compact_json_reads_back(wallmaze_record: MatchRecord) -> None:
    text = wallmaze_record.to_json(compact=True)
    assert "\n" not in text
    assert MatchRecord.from_json(text, verify=True).to_dict() == wallmaze_record.to_dict()


# --- tampering ---------------------------------------------------------------------------------------------
def tampered(record: MatchRecord, change: Any) -> dict[str, Any]:
    data = copy.deepcopy(record.to_dict())
    change(data)
    return data


def test_an_illegal_move_is_rejected_on_verify(wallmaze_record: MatchRecord) -> None:
    def change(data: dict[str, Any]) -> None:
        data["moves"][4]["joint"][0] = "(move 1 1 1 2)"  # into the wall

    data = tampered(wallmaze_record, change)
    record = MatchRecord.from_dict(data)  # well-formed, so it reads without verify
    with pytest.raises(RecordFormatError, match=r"step 5 does not replay: .*\(move 1 1 1 2\) is not a legal move"):
        record.verify()
    with pytest.raises(RecordFormatError, match="step 5"):
        MatchRecord.from_json(json.dumps(data), verify=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(goals=[7, 7]), r"the moves give goals \[\d+, \d+\], the record says \[7, 7\]"),
        (lambda d: d["final_state"].update(step=1), "final.state"),
        (lambda d: d.update(moves=d["moves"][:-1], steps=d["steps"] - 1), "does not end after the recorded"),
        (lambda d: d["moves"][0]["joint"].__setitem__(1, "(jump)"), "step 1 does not replay"),
        (lambda d: d.update(game="chess"), "unknown game"),
        (
            lambda d: d.update(roles=["black", "white"], agents={"black": "x", "white": "y"}),
            "are not those of wallmaze",
        ),
    ],
)
def test_a_record_that_does_not_replay_to_its_result_is_rejected(
    wallmaze_record: MatchRecord, change: Any, message: str
) -> None:
    data = tampered(wallmaze_record, change)
    with pytest.raises(RecordFormatError, match=message):
        MatchRecord.from_dict(data, verify=True)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="other"), "format: expected 'ggp-match'"),
        (lambda d: d.update(version=VERSION + 1), "newer than this ggp reads"),
        (lambda d: d.pop("moves"), "missing moves"),
        (lambda d: d.update(roles="white"), "roles: expected a non-empty list"),
        (lambda d: d.update(agents={"white": "random"}), "agents: expected an object with one agent spec per role"),
        (lambda d: d["moves"][2]["joint"].pop(), r"moves\[2\].joint: expected a list of 2 moves"),
        (lambda d: d["moves"][2]["joint"].__setitem__(0, 7), r"moves\[2\].joint\[0\]: expected text, found a int"),
        (lambda d: d["moves"][2].update(step=9), r"moves\[2\].step: expected 3, found 9"),
        (lambda d: d["moves"][0]["times"].__setitem__(0, -1), r"moves\[0\].times\[0\]: expected a non-negative number"),
        (lambda d: d.update(steps=1), "steps: says 1 but the record has"),
        (lambda d: d.update(goals=[101, 0]), r"goals\[0\]: expected a goal value 0..100, found 101"),
        (lambda d: d.update(goals=[True, 0]), r"goals\[0\]: expected a goal value"),
        (lambda d: d["clocks"].update(play="fast"), "clocks.play: expected a non-negative number or null"),
        (lambda d: d.update(seed="x"), "seed: expected a whole number or null"),
        (lambda d: d.update(final_state=[]), "final_state: expected a state object"),
        (
            lambda d: d["moves"][0]["faults"].append({"role": "white", "kind": "oops", "step": 1}),
            r"moves\[0\].faults\[0\].kind: expected one of exception, illegal",
        ),
        (
            lambda d: d["moves"][0]["faults"].append({"role": "nobody", "kind": "timeout", "step": 1}),
            "'nobody' is not a role of the match",
        ),
        (
            lambda d: d["faults"].append({"role": "white", "kind": "timeout", "phase": "play", "step": 1}),
            "faults of play belong to their move",
        ),
    ],
)
def test_malformed_records_are_rejected_with_clear_errors(
    wallmaze_record: MatchRecord, change: Any, message: str
) -> None:
    data = tampered(wallmaze_record, change)
    with pytest.raises(RecordFormatError, match=message):
        MatchRecord.from_dict(data, source="r.json")
    with pytest.raises(RecordFormatError, match=r"^r\.json: "):
        MatchRecord.from_json(json.dumps(data), source="r.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "not JSON"), ("[1, 2]", "a match record is a JSON object, not a list"), ("", "not JSON")],
)
def test_text_that_is_not_a_record(text: str, message: str) -> None:
    with pytest.raises(RecordFormatError, match=message):
        MatchRecord.from_json(text)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordFormatError, match="cannot read match record"):
        MatchRecord.load(tmp_path / "nope.json")


# --- ggp replay ----------------------------------------------------------------------------------------------
def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_prints_every_move_and_state(
    wallmaze_record: MatchRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = wallmaze_record.save(tmp_path / "m.json")
    code, out, err = run(capsys, "replay", str(path))
    assert code == 0 and err == ""
    states = wallmaze_record.replay()
    assert out.count("move ") >= wallmaze_record.steps
    for state in states:
        assert str(state) in out
    last = wallmaze_record.moves[-1]
    assert f"move {last.step}: white {last.joint[0]}" in out
    goals = wallmaze_record.goals
    assert out.rstrip().endswith(f"result: white {goals[0]}, black {goals[1]}")
    assert "players: white random:a, black random:b" in out


def test_replay_final_only(wallmaze_record: MatchRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = wallmaze_record.save(tmp_path / "m.json")
    code, out, _ = run(capsys, "replay", str(path), "--final")
    assert code == 0
    states = wallmaze_record.replay()
    assert str(states[-1]) in out and str(states[0]) not in out
    assert "move 1:" not in out


def test_replay_step_waits_for_enter(
    wallmaze_record: MatchRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = wallmaze_record.save(tmp_path / "m.json")
    monkeypatch.setattr("sys.stdin", io.StringIO("\n\nq\n"))  # two moves, then quit
    code, out, _ = run(capsys, "replay", str(path), "--step")
    assert code == 0
    assert "move 2:" in out and "move 3:" not in out
    assert out.count("[Enter: next move, q: quit]") == 3


def test_replay_of_a_malformed_record_exits_2(
    wallmaze_record: MatchRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    code, out, err = run(capsys, "replay", str(bad))
    assert code == 2 and out == ""
    assert err.startswith(f"ggp: error: {bad}: not JSON")

    data = wallmaze_record.to_dict()
    data["moves"][0]["joint"][0] = "(move 1 1 1 2)"
    bad.write_text(json.dumps(data))
    code, out, err = run(capsys, "replay", str(bad))
    assert code == 2 and "step 1 does not replay" in err

    code, _, err = run(capsys, "replay", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read match record" in err


# --- ggp match -------------------------------------------------------------------------------------------------
def test_match_command_swaps_seats_writes_records_and_summarises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "records"
    argv = ["match", "bomberman2p", "--bomberman", "random", "--bomberwoman", "random:seed=2", "--games", "3"]
    code, out, err = run(capsys, *argv, "--swap", "--seed", "7", "--playclock", "0.5", "--out", str(out_dir))
    assert code == 0, err
    assert "bomberman2p: 3 game(s), players swap seats every game, play clock 0.5 s" in out
    files = sorted(out_dir.glob("*.json"))
    assert [f.name for f in files] == [f"bomberman2p-7-{i:03d}.json" for i in (1, 2, 3)]
    records = [MatchRecord.load(f, verify=True) for f in files]
    assert [r.agents for r in records] == [
        ("random", "random:seed=2"),
        ("random:seed=2", "random"),
        ("random", "random:seed=2"),
    ]
    assert [r.seed for r in records] == [7, 8, 9]
    # The summary: one line per player, with mean goal, W/D/L and both intervals.
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if "mean goal" in line)
    assert lines[header].split() == [
        "player",
        "games",
        "mean",
        "goal",
        "95%",
        "CI",
        "W",
        "D",
        "L",
        "win",
        "rate",
        "95%",
        "CI",
    ]
    for offset, spec in enumerate(["random", "random:seed=2"], 1):
        cells = lines[header + offset].split()
        assert cells[0] == spec and cells[1] == "3"
        goals = [r.goals[r.agents.index(spec)] for r in records]
        assert float(cells[2]) == pytest.approx(sum(goals) / 3, abs=0.05)
        other = "random:seed=2" if spec == "random" else "random"
        wins = sum(r.goals[r.agents.index(spec)] > r.goals[r.agents.index(other)] for r in records)
        assert int(cells[5]) == wins
        assert "%" in lines[header + offset]
    assert "3 match record(s) written to" in out
    for i, record in enumerate(records, 1):
        assert f"game {i}: bomberman {record.agents[0]} {record.goals[0]}" in out


def test_match_command_same_spec_twice_and_fixed_seats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "match", "wallmaze", "--games", "2", "--seed", "1")
    assert code == 0
    assert "fixed seats" in out
    assert "random #1" in out and "random #2" in out


def test_match_command_reports_mistakes(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "match", "wallmaze", "--white", "nosuchagent")
    assert code == 2 and "error: argument --white: nosuchagent: unknown agent 'nosuchagent'" in err
    code, _, err = run(capsys, "match", "wallmaze", "--games", "0")
    assert code == 2 and "must be at least 1" in err
    code, _, err = run(capsys, "match", "nosuchgame")
    assert code == 2 and "unknown game" in err
    code, out, _ = run(capsys, "match", "bomberman", "-h")
    assert code == 0 and "--bomberwoman SPEC" in out and "--swap" in out
