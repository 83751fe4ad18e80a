"""What the pages need to know about each game beyond the Game API.

A game's family says it through its view (:class:`ggp.core.family.View`):
how moves read, what the board adds, the levels, and :func:`annotate`, which
tells the browser where a legal move starts and ends on the board (so that it
can highlight cells and map clicks and keys to moves). A rule sheet gets the
generic grid view here.

>>> import ggp
>>> game = ggp.load("wallmaze")
>>> annotate(game, game.initial_state(), "white")[0]
{'move': '(move 2 5 3 5)', 'kind': 'step', 'from': [2, 5], 'to': [3, 5], 'dir': 'east', 'readable': 'east'}
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from ..core.family import square as square
from ..core.game import Game, Move, State
from ..gdl.grid import BLANK as BLANK
from ..gdl.grid import grid_of, is_blank
from ..match.calls import Fault
from ..match.outcome import fault_said
from ..registry import family_agents, view_of
from . import glyphs, notation
from .winning import winning_line


def family(game: Game) -> str:
    """The family the game belongs to (``amazons``, ``wallmaze``, ...), or ``other``: the game says."""
    return game.board_kind


def controls(game: Game) -> str:
    """How the play page takes moves on the board: the family view's scheme (``move-and-shoot``,
    ``directions``), else ``grid`` for a rule sheet whose facts describe a grid, else ``list``."""
    scheme = view_of(game).controls
    if scheme != "list":
        return scheme
    if game.hidden_information:  # a seat sees no board: it picks from its legal moves
        return "list"
    return "grid" if family(game) == "other" and grid_of(game) is not None else "list"


def board_svg(game: Game, state: State, size: int | None = None, before: State | None = None) -> str:
    """The game's SVG of ``state`` at the play page's size, with what its family's view adds on top.

    A rule sheet whose facts describe a grid is drawn as that grid (:func:`generic_svg`), the cells the last
    step changed from ``before`` marked.
    """
    if family(game) == "other" and grid_of(game) is not None:
        return generic_svg(game, state, game.board_size if size is None else size, before)[0]
    return view_of(game).decorate(game, state, game.svg(state, game.board_size if size is None else size))


def agents_for(game: Game, registered: Mapping[str, Any]) -> list[str]:
    """The registered agents (name -> factory) to offer for ``game``: all but those made for another game.

    A family's own agents play its games only; any other agent made for one game says so by its ``plays``
    attribute (a Game class).

    >>> import ggp
    >>> from ggp.agents import AGENTS
    >>> built_in = {name: AGENTS[name] for name in ("amazons", "bomberman", "mcts", "random", "wallmaze")}
    >>> agents_for(ggp.load("wallmaze"), built_in)
    ['mcts', 'random', 'wallmaze']
    """
    owners = family_agents()
    out = []
    for name in registered:
        if name in owners:
            if owners[name][0] == family(game):
                out.append(name)
            continue
        plays = getattr(registered[name], "plays", None)
        if plays is None or isinstance(game, plays):
            out.append(name)
    return sorted(out)


def annotate(game: Game, state: State, role: str, moves: list[Move] | None = None) -> list[dict[str, Any]]:
    """Each legal move of ``role`` with where it acts on the board (the family's view says).

    A dict per move: ``move`` (KIF text), ``kind`` (``move``/``fire`` for
    Amazons, ``step``/``bomb``/``noop`` otherwise), ``from`` and ``to`` as
    ``[x, y]`` or None, ``dir`` (``north`` .. ``west``, ``stay``) or None, and ``readable``, the move in the
    game's notation (the legal-move buttons' words; the KIF text is their tooltip).
    """
    if moves is None:
        moves = sorted(game.legal_moves(state, role))
    view = view_of(game)
    return [info | {"readable": view.readable(game, info["move"])} for info in view.annotate(game, state, role, moves)]


# --- levels: "play the computer" -------------------------------------------------------------------
def levels(game: Game) -> Mapping[str, tuple[str, float]]:
    """The levels "play the computer" offers for ``game``, easiest first: (agent spec, seconds per move).

    Easy is a short search (a random player only where a family says so); hard is the strongest
    agent made for the game, given more time.
    """
    return view_of(game).levels


def level(game: Game, name: str, max_time: float) -> tuple[str, float]:
    """The agent spec and think time of level ``name`` for ``game`` (the time capped at ``max_time``).

    >>> import ggp
    >>> level(ggp.load("wallmaze"), "hard", 60.0)
    ('wallmaze', 2.0)
    >>> level(ggp.load("wallmaze"), "expert", 60.0)
    Traceback (most recent call last):
    ...
    ValueError: level must be one of easy, medium, hard, not 'expert'
    """
    table = levels(game)
    if name not in table:
        raise ValueError(f"level must be one of {', '.join(table)}, not {name!r}")
    spec, seconds = table[name]
    return spec, min(seconds, max_time)


def player_name(game: Game, spec: str, seconds: float) -> str:
    """Who plays a seat, as a person reads it: ``Human``, ``Computer (easy)`` for a level of "play the computer"
    (its agent spec and think time), else ``Computer (SPEC)``.

    >>> import ggp
    >>> game = ggp.load("wallmaze")
    >>> player_name(game, "human", 1.0), player_name(game, "wallmaze", 2.0), player_name(game, "mcts:c=2", 1.0)
    ('Human', 'Computer (hard)', 'Computer (mcts:c=2)')
    """
    if spec == "human":
        return "Human"
    table = levels(game)
    named = [k for k, (s, t) in table.items() if s == spec and t == seconds] or [
        k for k, (s, _) in table.items() if s == spec
    ]
    return f"Computer ({named[0] if named else spec})"


# --- readable moves ------------------------------------------------------------------------------------
def readable(game: Game, move: str) -> str:
    """A move as a person reads it: ``c1-c5``, ``arrow c8``, ``east``, ``bomb``; the KIF text otherwise.

    >>> import ggp
    >>> readable(ggp.load("amazons_8x8"), "(move 3 1 3 5)"), readable(ggp.load("amazons_8x8"), "(fire 5 7)")
    ('c1-c5', 'arrow e7')
    >>> readable(ggp.load("wallmaze"), "(move 2 5 3 5)"), readable(ggp.load("bomberman"), "dropBomb")
    ('east', 'bomb')
    """
    if family(game) == "other":
        return notation.readable(game, move)
    return view_of(game).readable(game, move)


def fault_note(game: Game, fault: Fault) -> str:
    """A player's fault in the notes under the board: ``Step 3, white: time out: a random move was played
    (c1-c5)``, the move in the game's notation."""
    return fault_said(fault, readable(game, fault.played) if fault.played else None)


