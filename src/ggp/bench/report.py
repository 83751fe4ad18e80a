"""Printing a :class:`~ggp.bench.base.Report` as tables."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

from .base import (
    Report,
)


# --- printing ---------------------------------------------------------------------------------------------
def format_value(value: Any, kind: str) -> str:
    """A figure as the table shows it.

    >>> format_value(1234567.8, "rate"), format_value(12.345, "ratio"), format_value(None, "rate")
    ('1,234,568', '12.35x', 'n/a')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if kind == "rate":
        return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
    if kind == "ratio":
        return f"{value:.2f}x" if value < 100 else f"{value:,.0f}x"
    if kind == "seconds":
        return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "float":
        return f"{value:,.1f}"
    if kind == "bytes":
        value = float(value)
        for unit in ("B", "KB", "MB", "GB"):
            if value < 1024 or unit == "GB":
                return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
            value /= 1024
    if kind == "met":
        return "yes" if value else "NO"
    if kind == "flag":
        return "yes" if value else "no"
    return str(value)


def print_report(report: Report, console: Any) -> None:
    """Print ``report`` as rich tables on ``console`` (a :class:`rich.console.Console`)."""
    from rich.table import Table
    from rich.text import Text

    m = report.machine
    mode = "quick smoke run" if report.quick else "full run"
    console.print(Text(f"ggp bench ({mode}, {report.seconds:.0f} s)", style="bold"))
    console.print(
        f"machine: {m.get('cpu')}, {m.get('cores')} cores ({m.get('usable_cores')} usable), {m.get('platform')}",
        soft_wrap=True,
    )
    spiel = report.open_spiel
    spiel_text = f"open_spiel {spiel['version']}" if spiel["available"] else spiel["message"]
    console.print(
        f"Python {m.get('python')}, numba {m.get('numba')}, numpy {m.get('numpy')}, ggp {m.get('ggp')}; {spiel_text}",
        soft_wrap=True,
    )
    console.print("Figures are medians of repetitions; ratios compare figures measured in this run.", soft_wrap=True)
    for sec in report.sections:
        console.print()
        if sec.status == "failed" or not sec.columns:
            console.print(Text(f"{sec.title}: FAILED: {sec.error}", style="bold red"), soft_wrap=True)
            for note in sec.notes:
                console.print(Text(f"  {note}", style="dim"), soft_wrap=True)
            continue
        if sec.status == "not available":
            console.print(Text(f"{sec.title}: not available: {sec.error}", style="bold yellow"), soft_wrap=True)
            continue
        table = Table(title=f"{sec.title} [{sec.seconds:.0f} s]", title_justify="left", title_style="bold")
        for col in sec.columns:
            table.add_column(col.header, justify="left" if col.kind == "text" else "right")
        for row in sec.rows:
            cells = []
            for col in sec.columns:
                value = row.get(col.key)
                text = format_value(value, col.kind)
                style = ""
                if col.kind == "met":
                    text = "" if value is None else text
                    style = "green" if value else "bold red"
                cells.append(Text(text, style=style))
            table.add_row(*cells)
        console.print(table)
        if sec.error:
            console.print(Text(f"  some figures failed: {sec.error}", style="yellow"), soft_wrap=True)
        for note in sec.notes:
            console.print(Text(f"  {note}", style="dim"), soft_wrap=True)
