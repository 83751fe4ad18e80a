"""A player's moves while its rules compile: a random legal move from the top-down prover, in time.

Compiling a rule sheet (numba, on a cold cache) can take minutes, longer than a play clock; the prover is
pure Python and needs no compiling, so a PLAY that comes meanwhile still gets a legal move.
"""

from __future__ import annotations

import threading

from ..gdl.sheet import bounded
from ..match.clock import AnyOf
from .player_match import PlayerMatch
from .recognize import sheet_text
from .warmup import Log


def early_move(match: PlayerMatch, deadline: float, say: Log) -> str | None:
    """A random legal move from the top-down prover while the rules compile (None: none by ``deadline``).

    The prover (pure Python) needs no compiling, so a first PLAY on a cold numba cache gets a legal
    move in time; it is asked in a thread of its own, and the compiled game is taken instead if it
    gets ready first.
    """
    joints = list(match.pending)
    found: list[str] = []
    done = threading.Event()

    def ask() -> None:
        try:
            with match.prover_lock, bounded(deadline=deadline, cancel=match.cancelled):
                if match.prover is None:
                    from ..gdl.prover_game import ProverGame

                    match.prover = ProverGame(sheet_text(match.rules), "early")
                game = match.prover
                state = game.initial_state()
                for joint in joints:
                    state = game.next_state(state, [game.move_from_term(m) for m in joint])
                role = next(r for r in game.roles if r.lower() == match.role.lower())
                legal = game.legal_moves(state, role)
                if legal and not game.is_terminal(state):
                    found.append(str(legal[match.rng.randrange(len(legal))]))
        except Exception as exc:  # a move of the compiled game comes later, or NIL: never a failure
            say(f"PLAY {match.match_id}: the prover has no move: {type(exc).__name__}: {exc}")
        finally:
            done.set()

    threading.Thread(target=ask, name="ggp-player-prover", daemon=True).start()
    either = AnyOf(done, match.game_ready)  # the compiled game may win the race
    match.clock.wait(either, deadline - match.clock.now())
    return found[0] if found else None


__all__ = ["early_move"]
