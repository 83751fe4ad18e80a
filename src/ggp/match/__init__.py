"""Matches and tournaments: a referee, match records, series, round robins and ratings.

* :class:`Referee` runs one match between agents with a start and a play
  clock, replacing any failing move by a random legal one and recording why
  (:mod:`ggp.match.referee`).
* :mod:`ggp.match.calls` is how every part of ggp calls an agent: under a
  deadline, its answer judged, a random legal move played when it fails, and
  the :class:`Fault` kept. The referee, the GGP player, the web app and
  ``ggp play`` all use it.
* :class:`MatchRecord` is the JSON record of a match: readable back,
  validated, and verified by replaying its moves (:mod:`ggp.match.record`).
* :func:`run_series` plays a series between fixed players, as ``ggp match``
  does (:mod:`ggp.match.series`, statistics in :mod:`ggp.match.stats`).
* :mod:`ggp.match.tournament` runs resumable round robins in worker
  processes over an SQLite database (its schema and queries, the runner and
  its workers, and the report are modules of their own); :mod:`ggp.match.ratings` fits
  Bradley-Terry ratings with bootstrap intervals.

This package sits on top of the games and agents: it imports ``ggp.core``,
the games (through :func:`ggp.load`) and ``ggp.agents``, and none of them
imports it; ``ggp.protocol``, ``ggp.web`` and ``ggp.cli`` sit on top of it
(``tests/test_layers.py`` checks the layers).
"""

from .calls import FAULT_KINDS, Fault
from .record import JointMove, MatchRecord, RecordFormatError
from .referee import Referee, run_match
from .series import SeriesResult, run_series, summarize

__all__ = [
    "FAULT_KINDS",
    "Fault",
    "JointMove",
    "MatchRecord",
    "RecordFormatError",
    "Referee",
    "SeriesResult",
    "run_match",
    "run_series",
    "summarize",
]
