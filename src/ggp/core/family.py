"""A game family: what one folder of ``ggp/games`` (or a folder of your own) tells the rest of ggp.

A family is a package whose ``__init__`` defines ``FAMILY``, a :class:`Family`
record naming, as ``"module:attribute"`` texts, its games, its agents and its
:class:`View`. Nothing is imported until it is used, so listing the games
imports no rules, and a family's player may build on ggp's agents without
the agents package importing the family. References that start with a dot
are relative to the family's package::

    FAMILY = Family(
        name="wallmaze",
        games={"wallmaze": (".rules:WallMaze", ())},
        agents={"wallmaze": ".player:WallMazeAgent"},
        view=".view:VIEW",
        titles={"wallmaze": ("Wall maze", "Race your marker through a one-lane maze.")},
    )

The built-in families are the packages of ``ggp.games``; others join with
:func:`ggp.registry.register_family` or the ``GGP_FAMILIES`` environment
variable (see :mod:`ggp.registry`). The web app, the CLI, ``make_agent`` and
the RL adapters ask the registry, so they branch on no family's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .game import Game, Move, State

#: The levels of "play the computer" for a game whose family names none: (agent spec, seconds per move). Easy is a
#: short search, not a random mover: one that a child beats by dropping four discs in one column is no opponent.
DEFAULT_LEVELS: Mapping[str, tuple[str, float]] = {
    "easy": ("mcts:sims=100", 0.5),
    "medium": ("mcts", 1.0),
    "hard": ("mcts", 3.0),
}


@dataclass(frozen=True)
class Family:
    """One game family: its games, its agents, its view, by reference (see the module docstring).

    ``name`` is what its games' :attr:`~ggp.Game.board_kind` says, so a game finds its family.
    ``games`` maps each game's name to its factory's reference and the arguments it is built with;
    ``agents`` maps agent spec names to factories made for these games only; ``view`` refers to
    the family's :class:`View` (an instance); ``titles`` gives each game's catalog title and blurb;
    ``planes`` refers to a function giving a game's :class:`Planes`.
    """

    name: str
    games: Mapping[str, tuple[str, tuple[Any, ...]]]
    agents: Mapping[str, str] = field(default_factory=dict)
    view: str = ""
    titles: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: A function ``planes(game) -> Planes``: how ggp.rl observes its games (none: the state array as numbers).
    planes: str = ""
    #: The package the relative references are read in (set when the family is registered).
    package: str = ""

    def resolve(self, reference: str) -> str:
        """``reference`` with a leading dot read in :attr:`package`: ``.rules:X`` is ``pkg.rules:X``."""
        if reference.startswith(".") and self.package:
            return self.package + reference
        return reference


@dataclass(frozen=True)
class Planes:
    """How ``ggp.rl`` observes a family's game: image-like planes ``(rows, columns, channels)`` for one role.

    Compiled functions write an observation as one flat row, channels last; ``tables`` are the game's
    constant tables (a first table that is an array holds the blank planes, and is scaled with the
    observation) and ``scale`` is 1.0 for float32 observations, 255.0 for bytes:

    - ``one(s, role, *tables, scale, out)`` and ``batch(states, role, *tables, scale, out)``;
    - ``encode(s, role, aux, out)`` with ``aux = (*tables, scale)``, one signature for compiled loops;
    - ``update(old, new, role, aux, out)``: ``out``, the observation of ``old``, made that of ``new`` by
      rewriting only what differs (see :mod:`ggp.rl.planes`).

    ``palette`` colours the channels a picture shows (None: a whole-board channel, not drawn), and ``under``
    names the channels painted first.
    """

    shape: tuple[int, ...]
    tables: tuple[Any, ...]
    one: Any
    batch: Any
    encode: Any
    update: Any
    palette: Sequence[tuple[int, int, int] | None] = ()
    under: tuple[int, ...] = ()


class View:
    """How a family's boards are shown and worked on a page. Every hook has a plain default.

    ``controls`` names the way the play page takes moves on the board, one of:

    - ``"move-and-shoot"``: click a piece, then where it goes (a move's ``from`` and ``to``), then the square
      it shoots at along a queen's line (a ``fire`` move's ``to``), as in Amazons;
    - ``"directions"``: arrow keys and a pad of buttons (a move's ``dir``), and one button for each kind of
      move in :attr:`buttons`;
    - ``"list"``: the legal moves as a list (any game).
    """

    controls: str = "list"
    #: Buttons the ``directions`` controls add, by move kind: ``{"bomb": "drop bomb (space)"}``.
    buttons: ClassVar[Mapping[str, str]] = {}
    #: One paragraph under the board: what the pictures mean and which keys work.
    legend: str = ""
    #: "Play the computer": level name -> (agent spec, seconds per move), easiest first.
    levels: ClassVar[Mapping[str, tuple[str, float]]] = DEFAULT_LEVELS

    def turn(self, game: Game, state: State) -> str | None:
        """Whose turn it is and to do what, where "white to move" would not say enough (None: the page words it)."""
        return None

    def decorate(self, game: Game, state: State, svg: str) -> str:
        """The game's SVG of ``state`` with what a page adds on top (badges, outlines)."""
        return svg

    def changed(self, game: Game, before: State, after: State) -> list[tuple[int, int]]:
        """The cells, ``(x, y)``, one step changed that a page marks as the last move: by default where each
        role's piece stood and went (roles placed at ``[x, y]`` in the state's document), as lichess marks a
        move's two squares."""
        was, now = game.state_to_dict(before), game.state_to_dict(after)
        out: list[tuple[int, int]] = []
        for role in game.roles:
            a, b = was.get(role), now.get(role)
            if a != b:
                out += [(c[0], c[1]) for c in (a, b) if isinstance(c, list) and len(c) == 2 and _ints(c)]
        return out

    def annotate(self, game: Game, state: State, role: str, moves: Sequence[Move]) -> list[dict[str, Any]]:
        """Each of ``moves`` with where it acts: ``move`` (text), ``kind``, ``from``/``to`` as ``[x, y]``, ``dir``."""
        return [
            {"move": m.text, "kind": "noop" if m.text == "noop" else "other", "from": None, "to": None, "dir": None}
            for m in moves
        ]

    def readable(self, game: Game, move: str) -> str:
        """A move's text as a person reads it (``c1-c5``, ``east``); the text itself by default."""
        return move

    def explain(self, game: Game, before: State, joint: Mapping[str, str], after: State) -> list[str]:
        """What a person may not see from the board alone about one step (nothing by default)."""
        return []

    def ply(self, moves: Sequence[str]) -> str:
        """One role's readable moves of steps running (Amazons' move, then its arrow) as one entry of the move
        list: joined by spaces by default."""
        return " ".join(moves)


def _ints(values: list[Any]) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


# --- helpers for views --------------------------------------------------------------------------
#: Unit steps by direction name, as the views and the play page name them.
DIRECTIONS: Mapping[str, tuple[int, int]] = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}


def direction(dx: int, dy: int) -> str | None:
    """The name of a unit step: ``direction(1, 0)`` is ``"east"``; None for any other step."""
    return next((name for name, step in DIRECTIONS.items() if step == (dx, dy)), None)


def square(x: int, y: int) -> str:
    """A board square in chess-like notation: (3, 5) is ``c5``.

    >>> square(3, 5), square(30, 1)
    ('c5', '(30,1)')
    """
    return f"{chr(ord('a') + x - 1)}{y}" if 1 <= x <= 26 else f"({x},{y})"


def cell_box(svg: str, x: int, y: int) -> tuple[float, float, float, float] | None:
    """The x, y, width and height of cell (x, y) in a built-in game's SVG (its ``data-cell="x y"`` rectangle)."""
    import re

    found = re.search(
        rf'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"[^>]*data-cell="{x} {y}"', svg
    )
    return tuple(float(v) for v in found.groups()) if found else None  # type: ignore[return-value]
