"""Server-sent event streams of matches' views: one stream may follow many matches, a client may open few."""

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable

from fastapi import HTTPException, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from .limits import Limits
from .live_match import LiveMatch
from .manager import Manager
from .views import Presenter

#: Most matches one event stream follows.
MAX_STREAM_GAMES = 100
#: Seconds between keep-alive comments on an idle event stream (proxies close silent connections).
KEEPALIVE = 15.0


class EventStreams:
    """The event streams of one app, counted per client address."""

    def __init__(self, manager: Manager, limits: Limits, presenter: Presenter) -> None:
        self._manager = manager
        self._limits = limits
        self._show = presenter.show
        self._open: Counter[str] = Counter()  # open event streams per client address

    async def open(self, matches: list[LiveMatch], missing: list[str], request: Request) -> StreamingResponse:
        """A stream of ``matches``' views (and ``gone`` for each of ``missing``); 429 past the per-client limit."""
        client = request.client.host if request.client else "?"
        if self._open[client] >= self._limits.max_streams_per_client:
            raise HTTPException(
                429,
                f"this client has {self._open[client]} event streams open, the most allowed; "
                "close one (one stream can follow many games: /api/events?games=a,b)",
                headers={"Retry-After": "5"},
            )
        self._open[client] += 1

        def release() -> None:
            self._open[client] -= 1
            if self._open[client] <= 0:
                del self._open[client]

        async def stream() -> AsyncIterator[str]:
            with contextlib.ExitStack() as watching:
                for m in matches:
                    watching.enter_context(self._manager.watch(m))
                async for chunk in self._stream(matches, missing):
                    yield chunk

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return _EventStream(stream(), release, headers=headers)

    async def _stream(self, matches: list[LiveMatch], missing: list[str]) -> AsyncIterator[str]:
        yield "retry: 2000\n\n"
        for match_id in missing:
            yield f"event: gone\ndata: {json.dumps({'id': match_id})}\n\n"
        seen = dict.fromkeys((m.id for m in matches), -1)
        live = list(matches)
        while live:
            for m in list(live):
                if m.closed is not None:  # deleted (a watched match is not unloaded)
                    yield f"event: gone\ndata: {json.dumps({'id': m.id})}\n\n"
                    live.remove(m)
                    continue
                if m.version != seen[m.id]:
                    seen[m.id] = m.version
                    yield f"event: update\ndata: {json.dumps(self._show(m, svg=True))}\n\n"
                if m.over:  # its last view is out: nothing more will come
                    live.remove(m)
            if not live:
                break
            if not await _any_change(live, seen, KEEPALIVE):
                yield ": keep-alive\n\n"
        yield "event: end\ndata: {}\n\n"


class _EventStream(StreamingResponse):
    """A ``text/event-stream`` answer that calls ``release`` when it ends, however it ends."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], None], headers: dict[str, str]) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


async def _any_change(matches: list[LiveMatch], seen: dict[str, int], timeout: float) -> bool:
    """Wait until one of ``matches`` changes past the version in ``seen`` (True) or ``timeout`` passes (False)."""
    if len(matches) == 1:
        return await matches[0].wait_change(seen[matches[0].id], timeout)
    waits = [asyncio.ensure_future(m.wait_change(seen[m.id], timeout)) for m in matches]
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        return any(t.result() for t in done)
    finally:
        for t in waits:
            t.cancel()
