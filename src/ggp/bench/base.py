"""What every ``ggp bench`` section shares: results, configuration, timing, the peers and the machine."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


OPENSPIEL_MISSING = "open_spiel not installed: pip install 'ggp[bench]'"

#: The UCT constant given to both searches (ours scales goals to 0..1, OpenSpiel's returns are -1..1).
UCT_C = 1.4

#: Game families for the compile-time section: the games one process loads.
FAMILIES = {
    "amazons": ("amazons_10x10", "amazons_8x8"),
    "bomberman": ("bomberman", "bomberman2p"),
    "wallmaze": ("wallmaze",),
}


# --- results --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Column:
    """A column of a section's table: the row key, its header and how to print it.

    ``kind`` is one of text, int, float, rate, ratio, seconds, bytes, met (a target met: yes or NO)
    and flag (yes or no).
    """

    key: str
    header: str
    kind: str = "text"


@dataclass
class Section:
    """One section's results: rows of figures (``None`` where a figure is not available)."""

    key: str
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: ok, partial (some figures not available), not available, or failed.
    status: str = "ok"
    error: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "status": self.status,
            "error": self.error,
            "seconds": self.seconds,
            "columns": [[c.key, c.header, c.kind] for c in self.columns],
            "rows": self.rows,
            "notes": self.notes,
        }


@dataclass
class Report:
    """Everything one ``ggp bench`` run measured."""

    quick: bool
    machine: dict[str, Any]
    open_spiel: dict[str, Any]
    sections: list[Section]
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "quick": self.quick,
            "seconds": self.seconds,
            "machine": self.machine,
            "open_spiel": self.open_spiel,
            "sections": {s.key: s.to_dict() for s in self.sections},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=_json_default)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


@dataclass(frozen=True)
class Config:
    """How long to measure: ``quick`` is a smoke run of a few seconds per section."""

    quick: bool = False

    @property
    def reps(self) -> int:
        return 2 if self.quick else 5

    @property
    def budget(self) -> float:
        """Seconds per repetition of a rate measurement."""
        return 0.03 if self.quick else 0.3

    @property
    def vector_budget(self) -> float:
        """Seconds per repetition of a vectorised-step measurement (there are 30 of them)."""
        return 0.02 if self.quick else 0.2

    @property
    def mcts_sims(self) -> int:
        return 300 if self.quick else 5000

    @property
    def perft_target(self) -> float:
        return 0.05 if self.quick else 0.5

    @property
    def amazons_perft_depth(self) -> int:
        return 3 if self.quick else 4

    @property
    def families(self) -> tuple[str, ...]:
        return ("wallmaze",) if self.quick else tuple(FAMILIES)


# --- timing helpers ---------------------------------------------------------------------------------
#: A measured workload: ``run(count)`` does ``count`` units of work; it may return the seconds to
#: count (when only part of the loop should be timed), else the whole call is timed.
Workload = Callable[[int], "float | None"]


@dataclass
class Timing:
    """Rates (units per second) of the repetitions of one workload."""

    count: int
    rates: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def _elapsed(run: Workload, count: int) -> float:
    began = time.perf_counter()
    inner = run(count)
    spent = time.perf_counter() - began
    return float(inner) if inner is not None else spent


def _calibrate(run: Workload, budget: float, max_count: int) -> int:
    """How many units make one repetition of about ``budget`` seconds (after a warm-up call)."""
    run(1)  # compile, or load numba's cache
    count = 1
    while True:
        spent = _elapsed(run, count)
        if spent >= budget / 4 or count >= max_count:
            break
        grow = budget / 4 / spent if spent > 0 else 16.0
        count = min(max_count, max(count * 2, int(count * min(grow, 16.0))))
    return max(1, min(max_count, int(count * budget / max(spent, 1e-9))))


def time_rates(runs: dict[str, Workload], budget: float, reps: int, max_count: int = 10**9) -> dict[str, Timing]:
    """Calibrate each workload to ``budget`` seconds, then time ``reps`` interleaved repetitions of them all."""
    counts = {name: _calibrate(run, budget, max_count) for name, run in runs.items()}
    timings = {name: Timing(counts[name], []) for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            spent = _elapsed(run, counts[name])
            timings[name].rates.append(counts[name] / max(spent, 1e-12))
    return timings


def seed_stream(start: int = 1) -> Iterator[int]:
    n = start
    while True:
        yield n
        n += 1


def rate_ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


# --- imports that may be missing ----------------------------------------------------------------------
def load_pyspiel() -> Any | None:
    """The ``pyspiel`` module, or None when OpenSpiel is not installed."""
    try:
        return importlib.import_module("pyspiel")
    except ImportError:
        return None


def open_spiel_info() -> dict[str, Any]:
    spiel = load_pyspiel()
    if spiel is None:
        return {"available": False, "version": None, "message": OPENSPIEL_MISSING}
    version = None
    with contextlib.suppress(Exception):
        from importlib.metadata import version as dist_version

        version = dist_version("open_spiel")
    return {"available": True, "version": version, "message": None}


def load_uct() -> tuple[Callable[..., Any] | None, str | None]:
    """``ggp.agents.uct.search``, or None and why not."""
    try:
        module = importlib.import_module("ggp.agents.uct")
        return module.search, None
    except Exception as exc:
        return None, f"ggp.agents.uct not available ({short_error(exc)})"


# --- machine ---------------------------------------------------------------------------------------------
def machine_info() -> dict[str, Any]:
    """CPU model, core counts and the versions that matter for speed."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    info: dict[str, Any] = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    for module in ("numba", "numpy", "ggp"):
        try:
            info[module] = importlib.import_module(module).__version__
        except Exception:
            info[module] = None
    return info


def native_game(name: str) -> tuple[Any, Any, Any]:
    """The game, its kernel and its initial state array."""
    import ggp

    game = ggp.load(name)
    state = game.initial_state()
    return game, game.kernel, state.array  # type: ignore[attr-defined]
