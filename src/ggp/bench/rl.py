"""The ``rl`` section: ggp's games as RL environments (:mod:`ggp.rl`), against PettingZoo's own games.

* PettingZoo AEC steps per second, a random agent reading the action masks
  (``env.last()``, then a uniformly random legal action), on ggp's games and
  on PettingZoo's ``connect_four_v3`` and ``chess_v6``, the repetitions of all
  interleaved in one run; target: ggp's >= 3x each peer.
* Vector env steps per second (:class:`ggp.rl.gymnasium_env.GGPVectorEnv`,
  batch 1024: the agent's actions, random opponents, observations and masks);
  targets: >= 1M on wall maze and Bomberman (both variants), >= 300k on Amazons (both boards), for the
  defaults (new float32 observations each step), ``copy=False`` (the env's buffer, updated in place) and
  ``dtype=uint8`` (the planes as bytes, a quarter of the memory to write). Beside
  the wall-clock rate (the target's), each row has the rate in processor time (``cpu``): on a machine
  shared with other jobs a process gets only part of a core, and the wall clock counts the rest too.
* The worked example (``docs/examples/train_wallmaze.py``): a tabular agent
  trained against ``random``, then played against ``random`` by ggp's referee
  (seats swapped every game); target: its mean goal's 95% interval lies above
  random's.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np

from ..core.kernels import rng_below, rng_state
from .base import Column, Config, Section, rate_ratio, short_error, time_rates

AEC_TARGET = 3.0
VECTOR_BATCH = 1024
VECTOR_TARGETS = {
    "wallmaze": 1_000_000,
    "bomberman": 1_000_000,
    "bomberman2p": 1_000_000,
    "amazons_10x10": 300_000,
    "amazons_8x8": 300_000,
}
#: The vector env's settings measured: (copy, observation dtype) by the measure's suffix ("": the defaults).
VECTOR_VARIANTS: dict[str, tuple[bool, Any]] = {
    "": (True, np.float32),
    "copy=False": (False, np.float32),
    "dtype=uint8": (True, np.uint8),
}
EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "train_wallmaze.py"


@nb.njit(cache=True)
def _random_legal(masks, rng, out):  # type: ignore[no-untyped-def]
    # a uniformly random legal action per row, read from the (rows, actions) bool masks
    for i in range(masks.shape[0]):
        n = 0
        for a in range(masks.shape[1]):
            n += masks[i, a]
        k = rng_below(rng, n)
        for a in range(masks.shape[1]):
            if masks[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


def _aec_workload(env: Any, seed: int, log: list[tuple[int, float]] | None = None) -> Any:
    """``run(count)``: ``count`` AEC steps of a random agent that reads the masks, starting new games as needed;
    each call's count and processor time are appended to ``log``."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    spent = log if log is not None else []

    def run(count: int) -> None:
        began = time.process_time()
        for _ in range(count):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            mask = obs["action_mask"]
            # int8 0/1 masks (PettingZoo's and ours) read as bool: the same bytes, nonzero without a comparison
            legal = np.flatnonzero(mask.view(np.bool_) if mask.dtype.itemsize == 1 else mask)
            env.step(int(legal[rng.integers(len(legal))]))
        spent.append((count, time.process_time() - began))

    return run


