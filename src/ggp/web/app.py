"""The FastAPI application: pages to play, watch and replay, and the JSON API behind them.

Pages: ``/`` (the games and "new game"), ``/games`` (history), ``/games/{id}``
(play or watch, live), ``/games/{id}/replay`` and ``/games/{id}/record.json``
(:mod:`ggp.web.pages`). The JSON API lives under ``/api``
(:mod:`ggp.web.api`) and is documented at ``/docs``, served without any
outside host. :class:`~ggp.web.security.Guard` stands in front of it all:
body size, served hosts, cross-origin writes.

>>> import warnings
>>> with warnings.catch_warnings():  # starlette asks for httpx2 in its TestClient; httpx works as well
...     warnings.simplefilter("ignore")
...     from fastapi.testclient import TestClient
>>> with TestClient(create_app(":memory:"), base_url="http://127.0.0.1") as client:
...     match = client.post("/api/games", json={"game": "wallmaze", "players": {"black": "random"}}).json()
...     move = {"role": "white", "move": "(move 2 5 3 5)", "step": 0}
...     reply = client.post(f"/api/games/{match['id']}/moves", json=move)  # the seat's token is in the cookie
...     client.get(f"/api/games/{match['id']}", params={"wait": 5}).json()["step"]
1
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

import ggp

from . import api, arena_pages, pages
from .arena import Arena
from .arena_tally import PROVISIONAL_GAMES
from .catalog import MAX_UPLOAD_BYTES, Catalog
from .limits import Limits
from .manager import Manager
from .security import Guard, SafeJSONResponse, clip
from .store import Store, default_db_path
from .views import Presenter

_HERE = resources.files("ggp.web")
#: Where the API docs' scripts and styles are served from (a copy shipped by the fastapi-offline package).
DOCS_ASSETS = "/docs-assets"


def create_app(
    db_path: str | Path | None = None,
    *,
    limits: Limits | None = None,
    sheets: str | Path | None = None,
    arena: bool = True,
) -> FastAPI:
    """The web app over the SQLite file ``db_path`` (default: :func:`~ggp.web.store.default_db_path`).

    ``limits`` bounds everything (default: :meth:`Limits.from_env`, the defaults with ``GGP_WEB_*`` overrides).
    ``sheets`` is a directory of ``.kif`` rule sheets to offer beside the built-in games (with names and
    descriptions from a ``MANIFEST.json`` in it or its parent). ``arena``: run the arena's matchmaking loop.
    """
    limits = limits if limits is not None else Limits.from_env()
    path = str(db_path) if db_path is not None else str(default_db_path())
    store = Store(path)
    games = Catalog(sheets, store)
    manager = Manager(store, limits=limits, games=games)
    the_arena = Arena(store, limits, games)
    # views carry it: a page that outlives a restart orders views by step, as versions count from 0 again
    presenter = Presenter(manager, epoch=secrets.token_hex(4))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await manager.start()
        loop_task = asyncio.get_running_loop().create_task(the_arena.run()) if arena else None
        try:
            yield
        finally:
            if loop_task is not None:
                loop_task.cancel()
                with contextlib.suppress(BaseException):
                    await loop_task
            await the_arena.close()
            await manager.close()
            store.close()

    app = FastAPI(
        title="ggp web",
        version=ggp.__version__,
        description=api.api_description(limits),
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        default_response_class=SafeJSONResponse,
    )
    app.state.manager = manager
    app.state.arena = the_arena
    app.state.store = store
    app.state.limits = limits
    app.state.db_path = path
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    templates.env.globals["version"] = ggp.__version__
    templates.env.globals["provisional_games"] = PROVISIONAL_GAMES
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(_docs_assets())), name="docs-assets")
    manual = help_site()
    if manual is not None:
        app.mount("/help", StaticFiles(directory=str(manual), html=True), name="help")
    else:

        @app.get("/help", include_in_schema=False)
        async def no_help() -> HTMLResponse:
            return HTMLResponse(NO_HELP)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError) -> Response:
        parts = []
        for err in exc.errors():
            where = ".".join(clip(str(p), 40) for p in err.get("loc", ()))
            parts.append(f"{where}: {clip(str(err.get('msg', 'invalid')), 200)}")
        message = "; ".join(parts[:10]) or "malformed request"
        if request.url.path.startswith("/api") or request.method != "GET":
            return SafeJSONResponse({"detail": message}, status_code=400)
        return templates.TemplateResponse(
            request, "error.html", {"title": "Bad request", "message": message}, status_code=400
        )

    @app.exception_handler(HTTPException)
    async def _refused(request: Request, exc: HTTPException) -> Response:
        return SafeJSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:  # asked for by browsers and feed readers whatever the page says
        return Response((_HERE / "static" / "favicon.svg").read_bytes(), media_type="image/svg+xml")

    _api_docs(app)
    app.state.api = api.Api(manager, store, limits, presenter)
    app.include_router(api.router)
    app.state.pages = pages.Pages(manager, store, limits, templates, presenter)
    app.state.templates = templates
    app.include_router(pages.router)
    app.include_router(arena_pages.router)
    # a rule sheet (with its form encoding, up to three bytes a character) may be larger than other requests
    upload = max(limits.max_body_bytes, 3 * MAX_UPLOAD_BYTES + 4096)
    app.add_middleware(
        Guard,
        max_body_bytes=limits.max_body_bytes,
        allowed_hosts=limits.allowed_hosts,
        large_bodies={"/api/sheets": upload, "/sheets": upload},
    )
    return app


def _api_docs(app: FastAPI) -> None:
    """The API's documentation pages, /docs (Swagger UI) and /redoc, from files served here: no outside host."""

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="ggp web API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},  # the default validator is an outside host
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="ggp web API",
            redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )


#: What /help answers when no built documentation site is found.
NO_HELP = (
    "<!doctype html><title>ggp: help</title><h1>The documentation site is not built here</h1>"
    "<p>In a checkout of ggp, <code>make docs</code> builds it into <code>site/</code>, which this server then "
    "serves at /help; or set <code>GGP_WEB_HELP</code> to a built site's folder.</p>"
)


def help_site() -> Path | None:
    """The built documentation site /help serves: ``$GGP_WEB_HELP``, else ``site/`` of the source checkout
    this package runs from (``make docs`` builds it there); None when neither holds an ``index.html``."""
    named = os.environ.get("GGP_WEB_HELP")
    folder = Path(named) if named else Path(ggp.__file__).resolve().parents[2] / "site"
    return folder if (folder / "index.html").is_file() else None


def _docs_assets() -> Path:
    """The folder of Swagger UI's and ReDoc's files that the ``fastapi-offline`` package ships."""
    try:
        root = resources.files("fastapi_offline")
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "the web app serves its API docs from the fastapi-offline package: pip install 'ggp[web]'",
            name="fastapi_offline",
        ) from None
    return Path(str(root / "static"))
