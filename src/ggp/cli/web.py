"""``ggp web``: serve the web app (:mod:`ggp.web`), which needs the ``web`` extra."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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
    p.add_argument(
        "--sheets",
        default=None,
        metavar="DIR",
        help="also offer the .kif rule sheets in DIR (names and descriptions from a MANIFEST.json in DIR or its parent)",
    )
    p.add_argument(
        "--arena-allow",
        action="append",
        default=[],
        metavar="NET",
        help="let arena players register URLs in this network or host although it is loopback or private "
        "(e.g. 127.0.0.0/8); repeatable; also $GGP_WEB_ARENA_ALLOW",
    )
    p.set_defaults(func=cmd_web)


def cmd_web(args: argparse.Namespace) -> int:
    try:
        from ..web.server import serve  # looked up at each run: tests replace it
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("fastapi", "uvicorn", "jinja2", "starlette", "pydantic"):
            raise UsageError(f"the web app needs {exc.name}: pip install 'ggp[web]'") from None
        raise
    extra: dict[str, Any] = {}
    if args.sheets is not None:
        if not Path(args.sheets).expanduser().is_dir():
            raise UsageError(f"--sheets must be a directory of .kif rule sheets; {args.sheets} is not one")
        extra["sheets"] = args.sheets
    if args.arena_allow:
        extra["arena_allow"] = args.arena_allow
    return serve(args.host, args.port, args.db, allowed_hosts=args.allow_host, **extra)
