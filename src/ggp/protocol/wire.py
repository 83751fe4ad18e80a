"""The HTTP side of GGP: requests read off a socket with limits, replies written byte for byte as ggp-base does.

GGP runs over HTTP/1.0: the game manager sends ``POST /`` with one
S-expression as the body (``Content-Type: text/acl``) and the player answers
on the same connection, which then closes. :class:`GGPServer` is a threaded
TCP server that

* reads each request with a total deadline (``read_timeout``: slow and
  half-open connections are answered 408 or dropped, never kept),
* caps the head (64 KiB) and the body (``max_body``, 4 MiB: larger is 413),
* answers ``OPTIONS`` (a browser's preflight) with an empty 200, reads the
  message of ``GET /<url-encoded message>`` as ggp-base does (``GET /``
  alone is INFO, for a look from a browser), and refuses
  other methods (405),
* limits the connections it serves at once: a newcomer beyond
  ``max_connections`` takes the place of the connection that has been
  reading its request longest (at least :data:`EVICT_AFTER` seconds: a game
  manager sends its request at once, so only slow or idle clients lose their
  place), or waits up to :data:`SLOT_WAIT` seconds for one, else gets 503,
* and hands the message text to ``app(text, received)``, which returns a
  :class:`Reply`; an exception there is answered 500.

Every reply has ggp-base's head::

    HTTP/1.0 200 OK
    Content-type: text/acl
    Content-length: 5
    Access-Control-Allow-Origin: *
    Access-Control-Allow-Methods: POST, GET, OPTIONS
    Access-Control-Allow-Headers: Content-Type
    Access-Control-Allow-Age: 86400

    ready
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from .messages import error_reply

MAX_HEAD = 64 * 1024
MAX_HEADERS = 100
MAX_BODY = 4 * 1024 * 1024
#: A connection still reading its request after this many seconds gives its place to a newcomer when all are taken.
EVICT_AFTER = 1.0
#: How long a newcomer waits for a place when all are taken, before 503.
SLOT_WAIT = 1.5

REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class Reply:
    """An answer: the HTTP status and the body (one S-expression, or empty)."""

    status: int
    body: str

    def to_bytes(self) -> bytes:
        return reply_bytes(self.status, self.body)


def reply_bytes(status: int, body: str) -> bytes:
    """The exact bytes of a reply, with ggp-base's headers (CORS included)."""
    data = body.encode("utf-8")
    head = (
        f"HTTP/1.0 {status} {REASONS.get(status, 'Unknown')}\r\n"
        "Content-type: text/acl\r\n"
        f"Content-length: {len(data)}\r\n"
        "Access-Control-Allow-Origin: *\r\n"
        "Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
        "Access-Control-Allow-Headers: Content-Type\r\n"
        "Access-Control-Allow-Age: 86400\r\n"
        "\r\n"
    )
    return head.encode("ascii") + data


