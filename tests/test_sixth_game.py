"""A sixth game in one module: Nim with a compiled kernel, registered in one line, served everywhere.

Everything below the rules is ggp's own, unchanged: the command line
(``ggp show``, ``ggp perft``, ``ggp random``, ``ggp match``), VectorGame,
compiled MCTS, the referee and the web app's catalog and play page. Nim here:
seven stones; the players take one to three in turn (the other plays
``noop``); whoever takes the last stone wins.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numba as nb
import numpy as np
import pytest

import ggp
from ggp.cli import main
from ggp.core.errors import StateFormatError
from ggp.core.kernels import make_kernel
from ggp.core.native import NativeGame, NativeState
from ggp.registry import register, unregister
from ggp.testing import check_game

# --8<-- [start:kernel]
STONES, TURN = 0, 1  # the state array: stones left, the role to take


@nb.njit(cache=True)
def nim_legal(s: np.ndarray, role: int, out: np.ndarray) -> int:
    if s[TURN] != role or s[STONES] == 0:
        out[0] = 0  # noop
        return 1
    n = min(3, s[STONES])
    for k in range(n):
        out[k] = k + 1  # action k: take k stones
    return n


@nb.njit(cache=True)
def nim_apply(s: np.ndarray, a0: int, a1: int) -> None:
    s[STONES] -= a0 if s[TURN] == 0 else a1
    s[TURN] = 1 - s[TURN]


@nb.njit(cache=True)
def nim_terminal(s: np.ndarray) -> bool:
    return s[STONES] == 0


@nb.njit(cache=True)
def nim_goals(s: np.ndarray) -> np.ndarray:
    g = np.full(2, 50, dtype=np.int64)
    if s[STONES] == 0:  # the player to move did not take the last stone
        g[s[TURN]] = 0
        g[1 - s[TURN]] = 100
    return g


def check_array(s: np.ndarray) -> None:
    if s.dtype != np.int64 or s.shape != (2,) or not 0 <= s[STONES] <= 7 or s[TURN] not in (0, 1):
        raise StateFormatError("nim: a state is [stones 0..7, role to move 0 or 1]")


KERNEL = make_kernel(
    globals(),
    "nim",
    legal=nim_legal,
    apply=nim_apply,
    terminal=nim_terminal,
    goals=nim_goals,
    num_actions=4,
    max_actions=3,
    dtype=np.int64,
    check=check_array,
)

# --8<-- [end:kernel]


# --8<-- [start:game]
class Nim(NativeGame):
    name = "nim"
    roles = ("first", "second")
    description = "Nim: take one to three of seven stones in turn; whoever takes the last one wins"
    move_forms = ("noop", ("take", ["1", "2", "3"]))
    move_help = "moves are (take 1), (take 2), (take 3) or noop"

    def __init__(self) -> None:
        super().__init__()
        self.dtype = np.dtype(np.int64)
        self.kernel = KERNEL

    def initial_array(self) -> np.ndarray:
        return np.array([7, 0], dtype=np.int64)

    def action_text(self, s: np.ndarray, role: int, action: int) -> str:
        return "noop" if action == 0 else f"(take {action})"

    def text_action(self, s: np.ndarray, role: int, text: str) -> int:
        return 0 if text == "noop" else int(text[6]) if text.startswith("(take ") else -1

    def validate_array(self, s: np.ndarray) -> None:
        check_array(s)

    def render(self, state: ggp.State) -> str:
        s = self._array_of(state)
        return f"{'o' * int(s[STONES])} ({int(s[STONES])} left, {self.roles[int(s[TURN])]} to take)"

    def svg(self, state: ggp.State, size: int = 360) -> str:
        stones = int(self._array_of(state)[STONES])
        dots = "".join(f'<circle cx="{20 + 40 * i}" cy="20" r="15"/>' for i in range(stones))
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" viewBox="0 0 300 40">{dots}</svg>'

    def state_to_dict(self, state: ggp.State) -> dict[str, Any]:
        s = self._array_of(state)
        return {"game": self.name, "stones": int(s[STONES]), "to_take": self.roles[int(s[TURN])]}

    def array_from_dict(self, data: dict[str, Any]) -> np.ndarray:
        return np.array([int(data["stones"]), self.roles.index(data["to_take"])], dtype=np.int64)

    def state_facts(self, state: ggp.State) -> list[str]:
        s = self._array_of(state)
        return sorted([f"(stones {int(s[STONES])})", f"(control {self.roles[int(s[TURN])]})"])


# --8<-- [end:game]


def sequences(stones: int, depth: int) -> int:
    """Move sequences of ``depth`` turns from ``stones``, by the rules read aloud (as perft counts: a game
    that ends before the last turn ends no sequence of ``depth`` turns)."""
    if depth == 0:
        return 1
    return sum(
        sequences(stones - k, depth - 1) if stones > k else int(depth == 1) for k in range(1, min(3, stones) + 1)
    )


@pytest.fixture
def nim() -> Iterator[ggp.Game]:
    # --8<-- [start:register]
    register("nim", Nim)  # the one line that makes a sixth game
    # --8<-- [end:register]
    try:
        yield ggp.load("nim")
    finally:
        unregister("nim")


def test_the_registry_and_the_game_api_know_it(nim: ggp.Game) -> None:
    assert "nim" in ggp.game_names()
    s = nim.initial_state()
    assert [m.text for m in nim.legal_moves(s, "first")] == ["(take 1)", "(take 2)", "(take 3)"]
    s = nim.next_state(s, ["(take 3)", "noop"])
    s = nim.apply_actions(s, [0, 3])
    assert nim.state_to_dict(s) == {"game": "nim", "stones": 1, "to_take": "first"}
    assert isinstance(s, NativeState) and nim.state_from_json(nim.state_to_json(s)) == s
    assert check_game(nim, walks=5) > 5  # and every promise of the Game API, along random games


def test_the_command_line_serves_it(nim: ggp.Game, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "nim"]) == 0
    assert "7 left, first to take" in capsys.readouterr().out
    assert main(["perft", "nim", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == str(sequences(7, 3))
    assert main(["random", "nim", "--games", "5", "--seed", "1"]) == 0
    assert "nim" in capsys.readouterr().out
    assert main(["match", "nim", "--first", "mcts:sims=300", "--second", "random", "--games", "2", "--seed", "3"]) == 0
    assert "first" in capsys.readouterr().out


def test_vector_game_and_compiled_search_run_on_its_kernel(nim: ggp.Game) -> None:
    from ggp.agents.uct import search
    from ggp.vector import VectorGame

    vg = VectorGame("nim", batch=16, autoreset=True, seed=2)
    finished = 0
    for _ in range(40):
        vg.step(vg.random_actions())
        finished += int(vg.terminal.sum())
        assert set(vg.goals[vg.terminal].sum(axis=1)) <= {100}  # a finished game has one winner
    assert finished > 0
    # From 5 stones, taking 1 leaves 4, a lost position for the taker: the search finds it.
    five = nim.state_from_array(np.array([5, 0], dtype=np.int64))
    result = search(nim, five, sims=3000, seed=1)
    assert result.best("first").text == "(take 1)"


def test_the_referee_plays_it(nim: ggp.Game) -> None:
    from ggp.agents import make_agent
    from ggp.match.referee import run_match

    record = run_match(nim, [make_agent("mcts:sims=500,seed=1"), make_agent("random:seed=2")], seed=4)
    assert sorted(record.goals) == [0, 100]
    assert record.goals[0] == 100  # seven stones: the first player wins with play that mcts finds


def test_the_web_app_offers_and_plays_it(nim: ggp.Game) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from ggp.web.app import create_app

    with TestClient(create_app(":memory:"), base_url="http://127.0.0.1") as client:
        catalog = client.get("/api/catalog").json()
        assert "nim" in [g["name"] for g in catalog["games"]]
        created = client.post("/api/games", json={"game": "nim", "players": {"second": "random"}})
        assert created.status_code == 201, created.text
        match = created.json()
        assert client.get(f"/games/{match['id']}").status_code == 200  # the play page
        reply = client.post(
            f"/api/games/{match['id']}/moves",
            params={"wait": 5},
            json={"role": "first", "move": "(take 3)", "step": 0},
        )
        assert reply.status_code == 200, reply.text
        assert reply.json()["state"]["stones"] < 4  # our three, and the random player's reply
