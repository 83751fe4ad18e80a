"""What bounds on a large computation in this process look at: its resident memory, and the cyclic garbage
collector, paused while millions of acyclic tuples are made."""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """The process's resident memory in bytes (None where /proc cannot tell: the other bounds still hold)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_paused = threading.Lock()
_pausing = [0, False]  # blocks in progress, and whether the collector was on before the first


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused: grounding and building a network make millions of tuples
    and lists and no cycles, and the collector, run again and again over all of them as they pile up, would
    take most of the time (chineseCheckers3: 18 s with it, 11 s without). The collector is the process's:
    it comes back on when the last block of any thread ends, if it was on before the first."""
    with _paused:
        if _pausing[0] == 0:
            _pausing[1] = gc.isenabled()
            gc.disable()
        _pausing[0] += 1
    try:
        yield
    finally:
        with _paused:
            _pausing[0] -= 1
            if _pausing[0] == 0 and _pausing[1]:
                gc.enable()
