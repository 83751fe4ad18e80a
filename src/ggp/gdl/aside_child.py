"""The child of :mod:`ggp.gdl.aside`: reads a pickled :class:`~ggp.gdl.network.Propnet` from its standard
input, then chooses its evaluator (compiling the network, timing the evaluators) and keeps the choice and the
object code in ggp's cache folder. Run as ``python -m ggp.gdl.aside_child``; nothing imports it."""

from __future__ import annotations

import os
import pickle
import sys

from .kernel import chosen_mode
from .network import Propnet


def main() -> None:
    if hasattr(os, "nice"):
        os.nice(5)  # the match it works beside keeps the cores it needs
    propnet = pickle.load(sys.stdin.buffer)
    if not isinstance(propnet, Propnet):
        raise SystemExit("ggp.gdl.aside_child reads a pickled Propnet from its standard input")
    chosen_mode(propnet)


if __name__ == "__main__":
    main()
