"""The ``corpus`` section: the compiled random playout on every sheet of the public GDL corpus.

Each sheet of ``../shared/corpus/kif`` (``GGP_SHARED`` moves it) is loaded as
``ggp.load`` loads it, then ``ggp.core.kernels.random_playouts`` runs over the
game's kernel (what every agent runs on), in transitions/s; where ggp has a
native game of the same name, its kernel is measured in the same run and the
ratio printed. The last row is the median over the sheets measured. A sheet
played by the top-down prover (too large to ground) has no compiled kernel:
its row says so. ``--quick`` measures three small sheets.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from pathlib import Path
from typing import Any

from .base import Column, Config, Section, rate_ratio
from .gdl import Play, kernel_play, transition_rates

#: The issue's target: median transitions/s over the public corpus in the compiled playout.
CORPUS_TARGET = 100_000.0


#: The sheets of a quick run: small and fast to load, and one with a native peer.
QUICK = ("amazons_8x8", "connectFour", "tictactoe2")


def corpus_sheets(root: Path, quick: bool) -> list[Path]:
    """The corpus sheets to measure: all, or those of :data:`QUICK` when ``quick``."""
    sheets = sorted((root / "corpus" / "kif").glob("*.kif"))
    return [p for p in sheets if p.stem in QUICK] if quick else sheets


def section_corpus(cfg: Config) -> Section:
    import ggp
    from ggp.gdl import from_text, load_text
    from ggp.gdl.kernel import evaluation_mode

    sec = Section(
        "corpus",
        "GDL corpus: compiled random playouts per sheet",
        [
            Column("sheet", "rule sheet"),
            Column("engine", "engine"),
            Column("mode", "kernel evaluates by"),
            Column("load", "load", "seconds"),
            Column("kernel", "transitions/s", "rate"),
            Column("native", "native transitions/s", "rate"),
            Column("ratio", "native / GDL", "ratio"),
        ],
    )
    root = Path(os.environ.get("GGP_SHARED", "../shared"))
    sheets = corpus_sheets(root, cfg.quick)
    if not sheets:
        sec.status = "not available"
        sec.error = f"{root / 'corpus' / 'kif'} holds no rule sheets (set GGP_SHARED to the shared folder)"
        return sec
    natives = set(ggp.game_names())
    rates = []
    failed = 0
    for path in sheets:
        from_text.cache_clear()
        load_text.cache_clear()
        gc.collect()
        row: dict[str, Any] = {"sheet": path.stem, "engine": None, "mode": None, "load": None, "kernel": None}
        row.update(native=None, ratio=None)
        try:
            began = time.perf_counter()
            game: Any = load_text(path.read_text(encoding="utf-8"), path.stem)
            row["load"] = time.perf_counter() - began
            row["engine"] = game.engine
            if getattr(game, "kernel", None) is None:
                row["engine"] = f"{game.engine} (no compiled kernel)"
                sec.rows.append(row)
                continue
            row["mode"] = evaluation_mode(game.kernel)
            plays: dict[str, Play] = {"kernel": kernel_play(game.kernel, game.initial_state().array)}
            if path.stem.lower() in natives:
                native: Any = ggp.load(path.stem.lower())
                plays["native"] = kernel_play(native.kernel, native.initial_array())
            measured = transition_rates(plays, cfg.budget, cfg.reps)
            row["kernel"] = measured["kernel"]
            rates.append(measured["kernel"])
            if "native" in measured:
                row["native"] = measured["native"]
                row["ratio"] = rate_ratio(measured["native"], measured["kernel"])
        except Exception as exc:  # one sheet's failure is a row of the table, not the end of the section
            failed += 1
            row["engine"] = f"failed: {type(exc).__name__}: {str(exc)[:120]}"
        sec.rows.append(row)
    from_text.cache_clear()
    load_text.cache_clear()
    median = statistics.median(rates) if rates else None
    modes: dict[str, int] = {}
    for r in sec.rows:
        if r["mode"]:
            modes[r["mode"]] = modes.get(r["mode"], 0) + 1
    loads = [r["load"] for r in sec.rows if r["load"] is not None]
    sec.rows.append(
        {
            "sheet": f"median of {len(rates)} sheets",
            "engine": f"target >= {CORPUS_TARGET:,.0f}/s: {'met' if median and median >= CORPUS_TARGET else 'NOT met'}",
            "mode": ", ".join(f"{m} {n}" for m, n in sorted(modes.items())),
            "load": statistics.median(loads) if loads else None,
            "kernel": median,
            "native": None,
            "ratio": None,
        }
    )
    sec.notes.append(
        "a transition: every role's legal moves, the terminal test and the next state, in uniformly random "
        "playouts of ggp.core.kernels.random_playouts over the game's kernel (what agents run on); the load "
        "column is parse, ground, propnet and kernel in this process (the median row: the median load); the kernel "
        "evaluates by the fastest of its evaluators measured once per network and machine (a compile to machine "
        "code is then part of the first measurement, not of the load column)"
    )
    if failed:
        sec.status = "partial"
    return sec


SECTIONS = {"corpus": ("GDL corpus: compiled random playouts per sheet", section_corpus)}
