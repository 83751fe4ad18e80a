"""What bounds on a large computation in this process look at: its resident memory, and the cyclic garbage
collector, paused while millions of acyclic tuples are made."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """The process's resident memory in bytes (None where /proc cannot tell: the other bounds still hold)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused: grounding makes millions of tuples and no cycles, and the
    collector, run again and again over all of them as they pile up, would take most of the time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
