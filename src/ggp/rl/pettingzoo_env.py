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
from .core import TERMINAL, RLGame, Turn, action_int, check_illegal_mode, check_max_cycles, reward_of
from .render import rgb_array

RENDER_MODES = ("ansi", "rgb_array")


class _GGPEnv:
    """What both environments share: the game, spaces, observations and rendering."""

    metadata: dict[str, Any]
    possible_agents: list[str]
    render_mode: str | None

    def _setup(
        self,
        game: str | Path | KernelGame | RLGame,
        max_cycles: int | None,
        render_mode: str | None,
        illegal: str,
        every: bool,
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
        self._t = Turn(self._rg, every=every)
        self._s = self._t.s  # the turn's state array, played in place
        self._masks = self._t.masks
        self._joint = self._t.joint
        self._no_mask = np.zeros(self._rg.num_actions, dtype=np.int8)
        self._board = obs.board_shape is not None
        self._num_actions = self._rg.num_actions
        self._over = False
        self._np_random, _ = seeding.np_random(None)

    def _action(self, r: int, action: Any) -> int | None:
        """``action`` as an int if it is legal for role ``r`` now, else None (reads the live mask)."""
        a = action_int(action)
        return a if a is not None and 0 <= a < self._num_actions and self._masks[r, a] else None

    @property
    def game(self) -> KernelGame:
        """The ggp game this environment plays."""
        return self._rg.game

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._action_spaces[agent]

    def _observe(self, r: int) -> dict[str, np.ndarray]:
        # new arrays every time: PettingZoo's callers keep observations, and the turn rewrites its buffers
        t = self._t
        out = {
            "observation": t.observation(r),
            "action_mask": (self._no_mask if self._over else self._masks[r]).copy(),
        }
        if self._board:
            out["board"] = t.board()
        return out

    def _seed(self, seed: int | None) -> None:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)

    def _substitute(self, r: int, action: Any) -> int:
        legal = self._t.legal_of(r)
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
    ``illegal`` is ``"raise"``, ``"lose"`` or ``"random"``.

    A step costs one compiled call (:class:`ggp.rl.core.Turn`) once every mover
    has chosen, and a few dictionary reads before.
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
        self._setup(game, max_cycles, render_mode, illegal, every=False)
        self._skip_idle = bool(skip_idle)
        self.metadata = {
            "render_modes": list(RENDER_MODES),
            "name": f"ggp_{self._rg.name}",
            "is_parallelizable": not self._skip_idle,
        }
        self._everyone = tuple(self.possible_agents)
        self._movers: tuple[str, ...] = self._everyone
        self._by_bits: dict[int, tuple[str, ...]] = {}
        self._pos = 0

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._seed(seed)
        self._over = False
        self._steps = 0
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._next(self._t.restart())

    def _next(self, code: int) -> None:
        # after a turn (what Turn.play or restart returned): select the first mover, or end the game
        if code == TERMINAL:
            self._end(dict(zip(self.possible_agents, map(reward_of, self._t.goals), strict=True)), truncated=False)
        elif self.max_cycles is not None and self._steps >= self.max_cycles:
            self._end({}, truncated=True)
        else:
            movers = self._everyone
            if self._skip_idle:
                movers = self._by_bits.get(code) or self._movers_of(code)
            self._movers = movers
            self._pos = 0
            self.agent_selection = movers[0]

    def _movers_of(self, code: int) -> tuple[str, ...]:
        found = self._by_bits[code] = tuple(self.possible_agents[r] for r in self._t.movers(code))
        return found

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._observe(self._index[agent])

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        # AECEnv.last, one call shorter: the loop every agent runs
        agent = self.agent_selection
        return (
            self._observe(self._index[agent]) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        r = self._index[agent]
        a = self._action(r, action)
        if a is None:
            a = self._refuse(agent, r, action)
            if a is None:
                return
        # rewards come at the end only: in a game still going every reward and cumulative reward is 0
        self._joint[r] = a
        self._pos += 1
        if self._pos < len(self._movers):
            self.agent_selection = self._movers[self._pos]
            return
        self._steps += 1
        self._next(self._t.play())

    def _refuse(self, agent: str, r: int, action: Any) -> int | None:
        # an illegal action: raise, play a random legal one instead (returned), or end the game (None)
        if self._illegal == "random":
            a = self._substitute(r, action)
            self.infos[agent] = {"illegal_action": action, "played": a}
            return a
        if self._illegal == "raise":
            raise self._rg.illegal(self._s, r, action)
        self._end({x: (-1.0 if x == agent else 0.0) for x in self.agents}, truncated=False)
        self.infos[agent] = {"illegal_action": action}
        return None

    def _end(self, rewards: dict[str, float], truncated: bool) -> None:
        self._over = True
        ended = self.truncations if truncated else self.terminations
        for x in self.agents:
            reward = self.rewards[x] = rewards.get(x, 0.0)
            self._cumulative_rewards[x] += reward
            ended[x] = True
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
        self._setup(game, max_cycles, render_mode, illegal, every=True)
        self.metadata = {"render_modes": list(RENDER_MODES), "name": f"ggp_{self._rg.name}"}
        self.agents: list[str] = []

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._seed(seed)
        self._over = self._t.restart() == TERMINAL
        self._steps = 0
        self.agents = list(self.possible_agents)
        return {a: self._observe(r) for r, a in enumerate(self.possible_agents)}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError(f"{self._rg.name}: the game is over; call reset() before step()")
        if self._over:  # a rule sheet whose initial state is terminal: nothing to play
            raise RuntimeError(f"{self._rg.name}: the game is over at its start; no move can be played")
        rg, t = self._rg, self._t
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        rewards = dict.fromkeys(self.agents, 0.0)
        offender = None
        for r, agent in enumerate(self.possible_agents):
            if agent in actions:
                a = self._action(r, actions[agent])
            else:
                legal = t.legal_of(r)
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
                    raise rg.illegal(self._s, r, actions[agent])
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
            if t.play() == TERMINAL:
                terminated = True
                rewards = dict(zip(self.possible_agents, map(reward_of, t.goals), strict=True))
            elif self.max_cycles is not None and self._steps >= self.max_cycles:
                truncated = True
        self._over = terminated or truncated
        observations = {a: self._observe(r) for r, a in enumerate(self.possible_agents)}
        terminations = dict.fromkeys(self.agents, terminated)
        truncations = dict.fromkeys(self.agents, truncated)
        if self._over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos
