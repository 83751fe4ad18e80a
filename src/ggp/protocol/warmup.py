"""The warm-up: compiling, in a child process, what a first match needs, so that it is played by the agent.

numba compiles on first use and keeps the result on disk; on a bare machine an agent's search compiles for
minutes. A player (``ggp serve``) and the web app start a :class:`WarmUp` at launch: a child process that runs
:func:`warm_steps` (the GDL reasoner, the agent on sheets of one to four roles, each built-in game),
saying ``warm: K/N WHAT (S s) [KEY]`` after each. The parent reads those lines: a player answers INFO
``busy`` until the :data:`READY_STEP` is done, and a START waits for the steps its sheet needs
(:func:`sheet_steps`).

numba compiles on one core, so where the machine has two or more the child hands a share of the steps to a
helper process of its own (:func:`split_steps`: the built-in games in one, the rule sheets in the other) and
numbers both shares' lines as one count; on a bare 2-core machine one process took 13.6 minutes to be ready.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import re
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence

from ..agents import Agent, Limit, make_agent
from ..agents.mcts import SHAPE_RAVE, MCTSAgent
from ..core.errors import GGPError
from ..core.game import Game, State
from ..core.kif import parse_terms
from .recognize import _builtin_sheets, gdl_game

Log = Callable[[str], None]

#: The warm-up step after which a player is ready: INFO answers available (see :func:`warm_steps`).
READY_STEP = "ready"
# A warm-up step's line: ``warm: K/N WHAT (S s) [KEY]``.
_WARM_STEP = re.compile(r"warm: (\d+/\d+) .*\[([^\]\s]+)\]$")
# A helper's line for a step of its share done (see :func:`warm_main`): ``step INDEX SECONDS``.
_SHARE_STEP = re.compile(r"step (\d+) (\d+(?:\.\d+)?)$")
#: Most processes a warm-up compiles in (itself and its helpers; see :func:`warm_workers`).
MAX_WARM_WORKERS = 2

#: A puzzle of two steps and two moves a step: compiling it loads the reasoner's compiled code (see
#: PlayerService.warm), and it gives the puzzle search's solver something to walk (a single move, or an end
#: after one step, would leave it nothing, and so nothing compiled).
_TINY = (
    "(role p) (init (at 0)) (<= (legal p go) (true (at ?x))) (<= (legal p wait) (true (at ?x))) "
    "(<= (next (at 1)) (true (at 0))) (<= (next (at 2)) (true (at 1))) (<= (next won) (does p go) (true (at 1))) "
    "(<= terminal (true (at 2))) (<= (goal p 100) (true won)) (<= (goal p 0) (not (true won)))"
)


def _at_once(roles: int) -> str:
    """``roles`` roles, two moves each at once, then the end: what a game of simultaneous moves compiles."""
    names = " ".join(f"(role r{i})" for i in range(roles))
    return (
        f"{names} (init s0) (<= (legal ?r x) (role ?r) (true s0)) (<= (legal ?r y) (role ?r) (true s0)) "
        "(<= (next s1) (true s0)) (<= terminal (true s1)) (<= (goal ?r 50) (role ?r))"
    )


def _in_turn(roles: int) -> str:
    """``roles`` roles taking turns for three moves, a point for each x: what only a game of turns compiles (the
    exhaustive solver, decisive moves: 3-4 s that cost a first knightThrough its opening moves, and a first
    chineseCheckers3 five of them)."""
    names = " ".join(f"(role r{i}) (after r{i} r{(i + 1) % roles})" for i in range(roles))
    return (
        f"{names} (init (control r0)) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3) "
        "(<= (legal ?r x) (true (control ?r))) (<= (legal ?r y) (true (control ?r))) "
        "(<= (legal ?r noop) (role ?r) (not (true (control ?r)))) "
        "(<= (next (control ?n)) (true (control ?r)) (after ?r ?n)) "
        "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n)) "
        "(<= (next (scored ?r)) (does ?r x)) (<= (next (scored ?r)) (true (scored ?r))) "
        "(<= terminal (true (step 3))) "
        "(<= (goal ?r 100) (role ?r) (true (scored ?r))) (<= (goal ?r 0) (role ?r) (not (true (scored ?r))))"
    )


# Two roles taking turns for three moves, a point for each x: playing it compiles what only a game of turns
# runs (the exhaustive solver, decisive moves), 3-4 s that cost a first knightThrough its opening moves.
_TURNS = (
    "(role a) (role b) (init (control a)) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3) "
    "(<= (legal ?r x) (true (control ?r))) (<= (legal ?r y) (true (control ?r))) "
    "(<= (legal a noop) (true (control b))) (<= (legal b noop) (true (control a))) "
    "(<= (next (control b)) (true (control a))) (<= (next (control a)) (true (control b))) "
    "(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n)) "
    "(<= (next (scored ?r)) (does ?r x)) (<= (next (scored ?r)) (true (scored ?r))) "
    "(<= terminal (true (step 3))) "
    "(<= (goal ?r 100) (role ?r) (true (scored ?r))) (<= (goal ?r 0) (role ?r) (not (true (scored ?r))))"
)


class WarmUp:
    """A warm-up child process (:meth:`ggp.protocol.player.PlayerService.warm`, run by :func:`warm_main`) and what it has
    done so far: its steps' keys (see :func:`warm_steps`), read from its progress lines as they come.

    ``spec`` is the agent spec to warm, or several (the web app's agents); ``log`` gets the progress lines;
    ``finished`` (made here unless given) is set when the child has ended and said how it went.
    ``games_first``: the built-in games before rule sheets (the web app's order). ``nice``: the child's
    niceness (the web app's warm-up yields to the agents of games being played).
    """

    def __init__(
        self,
        spec: str | Sequence[str],
        log: Log | None = None,
        *,
        finished: threading.Event | None = None,
        games_first: bool = False,
        nice: int = 0,
    ) -> None:
        specs = [spec] if isinstance(spec, str) else list(spec)
        self.finished = finished if finished is not None else threading.Event()
        self.done: set[str] = set()
        #: How far it is: ``K/N``, the steps done of all.
        self.progress = f"0/{len(warm_steps(specs, games_first))}"
        self._cond = threading.Condition()
        self._log = log
        self.began = time.monotonic()
        # Its stdin is a pipe from this process: when this process ends, however it ends, the child sees
        # the pipe close and ends too (a warm-up may take minutes), and so does its helper, whose stdin is
        # a pipe from the child.
        self.process = _start_warm_process(specs, games_first, nice, None, subprocess.PIPE)
        threading.Thread(target=self._report, name="ggp-warm-up", daemon=True).start()

    def _say(self, text: str) -> None:
        if self._log is not None:
            with contextlib.suppress(Exception):  # a broken log must not stop the reading of progress
                self._log(text)

    def _report(self) -> None:
        child = self.process
        assert child.stderr is not None
        tail = "no message"
        for raw in child.stderr:
            line = raw.decode(errors="replace").rstrip()
            if not line:
                continue
            tail = line
            step = _WARM_STEP.match(line)
            if step is None and line.startswith("warm: "):
                self._say(line)  # how it goes about it (two processes, a helper's pid)
            if step is not None:
                self._say(f"{line.rpartition(' [')[0]}, {time.monotonic() - self.began:.0f} s since launch")
                with self._cond:
                    self.done.add(step.group(2))
                    self.progress = step.group(1)
                    self._cond.notify_all()
        child.wait()
        if child.returncode == 0:
            self._say(
                "warm: the engines and the agent's compiled code are ready (compiled in a child process "
                f"in {time.monotonic() - self.began:.0f} s)"
            )
        else:
            self._say(f"warm: the warm-up process failed ({child.returncode}): {tail}")
        with self._cond:
            self.finished.set()
            self._cond.notify_all()

    def has(self, keys: set[str]) -> bool:
        """Whether the steps ``keys`` are done, or the warm-up has ended (nothing more will be)."""
        with self._cond:
            return keys <= self.done or self.finished.is_set()

    def missing(self, keys: set[str]) -> set[str]:
        with self._cond:
            return keys - self.done

    def wait_for(self, keys: set[str], seconds: float, cancel: threading.Event | None = None) -> bool:
        """Wait at most ``seconds`` (or till ``cancel`` is set) for the steps ``keys``; whether they are done."""
        end = time.monotonic() + seconds
        with self._cond:
            while not (keys <= self.done or self.finished.is_set()):
                left = end - time.monotonic()
                if left <= 0 or (cancel is not None and cancel.is_set()):
                    break
                self._cond.wait(min(left, 1.0))  # ``cancel`` notifies nothing: looked at each second
            return keys <= self.done


def prime(game: Game, state: State) -> None:
    """Call each of ``game``'s entry points once, so numba compiles (or loads) them now.

    A PLAY that comes while the agent's search is still compiling answers with a legal move of the game;
    were one of the game's own functions compiled only then, it would wait for numba's compiler lock, which
    that compile holds for as long as it takes (tens of seconds on a cold cache), past the play clock.
    """
    if getattr(game, "engine", None) == "prover":
        # Nothing to compile (pure Python), and a sheet too large to ground may have first answers large
        # enough that building them, collecting and freeing them holds the interpreter for seconds.
        return
    if game.is_terminal(state):
        game.goals(state)
        return
    legal = [game.legal_moves(state, role) for role in game.roles]
    if not all(legal):  # a role without a move: the game cannot go on, and PLAY will say so
        return
    after = game.next_state(state, [moves[0] for moves in legal])
    game.is_terminal(after)
    with contextlib.suppress(GGPError):  # a sheet may leave goals undefined before the end
        game.goals(after)


def warm_steps(specs: Sequence[str], games_first: bool = False) -> list[tuple[str, str, Callable[[], None]]]:
    """The warm-up's steps for the agents ``specs`` (each where it can play): (key, what it compiles, the step), in the order a first match
    needs them (see :meth:`ggp.protocol.player.PlayerService.warm`). ``roles1`` to ``roles4`` cover every rule sheet
    of that many roles: the compiled search is the same for all of them."""
    from ..registry import game_names, load

    def reasoner() -> None:
        tiny = gdl_game(parse_terms(_TINY))
        s = tiny.initial_state()
        tiny.goals(tiny.next_state(s, [tiny.legal_moves(s, "p")[0]]))

    def sheets(*texts: str) -> Callable[[], None]:
        # The agent's own compiled code for rule sheets, played as in a match: started with clocks and asked
        # for a move (a search compiles for tens of seconds the first time, which would cost a first match
        # its start clock and first moves).
        def run() -> None:
            from ..gdl.lanes import LANES

            for text in texts:
                game = gdl_game(parse_terms(text))
                prime(game, game.initial_state())
                solving(game)
                for spec in specs:
                    # both ways of scoring leaves, whatever the tiny sheet's own measure picks: a sheet whose
                    # rollouts are not batched (quartoSuicide) otherwise compiled its search in a first match,
                    # 52 s of a 30 s start clock, and 9 moves were played at random
                    for twin in (with_batch(game, 1), with_batch(game, LANES)):
                        # (an agent that cannot play these sheets has nothing to warm)
                        with contextlib.suppress(Exception):
                            play_a_move(make_agent(spec), twin)
                    with contextlib.suppress(Exception):
                        agent = make_agent(spec)
                        if len(game.roles) == 2 and isinstance(agent, MCTSAgent) and agent.rave != 0.0:
                            # RAVE's search, where the spec asks for it (or for it by the game's shape, which no
                            # tiny sheet suits): a first match would otherwise compile it
                            agent.rave = agent.rave or SHAPE_RAVE
                            play_a_move(agent, with_batch(game, LANES))

        return run

    def recognising() -> None:
        # what recognising a sheet as a built-in game runs: each game's first states and their facts
        _builtin_sheets()
        for name in game_names():
            game = load(name)
            state = game.initial_state()
            game.state_facts(state)
            prime(game, state)

    def builtin(name: str) -> Callable[[], None]:
        def run() -> None:
            game = load(name)
            prime(game, game.initial_state())
            for spec in specs:
                with contextlib.suppress(Exception):  # the agent's search compiled for this game (minutes, once)
                    play_a_move(make_agent(spec), game)

        return run

    sheet_steps: list[tuple[str, str, Callable[[], None]]] = [
        ("reasoner", "the GDL reasoner", reasoner),
        ("roles2", "the agent on rule sheets of two roles", sheets(_at_once(2), _in_turn(2))),
        ("recognise", "the built-in games' rules (to recognise them in a sheet of two roles)", recognising),
        ("roles1", "the agent on rule sheets of one role", sheets(_TINY)),
    ]
    game_steps = [(f"game:{name}", f"{name} and the agent on it", builtin(name)) for name in game_names()]
    # ready: INFO answers available from here on; sheets of three or four roles are rarer, and compiled meanwhile
    ready: list[tuple[str, str, Callable[[], None]]] = [
        (READY_STEP, "ready for every built-in game and sheets of one or two roles", _nothing)
    ]
    last = [
        ("roles3", "the agent on rule sheets of three roles", sheets(_at_once(3), _in_turn(3))),
        ("roles4", "the agent on rule sheets of four roles", sheets(_at_once(4), _in_turn(4))),
    ]
    return (game_steps + sheet_steps if games_first else sheet_steps + game_steps) + ready + last


def _nothing() -> None:
    pass


def sheet_steps(roles: int) -> set[str]:
    """The warm-up steps (see :func:`warm_steps`) a rule sheet of ``roles`` roles needs done."""
    if roles == 2:  # the built-in games have two roles: a sheet of two is compared with them
        return {"reasoner", "roles2", "recognise"}
    return {"reasoner", *([f"roles{roles}"] if roles <= 4 else [])}


Steps = list[tuple[str, str, Callable[[], None]]]


def run_warm_steps(steps: Steps, say: Log) -> None:
    """Run the warm-up's steps, saying ``warm: K/N WHAT (S s) [KEY]`` after each."""
    for i, (key, what, step) in enumerate(steps, 1):
        say(f"warm: {i}/{len(steps)} {what} ({_timed(step):.1f} s) [{key}]")


def _timed(step: Callable[[], None]) -> float:
    began = time.monotonic()
    with contextlib.suppress(Exception):  # warming only saves time: what fails here fails again later
        step()
    return time.monotonic() - began


def warm_workers() -> int:
    """How many processes a warm-up compiles in: one per core this process may run on, at most
    :data:`MAX_WARM_WORKERS` (numba compiles a function on one core; more shares would split the steps finer
    than they are long)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WARM_WORKERS, cores))


def split_steps(steps: Steps) -> tuple[list[int], list[int]]:
    """The warm-up's steps (indices into ``steps``, as :func:`warm_steps` gives them) in two shares run side by
    side, so that what the two compile overlaps little: the reasoner and the sheets of two and three roles in
    one; in the other the built-in games (and recognising them), then the sheets of one and four roles, whose
    search finds the reasoner's code compiled by then (cold, on two cores: the reasoner 130 s, two roles 200 s
    and more; the games 190 s in all). The ready step is in neither: it is done when every step before it is."""
    keys = [key for key, _, _ in steps]
    later = ("recognise", "roles1", "roles4")
    games = [i for i, key in enumerate(keys) if key.startswith("game:") or key in later]
    sheets = [i for i, key in enumerate(keys) if i not in games and key != READY_STEP]
    return sheets, games


def run_warm_steps_shared(steps: Steps, say: Log, helper: subprocess.Popen[bytes], mine: Sequence[int]) -> None:
    """Run the steps ``mine`` here while ``helper`` (a process :func:`warm_main` started on the rest) runs its
    share, saying one ``warm: K/N WHAT (S s) [KEY]`` line for each step either has done, K counting both,
    and the :data:`READY_STEP`'s line once every step before it is done. Returns when both shares are."""
    keys = [key for key, _, _ in steps]
    before_ready = set(keys[: keys.index(READY_STEP)]) if READY_STEP in keys else set(keys)
    done: set[str] = set()
    lock = threading.Lock()

    def finished(i: int, seconds: float) -> None:
        key, what, _ = steps[i]
        with lock:
            done.add(key)
            say(f"warm: {len(done)}/{len(steps)} {what} ({seconds:.1f} s) [{key}]")
            if READY_STEP in keys and READY_STEP not in done and before_ready <= done:
                done.add(READY_STEP)
                what = steps[keys.index(READY_STEP)][1]
                say(f"warm: {len(done)}/{len(steps)} {what} (0.0 s) [{READY_STEP}]")

    def relay() -> None:
        assert helper.stderr is not None
        for raw in helper.stderr:
            line = raw.decode(errors="replace").rstrip()
            got = _SHARE_STEP.match(line)
            if got is not None and int(got.group(1)) < len(steps):
                finished(int(got.group(1)), float(got.group(2)))
            elif line:
                say(line)  # a helper's traceback, say: passed on as the child's own

    reader = threading.Thread(target=relay, name="ggp-warm-helper", daemon=True)
    reader.start()
    for i in mine:
        finished(i, _timed(steps[i][2]))
    helper.wait()
    reader.join()
    if helper.returncode != 0:  # its steps are not done: the warm-up failed (and so nothing waits for them)
        missing = [key for key in keys if key not in done and key != READY_STEP]
        raise RuntimeError(f"the warm-up's helper process failed ({helper.returncode}); not done: {', '.join(missing)}")


def solving(game: Game) -> None:
    """Run the exhaustive solver a little on ``game``, so that its code compiles: in a warm-up match the tree
    proves a tiny sheet before the solver's thread takes its first step, and a first match's first move then
    compiled it (5 s idle, past a 2 s play clock). (A puzzle's solver, of one role, is compiled apart: without
    it here, a first puzzle's start clock compiled it, 10 s and more.)"""
    from ..agents.solver import DFSolver

    solver = DFSolver(game)
    solver.reset(game.initial_state())
    solver.run(64)


def with_batch(game: Game, batch: int) -> Game:
    """``game`` with its rollouts played ``batch`` at a time (1, or :data:`~ggp.gdl.lanes.LANES`), whatever its
    kernel measures (a large sheet's are batched, a tiny one's may be or not, by the machine's speed at the
    time): playing both twins compiles both versions of the search, either of which a first match may need
    and would otherwise compile in its start clock (10 s to 50 s, a START answered late, moves at random)."""
    kernel = getattr(game, "kernel", None)
    if kernel is None:
        return game
    twin = copy.copy(game)
    twin.kernel = dataclasses.replace(kernel, rollout_batch=lambda: batch)  # type: ignore[attr-defined]
    return twin


def play_a_move(agent: Agent, game: Game) -> None:
    """Start ``agent`` on ``game`` with clocks, ask it for a move and stop it, as a match would."""
    agent.start(game, game.roles[0], start_clock=0.3, play_clock=0.2)  # a short search: its code, compiled
    state = game.initial_state()
    move = agent.choose(state, Limit(time=0.2)).move
    # and a second move, where there is one: moving the tree's root down compiles what keeps its subtree
    joint = [move, *(game.legal_moves(state, r)[0] for r in game.roles[1:])]
    after = game.next_state(state, joint)
    if not game.is_terminal(after) and game.legal_moves(after, game.roles[0]):
        agent.choose(after, Limit(time=0.2))
        state = after
    agent.stop(state, [0] * len(game.roles))


def _start_warm_process(
    specs: Sequence[str], games_first: bool, nice: int, share: Sequence[int] | None, stderr: int
) -> subprocess.Popen[bytes]:
    """A warm-up process (:func:`warm_main`): the child of :class:`WarmUp` (``share`` None), or its helper on
    the steps ``share``. Its stdin is a pipe from this process, which it reads till it closes."""
    code = (
        "import sys; from ggp.protocol.warmup import warm_main; "
        "warm_main(sys.argv[4:], sys.argv[1] == '1', int(sys.argv[2]), "
        "None if sys.argv[3] == '-' else [int(i) for i in sys.argv[3].split(',') if i])"
    )
    which = "-" if share is None else ",".join(map(str, share))
    return subprocess.Popen(
        [sys.executable, "-c", code, "1" if games_first else "0", str(nice), which, *specs],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


def warm_main(
    specs: Sequence[str], games_first: bool = False, nice: int = 0, share: Sequence[int] | None = None
) -> None:
    """The warm-up child's body (:class:`WarmUp`): it ends when its parent does. With ``share`` (the steps'
    indices), a helper's: it runs those steps and says ``step INDEX SECONDS`` after each."""
    if nice:
        with contextlib.suppress(OSError, AttributeError):  # a speed-up for others only
            os.nice(nice)

    def orphaned() -> None:
        sys.stdin.buffer.read()  # returns when the parent's end of the pipe closes
        os._exit(3)

    threading.Thread(target=orphaned, name="ggp-warm-parent", daemon=True).start()
    code = 0
    try:
        steps = warm_steps(specs, games_first)
        if share is not None:
            for i in share:
                _to_stderr(f"step {i} {_timed(steps[i][2]):.1f}")
        elif warm_workers() > 1:
            mine, theirs = split_steps(steps)
            helper = _start_warm_process(specs, games_first, nice, theirs, subprocess.PIPE)
            _to_stderr(f"warm: compiling in two processes (a helper, pid {helper.pid}, with the built-in games)")
            run_warm_steps_shared(steps, _to_stderr, helper, mine)
        else:
            run_warm_steps(steps, _to_stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stderr.flush()
    os._exit(code)  # not a normal exit: the thread blocked on stdin would hold up the interpreter's shutdown


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


__all__ = [
    "READY_STEP",
    "WarmUp",
    "prime",
    "run_warm_steps",
    "run_warm_steps_shared",
    "sheet_steps",
    "split_steps",
    "warm_main",
    "warm_steps",
    "warm_workers",
]