# --- the generic view: any rule sheet ----------------------------------------------------------------


_PALETTE = ["#1d4ed8", "#b91c1c", "#047857", "#7c3aed", "#b45309", "#0e7490", "#be185d", "#4d7c0f"]
#: Pieces named after a colour are drawn in it (fill, text colour).
_COLOURS = {
    "red": ("#c53030", "#fff"),
    "black": ("#222", "#fff"),
    "white": ("#fff", "#222"),
    "blue": ("#2b6cb0", "#fff"),
    "green": ("#2f855a", "#fff"),
    "yellow": ("#ecc94b", "#222"),
    "orange": ("#dd6b20", "#fff"),
    "purple": ("#6b46c1", "#fff"),
}


def piece_label(content: str) -> tuple[str | None, str]:
    """How a cell's content is drawn: the colour it names, if any, and the letters on the piece (the
    initials of its other words; ``wp``-like short names as they are).

    >>> piece_label("white king"), piece_label("blackKnight"), piece_label("red"), piece_label("wp")
    (('white', 'K'), ('black', 'N'), ('red', ''), (None, 'wp'))
    >>> piece_label("arrow"), piece_label("1 x")
    ((None, 'A'), (None, '1X'))
    """
    words = [w.lower() for w in re.sub(r"([a-z])([A-Z])", r"\1 \2", content).replace("_", " ").split()]
    colour = next((w for w in words if w in _COLOURS), None)
    others = [w for w in words if w != colour]
    if colour is None and len(content) <= 2:
        return None, content
    return colour, "".join("n" if w == "knight" else w[0] for w in others).upper()[:3]  # K is the king


