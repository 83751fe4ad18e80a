"""The web app's outer guard: request size, the Host it serves, and who may write.

:class:`Guard` is one ASGI middleware in front of the whole app:

- A request body over ``max_body_bytes`` gets 413 before the app reads it: a
  ``Content-Length`` over the limit is answered at once, and a body streamed
  without one is counted as it arrives and cut off at the limit.
- A ``Host`` header the server does not serve gets 421 (DNS rebinding: a page
  on ``evil.example`` that resolves to 127.0.0.1 sends ``Host: evil.example``).
- A write (POST, PUT, PATCH, DELETE) that a browser sends from another origin
  gets 403: ``Sec-Fetch-Site`` must be ``same-origin`` (or ``none``: typed by
  the user) and ``Origin`` must be this server. A request with neither header
  (curl, scripts) is allowed: it does not come from a page in a browser.

Each refusal is a small JSON document ``{"detail": "..."}`` that says what to do.

>>> host_name("[::1]:8000"), host_name("LocalHost:80"), host_name("127.0.0.1")
('[::1]', 'localhost', '127.0.0.1')
>>> clip("x" * 1000, 20)
'xxxxxxxxxxxxxxxxxxxx… (1000 characters)'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Methods that change something, refused when a browser sends them from another origin.
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: ``Sec-Fetch-Site`` values of a write the app accepts: from its own pages, or typed by the user.
_SAME_ORIGIN = frozenset({"same-origin", "none"})
#: How much of someone's input an error message quotes.
QUOTE_CHARS = 80


class SafeJSONResponse(JSONResponse):
    """JSON with every non-ASCII character escaped: a lone surrogate from a client's input (``"\\ud800"`` is
    valid JSON) is sent back escaped instead of failing to encode as UTF-8 (a 500)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` as an error message may quote it: at most ``limit`` characters and a count of the rest."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def host_name(host: str) -> str:
    """The name part of a ``Host`` header, lower case, without the port (IPv6 addresses keep their brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end > 0 else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _origin_host(origin: str) -> str | None:
    """``host[:port]`` of an ``Origin`` header with the scheme's default port left out; None for ``null``."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or not rest or "/" in rest:
        return None
    default = {"http": ":80", "https": ":443"}.get(scheme)
    return rest[: -len(default)] if default and rest.endswith(default) else rest


def _strip_default_port(host: str, scheme: str) -> str:
    default = {"http": ":80", "https": ":443", "ws": ":80", "wss": ":443"}.get(scheme)
    host = host.strip().lower()
    return host[: -len(default)] if default and host.endswith(default) else host


class Guard:
    """ASGI middleware: body size, served hosts and cross-origin writes (see the module docstring).

    ``allowed_hosts`` are host names without ports (``localhost``, ``127.0.0.1``, ``[::1]``); ``*`` allows any.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        allowed_hosts: Iterable[str],
        large_bodies: dict[str, int] | None = None,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        #: Paths that take larger bodies (rule sheet uploads): path -> their own limit in bytes.
        self.large_bodies = dict(large_bodies or {})
        hosts = {h.strip().lower() for h in allowed_hosts if h.strip()}
        # an IPv6 address is allowed with or without brackets
        hosts |= {f"[{h}]" for h in hosts if ":" in h and not h.startswith("[")}
        self.any_host = "*" in hosts
        self.allowed_hosts = frozenset(hosts - {"*"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan; the app has no websockets
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            status, message = refusal
            await _answer(send, status, message)
            return
        limit = self.large_bodies.get(scope.get("path", ""), self.max_body_bytes)
        length = headers.get("content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _answer(send, 400, f"Content-Length must be a whole number, not {clip(length, 20)!r}")
                return
            if declared > limit:
                await _answer(send, 413, self._too_large(limit))
                return
        await _LimitedBody(self.app, limit, self._too_large(limit))(scope, receive, send)

    def _too_large(self, limit: int) -> str:
        return f"the request body is over the limit of {limit} bytes; send less"

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host")
        if host is None:
            return 400, "a Host header is required"
        name = host_name(host)
        if not self.any_host and name not in self.allowed_hosts:
            allowed = ", ".join(sorted(self.allowed_hosts))
            return 421, (
                f"this server does not serve the host {clip(name, 60)!r} (it serves {allowed}); "
                "start it with `ggp web --allow-host NAME` to serve another name"
            )
        if scope["method"] not in UNSAFE_METHODS:
            return None
        site = headers.get("sec-fetch-site")
        if site is not None and site.strip().lower() not in _SAME_ORIGIN:
            return 403, f"cross-origin request refused ({clip(site, 20)}): write from this server's own pages"
        origin = headers.get("origin")
        if origin is not None:
            scheme = str(scope.get("scheme", "http"))
            own = _strip_default_port(host, scheme)
            if _origin_host(origin) != own:
                return 403, f"cross-origin request refused (Origin {clip(origin, 60)}): write from this server's pages"
        return None


class _LimitedBody:
    """Runs the app on a body counted as it arrives: past the limit, 413 and a disconnect for the app."""

    def __init__(self, app: ASGIApp, limit: int, message: str) -> None:
        self.app = app
        self.limit = limit
        self.message = message
        self.received = 0
        self.started = False
        self.refused = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted_receive() -> Message:
            if self.refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                if self.received > self.limit:
                    self.refused = True
                    if not self.started:
                        self.started = True
                        await _answer(send, 413, self.message)
                    # the app sees a client that went away, and stops reading
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if self.refused:
                return  # the 413 is the answer
            if message["type"] == "http.response.start":
                self.started = True
            await send(message)

        await self.app(scope, counted_receive, guarded_send)


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        out.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return out


async def _answer(send: Send, status: int, detail: str, extra: dict[str, Any] | None = None) -> None:
    body = json.dumps({"detail": detail, **(extra or {})}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
