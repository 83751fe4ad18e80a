"""Compiling a rule sheet's network aside: in a child process, while the match is played on an interpreter.

Choosing a new sheet's evaluator compiles its network to machine code and times it (:func:`ggp.gdl.kernel.fastest_mode`):
seconds on an idle machine (gomoku_swap2_15x15: 2.9 s here), and several times that on a busy one, where it
had cost a player's first match its start clock and its opening moves ("the agent is still starting"). A
process that plays under clocks (``ggp serve``, ``ggp web``) turns :func:`compile_aside` on: a network whose
choice is not yet on disk is then played at once on the faster interpreter, and a child process compiles and
times it and writes the choice (and the object code) to ggp's cache, where the sheet's next load finds it.

The child works from the network alone, pickled to its standard input: it reads no sheet and runs no rule of
it but the network's, so a sheet that compiles for minutes costs only the child's time, not the match.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading

from .network import Propnet

_on = threading.Event()
_lock = threading.Condition()
_running: set[str] = set()


def compile_aside(on: bool = True) -> None:
    """Compile new networks in a child process (``on``) or here, when their first context is made (the default).
    On, a large sheet's network is also built by a child process (:mod:`ggp.gdl.build`)."""
    if on:
        _on.set()
    else:
        _on.clear()


def aside() -> bool:
    """Whether new networks are compiled in a child process (:func:`compile_aside`)."""
    return _on.is_set()


def start(propnet: Propnet, key: str) -> bool:
    """Start a child that chooses ``propnet``'s evaluator (compiling it), unless one for ``key`` is running;
    whether one was started."""
    with _lock:
        if key in _running:
            return False
        _running.add(key)
    try:
        data = pickle.dumps(propnet, protocol=pickle.HIGHEST_PROTOCOL)
        child = subprocess.Popen(
            [sys.executable, "-m", "ggp.gdl.aside_child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except Exception:
        with _lock:
            _running.discard(key)
            _lock.notify_all()
        raise

    def feed_and_reap() -> None:
        try:
            assert child.stdin is not None
            with child.stdin:
                child.stdin.write(data)
        except OSError:  # the child ended early: nothing is written, and the next load tries again
            child.kill()
        child.wait()
        with _lock:
            _running.discard(key)
            _lock.notify_all()

    threading.Thread(target=feed_and_reap, name="ggp-compile-aside", daemon=True).start()
    return True


def wait(seconds: float) -> bool:
    """Wait at most ``seconds`` for the children to end; whether they all have."""
    with _lock:
        return _lock.wait_for(lambda: not _running, timeout=seconds)
