"""A rule sheet's independent sub-games as games of their own, for the player (Sancho's factorisation).

Where a sheet is two games side by side and each role moves in one of them at each step (the two boards of
connectFourSimultaneous, chinook's odd and even squares; :mod:`ggp.gdl.factor`), the player searches the
sub-game where its role moves now: a turn-taking game of one board, not the pairs of moves of two.

>>> import ggp
>>> game = ggp.load("../shared/corpus/kif/connectFourSimultaneous.kif")
>>> split = factor_games(game, seconds=None)
>>> len(split.games)
2
>>> s = game.initial_state()
>>> i = split.part_of(s, "red")
>>> [str(m) for m in split.games[i].legal_moves(split.project(s, i), "black")]
['factor_pass']
"""

from __future__ import annotations

import random
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core.errors import MoveSyntaxError
from ..core.game import Game, Move, State
from ..gdl.factor import PASS, factor_sheet, find_factors, network_splits
from ..gdl.game import GDLGame
from ..gdl.grounder import ground
from ..gdl.sheet import GDLError, GDLLimitError, show

#: Most seconds of random games that check every role moves in one sub-game at a time.
CHECK_SECONDS = 1.0
#: Most random games played for that check.
CHECK_GAMES = 20
#: Steps after which a random game of the check is cut.
CHECK_STEPS = 400
#: The names the sub-games' sheets add begin so (a sheet that uses such a name is not factorised).
_PREFIX = "factor_"


@dataclass(frozen=True)
class FactorGames:
    """A sheet's sub-games (each a :class:`GDLGame` of the same base facts) and which moves are whose."""

    #: The whole game, held weakly: the sub-games are kept with it (:func:`factor_games`), not it by them.
    whole: weakref.ref[GDLGame]
    games: tuple[GDLGame, ...]
    #: Per sub-game, its moves: (role, move text) for every role's.
    moves: tuple[frozenset[tuple[str, str]], ...]
    #: Per sub-game, the whole game's index of each of its base facts.
    facts: tuple[np.ndarray, ...]
    #: Per sub-game, in its order of base facts: whether a fact is its own (or no sub-game's, as a step
    #: counter), not another sub-game's.
    own: tuple[np.ndarray, ...]

    @property
    def game(self) -> GDLGame:
        game = self.whole()
        if game is None:
            raise RuntimeError("the game these sub-games are of is gone")
        return game

    def part_of(self, state: State, role: str) -> int | None:
        """The sub-game in which all of ``role``'s legal moves in ``state`` lie, or None (none, or several)."""
        return _part(self.moves, role, self.game.legal_moves(state, role))

    def project(self, state: State, index: int, others: State | None = None) -> State:
        """``state`` as a state of sub-game ``index``: the same facts, or where ``others`` (a state of the
        sub-game) is given, the other sub-games' facts as they are there."""
        bits = np.frombuffer(self.game._state_of(state)._bits, dtype=np.uint8)[self.facts[index]]
        sub = self.games[index]
        if others is not None:
            kept = np.frombuffer(sub._state_of(others)._bits, dtype=np.uint8)
            bits = np.where(self.own[index], bits, kept)
        return sub.state_from_array(bits)


def _part(parts: tuple[frozenset[tuple[str, str]], ...], role: str, legal: Sequence[Move]) -> int | None:
    moves = {(role, m.text) for m in legal}
    return next((i for i, own in enumerate(parts) if moves <= own), None)


_found: weakref.WeakKeyDictionary[Game, FactorGames | None] = weakref.WeakKeyDictionary()


def factor_games(game: Game, seconds: float | None = CHECK_SECONDS, seed: int = 0) -> FactorGames | None:
    """``game``'s sub-games where it is a rule sheet of independent sub-games in which every role moves in one
    at a time (checked on random games for at most ``seconds``, None: :data:`CHECK_GAMES` games), else None.
    Found once per game object."""
    if game in _found:
        return _found[game]
    got = _factor_games(game, seconds, seed) if isinstance(game, GDLGame) else None
    _found[game] = got
    return got


def _factor_games(game: GDLGame, seconds: float | None, seed: int) -> FactorGames | None:
    if len(game.roles) < 2 or game.hidden_information or not network_splits(game.propnet):
        return None
    if _PREFIX in game.rules_text.lower():
        return None  # (the names the sub-games' sheets add could be the sheet's own)
    try:
        gp = ground(game.program)
    except GDLLimitError:
        return None
    factors = find_factors(gp)
    if factors is None or any(len({r for r, _ in f.moves}) < 2 for f in factors.groups):
        # A sub-game of one role's moves alone (each role's own guess, its own counter) meets the others in
        # the goals only: played alone, with the others' facts standing still, it would be another game.
        return None
    sp = game.program.spelling
    roles = {r.lower(): r for r in game.roles}
    moves = tuple(
        frozenset((roles[r.lower()], _move_text(game, show(m, sp))) for r, m in f.moves) for f in factors.groups
    )
    if not _one_at_a_time(game, moves, seconds, seed):
        return None
    games = []
    facts = []
    own = []
    whole = game.propnet.base_texts
    for i in range(len(factors.groups)):
        try:
            sub = GDLGame(factor_sheet(gp, game.program, factors, i), name=f"{game.name}~{i + 1}")
        except GDLError:
            return None
        index = {t.lower(): k for k, t in enumerate(sub.propnet.base_texts)}
        if len(index) != len(whole) or any(t.lower() not in index for t in whole):
            return None
        order = np.array([index[t.lower()] for t in whole], dtype=np.int64)
        facts.append(np.argsort(order))  # (the sub-game's k-th fact is the whole game's order^-1[k])
        games.append(sub)
        others = {show(f, sp).lower() for k, g in enumerate(factors.groups) if k != i for f in g.facts}
        own.append(np.array([t.lower() not in others for t in sub.propnet.base_texts], dtype=bool))
    if not all(_ends(sub, seed) for sub in games):
        return None
    return FactorGames(weakref.ref(game), tuple(games), moves, tuple(facts), tuple(own))


def _ends(game: GDLGame, seed: int) -> bool:
    """Whether random games of a sub-game end (the whole game's end may need a move of another sub-game), each
    with a goal for every role (a sub-game may end where the whole game never does)."""
    try:
        goals, _, _ = game.random_playouts(CHECK_GAMES, seed=seed, max_steps=CHECK_STEPS)
    except GDLError:
        return False
    return bool((goals >= 0).all())  # (a game cut at max_steps has goals -1)


def _move_text(game: GDLGame, text: str) -> str:
    """A move's text as the game spells it; as written where the network has no such move (never legal)."""
    try:
        return game.parse_move(text).text
    except MoveSyntaxError:
        return text


def _one_at_a_time(
    game: GDLGame, moves: tuple[frozenset[tuple[str, str]], ...], seconds: float | None, seed: int
) -> bool:
    """Whether in random games every role's legal moves always lay in one sub-game."""
    rng = random.Random(seed)
    began = time.perf_counter()
    for _ in range(CHECK_GAMES):
        s: State = game.initial_state()
        for _ in range(CHECK_STEPS):
            if game.is_terminal(s):
                break
            joint = []
            for role in game.roles:
                legal = game.legal_moves(s, role)
                if _part(moves, role, legal) is None:
                    return False
                joint.append(rng.choice(legal))
            s = game.next_state(s, joint)
            if seconds is not None and time.perf_counter() - began > seconds:
                return True
    return True


__all__ = ["PASS", "FactorGames", "factor_games"]