class HttpError(Exception):
    """A request we answer with an error status before the message is looked at."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def reply(self) -> Reply:
        return Reply(self.status, error_reply(self.message))


class _Gone(Exception):
    """The client closed the connection before sending anything: nobody to answer."""


@dataclass
class Request:
    """One HTTP request, as read: method, target, header fields (names in lower case) and body."""

    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes
    received: float  # time.monotonic() when its first byte arrived


def read_request(sock: socket.socket, deadline: float, max_body: int = MAX_BODY) -> Request:
    """Read one request from ``sock`` before ``deadline`` (a ``time.monotonic()`` value).

    Raises :class:`HttpError` for a request to refuse, ``TimeoutError`` at the
    deadline and :class:`_Gone` when the client left without a word.
    """
    buf = bytearray()
    received: float | None = None
    end: tuple[int, int] | None = None
    while end is None:
        chunk = _recv(sock, deadline)
        if not chunk:
            if not buf:
                raise _Gone
            raise HttpError(400, "the request ended before its head was complete")
        if received is None:
            received = time.monotonic()
        buf += chunk
        end = _head_end(buf)
        if (end[0] if end is not None else len(buf)) > MAX_HEAD:
            raise HttpError(431, f"the request head is longer than {MAX_HEAD} bytes")
    assert received is not None and end is not None
    head_len, sep_len = end
    head = bytes(buf[:head_len])
    rest = bytes(buf[head_len + sep_len :])
    method, target, version, headers = _parse_head(head)

    body = b""
    if method == "POST":
        if headers.get("expect", "").lower() == "100-continue" and not rest:  # curl, for bodies over 1 KiB
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > max_body:
                raise HttpError(413, f"the request body ({length} bytes) is larger than {max_body} bytes")
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = _read_body(sock, headers, rest, deadline, max_body)
    return Request(method=method, target=target, version=version, headers=headers, body=body, received=received)


def _recv(sock: socket.socket, deadline: float) -> bytes:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request was not complete in time")
    sock.settimeout(left)
    try:
        return sock.recv(65536)
    except TimeoutError:
        raise TimeoutError("the request was not complete in time") from None


def _head_end(buf: bytearray) -> tuple[int, int] | None:
    """Where the head ends and how long the blank line is (CRLF, or bare LF from lenient clients), if it does."""
    i = buf.find(b"\r\n\r\n")
    j = buf.find(b"\n\n")
    if i >= 0 and (j < 0 or i <= j):
        return (i, 4)
    if j >= 0:
        return (j, 2)
    return None


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise HttpError(400, "the request head is not text") from None
    lines = text.replace("\r\n", "\n").split("\n")
    parts = lines[0].split()
    if len(parts) != 3 or not parts[2].upper().startswith("HTTP/"):
        raise HttpError(400, f"malformed request line {_clip(lines[0])!r}; expected e.g. 'POST / HTTP/1.0'")
    method, target, version = parts[0].upper(), parts[1], parts[2].upper()
    if len(lines) - 1 > MAX_HEADERS:
        raise HttpError(431, f"more than {MAX_HEADERS} header fields")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip() or name != name.strip():
            raise HttpError(400, f"malformed header line {_clip(line)!r}")
        headers[name.strip().lower()] = value.strip()
    return method, target, version, headers


def _read_body(sock: socket.socket, headers: dict[str, str], rest: bytes, deadline: float, max_body: int) -> bytes:
    if "transfer-encoding" in headers and headers["transfer-encoding"].lower() != "identity":
        raise HttpError(501, "chunked request bodies are not supported; send a Content-Length")
    length_text = headers.get("content-length")
    if length_text is None:  # read to the end of the stream, as ggp-base does
        body = bytearray(rest)
        while True:
            if len(body) > max_body:
                raise HttpError(413, f"the request body is larger than {max_body} bytes")
            chunk = _recv(sock, deadline)
            if not chunk:
                return bytes(body)
            body += chunk
    if not length_text.isdigit():
        raise HttpError(400, f"Content-Length {_clip(length_text)!r} is not a number of bytes")
    length = int(length_text)
    if length > max_body:
        raise HttpError(413, f"the request body ({length} bytes) is larger than {max_body} bytes")
    body = bytearray(rest[:length])
    while len(body) < length:
        chunk = _recv(sock, deadline)
        if not chunk:
            raise HttpError(400, f"the request body ended after {len(body)} of {length} bytes")
        body += chunk[: length - len(body)]
    return bytes(body)


@dataclass
class Response:
    """One HTTP response, as read by a client: the status, the header fields (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


def read_response(sock: socket.socket, deadline: float, max_body: int) -> Response:
    """Read the response to a request sent on ``sock``, all of it before ``deadline`` (``time.monotonic()``).

    The body is read by Content-Length, chunk by chunk, or to the end of the
    stream. Raises ``TimeoutError`` at the deadline and :class:`HttpError`
    (status 0) for a response that is not HTTP, too large, or cut short.
    """
    buf = bytearray()
    end = None
    while end is None:
        chunk = _recv(sock, deadline)
        if not chunk:
            raise HttpError(0, "the connection closed before a complete reply" if buf else "the connection closed")
        buf += chunk
        end = _head_end(buf)
        if (end[0] if end is not None else len(buf)) > MAX_HEAD:
            raise HttpError(0, f"the reply head is longer than {MAX_HEAD} bytes")
    head_len, sep_len = end
    lines = bytes(buf[:head_len]).decode("latin-1").replace("\r\n", "\n").split("\n")
    rest = bytes(buf[head_len + sep_len :])
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[0].upper().startswith("HTTP/") or not parts[1].isdigit() or len(parts[1]) != 3:
        raise HttpError(0, f"not an HTTP reply: {_clip(lines[0])!r}")
    headers: dict[str, str] = {}
    for line in lines[1 : MAX_HEADERS + 1]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "identity").lower() == "chunked":
        body = _read_chunked(sock, rest, deadline, max_body)
    else:
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            raise HttpError(0, f"Content-Length {_clip(length)!r} is not a number of bytes")
        body = _read_to(sock, rest, None if length is None else int(length), deadline, max_body)
    return Response(int(parts[1]), headers, body)


