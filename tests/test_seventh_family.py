"""A seventh game family in one folder (``tests/families/twentyone``): rules and kernel, notation and view,
and a player of its own. Nothing outside the folder names it, and ggp serves it everywhere: the registry and
the Game API, ``make_agent`` and compiled MCTS, the referee, the RL adapters, the web catalog, the
"play the computer" levels and the play page, and the command line, in a process that finds the family by the
``GGP_FAMILIES`` environment variable alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import ggp
from ggp.agents import AGENTS, make_agent
from ggp.match.referee import run_match
from ggp.registry import families, family_of, load_family, unregister_family
from ggp.testing import check_game

FOLDER = Path(__file__).parent / "families" / "twentyone"


@pytest.fixture
def game() -> Iterator[ggp.Game]:
    family = load_family(str(FOLDER))
    try:
        yield ggp.load("twentyone")
    finally:
        unregister_family(family.name)


def test_one_folder_makes_a_family_with_its_game_agent_and_view(game: ggp.Game) -> None:
    assert "twentyone" in ggp.game_names() and "twentyone" in families()
    assert family_of(game) is families()["twentyone"]
    assert "twentyone" in AGENTS and type(make_agent("twentyone")).__name__ == "CountingAgent"
    s = game.next_state(game.initial_state(), ["(add 3)", "noop"])
    assert game.state_to_dict(s) == {"game": "twentyone", "count": 3, "to_add": "second"}
    assert check_game(game, walks=5) > 5  # every promise of the Game API, along random games


def test_the_family_leaves_the_others_as_they_were(game: ggp.Game) -> None:
    from ggp.web import ui

    amazons = ggp.load("amazons_8x8")
    assert "twentyone" not in ui.agents_for(amazons, AGENTS)  # made for its own game only
    assert ui.agents_for(game, AGENTS) == sorted(set(ui.agents_for(amazons, AGENTS)) - {"amazons"} | {"twentyone"})


def test_after_unregistering_it_is_gone() -> None:
    family = load_family(str(FOLDER))
    unregister_family(family.name)
    assert "twentyone" not in ggp.game_names() and "twentyone" not in AGENTS
    with pytest.raises(ggp.UnknownGameError):
        ggp.load("twentyone")


def test_mcts_and_the_referee_play_it(game: ggp.Game) -> None:
    # the family's player keeps the count at 1 more than a multiple of 4: as first player it cannot lose
    record = run_match(game, [make_agent("twentyone"), make_agent("mcts:sims=300,seed=1")], seed=2)
    assert list(record.goals) == [100, 0]
    record = run_match(game, [make_agent("mcts:sims=300,seed=3"), make_agent("random:seed=4")], seed=5)
    assert sorted(record.goals) == [0, 100]


def test_the_rl_adapters_serve_it(game: ggp.Game) -> None:
    import ggp.rl

    env = ggp.rl.aec_env("twentyone")
    env.reset(seed=1)
    added, final = 0, {}
    for agent in env.agent_iter(max_iter=200):
        _, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final[agent] = reward
            env.step(None)
            continue
        action = env.action_space(agent).sample(env.observe(agent)["action_mask"])
        added += int(action)  # action k adds k (0 is noop, which the mask rules out for the role to move)
        env.step(action)
    assert added == 21 and sorted(final.values()) == [-1.0, 1.0]  # the count ran to 21 and one role won
    # Gymnasium, seated second against the family's own player: it wins every time as first player
    gym = ggp.rl.gym_env("twentyone", role="second", opponent="twentyone")
    gym.reset(seed=3)
    done, reward = False, 0.0
    while not done:
        action = int(gym.action_masks().nonzero()[0][-1])
        _, reward, terminated, truncated, _ = gym.step(action)
        done = terminated or truncated
    assert reward == -1.0


def test_the_web_app_lists_and_plays_it_by_its_view(game: ggp.Game) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from ggp.web.app import create_app

    with TestClient(create_app(":memory:"), base_url="http://127.0.0.1") as client:
        games = {g["name"]: g for g in client.get("/api/catalog").json()["games"]}
        assert games["twentyone"]["title"] == "Twenty-one"
        assert games["twentyone"]["levels"] == ["easy", "medium", "hard"]
        created = client.post("/api/play", json={"game": "twentyone", "level": "hard", "side": "second"})
        assert created.status_code == 201, created.text
        view = created.json()
        assert view["players"] == {"first": "twentyone", "second": "human"}  # the family's level table
        page = client.get(f"/games/{view['id']}")
        assert page.status_code == 200 and "The bar fills with the count" in page.text  # the family's legend
        view = client.get(f"/api/games/{view['id']}", params={"wait": 30}).json()
        assert view["state"]["count"] == 1 and view["turn"] == "second to add to 1"  # the player said 1
        reply = client.post(
            f"/api/games/{view['id']}/moves",
            params={"wait": 30},
            json={"role": "second", "move": "(add 2)", "step": view["step"]},
        )
        assert reply.status_code == 200, reply.text
        moves = reply.json()["moves"]
        assert moves[1]["readable"]["second"] == "+2"  # the family's notation
        assert reply.json()["state"]["count"] == 5  # 1, +2, then the player's +2: back on its track


def test_the_command_line_finds_it_by_the_environment(tmp_path: Path) -> None:
    env = {**os.environ, "GGP_FAMILIES": str(FOLDER)}
    cmd = [sys.executable, "-m", "ggp"]
    shown = subprocess.run([*cmd, "show", "twentyone"], env=env, capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert "count 0 of 21, first to add" in shown.stdout
    played = subprocess.run(
        [
            *cmd,
            "match",
            "twentyone",
            "--first",
            "twentyone",
            "--second",
            "mcts:sims=200",
            "--games",
            "2",
            "--seed",
            "1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert played.returncode == 0, played.stderr
    assert "twentyone" in played.stdout
    unknown = subprocess.run([*cmd, "show", "twentyone"], capture_output=True, text=True, timeout=600)
    assert unknown.returncode != 0 and "unknown game 'twentyone'" in unknown.stderr  # without it: not there


def test_a_bad_family_in_the_environment_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "nofamily"
    empty.mkdir()
    (empty / "__init__.py").write_text("X = 1\n")  # a package, but no FAMILY in it
    for entry, why in [(str(empty), "defines no FAMILY"), ("no_such_family_module", "No module named")]:
        env = {**os.environ, "GGP_FAMILIES": entry}
        shown = subprocess.run(
            [sys.executable, "-m", "ggp", "games"], env=env, capture_output=True, text=True, timeout=600
        )
        assert shown.returncode != 0 and f"GGP_FAMILIES names {entry!r}" in shown.stderr and why in shown.stderr
        assert "Traceback" not in shown.stderr  # one clear line, not a stack