def _aec_rows(cfg: Config, sec: Section) -> None:
    import ggp
    import ggp.rl

    runs: dict[str, Any] = {}
    cpu: dict[str, list[tuple[int, float]]] = {}
    games = [*ggp.game_names()[:5], str(Path(ggp.__file__).resolve().parent / "gdl" / "tictactoe.kif")]
    for g in games:
        name = Path(g).stem
        runs[name] = _aec_workload(ggp.rl.aec_env(g), 1, cpu.setdefault(name, []))
    peers: list[str] = []
    try:
        from pettingzoo.classic import chess_v6, connect_four_v3  # type: ignore[import-untyped]

        runs["connect_four_v3"] = _aec_workload(connect_four_v3.env(), 1, cpu.setdefault("connect_four_v3", []))
        runs["chess_v6"] = _aec_workload(chess_v6.env(), 1, cpu.setdefault("chess_v6", []))
        peers = ["connect_four_v3", "chess_v6"]
    except Exception as exc:
        sec.status = "partial"
        sec.notes.append(f"PettingZoo's classic games are missing ({short_error(exc)}): pip install 'ggp[rl]'")
    t = time_rates(runs, cfg.budget, cfg.reps)
    # steps per second of processor time, from the timed repetitions (the last ``reps`` calls: the first calibrate)
    per_cpu = {k: float(np.median([n / max(u, 1e-12) for n, u in v[-cfg.reps :]])) for k, v in cpu.items()}
    for g in games:
        name = Path(g).stem
        ours = t[name].median
        for peer in peers or [""]:
            theirs = t[peer].median if peer else None
            ratio = rate_ratio(ours, theirs)
            sec.rows.append(
                {
                    "measure": "AEC steps/s",
                    "game": name,
                    "ggp": ours,
                    "cpu": per_cpu[name],
                    "peer": peer or "",
                    "peer_value": theirs,
                    "peer_cpu": per_cpu[peer] if peer else None,
                    "cpu_ratio": rate_ratio(per_cpu[name], per_cpu[peer]) if peer else None,
                    "ratio": ratio,
                    "target": f">= {AEC_TARGET:g}x",
                    "met": None if ratio is None else ratio >= AEC_TARGET,
                }
            )


def _vector_rows(cfg: Config, sec: Section) -> None:
    import ggp.rl
    from ggp.vector import VectorGame

    for name, target in VECTOR_TARGETS.items():
        runs: dict[str, Any] = {}
        cpu: dict[str, list[tuple[int, float]]] = {}
        for variant, (copy, dtype) in VECTOR_VARIANTS.items():
            venv = ggp.rl.vector_env(name, VECTOR_BATCH, seed=1, copy=copy, dtype=dtype)
            venv.reset()
            rng = rng_state(2)
            actions = np.zeros(VECTOR_BATCH, dtype=np.int64)
            spent_cpu = cpu[variant] = []

            def run(
                count: int, venv: Any = venv, rng: Any = rng, actions: Any = actions, log: Any = spent_cpu
            ) -> float:
                spent = used = 0.0
                for _ in range(count):
                    _random_legal(venv.action_masks(), rng, actions)  # a random legal action per row
                    began, began_cpu = time.perf_counter(), time.process_time()
                    venv.step(actions)
                    spent += time.perf_counter() - began
                    used += time.process_time() - began_cpu
                log.append((count, used))
                return spent

            runs[variant] = run
        bare = VectorGame(name, VECTOR_BATCH, autoreset=True, seed=1)

        def peer(count: int, vg: Any = bare) -> None:
            for _ in range(count):
                vg.step(vg.random_actions())

        t = time_rates({**runs, "bare": peer}, cfg.vector_budget, cfg.reps)
        bare_rate = VECTOR_BATCH * t["bare"].median
        for variant in VECTOR_VARIANTS:
            rate = VECTOR_BATCH * t[variant].median
            # the timed repetitions are the last ``reps`` calls (the first ones calibrate)
            cpu_rate = VECTOR_BATCH * float(np.median([n / max(u, 1e-12) for n, u in cpu[variant][-cfg.reps :]]))
            sec.rows.append(
                {
                    "measure": f"vector env steps/s, batch {VECTOR_BATCH}" + (f", {variant}" if variant else ""),
                    "game": name,
                    "ggp": rate,
                    "cpu": cpu_rate,
                    "peer": "VectorGame step + random_actions",
                    "peer_value": bare_rate,
                    "ratio": rate_ratio(rate, bare_rate),
                    "target": f">= {target:,}",
                    "met": rate >= target,
                }
            )


