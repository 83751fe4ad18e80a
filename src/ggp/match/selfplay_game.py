"""One self-play game: an agent spec in every role, its rows as columns (see :mod:`ggp.match.selfplay`).

Its own module so that the Ray actors of :mod:`ggp.match.tournament.ray_backend` can play a game without
importing the driver's side of self-play, which imports them.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import GGPError

if TYPE_CHECKING:
    from ..agents.base import Choice

#: Most joint moves of one game (every built-in game ends far sooner; a rule sheet without a step limit may not).
MAX_STEPS = 100_000
COLUMNS = ("game_index", "seed", "step", "state", "moves", "actions", "policy_actions", "policy_visits", "goals")


class SelfplayError(GGPError):
    """Self-play cannot run as asked (a directory holding other settings, a missing pyarrow, ...)."""


def game_seed(seed: int, index: int) -> int:
    """The seed of self-play game ``index`` of a run with seed ``seed``."""
    return zlib.crc32(f"selfplay|{seed}|{index}".encode()) & 0x7FFFFFFF


def play_selfplay_game(task: dict[str, Any], on_step: Callable[[int], None] | None = None) -> dict[str, list[Any]]:
    """Play self-play game ``task["index"]`` of ``task["game"]`` with ``task["agent"]`` in every role.

    Returns its rows as columns (see the module documentation). Agents are
    asked without a clock; a move that is not legal raises
    :class:`SelfplayError` (training data must hold legal moves only).
    ``on_step`` is called with the step number after every joint move.
    """
    from ..agents import Limit, make_agent
    from ..registry import load
    from .calls import Fault, judge
    from .loop import Steps
    from .series import agent_seed

    game = load(task["game"])
    index, seed = int(task["index"]), game_seed(int(task["seed"]), int(task["index"]))
    roles = list(game.roles)
    agents = [make_agent(task["agent"], seed=agent_seed(seed, i)) for i in range(len(roles))]
    for role, agent in zip(roles, agents, strict=True):
        agent.start(game, role, None, None)
    cols: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    steps = Steps(game, random.Random(seed), on_step=None if on_step is None else lambda step, _: on_step(step))
    while not steps.over:
        state = steps.state
        if steps.step > MAX_STEPS:
            raise SelfplayError(f"{game.name} game {index} did not end in {MAX_STEPS} moves")
        joint, actions, pol_actions, pol_visits = [], [], [], []
        for role, agent in zip(roles, agents, strict=True):
            choice = agent.choose(state, Limit())
            verdict = judge(game, state, role, choice.move, step=steps.step)
            if isinstance(verdict, Fault):  # training data holds legal moves only: no random move instead
                raise SelfplayError(f"{task['agent']} in game {index}: {verdict.message}")
            joint.append(steps.take(role, verdict))
            actions.append(int(game.move_to_action(state, role, verdict)))
            acts, visits = _root_policy(game, choice, state, role, len(steps.legal(role)))
            pol_actions.append(acts)
            pol_visits.append(visits)
        cols["step"].append(steps.step - 1)
        cols["state"].append(game.state_to_json(state))
        cols["moves"].append([str(m) for m in joint])
        cols["actions"].append(actions)
        cols["policy_actions"].append(pol_actions)
        cols["policy_visits"].append(pol_visits)
        steps.play()
    state, step = steps.state, steps.step - 1
    goals = [int(g) for g in game.goals(state)]
    for agent in agents:
        agent.stop(state, tuple(goals))
    cols["game_index"] = [index] * step
    cols["seed"] = [seed] * step
    cols["goals"] = [goals] * step
    return cols


def _root_policy(game: Any, choice: Choice, state: Any, role: str, legal: int) -> tuple[list[int], list[int]]:
    """The actions of ``role``'s moves and their visits at the root the agent just searched (its Choice's
    policy); none when it did not search or had one move."""
    if legal < 2 or not choice.policy:
        return [], []
    acts = [int(game.move_to_action(state, role, m)) for m, _ in choice.policy]
    return acts, [v for _, v in choice.policy]
