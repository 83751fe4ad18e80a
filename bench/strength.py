"""Strength benchmarks: ggp's players against each other, random, and OpenSpiel's MCTSBot.

    python bench/strength.py amazons-vs-openspiel --board 8 --games 60 --time 0.25
    python bench/strength.py duel bomberman2p bomberman random --games 500
    python bench/strength.py all              # every target of the players issue (hours)
    python bench/strength.py all --quick      # the same with few games (minutes)

Each duel alternates seats, prints wins/draws/losses and mean goals per side
with a 95% interval, and appends a JSON line to bench/results/strength.jsonl.
These runs take minutes to hours; they are benchmarks, not tests.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import ggp
from ggp.agents import Agent, make_agent
from ggp.core.game import Game, Move, State

RESULTS = Path(__file__).resolve().parent / "results" / "strength.jsonl"


# --- OpenSpiel's MCTSBot as a ggp agent ------------------------------------------------------------
class OpenSpielMCTS(Agent):
    """pyspiel.MCTSBot (C++, random rollouts) playing our Amazons through OpenSpiel's own game.

    OpenSpiel splits a turn into three actions (amazon, destination, arrow);
    our move step asks the bot twice and our fire step once, each with
    ``sims`` simulations. Cells are ``row * N + col`` with row 0 at the top.
    """

    name = "openspiel-mcts"

    def __init__(self, sims: int, seed: int = 0, c: float = 2.0) -> None:
        super().__init__()
        self.sims, self.seed, self.c = sims, seed, c

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        import pyspiel

        super().start(game, role, start_clock, play_clock)
        self.n = int(game.name.split("_")[1].split("x")[0])
        self.os_game = pyspiel.load_game("amazons", {"board_size": self.n})
        evaluator = pyspiel.RandomRolloutEvaluator(1, self.seed)
        self.bot = pyspiel.MCTSBot(self.os_game, evaluator, self.c, self.sims, 1000, False, self.seed, False)
        self.os_state = self.os_game.new_initial_state()

    def cell(self, x: int, y: int) -> int:
        return (self.n - y) * self.n + (x - 1)

    def xy(self, cell: int) -> tuple[int, int]:
        return cell % self.n + 1, self.n - cell // self.n

    def observe(self, move_text: str) -> None:
        """Apply one of our moves (either side's) to OpenSpiel's state."""
        parts = move_text.strip("()").split()
        if parts[0] == "move":
            x1, y1, x2, y2 = map(int, parts[1:])
            self.os_state.apply_action(self.cell(x1, y1))
            self.os_state.apply_action(self.cell(x2, y2))
        elif parts[0] == "fire":
            self.os_state.apply_action(self.cell(int(parts[1]), int(parts[2])))

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        legal = self.game.legal_moves(state, self.role)
        if len(legal) == 1:
            if legal[0].text != "noop":  # forced, but OpenSpiel's state must still follow
                self.observe(legal[0].text)
            return legal[0]
        doc = self.game.state_to_dict(state)
        if doc["phase"] == "move":
            src = self.bot.step(self.os_state)
            self.os_state.apply_action(src)
            dst = self.bot.step(self.os_state)
            self.os_state.apply_action(dst)
            (x1, y1), (x2, y2) = self.xy(src), self.xy(dst)
            return self.game.parse_move(f"(move {x1} {y1} {x2} {y2})")
        arrow = self.bot.step(self.os_state)
        self.os_state.apply_action(arrow)
        x, y = self.xy(arrow)
        return self.game.parse_move(f"(fire {x} {y})")


def calibrate_openspiel(board: int, seconds_per_step: float) -> tuple[int, float]:
    """MCTSBot simulations per decision so that a whole turn takes what our two steps take."""
    import pyspiel

    game = pyspiel.load_game("amazons", {"board_size": board})
    probe = 2000
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, probe, 1000, False, 0, False)
    rates = []
    for _ in range(3):
        began = time.perf_counter()
        bot.step(game.new_initial_state())
        rates.append(probe / (time.perf_counter() - began))
    rate = sorted(rates)[1]
    # A turn is 3 OpenSpiel decisions against our 2 steps of seconds_per_step each.
    return max(10, int(rate * 2 * seconds_per_step / 3)), rate


# --- duels -------------------------------------------------------------------------------------------------
def play(game: Game, agents: list[Agent], time_limit: float | None) -> tuple[int, ...]:
    """One game between ``agents`` (in role order); OpenSpiel adapters are told every move."""
    for agent, role in zip(agents, game.roles, strict=True):
        agent.start(game, role)
    state = game.initial_state()
    while not game.is_terminal(state):
        joint = [agent.select_move(state, time_limit) for agent in agents]
        for agent, role in zip(agents, game.roles, strict=True):
            if isinstance(agent, OpenSpielMCTS):
                for other, move in zip(game.roles, joint, strict=True):
                    if other != role and move.text != "noop":
                        agent.observe(move.text)
        state = game.next_state(state, joint)
    goals = game.goals(state)
    for agent in agents:
        agent.stop(state, goals)
    return goals


def interval(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / max(n - 1, 1)
    half = 1.96 * math.sqrt(var / n)
    return mean, half


def duel(
    game_name: str, spec_a: str | Any, spec_b: str | Any, games: int, time_limit: float | None, label: str = ""
) -> dict[str, Any]:
    """``games`` games, seats alternating; a spec may be a callable making an agent from a seed."""
    game = ggp.load(game_name)
    goals_a: list[float] = []
    goals_b: list[float] = []
    wins = draws = losses = 0
    began = time.perf_counter()
    for k in range(games):
        a_first = k % 2 == 0
        make = [spec_a, spec_b] if a_first else [spec_b, spec_a]
        agents = [m(k * 2 + i) if callable(m) else make_agent(m, seed=k * 2 + i) for i, m in enumerate(make)]
        g = play(game, agents, time_limit)
        mine, theirs = (g[0], g[1]) if a_first else (g[1], g[0])
        goals_a.append(mine)
        goals_b.append(theirs)
        wins += mine > theirs
        draws += mine == theirs
        losses += mine < theirs
        print(f"  game {k + 1}/{games}: {mine}-{theirs}  (W/D/L so far {wins}/{draws}/{losses})", flush=True)
    mean, half = interval(goals_a)
    result = {
        "game": game_name,
        "a": label or str(spec_a),
        "b": str(spec_b) if not callable(spec_b) else getattr(spec_b, "label", "custom"),
        "games": games,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "mean_goal_a": round(mean, 2),
        "ci95": round(half, 2),
        "mean_goal_b": round(sum(goals_b) / len(goals_b), 2),
        "time_per_move": time_limit,
        "seconds": round(time.perf_counter() - began, 1),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(json.dumps(result), flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as fh:
        fh.write(json.dumps(result) + "\n")
    return result


def amazons_vs_openspiel(board: int, games: int, seconds: float) -> dict[str, Any]:
    sims, rate = calibrate_openspiel(board, seconds)
    print(f"MCTSBot: {rate:,.0f} simulations/s here; {sims} simulations per decision (a turn = 3 decisions)")

    def openspiel(seed: int) -> Agent:
        return OpenSpielMCTS(sims=sims, seed=seed)

    openspiel.label = f"openspiel-mcts:sims={sims}"  # type: ignore[attr-defined]
    return duel(f"amazons_{board}x{board}", f"amazons:time={seconds}", openspiel, games, seconds)


def wallmaze_bound() -> float:
    """White's best expected goal against a uniformly random black: the ceiling for any player.

    Exact dynamic programming over the game's states (the step counter makes
    the game finite): at each state white picks the move with the best
    average over black's equally likely replies.
    """
    import functools

    import numpy as np

    game = ggp.load("wallmaze")
    kernel = game.kernel  # type: ignore[attr-defined]

    @functools.cache
    def value(key: tuple[int, ...]) -> float:
        s = np.array(key, dtype=np.int64)
        if kernel.terminal(s):
            return float(kernel.goals(s)[0])
        buf = np.empty(5, dtype=np.int64)
        mine = buf[: kernel.legal(s, 0, buf)].copy()
        theirs = buf[: kernel.legal(s, 1, buf)].copy()
        best = 0.0
        for a in mine:
            total = 0.0
            for b in theirs:
                t = s.copy()
                kernel.apply(t, a, b)
                total += value(tuple(int(x) for x in t))
            best = max(best, total / len(theirs))
        return best

    bound = value(tuple(int(x) for x in game.initial_state().array))  # type: ignore[attr-defined]
    print(f"wallmaze: the best any white player can expect against uniformly random black is {bound:.2f}")
    return bound


# --- the whole suite: every strength target, checked -----------------------------------------------------
def suite(quick: bool) -> list[tuple[str, Any, Any]]:
    """(target, run, holds): each ``run()`` plays its games; ``holds(result)`` checks the target."""
    k = 10 if quick else 1  # --quick divides the game counts by this

    def duel_of(game: str, a: str, b: str, games: int, time_limit: float | None = None) -> Any:
        return lambda: duel(game, a, b, max(2, games // k), time_limit)

    def no_losses(r: dict[str, Any]) -> bool:
        return bool(r["losses"] == 0)

    def win_share(share: float) -> Any:
        return lambda r: r["wins"] >= share * r["games"]

    rows: list[tuple[str, Any, Any]] = []
    for board in (8, 10):
        game = f"amazons_{board}x{board}"
        rows += [
            (
                f"{game}: amazons:time=0.25 wins >= 90% against MCTSBot (same time)",
                lambda board=board: amazons_vs_openspiel(board, max(2, 60 // k), 0.25),
                win_share(0.9),
            ),
            (
                f"{game}: amazons wins 100% against random",
                duel_of(game, "amazons:time=0.1", "random", 40),
                win_share(1),
            ),
            (
                f"{game}: amazons beats mcts clearly (>= 75% wins)",
                duel_of(game, "amazons:time=0.1", "mcts:time=0.1", 20),
                win_share(0.75),
            ),
        ]
    for game in ("bomberman2p", "bomberman"):
        rows += [
            (f"{game}: bomberman loses 0 of 500 against random", duel_of(game, "bomberman", "random", 500), no_losses),
            (
                f"{game}: bomberman wins >= 99% against random",
                lambda game=game: _last(game, "bomberman", "random"),
                win_share(0.99),
            ),
            (
                f"{game}: bomberman loses 0 of 200 against mcts:time=0.05",
                duel_of(game, "bomberman", "mcts:time=0.05", 200),
                no_losses,
            ),
        ]
    bound = "the best possible, 92.25 (wallmaze-bound)"
    rows += [
        (
            f"wallmaze: mean goal against random >= 95 (impossible: {bound})",
            duel_of("wallmaze", "wallmaze:time=0.2", "random", 100),
            lambda r: r["mean_goal_a"] >= 95,
        ),
        (
            "wallmaze: wallmaze scores >= mcts head to head",
            duel_of("wallmaze", "wallmaze:time=0.2", "mcts:time=0.2", 40),
            lambda r: r["mean_goal_a"] >= r["mean_goal_b"],
        ),
    ]
    for game in ("amazons_10x10", "amazons_8x8", "bomberman", "bomberman2p", "wallmaze"):
        # In the wall maze no player wins more than 92.25% against random: a win scores 100,
        # and 92.25 is the best expected goal (wallmaze-bound).
        note = " (impossible: at most 92.25%)" if game == "wallmaze" else ""
        target = f"{game}: mcts wins >= 95% against random{note}"
        rows.append((target, duel_of(game, "mcts:time=0.1", "random", 100), win_share(0.95)))
    return rows


def _last(game: str, a: str, b: str) -> dict[str, Any]:
    """The newest recorded duel of ``a`` against ``b`` (played just before by the suite)."""
    rows = [json.loads(line) for line in RESULTS.read_text().splitlines() if line.strip()]
    return next(r for r in reversed(rows) if r["game"] == game and r["a"] == a and r["b"] == b)


def run_suite(quick: bool) -> None:
    verdicts = []
    for target, run, holds in suite(quick):
        print(f"== {target}", flush=True)
        result = run()
        verdicts.append((target, result, bool(holds(result))))
    print("\n| target | games | W/D/L | mean goal | holds |\n|---|---|---|---|---|")
    for target, r, ok in verdicts:
        wdl = f"{r['wins']}/{r['draws']}/{r['losses']}"
        print(f"| {target} | {r['games']} | {wdl} | {r['mean_goal_a']} | {'yes' if ok else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("amazons-vs-openspiel")
    p.add_argument("--board", type=int, choices=(8, 10), default=8)
    p.add_argument("--games", type=int, default=60)
    p.add_argument("--time", type=float, default=0.25)
    sub.add_parser("wallmaze-bound", help="the best expected goal against random in wallmaze")
    p = sub.add_parser("all", help="every strength target, with a table of which hold")
    p.add_argument("--quick", action="store_true", help="a tenth of the games")
    p = sub.add_parser("duel")
    p.add_argument("game")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--time", type=float, default=None, help="time limit per move passed to the agents")
    args = parser.parse_args()
    if args.what == "amazons-vs-openspiel":
        amazons_vs_openspiel(args.board, args.games, args.time)
    elif args.what == "wallmaze-bound":
        wallmaze_bound()
    elif args.what == "all":
        run_suite(args.quick)
    else:
        duel(args.game, args.a, args.b, args.games, args.time)


if __name__ == "__main__":
    main()
