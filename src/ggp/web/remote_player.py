"""Talking safely to registered players: which URLs the arena may call, a transport pinned to the checked
address, and the INFO probe.

Remote URLs are checked against the allow-list: an address that is not a public one (loopback, private,
link-local, reserved) is refused unless ``arena_allow`` names its network or host, so that registering cannot
make the server probe its own network (see :class:`PinnedTransport` for why the check is made per message).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..protocol.host import QUICK, RemoteError, Transport
from ..protocol.messages import BUSY, Info, ProtocolError, parse_info_reply, render_message

_MAX_URL = 300


class ArenaError(Exception):
    """A request the arena refuses: ``status`` is the HTTP status, ``message`` says why and what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _allowed(address: str, host: str, allow: tuple[str, ...]) -> bool:
    ip = ipaddress.ip_address(address)
    for entry in allow:
        if entry.lower() == host.lower():
            return True
        with contextlib.suppress(ValueError):
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
    return False


def check_url(url: str, allow: tuple[str, ...], resolve: Callable[..., Any] = socket.getaddrinfo) -> str:
    """``url`` normalised, if the arena may call it; :class:`ArenaError` (400) saying why not.

    It must be ``http://`` or ``https://`` with a host and no user name, password or fragment; every address
    its host resolves to must be a public one unless ``allow`` names its network or the host.

    >>> check_url("http://127.0.0.1:9147", ("127.0.0.0/8",))
    'http://127.0.0.1:9147/'
    >>> check_url("http://127.0.0.1:9147", ())
    Traceback (most recent call last):
    ...
    ggp.web.remote_player.ArenaError: 127.0.0.1 is a loopback address, which this arena does not call (ask its operator to allow it: GGP_WEB_ARENA_ALLOW)
    """
    text = str(url).strip()
    if len(text) > _MAX_URL:
        raise ArenaError(400, f"a player's URL is at most {_MAX_URL} characters")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ArenaError(400, f"not a URL ({exc}); give one like http://player.example:9147") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ArenaError(400, "a player's URL starts with http:// or https:// and names a host, e.g. http://host:9147")
    if parts.username or parts.password or parts.fragment:
        raise ArenaError(400, "a player's URL may not hold a user name, password or #fragment")
    _checked_addresses(parts.hostname, port or (443 if parts.scheme.lower() == "https" else 80), allow, resolve)
    netloc = parts.netloc.lower()
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


def _checked_addresses(host: str, port: int, allow: tuple[str, ...], resolve: Callable[..., Any]) -> list[str]:
    """The addresses ``host`` resolves to, each one the arena may call; :class:`ArenaError` (400) if any is not."""
    try:
        infos = resolve(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise ArenaError(400, f"the host {host!r} does not resolve ({exc}); check the URL") from None
    addresses = sorted({str(info[4][0]).split("%")[0] for info in infos})
    if not addresses:
        raise ArenaError(400, f"the host {host!r} has no address")
    for address in addresses:
        ip = ipaddress.ip_address(address)
        if ip.is_global and not ip.is_multicast:
            continue
        if _allowed(address, host, allow):
            continue
        what = (
            "loopback"
            if ip.is_loopback
            else "link-local"
            if ip.is_link_local
            else "private"
            if ip.is_private
            else "non-public"
        )
        raise ArenaError(
            400,
            f"{address} is a {what} address, which this arena does not call "
            "(ask its operator to allow it: GGP_WEB_ARENA_ALLOW)",
        )
    return addresses


class PinnedTransport(Transport):
    """The host's transport, calling only addresses the allow-list accepts: the address checked is the one
    connected to.

    Checking a URL and then connecting by its name would resolve the name twice, and a name can answer a
    public address to the check and a private one to the connection (DNS rebinding). So each message
    resolves the name once, checks every address, and connects to the first of them; the ``Host`` header
    and, for ``https``, the name TLS checks the certificate against stay the URL's.

    >>> PinnedTransport(()).post("http://127.0.0.1:9/", "(info)", 1.0, "test")
    Traceback (most recent call last):
    ...
    ggp.protocol.host.RemoteError: cannot talk to http://127.0.0.1:9/: 127.0.0.1 is a loopback address, which this arena does not call (ask its operator to allow it: GGP_WEB_ARENA_ALLOW)
    """

    def __init__(self, allow: tuple[str, ...], resolve: Callable[..., Any] = socket.getaddrinfo) -> None:
        self.allow = allow
        self.resolve = resolve

    def address(self, url: str, host: str, port: int) -> str:
        try:
            return _checked_addresses(host, port, self.allow, self.resolve)[0]
        except ArenaError as exc:
            raise RemoteError(f"cannot talk to {url}: {exc.message}") from None


def ask_info(url: str, transport: Transport | None = None, limit: float = QUICK) -> dict[str, str]:
    """The player's INFO answer; :class:`ArenaError` (400) if it does not answer, answers an error, or is busy."""
    try:
        status, body = (transport or Transport()).post(url, render_message(Info()), limit, "ggp-arena")
    except RemoteError as exc:
        raise ArenaError(400, f"the player at {url} does not answer INFO: {exc}") from None
    if status != 200:
        raise ArenaError(400, f"the player at {url} answered INFO with HTTP status {status}")
    try:
        fields = parse_info_reply(body)
    except ProtocolError:
        fields = {}
    if fields.get("status", "").lower() == BUSY:
        raise ArenaError(409, f"the player at {url} says it is busy; register it when it is free")
    return fields
