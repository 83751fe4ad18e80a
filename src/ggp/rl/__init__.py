"""Every ggp game as a reinforcement-learning environment: PettingZoo, Gymnasium and OpenSpiel.

Needs the ``rl`` extra (``pip install ggp[rl]``); ``import ggp`` never imports this package.

>>> import ggp.rl
>>> env = ggp.rl.aec_env("wallmaze")
>>> env.reset(seed=0)
>>> env.agent_selection, sorted(env.observe("white"))
('white', ['action_mask', 'observation'])

* :func:`aec_env`, :func:`parallel_env`: PettingZoo environments of any game (a
  built-in name or a ``.kif`` path), action masks in the observation dict;
* :func:`gym_env`: a Gymnasium env for one role, the others played by agent specs;
  :func:`vector_env`: a Gymnasium vector env over :class:`ggp.vector.VectorGame`;
* :func:`openspiel_game`: the game as a ``pyspiel`` game (registered as ``ggp_<name>``).

See ``docs/rl.md`` for observations, rewards and the worked example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["aec_env", "gym_env", "openspiel_game", "parallel_env", "vector_env"]


def aec_env(game: Any, **options: Any) -> Any:
    """A PettingZoo AEC environment of ``game``: see :class:`ggp.rl.pettingzoo_env.GGPAECEnv`; a GDL-II game's
    (chance, hidden information) observes each player's information only, see
    :class:`ggp.rl.pettingzoo_hidden.GGPHiddenAECEnv`."""
    from ..core.game import Game
    from ..registry import load

    loaded = load(game) if isinstance(game, (str, Path)) else game
    if isinstance(loaded, Game) and loaded.hidden_information:
        from .pettingzoo_hidden import GGPHiddenAECEnv

        return GGPHiddenAECEnv(loaded, **options)
    from .pettingzoo_env import GGPAECEnv

    return GGPAECEnv(loaded, **options)  # type: ignore[arg-type]  # not a kernel game: its TypeError says so


def parallel_env(game: Any, **options: Any) -> Any:
    """A PettingZoo Parallel environment of ``game``: see :class:`ggp.rl.pettingzoo_env.GGPParallelEnv`."""
    from .pettingzoo_env import GGPParallelEnv

    return GGPParallelEnv(game, **options)


def gym_env(game: Any, **options: Any) -> Any:
    """A Gymnasium environment of one role of ``game``: see :class:`ggp.rl.gymnasium_env.GGPGymEnv`."""
    from .gymnasium_env import GGPGymEnv

    return GGPGymEnv(game, **options)


def vector_env(game: Any, num_envs: int, **options: Any) -> Any:
    """A Gymnasium vector environment of ``num_envs`` games: see :class:`ggp.rl.gymnasium_env.GGPVectorEnv`."""
    from .gymnasium_env import GGPVectorEnv

    return GGPVectorEnv(game, num_envs, **options)


def openspiel_game(game: Any, **options: Any) -> Any:
    """``game`` as a ``pyspiel`` game: see :func:`ggp.rl.openspiel.openspiel_game`."""
    from .openspiel import openspiel_game as make

    return make(game, **options)
