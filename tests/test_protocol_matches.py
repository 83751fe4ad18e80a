"""Whole matches over GGP on 127.0.0.1: ggp's host against ggp's players, recognition of rule sheets, and failures.

The players run in this process, each behind its own server on a free port
(a GGP player plays one match at a time); the CLI test runs ``ggp serve`` as
a subprocess and waits for the line announcing its port.
"""

from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import ggp
from ggp.cli import main
from ggp.core.kif import Term, parse_terms, term_text
from ggp.gdl import rules_text
from ggp.match import MatchRecord
from ggp.protocol import GGPServer, HostError, PlayerConfig, PlayerService, Reply, host_match, recognize
from ggp.protocol.messages import Play, parse_message
from ggp.protocol.recognize import sheet_text

#: A game ggp knows only by its rule sheet (no native kernel recognises it).
TIC_TAC_TOE = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()


class Player:
    """A player service behind its own server."""

    def __init__(self, spec: str = "random", name: str = "p", seed: int = 1, app: object = None) -> None:
        self.service = PlayerService(PlayerConfig(spec=spec, name=name, seed=seed))
        self.server = GGPServer("127.0.0.1", 0, app or self.service.handle).start()  # type: ignore[arg-type]
        self.url = f"http://127.0.0.1:{self.server.port}"

    def close(self) -> None:
        self.server.close()


@pytest.fixture(scope="module")
def players() -> Iterator[tuple[Player, Player]]:
    """Two random players (one per role of a two-player match)."""
    PlayerService(PlayerConfig()).warm()
    a, b = Player(name="alice", seed=1), Player(name="bob", seed=2)
    yield a, b
    a.close()
    b.close()


def remote_both(game_ref: str, players: tuple[Player, Player], **kw: object) -> MatchRecord:
    roles = ggp.load(game_ref).roles
    options: dict = {"start_clock": 5.0, "play_clock": 1.0, "grace": 0.5, "seed": 3, **kw}
    return host_match(game_ref, {roles[0]: players[0].url, roles[1]: players[1].url}, **options)


def assert_clean(record: MatchRecord, players: tuple[Player, ...]) -> None:
    assert record.terminal and not list(record.all_faults())
    record.verify()  # the recorded moves replay to the recorded final state and goals
    for p in players:  # every player heard STOP and is free again
        assert p.service.match is None and p.service.finished[-1].startswith("ggp.")


# --- whole matches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ggp.game_names())
def test_every_built_in_game_between_two_remote_players(players: tuple[Player, Player], name: str) -> None:
    record = remote_both(name, players)
    assert record.game == name and record.agents == (players[0].url, players[1].url)
    assert_clean(record, players)
    assert record.steps > 0


def test_a_gdl_only_game(players: tuple[Player, Player], tmp_path: Path) -> None:
    path = tmp_path / "tictactoe.kif"
    path.write_text(TIC_TAC_TOE)
    seen: list[str | None] = []

    def on_step(step: int, joint: tuple[str, ...]) -> None:
        match = players[0].service.match
        seen.append(None if match is None else match.game.name if match.game else None)

    record = remote_both(str(path), players, on_step=on_step)
    assert_clean(record, players)
    assert record.game == str(path.resolve())  # `ggp replay` loads the sheet from there
    assert MatchRecord.from_json(record.to_json()).load_game().roles == ("xplayer", "oplayer")
    assert seen and all(name is not None and name.startswith("gdl_") for name in seen)  # the reasoner's game
    assert 5 <= record.steps <= 9


def test_a_remote_player_against_a_local_agent(players: tuple[Player, Player]) -> None:
    record = host_match(
        "wallmaze", {"WHITE": players[0].url, "black": "random"}, start_clock=5, play_clock=1, seed=4, grace=0.5
    )
    assert record.agents == (players[0].url, "random")
    assert_clean(record, players[:1])


def test_a_specialist_agent_plays_other_games_with_mcts(tmp_path: Path) -> None:
    path = tmp_path / "tictactoe.kif"
    path.write_text(TIC_TAC_TOE)
    # Compile the reasoner's loops first: numba holds the GIL while it compiles, and on a
    # cold machine that would stall the player's server thread past this short clock.
    warm = ggp.load(path)
    warm.random_playouts(2)  # type: ignore[attr-defined]
    specialist = Player(spec="amazons", name="specialist")
    try:
        record = host_match(str(path), {"xplayer": specialist.url}, start_clock=5, play_clock=0.4, grace=2.0, seed=1)
    finally:
        specialist.close()
    assert record.terminal and not list(record.all_faults())
    assert specialist.service.finished


# --- recognising rule sheets ---------------------------------------------------------------------------------
def rename(term: Term, names: dict[str, str]) -> Term:
    if isinstance(term, str):
        return names.get(term, term)
    return tuple(rename(t, names) for t in term)


