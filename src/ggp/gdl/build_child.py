"""The child of :mod:`ggp.gdl.build`: reads a rule sheet's text from its standard input, grounds it and builds
its network, and writes the pickled :class:`~ggp.gdl.build.Built` to its standard output. Exit status 0:
written; 3: the sheet is too large to ground (the reason on standard output); anything else: it failed (the
parent builds the sheet itself, to raise the error). Run as ``python -m ggp.gdl.build_child NAME`` (the
sheet's name, for messages); nothing imports it."""

from __future__ import annotations

import gc
import pickle
import sys

from .build import TOO_LARGE, build_here
from .grounder import GroundingTooLarge
from .parser import parse_program


def main() -> None:
    gc.disable()  # (millions of acyclic objects, and the process ends: see ggp.gdl.memory.no_cyclic_gc)
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m ggp.gdl.build_child NAME < SHEET > PICKLE")
    text = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
    try:
        built = build_here(parse_program(text, sys.argv[1]))
    except GroundingTooLarge as exc:
        sys.stdout.write(str(exc))
        sys.stdout.flush()
        raise SystemExit(TOO_LARGE) from None
    sys.stdout.buffer.write(pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
