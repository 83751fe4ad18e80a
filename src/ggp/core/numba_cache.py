"""Where numba keeps ggp's compiled code: a folder named for the sources of that code.

numba's on-disk cache checks only the file a compiled function is written in, not the files whose
functions it calls: after an edit to ``gdl/evaluate.py``, the kernels of ``gdl/kernel.py`` that call its
functions would load their old machine code, and run the old rules, without a word. So ggp gives numba a
cache folder named for a hash of every module of the package that uses numba: an edit to any of them
starts a fresh folder (one compile, minutes, once), and code compiled from other sources is never loaded.

The folder is ``$NUMBA_CACHE_DIR/ggp-HASH`` when ``NUMBA_CACHE_DIR`` is set, else
``$GGP_CACHE/numba/ggp-HASH`` (``~/.cache/ggp/numba/ggp-HASH``). This module must not import numba: it
runs before numba reads its configuration; importing it configures the cache (``import ggp`` does first).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from .cache import cache_folder

_PACKAGE = Path(__file__).resolve().parents[1]


def sources_key() -> str:
    """``ggp-`` and a hash of the package's modules that use numba (their paths and bytes)."""
    digest = hashlib.sha1()
    for path in sorted(_PACKAGE.rglob("*.py")):
        data = path.read_bytes()
        if b"numba" in data:
            digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0" + data)
    return "ggp-" + digest.hexdigest()[:16]


def configure() -> Path:
    """Point numba's cache at the folder for these sources (see the module's docstring) and return it.

    A process started by one that ran this (a warm-up child, a worker) inherits the folder itself, not a
    folder inside it."""
    key = sources_key()
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given and Path(given).name == key:
        folder = Path(given)
    else:
        folder = (Path(given) if given else cache_folder() / "numba") / key
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
    config = getattr(sys.modules.get("numba"), "config", None)
    if config is not None:  # numba read its configuration already: tell it too
        config.CACHE_DIR = str(folder)
    return folder


configure()  # on import: ``import ggp`` imports this module before any that compiles
