"""The time that clocks are kept by: real time, or (in tests) a clock that stands still until moved.

A :class:`~ggp.match.calls.Caller` and the GGP player wait on a :class:`Clock`. With a :class:`ManualClock`
a wait ends by its event or by the test moving the clock past its end, never because the machine was slow:

>>> import threading
>>> clock, answered = ManualClock(start=0.0), threading.Event()
>>> waiter = threading.Thread(target=lambda: print("answered in time:", clock.wait(answered, 2.0)))
>>> waiter.start()
>>> clock.advance(5.0)  # the clock runs out before the answer comes
>>> waiter.join()
answered in time: False
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Waitable(Protocol):
    """What a :class:`Clock` waits for: a ``threading.Event`` or :class:`AnyOf` several."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


class Clock:
    """Real time: ``now()`` is ``time.monotonic()``, and ``wait(event, seconds)`` waits for an event for at
    most that many seconds of it."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, event: Waitable, seconds: float) -> bool:
        """Wait until ``event`` is set (True) or ``seconds`` have passed (False)."""
        return event.wait(max(0.0, seconds))


class ManualClock(Clock):
    """A :class:`Clock` that stands still until :meth:`advance` moves it (for tests): a wait ends when its
    event is set or when the clock is moved past its end, never because the machine was slow."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.monotonic() if start is None else start
        self._cond = threading.Condition()

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._cond:
            self._now += seconds
            self._cond.notify_all()

    def wait(self, event: Waitable, seconds: float) -> bool:
        with self._cond:
            end = self._now + max(0.0, seconds)
            while not event.is_set() and self._now < end:
                self._cond.wait(0.01)  # setting the event notifies nothing here: it is looked at often
            return event.is_set()


class AnyOf:
    """Set when one of its events is (for :meth:`Clock.wait` on several events at once)."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)

    def wait(self, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = 0.05 if end is None else min(0.05, end - time.monotonic())
            if left <= 0:
                return False
            self.events[0].wait(left)  # a poll of the others too
        return True
