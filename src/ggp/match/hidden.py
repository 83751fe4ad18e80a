"""Matches of games with hidden information (GDL-II): chance played by the loop, each player told only what
it may know.

:func:`play_hidden_match` runs one match on :class:`~ggp.match.loop.Steps`, the one step engine: chance's move
is taken from the loop's generator (:meth:`~ggp.match.loop.Steps.take_chance`), every player's answer judged
and settled as in any match (a move that is not legal is a fault, and a random legal move is played). There
is no clock here: the players' own budgets bound their time (the referee, for clocks, runs
:class:`~ggp.agents.hidden.HiddenAgent`). Each player is given its :class:`~ggp.core.information.Information` (its own
moves and percepts), never the state; the record keeps the true history and each role's view.

>>> from ggp.agents.hidden import HiddenPlayer
>>> from ggp.gdl.examples import load_example
>>> game = load_example("montyhall")
>>> match = play_hidden_match(game, {"candidate": HiddenPlayer(samples=8)}, seed=3)
>>> len(match.joints), match.views["candidate"].steps[1].percepts
(3, ('(open_door 2)',))
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..agents.base import Choice, Limit
from ..core.game import Game, State
from ..core.information import Information
from .calls import Fault
from .loop import Steps


class InformationPlayer(Protocol):
    """What :func:`play_hidden_match` asks of a player (:class:`~ggp.agents.hidden.HiddenPlayer` is one)."""

    def start(self, game: Game, role: str, start_clock: float | None = ..., play_clock: float | None = ...) -> None: ...

    def choose(self, information: Information, limit: Limit = ...) -> Choice: ...

    def stop(self, state: State | None = ..., goals: tuple[int, ...] = ...) -> None: ...


@dataclass(frozen=True)
class HiddenMatch:
    """A finished match: the goals (role order), the true joint moves (texts), each player's view, the faults."""

    goals: tuple[int, ...]
    joints: tuple[tuple[str, ...], ...]
    views: Mapping[str, Information]
    faults: tuple[Fault, ...] = field(default=())


def play_hidden_match(
    game: Game, players: Mapping[str, InformationPlayer], *, seed: int = 0, play_clock: float | None = None
) -> HiddenMatch:
    """Play one match of ``game``: a player for every role but chance, chance played from ``seed``."""
    missing = [r for r in game.players if r not in players]
    if missing:
        raise ValueError(f"{game.name}: no player for {', '.join(missing)}")
    steps = Steps(game, random.Random(seed))
    views = {role: Information(role) for role in game.players}
    for role in game.players:
        players[role].start(game, role, play_clock=play_clock)
    faults: list[Fault] = []
    while not steps.over:
        if game.chance_role is not None:
            steps.take_chance()
        for role in game.players:
            began = time.perf_counter()
            answer = players[role].choose(views[role], Limit(time=play_clock))
            steps.settle(role, answer.move, elapsed=time.perf_counter() - began)
        record = steps.play()
        faults.extend(record.faults)
        joint = [game.parse_move(text) for text in record.joint]
        views = {role: view.after(game, steps.state, joint) for role, view in views.items()}
    goals = steps.goals()
    for role in game.players:
        players[role].stop(None, goals)
    return HiddenMatch(goals, tuple(m.joint for m in steps.moves), views, tuple(faults))
