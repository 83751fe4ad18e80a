"""The agent module of trained policies: importing it names :class:`~ggp.rl.qtable.PolicyAgent` ``policy``.

This is what ``--agent-module`` is for (see :mod:`ggp.match.plugins`): an agent
module registers its agents when it is imported, in each process that builds
agents from spec strings::

    ggp match wallmaze --agent-module ggp.rl.policy --white policy:path=wallmaze_q.npz --black random

Code that only trains or reads tables imports :mod:`ggp.rl.qtable`, which
leaves :data:`ggp.agents.AGENTS` alone (or calls its ``register()`` itself).

>>> import ggp.rl.policy
>>> from ggp.agents import AGENTS
>>> AGENTS["policy"] is ggp.rl.policy.PolicyAgent
True
"""

from __future__ import annotations

from .qtable import MAX_ENTRIES, PolicyAgent, QTable, register

__all__ = ["MAX_ENTRIES", "PolicyAgent", "QTable", "register"]

register()
