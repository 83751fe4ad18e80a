"""What watchers of a live match wait on, for the web's matches and the arena's alike."""

from __future__ import annotations

import asyncio
import contextlib


class Watched:
    """A live match's change count: :meth:`changed` moves ``version`` on and wakes every :meth:`wait_change`.

    Used on the event loop only (a referee's thread posts its changes there).

    >>> async def demo() -> tuple[bool, bool, int]:
    ...     w = Watched()
    ...     waiting = asyncio.ensure_future(w.wait_change(0, 5.0))
    ...     await asyncio.sleep(0)
    ...     w.changed()
    ...     return await waiting, await w.wait_change(1, 0.0), w.version
    >>> asyncio.run(demo())
    (True, False, 1)
    """

    def __init__(self) -> None:
        self.version = 0
        self._changed = asyncio.Event()

    def changed(self) -> None:
        """Wake everyone waiting for a change (also when the match ends or leaves)."""
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, version: int, timeout: float) -> bool:
        """Wait until the version passes ``version`` (True) or ``timeout`` seconds pass (False)."""
        if self.version > version:
            return True
        event = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)
        return self.version > version
