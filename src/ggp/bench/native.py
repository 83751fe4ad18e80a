"""Sections on the built-in games' kernels: random games, Amazons and wall maze against OpenSpiel, vectorised steps,
perft and tree memory."""

from __future__ import annotations

import importlib
import random
import statistics
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

from .base import (
    OPENSPIEL_MISSING,
    UCT_C,
    Column,
    Config,
    Section,
    Workload,
    load_pyspiel,
    load_uct,
    native_game,
    rate_ratio,
    seed_stream,
    short_error,
    time_rates,
)

C_PLAYOUT_REFERENCE = {"amazons_10x10": 64_000.0, "amazons_8x8": 104_000.0}


def _pathfinding_grid() -> str:
    """The wall maze as an OpenSpiel ``pathfinding`` grid (row 0 is y = 9), from the game's own map.

    That format cannot put a destination on a start cell, so each destination
    (a, b) is the open cell next to the other's start (A, B).
    """
    from ..games.wallmaze.rules import MAP

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

    _, kernel, array = native_game(name)

    def run(count: int) -> None:
        rollouts(kernel, array, count, next(seeds))

    return run


def _playout_games(name: str, seeds: Iterator[int]) -> Workload:
    from ggp.core.kernels import random_playouts

    _, kernel, array = native_game(name)

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
    seeds = seed_stream()
    for name in ggp.game_names():
        _, kernel, array = native_game(name)
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
        row["rollouts_ratio"] = rate_ratio(row["rollouts"], row["api"])
        row["playouts_ratio"] = rate_ratio(row["playouts"], row["api"])
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
    ratio = rate_ratio(ours, theirs)
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
    search, uct_error = load_uct()
    if spiel is None:
        sec.notes.append(OPENSPIEL_MISSING)
    if uct_error is not None:
        sec.notes.append(f"MCTS: {uct_error}")
    sims = cfg.mcts_sims
    seeds = seed_stream()
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
    seeds = seed_stream()
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
    _, kernel, array = native_game("wallmaze")
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
        sec.error = f"ggp.vector not available ({short_error(exc)})"
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
        _, kernel, array = native_game(name)
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
    search, error = load_uct()
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
            failures.append(f"{name}: {short_error(exc)}")
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


SECTIONS = {
    "random": ("1. Random full games per second", section_random),
    "amazons": ("2. Amazons against OpenSpiel", section_amazons),
    "wallmaze": ("3. wallmaze against OpenSpiel pathfinding", section_wallmaze),
    "vector": ("4. Vectorised steps", section_vector),
    "perft": ("5a. Perft", section_perft),
    "memory": ("5b. MCTS tree memory", section_memory),
}
