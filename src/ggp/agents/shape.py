"""A game's shape, read from random games at the start clock: what decides which search options suit it.

Sancho measures a game's characteristics on random games before it plays (its ``GameCharacteristics``) and
turns RAVE on for "marking" games: two roles taking turns, each with at least as many moves as a game has
steps, and facts that latch (a stone placed stays placed, a pawn that left its home row never returns). There
a move is worth much the same whenever it is played, so its value over all the rollouts it appeared in is a
good first guess of its value now. The general player asks for many moves a turn besides
(:attr:`Shape.suits_rave`).

>>> from pathlib import Path
>>> import ggp
>>> shape = measure_shape(ggp.load(Path(ggp.gdl.__file__).parent / "tictactoe.kif"), seconds=None)
>>> shape.in_turn, shape.moves, shape.longest <= 9, shape.marking, shape.suits_rave  # nine cells and noop
(True, 10, True, True, False)
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import numpy as np

from ..core.game import Game
from ..core.native import KernelGame

#: Random games played to measure a shape, and the seconds they may take at most.
SHAPE_GAMES = 20
SHAPE_SECONDS = 1.0
#: Steps after which a random game is cut off (a game that long is no marking game).
MAX_STEPS = 1000
#: Latched facts a marking game has more than (Sancho's: more than two).
MIN_LATCHES = 2
#: The legal moves the role with a choice must have on average for RAVE to be worth it (see
#: :attr:`Shape.suits_rave`).
MIN_BRANCHING = 60.0


@dataclass(frozen=True)
class Shape:
    """What random games showed of a game: its roles, whether they always took turns (``in_turn``: at most
    one role had a choice in every state seen), the fewest moves any role has in all (``moves``: a sheet's
    legal propositions of that role), the longest game played (``longest`` steps, of ``games``), the facts
    that latched (``latches``: made true and never false again, or made false and never true again), and the
    mean number of legal moves of a role with a choice (``branching``)."""

    roles: int
    in_turn: bool
    moves: int
    longest: int
    latches: int
    games: int
    branching: float = 0.0

    @property
    def marking(self) -> bool:
        """Sancho's test for RAVE: two roles taking turns, at least as many moves as the longest game has steps,
        and more than :data:`MIN_LATCHES` latched facts."""
        return (
            self.roles == 2
            and self.in_turn
            and self.games > 0
            and self.moves >= self.longest
            and self.latches > MIN_LATCHES
        )

    @property
    def suits_rave(self) -> bool:
        """A marking game where the role to move has at least :data:`MIN_BRANCHING` moves on average: a wide
        board where stones are placed, as in Go, where RAVE was first shown to pay.

        RAVE's gain is in ordering many untried moves from the first visits. Against Sancho it won 5 of 10
        matches of gomoku_11x11 (81 moves a turn), where the search without it lost all 6 it played; on the
        marking games of 16 to 51 moves a turn (breakthroughSmall, knightThrough, breakthroughWalls,
        dotsAndBoxes, tictactoe_3d_2player, quad_7x7) it won 4 of 20, where the search without it won 6 of its
        latest 12 there, though it had won in self-play on the races. Sancho, whose test is :attr:`marking` alone, does
        not use it on the marking games of few moves a turn (draughts, pawnWhopping, quartoSuicide: it counts
        their pieces instead; bench/SANCHO.md)."""
        return self.marking and self.branching >= MIN_BRANCHING


def measure_shape(game: Game, games: int = SHAPE_GAMES, seconds: float | None = SHAPE_SECONDS, seed: int = 0) -> Shape:
    """The :class:`Shape` of ``game`` over up to ``games`` random games from the start, within ``seconds`` (None:
    however long they take).

    Played through the kernel's own functions, which any play of the game has compiled already. A game with
    no kernel, or no game finished in time, gives ``games=0`` (not marking)."""
    roles = len(game.roles)
    if not isinstance(game, KernelGame):
        return Shape(roles, False, 0, 0, 0, 0)
    kernel = game.kernel
    ctx = kernel.context()
    rng = random.Random(seed)
    buf = np.zeros((roles, max(1, kernel.max_actions)), dtype=np.int64)
    joint = np.zeros(roles, dtype=np.int64)
    first = game.initial_array()
    rose = np.zeros(first.shape, dtype=np.bool_)
    fell = np.zeros(first.shape, dtype=np.bool_)
    in_turn = True
    longest = played = 0
    choices = moves_seen = 0
    # The first calls may compile (from Python, the kernel's functions have an entry of their own): the clock
    # starts after them.
    if not kernel.terminal(ctx, first.copy()):
        kernel.legal(ctx, first.copy(), 0, buf[0])
    deadline = math.inf if seconds is None else time.perf_counter() + seconds
    for _ in range(games):
        work = first.copy()
        ended = False
        for step in range(MAX_STEPS + 1):
            if kernel.terminal(ctx, work):
                ended = True
                break
            if time.perf_counter() > deadline or step == MAX_STEPS:
                break
            counts = [int(kernel.legal(ctx, work, r, buf[r])) for r in range(roles)]
            if 0 in counts:  # a role without a move: the game cannot go on
                break
            for r, n in enumerate(counts):
                joint[r] = buf[r, rng.randrange(n)]
            choosing = [n for n in counts if n > 1]
            in_turn = in_turn and len(choosing) <= 1
            choices += len(choosing)
            moves_seen += sum(choosing)
            before = work.copy()
            kernel.apply(ctx, work, joint)
            rose |= (before == 0) & (work != 0)
            fell |= (before != 0) & (work == 0)
        if not ended:  # cut off, stuck or out of time: its length says nothing
            if time.perf_counter() > deadline:
                break
            continue
        played += 1
        longest = max(longest, step)
    latches = int((rose & ~fell).sum() + (fell & ~rose).sum())
    moves = min(game.num_actions(role) for role in game.roles)
    branching = moves_seen / choices if choices else 0.0
    return Shape(roles, in_turn, moves, longest, latches, played, branching)


__all__ = ["MIN_BRANCHING", "MIN_LATCHES", "SHAPE_GAMES", "SHAPE_SECONDS", "Shape", "measure_shape"]
