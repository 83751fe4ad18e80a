"""Rule sheets written for ggp: GDL-II games of hidden information and chance.

The public corpus has no GDL-II sheet, so these are ours: ``montyhall``; ``kuhn_poker`` and ``leduc_holdem``
(as OpenSpiel's ``kuhn_poker`` and ``leduc_poker``, so that the two can be compared); ``krieg_tictactoe``
(blind tic-tac-toe: a try on a taken cell is answered and tried again); ``liars_dice`` (one four-sided die
each, fours wild); ``fog_breakthrough`` (5x5 breakthrough where a player sees only the squares next to its
pieces).

>>> from ggp.gdl.examples import EXAMPLES, load_example
>>> "kuhn_poker" in EXAMPLES
True
>>> load_example("kuhn_poker").players
('first', 'second')
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ...core.errors import UnknownGameError
from ..game import GDLGame, ProverGame, load_text

_FOLDER = resources.files(__name__)
#: The example sheets by name.
EXAMPLES: tuple[str, ...] = tuple(sorted(p.name[:-4] for p in _FOLDER.iterdir() if p.name.endswith(".kif")))


def example_path(name: str) -> Path:
    """The path of the example sheet ``name``."""
    if name not in EXAMPLES:
        raise UnknownGameError(f"no example sheet {name!r}; the examples are: {', '.join(EXAMPLES)}")
    return Path(str(_FOLDER / f"{name}.kif"))


def example_text(name: str) -> str:
    """The text of the example sheet ``name``."""
    return example_path(name).read_text(encoding="utf-8")


def load_example(name: str) -> GDLGame | ProverGame:
    """The example ``name`` as a game (loaded once per process, as any sheet)."""
    return load_text(example_text(name), name)
