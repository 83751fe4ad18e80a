"""A trained policy as a ggp agent: tabular Q-values saved by a trainer, played by ``ggp match``.

A :class:`QTable` maps an observation (:mod:`ggp.rl.observe`, keyed by the
channels it is told to read) to one value per action. A trainer fills it and
saves it (:meth:`QTable.save`, a ``.npz`` file); :class:`PolicyAgent` plays it:
in each state, the legal action of highest value, or a random legal one in a
state the table has never seen.

Importing this module changes nothing else: the agent is named ``policy`` in
:data:`ggp.agents.AGENTS` only by :func:`register`, which the agent module
:mod:`ggp.rl.policy` calls when ``ggp match`` imports it::

    ggp match wallmaze --agent-module ggp.rl.policy --white policy:path=wallmaze_q.npz --black random

``docs/examples/train_wallmaze.py`` trains such a table on wall maze.

>>> import ggp, numpy as np
>>> from ggp.rl.observe import observer_for
>>> game = ggp.load("wallmaze")
>>> table = QTable(game.name, num_actions=5, channels=(1, 2, 3))
>>> obs = observer_for(game).observe(game.initial_array(), 0)
>>> table.values(obs)[3] = 1.0  # white's best first move: east
>>> agent = PolicyAgent.of(table)
>>> agent.start(game, "white")
>>> agent.select_move(game.initial_state())
Move('(move 2 5 3 5)')
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np

from ..agents import AGENTS
from ..agents.base import Agent
from ..agents.options import MAX_SEED, Range, check_options
from ..core.game import Game, Move, State
from ..core.native import KernelGame
from .observe import observer_for

#: The largest table loaded (entries), so that a stray file cannot take all memory.
MAX_ENTRIES = 50_000_000


class QTable:
    """Action values by observation: ``values(obs)`` is a float32 vector of ``num_actions``, made on first use.

    ``channels`` picks the observation's last-axis channels that identify a
    state (None: all of it); leaving out, say, the step counter folds states
    that differ only in it into one entry.
    """

    def __init__(self, game: str, num_actions: int, channels: Sequence[int] | None = None) -> None:
        self.game = game
        self.num_actions = int(num_actions)
        self.channels = tuple(int(c) for c in channels) if channels is not None else None
        self._table: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._table)

    def key(self, obs: np.ndarray) -> int:
        """The table's key for observation ``obs``: a 64-bit digest of the channels it reads."""
        part = obs if self.channels is None else obs[..., list(self.channels)]
        return int.from_bytes(hashlib.blake2b(np.ascontiguousarray(part).tobytes(), digest_size=8).digest(), "little")

    def values(self, obs: np.ndarray) -> np.ndarray:
        """The (writable) action values of ``obs``'s state; zeros for a state not seen before."""
        k = self.key(obs)
        v = self._table.get(k)
        if v is None:
            v = self._table[k] = np.zeros(self.num_actions, dtype=np.float32)
        return v

    def get(self, obs: np.ndarray) -> np.ndarray | None:
        """The action values of ``obs``'s state, or None if the table has not seen it."""
        return self._table.get(self.key(obs))

    def save(self, path: str | Path) -> None:
        keys = np.fromiter(self._table, dtype=np.uint64, count=len(self._table))
        values = np.stack(list(self._table.values())) if self._table else np.zeros((0, self.num_actions), np.float32)
        channels = np.array(self.channels if self.channels is not None else [], dtype=np.int64)
        np.savez_compressed(
            path,
            game=np.array(self.game),
            keys=keys,
            values=values,
            channels=channels,
            all_channels=np.array(self.channels is None),
        )

    @classmethod
    def load(cls, path: str | Path) -> QTable:
        """Read a table written by :meth:`save`; ValueError saying what is wrong with a bad file."""
        try:
            with np.load(path, allow_pickle=False) as data:
                game = str(data["game"])
                keys = data["keys"]
                values = data["values"]
                channels = None if bool(data["all_channels"]) else [int(c) for c in data["channels"]]
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}: not a Q-table written by ggp.rl.policy.QTable.save ({exc})") from None
        if keys.ndim != 1 or values.ndim != 2 or len(keys) != len(values) or len(keys) > MAX_ENTRIES:
            raise ValueError(f"{path}: a Q-table has one row of values per key, at most {MAX_ENTRIES:,} of them")
        table = cls(game, values.shape[1], channels)
        table._table = {int(k): v.astype(np.float32) for k, v in zip(keys, values, strict=True)}
        return table


class PolicyAgent(Agent):
    """Plays a :class:`QTable`: the legal action of highest value; a random legal one in an unseen state.

    ``path`` is the table's file (``policy:path=FILE`` on the command line);
    ``seed`` seeds the choice in unseen states and among equal values.
    """

    name = "policy"

    @check_options
    def __init__(self, path: str = "", seed: Annotated[int, Range(ge=0, le=MAX_SEED)] = 0) -> None:
        super().__init__()
        if not path:
            raise ValueError("the policy agent needs a table file: policy:path=FILE (see ggp.rl.policy)")
        self.table = QTable.load(path)
        self._rng = random.Random(seed)
        #: How many moves were chosen in states the table had not seen (at random), of how many.
        self.unseen = 0
        self.moves = 0

    @classmethod
    def of(cls, table: QTable, seed: int = 0) -> PolicyAgent:
        """An agent playing ``table`` (already in memory)."""
        agent = cls.__new__(cls)
        Agent.__init__(agent)
        agent.table = table
        agent._rng = random.Random(seed)
        agent.unseen = agent.moves = 0
        return agent

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        if game.name != self.table.game:
            raise ValueError(f"this policy was trained on {self.table.game}, not on {game.name}")
        if not isinstance(game, KernelGame):
            raise TypeError(f"the policy agent plays games with a compiled kernel, not {game!r}")
        self._observer = observer_for(game)
        self._r = game.roles.index(role)
        # within the start clock: the first observation loads (or compiles) the encoder, which under load
        # took longer than a play clock of 1 s
        self._observer.observe(game.initial_array(), self._r)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        game: Any = self.game
        legal = [int(a) for a in game.legal_actions(state, self.role)]
        obs = self._observer.observe(game.array_of(state), self._r)
        values = self.table.get(obs)
        self.moves += 1
        if values is None:
            self.unseen += 1
            choice = self._rng.choice(legal)
        else:
            best = max(float(values[a]) for a in legal)
            choice = self._rng.choice([a for a in legal if float(values[a]) == best])
        return game.action_to_move(state, self.role, choice)

    def __repr__(self) -> str:
        return f"PolicyAgent({self.table.game}, {len(self.table)} states)"


def register() -> None:
    """Name :class:`PolicyAgent` ``policy`` in :data:`ggp.agents.AGENTS`, so agent specs can use it (idempotent).

    ValueError if another agent already has the name.
    """
    known = AGENTS.get("policy")
    if known is not None and known is not PolicyAgent:
        raise ValueError(f"the agent name 'policy' is taken by {known!r}")
    AGENTS["policy"] = PolicyAgent
