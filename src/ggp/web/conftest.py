"""Doctest collection: skip the web modules when the ``web`` extra is not installed."""

from __future__ import annotations

import importlib.util

_MISSING = [
    m for m in ("fastapi", "fastapi_offline", "uvicorn", "jinja2", "httpx") if importlib.util.find_spec(m) is None
]
collect_ignore_glob = (
    ["app.py", "server.py", "api.py", "pages.py", "views.py", "seats.py", "security.py"] if _MISSING else []
)
