"""PettingZoo environments of every ggp game: :class:`GGPAECEnv` and :class:`GGPParallelEnv`.

Agents are the game's roles (``"white"``, ``"black"``); actions are the game's
integer actions (``Discrete(num_actions)``, the same for every role);
observations are dicts, as in PettingZoo's classic games::

    {"observation": float32 planes or vector (see ggp.rl.observe),
     "action_mask": int8 0/1 vector, 1 where the action is legal,
     "board": float32 (rows, columns, channels)}   # rule sheets whose state is a grid, only

Rewards are given when the game ends: each role's goal scaled to [-1, 1],
``(goal - 50) / 50``. ``terminations`` turn True in a terminal state;
``truncations`` turn True after ``max_cycles`` joint moves (None: no limit
but the game's own end).

In the AEC environment only the roles with a choice act: in a turn-taking
game the idle role (whose only legal move is ``noop``) is skipped and plays
``noop`` by itself, so ``agent_selection`` is always the role to move. Where
several roles choose at once (a simultaneous game), each is selected in role
order and the joint move is played once all have chosen, as PettingZoo's
``parallel_to_aec`` does. ``skip_idle=False`` selects every role at every
step instead (an idle role's mask then holds its one move), the cycle that
PettingZoo's ``aec_to_parallel`` needs.

An illegal action raises :class:`~ggp.IllegalMoveError` naming the legal
ones; with ``illegal="lose"`` it ends the game instead, the offender
rewarded -1 and the others 0 (PettingZoo's ``TerminateIllegalWrapper``);
with ``illegal="random"`` a random legal action is played in its place
(drawn from the generator ``reset(seed=...)`` seeds) and ``infos[agent]``
says so. PettingZoo's own ``max_cycles_test`` and ``parallel_seed_test``
draw actions without masks: they need ``"random"`` or ``"lose"``.

>>> from ggp.rl import parallel_env
>>> env = parallel_env("bomberman2p")
>>> obs, infos = env.reset(seed=1)
>>> obs["bomberman"]["observation"].shape, obs["bomberman"]["action_mask"].tolist()
((8, 8, 11), [0, 1, 0, 1, 0, 1, 1])
>>> obs, rewards, terminations, truncations, infos = env.step({"bomberman": 3, "bomberwoman": 4})
>>> rewards, terminations["bomberman"]
({'bomberman': 0.0, 'bomberwoman': 0.0}, False)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv  # type: ignore[import-untyped]

from ..core.native import KernelGame
from .core import RLGame, check_illegal_mode, check_max_cycles
from .render import rgb_array

RENDER_MODES = ("ansi", "rgb_array")


class _GGPEnv:
    """What both environments share: the game, spaces, observations and rendering."""

    metadata: dict[str, Any]
    possible_agents: list[str]
    render_mode: str | None

    def _setup(
        self, game: str | Path | KernelGame | RLGame, max_cycles: int | None, render_mode: str | None, illegal: str
    ) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, not {render_mode!r}")
        self._rg = RLGame.of(game)
        self.max_cycles = check_max_cycles(max_cycles)
        self.render_mode = render_mode
        self._illegal = check_illegal_mode(illegal)
        self.possible_agents = list(self._rg.roles)
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        obs = self._rg.observer
        spaces: dict[str, gymnasium.spaces.Space[Any]] = {
            "observation": gymnasium.spaces.Box(0.0, 1.0, obs.shape, dtype=np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (self._rg.num_actions,), dtype=np.int8),
        }
        if obs.board_shape is not None:
            spaces["board"] = gymnasium.spaces.Box(0.0, 1.0, obs.board_shape, dtype=np.float32)
        self._observation_spaces = {a: gymnasium.spaces.Dict(spaces) for a in self.possible_agents}
        self._action_spaces = {a: gymnasium.spaces.Discrete(self._rg.num_actions) for a in self.possible_agents}
        self._s = self._rg.initial()
        self._over = False
        self._np_random, _ = seeding.np_random(None)

    @property
    def game(self) -> KernelGame:
        """The ggp game this environment plays."""
        return self._rg.game

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._action_spaces[agent]

    def _observe(self, r: int) -> dict[str, np.ndarray]:
        rg = self._rg
        out = {"observation": rg.observer.observe(self._s, r)}
        out["action_mask"] = np.zeros(rg.num_actions, dtype=np.int8) if self._over else rg.mask(self._s, r)
        if rg.observer.board is not None:
            out["board"] = rg.observer.board_of(self._s)
        return out

    def _seed(self, seed: int | None) -> None:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)

    def _substitute(self, r: int, action: Any) -> int:
        legal = self._rg.legal(self._s, r)
        return int(legal[self._np_random.integers(len(legal))])

    def game_state(self) -> Any:
        """The current state as an immutable state of the Game API."""
        return self._rg.state(self._s)

    def render(self) -> Any:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if self.render_mode == "ansi":
            return self._rg.game.render(self._rg.state(self._s))
        return rgb_array(self._rg, self._s)

    def close(self) -> None:
        pass


class GGPAECEnv(_GGPEnv, AECEnv):
    """A PettingZoo AEC environment of any ggp game (see the module docstring).

    ``game`` is a game name, a rule sheet's path or a loaded game; ``skip_idle``
    selects only the roles with a choice; ``max_cycles`` bounds the number of
    joint moves; ``render_mode`` is None, ``"ansi"`` or ``"rgb_array"``;
    ``illegal`` is ``"raise"`` or ``"lose"``.
    """

    def __init__(
        self,
        game: str | Path | KernelGame | RLGame,
        *,
        skip_idle: bool = True,
        max_cycles: int | None = None,
        render_mode: str | None = None,
        illegal: str = "raise",
    ) -> None:
        super().__init__()
        self._setup(game, max_cycles, render_mode, illegal)
        self._skip_idle = bool(skip_idle)
        self.metadata = {
            "render_modes": list(RENDER_MODES),
            "name": f"ggp_{self._rg.name}",
            "is_parallelizable": not self._skip_idle,
        }
        self._joint = np.zeros(self._rg.num_roles, dtype=np.int64)
        self._movers: list[int] = []
        self._pos = 0

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._seed(seed)
        self._s = self._rg.initial()
        self._over = False
        self._steps = 0
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._begin_turn()

    def _begin_turn(self) -> None:
        rg, s = self._rg, self._s
        self._movers = rg.movers(s) if self._skip_idle else list(range(rg.num_roles))
        for r in range(rg.num_roles):
            if r not in self._movers:
                legal = rg.legal(s, r)
                self._joint[r] = legal[0]  # the idle role's one move (noop)
        self._pos = 0
        self.agent_selection = self.possible_agents[self._movers[0]]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._observe(self._index[agent])

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        rg = self._rg
        r = self._index[agent]
        a = rg.check(self._s, r, action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if a is None and self._illegal == "random":
            a = self._substitute(r, action)
            self.infos[agent] = {"illegal_action": action, "played": a}
        if a is None:
            if self._illegal == "raise":
                raise rg.illegal(self._s, r, action)
            self._end({x: (-1.0 if x == agent else 0.0) for x in self.agents}, truncated=False)
            self.infos[agent] = {"illegal_action": action}
        else:
            self._joint[r] = a
            self._pos += 1
            if self._pos < len(self._movers):
                self.agent_selection = self.possible_agents[self._movers[self._pos]]
            else:
                self._steps += 1
                if rg.step(self._s, self._joint):
                    self._end(dict(zip(self.possible_agents, rg.rewards(self._s), strict=True)), truncated=False)
                elif self.max_cycles is not None and self._steps >= self.max_cycles:
                    self._end({}, truncated=True)
                else:
                    self._begin_turn()
        self._accumulate_rewards()

    def _end(self, rewards: dict[str, float], truncated: bool) -> None:
        self._over = True
        for x in self.agents:
            self.rewards[x] = rewards.get(x, 0.0)
            if truncated:
                self.truncations[x] = True
            else:
                self.terminations[x] = True
        self.agent_selection = self.agents[0]


class GGPParallelEnv(_GGPEnv, ParallelEnv):
    """A PettingZoo Parallel environment of any ggp game (see the module docstring).

    Every live role gives an action at every step; a role whose only legal
    move is ``noop`` (or any single move) may be left out of the actions dict.
    Options as :class:`GGPAECEnv`'s.
    """

    def __init__(
        self,
        game: str | Path | KernelGame | RLGame,
        *,
        max_cycles: int | None = None,
        render_mode: str | None = None,
        illegal: str = "raise",
    ) -> None:
        self._setup(game, max_cycles, render_mode, illegal)
        self.metadata = {"render_modes": list(RENDER_MODES), "name": f"ggp_{self._rg.name}"}
        self._joint = np.zeros(self._rg.num_roles, dtype=np.int64)
        self.agents: list[str] = []

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._seed(seed)
        self._s = self._rg.initial()
        self._over = False
        self._steps = 0
        self.agents = list(self.possible_agents)
        return {a: self._observe(r) for r, a in enumerate(self.possible_agents)}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError(f"{self._rg.name}: the game is over; call reset() before step()")
        rg, s = self._rg, self._s
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        rewards = dict.fromkeys(self.agents, 0.0)
        offender = None
        for r, agent in enumerate(self.possible_agents):
            if agent in actions:
                a = rg.check(s, r, actions[agent])
            else:
                legal = rg.legal(s, r)
                a = int(legal[0]) if len(legal) == 1 else None
                if a is None:
                    raise ValueError(
                        f"{rg.name}: no action for {agent}, which has {len(legal)} legal actions; "
                        f"give one action per live agent"
                    )
            if a is None and self._illegal == "random":
                given = actions[agent]
                a = self._substitute(r, given)
                infos[agent] = {"illegal_action": given, "played": a}
            if a is None:
                if self._illegal == "raise":
                    raise rg.illegal(s, r, actions[agent])
                offender = agent
                infos[agent] = {"illegal_action": actions[agent]}
                break
            self._joint[r] = a
        terminated = truncated = False
        if offender is not None:
            rewards[offender] = -1.0
            terminated = True
        else:
            self._steps += 1
            if rg.step(s, self._joint):
                terminated = True
                rewards = dict(zip(self.possible_agents, rg.rewards(s), strict=True))
            elif self.max_cycles is not None and self._steps >= self.max_cycles:
                truncated = True
        self._over = terminated or truncated
        observations = {a: self._observe(r) for r, a in enumerate(self.possible_agents)}
        terminations = dict.fromkeys(self.agents, terminated)
        truncations = dict.fromkeys(self.agents, truncated)
        if self._over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos
