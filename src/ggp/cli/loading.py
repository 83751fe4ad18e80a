"""Loading a game for a command: a rule sheet that takes a while shows what it is doing on stderr."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from ..core.game import Game
from ..registry import game_names, load

#: Seconds before a load says what it is doing, then between two reports of the same stage.
FIRST_REPORT = 1.0
REPEAT_REPORT = 5.0


def load_game(ref: str, err: TextIO | None = None, first: float = FIRST_REPORT) -> Game:
    """The game ``ref`` names (:func:`ggp.load`); a rule sheet still loading after ``first`` seconds reports
    its stage (parsing, grounding, building the propnet, compiling) and the time spent, on ``err`` (stderr).
    """
    if ref.strip().lower() in game_names():
        return load(ref)
    from ..gdl.game import loading_stage

    stream = err if err is not None else sys.stderr
    done = threading.Event()
    worker = threading.get_ident()
    began = time.monotonic()

    def watch() -> None:
        said: tuple[str | None, float] = (None, 0.0)
        if done.wait(first):
            return
        while not done.is_set():
            stage = loading_stage(worker)
            now = time.monotonic()
            if stage is not None and (stage != said[0] or now - said[1] >= REPEAT_REPORT):
                try:
                    print(f"loading {ref}: {stage} ({now - began:.0f} s so far)", file=stream, flush=True)
                except (OSError, ValueError):  # stderr closed: the load goes on quietly
                    return
                said = (stage, now)
            done.wait(0.2)

    watcher = threading.Thread(target=watch, name="ggp-load-progress", daemon=True)
    watcher.start()
    try:
        return load(ref)
    finally:
        done.set()
        watcher.join()
