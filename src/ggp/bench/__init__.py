"""Speed measurements on this machine: ``ggp bench`` (and :func:`run` from Python).

Every figure is the median of several repetitions (the machine may be shared
and noisy), and every ratio compares two figures measured in the same run,
with the repetitions of the two sides interleaved. The sections:

* ``random``: random full games per second for each game, compiled
  (:func:`~ggp.core.kernels.rollouts`, the game's fastest random rollout, and
  :func:`~ggp.core.kernels.random_playouts`, uniform) against the plain Game
  API loop (``legal_moves`` + ``next_state`` with :class:`random.Random`).
* ``amazons``: Amazons 10x10 and 8x8 against OpenSpiel: MCTS simulations per
  second (:func:`ggp.agents.uct.search` against ``pyspiel.MCTSBot`` with a
  random-rollout evaluator, same constant and simulations), and random games
  per second (our rollouts against a Python loop over ``pyspiel``, and against
  a plain C hierarchical playout measured once, see REFERENCES.md).
* ``wallmaze``: ``wallmaze`` against OpenSpiel's ``pathfinding`` on the same maze.
* ``vector``: transitions per second of :class:`ggp.vector.VectorGame` at
  batch 1, 64 and 1024.
* ``perft``: perft leaf sequences per second.
* ``memory``: memory of the MCTS tree per 100k nodes.
* ``compile``: first-call compile time in a fresh process with an empty numba
  cache, and with the cache it left.
* ``import``: whether ``import ggp`` loads numba.
* ``gdl``: random-playout transitions per second of rule sheets' propnets, against the native kernels.
* ``gdlmcts``: compiled UCT on rule sheets against the plain-Python UCT (and the native search).
* ``gdl2``: GDL-II sheets' compiled random playouts with their percepts, against the same sheets without.

The sections live in modules by subject (:mod:`~ggp.bench.native`,
:mod:`~ggp.bench.startup`, :mod:`~ggp.bench.gdl`, ...), each declaring its
``SECTIONS``; :mod:`~ggp.bench.base` holds what they share and
:mod:`~ggp.bench.report` prints the tables. A section that fails is reported
with its error; the others still run. When
OpenSpiel is missing, its columns say so and ours are still measured.

>>> from ggp.bench import SECTIONS
>>> SECTIONS[0]
'random'
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable

from .base import (
    OPENSPIEL_MISSING,
    Column,
    Config,
    Report,
    Section,
    machine_info,
    open_spiel_info,
    short_error,
)
from .report import format_value, print_report

__all__ = [
    "OPENSPIEL_MISSING",
    "SECTIONS",
    "Column",
    "Config",
    "Report",
    "Section",
    "format_value",
    "print_report",
    "run",
]

#: The modules that hold the sections, in the order ``ggp bench`` runs them. Each defines
#: ``SECTIONS = {key: (title, runner)}`` with ``runner(cfg: Config) -> Section``.
_MODULES = ("native", "startup", "gdl", "corpus", "rl", "hidden")

_RUNNERS: dict[str, Callable[[Config], Section]] = {}
_TITLES: dict[str, str] = {}
for _name in _MODULES:
    for _key, (_title, _runner) in importlib.import_module(f"{__name__}.{_name}").SECTIONS.items():
        _RUNNERS[_key], _TITLES[_key] = _runner, _title

SECTIONS: tuple[str, ...] = tuple(_RUNNERS)


def run(quick: bool = False, only: list[str] | None = None, progress: Callable[[str], None] | None = None) -> Report:
    """Measure the ``only`` sections (default: all of :data:`SECTIONS`) and return the report.

    A section that raises is recorded as failed with its error; the rest still run.
    """
    cfg = Config(quick=quick)
    keys = list(SECTIONS) if only is None else [k for k in SECTIONS if k in only]
    unknown = sorted(set(only or ()) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}")
    began = time.perf_counter()
    report = Report(quick=quick, machine=machine_info(), open_spiel=open_spiel_info(), sections=[])
    for key in keys:
        if progress is not None:
            progress(f"measuring {_TITLES[key]} ...")
        t0 = time.perf_counter()
        try:
            sec = _RUNNERS[key](cfg)
        except Exception as exc:
            sec = Section(key, _TITLES[key], [], status="failed", error=short_error(exc))
            frames = traceback.extract_tb(exc.__traceback__)
            if frames:
                where = frames[-1]
                sec.notes.append(f"raised at {where.filename}:{where.lineno} in {where.name}")
        sec.seconds = time.perf_counter() - t0
        report.sections.append(sec)
    report.seconds = time.perf_counter() - began
    return report
