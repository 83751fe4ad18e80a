"""Self-play data for training: one agent spec in every role, games written as compact Parquet shards, resumable.

``run_selfplay(game, agent, games=N, out=DIR)`` plays games ``0 .. N-1``;
game ``i`` has seed :func:`~ggp.match.selfplay_game.game_seed` ``(seed, i)`` and its agents are
seeded from it, so a seeded agent's games are the same wherever and whenever
they run. Each game is a block of rows, one per state before a joint move::

    game_index int64, seed int64, step int32       -- step k: the state after k joint moves
    state      string                               -- Game.state_to_json of that state
    moves      list<string>                         -- the joint move played (KIF text, role order)
    actions    list<int32>                          -- the same as action ids (Game.move_to_action)
    policy_actions list<list<int32>>                -- per role, the searched root's actions ...
    policy_visits  list<list<int32>>                -- ... and their visit counts (empty: no search,
                                                       e.g. a forced move or a non-searching agent)
    goals      list<int32>                          -- the game's final goals (role order), on every row

Only this process (the driver) writes ``DIR``: ``selfplay.json`` (the
settings; a second run must ask for the same), and ``part-NNNNN.parquet``
files of ``shard`` finished games each, each written to a temporary name and
renamed, so a shard is whole or absent. A run that dies loses at most the
games of its unwritten shard; running it again plays exactly the games no
shard holds. :func:`read_selfplay` reads a directory back.

Games run in this process (``workers=1``), in local worker processes, or on
Ray actors (``backend="ray"``, :mod:`ggp.match.tournament.ray_backend`).

>>> import tempfile
>>> out = tempfile.mkdtemp()
>>> run_selfplay("wallmaze", "random", games=2, out=out, seed=1).played
2
>>> table = read_selfplay(out)
>>> sorted(set(table.column("game_index").to_pylist()))
[0, 1]
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .selfplay_game import COLUMNS, SelfplayError, play_selfplay_game

FORMAT = "ggp-selfplay"
VERSION = 1
MANIFEST = "selfplay.json"
LOCK = "selfplay.lock"
#: Most games one self-play directory may hold.
MAX_SELFPLAY_GAMES = 10_000_000
#: Most games per shard file.
MAX_SHARD = 100_000
#: Most local worker processes (Ray takes up to 4096 actors).
MAX_LOCAL_WORKERS = 64


@dataclass(frozen=True)
class SelfplaySettings:
    """What every game of a self-play directory shares."""

    game: str
    agent: str
    seed: int = 0
    agent_modules: tuple[str, ...] = ()


@dataclass
class SelfplaySummary:
    """What one run did: games played now, already on disk, lost to crashes or cancelled over budget."""

    played: int = 0
    existing: int = 0
    crashes: int = 0
    failed: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    shards: int = 0


@dataclass
class SelfplayEvent:
    """What a run reports as it goes: ``started``, ``done``, ``crash``, ``failed``, ``cancelled`` or ``shard``."""

    kind: str
    index: int | None
    text: str


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise SelfplayError("self-play files are Parquet: pip install 'ggp[ray]' (it brings pyarrow)") from None
    return pa, pq


# --- the directory -------------------------------------------------------------------------------
def _shards(out: Path) -> list[Path]:
    return sorted(out.glob("part-*.parquet"))


def read_selfplay(out: str | Path) -> Any:
    """Every row of the self-play directory ``out`` as one ``pyarrow.Table``, by game and step."""
    pa, pq = _pyarrow()
    folder = Path(out)
    if not (folder / MANIFEST).is_file():
        raise SelfplayError(f"{folder} is not a self-play directory (no {MANIFEST})")
    tables = [pq.read_table(path) for path in _shards(folder)]
    if not tables:
        return pa.table({name: [] for name in COLUMNS})
    table = pa.concat_tables(tables)
    return table.sort_by([("game_index", "ascending"), ("step", "ascending")])


def read_settings(out: str | Path) -> SelfplaySettings:
    """The settings stored in self-play directory ``out``."""
    path = Path(out) / MANIFEST
    try:
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"format {data.get('format')!r} version {data.get('version')!r}")
        return SelfplaySettings(
            game=str(data["game"]),
            agent=str(data["agent"]),
            seed=int(data["seed"]),
            agent_modules=tuple(str(m) for m in data.get("agent_modules", [])),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SelfplayError(f"cannot read {path}: {exc}; give another --out") from None


def _done_indexes(out: Path) -> set[int]:
    _, pq = _pyarrow()
    done: set[int] = set()
    for path in _shards(out):
        done.update(pq.read_table(path, columns=["game_index"]).column("game_index").to_pylist())
    return done


def _prepare(out: Path, settings: SelfplaySettings) -> None:
    manifest = out / MANIFEST
    if manifest.is_file():
        stored = read_settings(out)
        if (stored.game, stored.agent, stored.seed) != (settings.game, settings.agent, settings.seed):
            raise SelfplayError(
                f"{out} holds self-play of {stored.game} by {stored.agent} with seed {stored.seed}; "
                "a directory keeps its settings: give the same ones, or another --out"
            )
        return
    data = {"format": FORMAT, "version": VERSION, **asdict(settings)}
    data["agent_modules"] = list(settings.agent_modules)
    tmp = manifest.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, manifest)


class _ShardWriter:
    """Buffers finished games and writes them ``shard`` at a time, each file whole or absent."""

    def __init__(self, out: Path, shard: int) -> None:
        self.out = out
        self.shard = shard
        self.buffer: list[dict[str, list[Any]]] = []
        existing = [int(p.stem.split("-")[1]) for p in _shards(out) if p.stem.split("-")[1].isdigit()]
        self.next = max(existing, default=-1) + 1
        self.written = 0

    def add(self, cols: dict[str, list[Any]]) -> bool:
        self.buffer.append(cols)
        if len(self.buffer) >= self.shard:
            self.flush()
            return True
        return False

    def flush(self) -> None:
        if not self.buffer:
            return
        pa, pq = _pyarrow()
        merged = {name: [v for cols in self.buffer for v in cols[name]] for name in COLUMNS}
        table = pa.table(merged, schema=_schema(pa))
        path = self.out / f"part-{self.next:05d}.parquet"
        tmp = path.with_suffix(".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
        self.next += 1
        self.written += 1
        self.buffer.clear()


def _schema(pa: Any) -> Any:
    ints = pa.list_(pa.int32())
    return pa.schema(
        [
            ("game_index", pa.int64()),
            ("seed", pa.int64()),
            ("step", pa.int32()),
            ("state", pa.string()),
            ("moves", pa.list_(pa.string())),
            ("actions", ints),
            ("policy_actions", pa.list_(ints)),
            ("policy_visits", pa.list_(ints)),
            ("goals", ints),
        ]
    )


# --- running -------------------------------------------------------------------------------------
def run_selfplay(
    game: str,
    agent: str,
    *,
    games: int,
    out: str | Path,
    seed: int = 0,
    workers: int | None = None,
    backend: str = "local",
    address: str | None = None,
    shard: int = 64,
    match_timeout: float | None = None,
    max_crashes: int = 3,
    agent_modules: tuple[str, ...] = (),
    on_event: Callable[[SelfplayEvent], None] | None = None,
    on_existing: Callable[[int], None] | None = None,
) -> SelfplaySummary:
    """Play the self-play games ``0 .. games-1`` of ``game`` by ``agent`` that ``out`` does not hold yet.

    ``game`` is a name :func:`ggp.load` takes (stored as the game's name).
    ``workers``: local processes (default 1: in this process), or Ray actors
    (default: the cluster's CPUs). ``match_timeout`` (Ray only) cancels a
    game still running after that many seconds; it is not written, and a
    later run plays it again. ``on_existing`` is told how many of the games
    the directory already holds. Raises :class:`SelfplayError` for bad
    settings, before anything is written.
    """
    from ..agents import make_agent
    from ..registry import load
    from .plugins import load_agent_modules
    from .tournament import runner_lock

    _pyarrow()
    if backend not in ("local", "ray"):
        raise SelfplayError(f"unknown backend {backend!r}; choose local or ray")
    if not 1 <= games <= MAX_SELFPLAY_GAMES:
        raise SelfplayError(f"games must be 1 to {MAX_SELFPLAY_GAMES:,}, not {games}")
    if not 1 <= shard <= MAX_SHARD:
        raise SelfplayError(f"shard must be 1 to {MAX_SHARD:,} games, not {shard}")
    most = 4096 if backend == "ray" else MAX_LOCAL_WORKERS
    if workers is not None and not 1 <= workers <= most:
        raise SelfplayError(f"workers must be 1 to {most} with the {backend} backend, not {workers}")
    if match_timeout is not None and backend != "ray":
        raise SelfplayError("a game's time budget needs the ray backend (a local game runs to its end)")
    if match_timeout is not None and not 0 < match_timeout <= 86_400:
        raise SelfplayError(f"a game's time budget is 0 to 86400 s, not {match_timeout!r}")
    load_agent_modules(list(agent_modules))
    loaded = load(game)
    if loaded.hidden_information:
        raise SelfplayError(
            f"{loaded.name} is a GDL-II game (hidden information or chance): self-play records states and the "
            "search's visits over them; train on it through ggp.rl.openspiel_game or ggp.rl.aec_env instead"
        )
    name = loaded.name
    try:
        make_agent(agent)
    except ValueError as exc:
        raise SelfplayError(f"agent {agent}: {exc}") from None
    settings = SelfplaySettings(game=name, agent=agent, seed=seed, agent_modules=tuple(agent_modules))
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise SelfplayError(f"{folder} is a file; --out takes a directory")
    if not (folder / MANIFEST).is_file() and folder.is_dir() and any(p.name != LOCK for p in folder.iterdir()):
        raise SelfplayError(f"{folder} is not empty and holds no {MANIFEST}; give an empty or new --out")
    folder.mkdir(parents=True, exist_ok=True)
    summary = SelfplaySummary()
    with runner_lock(folder / "selfplay"):  # one writer at a time: selfplay.lock
        _prepare(folder, settings)
        done = _done_indexes(folder)
        summary.existing = len(done & set(range(games)))
        if on_existing is not None:
            on_existing(summary.existing)
        queue = deque(i for i in range(games) if i not in done)
        writer = _ShardWriter(folder, shard)

        def emit(kind: str, index: int | None, text: str) -> None:
            if on_event is not None:
                on_event(SelfplayEvent(kind, index, text))

        def finished(index: int, cols: dict[str, list[Any]]) -> None:
            summary.played += 1
            wrote = writer.add(cols)  # before telling anyone: an interruption there keeps the game
            if wrote:
                summary.shards += 1
            emit("done", index, f"game {index} done: {len(cols['step'])} moves, goals {cols['goals'][0]}")
            if wrote:
                emit("shard", None, f"wrote shard {writer.next - 1}")

        task = {"game": name, "agent": agent, "seed": seed}
        try:
            if not queue:
                pass  # nothing to play: no Ray instance, no workers
            elif backend == "ray":
                _run_ray(queue, task, settings, workers, address, match_timeout, max_crashes, summary, emit, finished)
            elif workers is None or workers == 1:
                while queue:
                    index = queue.popleft()
                    emit("started", index, f"game {index} started")
                    finished(index, play_selfplay_game({**task, "index": index}))
            else:
                _run_local(queue, task, settings, workers, max_crashes, summary, emit, finished)
        finally:
            if writer.buffer:
                writer.flush()
                summary.shards += 1
    return summary


def _run_local(
    queue: deque[int],
    task: dict[str, Any],
    settings: SelfplaySettings,
    workers: int,
    max_crashes: int,
    summary: SelfplaySummary,
    emit: Callable[[str, int | None, str], None],
    finished: Callable[[int, dict[str, list[Any]]], None],
) -> None:
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
    crashes: dict[int, int] = {}
    while queue:
        with cf.ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=_init_local, initargs=(settings.game, list(settings.agent_modules))
        ) as pool:
            running: dict[cf.Future[dict[str, list[Any]]], int] = {}
            broken = False
            while (queue or running) and not broken:
                while queue and len(running) < 2 * workers:
                    index = queue.popleft()
                    running[pool.submit(play_selfplay_game, {**task, "index": index})] = index
                    emit("started", index, f"game {index} started")
                ready, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for future in ready:
                    try:
                        cols = future.result()
                    except cf.process.BrokenProcessPool:
                        broken = True
                        continue
                    except Exception as exc:
                        index = running.pop(future)
                        summary.failed.append(index)
                        emit("failed", index, f"game {index} failed: {type(exc).__name__}: {exc}")
                        continue
                    finished(running.pop(future), cols)
            if broken:
                # A worker died and the pool with it: which game killed it is unknown, so every game in
                # flight counts a crash and goes back (a game that keeps killing workers is given up).
                summary.crashes += 1
                emit("crash", None, f"a worker process died; {len(running)} game(s) in flight will be re-played")
                for index in sorted(running.values(), reverse=True):
                    crashes[index] = crashes.get(index, 0) + 1
                    if crashes[index] >= max_crashes:
                        summary.failed.append(index)
                        emit("failed", index, f"game {index}: workers died {max_crashes} times while it ran")
                    else:
                        queue.appendleft(index)


def _init_local(game: str, modules: list[str]) -> None:
    from .plugins import load_agent_modules
    from .warm import warm_up

    load_agent_modules(modules)
    warm_up([game])


def _run_ray(
    queue: deque[int],
    task: dict[str, Any],
    settings: SelfplaySettings,
    workers: int | None,
    address: str | None,
    match_timeout: float | None,
    max_crashes: int,
    summary: SelfplaySummary,
    emit: Callable[[str, int | None, str], None],
    finished: Callable[[int, dict[str, list[Any]]], None],
) -> None:
    from .tournament.ray_backend import ActorPool, Outcome, connected, run_pool

    crashes: dict[int, int] = {}

    def on_outcome(outcome: Outcome) -> None:
        index = outcome.key
        if outcome.kind == "timeout":
            summary.cancelled.append(index)
            emit("cancelled", index, f"game {index} cancelled: {outcome.text}; a later run plays it again")
        elif outcome.kind in ("died", "stall") and index is not None:
            summary.crashes += 1
            crashes[index] = crashes.get(index, 0) + 1
            if crashes[index] >= max_crashes:
                summary.failed.append(index)
                emit("failed", index, f"{outcome.text} during game {index}, {max_crashes} times; given up")
            else:
                queue.appendleft(index)
                emit("crash", index, f"{outcome.text} during game {index}; it will be re-played")
        elif outcome.kind == "result":
            if outcome.value[0] == "done":
                finished(index, outcome.value[1])
            else:
                summary.failed.append(index)
                emit("failed", index, f"game {index} failed: {str(outcome.value[1]).splitlines()[0]}")

    with connected(address, num_cpus=workers) as ray:
        size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        pool = ActorPool(size, (list(settings.agent_modules), settings.game, [settings.agent]), budget=match_timeout)
        try:
            run_pool(
                pool,
                queue,
                method="selfplay",
                make_task=lambda index: {**task, "index": index},
                on_outcome=on_outcome,
                on_sent=lambda actor, index: emit("started", index, f"game {index} started on worker {actor.pid}"),
            )
        finally:
            pool.shutdown()
