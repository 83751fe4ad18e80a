"""Sections on rule sheets: the propnet's random playouts against the native kernels, and compiled UCT against
the plain-Python UCT baseline (kept here as that baseline)."""

from __future__ import annotations

import contextlib
import math
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.game import Game, Move, State

from . import then
from .base import (
    UCT_C,
    Column,
    Config,
    Section,
    Workload,
    rate_ratio,
    seed_stream,
    time_rates,
)

GDL_TARGETS = {"wallmaze": 5000.0, "bomberman2p": 5000.0, "amazons_8x8": 500.0}
#: The GDL kernel within this factor of the native kernel on the seed games' own sheets (issue 12).
NATIVE_FACTOR = 10.0
#: ggplib's own depth-charge loop on this machine, transitions/s (issue 12): the fastest open GGP engine.
GGPLIB = {
    "wallmaze": 790_000.0,
    "bomberman2p": 600_000.0,
    "amazons_8x8": 300_000.0,
    "amazons_10x10": 218_000.0,
    "tictactoe": 1_294_000.0,
    "connectFour": 1_107_000.0,
    "hex": 63_000.0,
}
#: Corpus sheets the gdl section measures beside ../shared/gdl, tic-tac-toe and ggp's own sheets.
GDL_CORPUS = ("connectFour", "hex")


#: ``play(count, seed) -> transitions``: plays ``count`` random games, says how many transitions they made.
Play = Callable[[int, int], int]


def transition_rates(plays: dict[str, Play], budget: float, reps: int) -> dict[str, float]:
    """Median transitions/s of each ``play(count, seed) -> transitions``, in processor time (the loops are
    single-threaded, so other processes on a busy machine do not count), each sized to ``budget`` seconds,
    repetitions interleaved (so a busy moment of the machine hurts them all alike).

    >>> rates = transition_rates({"ten": lambda count, seed: 10 * count}, 0.01, 1)
    >>> rates["ten"] > 0
    True
    """
    counts = {}
    for name, play in plays.items():
        play(2, 0)  # compile, or load numba's cache
        count = 2
        while True:
            began = time.process_time()
            play(count, 1)
            spent = time.process_time() - began
            if spent >= budget / 4 or count >= 1 << 22:
                break
            count *= 2
        counts[name] = max(1, int(count * budget / max(spent, 1e-9)))
    rates: dict[str, list[float]] = {name: [] for name in plays}
    for rep in range(reps):
        for name, play in plays.items():
            began = time.process_time()
            done = play(counts[name], 100 + rep)
            rates[name].append(done / max(time.process_time() - began, 1e-9))
    return {name: statistics.median(r) for name, r in rates.items()}


def kernel_play(kernel: Any, start: Any) -> Play:
    """``play(count, seed)`` of ``ggp.core.kernels.random_playouts`` over ``kernel`` from state array ``start``."""
    from ggp.core.kernels import random_playouts

    return lambda count, seed: int(random_playouts(kernel, start, count, seed)[1].sum())


def api_play(game: Game) -> Play:
    """``play(count, seed)`` of random games through the Python Game API: each role's ``legal_moves``, a
    choice by ``random.Random``, ``next_state``, until ``is_terminal``; then ``goals`` (what an agent in
    Python or the web app does)."""

    def play(count: int, seed: int) -> int:
        rng = random.Random(seed)
        done = 0
        for _ in range(count):
            s = game.initial_state()
            while not game.is_terminal(s):
                s = game.next_state(s, [rng.choice(game.legal_moves(s, r)) for r in game.roles])
                done += 1
            game.goals(s)
        return done

    return play


#: Through the Python Game API, on tic-tac-toe-sized games (issue 12), transitions/s.
API_TARGET = 20_000.0


