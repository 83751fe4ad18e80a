"""A CPU hog: busy Python loops, one process per core, beside a command (``make test-stress``).

    python tests/stress/hog.py [--per-core N] [--seconds S] [-- COMMAND ...]

With a command it starts the hog, runs the command, stops the hog and exits with the command's status.
Without one it hogs until ``--seconds`` pass or it is interrupted. Every spinning process stops by
itself when its time is up or when the process that started it is gone (checked ten times a second),
so a killed run leaves nothing behind. No dependency: the standard library only.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time


def spin(until: float, parent: int) -> None:
    """Burn one core until ``until`` (a ``time.monotonic`` value) or until ``parent`` is no longer our parent."""
    x = 0
    next_check = 0.0
    while True:
        for i in range(20_000):  # ~1 ms of pure-Python work between checks of the clock
            x = (x * 31 + i) & 0xFFFFFFFF
        now = time.monotonic()
        if now >= until:
            return
        if now >= next_check:
            if os.getppid() != parent:
                return
            next_check = now + 0.1


def start(processes: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    """``processes`` spinning children of this process, each stopping after ``seconds`` at the latest."""
    me = str(os.getpid())
    return [
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "--spin", str(seconds), me])
        for _ in range(processes)
    ]


def stop(hogs: list[subprocess.Popen[bytes]]) -> None:
    for p in hogs:
        if p.poll() is None:
            p.terminate()
    for p in hogs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--spin"]:  # one spinning child: --spin SECONDS PARENT_PID
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us; ^C goes to the command
        spin(time.monotonic() + float(argv[1]), int(argv[2]))
        return 0
    command: list[str] = []
    if "--" in argv:
        command = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-core", type=int, default=1, help="spinning processes per core (default 1)")
    parser.add_argument(
        "--seconds", type=float, default=3600.0, help="each spinner stops after this long at most (default 3600)"
    )
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    n = max(1, cores * args.per_core)
    hogs = start(n, args.seconds)
    print(f"hog: {n} busy processes on {cores} cores for at most {args.seconds:g} s", file=sys.stderr, flush=True)
    try:
        if not command:
            for p in hogs:
                p.wait()
            return 0
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 130
    finally:
        stop(hogs)


if __name__ == "__main__":
    sys.exit(main())
