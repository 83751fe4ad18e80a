"""Imported by the tournament's forkserver process, so that every worker forked from it starts ready.

It brings in the agents (and with them numba), the worker's code, and warms up
every built-in game (:func:`ggp.match.warm.warm_up`): a few seconds once per
tournament run, after which each worker, and each replacement of a worker
that died, starts in milliseconds. Importing this module has that side effect
on purpose; nothing else imports it.
"""

from __future__ import annotations

import ggp.agents  # noqa: F401 - the built-in agents, ready for every worker

from . import series, tournament  # noqa: F401 - the worker's code
from .warm import warm_up

warm_up()