def gdl_sheets(root: Path, corpus: tuple[str, ...] = GDL_CORPUS) -> list[tuple[str, str, str, str | None]]:
    """The sheets the gdl section measures, as (label, name, text, the native game of the same rules or None):
    ``root/gdl`` (the shared sheets), tic-tac-toe, ggp's own sheets of the built-in games and the ``corpus``
    sheets of ``root/corpus/kif``."""
    import ggp.gdl
    from ggp.gdl import BUILTIN_RULES, rules_text

    sheets: list[tuple[str, str, str, str | None]] = []
    shared = root / "gdl"
    if shared.is_dir():
        sheets += [(f"shared {p.name}", p.stem, p.read_text(), p.stem) for p in sorted(shared.glob("*.kif"))]
    sheets.append(("tic-tac-toe", "tictactoe", (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text(), None))
    sheets += [(f"ggp rules {name}", name, rules_text(name), name) for name in BUILTIN_RULES]
    for name in corpus:
        path = root / "corpus" / "kif" / f"{name}.kif"
        if path.is_file():
            sheets.append((f"corpus {path.name}", name, path.read_text(), None))
    return sheets


def section_gdl(cfg: Config) -> Section:
    import ggp
    from ggp.gdl import codegen, from_text
    from ggp.gdl.kernel import compilable, evaluation_mode

    sec = Section(
        "gdl",
        "7. GDL reasoner: random-playout state transitions per second against the native engines and ggplib",
        [
            Column("sheet", "rule sheet"),
            Column("load", "load (parse, ground, propnet)", "seconds"),
            Column("gdl", "GDL playout loop transitions/s", "rate"),
            Column("kernel", "GDL kernel transitions/s", "rate"),
            Column("mode", "kernel evaluates by"),
            Column("compile", "compile to machine code", "seconds"),
            Column("native", "native transitions/s", "rate"),
            Column("ratio", "native / GDL", "ratio"),
            Column("ggplib", "ggplib transitions/s", "rate"),
            Column("of_ggplib", "GDL / ggplib", "ratio"),
            Column("api", "Python Game API transitions/s", "rate"),
            Column("target", "target"),
            Column("met", "met", "met"),
        ],
    )
    root = Path(os.environ.get("GGP_SHARED", "../shared"))
    if not (root / "gdl").is_dir():
        sec.notes.append(f"{root / 'gdl'} not found: the shared rule sheets were skipped (set GGP_SHARED)")
    sheets = gdl_sheets(root)
    budget = cfg.budget * 2
    for label, name, text, native in sheets:
        from_text.cache_clear()
        began = time.perf_counter()
        game = from_text(text, name)
        load = time.perf_counter() - began
        start = game.initial_state().array

        def gdl_play(n: int, seed: int, g: Any = game) -> int:
            return int(g.random_playouts(n, seed=seed)[2])

        plays: dict[str, Play] = {"gdl": gdl_play, "kernel": kernel_play(game.kernel, start)}
        if native is not None:
            native_game: Any = ggp.load(native)
            plays["native"] = kernel_play(native_game.kernel, native_game.initial_array())
        if name == "tictactoe":
            plays["api"] = api_play(game)
        rates = transition_rates(plays, budget, cfg.reps)
        compile_seconds = None
        if compilable(game.propnet):  # compiled here afresh, whatever the disk cache holds
            began = time.process_time()
            codegen.object_code(game.propnet.net, "bench")
            compile_seconds = time.process_time() - began
        best = max(rates["gdl"], rates["kernel"])
        nat = rates.get("native")
        ratio = rate_ratio(nat, best)
        ref = GGPLIB.get(name) if not label.startswith("ggp rules") else None
        target = GDL_TARGETS.get(name) if label.startswith("shared") else None
        wanted = []
        met = []
        if target:
            wanted.append(f">= {target:,.0f}/s")
            met.append(best >= target)
        if nat is not None:
            wanted.append(f"native / GDL <= {NATIVE_FACTOR:g}")
            met.append(ratio is not None and ratio <= NATIVE_FACTOR)
        if "api" in rates:
            wanted.append(f"Game API >= {API_TARGET:,.0f}/s")
            met.append(rates["api"] >= API_TARGET)
        sec.rows.append(
            {
                "sheet": label,
                "load": load,
                "gdl": rates["gdl"],
                "kernel": rates["kernel"],
                "mode": evaluation_mode(game.kernel),
                "compile": compile_seconds,
                "native": nat,
                "ratio": ratio,
                "ggplib": ref,
                "of_ggplib": rate_ratio(best, ref),
                "api": rates.get("api"),
                "target": ", ".join(wanted),
                "met": all(met) if met else None,
            }
        )
    sec.notes.append(
        "a transition: every role's legal moves, the terminal test and the next state, in uniformly random "
        "playouts; the playout loop is the reasoner's own (ggp.gdl.GDLGame.random_playouts), the kernel figure "
        "ggp.core.kernels.random_playouts over the game's kernel (what agents run on), as is the native one; "
        "the ratios take the faster GDL figure; the Game API figure (tic-tac-toe) is random games through "
        "legal_moves, next_state and is_terminal in Python; all in processor time; the kernel's evaluator "
        "(sweep, differential or compiled: the network as straight-line machine code) is the fastest measured "
        "once per network and machine; compile: processor seconds to compile the network to object code, for "
        "networks within the compile limit (then kept in ggp's cache folder)"
    )
    sec.notes.append(
        "ggplib (the C++ propnet behind Galvanise) measured on this machine with its own depth-charge loop, "
        "single thread, machine fairly quiet (+-15%): figures from the corpus issue, not measured in this run"
    )
    return sec


#: Sheets of the shared corpus the gdlmcts section measures beside ../shared/gdl and tic-tac-toe.
GDL_MCTS_CORPUS = ("connectFour", "breakthroughSmall")
#: Compiled UCT on a rule sheet against the plain-Python MCTS as the issues found it: at least 20x (the action
#: core's issue, on the seed games' sheets and tic-tac-toe) and 50x (the general player's, on its five sheets).
GDL_MCTS_TARGETS = {
    "wallmaze": (20.0, 50.0),
    "bomberman2p": (20.0, 50.0),
    "amazons_8x8": (20.0, 50.0),
    "tictactoe": (20.0,),
    "connectFour": (50.0,),
    "breakthroughSmall": (50.0,),
}


#: The seed games' sheets (../shared/gdl), measured against the native search too: at least a tenth of its speed.
SEED_SHEETS = ("wallmaze", "bomberman2p", "amazons_8x8", "amazons_10x10", "bomberman")
OF_NATIVE_TARGET = 0.1


def section_gdlmcts(cfg: Config) -> Section:
    import ggp.gdl

    sec = Section(
        "gdlmcts",
        "8. MCTS on rule sheets: compiled decoupled UCT against the plain-Python UCT, simulations/s from the start",
        [
            Column("sheet", "rule sheet"),
            Column("compiled", "compiled sims/s", "rate"),
            Column("then", "then sims/s", "rate"),
            Column("of_then", "/ then", "ratio"),
            Column("plain", "plain sims/s", "rate"),
            Column("ratio", "/ plain", "ratio"),
            Column("mode", "evaluator"),
            Column("batch", "batch", "int"),
            Column("native", "native sims/s", "rate"),
            Column("of_native", "/ native", "ratio"),
            Column("target", "target"),
            Column("met", "met", "met"),
        ],
    )
    shared = Path(os.environ.get("GGP_SHARED", "../shared"))
    sheets: list[tuple[str, str, str, str | None]] = []
    for name in SEED_SHEETS:
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
    seeds = seed_stream()
    with contextlib.ExitStack() as stack:
        try:
            peer: then.PlainThen | None = stack.enter_context(then.PlainThen())
        except RuntimeError as exc:
            peer = None
            sec.notes.append(f"the plain-Python mcts of {then.COMMIT[:7]} was not measured: {exc}")
        for label, name, text, native in sheets:
            sec.rows.append(_gdlmcts_row(label, name, text, native, peer, budget, cfg.reps, seeds))
    sec.notes.append(
        "compiled: ggp.agents.uct.search on the sheet's kernel, its leaves scored in batches (batch: how many at "
        "a time; above 1, by bit-parallel rollouts, ggp.gdl.lanes, where they pay); native: the same search on "
        "the built-in game, one leaf at a time; each "
        "repetition is a fresh search from the initial state (c = 1.4, random rollouts); then: the plain-Python "
        "decoupled UCT that mcts ran on rule sheets when the action-core and general-player issues were written "
        f"(commit {then.COMMIT[:7]}, its own code and GDL reasoner, in a child process: ggp.bench.then), the "
        "issues' baseline; plain: the same algorithm over today's Game API (ggp.bench.gdl._PlainUCT), which "
        "runs on the faster reasoner of the corpus issue"
    )
    return sec


def _gdlmcts_row(
    label: str,
    name: str,
    text: str,
    native: str | None,
    peer: then.PlainThen | None,
    budget: float,
    reps: int,
    seeds: Iterator[int],
) -> dict[str, Any]:
    import ggp
    from ggp.agents.uct import search
    from ggp.gdl import from_text
    from ggp.gdl.kernel import evaluation_mode

    game = from_text(text, name)
    start = game.initial_state()

    def compiled(n: int) -> None:
        search(game, start, sims=n, seed=next(seeds))

    def plain(n: int) -> None:
        _PlainUCT(game, UCT_C, random.Random(next(seeds))).best(start, game.roles[0], n, None)

    runs: dict[str, Workload] = {"compiled": compiled, "plain": plain}
    if peer is not None:
        peer.load(name, text)
        runs["then"] = lambda n: peer.run(name, sims=n, c=UCT_C, seed=next(seeds))
    if native is not None:
        native_game = ggp.load(native)

        def native_search(n: int) -> None:
            search(native_game, native_game.initial_state(), sims=n, seed=next(seeds))

        runs["native"] = native_search
    rates = time_rates(runs, budget, reps, max_count=2_000_000)
    fast = rates["compiled"].median
    of_then = rate_ratio(fast, rates["then"].median) if "then" in rates else None
    nat = rates["native"].median if "native" in rates else None
    wanted = GDL_MCTS_TARGETS.get(name, ())
    of_native = rate_ratio(fast, nat)
    targets = [f">= {t:g}x" for t in wanted] + ([f">= {OF_NATIVE_TARGET:g} native"] if nat is not None else [])
    met = [of_then is not None and all(of_then >= t for t in wanted)] if wanted else []
    if nat is not None:
        met.append(of_native is not None and of_native >= OF_NATIVE_TARGET)
    return {
        "sheet": label,
        "compiled": fast,
        "then": rates["then"].median if "then" in rates else None,
        "of_then": of_then,
        "plain": rates["plain"].median,
        "ratio": rate_ratio(fast, rates["plain"].median),
        "mode": evaluation_mode(game.kernel),
        "batch": game.kernel.rollout_batch(),
        "native": nat,
        "of_native": of_native,
        "target": ", ".join(targets) if targets else None,
        "met": all(met) if met else None,
    }


SECTIONS = {
    "gdl": ("7. GDL reasoner", section_gdl),
    "gdlmcts": ("8. MCTS on rule sheets", section_gdlmcts),
}


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
        from ..core.game import random_playout

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
