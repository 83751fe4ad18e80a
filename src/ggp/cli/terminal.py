"""The game in the terminal: the board, people typing moves (KIF, a game's short notation or a number) and agents.

:func:`play` runs one match (``ggp play``); :func:`parse_entry` reads what a
person types, including several moves at once (``d1-d5/d8``, checked as far
as they can be foreseen).
"""

from __future__ import annotations

import itertools
import random
import sys
from collections.abc import Sequence

from ..agents import Agent
from ..core.errors import GGPError, IllegalMoveError, MoveSyntaxError
from ..core.game import Game, Move, State, illegal_move_error
from ..match.calls import Caller, Fault
from ..match.loop import Steps
from .common import HUMAN

_HINT_TAIL = "; help or ? lists the legal moves (a number picks one), quit leaves"


class Quit(Exception):
    """The player typed quit."""


def hint(game: Game) -> str:
    """One line telling a person how to type moves in ``game``."""
    short = f"type {game.shorthand_help}, or KIF text" if game.shorthand_help else "type moves as KIF text"
    return short + _HINT_TAIL


def play(game: Game, players: dict[str, Agent | None], rng: random.Random | None = None) -> int:
    """Play one match in the terminal: ``None`` players are people typing on stdin.

    Agents are called as the referee calls them (:class:`ggp.match.calls.Caller`),
    without a clock: one that raises or answers with something that is not a
    legal move gets a random legal move (from ``rng``) played for it, and the
    fault is printed. Raises EOFError at the end of input and Quit when a
    person types quit.
    """
    rng = rng or random.Random()
    caller = Caller()
    print(f"{game.name}: {game.description}")
    print("players: " + ", ".join(f"{role} {HUMAN if p is None else repr(p)}" for role, p in players.items()))
    if any(p is None for p in players.values()):
        print(hint(game))
    for role, agent in players.items():
        if agent is not None:
            started = caller.call(role, "start", agent.start, game, role, clock=None, phase="start")
            _tell(started.fault)
    queued: dict[str, list[Move]] = {role: [] for role in game.roles}
    steps = Steps(game, rng)
    while not steps.over:
        print()
        print(steps.state)
        for role, agent in players.items():
            if agent is None:
                steps.take(role, _human_move(game, steps.state, role, queued[role]))
        for role, agent in players.items():
            if agent is not None:
                steps.ask(caller, agent, role, clock=None)
                for fault in steps.faults(role):
                    _tell(fault)
        record = steps.play()
        print(
            f"move {record.step}: " + ", ".join(f"{role} {m}" for role, m in zip(game.roles, record.joint, strict=True))
        )
    state = steps.state
    print()
    print(state)
    goals = game.goals(state)
    print("game over: " + ", ".join(f"{role} {g}" for role, g in zip(game.roles, goals, strict=True)))
    for role, agent in players.items():
        if agent is not None:
            _tell(caller.call(role, "stop", agent.stop, state, goals, clock=None, phase="stop").fault)
    return 0


def _tell(fault: Fault | None) -> None:
    if fault is not None:
        print(f"  agent fault: {fault.describe()}")


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
            raise Quit
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
