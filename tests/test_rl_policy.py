"""A trained policy is a ggp agent: saved by the worked example's trainer, played by ggp's referee."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")

import ggp
from ggp.agents import make_agent
from ggp.rl.observe import observer_for
from ggp.rl.qtable import PolicyAgent, QTable, register

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "train_wallmaze.py"


def _example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("train_wallmaze_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_table_round_trips_and_a_bad_file_is_refused(tmp_path: Path) -> None:
    game = ggp.load("wallmaze")
    table = QTable("wallmaze", 5, channels=(1, 2, 3))
    obs = observer_for(game).observe(game.initial_array(), 0)
    table.values(obs)[:] = [0.1, 0.2, 0.3, 0.4, 0.5]
    table.save(tmp_path / "q.npz")
    back = QTable.load(tmp_path / "q.npz")
    assert len(back) == 1 and back.channels == (1, 2, 3)
    assert np.allclose(back.get(obs), [0.1, 0.2, 0.3, 0.4, 0.5])
    (tmp_path / "bad.npz").write_bytes(b"not a table")
    with pytest.raises(ValueError, match="not a Q-table"):
        QTable.load(tmp_path / "bad.npz")
    agent = PolicyAgent(path=str(tmp_path / "q.npz"))
    with pytest.raises(ValueError, match="trained on wallmaze, not on bomberman"):
        agent.start(ggp.load("bomberman"), "bomberman")


def test_the_policy_plays_the_legal_action_of_highest_value_and_random_in_unseen_states() -> None:
    game = ggp.load("wallmaze")
    table = QTable("wallmaze", 5, channels=(1, 2, 3))
    obs = observer_for(game).observe(game.initial_array(), 0)
    table.values(obs)[:] = [0.0, 0.0, 9.0, 0.5, 0.0]  # action 2 (south) is best but illegal at the start
    agent = PolicyAgent.of(table)
    agent.start(game, "white")
    assert str(agent.select_move(game.initial_state())) == "(move 2 5 3 5)"
    agent.start(game, "black")
    assert str(agent.select_move(game.initial_state())) in ("(move 12 5 11 5)", "noop")
    assert agent.unseen == 1 and agent.moves == 2


def test_the_trained_agent_plays_through_ggp_match(tmp_path: Path) -> None:
    """A short training run of the worked example, then ``ggp match`` with the policy as an agent spec."""
    table = _example().train(300, seed=0)
    path = tmp_path / "wallmaze_q.npz"
    table.save(path)
    assert len(table) > 50
    register()  # names the policy agent in this process too

    assert isinstance(make_agent(f"policy:path={path}"), PolicyAgent)
    cmd = [sys.executable, "-m", "ggp", "match", "wallmaze", "--agent-module", "ggp.rl.policy"]
    cmd += ["--white", f"policy:path={path}", "--black", "random", "--games", "4", "--seed", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert f"policy:path={path}" in out.stdout and "mean goal" in out.stdout


def test_only_the_agent_module_registers_the_policy_agent() -> None:
    """Reading tables (ggp.rl.qtable) leaves ggp.agents.AGENTS alone; the agent module ggp.rl.policy adds 'policy'."""
    code = (
        "from ggp.agents import AGENTS\n"
        "import ggp.rl.qtable\n"
        "print('policy' in AGENTS)\n"
        "import ggp.rl.policy\n"
        "print(AGENTS['policy'] is ggp.rl.qtable.PolicyAgent)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_register_refuses_to_replace_another_agent_named_policy() -> None:
    from ggp.agents import AGENTS

    before = AGENTS.get("policy")
    AGENTS["policy"] = make_agent  # a stand-in that is not PolicyAgent
    try:
        with pytest.raises(ValueError, match="'policy' is taken"):
            register()
        assert AGENTS["policy"] is make_agent, "a refused register leaves the registry as it was"
    finally:
        if before is None:
            del AGENTS["policy"]
        else:
            AGENTS["policy"] = before