def _piece_svg(content: str, cx: float, cy: float, cell: int, like: str | None, colours: dict[str, str]) -> list[str]:
    """One piece on a grid: its chess glyph, a draughts disc (crowned if a king), or a disc with its letters."""
    drawn = glyphs.glyph(content, like)
    named = glyphs.piece(content)
    if drawn and like == "chess":
        return [
            f'<text x="{cx}" y="{cy + cell * 0.28:.1f}" text-anchor="middle" font-size="{cell * 0.8:.0f}" '
            f'fill="#111" pointer-events="none" class="glyph">{drawn}</text>'
        ]
    if drawn is not None and named is not None:
        fill, ink = _COLOURS.get(named[0], ("#888", "#fff"))
        out = [f'<circle cx="{cx}" cy="{cy}" r="{cell * 0.36:.1f}" fill="{fill}" stroke="#333" pointer-events="none"/>']
        if drawn:
            out.append(
                f'<text x="{cx}" y="{cy + cell * 0.14:.1f}" text-anchor="middle" font-size="{cell * 0.4:.0f}" '
                f'fill="{ink}" pointer-events="none" class="glyph">{drawn}</text>'
            )
        return out
    out = []
    colour, short = piece_label(content)
    named_colour = _COLOURS.get(colour) if colour else None
    if named_colour is not None or len(content) > 2:
        fill, ink = named_colour or (colours.setdefault(content, _PALETTE[len(colours) % len(_PALETTE)]), "#fff")
        out.append(
            f'<circle cx="{cx}" cy="{cy}" r="{cell * 0.36:.1f}" fill="{fill}" stroke="#333" pointer-events="none"/>'
        )
    else:
        ink = colours.setdefault(content, _PALETTE[len(colours) % len(_PALETTE)])
        short = content
    if short:
        out.append(
            f'<text x="{cx}" y="{cy + cell / 8:.1f}" text-anchor="middle" font-size="{cell // 3}" '
            f'font-weight="bold" fill="{ink}" pointer-events="none">{html.escape(short)}</text>'
        )
    return out


def _pieces(cells: Mapping[tuple[int, int], list[str]], at: tuple[int, int]) -> list[str]:
    return sorted(c for c in cells.get(at, []) if not is_blank(c))


