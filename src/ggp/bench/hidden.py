"""The ``gdl2`` section: GDL-II sheets' compiled random playouts, percepts included, against the same sheets
with their ``sees`` rules taken out.

A GDL-II sheet's percepts are fluents of the state after each transition (:mod:`ggp.gdl.gdl_ii`), so the
compiled kernel computes them at every step of a playout. The section measures what that costs: for each
example sheet (:mod:`ggp.gdl.examples`), transitions/s of ``ggp.core.kernels.random_playouts`` over the sheet
as written and over the sheet without ``sees`` rules, repetitions interleaved; the target is a ratio within 2x.
"""

from __future__ import annotations

from typing import Any

from ..core.kif import parse_terms, term_text
from .base import Column, Config, Section, rate_ratio
from .gdl import Play, kernel_play, transition_rates

#: The issue's bound: playouts with percepts at least half as fast as without.
PERCEPT_COST_BOUND = 2.0


def without_percepts(text: str) -> str:
    """The sheet ``text`` with every ``sees`` rule and fact taken out (what a player that ignores percepts
    would play)."""

    def is_sees(term: Any) -> bool:
        head = term[1] if isinstance(term, tuple) and term and term[0] == "<=" else term
        return isinstance(head, tuple) and bool(head) and str(head[0]).lower() == "sees"

    return "\n".join(term_text(t) for t in parse_terms(text) if not is_sees(t))


def section_gdl2(cfg: Config) -> Section:
    from ggp.gdl import from_text
    from ggp.gdl.examples import EXAMPLES, example_text

    sec = Section(
        "gdl2",
        "GDL-II sheets: compiled random playouts with percepts, and without",
        [
            Column("sheet", "rule sheet"),
            Column("with", "with percepts, transitions/s", "rate"),
            Column("without", "without, transitions/s", "rate"),
            Column("ratio", "without / with", "ratio"),
            Column("met", f"within {PERCEPT_COST_BOUND:g}x", "met"),
        ],
    )
    names = EXAMPLES[:2] if cfg.quick else EXAMPLES
    for name in names:
        text = example_text(name)
        games = {"with": from_text(text, name), "without": from_text(without_percepts(text), f"{name}_blind")}
        plays: dict[str, Play] = {k: kernel_play(g.kernel, g.initial_state().array) for k, g in games.items()}
        rates = transition_rates(plays, cfg.budget, cfg.reps)
        ratio = rate_ratio(rates["without"], rates["with"])
        sec.rows.append(
            {
                "sheet": name,
                "with": rates["with"],
                "without": rates["without"],
                "ratio": ratio,
                "met": ratio is not None and ratio <= PERCEPT_COST_BOUND,
            }
        )
    sec.notes.append(
        "a transition: every role's legal moves (chance's too), the terminal test and the next state, percepts "
        "included where the sheet has them; processor time, medians of interleaved repetitions"
    )
    return sec


SECTIONS = {"gdl2": ("GDL-II sheets: compiled random playouts with percepts, and without", section_gdl2)}
