"""ggp's cache folder: what one process works out and the next can read back instead (compiled networks,
the evaluator chosen per network, solved Bomberman endgames).

Everything kept there is only ever a matter of speed: a file that cannot be read is worked out again, one
that cannot be written is not kept.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def cache_folder() -> Path:
    """``$GGP_CACHE``, else ``~/.cache/ggp``."""
    return Path(os.environ.get("GGP_CACHE") or Path.home() / ".cache" / "ggp")


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a scratch file, then a rename), so that a process
    reading it never sees half a file; a folder that cannot be written keeps nothing."""
    scratch = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch.write_bytes(data)
        os.replace(scratch, path)
    except OSError:
        with contextlib.suppress(OSError):  # the folder itself may be what cannot be written
            scratch.unlink(missing_ok=True)
