"""The plain-Python MCTS as the action-core and general-player issues found it, run as a peer in the same run.

When those issues were written, ``mcts`` on a rule sheet was a decoupled UCT in plain Python over the
Game API of the GDL reasoner of the time (commit :data:`COMMIT`, the last of the stage before them). Both
the search and the reasoner under it have changed since, so "today's plain-Python MCTS" is not in this
package any more: this module takes that commit's ``src`` out of the repository's history (``git
archive``, kept in ggp's cache folder) and runs its own ``_PlainUCT`` in a child process, one request
at a time, so that its figures interleave with the in-process ones like any peer's.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from ..core.cache import cache_folder

#: The commit the issues were written against (the stage began from it).
COMMIT = "5e7120f8d63fc38b6b8088795bc3264dcf94e990"

#: The child: load sheets on request, run simulations from their initial state, say how long they took.
_CHILD = r"""
import json, random, sys, time
import ggp.gdl
from ggp.agents.mcts import _PlainUCT

games = {}
for line in sys.stdin:
    ask = json.loads(line)
    if "text" in ask:
        game = ggp.gdl.from_text(ask["text"], ask["name"])
        games[ask["name"]] = (game, game.initial_state())
        reply = {"ok": True}
    else:
        game, start = games[ask["name"]]
        began = time.perf_counter()
        _PlainUCT(game, ask["c"], random.Random(ask["seed"])).best(start, game.roles[0], ask["sims"], None)
        reply = {"seconds": time.perf_counter() - began}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"""


class PlainThen:
    """The issue-time plain-Python UCT in a child process (a context manager): ``load(name, text)`` a rule
    sheet once, then ``run(name, sims=100, c=1.4, seed=1)`` says how many seconds that many simulations took
    from its initial state. ``ggp bench --only gdlmcts`` runs it beside the compiled search."""

    def __init__(self) -> None:
        self.source = checkout()
        env = dict(os.environ, PYTHONPATH=str(self.source / "src"), NUMBA_CACHE_DIR=str(self.source / "numba"))
        self.child = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=self.source,
        )

    def _ask(self, request: dict[str, object]) -> dict[str, float]:
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write(json.dumps(request) + "\n")
        self.child.stdin.flush()
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError(f"the plain-Python UCT of {COMMIT} stopped (exit code {self.child.wait()})")
        reply: dict[str, float] = json.loads(line)
        return reply

    def load(self, name: str, text: str) -> None:
        self._ask({"name": name, "text": text})

    def run(self, name: str, sims: int, c: float, seed: int) -> float:
        """Seconds (wall clock, in the child) for ``sims`` simulations from the initial state of ``name``."""
        return self._ask({"name": name, "sims": sims, "c": c, "seed": seed})["seconds"]

    def close(self) -> None:
        if self.child.stdin is not None:
            self.child.stdin.close()
        self.child.wait(timeout=30)

    def __enter__(self) -> PlainThen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def checkout() -> Path:
    """:data:`COMMIT`'s ``src`` folder, taken from the repository's history once and kept in the cache folder.

    Raises ``RuntimeError`` when this package is not in a git clone that has the commit.
    """
    target = cache_folder() / f"then-{COMMIT[:12]}"
    if (target / "src" / "ggp" / "__init__.py").is_file():
        return target
    repo = Path(__file__).resolve().parents[3]
    try:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", COMMIT, "src"], capture_output=True, check=True, timeout=120
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"commit {COMMIT} is not at hand (a git clone of ggp with its history is): {exc}") from None
    scratch = target.with_name(f"{target.name}.{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(scratch, filter="data")
    if target.exists() and not (target / "src" / "ggp" / "__init__.py").is_file():  # left half made: replaced
        shutil.rmtree(target, ignore_errors=True)
    try:
        scratch.rename(target)
    except OSError:  # another process put it there first
        shutil.rmtree(scratch, ignore_errors=True)
    return target
