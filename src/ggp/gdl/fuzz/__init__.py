"""Differential fuzzing of the GDL engines: two engines check each other on generated sheets.

:mod:`.generate` writes random valid rule sheets from a seed, :mod:`.mutate` mutates the corpus's sheets,
:mod:`.compare` asks every engine (the top-down prover, the grounded propnet's evaluators, the bit-parallel
lanes) the same questions along random walks, :mod:`.shrink` reduces a sheet they disagree on, and
:mod:`.runner` runs it all (``python -m ggp.gdl.fuzz --count N --seed S [--corpus DIR] [--out DIR]``).
"""

from __future__ import annotations

from .compare import ENGINES, Disagreement, Outcome, compare
from .generate import generate
from .mutate import mutate
from .runner import Counts, run
from .shrink import shrink

__all__ = ["ENGINES", "Counts", "Disagreement", "Outcome", "compare", "generate", "mutate", "run", "shrink"]
