"""Gymnasium environments: one role of a game against agent specs (:class:`GGPGymEnv`), and many at once
(:class:`GGPVectorEnv`).

:class:`GGPGymEnv` plays ``role`` (the first role by default); every other role
is played by an agent made from a spec string, as ``ggp match`` takes them
(``"random"``, ``"mcts:sims=200"``, ``"wallmaze"``). Observations are the
float32 planes or vector of :mod:`ggp.rl.observe` (a ``Box``), actions the
game's integer actions (``Discrete``); :meth:`GGPGymEnv.action_masks` gives the
legal ones for maskable algorithms (sb3-contrib's ``MaskablePPO`` calls it), and
``info["action_mask"]`` carries the same. With ``skip_idle`` (the default) the
opponents play on alone while the agent's only legal move is ``noop``, so each
step is a real choice. The reward, at the end, is the role's goal scaled to
[-1, 1]: ``(goal - 50) / 50``; ``max_steps`` truncates.

An illegal action ends the game as a loss (reward -1, ``info["illegal_action"]``)
by default, as PettingZoo's classic games do, so that algorithms that do not
read masks can still run; ``illegal="raise"`` raises instead and
``illegal="random"`` plays a random legal action in its place.

>>> from ggp.rl import gym_env
>>> env = gym_env("wallmaze", opponent="random")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, env.action_masks().tolist()
((9, 13, 5), [True, False, False, True, False])
>>> obs, reward, terminated, truncated, info = env.step(3)  # white steps east
>>> reward, terminated
(0.0, False)

:class:`GGPVectorEnv` steps ``num_envs`` games of :class:`ggp.vector.VectorGame`
in one compiled call, the agent's role against uniformly random opponents:
observations ``(num_envs, *shape)`` (float32, or bytes with ``dtype=np.uint8``),
:meth:`GGPVectorEnv.action_masks` ``(num_envs, num_actions)``, autoreset on the
next step (gymnasium's default): the step that ends a game returns its final
observation and reward with ``terminated`` True, and the next step starts that
row again, ignoring its action (its mask allows every action). Every row steps at every call; where the
agent's role is idle (a turn-taking game), its mask holds its one move.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector.utils import batch_space

from ..agents import make_agent
from ..agents.base import Agent
from ..core.errors import IllegalMoveError
from ..core.kernels import rng_below, rng_state
from ..core.native import KernelGame
from ..vector import VectorGame
from . import observe, planes
from .core import RLGame, check_illegal_mode, check_max_cycles, reward_of
from .planes import updater_for
from .render import rgb_array

RENDER_MODES = ("ansi", "rgb_array")


class GGPGymEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One role of a ggp game as a Gymnasium environment (see the module docstring).

    ``opponent`` is one agent spec for every other role, or a dict from role to spec.
    """

    def __init__(
        self,
        game: str | Path | KernelGame | RLGame,
        *,
        role: str | None = None,
        opponent: str | dict[str, str] = "random",
        skip_idle: bool = True,
        max_steps: int | None = None,
        render_mode: str | None = None,
        illegal: str = "lose",
    ) -> None:
        self._rg = rg = RLGame.of(game)
        if role is None:
            role = rg.roles[0]
        if role not in rg.roles:
            raise ValueError(f"{rg.name} has no role {role!r}; its roles are {', '.join(rg.roles)}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, not {render_mode!r}")
        self.role = role
        self._r = rg.roles.index(role)
        others = [x for x in rg.roles if x != role]
        specs = dict.fromkeys(others, opponent) if isinstance(opponent, str) else dict(opponent)
        if sorted(specs) != sorted(others):
            raise ValueError(f"give one opponent spec for each of {', '.join(others)}, not {sorted(specs)}")
        for spec in specs.values():
            make_agent(spec)  # an unknown agent or option is refused here, not at the first reset
        self._specs = specs
        self._skip_idle = bool(skip_idle)
        self.max_steps = check_max_cycles(max_steps, "max_steps")
        self._illegal = check_illegal_mode(illegal)
        self.render_mode = render_mode
        self.metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, rg.observer.shape, dtype=np.float32)
        self.action_space = gymnasium.spaces.Discrete(rg.num_actions)
        self._joint = np.zeros(rg.num_roles, dtype=np.int64)
        self._agents: dict[int, Agent | None] = {}
        self._s = rg.initial()
        self._steps = 0
        self._over = False

    @property
    def game(self) -> KernelGame:
        return self._rg.game

    def game_state(self) -> Any:
        """The current state as an immutable state of the Game API."""
        return self._rg.state(self._s)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        rg = self._rg
        self._s = rg.initial()
        self._steps = 0
        self._over = False
        self._agents = {}
        for r, other in enumerate(rg.roles):
            if r == self._r:
                continue
            spec = self._specs[other]
            if spec.strip().lower() == "random":  # uniform over the legal actions, drawn here: no Game-API states
                self._agents[r] = None
            else:
                agent = make_agent(spec, seed=int(self.np_random.integers(2**31)))
                agent.start(rg.game, other)
                self._agents[r] = agent
        self._advance()
        return self._obs(), self._info()

    def _obs(self) -> np.ndarray:
        return self._rg.observer.observe(self._s, self._r)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks()}

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as a bool vector of ``num_actions`` (all False once the game is over)."""
        if self._over:
            return np.zeros(self._rg.num_actions, dtype=bool)
        return self._rg.mask(self._s, self._r).astype(bool)

    def _opponents(self) -> None:
        rg, s = self._rg, self._s
        state = None
        for r, agent in self._agents.items():
            legal = rg.legal(s, r)
            if len(legal) == 1:
                self._joint[r] = legal[0]
            elif agent is None:
                self._joint[r] = legal[self.np_random.integers(len(legal))]
            else:
                if state is None:
                    state = rg.state(s)
                move = agent.select_move(state)
                a = rg.game.move_to_action(state, rg.roles[r], move)
                if a < 0 or a not in legal:
                    raise IllegalMoveError(f"{rg.name}: the opponent {rg.roles[r]} chose {move}, which is not legal")
                self._joint[r] = a

    def _play(self) -> None:
        self._opponents()
        self._rg.apply(self._s, self._joint)
        self._steps += 1

    def _advance(self) -> None:
        """Let the opponents play on while the agent has no choice."""
        rg = self._rg
        while self._skip_idle and not rg.terminal(self._s) and not self._limit() and self._r not in rg.movers(self._s):
            self._joint[self._r] = rg.legal(self._s, self._r)[0]
            self._play()

    def _limit(self) -> bool:
        return self.max_steps is not None and self._steps >= self.max_steps

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError(f"{self._rg.name}: the game is over; call reset() before step()")
        rg = self._rg
        a = rg.check(self._s, self._r, action)
        info: dict[str, Any] = {}
        if a is None:
            if self._illegal == "raise":
                raise rg.illegal(self._s, self._r, action)
            info["illegal_action"] = action
            if self._illegal == "lose":
                self._over = True
                return self._obs(), -1.0, True, False, {**info, "action_mask": self.action_masks()}
            legal = rg.legal(self._s, self._r)
            a = int(legal[self.np_random.integers(len(legal))])
        self._joint[self._r] = a
        self._play()
        self._advance()
        terminated = rg.terminal(self._s)
        truncated = not terminated and self._limit()
        reward = reward_of(rg.goals(self._s)[self._r]) if terminated else 0.0
        if terminated or truncated:
            self._over = True
            goals = tuple(int(g) for g in rg.goals(self._s))
            for agent in self._agents.values():
                if agent is not None:
                    agent.stop(rg.state(self._s), goals)
        return self._obs(), reward, terminated, truncated, {**info, "action_mask": self.action_masks()}

    def render(self) -> Any:
        if self.render_mode == "ansi":
            return self._rg.game.render(self._rg.state(self._s))
        if self.render_mode == "rgb_array":
            return rgb_array(self._rg, self._s)
        return None


def _vector_step_template(  # type: ignore[no-untyped-def]
    ctx, s, prev, term, actions, role, init, rng, buf, joint, res, played, rewards, obs, mask, legal, count, aux, full
):
    # One pass over the rows: restart a row (next-step autoreset) or play the agent's action with random
    # opponents, then write its terminal flag, reward, mask and observation. Legality is read from the live mask
    # (the legal actions of the rows' current states); returns 0, or 1 + the first row whose action is illegal,
    # and nothing is written before every row has been checked. The mask is updated in place: the entries of
    # the row's last legal list (``legal[i, :count[i]]``) are cleared and the new list's set, since Amazons
    # 10x10's masks are 10,101 wide and its legal lists 144 long at most. The observation is encoded whole into a
    # fresh ``obs`` (``full``: writing every float once costs no more than reading them back for a copy), or
    # updated in place, the env's own buffer, from the row's state before the step (``prev``).
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    batch = s.shape[0]
    width = mask.shape[1]
    size = s.shape[1]
    for i in range(batch):
        if not term[i]:
            a = actions[i]
            if a < 0 or a >= width or not mask[i, a]:
                return i + 1
    for i in range(batch):
        row = s[i]
        old = prev[i]
        if not full:
            for j in range(size):
                old[j] = row[j]
        if term[i]:
            for j in range(size):
                row[j] = init[j]
            for k in range(width):
                mask[i, k] = False
            for r in range(nr):
                played[i, r] = -1
        else:
            for k in range(count[i]):
                mask[i, legal[i, k]] = False
            for r in range(nr):
                if r == role:
                    joint[r] = actions[i]
                else:
                    n = kernel_legal(ctx, row, r, buf)  # type: ignore[name-defined]  # noqa: F821
                    joint[r] = buf[rng_below(rng, n)]
                played[i, r] = joint[r]
            kernel_apply(ctx, row, joint)  # type: ignore[name-defined]  # noqa: F821
        t = kernel_terminal(ctx, row)  # type: ignore[name-defined]  # noqa: F821
        term[i] = t
        rewards[i] = 0.0
        if t:  # a row about to restart takes any action
            kernel_goals(ctx, row, res)  # type: ignore[name-defined]  # noqa: F821
            rewards[i] = (res[role] - 50.0) / 50.0
            for k in range(width):
                mask[i, k] = True
            count[i] = 0
        else:
            n = kernel_legal(ctx, row, role, legal[i])  # type: ignore[name-defined]  # noqa: F821
            count[i] = n
            for k in range(n):
                mask[i, legal[i, k]] = True
        if full:
            encode(row, role, aux, obs[i])  # type: ignore[name-defined]  # noqa: F821
        else:
            update(old, row, role, aux, obs[i])  # type: ignore[name-defined]  # noqa: F821
    return 0


def _planes_digest() -> str:
    # numba's cache of the compiled step checks this file only, not the encoders it inlines: naming the
    # step after the encoders' source makes a change there compile a new step instead of reusing a stale one
    text = b"".join(Path(m.__file__).read_bytes() for m in (observe, planes) if m.__file__)
    return "p" + hashlib.sha1(text).hexdigest()[:10]


_PLANES_DIGEST = _planes_digest()


class GGPVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of one role against random opponents, stepped together (see the module docstring).

    The rows start as a :class:`~ggp.vector.VectorGame`'s; a step is one compiled pass over them that plays
    each row, draws the opponents' moves and writes the observation, the reward and the mask, the game's kernel
    and the observation encoder inlined. Each step returns a new observation array (gymnasium's ``copy=True``);
    with ``copy=False`` it returns the env's own buffer, which the next step updates in place, rewriting only
    what changed in each row (gymnasium's own vector envs' ``copy=False``: copy what you keep), and
    :meth:`action_masks` returns a read-only view of the live mask instead of a copy. ``dtype=np.uint8`` gives
    the observations as bytes, the float32 planes times 255 rounded (``Box(0, 255, uint8)``, as image
    observations are; divide by 255 for the floats): a quarter of the memory a step writes, which is most of
    a step's time in wall maze and Bomberman. Only ``illegal="raise"`` is offered: a batch with an illegal
    action raises :class:`~ggp.IllegalMoveError` naming the row, and no row moves.

    >>> import numpy as np
    >>> from ggp.rl import vector_env
    >>> venv = vector_env("wallmaze", 4, seed=1)
    >>> obs, info = venv.reset()
    >>> obs.shape, venv.action_masks().shape
    ((4, 9, 13, 5), (4, 5))
    >>> obs, rewards, terminated, truncated, info = venv.step(np.array([3, 3, 0, 0]))
    >>> rewards.tolist(), terminated.tolist()
    ([0.0, 0.0, 0.0, 0.0], [False, False, False, False])
    """

    def __init__(
        self,
        game: str | Path | KernelGame | RLGame,
        num_envs: int,
        *,
        role: str | None = None,
        seed: int = 0,
        copy: bool = True,
        dtype: Any = np.float32,
    ) -> None:
        self._rg = rg = RLGame.of(game)
        if role is None:
            role = rg.roles[0]
        if role not in rg.roles:
            raise ValueError(f"{rg.name} has no role {role!r}; its roles are {', '.join(rg.roles)}")
        self.role = role
        self._r = rg.roles.index(role)
        self.copy = bool(copy)
        self._aux = rg.observer.aux_for(dtype)  # refuses a dtype other than float32 and uint8
        self.dtype = np.dtype(dtype)
        self._vg = VectorGame(rg.game, num_envs, autoreset=True, seed=seed)  # checks num_envs and seed
        self.num_envs = self._vg.batch
        kernel = rg.kernel
        self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}
        high = 1.0 if self.dtype == np.float32 else 255
        self.single_observation_space = gymnasium.spaces.Box(0, high, rg.observer.shape, dtype=self.dtype)
        self.single_action_space = gymnasium.spaces.Discrete(rg.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        encode, update = rg.observer.encoder, updater_for(rg.observer)
        self._step = kernel.specialise(
            _vector_step_template, encode=encode, update=update, planes_source=_PLANES_DIGEST
        )
        self._ctx = kernel.context()
        self._buf = np.empty(max(1, kernel.max_actions), dtype=np.int64)
        self._joint = np.empty(rg.num_roles, dtype=np.int64)
        self._res = np.empty(rg.num_roles, dtype=np.int64)
        self._init = np.ascontiguousarray(rg.game.initial_array(), dtype=kernel.dtype)
        self._legal = np.zeros((self.num_envs, max(1, kernel.max_actions)), dtype=np.int64)
        self._count = np.zeros(self.num_envs, dtype=np.int64)
        self._rng = rng_state(seed)
        #: The joint actions (num_envs, roles) the last step played; -1 in the rows it restarted.
        self.last_joint = np.full((self.num_envs, rg.num_roles), -1, dtype=np.int64)
        self._start()

    def _start(self) -> None:
        vg, rg = self._vg, self._rg
        vg.reset()
        self._s = np.array(vg.states)  # this env's rows, stepped by its compiled pass: all the initial state
        self._prev = np.empty_like(self._s)  # each row before the step (copy=False's updates compare the two)
        self._term = np.array(vg.terminal)
        self._mask = np.zeros((self.num_envs, rg.num_actions), dtype=bool)
        if rg.terminal(self._init):  # a sheet whose game is over at once: every row restarts at the next step
            self._mask[:] = True
            self._count[:] = 0
        else:
            first = rg.legal(self._init, self._r)
            self._legal[:, : len(first)] = first
            self._count[:] = len(first)
            self._mask[:, first] = True
        if not hasattr(self, "_obs"):
            self._obs = np.empty((self.num_envs, *rg.observer.shape), dtype=self.dtype)
        rg.observer.observe_batch(self._s, self._r, out=self._obs)  # copy=False keeps the same buffer
        self.last_joint[:] = -1

    @property
    def game(self) -> KernelGame:
        return self._rg.game

    @property
    def states(self) -> np.ndarray:
        """``(num_envs, L)``: each row's state array (a copy)."""
        return self._s.copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self._vg = VectorGame(self._rg.game, self.num_envs, autoreset=True, seed=seed)
            self._rng = rng_state(seed)
        self._start()
        return (self._obs.copy() if self.copy else self._obs), {}

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bool: the agent's legal actions in each row (copy=False: a read-only view)."""
        if self.copy:
            return self._mask.copy()
        view = self._mask.view()
        view.flags.writeable = False
        return view

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(
                f"{self._rg.name}: actions must be {self.num_envs} ints, one per row, not {a.dtype} {a.shape}"
            )
        a = np.ascontiguousarray(a, dtype=np.int64)
        rewards = np.empty(self.num_envs, dtype=np.float64)
        # copy=True: a fresh array, written whole; copy=False: the env's own buffer, updated in place
        obs = np.empty_like(self._obs) if self.copy else self._obs
        bad = self._step(
            self._ctx, self._s, self._prev, self._term, a, self._r, self._init, self._rng, self._buf,
            self._joint, self._res, self.last_joint, rewards, obs.reshape(self.num_envs, -1), self._mask,
            self._legal, self._count, self._aux, self.copy,
        )  # fmt: skip
        if bad:
            i = bad - 1
            legal = np.flatnonzero(self._mask[i]).tolist()
            raise IllegalMoveError(
                f"{self._rg.name}: row {i}: {int(a[i])} is not a legal action for {self.role}; legal actions: {legal}",
                role=self.role,
                move=str(int(a[i])),
            )
        return obs, rewards, self._term.copy(), np.zeros(self.num_envs, dtype=bool), {}
