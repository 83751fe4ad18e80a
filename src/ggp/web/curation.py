"""The catalog as a person browses it: the games worth a first look, the sheets only testers want, and what a
sheet is like (how many play, whether they move in turns), read cheaply from its text and its traces.

The lists name sheets of the public GDL corpus (``../shared/corpus``, whose ``MANIFEST.json`` gives their
names): a server's other sheets are listed after the featured ones, as any sheet is.

>>> facts_of_text("(role white) (role black) (init (cell 1 1 b))")
{'players': 2}
>>> hidden("stateSpaceLarge"), hidden("connectFour"), FEATURED[0]
(True, False, 'connectFour')
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from ..core.errors import GGPError
from ..core.game import State
from ..gdl.grid import find_grid
from ..gdl.prover_game import ProverGame
from ..gdl.sheet import bounded

#: The best two-player games of the corpus, best first: the home page shows the first of them with their boards.
FEATURED = (
    "connectFour",
    "breakthroughSmall",
    "englishDraughts",
    "speedChess",
    "hex",
    "gomoku_11x11",
    "linesOfAction",
    "nineBoardTicTacToePie",
    "knightThrough",
    "sheepAndWolf",
    "dotsAndBoxes",
    "checkers-mustjump",
    "pawnWhopping",
    "quartoSuicide",
    "atariGo_7x7",
    "chomp",
    "kalaha6x2x4",
    "majorities",
    "minichess",
    "tictactoe2",
)

#: Sheets written to test reasoners (state-space and rule-depth probes, factoring puzzles) and near-duplicates
#: of a listed sheet (a tweak, a size, a "serial"/"parallel" pair): listed only when the viewer asks for all.
HIDDEN = frozenset(
    {
        "stateSpaceLarge",
        "stateSpaceMedium",
        "duplicateStateMedium",
        "ruleDepthExponential",
        "factoringEasyTurtleBrain",
        "factoringGeorgeForman",
        "factoringMediumTurtleBrain",
        "factoringMutuallyAssuredDestruction",
        "troublemaker01",
        "troublemaker02",
        "smallest_4player",
        "bunk_t",
        "incredible",
        "twisty-passages",
        "haystack",
        "untwistycomplex2",
        "urmAdd",
        "minichess-evilconjuncts",
        "snake_2008_tweaked",
        "connect4",
        "blocksWorldSerial",
        "blocksWorldParallel",
        "lightsOnParallel",
        "ticTacHeavenFC",
        "chineseCheckers2",
        "chineseCheckers3",
        "skirmishFinal2",
        "skirmishFinal3",
        "queens12ug",
        "queens31lg",
        "biddingTicTacToe_10coins",
        "copolymer_4_pie",
        "amazonsTorus_10x10",
        "hanoi_6_disks",
        "nim4",
        "kalaha_2009",
        "snake_2009",
        "quad_7x7",
        "futoshiki5",
        "sudokuGrade3",
        "sudokuGrade6E",
        "sudokuGrade6H",
    }
)

_ROLE = re.compile(r"\(\s*role\s+([^\s()?][^\s()]*)\s*\)", re.IGNORECASE)  # (role ?r) in a rule is no role
_COMMENT = re.compile(r";[^\n]*")
#: Trace lines read to tell turns from moves made together (a few games' worth).
_TRACE_LINES = 400


def hidden(stem: str) -> bool:
    """Whether the sheet ``stem`` is a test sheet or a near-duplicate (see :data:`HIDDEN`)."""
    return stem in HIDDEN


def facts_of_text(text: str) -> dict[str, Any]:
    """What a sheet's text says without reasoning: ``players`` (its roles, counted)."""
    return {"players": len(set(_ROLE.findall(_COMMENT.sub("", text))))}


def moves_of_trace(path: Path) -> str | None:
    """``turns`` or ``together`` from a corpus trace (``traces/STEM.jsonl``): whether two roles ever had a choice
    in one state; None without a trace."""
    if not path.is_file():
        return None
    try:
        with path.open(encoding="utf-8") as lines:
            for n, line in enumerate(lines):
                if n >= _TRACE_LINES:
                    break
                legal = json.loads(line).get("legal") or {}
                if sum(1 for moves in legal.values() if len(moves) > 1) > 1:
                    return "together"
    except (OSError, ValueError):
        return None
    return "turns"


def order(stem: str) -> tuple[int, str]:
    """A sheet's place in the catalog: the featured games first, in their order, then the others."""
    return (FEATURED.index(stem), "") if stem in FEATURED else (len(FEATURED), stem.lower())


#: Steps of a sheet's first traced game played on the prover to see its board fill (an empty board shows none).
BOARD_STEPS = 30


def board_of(text: str, trace: Path, seconds: float = 2.0) -> bool | None:
    """Whether a sheet's states lay out a board (a grid, :func:`ggp.gdl.grid.find_grid`), seen without
    grounding: the facts of its initial state and of the first :data:`BOARD_STEPS` steps of its first traced
    game, played on the top-down prover within ``seconds``; None when that does not finish. (On the public
    corpus it agreed with the grounded game's grid on 162 sheets of 168 and said no where the others said yes.)"""
    try:
        with bounded(deadline=time.monotonic() + seconds):
            game = ProverGame(text, "catalog")
            state: State = game.initial_state()
            initial = list(game.state_facts(state))
            facts = set(initial)
            if trace.is_file():
                with trace.open(encoding="utf-8") as lines:
                    for n, line in enumerate(lines):
                        step = json.loads(line)
                        if n >= BOARD_STEPS or step.get("game", 0) != 0 or not step.get("joint"):
                            break
                        state = game.next_state(state, step["joint"])
                        facts.update(game.state_facts(state))
            return find_grid(sorted(facts), initial, complete=False) is not None
    except (GGPError, OSError, ValueError, RecursionError):
        return None