def _read_to(sock: socket.socket, rest: bytes, length: int | None, deadline: float, max_body: int) -> bytes:
    """``length`` bytes of body (None: to the end of the stream), starting with the ``rest`` already read."""
    if length is not None and length > max_body:
        raise HttpError(0, f"the reply body ({length} bytes) is larger than {max_body} bytes")
    body = bytearray(rest if length is None else rest[:length])
    while length is None or len(body) < length:
        if len(body) > max_body:
            raise HttpError(0, f"the reply body is larger than {max_body} bytes")
        chunk = _recv(sock, deadline)
        if not chunk:
            if length is None:
                break
            raise HttpError(0, f"the reply body ended after {len(body)} of {length} bytes")
        body += chunk if length is None else chunk[: length - len(body)]
    return bytes(body)


def _read_chunked(sock: socket.socket, rest: bytes, deadline: float, max_body: int) -> bytes:
    """A chunked body (RFC 9112 7.1), its size bounded by ``max_body``."""
    buf = bytearray(rest)
    body = bytearray()

    def line() -> bytes:
        while (i := buf.find(b"\r\n")) < 0:
            if len(buf) > 1024:
                raise HttpError(0, "a chunk size line is too long")
            more = _recv(sock, deadline)
            if not more:
                raise HttpError(0, "the chunked reply ended early")
            buf.extend(more)
        text = bytes(buf[:i])
        del buf[: i + 2]
        return text

    while True:
        size_text = line().split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise HttpError(0, f"bad chunk size {size_text[:20]!r}") from None
        if size == 0:
            return bytes(body)
        if len(body) + size > max_body:
            raise HttpError(0, f"the reply body is larger than {max_body} bytes")
        while len(buf) < size + 2:
            more = _recv(sock, deadline)
            if not more:
                raise HttpError(0, "the chunked reply ended early")
            buf.extend(more)
        body += buf[:size]
        del buf[: size + 2]


