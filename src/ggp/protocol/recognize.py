"""Which game a received rule sheet is: a built-in game, played on its native engine, or any other game.

A player gets the rules with START. If they are ggp's own sheet for a
built-in game (modulo letter case, spacing and comments) the game is known at
once. Otherwise the sheet is compiled by the GDL reasoner and compared, by
behaviour, with each built-in game that has the same roles: the initial
state's facts, then along a few random walks the legal moves of every role,
the facts of every state, the terminal test and the final goals (facts and
moves compared modulo letter case). A sheet that behaves like a built-in game
(reformatted, rules reordered, renamed variables or helper relations) is
played on the native engine; any other on the reasoner.

>>> from ggp.core.kif import parse_terms
>>> from ggp.gdl import rules_text
>>> found = recognize(parse_terms(rules_text("wallmaze").upper()))
>>> found.native, found.how
('wallmaze', "ggp's own rule sheet for wallmaze")
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from ..core.errors import GGPError
from ..core.game import Game, Move, State
from ..core.kif import KifSyntaxError, Term, parse_term, parse_terms, term_text
from ..registry import game_names, load

#: Most steps of one random walk when comparing behaviour.
MAX_WALK = 1000


@dataclass
class Recognition:
    """What a rule sheet was found to be.

    ``game`` is what to play on: the native game when ``native`` names a
    built-in game, else the reasoner's game. ``gdl`` is the reasoner's game
    for the sheet when it was built (``None`` when the text alone identified
    a built-in game). ``how`` says how the game was found, for logs.
    """

    game: Game
    native: str | None
    how: str
    gdl: Game | None = None


def sheet_text(rules: Sequence[Term]) -> str:
    """The rule sheet as text, one sentence per line."""
    return "\n".join(term_text(r) for r in rules) + "\n"


def canonical(rules: Sequence[Term]) -> str:
    """The sheet's sentences in canonical text, lower case: equal for sheets that differ only in case and layout."""
    return " ".join(term_text(r) for r in rules).lower()


def sheet_roles(rules: Sequence[Term]) -> list[str]:
    """The roles a sheet declares with ``(role r)`` facts, in order."""
    roles = []
    for r in rules:
        if not (isinstance(r, tuple) and len(r) == 2):
            continue
        head, arg = r
        if isinstance(head, str) and isinstance(arg, str) and head.lower() == "role":
            roles.append(arg)
    return roles


@cache
def _builtin_sheets() -> dict[str, str]:
    """Canonical text of each built-in game's own sheet -> the game's name."""
    from ..gdl import BUILTIN_RULES, rules_text

    return {canonical(parse_terms(rules_text(name))): name for name in BUILTIN_RULES}


# sha1 of a sheet's canonical text -> the built-in game it behaves as, or None (checked, none does)
_known: OrderedDict[str, str | None] = OrderedDict()
_known_lock = threading.Lock()


def gdl_game(rules: Sequence[Term], name: str | None = None) -> Game:
    """The reasoner's game for ``rules`` (cached by text: the same sheet gives the same game): on the propnet,
    or on the top-down prover when the sheet is too large to ground (``game.engine`` says which)."""
    from ..gdl import load_text

    text = sheet_text(rules)
    if name is None:
        name = "gdl_" + hashlib.sha1(canonical(rules).encode()).hexdigest()[:8]
    return load_text(text, name)


def recognize(rules: Sequence[Term], *, deadline: float | None = None, seed: int = 0) -> Recognition:
    """Find the game ``rules`` define (see the module documentation).

    ``deadline`` (a ``time.monotonic()`` value) bounds the behaviour check:
    the walks get half the time left (at least 0.25 s, at most 3 s) once the
    sheet is compiled. Raises :class:`~ggp.gdl.GDLError` for a sheet that is
    not valid GDL.
    """
    canon = canonical(rules)
    name = _builtin_sheets().get(canon)
    if name is not None:
        return Recognition(load(name), name, f"ggp's own rule sheet for {name}")
    gdl = gdl_game(rules)
    key = hashlib.sha1(canon.encode()).hexdigest()
    with _known_lock:
        cached = _known.get(key, "")
    if cached != "":
        if cached is None:
            return Recognition(gdl, None, "GDL reasoner (no built-in game behaves alike)", gdl)
        return Recognition(load(cached), cached, f"behaves as {cached} (checked before)", gdl)
    left = 3.0 if deadline is None else deadline - time.monotonic()
    budget = min(3.0, max(0.25, 0.5 * left))
    roles = [r.lower() for r in gdl.roles]
    found: str | None = None
    how = "GDL reasoner (no built-in game behaves alike)"
    for candidate in game_names():
        native = load(candidate)
        if [r.lower() for r in native.roles] != roles:
            continue
        same, steps = same_behaviour(native, gdl, budget=budget, seed=seed)
        if same:
            found = candidate
            how = f"behaves as {candidate} ({steps} steps compared)"
            break
    with _known_lock:
        _known[key] = found
        while len(_known) > 64:
            _known.popitem(last=False)
    if found is None:
        return Recognition(gdl, None, how, gdl)
    return Recognition(load(found), found, how, gdl)


def same_behaviour(
    native: Game, other: Game, *, budget: float = 2.0, walks: int = 3, seed: int = 0
) -> tuple[bool, int]:
    """Whether ``other`` plays like ``native`` along random walks; returns (alike, steps compared).

    Compares the initial facts, then at each step of up to ``walks`` random
    walks (until terminal, or until ``budget`` seconds are spent): the
    terminal test, every role's legal moves, the facts after a random joint
    move, and the goals at the end. Any error counts as a difference.
    """
    deadline = time.monotonic() + budget
    rng = random.Random(seed)
    steps = 0
    try:
        if not _same_facts(native, native.initial_state(), other, other.initial_state()):
            return False, 0
        for _ in range(walks):
            mine, theirs = native.initial_state(), other.initial_state()
            for _ in range(MAX_WALK):
                if time.monotonic() > deadline:
                    return True, steps
                over = other.is_terminal(theirs)
                if over != native.is_terminal(mine):
                    return False, steps
                if over:
                    if tuple(native.goals(mine)) != tuple(other.goals(theirs)):
                        return False, steps
                    break
                joint: list[Move] = []
                for role, native_role in zip(other.roles, native.roles, strict=True):
                    legal = other.legal_moves(theirs, role)
                    if not _same_texts(
                        [m.text for m in native.legal_moves(mine, native_role)], [m.text for m in legal]
                    ):
                        return False, steps
                    joint.append(legal[rng.randrange(len(legal))])
                theirs = other.next_state(theirs, joint)
                mine = native.next_state(mine, [native.parse_move(m.text) for m in joint])
                steps += 1
                if not _same_facts(native, mine, other, theirs):
                    return False, steps
    except (GGPError, ValueError, LookupError, TypeError):
        return False, steps
    return True, steps


def _same_facts(a: Game, sa: State, b: Game, sb: State) -> bool:
    return _same_texts(a.state_facts(sa), b.state_facts(sb))


def _same_texts(xs: Sequence[str], ys: Sequence[str]) -> bool:
    """Whether two collections of KIF texts hold the same terms, modulo case and spacing."""
    if len(xs) != len(ys):
        return False
    if {x.lower() for x in xs} == {y.lower() for y in ys}:
        return True
    return {_norm(x) for x in xs} == {_norm(y) for y in ys}


def _norm(text: str) -> str:
    try:
        return term_text(parse_term(text)).lower()
    except KifSyntaxError:
        return text.lower()


__all__ = ["Recognition", "canonical", "gdl_game", "recognize", "same_behaviour", "sheet_roles", "sheet_text"]
