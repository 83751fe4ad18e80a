"""``ggp random GAME``: play uniformly random games and summarise their lengths, outcomes and speed.

(The module is not called ``random``: that would shadow the standard library's.)
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from rich.text import Text

from ..core.game import Game, random_playout
from .argtypes import MAX_GAMES, game_count, game_ref
from .argtypes import seed as seed_number
from .common import SEED_HELP, UsageError, console
from .loading import load_game
from .perft import kernel_and_array


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "random",
        help="play uniformly random games and summarise them",
        description="Play N uniformly random games and report their lengths, outcomes and speed.",
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument(
        "--games",
        "-n",
        type=game_count,
        default=100,
        metavar="N",
        help=f"how many games (default 100, at most {MAX_GAMES:,})",
    )
    p.add_argument("--seed", type=seed_number, default=None, metavar="S", help=SEED_HELP)
    p.add_argument(
        "--compiled",
        action="store_true",
        help="run the playouts in one compiled call over the game's kernel instead of the Game API loop",
    )
    p.set_defaults(func=cmd_random)


def random_games_api(game: Game, count: int, seed: int | None) -> tuple[list[tuple[int, ...]], list[int]]:
    """Play ``count`` uniformly random games through the Game API; returns each game's goals and length."""
    rng = random.Random(seed)
    start = game.initial_state()
    goals: list[tuple[int, ...]] = []
    lengths: list[int] = []
    for _ in range(count):
        state, steps = random_playout(game, start, rng)
        goals.append(tuple(game.goals(state)))
        lengths.append(steps)
    return goals, lengths


def random_games_compiled(game: Game, count: int, seed: int) -> tuple[list[tuple[int, ...]], list[int], float]:
    """Play ``count`` random games in one compiled call; returns goals, lengths and the seconds it took.

    The kernel is compiled (or loaded from numba's cache) by a one-game call
    first, so the time is that of the games alone.
    """
    fast = kernel_and_array(game, game.initial_state())
    propnet_playouts = getattr(game, "random_playouts", None)
    if fast is None and propnet_playouts is not None:  # a GDL game: its propnet plays in one compiled call
        propnet_playouts(1, seed)
        began = time.perf_counter()
        goals, lengths, _ = propnet_playouts(count, seed)
        elapsed = time.perf_counter() - began
        return [tuple(int(v) for v in g) for g in goals], [int(n) for n in lengths], elapsed
    if fast is None:
        raise UsageError(f"{game.name} has no compiled kernel; run without --compiled")
    from ..core.kernels import random_playouts

    kernel, array = fast
    random_playouts(kernel, array, 1, seed)
    began = time.perf_counter()
    goals, lengths = random_playouts(kernel, array, count, seed)
    elapsed = time.perf_counter() - began
    return [tuple(int(v) for v in g) for g in goals], [int(n) for n in lengths], elapsed


def cmd_random(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    if args.compiled:
        goals, lengths, elapsed = random_games_compiled(game, args.games, seed)
        how = "compiled (the native kernel, or a GDL game's propnet)"
    else:
        random_games_api(game, 1, seed)  # the kernels behind the API compile (or load numba's cache) here
        began = time.perf_counter()
        goals, lengths = random_games_api(game, args.games, seed)
        elapsed = time.perf_counter() - began
        how = "Game API loop (legal_moves + next_state)"
    out = console()
    n = len(lengths)
    out.print(Text(f"{game.name}: {n} uniformly random games, seed {seed}, {how}", style="bold"), soft_wrap=True)
    speed = f"{n / elapsed:,.0f} games/second" if elapsed > 0 else "too fast to time"
    rows = [
        ("games", str(n)),
        ("length", f"{sum(lengths) / n:.1f} joint moves on average (min {min(lengths)}, max {max(lengths)})"),
        ("speed", f"{speed} ({elapsed:.3f} s in all)"),
        ("outcomes", ""),
    ]
    for key, value in rows:
        line = Text(f"{key:<9} {value}".rstrip())
        line.stylize("bold", 0, len(key))
        out.print(line, soft_wrap=True)
    tally = Counter(goals)
    labels = {result: " / ".join(f"{r} {v}" for r, v in zip(game.roles, result, strict=True)) for result in tally}
    width = max(len(label) for label in labels.values())
    for result, times in sorted(tally.items(), key=lambda item: (-item[1], item[0])):
        out.print(f"  {labels[result]:<{width}}  {times:>{len(str(n))}}  {100 * times / n:5.1f}%", soft_wrap=True)
    return 0
