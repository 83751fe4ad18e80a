"""The text and SVG view of a rule sheet's state as its facts, shared by both reasoners."""

from __future__ import annotations

import html
from typing import Any

from ..core.game import State
from .gdl_ii import percept_of


class FactsView:
    """``render`` and ``svg`` from ``state_facts``: for games whose sheet has no board view of its own."""

    name: str
    state_facts: Any
    is_terminal: Any
    hidden_information: bool

    def percepts(self, state: State, role: str) -> tuple[str, ...]:
        """What ``role`` perceived of the transition into ``state``: the state's ``(sees role P)`` facts, which
        a GDL-II sheet's ``sees`` rules were lowered into (:mod:`ggp.gdl.gdl_ii`)."""
        if not self.hidden_information:
            return ()
        seen = (percept_of(f, role) for f in self.state_facts(state))
        return tuple(p for p in seen if p is not None)

    def render(self, state: State) -> str:
        facts = self.state_facts(state)
        status = "terminal" if self.is_terminal(state) else "in play"
        return "\n".join([f"{self.name} ({status}), {len(facts)} facts:", *(f"  {f}" for f in facts)])

    def svg(self, state: State, size: int = 360) -> str:
        lines = self.render(state).splitlines()
        line_h = 16
        height = line_h * (len(lines) + 1)
        rows = "".join(f'<text x="8" y="{line_h * (i + 1)}">{html.escape(text)}</text>' for i, text in enumerate(lines))
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{height}" '
            f'viewBox="0 0 {size} {height}" font-family="monospace" font-size="12">'
            f'<rect width="{size}" height="{height}" fill="white"/>{rows}</svg>'
        )
