"""Self-play files: they read back and replay (every move legal, final goals as stored), and runs resume."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import ggp
from ggp.cli import main
from ggp.match.selfplay import COLUMNS, SelfplayError, SelfplayEvent, read_selfplay, run_selfplay

pytest.importorskip("pyarrow", reason="the ray extra (pyarrow) is not installed")

GAME = "wallmaze"
AGENT = "mcts:sims=48"


def replay_all(out: Path) -> dict[int, list[tuple[str, ...]]]:
    """Replay every stored game from the initial state; returns each game's joint moves.

    An mcts agent's rows have a policy wherever its role had a choice; a random agent's have none.
    """
    searched = json.loads((out / "selfplay.json").read_text())["agent"].startswith("mcts")
    game = ggp.load(GAME)
    table = read_selfplay(out)
    assert tuple(table.column_names) == COLUMNS
    rows_by_game: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in table.to_pylist():
        rows_by_game[row["game_index"]].append(row)
    games = {}
    for index, rows in rows_by_game.items():
        state = game.initial_state()
        assert [r["step"] for r in rows] == list(range(len(rows)))
        for row in rows:
            assert game.state_to_json(state) == row["state"] and not game.is_terminal(state)
            for r, role in enumerate(game.roles):
                legal = {str(m) for m in game.legal_moves(state, role)}
                assert row["moves"][r] in legal
                assert game.action_to_move(state, role, row["actions"][r]) == game.parse_move(row["moves"][r])
                acts, visits = row["policy_actions"][r], row["policy_visits"][r]
                assert len(acts) == len(visits)
                if searched and len(legal) > 1:  # a search ran: its visit counts cover the legal moves
                    assert {str(game.action_to_move(state, role, a)) for a in acts} == legal
                    # (fewer than sims=48 visits when MCTS-Solver proves the root early)
                    assert sum(visits) > 0 and min(visits) >= 0 and row["actions"][r] in acts
                else:
                    assert acts == [] and visits == []
            state = game.next_state(state, row["moves"])
        assert game.is_terminal(state)
        assert list(game.goals(state)) == rows[-1]["goals"] == rows[0]["goals"]
        games[index] = [tuple(r["moves"]) for r in rows]
    return games


def test_selfplay_reads_back_and_replays(tmp_path: Path) -> None:
    out = tmp_path / "sp"
    summary = run_selfplay(GAME, AGENT, games=5, out=out, seed=3, shard=2)
    assert summary.played == 5 and summary.existing == 0 and summary.shards == 3
    assert sorted(p.name for p in out.iterdir()) == [
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
        "selfplay.json",
        "selfplay.lock",
    ]
    games = replay_all(out)
    assert sorted(games) == [0, 1, 2, 3, 4]
    assert json.loads((out / "selfplay.json").read_text())["agent"] == AGENT
    # Every state where a role had a choice has a search policy.
    table = read_selfplay(out)
    assert any(v for row in table.column("policy_visits").to_pylist() for v in row)


def test_an_interrupted_run_resumes_with_the_same_games(tmp_path: Path) -> None:
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    run_selfplay(GAME, AGENT, games=6, out=whole, seed=4, shard=4)

    def stop_after_three(event: SelfplayEvent) -> None:
        if event.kind == "done" and event.index == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_selfplay(GAME, AGENT, games=6, out=parts, seed=4, shard=4, on_event=stop_after_three)
    assert sorted(replay_all(parts)) == [0, 1, 2]  # the finished games were kept
    seen: list[int] = []
    again = run_selfplay(GAME, AGENT, games=6, out=parts, seed=4, shard=4, on_existing=seen.append)
    assert seen == [3] and again.played == 3 and again.existing == 3
    assert replay_all(parts) == replay_all(whole)
    # Nothing left to play; more games extend the directory.
    assert run_selfplay(GAME, AGENT, games=6, out=parts, seed=4).played == 0
    assert run_selfplay(GAME, AGENT, games=7, out=parts, seed=4).played == 1
    assert sorted(replay_all(parts)) == list(range(7))


def test_selfplay_on_two_local_workers_plays_the_same_games(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    run_selfplay(GAME, "random", games=6, out=one, seed=5)
    summary = run_selfplay(GAME, "random", games=6, out=two, seed=5, workers=2, shard=100)
    assert summary.played == 6 and summary.shards == 1
    assert replay_all(two) == replay_all(one)


def test_selfplay_refuses_other_settings_and_bad_options(tmp_path: Path) -> None:
    out = tmp_path / "sp"
    run_selfplay(GAME, "random", games=2, out=out, seed=1)
    before = sorted((p.name, p.stat().st_size) for p in out.iterdir())
    with pytest.raises(SelfplayError, match="keeps its settings"):
        run_selfplay(GAME, "random", games=2, out=out, seed=2)
    with pytest.raises(SelfplayError, match="keeps its settings"):
        run_selfplay("bomberman2p", "random", games=2, out=out, seed=1)
    with pytest.raises(SelfplayError, match="unknown backend"):
        run_selfplay(GAME, "random", games=2, out=out, backend="spark")
    with pytest.raises(SelfplayError, match="games must be"):
        run_selfplay(GAME, "random", games=0, out=out)
    with pytest.raises(SelfplayError, match="workers must be 1 to 64 with the local backend"):
        run_selfplay(GAME, "random", games=2, out=out, workers=65)
    with pytest.raises(SelfplayError, match="needs the ray backend"):
        run_selfplay(GAME, "random", games=2, out=out, match_timeout=1.0)
    assert sorted((p.name, p.stat().st_size) for p in out.iterdir()) == before
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(SelfplayError, match="not empty"):
        run_selfplay(GAME, "random", games=1, out=other)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


def test_selfplay_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sp"
    assert main(["selfplay", GAME, "--agent", "random", "--games", "3", "--out", str(out), "--seed", "2"]) == 0
    assert "played 3 game(s)" in capsys.readouterr().out
    assert main(["selfplay", GAME, "--agent", "random", "--games", "4", "--out", str(out)]) == 0  # keeps seed 2
    assert "played 1 game(s) into " + str(out) + " (3 there already" in capsys.readouterr().out
    assert sorted(replay_all(out)) == [0, 1, 2, 3]
    assert main(["selfplay", GAME, "--agent", "bogus", "--games", "1", "--out", str(tmp_path / "x")]) == 2
    assert "unknown agent 'bogus'" in capsys.readouterr().err
    assert main(["selfplay", GAME, "--agent", "random", "--games", "1", "--out", str(out), "--address", "auto"]) == 2
    assert "--backend ray" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
