"""The GGP player's own cost per PLAY: from the message received to the agent's search starting, and from its
answer to the reply sent.

    python bench/play_overhead.py [--plays 300] [--games wallmaze amazons_8x8 tictactoe]

Runs :class:`~ggp.protocol.PlayerService` in this process (no sockets: the wire
is not what is measured) with an agent that notes when it is asked and when it
answers (a uniformly random legal move at once). A game manager of the bench's
own plays whole matches against it, choosing the other roles' moves at random,
and sends each PLAY with the previous joint move, as a game manager does. Prints
the medians and 95th percentiles, in microseconds, per game: ``in`` is
handle() called to select_move entered (reading the message, applying the
joint move, listing moves), ``out`` is select_move returned to handle()
returning (judging the answer, the reply). Built-in games are sent as their own
rule sheets (recognised and played natively); ``tictactoe`` is the package's
sample sheet, played on its compiled network.

To compare two checkouts, run it with each one's ``src`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path
from typing import ClassVar

import ggp
from ggp.agents import AGENTS, Agent
from ggp.core.game import Move, State
from ggp.gdl import rules_text
from ggp.protocol import PlayerConfig, PlayerService


class StampAgent(Agent):
    """A random agent that notes when it is asked and when it answers."""

    stamps: ClassVar[list[tuple[float, float]]] = []

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        asked = time.perf_counter()
        moves = self.game.legal_moves(state, self.role)
        move = moves[random.randrange(len(moves))]
        StampAgent.stamps.append((asked, time.perf_counter()))
        return move


def sheet_text(name: str) -> str:
    own = Path(ggp.gdl.__file__).with_name("tictactoe.kif")
    text = own.read_text() if name == "tictactoe" else rules_text(name)
    return "(" + " ".join(line.split(";")[0] for line in text.splitlines()) + ")"


def measure(name: str, plays: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """``plays`` PLAYs of ``name`` against a random game manager: the in and out overheads, in seconds."""
    rules = sheet_text(name)
    ins: list[float] = []
    outs: list[float] = []
    matches = 0
    while len(ins) < plays:
        matches += 1
        service = PlayerService(PlayerConfig(spec="stamp", name="bench", seed=matches))
        game_roles = ("xplayer", "oplayer") if name == "tictactoe" else ggp.load(name).roles
        role = game_roles[matches % len(game_roles)]
        mid = f"m{matches}"
        assert service.handle(f"(START {mid} {role} {rules} 60 30)").body == "ready"
        match = service.match
        assert match is not None and match.agent_ready.wait(60)
        previous = "nil"
        while len(ins) < plays:
            StampAgent.stamps.clear()
            began = time.perf_counter()
            reply = service.handle(f"(PLAY {mid} {previous})")
            ended = time.perf_counter()
            if reply.status != 200 or not StampAgent.stamps:
                break
            asked, answered = StampAgent.stamps[-1]
            ins.append(asked - began)
            outs.append(ended - answered)
            game, state = match.game, match.state
            assert game is not None and state is not None
            joint = [reply.body if r == match.role else str(rng.choice(game.legal_moves(state, r))) for r in game.roles]
            after = game.next_state(state, joint)
            previous = f"({' '.join(joint)})"
            if game.is_terminal(after):
                break
        service.handle(f"(ABORT {mid})")
    return ins, outs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plays", type=int, default=300, help="PLAYs per game (default 300)")
    ap.add_argument("--games", nargs="+", default=["wallmaze", "amazons_8x8", "tictactoe"])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    AGENTS["stamp"] = StampAgent
    rng = random.Random(args.seed)
    print(f"ggp {ggp.__version__} from {Path(ggp.__file__).parent}")
    print(
        f"{'game':<14} {'plays':>6} {'in median':>10} {'in p95':>8} {'out median':>11} {'out p95':>8}  (microseconds)"
    )
    for name in args.games:
        measure(name, 5, rng)  # the first PLAYs compile and fill caches
        ins, outs = measure(name, args.plays, rng)
        p95 = lambda xs: sorted(xs)[int(0.95 * (len(xs) - 1))]  # noqa: E731
        print(
            f"{name:<14} {len(ins):>6} {statistics.median(ins) * 1e6:>10.0f} {p95(ins) * 1e6:>8.0f} "
            f"{statistics.median(outs) * 1e6:>11.0f} {p95(outs) * 1e6:>8.0f}"
        )


if __name__ == "__main__":
    main()
