"""A tournament's worker process: plays the matches the runner sends, one at a time, and reports each.

Messages to the runner: ``ready``, ``started``, ``step`` (a sign of life),
``done`` with the record, ``error``, ``retire`` (a runaway agent thread is
left: kill this process) and ``fatal``.
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection as mpc
import os
import signal
import traceback
from typing import Any

from ..warm import warm_up


def worker_main(conn: mpc.Connection, modules: list[str]) -> None:
    """A worker process: play the matches the runner sends until told to quit (or the runner is gone)."""
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    try:
        from ..plugins import load_agent_modules

        load_agent_modules(modules)
        conn.send(("ready", os.getpid()))
        while True:
            try:
                message = conn.recv()
            except EOFError:
                return
            if message[0] != "run":
                return
            task: dict[str, Any] = message[1]
            runaway = _play_task(conn, task)
            if runaway:
                conn.send(("retire", f"{runaway} runaway agent thread(s) left running"))
                return
    except (BrokenPipeError, EOFError, ConnectionResetError):
        return  # the runner is gone
    except BaseException as exc:
        with contextlib.suppress(OSError):
            conn.send(("fatal", f"{type(exc).__name__}: {exc}"))
        raise


def _play_task(conn: mpc.Connection, task: dict[str, Any]) -> int:
    from ...registry import load
    from ..series import play_one

    match_id = task["id"]
    conn.send(("started", match_id))
    try:
        warm_up([task["game"]])  # once per process: load the game's kernels before the clocks run
        record, referee = play_one(
            load(task["game"]),
            task["specs"],
            seed=task["seed"],
            start_clock=task["start_clock"],
            play_clock=task["play_clock"],
            grace=task["grace"],
            on_step=lambda step, joint: conn.send(("step", match_id, step)),
        )
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception as exc:
        conn.send(("error", match_id, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
        return 0
    conn.send(("done", match_id, record.to_json(compact=True)))
    return len(referee.runaway_threads())
