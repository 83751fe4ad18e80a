"""Running the app: :func:`serve` for ``ggp web``, :class:`BackgroundServer` for tests and scripts."""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import uvicorn

from ..gdl.aside import compile_aside
from .app import create_app
from .limits import Limits
from .pages import featured_picture
from .store import default_db_path

if TYPE_CHECKING:
    from ..protocol.warmup import WarmUp

#: Addresses that listen on every network interface.
ALL_INTERFACES = ("0.0.0.0", "::", "")


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    db: str | Path | None = None,
    allowed_hosts: Iterable[str] = (),
    limits: Limits | None = None,
    sheets: str | Path | None = None,
    arena_allow: Iterable[str] = (),
) -> int:
    """Serve the app until interrupted (Ctrl-C); returns the exit code.

    The app answers requests whose ``Host`` is loopback (``limits.allowed_hosts``, from ``GGP_WEB_ALLOWED_HOSTS``)
    or one of ``allowed_hosts`` (``ggp web --allow-host NAME``); a ``host`` that is not loopback is added too.
    """
    limits = with_hosts(limits if limits is not None else Limits.from_env(), [*allowed_hosts, host])
    if arena_allow:
        limits = dataclasses.replace(limits, arena_allow=tuple(dict.fromkeys([*limits.arena_allow, *arena_allow])))
    path = Path(db).expanduser() if db is not None else default_db_path()
    app = create_app(path, limits=limits, sheets=sheets)
    shown = f"[{host}]" if ":" in host else host
    if host in ALL_INTERFACES:
        shown = "127.0.0.1"
        print(exposure_warning(limits), file=sys.stderr, flush=True)
    print(f"ggp web: open http://{shown}:{port}/  (history in {path}; API docs at /docs; Ctrl-C stops)", flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)
    # GGP_WEB_WARM=0 skips the warm-up: for servers whose compiled code is known to be cached (the tests')
    warmup = warm_in_background() if os.environ.get("GGP_WEB_WARM", "1") != "0" else None
    compile_aside()  # an uploaded sheet's first game is played while its network compiles (see ggp.gdl.aside)
    # the home page's featured sheets are grounded and drawn aside, not while someone waits for the page
    threading.Thread(
        target=app.state.manager.games.draw_featured, args=(featured_picture,), name="ggp-featured", daemon=True
    ).start()
    threading.Thread(target=app.state.manager.games.learn_boards, name="ggp-boards", daemon=True).start()
    try:
        uvicorn.Server(config).run()
    finally:
        compile_aside(False)
        if warmup is not None and warmup.process.poll() is None:
            warmup.process.terminate()
    return 0


def warm_agents() -> tuple[str, ...]:
    """The agents the web app's levels use (every family view's, see :func:`ggp.web.ui.levels`): warmed at launch.

    >>> warm_agents()
    ('amazons', 'bomberman', 'mcts', 'wallmaze')
    """
    from ..core.family import DEFAULT_LEVELS
    from ..registry import families, part

    tables = [DEFAULT_LEVELS] + [part(f, f.view).levels for f in families().values() if f.view]
    names = {spec.split(":")[0] for table in tables for spec, _ in table.values()}
    return tuple(sorted(names - {"random"}))


def warm_in_background() -> WarmUp:
    """Compile the built-in games and the agents of the levels in a child process, their progress on stderr,
    so that a first game does not wait for it (see :class:`ggp.protocol.warmup.WarmUp`). The child runs at a
    lower priority: agents of games being played come first."""
    from ..protocol.warmup import WarmUp

    def log(line: str) -> None:
        print(f"ggp web: {line}", file=sys.stderr, flush=True)

    log("warm: compiling the games and the agents in a child process (minutes on a first start)")
    return WarmUp(warm_agents(), log, games_first=True, nice=10)


def with_hosts(limits: Limits, hosts: Iterable[str]) -> Limits:
    """``limits`` that also serve ``hosts`` (names or addresses; ``0.0.0.0`` and empty names are left out).

    >>> with_hosts(Limits(), ["ggp.lan", "0.0.0.0", "::1"]).allowed_hosts
    ('127.0.0.1', 'localhost', '[::1]', '::1', 'ggp.lan')
    """
    extra = [h.strip().lower() for h in hosts if h.strip() and h.strip() not in ALL_INTERFACES]
    merged = tuple(dict.fromkeys([*limits.allowed_hosts, *extra]))
    return dataclasses.replace(limits, allowed_hosts=merged)


def exposure_warning(limits: Limits) -> str:
    """What listening on every interface exposes, for the person starting the server."""
    names = ", ".join(limits.allowed_hosts)
    return (
        "ggp web: warning: listening on every network interface. Anyone who can reach this machine can create "
        "games (using its CPU for agents), watch every game, read the history and take open seats; seats you "
        "take stay yours (a secret token in your browser). Only requests for these host names are answered: "
        f"{names}; add this machine's name or address with --allow-host NAME (or GGP_WEB_ALLOWED_HOSTS), "
        "and put it behind a TLS proxy for anything beyond a trusted network."
    )


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

    def __init__(
        self,
        db: str | Path,
        host: str = "127.0.0.1",
        port: int | None = None,
        timeout: float = 30.0,
        limits: Limits | None = None,
        sheets: str | Path | None = None,
        arena: bool = True,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.app = create_app(db, limits=limits, sheets=sheets, arena=arena)
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
