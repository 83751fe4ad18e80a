"""Running the app: :func:`serve` for ``ggp web``, :class:`BackgroundServer` for tests and scripts."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn

from .app import create_app
from .store import default_db_path


def serve(host: str = "127.0.0.1", port: int = 8000, db: str | Path | None = None) -> int:
    """Serve the app until interrupted (Ctrl-C); returns the exit code."""
    path = Path(db).expanduser() if db is not None else default_db_path()
    app = create_app(path)
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    print(f"ggp web: open http://{shown}:{port}/  (history in {path}; API docs at /docs; Ctrl-C stops)", flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)
    uvicorn.Server(config).run()
    return 0


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class BackgroundServer:
    """The app served by uvicorn in a thread of this process, on 127.0.0.1 and a free port.

    ::

        with BackgroundServer(db_path) as server:
            page.goto(server.url + "/")

    Entering waits until the port accepts connections (polling it, up to
    ``timeout`` seconds); leaving stops the server and waits for the thread.
    """

    def __init__(self, db: str | Path, host: str = "127.0.0.1", port: int | None = None, timeout: float = 30.0) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.app = create_app(db)
        self.timeout = timeout
        config = uvicorn.Config(
            self.app, host=host, port=self.port, log_level="warning", timeout_graceful_shutdown=1, lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="ggp-web-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + self.timeout
        while True:
            if not self.thread.is_alive():
                raise RuntimeError(f"the web server on port {self.port} stopped while starting")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    pass
                if self.server.started:
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the web server did not listen on {self.url} within {self.timeout} s")
            time.sleep(0.02)  # polling the port, not waiting for an event we cannot see

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