def generic_svg(game: Game, state: State, size: int = 480, before: State | None = None) -> tuple[str, list[str]]:
    """A rule sheet's state as a grid picture (cells ``data-gcell="i j"``) and the facts off the grid; without
    a grid, an empty picture and every fact. With ``before`` (the state a step ago), the cells whose pieces
    changed are marked (``class="last"``): where a piece left and where it arrived, what was dropped or taken.
    A finished game's winning line (:func:`~ggp.web.winning.winning_line`) is ringed (``class="won"``)."""
    facts = game.state_facts(state)
    grid = grid_of(game)
    if grid is None:
        return "", facts
    held, rest = grid.cells(facts)
    changed: set[tuple[int, int]] = set()
    if before is not None:
        was = grid.cells(game.state_facts(before))[0]
        changed = {at for at in set(held) | set(was) if _pieces(held, at) != _pieces(was, at)}
    won = winning_line(game, state)  # (empty unless the game is over and a line of pieces decided it)
    nx, ny = len(grid.columns), len(grid.rows)
    cell = max(16, min(56, size // max(nx, ny)))
    pad = 22
    width, height = pad + nx * cell, pad + ny * cell
    # numbered rows go up, as ranks and ggp's own boards do (y to the north); named rows read down
    up = all(y.lstrip("-").isdigit() for y in grid.rows)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{html.escape(game.name)} board, {nx} by {ny}" font-family="sans-serif" '
        f'data-up="{1 if up else 0}">'
    ]
    colours: dict[str, str] = {}
    like = glyphs.style(game)
    for i in range(nx):  # the columns' labels, as the readable moves name them (numbered columns lettered)
        parts.append(
            f'<text x="{pad + i * cell + cell / 2}" y="15" text-anchor="middle" font-size="11" fill="#333">'
            f"{html.escape(notation.column_label(grid, i))}</text>"
        )
    for j, y in enumerate(grid.rows):
        row = ny - 1 - j if up else j
        top = pad + row * cell
        parts.append(
            f'<text x="11" y="{top + cell / 2 + 4}" text-anchor="middle" font-size="11" fill="#333">'
            f"{html.escape(y)}</text>"
        )
        for i in range(nx):
            shade = "#f4f1ea" if (i + j) % 2 == 0 else "#e6e0d2"
            mark = ""
            if (i, j) in changed:  # the last step's squares, as lichess marks them
                shade, mark = ("#f1e7a6" if (i + j) % 2 == 0 else "#e3d47f"), ' class="last"'
            what = [c for c in held.get((i, j), []) if not is_blank(c)]
            label = notation.square(grid, i, j) + (f": {', '.join(what)}" if what else ": empty")
            parts.append(
                f'<rect data-gcell="{i} {j}"{mark} x="{pad + i * cell}" y="{top}" width="{cell}" '
                f'height="{cell}" fill="{shade}" stroke="#9a927f"><title>{html.escape(label)}</title></rect>'
            )
            arrived = (i, j) in changed and what  # a piece that came with the last step: it grows into place
            if arrived:
                parts.append('<g class="arrived">')
            for k, content in enumerate(what[:2]):
                cx = pad + i * cell + cell / 2
                cy = top + cell / 2 + (k * cell / 4 if len(what) > 1 else 0)
                parts.extend(_piece_svg(content, cx, cy, cell, like, colours))
            if arrived:
                parts.append("</g>")
            if (i, j) in won:  # the line that won, ringed over its pieces
                parts.append(
                    f'<rect class="won" x="{pad + i * cell + 2}" y="{top + 2}" width="{cell - 4}" height="{cell - 4}" '
                    f'rx="{cell // 5}" fill="none" stroke="#c0392b" stroke-width="3" pointer-events="none"/>'
                )
    parts.append("</svg>")
    return "".join(parts), rest


def annotate_generic(game: Game, moves: list[Move]) -> list[dict[str, Any]]:
    """Each legal move of a rule sheet with the grid cells it names (``cells``, as ``"i j"``)."""
    grid = grid_of(game)
    return [
        {
            "move": m.text,
            "kind": "other",
            "from": None,
            "to": None,
            "dir": None,
            "cells": [f"{i} {j}" for i, j in grid.move_cells(m.text)] if grid else [],
            "readable": said,
        }
        for m, said in zip(moves, notation.readable_set(game, [m.text for m in moves]), strict=True)
    ]


def explain(game: Game, before: State, joint: dict[str, str], after: State) -> list[str]:
    """What a person may not see from the board alone about the step ``before`` -> ``after`` by ``joint``.

    Wall maze: both stepped onto the same cell, so neither moved.

    >>> import ggp
    >>> maze = ggp.load("wallmaze")
    >>> s = maze.state_from_dict({**maze.state_to_dict(maze.initial_state()), "white": [6, 5], "black": [8, 5]})
    >>> joint = {"white": "(move 6 5 7 5)", "black": "(move 8 5 7 5)"}
    >>> explain(maze, s, joint, maze.next_state(s, list(joint.values())))
    ['white and black both stepped onto (7, 5), so neither moved']
    """
    return view_of(game).explain(game, before, joint, after)


#: What a client without a seat reads while a game of hidden information is played.
HIDDEN_NOTE = "hidden information: each seat sees only its own moves and what it perceives until the game is over"


def lines_svg(lines: list[str], size: int = 480) -> str:
    """Lines of text as an SVG (a seat's view of a game of hidden information, drawn where its board would be)."""
    height = max(60, 24 * len(lines) + 24)
    rows = "".join(
        f'<text x="12" y="{28 + 24 * i}" font-family="monospace" font-size="14">{html.escape(line)}</text>'
        for i, line in enumerate(lines)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{height}" '
        f'viewBox="0 0 {size} {height}" class="hidden-view">{rows}</svg>'
    )