def _agent_row(cfg: Config, sec: Section) -> None:
    from ggp.match.series import run_series, summarize
    from ggp.registry import load

    if not EXAMPLE.is_file():
        sec.status = "partial"
        sec.notes.append(f"the worked example is not here ({EXAMPLE}): run ggp bench from a source checkout")
        return
    spec = importlib.util.spec_from_file_location("ggp_rl_example_train_wallmaze", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    episodes, games = (400, 10) if cfg.quick else (12000, 200)
    began = time.perf_counter()
    table = example.train(episodes, seed=0)
    trained = time.perf_counter() - began
    from ggp.rl.qtable import register

    register()  # the agent spec 'policy' names the table's player in this process

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "wallmaze_q.npz"
        table.save(path)
        players = [f"policy:path={path}", "random"]
        results = run_series(load("wallmaze"), players, games=games, swap=True, seed=1, play_clock=None)
    policy, rand = summarize(players, results)
    mean, ci = policy.mean_goal
    rmean, rci = rand.mean_goal
    sec.rows.append(
        {
            "measure": f"trained agent's mean goal ({episodes} episodes, {trained:.0f} s; {games} games, seats swapped)",
            "game": "wallmaze",
            "ggp": mean if mean > 0 else None,
            "mean_goal": mean,
            "ggp_ci95": list(ci) if ci else None,
            # random's mean goal is often exactly 0: shown as text, since figures in numeric columns are positive
            "peer": f"random: {rmean:.1f}" + (f" [{rci[0]:.1f}, {rci[1]:.1f}]" if rci else ""),
            "peer_value": None,
            "random_mean_goal": rmean,
            "random_ci95": list(rci) if rci else None,
            "ratio": None,
            "target": "95% CI above random's",
            "met": bool(ci and rci and ci[0] > rci[1]),
        }
    )
    sec.notes.append(
        f"trained agent: mean goal {mean:.1f} [{ci[0]:.1f}, {ci[1]:.1f}] against random's {rmean:.1f} "
        f"[{rci[0]:.1f}, {rci[1]:.1f}] (95% intervals), ggp's referee, wall maze, seats swapped every game"
        if ci and rci
        else f"trained agent: mean goal {mean:.1f} against random's {rmean:.1f}"
    )


def section_rl(cfg: Config) -> Section:
    sec = Section(
        "rl",
        "RL environments (ggp.rl): PettingZoo AEC steps/s against PettingZoo's own games, vector env steps/s, "
        "the worked example's trained agent",
        [
            Column("measure", "measure"),
            Column("game", "game"),
            Column("ggp", "ggp", "float"),
            Column("cpu", "ggp (cpu)", "float"),
            Column("peer", "peer"),
            Column("peer_value", "peer's", "float"),
            Column("ratio", "ratio", "ratio"),
            Column("target", "target"),
            Column("met", "met", "met"),
        ],
    )
    try:
        import pettingzoo  # type: ignore[import-untyped]  # noqa: F401

        import ggp.rl  # noqa: F401
    except Exception as exc:
        sec.status = "not available"
        sec.error = f"ggp.rl needs the rl extra: pip install 'ggp[rl]' ({short_error(exc)})"
        return sec
    _aec_rows(cfg, sec)
    _vector_rows(cfg, sec)
    _agent_row(cfg, sec)
    sec.notes.append(
        "AEC: env.last() then a uniformly random legal action from the mask (np.flatnonzero of the int8 mask "
        "viewed as bool, the same for every env), per step (a game's end steps count); "
        "PettingZoo's envs as connect_four_v3.env() and chess_v6.env() build them; medians of interleaved repetitions; "
        "the target is on the wall clock (ggp, ratio), 'ggp (cpu)' is the same steps per second of processor time "
        "(the JSON rows also hold the peer's, peer_cpu, and their ratio, cpu_ratio)"
    )
    sec.notes.append(
        "vector: only venv.step(actions) is timed (random opponents, legality, observations, masks), the "
        "actions drawn from the masks just before; the target is on the wall clock (ggp), 'ggp (cpu)' is the "
        "same steps per second of processor time; the peer is ggp.vector.VectorGame's bare stepping (no "
        "observations, no masks) in the same run"
    )
    return sec


SECTIONS = {"rl": ("RL environments", section_rl)}
