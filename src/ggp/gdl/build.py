"""A rule sheet's network, built once: read from ggp's cache, or built in a child process while a match is
played, or built here.

Grounding a large sheet and building its network is pure Python: chineseCheckers3 takes 11 s here on an idle
machine. In a process that plays under clocks (``ggp serve``, ``ggp web``: :func:`ggp.gdl.aside.compile_aside`
on), that work held the interpreter's lock beside the threads that answer the game manager and play the
prover's moves meanwhile; on a busy machine it took 75 s, and the player missed a START and a PLAY. There a
sheet that does not ground in half a second of processor time is built by a child process (``python -m
ggp.gdl.build_child``), and this process only waits for it.

The wait ends early only if the caller's :func:`~ggp.gdl.sheet.bounded` block is cancelled (the child is then
killed): its deadline bounds work in this thread, and the child's costs this thread nothing (a player goes
on with the prover's moves until the network is ready); the grounder's own bounds on size end the child.

A network that took a second or more to make is kept in ggp's cache folder by the sheet's text (and the
version of the code that builds it), so the sheet's next load reads it instead. At most :data:`KEEP` networks
are kept, the least recently used dropped first.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from ..core.cache import cache_folder, write_whole
from . import aside
from .grounder import GroundingTooLarge, GroundProgram, ground
from .network import Propnet
from .propnet import build_propnet
from .sheet import (
    GDLLimitError,
    Program,
    check_bounds,
    check_cancelled,
    cpu_bounded,
    show,
    within_processor_time,
)

#: The most networks kept in ggp's cache folder.
KEEP = 64
#: A network that took at least this many seconds to ground and build is kept.
KEEP_IF_SECONDS = 1.0
#: Where children build (:func:`ggp.gdl.aside.aside`), a sheet is grounded here for at most this many seconds
#: of this thread's processor time before a child is asked to build it (most sheets ground in far less: the
#: child's start, about half a second, is saved for them).
TRY_HERE_SECONDS = 0.5
#: How often the wait for a child looks whether the caller's :func:`~ggp.gdl.sheet.bounded` block was cancelled.
POLL_SECONDS = 0.1


#: Where a load's network came from (:attr:`Built.how`).
HERE = "built here"
IN_CHILD = "built by a child process"
FROM_CACHE = "read from ggp's cache"


@dataclass(frozen=True)
class Built:
    """A sheet's network and what else its load keeps of the ground program: the sheet's own ``base`` and
    ``input`` declarations (texts, each role's inputs in the order of the roles); the seconds grounding and
    building took in this load (0 when read from the cache), and where it was made (:data:`HERE`,
    :data:`IN_CHILD` or :data:`FROM_CACHE`)."""

    propnet: Propnet
    declared_base: tuple[str, ...]
    declared_inputs: tuple[tuple[str, ...], ...]
    ground_seconds: float
    build_seconds: float
    how: str = HERE


def build_here(program: Program, grounded: GroundProgram | None = None) -> Built:
    """Ground ``program`` (unless ``grounded`` is its ground program) and build its network in this thread
    (:class:`GroundingTooLarge` where it is too large to ground)."""
    began = time.perf_counter()
    if grounded is None:
        grounded = ground(program)
    grounded_at = time.perf_counter()
    propnet = build_propnet(grounded, program)
    sp = program.spelling
    base = tuple(sorted(show(row[0], sp) for row in grounded.static.get("base", ())))
    inputs = tuple(
        tuple(sorted(show(row[1], sp) for row in grounded.static.get("input", ()) if row[0] == r))
        for r in program.roles
    )
    return Built(propnet, base, inputs, grounded_at - began, time.perf_counter() - grounded_at, HERE)


def built_network(text: str, program: Program) -> Built:
    """The network of the sheet ``text`` (``program`` is its parse): from the cache, else built here; where
    :func:`ggp.gdl.aside.aside` is on (and no bound on this thread's processor time is set), a sheet that does
    not ground in :data:`TRY_HERE_SECONDS` of this thread's processor time is built by a child process instead.
    Kept in the cache if it took :data:`KEEP_IF_SECONDS` or more."""
    path = _file(text)
    kept = _read(path)
    if kept is not None:
        return replace(kept, ground_seconds=0.0, build_seconds=0.0, how=FROM_CACHE)
    built = None
    pickled = None  # (the child's own bytes of the network, kept as they are rather than pickled again)
    if aside.aside() and not cpu_bounded():
        began = time.perf_counter()
        try:
            with within_processor_time(TRY_HERE_SECONDS):
                grounded = ground(program)
        except GroundingTooLarge:
            raise
        except GDLLimitError:
            check_bounds(f"{program.name}: ", "grounding")  # the caller's own bound, if it was that
            tried = time.perf_counter() - began
            got = _build_in_child(text, program)
            if got is not None:  # (the attempt here counts as grounding time)
                built, pickled = replace(got[0], ground_seconds=got[0].ground_seconds + tried), got[1]
        else:
            grounded_in = time.perf_counter() - began
            built = replace(build_here(program, grounded), ground_seconds=grounded_in)
    if built is None:
        built = build_here(program)
    if built.ground_seconds + built.build_seconds >= KEEP_IF_SECONDS:
        keep(path, built, pickled)
    return built


@cache
def _code_digest() -> str:
    # the network follows from the sheet and this package's code: a new version builds afresh
    here = Path(__file__).parent
    return hashlib.sha1(b"".join(p.read_bytes() for p in sorted(here.glob("*.py")))).hexdigest()[:12]


def _file(text: str) -> Path:
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return cache_folder() / "networks" / f"{digest}-{_code_digest()}.pickle"


def _read(path: Path) -> Built | None:
    # (a file that cannot be read or is not a network is built again: the cache is only ever a speed-up)
    try:
        with path.open("rb") as fh:
            built = pickle.load(fh)
    except Exception:
        return None
    if not isinstance(built, Built):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used
    return built


def keep(path: Path, built: Built, pickled: bytes | None = None) -> None:
    """Write ``built`` (or ``pickled``, its bytes when they are at hand) to ``path`` in the cache, and drop the
    least recently used networks past :data:`KEEP`."""
    write_whole(path, pickled if pickled is not None else pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
    with contextlib.suppress(OSError):
        files = sorted(path.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime)
        for old in files[: max(0, len(files) - KEEP)]:
            old.unlink(missing_ok=True)


def _build_in_child(text: str, program: Program) -> tuple[Built, bytes] | None:
    """The network built by a child process, and the pickled bytes it sent; :class:`GroundingTooLarge` if the child found the sheet too
    large to ground; None if the child failed otherwise (built here then, so that the error, if any, is raised
    with its own type and line)."""
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "ggp.gdl.build_child", program.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:  # no process to be had (a limit on processes, a missing interpreter): built here
        return None
    # The sheet goes in by a plain write and the network comes back through a thread of its own, not by
    # communicate() with a timeout: retried, that sends nothing more of its input, so a sheet larger than the
    # pipe's buffer (64 KiB) was never read to its end and the child waited for the rest while this waited
    # for the child.
    assert child.stdin is not None and child.stdout is not None
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(child.stdout.read()), name="ggp-build-read", daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        try:
            child.stdin.write(text.encode("utf-8", "surrogatepass"))
        except BrokenPipeError:
            pass  # (a child that failed at once: its status says why)
        finally:
            with contextlib.suppress(BrokenPipeError):
                child.stdin.close()
        while True:
            try:
                child.wait(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                check_cancelled(f"{program.name}: ", "building the network")
    finally:
        if child.returncode is None:  # the caller's block was cancelled
            child.kill()
            child.wait()
        reader.join()
    out = got[0] if got else b""
    if child.returncode == TOO_LARGE:
        raise GroundingTooLarge(out.decode("utf-8", "replace").strip())
    if child.returncode != 0:
        return None
    try:
        built = pickle.loads(out)
    except Exception:
        return None
    return (replace(built, how=IN_CHILD), out) if isinstance(built, Built) else None


#: The child's exit status where the sheet is too large to ground (its message on standard output).
TOO_LARGE = 3

__all__ = ["FROM_CACHE", "HERE", "IN_CHILD", "KEEP", "Built", "build_here", "built_network", "keep"]
