"""Speed measurements on this machine: ``ggp bench`` (and :func:`run` from Python).

Every figure is the median of several repetitions (the machine may be shared
and noisy), and every ratio compares two figures measured in the same run,
with the repetitions of the two sides interleaved. The sections:

* ``random``: random full games per second for each game, compiled
  (:func:`~ggp.core.kernels.rollouts`, the game's fastest random rollout, and
  :func:`~ggp.core.kernels.random_playouts`, uniform) against the plain Game
  API loop (``legal_moves`` + ``next_state`` with :class:`random.Random`).
* ``amazons``: Amazons 10x10 and 8x8 against OpenSpiel: MCTS simulations per
  second (:func:`ggp.agents.uct.search` against ``pyspiel.MCTSBot`` with a
  random-rollout evaluator, same constant and simulations), and random games
  per second (our rollouts against a Python loop over ``pyspiel``, and against
  a plain C hierarchical playout measured once, see REFERENCES.md).
* ``wallmaze``: ``wallmaze`` against OpenSpiel's ``pathfinding`` on the same maze.
* ``vector``: transitions per second of :class:`ggp.vector.VectorGame` at
  batch 1, 64 and 1024.
* ``perft``: perft leaf sequences per second.
* ``memory``: memory of the MCTS tree per 100k nodes.
* ``compile``: first-call compile time in a fresh process with an empty numba
  cache, and with the cache it left.
* ``import``: whether ``import ggp`` loads numba.
* ``gdl``: random-playout transitions per second of rule sheets' propnets, against the native kernels.
* ``gdlmcts``: compiled UCT on rule sheets against the plain-Python UCT (and the native search).

A section that fails is reported with its error; the others still run. When
OpenSpiel is missing, its columns say so and ours are still measured.

>>> from ggp.bench import SECTIONS
>>> SECTIONS[0]
'random'
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.game import Game, Move, State

SECTIONS: tuple[str, ...] = (
    "random",
    "amazons",
    "wallmaze",
    "vector",
    "perft",
    "memory",
    "compile",
    "import",
    "gdl",
    "gdlmcts",
)

OPENSPIEL_MISSING = "open_spiel not installed: pip install 'ggp[bench]'"

#: The UCT constant given to both searches (ours scales goals to 0..1, OpenSpiel's returns are -1..1).
UCT_C = 1.4

#: A plain C hierarchical random playout, games/s, measured once (REFERENCES.md), not in this run.
C_PLAYOUT_REFERENCE = {"amazons_10x10": 64_000.0, "amazons_8x8": 104_000.0}

#: Game families for the compile-time section: the games one process loads.
FAMILIES = {
    "amazons": ("amazons_10x10", "amazons_8x8"),
    "bomberman": ("bomberman", "bomberman2p"),
    "wallmaze": ("wallmaze",),
}


def _pathfinding_grid() -> str:
    """The wall maze as an OpenSpiel ``pathfinding`` grid (row 0 is y = 9), from the game's own map.

    That format cannot put a destination on a start cell, so each destination
    (a, b) is the open cell next to the other's start (A, B).
    """
    from .games.wallmaze import MAP

    rows = [row.replace("#", "*") for row in MAP]
    middle = len(rows) // 2
    rows[middle] = rows[middle][:1] + "Ab" + rows[middle][3:-3] + "aB" + rows[middle][-1:]
    return "\n".join(rows) + "\n"


PATHFINDING_NOTE = (
    "pathfinding grid = the wall maze (13x9, same walls), A at (2,5), B at (12,5); its format cannot put "
    "a destination on a start cell, so white's destination a is (11,5) and black's b is (3,5), the open "
    "cells next to the other's start (9 steps apart instead of 10); horizon 29 joint moves, like wallmaze"
)

VECTOR_BATCHES = (1, 64, 1024)
VECTOR_TARGET = 1_000_000.0
VECTOR_TARGET_GAMES = ("wallmaze", "bomberman", "bomberman2p")


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


def _seeds(start: int = 1) -> Iterator[int]:
    n = start
    while True:
        yield n
        n += 1


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


# --- imports that may be missing ----------------------------------------------------------------------
def load_pyspiel() -> Any | None:
    """The ``pyspiel`` module, or None when OpenSpiel is not installed."""
    try:
        return importlib.import_module("pyspiel")
    except ImportError:
        return None


def _open_spiel_info() -> dict[str, Any]:
    spiel = load_pyspiel()
    if spiel is None:
        return {"available": False, "version": None, "message": OPENSPIEL_MISSING}
    version = None
    with contextlib.suppress(Exception):
        from importlib.metadata import version as dist_version

        version = dist_version("open_spiel")
    return {"available": True, "version": version, "message": None}


def _load_uct() -> tuple[Callable[..., Any] | None, str | None]:
    """``ggp.agents.uct.search``, or None and why not."""
    try:
        module = importlib.import_module("ggp.agents.uct")
        return module.search, None
    except Exception as exc:
        return None, f"ggp.agents.uct not available ({_short_error(exc)})"


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


# --- the sections -------------------------------------------------------------------------------------
def _native(name: str) -> tuple[Any, Any, Any]:
    """The game, its kernel and its initial state array."""
    import ggp

    game = ggp.load(name)
    state = game.initial_state()
    return game, game.kernel, state.array  # type: ignore[attr-defined]


def _api_games(name: str, seeds: Iterator[int]) -> Workload:
    import ggp
    from ggp.core.game import random_playout

    game = ggp.load(name)
    start = game.initial_state()

    def run(count: int) -> None:
        rng = random.Random(next(seeds))
        for _ in range(count):
            random_playout(game, start, rng)

    return run


def _rollout_games(name: str, seeds: Iterator[int]) -> Workload:
    from ggp.core.kernels import rollouts

    _, kernel, array = _native(name)

    def run(count: int) -> None:
        rollouts(kernel, array, count, next(seeds))

    return run


def _playout_games(name: str, seeds: Iterator[int]) -> Workload:
    from ggp.core.kernels import random_playouts

    _, kernel, array = _native(name)

    def run(count: int) -> None:
        random_playouts(kernel, array, count, next(seeds))

    return run


def section_random(cfg: Config) -> Section:
    import ggp
    from ggp.core.kernels import random_playouts

    sec = Section(
        "random",
        "1. Random full games per second: compiled vs the Game API loop",
        [
            Column("game", "game"),
            Column("moves", "moves/game", "float"),
            Column("rollouts", "rollouts games/s", "rate"),
            Column("playouts", "uniform playouts games/s", "rate"),
            Column("api", "Game API loop games/s", "rate"),
            Column("rollouts_ratio", "rollouts / API", "ratio"),
            Column("playouts_ratio", "playouts / API", "ratio"),
        ],
    )
    sec.notes.append(
        "rollouts = ggp.core.kernels.rollouts (the game's fastest random rollout; Amazons: random movable "
        "amazon, destination, arrow); uniform playouts = random_playouts (uniform over each role's legal moves); "
        "Game API loop = legal_moves + next_state with random.Random"
    )
    seeds = _seeds()
    for name in ggp.game_names():
        _, kernel, array = _native(name)
        _, lengths = random_playouts(kernel, array, 200, 12345)
        t = time_rates(
            {
                "rollouts": _rollout_games(name, seeds),
                "playouts": _playout_games(name, seeds),
                "api": _api_games(name, seeds),
            },
            cfg.budget,
            cfg.reps,
        )
        row: dict[str, Any] = {"game": name, "moves": float(lengths.mean())}
        row.update({k: v.median for k, v in t.items()})
        row["rollouts_ratio"] = _ratio(row["rollouts"], row["api"])
        row["playouts_ratio"] = _ratio(row["playouts"], row["api"])
        sec.rows.append(row)
    return sec


def _spiel_amazons_games(spiel: Any, size: int, seeds: Iterator[int]) -> Workload:
    game = spiel.load_game("amazons", {"board_size": size})

    def run(count: int) -> None:
        rng = random.Random(next(seeds))
        for _ in range(count):
            state = game.new_initial_state()
            while not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))

    return run


def _target_row(
    game: str, measure: str, ours: float | None, theirs: float | None, target: float, target_text: str
) -> dict[str, Any]:
    ratio = _ratio(ours, theirs)
    return {
        "game": game,
        "measure": measure,
        "ours": ours,
        "theirs": theirs,
        "ratio": ratio,
        "target": target_text,
        "target_ratio": target,
        "met": None if ratio is None else ratio >= target,
    }


_TARGET_COLUMNS = [
    Column("game", "game"),
    Column("measure", "measure"),
    Column("ours", "ours", "rate"),
    Column("theirs", "theirs", "rate"),
    Column("ratio", "ours / theirs", "ratio"),
    Column("target", "target"),
    Column("met", "met", "met"),
]


def section_amazons(cfg: Config) -> Section:
    import ggp

    sec = Section("amazons", "2. Amazons against OpenSpiel (amazons)", list(_TARGET_COLUMNS))
    spiel = load_pyspiel()
    search, uct_error = _load_uct()
    if spiel is None:
        sec.notes.append(OPENSPIEL_MISSING)
    if uct_error is not None:
        sec.notes.append(f"MCTS: {uct_error}")
    sims = cfg.mcts_sims
    seeds = _seeds()
    for size in (10, 8):
        name = f"amazons_{size}x{size}"
        game = ggp.load(name)
        state = game.initial_state()

        # MCTS from the initial position, same constant and simulations on both sides.
        ours_sims: list[float] = []
        theirs_sims: list[float] = []
        spiel_game = spiel.load_game("amazons", {"board_size": size}) if spiel is not None else None
        if search is not None:
            search(game, state, sims=min(sims, 100), c=UCT_C, seed=0)  # compile, or load numba's cache
        if spiel_game is not None:
            _spiel_mcts(spiel, spiel_game, min(sims, 100), 0)
        for _ in range(cfg.reps):
            seed = next(seeds)
            if search is not None:
                began = time.perf_counter()
                result = search(game, state, sims=sims, c=UCT_C, seed=seed)
                ours_sims.append(result.simulations / (time.perf_counter() - began))
            if spiel_game is not None:
                theirs_sims.append(sims / _spiel_mcts(spiel, spiel_game, sims, seed))
        sec.rows.append(
            _target_row(
                name,
                "MCTS simulations/s",
                statistics.median(ours_sims) if ours_sims else None,
                statistics.median(theirs_sims) if theirs_sims else None,
                3.0,
                ">= 3x",
            )
        )

        # Random games: our rollouts against a Python loop over pyspiel.
        runs: dict[str, Workload] = {"ours": _rollout_games(name, seeds)}
        if spiel is not None:
            runs["theirs"] = _spiel_amazons_games(spiel, size, seeds)
        t = time_rates(runs, cfg.budget, cfg.reps)
        ours = t["ours"].median
        theirs = t["theirs"].median if "theirs" in t else None
        sec.rows.append(_target_row(name, "random games/s", ours, theirs, 20.0, ">= 20x"))
        ref = C_PLAYOUT_REFERENCE[name]
        sec.rows.append(_target_row(name, "random games/s vs plain C (*)", ours, ref, 0.5, ">= 0.5x"))
    sec.notes.append(
        "random games/s: ours = ggp.core.kernels.rollouts (hierarchical: random movable amazon, destination, "
        "arrow), theirs = a Python loop state.apply_action(rng.choice(state.legal_actions())) over pyspiel"
    )
    sec.notes.append(
        "MCTS: ours = ggp.agents.uct.search, theirs = pyspiel.MCTSBot(game, RandomRolloutEvaluator(1, seed), "
        f"uct_c={UCT_C}, {sims} sims, 1000 MB, solve=False), timed around bot.step(initial state); same constant "
        "on both sides (ours on goals scaled to 0..1, OpenSpiel's on returns -1..1)"
    )
    sec.notes.append(
        "(*) the plain C playout figures (64k games/s on 10x10, 104k on 8x8) were measured once on this kind of "
        "machine (REFERENCES.md), not in this run"
    )
    if spiel is None or search is None:
        sec.status = "partial"
    return sec


def _spiel_mcts(spiel: Any, game: Any, sims: int, seed: int) -> float:
    """Seconds one ``MCTSBot.step`` takes from the initial position with ``sims`` simulations."""
    bot = spiel.MCTSBot(game, spiel.RandomRolloutEvaluator(1, seed), UCT_C, sims, 1000, False, seed, False)
    state = game.new_initial_state()
    began = time.perf_counter()
    bot.step(state)
    return time.perf_counter() - began


def _pathfinding_games(game: Any, seeds: Iterator[int], lengths: list[int]) -> Workload:
    def run(count: int) -> None:
        rng = random.Random(next(seeds))
        for _ in range(count):
            state = game.new_initial_state()
            steps = 0
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    actions = [a for a, _ in outcomes]
                    weights = [p for _, p in outcomes]
                    state.apply_action(rng.choices(actions, weights)[0])
                elif state.is_simultaneous_node():
                    state.apply_actions([rng.choice(state.legal_actions(p)) for p in range(2)])
                    steps += 1
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    steps += 1
            lengths.append(steps)

    return run


def section_wallmaze(cfg: Config) -> Section:
    from ggp.core.kernels import random_playouts

    sec = Section("wallmaze", "3. wallmaze against OpenSpiel (pathfinding on the same maze)", list(_TARGET_COLUMNS))
    sec.notes.append(PATHFINDING_NOTE)
    spiel = load_pyspiel()
    seeds = _seeds()
    runs: dict[str, Workload] = {"ours": _rollout_games("wallmaze", seeds)}
    spiel_lengths: list[int] = []
    if spiel is None:
        sec.notes.append(OPENSPIEL_MISSING)
        sec.status = "partial"
    else:
        game = spiel.load_game("pathfinding", {"grid": _pathfinding_grid(), "players": 2, "horizon": 29})
        runs["theirs"] = _pathfinding_games(game, seeds, spiel_lengths)
    t = time_rates(runs, cfg.budget, cfg.reps)
    ours = t["ours"].median
    theirs = t["theirs"].median if "theirs" in t else None
    sec.rows.append(_target_row("wallmaze", "random games/s vs pathfinding", ours, theirs, 10.0, ">= 10x"))
    _, kernel, array = _native("wallmaze")
    _, lengths = random_playouts(kernel, array, 1000, 7)
    mean_theirs = f"{statistics.mean(spiel_lengths):.1f}" if spiel_lengths else "n/a"
    sec.notes.append(
        f"mean joint moves per random game: wallmaze {float(lengths.mean()):.1f}, pathfinding {mean_theirs}; "
        "pathfinding random games are played with apply_actions([a0, a1]), a random legal action per player"
    )
    return sec


def section_vector(cfg: Config) -> Section:
    import ggp

    sec = Section(
        "vector",
        "4. Vectorised steps: transitions per second (batch x steps / seconds) through ggp.vector.VectorGame",
        [
            Column("game", "game"),
            Column("batch", "batch", "int"),
            Column("with_actions", "step + random_actions /s", "rate"),
            Column("step_only", "step alone /s", "rate"),
            Column("target", "target"),
            Column("met", "met", "met"),
        ],
    )
    try:
        vector_game = importlib.import_module("ggp.vector").VectorGame
    except Exception as exc:
        sec.status = "not available"
        sec.error = f"ggp.vector not available ({_short_error(exc)})"
        return sec
    for name in ggp.game_names():
        for batch in VECTOR_BATCHES:
            vg = vector_game(name, batch, autoreset=True, seed=0)

            def both(count: int, vg: Any = vg) -> None:
                for _ in range(count):
                    vg.step(vg.random_actions())

            def step_only(count: int, vg: Any = vg) -> float:
                spent = 0.0
                for _ in range(count):
                    actions = vg.random_actions()
                    began = time.perf_counter()
                    vg.step(actions)
                    spent += time.perf_counter() - began
                return spent

            t = time_rates({"both": both, "step": step_only}, cfg.vector_budget, cfg.reps)
            targeted = batch == max(VECTOR_BATCHES) and name in VECTOR_TARGET_GAMES
            with_actions = batch * t["both"].median
            sec.rows.append(
                {
                    "game": name,
                    "batch": batch,
                    "with_actions": with_actions,
                    "step_only": batch * t["step"].median,
                    "target": f">= {VECTOR_TARGET:,.0f}" if targeted else "",
                    "met": (with_actions >= VECTOR_TARGET) if targeted else None,
                }
            )
    sec.notes.append(
        "VectorGame(game, batch, autoreset=True, seed=0); 'step alone' times only vg.step(actions) with the "
        "actions drawn by vg.random_actions() just before; the target applies to step + random_actions"
    )
    return sec


def _perft_depth(kernel: Any, array: Any, target: float) -> int:
    """The depth whose perft takes about ``target`` seconds (the deepest not predicted past 2x that)."""
    from ggp.core.kernels import perft

    perft(kernel, array, 1)  # compile, or load numba's cache
    previous, previous_spent = 1, 0.0
    depth = 1
    while depth < 40:
        began = time.perf_counter()
        count = perft(kernel, array, depth)
        spent = time.perf_counter() - began
        if spent >= target / 2 or count == 0:
            return depth
        # The next depth costs about this one times the growth of the counts (or of the times, once measurable).
        growth = count / previous if previous > 0 else 1.0
        if previous_spent > 1e-3:
            growth = max(growth, spent / previous_spent)
        if spent * max(growth, 1.0) > 2 * target or count == previous:
            return depth
        previous, previous_spent = count, spent
        depth += 1
    return depth


def section_perft(cfg: Config) -> Section:
    import ggp
    from ggp.core.kernels import perft

    sec = Section(
        "perft",
        "5a. Perft: leaf sequences counted per second (compiled kernel)",
        [
            Column("game", "game"),
            Column("depth", "depth", "int"),
            Column("count", "sequences", "int"),
            Column("seconds", "seconds (median)", "seconds"),
            Column("rate", "sequences/s", "rate"),
        ],
    )
    for name in ggp.game_names():
        _, kernel, array = _native(name)
        if name.startswith("amazons"):
            perft(kernel, array, 1)
            depth = cfg.amazons_perft_depth
        else:
            depth = _perft_depth(kernel, array, cfg.perft_target)
        times: list[float] = []
        count = 0
        for _ in range(cfg.reps):
            began = time.perf_counter()
            count = perft(kernel, array, depth)
            times.append(time.perf_counter() - began)
        spent = statistics.median(times)
        sec.rows.append(
            {"game": name, "depth": depth, "count": count, "seconds": spent, "rate": count / max(spent, 1e-12)}
        )
    sec.notes.append(
        "perft counts the last level without playing it (the product of the roles' legal move counts); "
        f"Amazons at depth {cfg.amazons_perft_depth}, the others at the depth that takes about "
        f"{cfg.perft_target} s"
    )
    return sec


def section_memory(cfg: Config) -> Section:
    import ggp

    sec = Section(
        "memory",
        "5b. MCTS tree memory per 100k nodes (ggp.agents.uct, arrays allocated for the search)",
        [
            Column("game", "game"),
            Column("sims", "simulations", "int"),
            Column("nodes", "nodes", "int"),
            Column("bytes", "tree bytes", "bytes"),
            Column("per_100k", "per 100k nodes", "bytes"),
        ],
    )
    search, error = _load_uct()
    if search is None:
        sec.status = "not available"
        sec.error = error
        return sec
    sims = cfg.mcts_sims
    failures = []
    for name in ggp.game_names():
        game = ggp.load(name)
        try:
            result = search(game, game.initial_state(), sims=sims, c=UCT_C, seed=1)
        except Exception as exc:
            failures.append(f"{name}: {_short_error(exc)}")
            continue
        nodes = int(result.nodes)
        nbytes = int(result.bytes)
        sec.rows.append(
            {
                "game": name,
                "sims": int(result.simulations),
                "nodes": nodes,
                "bytes": nbytes,
                "per_100k": nbytes * 100_000 / nodes if nodes > 0 else None,
            }
        )
    sec.notes.append(
        "tree bytes = result.bytes: the tree's arrays, preallocated by search(game, state, sims=N) for its default "
        "capacity; per 100k nodes = bytes / nodes x 100,000"
    )
    short = [f"{row['game']} ({row['nodes']:,})" for row in sec.rows if row["nodes"] < row["sims"]]
    if short:
        sec.notes.append(
            "fewer nodes than simulations: the tree ran out of room (its move pool or capacity) in "
            + ", ".join(short)
            + ", so the per-node figure is inflated there"
        )
    if failures:
        sec.status = "partial" if sec.rows else "failed"
        sec.error = "; ".join(failures)
    return sec


_COMPILE_SCRIPT = """
import json, sys, time
began = time.perf_counter()
import ggp
from ggp.core.kernels import perft, rollouts
for name in sys.argv[1:]:
    game = ggp.load(name)
    state = game.initial_state()
    joint = [game.legal_moves(state, role)[0] for role in game.roles]
    game.next_state(state, joint)
    perft(game.kernel, state.array, 2)
    rollouts(game.kernel, state.array, 1)
