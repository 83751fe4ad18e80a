"""Smoke test of an installed ggp wheel, run from outside the repository (see tests/wheel/run.sh).

    python smoke.py core|web|rl|ray|bench

Each part uses only what the wheel installed: the package data (rule sheets, the web app's templates and
static files, py.typed) must come from the installed package, never from a source tree.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import warnings
from importlib import metadata, resources
from pathlib import Path


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"wheel smoke test failed: {what}")
    print(f"ok: {what}")


def ggp_command(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "ggp", *args], capture_output=True, text=True, check=True)
    return out.stdout


def core() -> None:
    import ggp

    here = Path(ggp.__file__).resolve()
    check("site-packages" in here.parts, f"ggp is imported from the installed package ({here})")
    check(ggp_command("--version").strip() == f"ggp {metadata.version('ggp')}", "ggp --version is the package's")
    check((resources.files("ggp") / "py.typed").is_file(), "py.typed is shipped")
    game = ggp.load("amazons_8x8")
    state = game.initial_state()
    check(len(game.legal_moves(state, "white")) == 60, "amazons_8x8 has 60 opening moves")
    check("(role white)" in ggp_command("rules", "wallmaze"), "ggp's own rule sheets are in the wheel")
    sheet = resources.files("ggp.gdl") / "tictactoe.kif"
    tictactoe = ggp.load(str(sheet))
    check(tictactoe.roles == ("xplayer", "oplayer"), "a rule sheet loads through the reasoner")
    check("engine" in ggp_command("info", str(sheet)), "ggp info reads a sheet")


def web() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from ggp.web.app import create_app

    with (
        tempfile.TemporaryDirectory() as folder,
        TestClient(create_app(Path(folder) / "web.sqlite3", arena=False), base_url="http://127.0.0.1") as client,
    ):
        check(client.get("/").status_code == 200, "the home page renders from the wheel's templates")
        check(client.get("/static/app.js").status_code == 200, "the web app's static files are in the wheel")
        check(client.get("/favicon.ico").status_code == 200, "the icon is in the wheel")
        check(client.get("/docs").status_code == 200, "the API docs are served offline")
        made = client.post("/api/games", json={"game": "wallmaze", "players": {"white": "random", "black": "random"}})
        check(made.status_code == 201, "a game starts")


def rl() -> None:
    import ggp.rl

    env = ggp.rl.aec_env("wallmaze")
    env.reset(seed=1)
    observation, *_ = env.last()
    check(observation["action_mask"].any(), "a PettingZoo environment gives a legal-action mask")
    spiel = ggp.rl.openspiel_game("amazons_8x8")
    check(spiel.new_initial_state().legal_actions() != [], "an OpenSpiel game starts")


def ray() -> None:
    import ggp.match.selfplay as selfplay

    with tempfile.TemporaryDirectory() as out:
        ggp_command(
            "selfplay",
            "wallmaze",
            "--agent",
            "random",
            "--games",
            "2",
            "--workers",
            "1",
            "--out",
            out,
            "--backend",
            "ray",
        )
        check(selfplay.read_selfplay(out).num_rows > 0, "self-play on a local Ray instance writes its rows")


def bench() -> None:
    import pyspiel

    check(pyspiel.load_game("tic_tac_toe").num_distinct_actions() == 9, "OpenSpiel, the benchmarks' peer, loads")
    check("random" in ggp_command("bench", "--help"), "ggp bench is there")


PARTS = {"core": core, "web": web, "rl": rl, "ray": ray, "bench": bench}

if __name__ == "__main__":
    for name in sys.argv[1:] or ["core"]:
        PARTS[name]()