def test_reformatted_and_renamed_sheets_are_recognised() -> None:
    rules = parse_terms(rules_text("wallmaze"))
    # letter case and layout alone: ggp's own sheet
    shouted = parse_terms(sheet_text(rules).upper())
    assert recognize(shouted).native == "wallmaze"
    # reordered sentences, renamed variables and helper relations: the same behaviour
    # (the roles keep their order, which is the order of the moves in PLAY)
    names = {"adjacent": "nextTo", "neighbours": "nb", "earlier": "before", "?x": "?col", "?y1": "?rowA"}
    roles = [r for r in rules if r[0] == "role"]
    variant = roles + [rename(r, names) for r in reversed(rules) if r[0] != "role"]
    found = recognize(variant)
    assert found.native == "wallmaze" and found.how.startswith("behaves as wallmaze")
    assert found.game is ggp.load("wallmaze") and found.gdl is not None


def test_a_different_game_is_played_on_the_reasoner() -> None:
    rules = parse_terms(rules_text("wallmaze"))
    walled = [r for r in rules if r != ("open", "7", "6")]  # one more wall: another game
    found = recognize(walled)
    assert found.native is None and found.game is found.gdl
    assert recognize(parse_terms(TIC_TAC_TOE)).native is None


def test_when_the_native_engine_disagrees_the_player_goes_on_with_the_reasoner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ggp.protocol.player as player_module
    from ggp.protocol.recognize import Recognition

    # a sheet like wallmaze, but white may also `wait`; pretend it was taken for wallmaze
    rules = [*parse_terms(rules_text("wallmaze")), ("legal", "white", "wait")]
    monkeypatch.setattr(
        player_module, "recognize", lambda *a, **k: Recognition(ggp.load("wallmaze"), "wallmaze", "forced")
    )
    service = PlayerService(PlayerConfig(spec="random", name="p", seed=1))
    start = f"(START m1 black ({' '.join(term_text(r) for r in rules)}) 10 2)"
    assert service.handle(start).body == "ready"
    assert service.handle("(PLAY m1 NIL)").status == 200
    reply = service.handle("(PLAY m1 (wait noop))")
    assert reply.status == 200
    match = service.match
    assert match is not None and match.native is None and match.history == [("wait", "noop")]
    assert "GDL reasoner" in match.how


# --- faults: what the host records when a remote player misbehaves --------------------------------------------
class Scripted:
    """A player that follows the match with a real service but answers some PLAYs badly."""

    def __init__(self, bad: dict[int, str], late: float = 0.0) -> None:
        self.service = PlayerService(PlayerConfig(spec="random", name="scripted", seed=5))
        self.bad = bad
        self.late = late
        self.plays = 0
        self.gate = threading.Event()

    def app(self, text: str, received: float) -> Reply:
        reply = self.service.handle(text, received)
        try:
            message = parse_message(text)
        except Exception:
            return reply
        if isinstance(message, Play):
            self.plays += 1
            answer = self.bad.get(self.plays)
            if answer == "LATE":
                self.gate.wait(self.late)  # the player's slowness, not synchronisation
                return reply
            if answer == "HTTP500":
                return Reply(500, '(error "scripted failure")')
            if answer is not None:
                return Reply(200, answer)
        return reply


def test_illegal_malformed_late_and_failed_replies_are_replaced_and_recorded(players: tuple[Player, Player]) -> None:
    scripted = Scripted({1: "(((", 2: "(move 9 9 9 9)", 3: "LATE", 4: "HTTP500", 5: "nil"}, late=3.0)
    server = GGPServer("127.0.0.1", 0, scripted.app).start()
    try:
        record = host_match(
            "wallmaze",
            {"white": f"http://127.0.0.1:{server.port}", "black": players[1].url},
            start_clock=5,
            play_clock=1.0,  # random players answer at once: the margin is for a loaded machine
            grace=1.0,
            seed=9,
        )
    finally:
        server.close()
    record.verify()
    faults = {f.step or 0: f for f in record.all_faults()}
    assert sorted(faults) == [1, 2, 3, 4, 5]
    assert faults[1].kind == "not_a_move" and faults[1].returned == "'((('"
    assert faults[2].kind == "illegal" and faults[2].returned == "(move 9 9 9 9)"
    assert faults[3].kind == "timeout" and "no reply from" in faults[3].message and faults[3].traceback is None
    assert faults[4].kind == "exception" and "HTTP 500" in faults[4].message
    assert faults[5].kind == "not_a_move" and faults[5].returned == "'nil'"
    for step, fault in faults.items():
        assert fault.role == "white" and fault.played == record.moves[step - 1].joint[0]
    loaded = MatchRecord.from_json(record.to_json(), verify=True)
    assert [f.kind for f in loaded.all_faults()] == ["not_a_move", "illegal", "timeout", "exception", "not_a_move"]


