"""Round-robin tournaments in parallel worker processes (or on a Ray cluster), stored in SQLite, resumable.

Every pair of agents (spec strings) plays ``games`` matches in each seating
(so ``2 * games`` per pair). The whole schedule is written to the database
first, one row per match with the unique key (pair, game index, seats), and
each match's seed is fixed there. Then a runner hands pending matches to
worker processes, each of which builds its agents from the spec strings and
plays the match with a :class:`~ggp.match.referee.Referee`. The runner alone
writes the database, as each match finishes.

Guarantees:

* **No game counted twice.** A result row's key is its match's id, and it is
  written in the same transaction that moves the match from ``running`` (claimed
  by this runner) to ``done``.
* **No game lost.** A worker that dies (or stalls: no sign of life for
  ``stall_timeout`` seconds, when it is killed) has its match put back to
  ``pending`` and re-run by a fresh worker; after ``max_crashes`` such failures
  the match is marked ``failed`` (not counted; ``--retry-failed`` schedules it
  again). A worker whose match left a runaway agent thread (see
  :mod:`ggp.match.referee`) is retired after reporting, killing the thread.
* **Resumable.** Only one runner works on a database at a time (an exclusive
  lock on ``DB.lock``, released by the operating system if the runner dies).
  So when a runner starts, any ``running`` match is left over from a runner
  that was interrupted or killed, and goes back to ``pending``. Running the
  command again runs exactly the unfinished matches.

Schema (``PRAGMA user_version`` = 1)::

    meta(key PRIMARY KEY, value)        -- game, start_clock, play_clock, grace, seed, agent_modules, created
    matches(id PRIMARY KEY, agent_a, agent_b, game_index, seats, seed,
            status pending|running|done|failed, starts, crashes, claimed_by, claimed_at, error,
            UNIQUE(agent_a, agent_b, game_index, seats))
                                        -- agent_a < agent_b; seats 'ab': agent_a plays the first role
    results(match_id PRIMARY KEY REFERENCES matches, goal_a, goal_b, steps, faults, record, finished_at)
                                        -- record: the match record (JSON, see ggp.match.record)
    events(id PRIMARY KEY, time, match_id, kind, detail)
                                        -- reclaimed, crash, stall, cancelled, failed, retired, error

* **Budgets.** With ``match_timeout``, a match still running after that many
  seconds has its worker killed and is marked ``failed`` with ``cancelled: ...``
  as its error and a ``cancelled`` event (``--retry-failed`` runs it again).

The package's modules: :mod:`~ggp.match.tournament.db` (the database),
:mod:`~ggp.match.tournament.runner` (the runner and its lock),
:mod:`~ggp.match.tournament.worker` (what a worker process runs),
:mod:`~ggp.match.tournament.ray_backend` (the same on Ray actors, ``backend="ray"``:
the runner stays the only writer, with the same guarantees; see docs/ray.md) and
:mod:`~ggp.match.tournament.report` (the ratings table).

Workers start by the ``forkserver`` method where the platform has it (else
``spawn``), so they never inherit the runner's threads, and a replacement
worker starts quickly. Workers ignore Ctrl-C; the runner stops them.
"""

from .db import DEFAULT_DB, SCHEMA_VERSION, MatchRow, Settings, TournamentDB, TournamentError, match_seed
from .ray_backend import RayBackendError
from .report import report_lines
from .runner import BACKENDS, RunEvent, RunSummary, default_workers, run_tournament, runner_lock
from .worker import worker_main

__all__ = [
    "BACKENDS",
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "MatchRow",
    "RayBackendError",
    "RunEvent",
    "RunSummary",
    "Settings",
    "TournamentDB",
    "TournamentError",
    "default_workers",
    "match_seed",
    "report_lines",
    "run_tournament",
    "runner_lock",
    "worker_main",
]
