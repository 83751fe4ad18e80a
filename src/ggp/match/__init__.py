"""Matches and tournaments: a referee, match records, series, round robins and ratings.

* :class:`Referee` runs one match between agents with a start and a play
  clock, replacing any failing move by a random legal one and recording why
  (:mod:`ggp.match.referee`).
* :class:`MatchRecord` is the JSON record of a match: readable back,
  validated, and verified by replaying its moves (:mod:`ggp.match.record`).
* :func:`run_series` plays a series between fixed players, as ``ggp match``
  does (:mod:`ggp.match.series`, statistics in :mod:`ggp.match.stats`).
* :mod:`ggp.match.tournament` runs resumable round robins in worker
  processes over an SQLite database; :mod:`ggp.match.ratings` fits
  Bradley-Terry ratings with bootstrap intervals.

This package sits on top of the others: it imports ``ggp.core``,
``ggp.games`` (through :func:`ggp.load`) and ``ggp.agents``, and none of them
imports it.
"""

from .record import FAULT_KINDS, Fault, JointMove, MatchRecord, RecordFormatError
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
