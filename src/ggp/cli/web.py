"""``ggp web``: serve the web app (:mod:`ggp.web`), which needs the ``web`` extra."""

from __future__ import annotations

import argparse

from .argtypes import port
from .common import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "web",
        help="serve the web app: play, watch and replay games in a browser",
        description="Serve the web app (needs pip install 'ggp[web]'). Every game is kept in a SQLite file.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=8000, help="port to listen on (default 8000; 0: any free)")
    p.add_argument(
        "--db",
        default=None,
        metavar="PATH",
        help="the SQLite history (default: $GGP_WEB_DB or ~/.local/share/ggp/web.sqlite3)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (the app answers loopback names only); repeatable",
    )
    p.set_defaults(func=cmd_web)


def cmd_web(args: argparse.Namespace) -> int:
    try:
        from ..web.server import serve  # looked up at each run: tests replace it
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("fastapi", "uvicorn", "jinja2", "starlette", "pydantic"):
            raise UsageError(f"the web app needs {exc.name}: pip install 'ggp[web]'") from None
        raise
    return serve(args.host, args.port, args.db, allowed_hosts=args.allow_host)
