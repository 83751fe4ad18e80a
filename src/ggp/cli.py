"""The ``ggp`` command.

::

    ggp games                                    # the games, one line each
    ggp show bomberman2p                         # the initial position
    ggp rules wallmaze                           # ggp's GDL rule sheet of a game
    ggp play wallmaze --white human --black random --seed 1
    ggp perft amazons_8x8 3                      # 70386
    ggp random amazons_10x10 --games 1000 --seed 1 [--compiled]
    ggp match bomberman2p --bomberman bomberman --bomberwoman mcts --games 10 --swap
    ggp tournament wallmaze random mcts wallmaze --games 4 --workers 2 --db wm.sqlite
    ggp replay records/wallmaze-1-001.json
    ggp web                                      # the web app on http://127.0.0.1:8000
    ggp serve mcts --port 9147                   # a GGP player
    ggp host wallmaze --player white=http://127.0.0.1:9147 --player black=random
    ggp bench                                    # speed, against OpenSpiel when installed

:func:`main` takes the arguments and returns the exit code: 0 on success, 2
for a user mistake (an unknown game, a bad agent spec or option), 1 when the
system refuses (a full disk) or ggp fails (an internal error: one line; the
traceback with ``GGP_TRACEBACK=1``), 130 when interrupted with Ctrl-C.
Every argument is checked before anything runs (:mod:`ggp._argtypes`).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

import ggp
from ggp._argtypes import (
    MAX_GAMES,
    MAX_PERFT_DEPTH,
    MAX_SEED,
    MAX_TOURNAMENT_GAMES,
    MAX_WORKERS,
    agent_spec,
    game_count,
    game_ref,
    grace,
    non_negative_float,
    one_line,
    output_file,
    perft_depth,
    player_spec,
    port,
    positive_float,
    positive_int,
    role_player,
    seed,
    symbol,
    tournament_games,
    worker_count,
)
from ggp.agents import Agent, describe_agents, make_agent
from ggp.core.errors import GGPError, IllegalMoveError, MoveSyntaxError
from ggp.core.game import Game, Move, State, illegal_move_error, random_playout
from ggp.core.registry import games as builtin_games
from ggp.match.referee import MAX_CLOCK, MAX_GRACE

HUMAN = "human"

_SEED_HELP = f"random seed, 0 to {MAX_SEED} (default: random)"
_CLOCK_MAX = f", at most {MAX_CLOCK:g}"
_GRACE_MAX = f", at most {MAX_GRACE:g}"

_HINT_TAIL = "; help or ? lists the legal moves (a number picks one), quit leaves"


class UsageError(Exception):
    """A mistake in the command line that argparse cannot see (a bad agent spec, say)."""


class _Quit(Exception):
    """The player typed quit."""


# --- entry point -----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """Run the ``ggp`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        code: int = args.func(args)
        return code
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2, message already printed)
        return _exit_code(exc)
    except (GGPError, UsageError) as exc:
        _flush_quietly()
        print(f"ggp: error: {_clip(str(exc), 2000)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _flush_quietly()
        print("\nggp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `ggp games | head -1`: the reader left; say nothing
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except OSError as exc:  # the system refused (a disk full, a file vanished): say what, in one line
        _flush_quietly()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"ggp: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: one line, and the traceback only when asked for
        _flush_quietly()
        if os.environ.get("GGP_TRACEBACK"):
            raise
        print(
            f"ggp: internal error: {type(exc).__name__}: {_clip(str(exc))} (set GGP_TRACEBACK=1 to see where)",
            file=sys.stderr,
        )
        return 1


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _clip(text: str, limit: int = 300) -> str:
    flat = one_line(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _flush_quietly() -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``ggp`` command (``play``'s role options are parsed later)."""
    parser = argparse.ArgumentParser(
        prog="ggp",
        description="General Game Playing: the built-in games from the command line.",
        epilog="Run `ggp COMMAND -h` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"ggp {ggp.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("games", help="list the built-in games", description="List the built-in games.")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("show", help="print a game's initial position", description="Print a game's initial position.")
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "rules", help="print ggp's GDL rule sheet of a game", description="Print ggp's GDL rule sheet of GAME."
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser(
        "play",
        help="play a game in the terminal",
        description="Play GAME in the terminal, people against agents or each other.",
        usage="ggp play GAME [--ROLE human|AGENT_SPEC ...] [--seed S]",
        epilog=(
            "Each role of GAME is an option: --white/--black (amazons, wallmaze), "
            "--bomberman/--bomberwoman (bomberman, bomberman2p). A role is played by `human` "
            "or an agent spec, NAME[:key=value,...]; known agents: "
            f"{describe_agents()}. By default the first role is human and the others random. "
            "--seed S seeds the agents. `ggp play GAME -h` lists GAME's options."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "perft",
        help="count the joint-move sequences of a given length",
        description=(
            "Count the joint-move sequences of length DEPTH from the initial state (stopping at terminal "
            "states), with the game's compiled kernel when it has one. The count is the last line."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("depth", metavar="DEPTH", type=perft_depth, help=f"0 to {MAX_PERFT_DEPTH}")
    p.add_argument("--api", action="store_true", help="recurse through the Game API instead of the kernel")
    p.set_defaults(func=cmd_perft)

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
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=_SEED_HELP)
    p.add_argument(
        "--compiled",
        action="store_true",
        help="run the playouts in one compiled call over the game's kernel instead of the Game API loop",
    )
    p.set_defaults(func=cmd_random)

    p = sub.add_parser(
        "web",
        help="serve the web app: play, watch and replay games in a browser",
        description="Serve the web app (needs pip install 'ggp[web]'). Every game is kept in a SQLite file.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=8000, help="port to listen on (default 8000; 0: any free)")
    p.add_argument(
        "--db",
        default=None,
        metavar="PATH",
        help="the SQLite history (default: $GGP_WEB_DB or ~/.local/share/ggp/web.sqlite3)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (the app answers loopback names only); repeatable",
    )
    p.set_defaults(func=cmd_web)

    p = sub.add_parser(
        "bench",
        help="measure speed on this machine, against OpenSpiel where it is installed",
        description=(
            "Measure random games, MCTS, vectorised steps, perft and compile times on this machine, and compare "
            "with OpenSpiel (pip install 'ggp[bench]') in the same run. Figures are medians of repetitions."
        ),
    )
    p.add_argument("--quick", action="store_true", help="a short smoke run with few repetitions")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    p.add_argument(
        "--only",
        default=None,
        metavar="SECTIONS",
        help="comma-separated sections to run (random, amazons, wallmaze, vector, perft, memory, compile, import)",
    )
    p.set_defaults(func=cmd_bench)
    p = sub.add_parser(
        "match",
        help="play a series of matches between agents and summarise them",
        description="Play N matches of GAME between agents under a referee (clocks enforced) and summarise them.",
        usage="ggp match GAME [--ROLE SPEC ...] [--games N] [--swap] [--seed S] [--playclock T] [--startclock T] [--out DIR]",
        epilog=(
            "Each role of GAME is an option (--white/--black, --bomberman/--bomberwoman) taking an agent spec; "
            "`ggp match GAME -h` lists GAME's options."
        ),
    )
    p.add_argument("game", metavar="GAME", type=game_ref)
    p.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_match)

    p = sub.add_parser(
        "tournament",
        help="run a resumable round robin between agents in parallel, with ratings",
        description=(
            "Round robin of GAME between the agent specs, each pair playing N games in each seating, in worker "
            "processes; results go to an SQLite database as they finish, and running the command again resumes. "
            "Ends with Bradley-Terry ratings. With only --db, resumes that tournament; with --report, prints it."
        ),
    )
    p.add_argument("game", metavar="GAME", nargs="?", default=None, type=game_ref)
    p.add_argument("specs", metavar="SPEC", nargs="*", help="agent specs, NAME[:key=value,...]")
    p.add_argument(
        "--games",
        "-n",
        type=tournament_games,
        default=2,
        metavar="N",
        help=f"games per pair and seating (default 2, at most {MAX_TOURNAMENT_GAMES:,})",
    )
    p.add_argument(
        "--workers",
        "-j",
        type=worker_count,
        default=None,
        metavar="K",
        help=f"worker processes (default: CPUs, at most {MAX_WORKERS})",
    )
    p.add_argument("--db", default=None, metavar="PATH", help="the SQLite database (default ggp-tournament.sqlite)")
    p.add_argument(
        "--playclock", type=positive_float, default=None, metavar="T", help="seconds per move (default 1)" + _CLOCK_MAX
    )
    p.add_argument(
        "--startclock",
        type=positive_float,
        default=None,
        metavar="T",
        help="seconds to prepare (default 5)" + _CLOCK_MAX,
    )
    p.add_argument(
        "--grace", type=grace, default=None, metavar="T", help="slack past a clock (default 0.25)" + _GRACE_MAX
    )
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=_SEED_HELP)
    p.add_argument("--limit", type=positive_int, default=None, metavar="M", help="run at most M matches, then stop")
    p.add_argument(
        "--stall-timeout",
        type=positive_float,
        default=None,
        metavar="T",
        help="kill a silent worker after T s" + _CLOCK_MAX,
    )
    p.add_argument("--retry-failed", action="store_true", help="schedule failed matches again")
    p.add_argument("--report", action="store_true", help="print the ratings of the database and exit")
    p.add_argument(
        "--agent-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (module name or .py file) registering more agents, here and in every worker",
    )
    p.set_defaults(func=cmd_tournament)

    p = sub.add_parser(
        "replay",
        help="show a recorded match move by move",
        description="Replay a match record (JSON, from `ggp match --out`): every joint move and state.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--step", action="store_true", help="wait for Enter before each move")
    p.add_argument("--final", action="store_true", help="show only the final position and result")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "serve",
        help="be a GGP player: answer a game manager over HTTP with an agent",
        description=(
            "Serve agent SPEC as a GGP player (ggp-base's HTTP protocol). Built-in games are recognised from "
            "the rules sent with START and played natively; any other game runs on the GDL reasoner."
        ),
    )
    p.add_argument("spec", metavar="SPEC", type=agent_spec, help="agent spec, NAME[:key=value,...], e.g. mcts:time=4")
    p.add_argument("--port", type=port, default=9147, help="port to listen on (default 9147; 0: any free)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0: all)")
    p.add_argument("--name", type=symbol, default=None, help="the name INFO answers (default ggp-AGENT)")
    p.add_argument(
        "--margin", type=non_negative_float, default=None, metavar="T", help="seconds kept back from each clock"
    )
    p.add_argument(
        "--idle-timeout", type=positive_float, default=None, metavar="T", help="drop a match silent this long"
    )
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=_SEED_HELP)
    p.add_argument("--quiet", "-q", action="store_true", help="do not log messages to stderr")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "host",
        help="referee a match with remote GGP players and local agents",
        description=(
            "Run a match of GAME (a built-in game or a .kif rule sheet) under a referee: each role is a GGP player "
            "at a URL or an agent spec played here; roles not given play random."
        ),
    )
    p.add_argument("game", metavar="GAME_OR_KIF", type=game_ref)
    p.add_argument(
        "--player",
        action="append",
        type=role_player,
        default=[],
        metavar="ROLE=WHO",
        help="ROLE=http://host:port or ROLE=SPEC",
    )
    p.add_argument(
        "--startclock",
        type=positive_float,
        default=10.0,
        metavar="T",
        help="seconds to prepare (default 10)" + _CLOCK_MAX,
    )
    p.add_argument(
        "--playclock", type=positive_float, default=5.0, metavar="T", help="seconds per move (default 5)" + _CLOCK_MAX
    )
    p.add_argument(
        "--grace", type=grace, default=0.5, metavar="T", help="slack past a clock (default 0.5)" + _GRACE_MAX
    )
    p.add_argument("--seed", type=seed, default=None, metavar="S", help=_SEED_HELP)
    p.add_argument(
        "--match-id", type=symbol, default=None, metavar="ID", help="the match id sent to players (one word)"
    )
    p.add_argument(
        "--out", type=output_file, default=None, metavar="FILE", help="write the match record (JSON) to FILE"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="do not print every joint move")
    p.set_defaults(func=cmd_host)
    return parser


def _console() -> Console:
    # Created per command so that it writes to the current sys.stdout; rich drops colour when not a TTY.
    return Console(highlight=False)


# --- games, show ------------------------------------------------------------------------------------
def cmd_games(args: argparse.Namespace) -> int:
    console = _console()
    names = builtin_games()
    width = max(len(n) for n in names)
    for name in names:
        line = Text(f"{name:<{width}}", style="bold")
        line.append(f"  {ggp.load(name).description}")
        console.print(line, soft_wrap=True)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    game = ggp.load(args.game)
    print(f"{game.name}: {game.description}")
    print(f"roles: {', '.join(game.roles)}")
    print(game.initial_state())
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from ggp.gdl import rules_text

    sys.stdout.write(rules_text(args.game))
    return 0


# --- perft --------------------------------------------------------------------------------------------
def _kernel_and_array(game: Game, state: State) -> tuple[Any, Any] | None:
    """The game's compiled kernel and the state's array, if the game has them."""
    kernel = getattr(game, "kernel", None)
    array = getattr(state, "array", None)
    if kernel is None or array is None:
        return None
    return kernel, array


def perft_api(game: Game, state: State, depth: int) -> int:
    """Perft through the Game API: joint-move sequences of length ``depth``, stopping at terminal states."""
    if depth <= 0:
        return 1
    if game.is_terminal(state):
        return 0
    joints = game.joint_moves(state)
    if depth == 1:
        return len(joints)
    return sum(perft_api(game, game.next_state(state, joint), depth - 1) for joint in joints)


def cmd_perft(args: argparse.Namespace) -> int:
    game = ggp.load(args.game)
    state = game.initial_state()
    fast = None if args.api else _kernel_and_array(game, state)
    compiled_in = 0.0
    if fast is not None:
        from ggp.core.kernels import perft

        began = time.perf_counter()
        perft(fast[0], fast[1], 1)  # compile (or load numba's cache) before timing
        compiled_in = time.perf_counter() - began
        began = time.perf_counter()
        count = perft(fast[0], fast[1], args.depth)
        how = f"compiled kernel, {compiled_in:.1f} s to compile"
    else:
        began = time.perf_counter()
        count = perft_api(game, state, args.depth)
        how = "Game API"
    elapsed = time.perf_counter() - began
    rate = f", {count / elapsed:,.0f} per second" if elapsed > 0 else ""
    print(f"perft({args.depth}) of {game.name} ({how}): {count:,} sequences in {elapsed:.3f} s{rate}")
    print(count)
    return 0


# --- random -------------------------------------------------------------------------------------------
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
    fast = _kernel_and_array(game, game.initial_state())
    propnet_playouts = getattr(game, "random_playouts", None)
    if fast is None and propnet_playouts is not None:  # a GDL game: its propnet plays in one compiled call
        propnet_playouts(1, seed)
        began = time.perf_counter()
        goals, lengths, _ = propnet_playouts(count, seed)
        elapsed = time.perf_counter() - began
        return [tuple(int(v) for v in g) for g in goals], [int(n) for n in lengths], elapsed
    if fast is None:
        raise UsageError(f"{game.name} has no compiled kernel; run without --compiled")
    from ggp.core.kernels import random_playouts

    kernel, array = fast
    random_playouts(kernel, array, 1, seed)
    began = time.perf_counter()
    goals, lengths = random_playouts(kernel, array, count, seed)
    elapsed = time.perf_counter() - began
    return [tuple(int(v) for v in g) for g in goals], [int(n) for n in lengths], elapsed


def cmd_random(args: argparse.Namespace) -> int:
    game = ggp.load(args.game)
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
    console = _console()
    n = len(lengths)
    console.print(Text(f"{game.name}: {n} uniformly random games, seed {seed}, {how}", style="bold"), soft_wrap=True)
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
        console.print(line, soft_wrap=True)
    tally = Counter(goals)
    labels = {result: " / ".join(f"{r} {v}" for r, v in zip(game.roles, result, strict=True)) for result in tally}
    width = max(len(label) for label in labels.values())
    for result, times in sorted(tally.items(), key=lambda item: (-item[1], item[0])):
        console.print(f"  {labels[result]:<{width}}  {times:>{len(str(n))}}  {100 * times / n:5.1f}%", soft_wrap=True)
    return 0


# --- bench --------------------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    from ggp import bench

    only = None
    if args.only is not None:
        only = [key.strip() for key in args.only.split(",") if key.strip()]
        unknown = [key for key in only if key not in bench.SECTIONS]
        if unknown or not only:
            raise UsageError(f"--only {args.only}: the sections are {', '.join(bench.SECTIONS)}")
    progress = Console(stderr=True, highlight=False)
    report = bench.run(quick=args.quick, only=only, progress=lambda text: progress.print(text, style="dim"))
    if args.json:
        print(report.to_json())
    else:
        console = _console()
        if not console.is_terminal:  # a file or a pipe: wide enough for the tables
            console = Console(highlight=False, width=120)
        bench.print_report(report, console)
    return 0


# --- web ----------------------------------------------------------------------------------------------
def cmd_web(args: argparse.Namespace) -> int:
    try:
        from ggp.web.server import serve
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("fastapi", "uvicorn", "jinja2", "starlette", "pydantic"):
            raise UsageError(f"the web app needs {exc.name}: pip install 'ggp[web]'") from None
        raise
    return serve(args.host, args.port, args.db, allowed_hosts=args.allow_host)


# --- play ---------------------------------------------------------------------------------------------
def _role_parser(game: Game) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"ggp play {game.name}",
        description=f"Play {game.name}: {game.description}",
        epilog=f"A role is played by `human` or an agent spec; known agents: {describe_agents()}.",
        allow_abbrev=False,
    )
    for i, role in enumerate(game.roles):
        default = HUMAN if i == 0 else "random"
        parser.add_argument(
            f"--{role}",
            dest=f"role_{i}",
            type=player_spec,
            default=default,
            metavar="PLAYER",
            help=f"who plays {role}: human or an agent spec such as random:seed=3 (default {default})",
        )
    parser.add_argument("--seed", type=seed, default=None, metavar="S", help=_SEED_HELP)
    return parser


def cmd_play(args: argparse.Namespace) -> int:
    game = ggp.load(args.game)
    options = _role_parser(game).parse_args(args.options)
    players: dict[str, Agent | None] = {}
    for i, role in enumerate(game.roles):
        spec = str(getattr(options, f"role_{i}")).strip()
        if spec.lower() == HUMAN:
            players[role] = None
            continue
        defaults = {} if options.seed is None else {"seed": options.seed + i}
        try:
            players[role] = make_agent(spec, **defaults)
        except ValueError as exc:
            raise UsageError(f"--{role} {spec}: {exc} (or human)") from None
    try:
        return play(game, players)
    except EOFError:
        print("\nend of input: game abandoned")
        return 0
    except UnicodeDecodeError:
        raise UsageError("the input is not UTF-8 text: type moves such as (move 2 5 3 5), or help") from None
    except _Quit:
        print("game abandoned")
        return 0


def hint(game: Game) -> str:
    """One line telling a person how to type moves in ``game``."""
    short = f"type {game.shorthand_help}, or KIF text" if game.shorthand_help else "type moves as KIF text"
    return short + _HINT_TAIL


def play(game: Game, players: dict[str, Agent | None]) -> int:
    """Play one match in the terminal: ``None`` players are people typing on stdin.

    Raises EOFError at the end of input and _Quit when a person types quit.
    """
    print(f"{game.name}: {game.description}")
    print("players: " + ", ".join(f"{role} {HUMAN if p is None else repr(p)}" for role, p in players.items()))
    if any(p is None for p in players.values()):
        print(hint(game))
    for role, agent in players.items():
        if agent is not None:
            agent.start(game, role)
    queued: dict[str, list[Move]] = {role: [] for role in game.roles}
    state = game.initial_state()
    step = 0
    while not game.is_terminal(state):
        print()
        print(state)
        joint: dict[str, Move] = {}
        for role, agent in players.items():
            if agent is None:
                joint[role] = _human_move(game, state, role, queued[role])
        for role, agent in players.items():
            if agent is not None:
                joint[role] = agent.select_move(state)
        step += 1
        print(f"move {step}: " + ", ".join(f"{role} {joint[role]}" for role in game.roles))
        state = game.next_state(state, [joint[role] for role in game.roles])
    print()
    print(state)
    goals = game.goals(state)
    print("game over: " + ", ".join(f"{role} {g}" for role, g in zip(game.roles, goals, strict=True)))
    for agent in players.values():
        if agent is not None:
            agent.stop(state, goals)
    return 0


def _is_noop_only(legal: Sequence[Move]) -> bool:
    return len(legal) == 1 and legal[0].text == "noop"


def _human_move(game: Game, state: State, role: str, queue: list[Move]) -> Move:
    """The move a person makes for ``role``: forced noop, a queued follow-up, or what they type."""
    legal = game.legal_moves(state, role)
    if _is_noop_only(legal):
        return legal[0]
    if queue:
        move = queue.pop(0)
        if move in legal:
            print(f"{role}> {move}   (entered before)")
            return move
        print(f"  the entered follow-up {move} is not legal now; enter {role}'s move")
        queue.clear()
    ordered = sorted(legal)
    while True:
        text = input(f"{role}> ")
        if not sys.stdin.isatty():
            print(text)  # echo piped input, so that the transcript reads like a session
        text = text.strip()
        if not text:
            continue
        word = text.lower()
        if word in ("help", "?"):
            print(numbered(ordered))
            continue
        if word in ("quit", "exit"):
            raise _Quit
        try:
            moves = parse_entry(game, state, role, text, ordered)
        except IllegalMoveError as exc:  # the message lists legal moves
            print(f"  {exc}")
            continue
        except GGPError as exc:
            print(f"  {exc}; type help to list the legal moves")
            continue
        queue[:] = moves[1:]
        return moves[0]


def numbered(moves: Sequence[Move], width: int = 100) -> str:
    """The moves numbered from 1, in columns."""
    items = [f"{i:>3}. {m}" for i, m in enumerate(moves, 1)]
    cell = max((len(s) for s in items), default=0) + 2
    per_line = max(1, width // cell) if cell else 1
    lines = []
    for i in range(0, len(items), per_line):
        lines.append("".join(s.ljust(cell) for s in items[i : i + per_line]).rstrip())
    return "\n".join(lines)


def parse_entry(game: Game, state: State, role: str, text: str, ordered: Sequence[Move]) -> list[Move]:
    """The moves a person's entry stands for: a number from the help list, KIF text or the short form.

    Returns the moves of ``role`` for one or more successive steps, the first
    legal in ``state``; raises a :class:`~ggp.GGPError` saying why otherwise.
    """
    if text.isdigit():
        k = int(text)
        if not 1 <= k <= len(ordered):
            raise MoveSyntaxError(f"there is no move number {k}: {role} has {len(ordered)} legal moves")
        return [ordered[k - 1]]
    try:
        moves = [game.parse_move(text)]
    except MoveSyntaxError as kif_error:
        try:
            moves = game.shorthand(state, role, text)
        except MoveSyntaxError as short_error:
            raise (kif_error if text.startswith("(") else short_error) from None
        if not moves:
            raise MoveSyntaxError(f"{text!r} stands for no move") from None
    if moves[0] not in ordered:
        raise illegal_move_error(game, state, role, moves[0])
    _check_follow_ups(game, state, role, moves)
    return moves


def _check_follow_ups(game: Game, state: State, role: str, moves: list[Move]) -> None:
    """Check the follow-up moves of a multi-step entry (``d1-d5/d8``) as far as they can be foreseen.

    They can while every other role has a single legal move (turn-based play)
    and ``role`` moves in each of the next states; otherwise the follow-ups are
    checked when they are due.
    """
    current = state
    for before, after in itertools.pairwise(moves):
        others = {r: game.legal_moves(current, r) for r in game.roles if r != role}
        if any(len(ms) != 1 for ms in others.values()):
            return
        joint = [before if r == role else others[r][0] for r in game.roles]
        current = game.next_state(current, joint)
        if game.is_terminal(current):
            raise MoveSyntaxError(f"the game ends after {before}, so {after} cannot follow")
        legal = game.legal_moves(current, role)
        if _is_noop_only(legal):
            return
        if after not in legal:
            raise illegal_move_error(game, current, role, after, f"after {before}")


# --- match, tournament, replay (ggp.match) -----------------------------------------------------------
def cmd_match(args: argparse.Namespace) -> int:
    from ggp.match.commands import match_command

    return match_command(args.game, args.options)


def cmd_tournament(args: argparse.Namespace) -> int:
    from ggp.match.commands import tournament_command

    return tournament_command(args)


def cmd_replay(args: argparse.Namespace) -> int:
    from ggp.match.commands import replay_command

    return replay_command(args.file, step=args.step, final=args.final)


# --- serve, host (ggp.protocol) ----------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    from ggp.protocol.commands import serve_command

    return serve_command(args)


def cmd_host(args: argparse.Namespace) -> int:
    from ggp.protocol.commands import host_command

    return host_command(args)


if __name__ == "__main__":
    sys.exit(main())