def message_of(request: Request) -> str:
    """The GGP message a request carries: the POST body, or the URL-decoded path of a GET (``GET /`` is INFO)."""
    if request.method == "GET":
        path = request.target.split("#", 1)[0]
        text = unquote(path[1:] if path.startswith("/") else path)
        text = text[1:] if text.startswith("?") else text
        return text if text.strip() else "( INFO )"
    try:
        return request.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HttpError(400, f"the request body is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the server ----------------------------------------------------------------------------------------------
#: What a server does with a message: ``app(text, received)`` -> the reply (``received`` from time.monotonic()).
App = Callable[[str, float], Reply]


class GGPServer(socketserver.ThreadingTCPServer):
    """A threaded HTTP/1.0 server for GGP messages (one request per connection).

    Bind with ``port=0`` for a free port (see :attr:`port`). Use
    :meth:`start` to serve from a background thread and :meth:`close` to stop.
    ``log`` (optional) receives one line per refused request.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(
        self,
        host: str,
        port: int,
        app: App,
        *,
        read_timeout: float = 10.0,
        max_body: int = MAX_BODY,
        max_connections: int = 64,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.app = app
        self.read_timeout = read_timeout
        self.max_body = max_body
        self.log = log
        self._slots = threading.BoundedSemaphore(max_connections)
        self._readers: dict[socket.socket, float] = {}  # connections reading their request -> since when
        self._readers_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = str(self.server_address[0])
        return f"http://[{host}]:{self.port}/" if ":" in host else f"http://{host}:{self.port}/"

    def start(self) -> GGPServer:
        """Serve in a daemon thread; returns self (the socket already listens, so clients may connect now)."""
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, name=f"ggp-server-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the listening socket."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        self.server_close()

    def __enter__(self) -> GGPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take_slot(self) -> bool:
        """A place for a new connection: a free one, or the place of the slowest reader (see the module)."""
        if self._slots.acquire(blocking=False):
            return True
        end = time.monotonic() + SLOT_WAIT
        while True:
            self._evict_slowest_reader()
            left = end - time.monotonic()
            if self._slots.acquire(timeout=max(0.0, min(0.05, left))):
                return True
            if left <= 0:
                return False

    def _evict_slowest_reader(self) -> None:
        with self._readers_lock:
            if not self._readers:
                return
            sock, since = min(self._readers.items(), key=lambda item: item[1])
            if time.monotonic() - since < EVICT_AFTER:
                return
            del self._readers[sock]  # its handler sees the connection end and frees the place
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self.log is not None:
            self.log(f"a connection still reading its request after {EVICT_AFTER:g} s was dropped for a newcomer")

    def handle_error(self, request: object, client_address: object) -> None:
        if self.log is not None:
            self.log(f"error serving {client_address}: {traceback.format_exc(limit=3)}")


class _Handler(socketserver.BaseRequestHandler):
    server: GGPServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        server = self.server
        if not server._take_slot():
            self._send(sock, Reply(503, error_reply("too many connections; try again")), drain=True)
            return
        try:
            self._serve(sock, server)
        finally:
            server._slots.release()

    def _serve(self, sock: socket.socket, server: GGPServer) -> None:
        deadline = time.monotonic() + server.read_timeout
        with server._readers_lock:
            server._readers[sock] = time.monotonic()
        try:
            request = read_request(sock, deadline, server.max_body)
        except _Gone:
            return
        except HttpError as exc:
            self._note(f"{exc.status} {exc.message}")
            self._send(sock, exc.reply(), drain=True)
            return
        except TimeoutError:
            self._note(f"408 no complete request within {server.read_timeout:g} s")
            self._send(sock, Reply(408, error_reply(f"no complete request within {server.read_timeout:g} s")))
            return
        except OSError:  # reset by the peer (or dropped for a newcomer)
            return
        finally:
            with server._readers_lock:
                server._readers.pop(sock, None)
        self._answer(sock, server, request)

    def _answer(self, sock: socket.socket, server: GGPServer, request: Request) -> None:
        if request.method == "OPTIONS":
            self._send(sock, Reply(200, ""))
            return
        if request.method not in ("POST", "GET"):
            self._send(sock, Reply(405, error_reply(f"{request.method} is not supported; POST a GGP message")))
            return
        try:
            text = message_of(request)
            reply = server.app(text, request.received)
        except HttpError as exc:
            reply = exc.reply()
        except Exception as exc:  # never let a bug take the connection down without an answer
            self._note(f"500 {type(exc).__name__}: {exc}")
            reply = Reply(500, error_reply(f"internal error: {type(exc).__name__}: {exc}"))
        self._send(sock, reply)

    def _note(self, text: str) -> None:
        if self.server.log is not None:
            self.server.log(f"{self.client_address[0]}:{self.client_address[1]} {text}")

    @staticmethod
    def _send(sock: socket.socket, reply: Reply, drain: bool = False) -> None:
        try:
            sock.settimeout(5.0)
            sock.sendall(reply.to_bytes())
            if drain:  # the client may still be sending: read it away so that closing does not reset the reply
                sock.shutdown(socket.SHUT_WR)
                _drain(sock, seconds=1.0, limit=16 * MAX_BODY)
        except OSError:
            pass


def _drain(sock: socket.socket, seconds: float, limit: int) -> None:
    end = time.monotonic() + seconds
    got = 0
    with contextlib.suppress(OSError):
        while got < limit:
            left = end - time.monotonic()
            if left <= 0:
                return
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                return
            got += len(chunk)


__all__ = [
    "MAX_BODY",
    "App",
    "GGPServer",
    "HttpError",
    "Reply",
    "Request",
    "Response",
    "message_of",
    "read_request",
    "read_response",
    "reply_bytes",
]