def test_a_player_that_dies_mid_match(players: tuple[Player, Player]) -> None:
    doomed = Player(name="doomed", seed=3)
    died_at = 3  # wall maze lasts until step 30 unless both arrive, far later than this

    def on_step(step: int, joint: tuple[str, ...]) -> None:
        if step == died_at:
            doomed.close()  # the server is gone: connections are refused from now on

    record = host_match(
        "wallmaze",
        {"white": doomed.url, "black": players[1].url},
        start_clock=5,
        play_clock=2.0,  # the live player answers at once; a long clock only keeps a loaded machine from timing it out
        grace=1.0,
        seed=2,
        on_step=on_step,
    )
    record.verify()
    faults = list(record.all_faults())
    play_faults = [f for f in faults if f.phase == "play"]
    assert record.terminal and play_faults and min(f.step or 0 for f in play_faults) == died_at + 1
    assert all(f.role == "white" and f.kind == "exception" and "cannot talk to" in f.message for f in faults)
    assert [f.phase for f in faults if f.phase != "play"] == ["stop"]
    assert players[1].service.match is None  # the live player finished normally


def test_an_abandoned_match_aborts_the_players(players: tuple[Player, Player]) -> None:
    def on_step(step: int, joint: tuple[str, ...]) -> None:
        if step == 2:
            assert all(p.service.match is not None for p in players)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        remote_both("wallmaze", players, on_step=on_step)
    assert all(p.service.match is None for p in players)  # ABORT cleared both


def test_busy_and_unreachable_players_are_reported_before_the_match(players: tuple[Player, Player]) -> None:
    a, b = players
    assert a.service.handle("(START other white ((role white) (role black)) 10 5)").body == "ready"
    try:
        with pytest.raises(HostError, match="busy with another match"):
            remote_both("wallmaze", players)
        # told to go ahead anyway, the busy player's answers are faults and random moves stand in
        record = remote_both("wallmaze", players, check_players=False)
        record.verify()
        kinds = {(f.phase, f.kind) for f in record.all_faults() if f.role == "white"}
        assert kinds == {("start", "exception"), ("play", "exception"), ("stop", "exception")}
        assert all("busy" in f.message for f in record.all_faults())
    finally:
        a.service.handle("(ABORT other)")
    with pytest.raises(HostError, match="does not answer INFO"):
        host_match("wallmaze", {"white": b.url, "black": f"http://127.0.0.1:{closed_port()}/"})


def closed_port() -> int:
    """A port nobody listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_host_mistakes() -> None:
    with pytest.raises(HostError, match="no role 'purple'"):
        host_match("wallmaze", {"purple": "random"})
    with pytest.raises(HostError, match="player of its own"):
        host_match("wallmaze", {"white": "http://127.0.0.1:1", "black": "http://127.0.0.1:1"})
    with pytest.raises(HostError, match="unknown agent"):
        host_match("wallmaze", {"white": "nosuchagent"}, check_players=False)


# --- the command line --------------------------------------------------------------------------------------------
def test_serve_and_host_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ggp", "serve", "random", "--port", "0", "--name", "cli-player", "--seed", "1"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 120)  # a guard against a hang, not a wait
        assert ready, "ggp serve printed nothing in 120 s: " + log.read_text()
        line = proc.stdout.readline()  # printed once the socket listens
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
        assert found, line + log.read_text()
        url = f"http://127.0.0.1:{found.group(1)}"
        out = tmp_path / "record.json"
        code = main(
            [
                *("host", "wallmaze", "--player", f"white={url}", "--player", "black=random"),
                *("--startclock", "10", "--playclock", "1", "--seed", "5", "--out", str(out)),
            ]
        )
        printed = capsys.readouterr().out
        assert code == 0, printed
        assert "step 1: white " in printed and "record written to" in printed
        record = MatchRecord.load(out, verify=True)
        assert record.agents == (url, "random") and not list(record.all_faults())
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert "START" in log.read_text() and "stopped after" in log.read_text()
    assert main(["replay", str(out), "--final"]) == 0


def test_command_line_mistakes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "nosuchagent", "--port", "0"]) == 2
    assert "unknown agent 'nosuchagent'" in capsys.readouterr().err
    assert main(["serve", "random", "--port", "0", "--name", "two words"]) == 2
    assert "one word" in capsys.readouterr().err
    with GGPServer("127.0.0.1", 0, lambda t, r: Reply(200, "")) as taken:
        assert main(["serve", "random", "--port", str(taken.port)]) == 2
        assert "cannot listen on" in capsys.readouterr().err
    assert main(["host", "wallmaze", "--player", "purple=random"]) == 2
    assert "no role 'purple'" in capsys.readouterr().err
    assert main(["host", "wallmaze", "--player", "white"]) == 2
    assert "expected ROLE=URL or ROLE=SPEC" in capsys.readouterr().err
    assert main(["host", "wallmaze", "--player", "white=http://127.0.0.1:1", "--playclock", "1"]) == 2
    assert "does not answer INFO" in capsys.readouterr().err