print(json.dumps({"seconds": time.perf_counter() - began}))
"""


def _run_python(script: str, args: list[str], env: dict[str, str], timeout: float) -> tuple[dict[str, Any], float]:
    """Run ``script`` in a fresh interpreter; its last stdout line is JSON. Returns it and the wall time."""
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"subprocess exited with {proc.returncode}: {tail}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, wall


def section_compile(cfg: Config) -> Section:
    sec = Section(
        "compile",
        "6. First-call compile time in a fresh process (import, load, legal_moves, next_state, perft, rollouts)",
        [
            Column("family", "family"),
            Column("games", "games"),
            Column("cold", "empty numba cache", "seconds"),
            Column("warm", "reusing the cache", "seconds"),
            Column("cold_wall", "cold, whole process", "seconds"),
            Column("warm_wall", "warm, whole process", "seconds"),
        ],
    )
    failures = []
    for family in cfg.families:
        names = list(FAMILIES[family])
        cache = tempfile.mkdtemp(prefix="ggp-bench-numba-")
        try:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            cold, cold_wall = _run_python(_COMPILE_SCRIPT, names, env, 600)
            warm, warm_wall = _run_python(_COMPILE_SCRIPT, names, env, 600)
        except Exception as exc:
            failures.append(f"{family}: {_short_error(exc)}")
            continue
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        sec.rows.append(
            {
                "family": family,
                "games": ", ".join(names),
                "cold": cold["seconds"],
                "warm": warm["seconds"],
                "cold_wall": cold_wall,
                "warm_wall": warm_wall,
            }
        )
    sec.notes.append(
        "in-process seconds from before `import ggp` to the last kernel call; NUMBA_CACHE_DIR set to a new "
        "empty directory for the cold process, the same directory for the warm one"
    )
    if cfg.quick:
        sec.notes.append("quick run: wallmaze only")
    if failures:
        sec.status = "partial" if sec.rows else "failed"
        sec.error = "; ".join(failures)
    return sec


_IMPORT_SCRIPT = """
import json, sys, time
began = time.perf_counter()
import ggp
spent = time.perf_counter() - began
print(json.dumps({"numba": "numba" in sys.modules, "numpy": "numpy" in sys.modules, "seconds": spent}))
"""


def section_import(cfg: Config) -> Section:
    sec = Section(
        "import",
        "6b. `import ggp` stays light",
        [
            Column("check", "check"),
            Column("numba_imported", "numba imported", "flag"),
            Column("numpy_imported", "numpy imported", "flag"),
            Column("seconds", "import time", "seconds"),
            Column("ok", "ok", "met"),
        ],
    )
    result, _ = _run_python(_IMPORT_SCRIPT, [], dict(os.environ), 120)
    sec.rows.append(
        {
            "check": "plain `import ggp` in a fresh process",
            "numba_imported": bool(result["numba"]),
            "numpy_imported": bool(result["numpy"]),
            "seconds": float(result["seconds"]),
            "ok": not result["numba"],
        }
    )
    return sec


GDL_TARGETS = {"wallmaze": 5000.0, "bomberman2p": 5000.0, "amazons_8x8": 500.0}


def _transition_rate(play: Callable[[int, int], int], budget: float, reps: int) -> float:
    """Median transitions/s of ``play(count, seed) -> transitions``, sized to ``budget`` seconds."""
    play(2, 0)  # compile, or load numba's cache
    count = 2
    while True:
        began = time.perf_counter()
        play(count, 1)
        spent = time.perf_counter() - began
        if spent >= budget / 4 or count >= 1 << 22:
            break
        count *= 2
    count = max(1, int(count * budget / max(spent, 1e-9)))
    rates = []
    for rep in range(reps):
        began = time.perf_counter()
        done = play(count, 100 + rep)
        rates.append(done / max(time.perf_counter() - began, 1e-12))
    return statistics.median(rates)


def section_gdl(cfg: Config) -> Section:
    import ggp
    from ggp.core.kernels import random_playouts
    from ggp.gdl import BUILTIN_RULES, from_text, rules_text

    sec = Section(
        "gdl",
        "7. GDL reasoner: random-playout state transitions per second against the native engines",
        [
            Column("sheet", "rule sheet"),
            Column("load", "load (parse, ground, propnet)", "seconds"),
            Column("gdl", "GDL transitions/s", "rate"),
            Column("native", "native transitions/s", "rate"),
            Column("ratio", "native / GDL", "ratio"),
            Column("target", "target"),
            Column("met", "met", "met"),
        ],
    )
    shared = Path(os.environ.get("GGP_SHARED", "../shared")) / "gdl"
    sheets: list[tuple[str, str, str, str | None]] = []
    if shared.is_dir():
        sheets += [(f"shared {p.name}", p.stem, p.read_text(), p.stem) for p in sorted(shared.glob("*.kif"))]
    else:
        sec.notes.append(f"{shared} not found: the shared rule sheets were skipped (set GGP_SHARED)")
    sheets.append(("tic-tac-toe", "tictactoe", (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), None))
    sheets += [(f"ggp rules {name}", name, rules_text(name), name) for name in BUILTIN_RULES]
    budget = cfg.budget * 2
    for label, name, text, native in sheets:
        from_text.cache_clear()
        began = time.perf_counter()
        game = from_text(text, name)
        load = time.perf_counter() - began

        def gdl_play(n: int, seed: int, g: Any = game) -> int:
            return int(g.random_playouts(n, seed=seed)[2])

        gdl = _transition_rate(gdl_play, budget, cfg.reps)
        nat = None
        if native is not None:
            native_game: Any = ggp.load(native)
            kernel, start = native_game.kernel, native_game.initial_state().array

            def native_play(n: int, seed: int, k: Any = kernel, s: Any = start) -> int:
                return int(random_playouts(k, s, n, seed)[1].sum())

            nat = _transition_rate(native_play, budget, cfg.reps)
        target = GDL_TARGETS.get(name) if label.startswith("shared") else None
        sec.rows.append(
            {
                "sheet": label,
                "load": load,
                "gdl": gdl,
                "native": nat,
                "ratio": _ratio(nat, gdl),
                "target": f">= {target:,.0f}/s" if target else "",
                "met": (gdl >= target) if target else None,
            }
        )
    sec.notes.append(
        "a transition: every role's legal moves, the terminal test and the next state, in uniformly random "
        "playouts; the GDL figure is the reasoner's own compiled playout loop (ggp.gdl.GDLGame.random_playouts), "
        "the native one ggp.core.kernels.random_playouts"
    )
    return sec


#: Sheets of the shared corpus the gdlmcts section measures beside ../shared/gdl and tic-tac-toe.
GDL_MCTS_CORPUS = ("connectFour", "breakthroughSmall")
#: Compiled UCT on a rule sheet against the plain-Python baseline (issue: at least 20x).
GDL_MCTS_TARGET = 20.0


def section_gdlmcts(cfg: Config) -> Section:
    import ggp
    from ggp.agents.uct import search
    from ggp.gdl import from_text

    sec = Section(
        "gdlmcts",
        "8. MCTS on rule sheets: compiled decoupled UCT against the plain-Python UCT, simulations/s from the start",
        [
            Column("sheet", "rule sheet"),
            Column("compiled", "compiled UCT sims/s", "rate"),
            Column("plain", "plain-Python UCT sims/s", "rate"),
            Column("ratio", "compiled / plain", "ratio"),
            Column("native", "native UCT sims/s", "rate"),
            Column("of_native", "compiled / native", "ratio"),
            Column("target", "target"),
            Column("met", "met", "met"),
        ],
    )
    shared = Path(os.environ.get("GGP_SHARED", "../shared"))
    sheets: list[tuple[str, str, str, str | None]] = []
    for name in ("wallmaze", "bomberman2p", "amazons_8x8"):
        path = shared / "gdl" / f"{name}.kif"
        if path.is_file():
            sheets.append((f"shared {path.name}", name, path.read_text(), name))
    sheets.append(("tic-tac-toe", "tictactoe", (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), None))
    for name in GDL_MCTS_CORPUS:
        path = shared / "corpus" / "kif" / f"{name}.kif"
        if path.is_file():
            sheets.append((f"corpus {path.name}", name, path.read_text(), None))
    if not (shared / "gdl").is_dir():
        sec.notes.append(f"{shared} not found: only tic-tac-toe was measured (set GGP_SHARED)")
    budget = cfg.budget
    seeds = _seeds()
    for label, name, text, native in sheets:
        game = from_text(text, name)
        start = game.initial_state()

        def compiled(n: int, g: Any = game, s: Any = start) -> None:
            search(g, s, sims=n, seed=next(seeds))

        def plain(n: int, g: Any = game, s: Any = start) -> None:
            _PlainUCT(g, UCT_C, random.Random(next(seeds))).best(s, g.roles[0], n, None)

        runs: dict[str, Workload] = {"compiled": compiled, "plain": plain}
        if native is not None:
            native_game = ggp.load(native)

            def native_search(n: int, g: Any = native_game) -> None:
                search(g, g.initial_state(), sims=n, seed=next(seeds))

            runs["native"] = native_search
        rates = time_rates(runs, budget, cfg.reps, max_count=2_000_000)
        ratio = _ratio(rates["compiled"].median, rates["plain"].median)
        nat = rates["native"].median if "native" in rates else None
        sec.rows.append(
            {
                "sheet": label,
                "compiled": rates["compiled"].median,
                "plain": rates["plain"].median,
                "ratio": ratio,
                "native": nat,
                "of_native": _ratio(rates["compiled"].median, nat),
                "target": f">= {GDL_MCTS_TARGET:g}x",
                "met": ratio is not None and ratio >= GDL_MCTS_TARGET,
            }
        )
    sec.notes.append(
        "each repetition is a fresh search from the initial state (ggp.agents.uct.search, c = 1.4, random "
        "rollouts); the plain-Python UCT is the same algorithm over the Game API, kept in ggp.bench as the baseline"
    )
    return sec


# --- the baseline for rule sheets: decoupled UCT in plain Python over the Game API ---------------
# ggp's mcts ran this on rule sheets before they had a compiled kernel; the gdlmcts section measures
# the compiled search against it in the same run.
@dataclass
class _Node:
    moves: tuple[tuple[Move, ...], ...]
    visits: list[list[int]]
    totals: list[list[float]]
    children: dict[tuple[int, ...], State] = field(default_factory=dict)
    count: int = 0


class _PlainUCT:
    """Decoupled UCT over the Game API, with a transposition table keyed by state."""

    def __init__(self, game: Game, c: float, rng: random.Random) -> None:
        self.game = game
        self.c = c
        self.rng = rng
        self.nodes: dict[State, _Node] = {}

    def _node(self, state: State) -> _Node:
        node = self.nodes.get(state)
        if node is None:
            moves = tuple(tuple(self.game.legal_moves(state, role)) for role in self.game.roles)
            node = self.nodes[state] = _Node(moves, [[0] * len(m) for m in moves], [[0.0] * len(m) for m in moves])
        return node

    def _pick(self, node: _Node, r: int) -> int:
        visits = node.visits[r]
        unvisited = [i for i, v in enumerate(visits) if v == 0]
        if unvisited:
            return self.rng.choice(unvisited)
        log_n = math.log(max(node.count, 1))
        return max(
            range(len(visits)),
            key=lambda i: node.totals[r][i] / visits[i] + self.c * math.sqrt(log_n / visits[i]),
        )

    def _rollout(self, state: State) -> tuple[float, ...]:
        from .core.game import random_playout

        final, _ = random_playout(self.game, state, self.rng)
        return tuple(g / 100 for g in self.game.goals(final))

    def simulate(self, root: State) -> None:
        game = self.game
        path: list[tuple[_Node, tuple[int, ...]]] = []
        state = root
        while True:
            if game.is_terminal(state):
                values = tuple(g / 100 for g in game.goals(state))
                break
            fresh = state not in self.nodes
            node = self._node(state)
            if fresh and path:
                values = self._rollout(state)
                break
            pick = tuple(self._pick(node, r) for r in range(len(game.roles)))
            path.append((node, pick))
            child = node.children.get(pick)
            if child is None:
                child = node.children[pick] = game.next_state(state, [node.moves[r][i] for r, i in enumerate(pick)])
            state = child
        for node, pick in path:
            node.count += 1
            for r, i in enumerate(pick):
                node.visits[r][i] += 1
                node.totals[r][i] += values[r]

    def best(self, state: State, role: str, sims: int | None, seconds: float | None) -> tuple[Move, int]:
        if len(self.nodes) > 200_000:
            self.nodes.clear()
        deadline = time.perf_counter() + (seconds if seconds is not None else math.inf)
        done = 0
        while (sims is None or done < sims) and time.perf_counter() < deadline:
            self.simulate(state)
            done += 1
        node = self._node(state)
        r = self.game.roles.index(role)
        i = max(range(len(node.moves[r])), key=lambda k: node.visits[r][k])
        return node.moves[r][i], done


_RUNNERS: dict[str, Callable[[Config], Section]] = {
    "random": section_random,
    "amazons": section_amazons,
    "wallmaze": section_wallmaze,
    "vector": section_vector,
    "perft": section_perft,
    "memory": section_memory,
    "compile": section_compile,
    "import": section_import,
    "gdl": section_gdl,
    "gdlmcts": section_gdlmcts,
}

_TITLES = {
    "random": "1. Random full games per second",
    "amazons": "2. Amazons against OpenSpiel",
    "wallmaze": "3. wallmaze against OpenSpiel pathfinding",
    "vector": "4. Vectorised steps",
    "perft": "5a. Perft",
    "memory": "5b. MCTS tree memory",
    "compile": "6. First-call compile time",
    "import": "6b. import ggp",
    "gdl": "7. GDL reasoner",
    "gdlmcts": "8. MCTS on rule sheets",
}


def run(quick: bool = False, only: list[str] | None = None, progress: Callable[[str], None] | None = None) -> Report:
    """Measure the ``only`` sections (default: all of :data:`SECTIONS`) and return the report.

    A section that raises is recorded as failed with its error; the rest still run.
    """
    cfg = Config(quick=quick)
    keys = list(SECTIONS) if only is None else [k for k in SECTIONS if k in only]
    unknown = sorted(set(only or ()) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}")
    began = time.perf_counter()
    report = Report(quick=quick, machine=machine_info(), open_spiel=_open_spiel_info(), sections=[])
    for key in keys:
        if progress is not None:
            progress(f"measuring {_TITLES[key]} ...")
        t0 = time.perf_counter()
        try:
            sec = _RUNNERS[key](cfg)
        except Exception as exc:
            sec = Section(key, _TITLES[key], [], status="failed", error=_short_error(exc))
            frames = traceback.extract_tb(exc.__traceback__)
            if frames:
                where = frames[-1]
                sec.notes.append(f"raised at {where.filename}:{where.lineno} in {where.name}")
        sec.seconds = time.perf_counter() - t0
        report.sections.append(sec)
    report.seconds = time.perf_counter() - began
    return report


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
