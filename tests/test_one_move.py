"""One move, one parse, one check: what a move costs at each door.

A move comes in as text at an edge (a web POST, a GGP PLAY), is read into the
game's own :class:`~ggp.Move` once, checked for legality once
(:meth:`~ggp.Game.check_move`, the python-chess ``parse_uci`` of ggp) and then
played by a step that trusts it (:meth:`~ggp.Game.play`). Each state's legal
moves are worked out once and kept with the state, however many parts of the
server ask for them. These tests count all three along one real request, on a
built-in game and on a rule sheet.
"""

from __future__ import annotations

import collections
import functools
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ggp
from ggp.core import kif
from ggp.core.game import Game, Move
from ggp.core.native import KernelGame
from ggp.gdl import rules_text
from ggp.protocol import PlayerConfig, PlayerService

pytest.importorskip("fastapi")
with warnings.catch_warnings():  # starlette's TestClient prefers httpx2; httpx works the same
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ggp.web.app import create_app

TICTACTOE = Path(ggp.gdl.__file__).with_name("tictactoe.kif")


class Tally:
    """Counts, while it is on: texts parsed, moves checked, and legal-move listings worked out per state."""

    def __init__(self) -> None:
        self.on = False
        self.parsed: collections.Counter[str] = collections.Counter()
        self.checked: list[tuple[str, str]] = []
        self.listed: collections.Counter[tuple[bytes, int]] = collections.Counter()

    def reset(self) -> None:
        self.on = True
        self.parsed.clear()
        self.checked.clear()
        self.listed.clear()


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tally]:
    t = Tally()
    parse_term, check_move, legal = kif.parse_term, Game.check_move, KernelGame._legal

    @functools.wraps(parse_term)
    def counted_parse(text: str) -> Any:
        if t.on:
            t.parsed[text] += 1
        return parse_term(text)

    def counted_check(self: Game, state: Any, role: str, move: object) -> Move:
        if t.on:
            t.checked.append((role, str(move)))
        return check_move(self, state, role, move)

    def counted_legal(self: KernelGame, s: np.ndarray, role: int) -> np.ndarray:
        if t.on:
            t.listed[(s.tobytes(), role)] += 1
        return legal(self, s, role)

    # every module that took parse_term by name reads it through the counter
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("ggp") and getattr(module, "parse_term", None) is parse_term:
            monkeypatch.setattr(module, "parse_term", counted_parse)
    monkeypatch.setattr(Game, "check_move", counted_check)
    monkeypatch.setattr(KernelGame, "_legal", counted_legal)
    yield t


# --- the web app -------------------------------------------------------------------------------------------
@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    sheets = tmp_path / "sheets"
    sheets.mkdir()
    shutil.copy(TICTACTOE, sheets / "tictactoe.kif")
    with TestClient(create_app(tmp_path / "web.sqlite3", sheets=sheets, arena=False), base_url="http://127.0.0.1") as c:
        yield c


WEB = [
    ("amazons_8x8", ("white", "black"), "(move 1 3 1 4)", "( MOVE 1 3 1 4 )"),
    ("sheet:tictactoe", ("xplayer", "oplayer"), "(mark 1 1)", "( MARK 1 1 )"),
]


@pytest.mark.parametrize(("game", "roles", "canonical", "typed"), WEB, ids=[w[0] for w in WEB])
def test_a_web_post_reads_its_move_once_and_checks_it_once(
    client: TestClient, tally: Tally, game: str, roles: tuple[str, str], canonical: str, typed: str
) -> None:
    r = client.post("/api/games", json={"game": game, "players": {role: "human" for role in roles}})
    assert r.status_code == 201, r.text
    gid = r.json()["id"]
    legal = [m["move"] for m in r.json()["legal"][roles[0]]]
    assert canonical in legal
    tally.reset()
    r = client.post(f"/api/games/{gid}/moves", json={"role": roles[0], "move": typed, "step": 0})
    tally.on = False
    assert r.status_code == 200, r.text
    assert r.json()["step"] == 1
    assert tally.parsed[typed] == 1  # the text, read once into the game's own move
    assert tally.checked == [(roles[0], canonical)]  # checked once; the other role's only move was the legal list's
    assert tally.listed, "the reply lists the new state's legal moves"
    assert max(tally.listed.values()) == 1  # each state's legal moves worked out once, however often asked


def test_a_web_post_of_an_illegal_move_is_checked_once_and_changes_nothing(client: TestClient, tally: Tally) -> None:
    r = client.post("/api/games", json={"game": "sheet:tictactoe", "players": {"xplayer": "human", "oplayer": "human"}})
    gid = r.json()["id"]
    tally.reset()
    r = client.post(f"/api/games/{gid}/moves", json={"role": "xplayer", "move": "NOOP", "step": 0})
    tally.on = False
    assert r.status_code == 400
    assert "NOOP is not a legal move for xplayer" in r.json()["detail"]  # a move of the sheet, but not x's now
    assert "(mark 2 2)" in r.json()["legal"]
    assert tally.checked == [("xplayer", "noop")]
    assert client.get(f"/api/games/{gid}").json()["step"] == 0


# --- the GGP player ----------------------------------------------------------------------------------------
def sheet(text: str) -> str:
    return "(" + " ".join(line.split(";")[0] for line in text.splitlines()) + ")"


GGP = [("wallmaze", rules_text("wallmaze"), "white"), ("tictactoe", TICTACTOE.read_text(), "oplayer")]


@pytest.mark.parametrize(("name", "rules", "role"), GGP, ids=[g[0] for g in GGP])
def test_a_ggp_play_reads_its_message_once_and_checks_each_move_once(
    tally: Tally, name: str, rules: str, role: str
) -> None:
    service = PlayerService(PlayerConfig(spec="random", name="counted", seed=3))
    assert service.handle(f"(START m1 {role} {sheet(rules)} 60 30)").body == "ready"
    match = service.match
    assert match is not None and match.agent_ready.wait(60)  # START answered at its clock; the agent is ready
    first = service.handle("(PLAY m1 nil)").body
    # the game manager's joint move: ours and the other role's, in role order
    game = match.game
    assert game is not None
    joint = [first if r == role else None for r in game.roles]
    state = match.state
    assert state is not None
    other = next(r for r in game.roles if r != role)
    joint[game.roles.index(other)] = str(game.legal_moves(state, other)[0])
    message = f"(PLAY m1 ({' '.join(str(m) for m in joint)}))"
    tally.reset()
    reply = service.handle(message)
    tally.on = False
    assert reply.status == 200
    assert sum(tally.parsed.values()) == 1 and tally.parsed[message] == 1  # the message, once; its moves are terms
    checked_roles = sorted(role for role, _ in tally.checked)
    # the manager's two moves once each as the state moves on, and our agent's answer once
    assert checked_roles == sorted([*game.roles, role])
    assert reply.body in {str(m) for m in game.legal_moves(match.state, role)}
    assert max(tally.listed.values()) == 1
    service.handle("(ABORT m1)")
