"""Warming up: load every built-in game's compiled kernels into this process.

A game's rules are numba functions loaded from numba's on-disk cache the
first time they run, which takes a second or two per process. Tournament
workers are forked from a server that has warmed up every game (see
:mod:`ggp.match._preload`); where there is no forkserver, each worker warms up
its game before its first match, so that the time is not taken from the
match's clocks. The runner warms up before it verifies the first record.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

_WARM: set[str] = set()


def warm_up(names: Iterable[str] | None = None) -> None:
    """Play one random game of each named built-in game (default: all) through the Game API.

    Errors are ignored: warming up only saves time later.
    """
    from ..core.game import random_playout
    from ..registry import game_names, load

    for name in names if names is not None else game_names():
        if name in _WARM:
            continue
        _WARM.add(name)
        try:
            game = load(name)
            state, _ = random_playout(game, game.initial_state(), random.Random(0))
            game.goals(state)
            game.state_from_json(game.state_to_json(state))
        except Exception:  # pragma: no cover - a broken game shows up when it is played
            continue
