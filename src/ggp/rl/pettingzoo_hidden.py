"""A GDL-II game as a PettingZoo AEC environment whose observations are each player's information only.

:func:`~ggp.rl.aec_env` hands GDL-II games (chance, hidden information) here. The environment walks the same
nodes as the OpenSpiel adapter (:mod:`ggp.rl.openspiel_ii`): agents are the game's players (chance plays by
itself, from the generator ``reset(seed=...)`` seeds), ``agent_selection`` is the player with a choice, and
an agent's observation is its information: its own moves and percepts, step by step, as the information
state tensor (never the state). Dicts as in PettingZoo's classic games::

    {"observation": float32 vector (the information state tensor),
     "action_mask": int8 0/1 vector, 1 where the action is legal (all 0 when the agent is not to move)}

Rewards come at the end, ``(goal - 50) / goal_unit``; ``infos[agent]["information"]`` holds the agent's
information as text.

>>> from ggp.gdl.examples import load_example
>>> env = GGPHiddenAECEnv(load_example("kuhn_poker"), goal_unit=25)
>>> env.reset(seed=3)
>>> env.agent_selection, env.infos["first"]["information"]
('first', 'first: noop / (your_card queen) | noop')
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv  # type: ignore[import-untyped]

from ..core.errors import IllegalMoveError
from ..core.game import Game
from .openspiel_ii import openspiel_hidden_game


class GGPHiddenAECEnv(AECEnv):
    """A PettingZoo AEC environment of a GDL-II game (see the module)."""

    metadata: dict[str, Any]

    def __init__(self, game: Game, *, goal_unit: float = 50.0, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.game = game
        self.metadata = {"render_modes": ["ansi"], "name": f"ggp_{game.name}", "is_parallelizable": False}
        self.render_mode = render_mode
        self._spiel = openspiel_hidden_game(game, goal_unit=goal_unit)
        self.possible_agents = list(game.players)
        self.agents = list(self.possible_agents)
        self._actions = int(self._spiel.num_distinct_actions())
        size = int(np.prod(self._spiel.information_state_tensor_shape()))
        space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (self._actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(self._actions) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._state: Any = None

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self._state = self._spiel.new_initial_state()
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._settle()

    def _settle(self) -> None:
        """Play chance until a player is to move or the game is over, and set what follows from that."""
        state = self._state
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(self._rng.integers(len(outcomes)))][0])
        self.infos = {a: {"information": state.information_text(i)} for i, a in enumerate(self.possible_agents)}
        if state.is_terminal():
            returns = state.returns()
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = float(returns[i])
                self.terminations[a] = True
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[state.current_player()]
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self._state
        player = self.possible_agents.index(agent)
        mask = np.zeros(self._actions, dtype=np.int8)
        if not state.is_terminal() and state.current_player() == player:
            mask[state.legal_actions()] = 1
        tensor = np.asarray(state.information_state_tensor(player), dtype=np.float32)
        return {"observation": tensor, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state
        legal = state.legal_actions()
        if action is None or isinstance(action, bool) or int(action) not in legal:
            raise IllegalMoveError(f"{agent}: {action!r} is not a legal action; legal actions: {legal}", role=agent)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        state.apply_action(int(action))
        self._settle()

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return str(self._state)

    def close(self) -> None:
        pass

    def state_now(self) -> Any:
        """The true state (of ggp's Game API): for tests and referees, never an agent's observation."""
        return self._state.game_state()


__all__ = ["GGPHiddenAECEnv"]
