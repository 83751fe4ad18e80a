"""The HTML pages: the games, the history, play / watch, replay, and the new-game form."""

import asyncio
import re
import urllib.parse
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from ..agents import AGENTS
from ..core.game import Game
from ..registry import game_names, view_of
from . import seats as seat_cookies
from . import ui
from .api_shared import NewMatch, QuickPlay, at_most, detail, quick_play, record_of, sheet_info
from .catalog import MAX_UPLOAD_BYTES
from .limits import Limits
from .live_match import LimitReached, LiveMatch
from .manager import Manager
from .security import SafeJSONResponse, clip
from .settings import HUMAN, Settings, agent_catalog
from .store import Store
from .views import Presenter, is_match_id, page_family, summary, text_record

#: Matches on one page of the history.
PER_PAGE = 50


class Pages:
    """What the pages work with: the manager, store and catalog, the limits, the templates, how a match is shown."""

    def __init__(
        self, manager: Manager, store: Store, limits: Limits, templates: Jinja2Templates, presenter: Presenter
    ) -> None:
        self.manager = manager
        self.store = store
        self.games = manager.games
        self.limits = limits
        self.templates = templates
        self.echo = limits.max_echo_chars
        self.show = presenter.show

    def error(
        self, request: Request, status: int, title: str, message: str, headers: dict[str, str] | None = None
    ) -> Response:
        """The error page."""
        return self.templates.TemplateResponse(
            request, "error.html", {"title": title, "message": message}, status_code=status, headers=headers
        )

    async def find(self, request: Request, match_id: str) -> LiveMatch | Response:
        """The match, or the page to answer instead (404, or 503 when the server is full)."""
        try:
            match = await self.manager.get(match_id) if is_match_id(match_id) else None
        except LimitReached as exc:
            retry = {"Retry-After": str(exc.retry_after)}
            return self.error(request, 503, "The server is busy", str(exc), retry)
        return match if match is not None else self.not_found(request, match_id)

    def not_found(self, request: Request, match_id: str) -> Response:
        """The 404 page of an unknown match."""
        return self.error(
            request, 404, "No such game", f"There is no game {clip(match_id, self.echo)!r} in this server's history."
        )

    def titled(self, row: dict[str, Any]) -> dict[str, Any]:
        """A match summary with its game's title."""
        row["title"] = self.games.title(row["game"])
        return row


#: The HTML pages; each app keeps the :class:`Pages` they work with in ``app.state.pages``.
router = APIRouter(include_in_schema=False)


def _pages(request: Request) -> Pages:
    return request.app.state.pages


#: The app's :class:`Pages`.
ThePages = Annotated[Pages, Depends(_pages)]


def _page(
    request: Request, page: Annotated[int, Query(ge=1, description="`Limits.max_page_offset` / 50 + 1")] = 1
) -> int:
    return at_most("page", page, _pages(request).limits.max_page_offset // PER_PAGE + 1)


# --- the home page and its one-click games ------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
async def home(pages: ThePages, request: Request) -> Response:
    cards = []
    for entry in pages.games.builtins():
        name = entry.key
        game = pages.games.load(name)
        cards.append(
            {
                "name": name,
                "title": entry.title,
                "description": entry.description,
                "levels": list(ui.levels(game)),
                "roles": game.roles,
                "svg": game.svg(game.initial_state(), 260),
                "rules": list(game.rules_summary),
                "agents": ui.agents_for(game, AGENTS),
            }
        )
    return pages.templates.TemplateResponse(
        request,
        "home.html",
        {
            "cards": cards,
            "agents": agent_catalog(),
            "default_agent": "random" if "random" in AGENTS else sorted(AGENTS)[0],
            "example_options": "seed=3",
            "recent": [pages.titled(summary(m)) for m in pages.store.list(limit=8)],
            "limits": pages.limits,
            "has_sheets": pages.games.sheets_dir is not None,
            "featured": pages.games.featured(),
        },
    )


@router.post("/play")
async def play_from_form(pages: ThePages, request: Request) -> Response:
    form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=16)
    fields = {k: v[0].strip() for k, v in form.items() if v}
    try:
        body = QuickPlay.model_validate(
            {k: fields[k] for k in ("game", "mode", "level", "side", "from_game", "from_step") if k in fields}
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return pages.error(request, 400, "Cannot start that game", detail(problems, limit=pages.echo))
    try:
        match, tokens = await quick_play(pages.manager, pages.limits, body)
    except LimitReached as exc:
        return pages.error(request, 503, "The server is busy", str(exc), {"Retry-After": str(exc.retry_after)})
    except ValueError as exc:
        return pages.error(request, 400, "Cannot start that game", detail(str(exc), body.game, limit=pages.echo))
    response = RedirectResponse(f"/games/{match.id}", status_code=303)
    seat_cookies.remember(response, request, match.id, tokens)
    return response


# --- the rule sheets: the list, uploading one, a sheet's page -----------------------------------------


def featured_picture(game: Game) -> str:
    """A featured sheet's first board, small, for the home page."""
    return ui.board_svg(game, game.initial_state(), 180)


@router.get("/sheets", response_class=HTMLResponse)
async def sheets_page(pages: ThePages, request: Request) -> Response:
    return _sheets(pages, request)


def _sheets(pages: Pages, request: Request, upload: dict[str, Any] | None = None, status: int = 200) -> Response:
    """The sheets page; with ``upload`` (a refused upload's name, rules and error), its form filled in again."""
    return pages.templates.TemplateResponse(
        request,
        "sheets.html",
        {
            "sheets": pages.games.sheets(),
            "uploads": pages.games.uploads(),
            "directory": pages.games.sheets_dir is not None,
            "max_upload": MAX_UPLOAD_BYTES,
            "upload": upload or {},
        },
        status_code=status,
    )


def _near(text: str, message: str, around: int = 2) -> list[tuple[int, str, bool]]:
    """The lines of ``text`` around the one ``message`` names (``line N``), numbered, that one marked."""
    found = re.search(r"\bline (\d+)", message)
    if found is None:
        return []
    lines = text.splitlines()
    at = int(found.group(1))
    if not 1 <= at <= len(lines):
        return []
    return [(n, lines[n - 1][:200], n == at) for n in range(max(1, at - around), min(len(lines), at + around) + 1)]


@router.post("/sheets")
async def upload_from_form(pages: ThePages, request: Request) -> Response:
    form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=8)
    name = form.get("name", [""])[0]
    text = form.get("rules", [""])[0]
    try:
        entry = await asyncio.to_thread(pages.games.upload, name, text)
    except ValueError as exc:
        message = detail(str(exc), limit=4000)
        upload = {"name": name, "rules": text, "error": message, "near": _near(text, message)}
        return _sheets(pages, request, upload, status=400)  # the form kept, the line pointed at
    return RedirectResponse(f"/sheets/{urllib.parse.quote(entry.key)}", status_code=303)


@router.get("/sheets/{key}", response_class=HTMLResponse)
async def sheet_page(pages: ThePages, request: Request, key: str) -> Response:
    try:
        info = await sheet_info(pages.manager, key, pages.echo)
    except HTTPException as exc:
        return pages.error(request, exc.status_code, "No such game", str(exc.detail))
    game = pages.games.load(key)
    svg = ui.board_svg(game, game.initial_state(), 320) if page_family(game) == "grid" else ""
    return pages.templates.TemplateResponse(request, "sheet.html", {"s": info, "svg": svg})


# --- the new-game form's match ------------------------------------------------------------------------


@router.post("/new")
async def new_from_form(pages: ThePages, request: Request) -> Response:
    form = urllib.parse.parse_qs(
        (await request.body()).decode("utf-8", "replace"), max_num_fields=4 * seat_cookies._MAX_SEATS + 8
    )

    def field(key: str, default: str = "") -> str:
        return form.get(key, [default])[0].strip()

    name = field("game")
    roles = pages.games.load(name).roles if name in game_names() else ()
    players = {}
    for role in roles:
        who = field(f"player_{role}", HUMAN) or HUMAN
        options = field(f"options_{role}")
        players[role] = f"{who}:{options}" if options and who != HUMAN else who
    seats = [r for r in roles if players[r] == HUMAN and not field(f"open_{r}")]
    try:
        body = NewMatch.model_validate(
            {
                "game": name,
                "players": players,
                "agent_time": field("agent_time", "1") or "1",
                "pace": field("pace", "0") or "0",
                "human_time": field("human_time", "0") or "0",
                "seats": seats,
            }
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return pages.error(request, 400, "Cannot start that game", detail(problems, limit=pages.echo))
    try:
        settings = Settings(agent_time=body.agent_time, pace=body.pace, human_time=body.human_time)
        match, tokens = await pages.manager.create(body.game, body.players, settings, seats=body.seats)
    except LimitReached as exc:
        retry = {"Retry-After": str(exc.retry_after)}
        return pages.error(request, 503, "The server is busy", str(exc), retry)
    except ValueError as exc:
        return pages.error(
            request, 400, "Cannot start that game", detail(str(exc), name, *players.values(), limit=pages.echo)
        )
    response = RedirectResponse(f"/games/{match.id}", status_code=303)
    seat_cookies.remember(response, request, match.id, tokens)
    return response


# --- the history, and a match's play, replay and record -----------------------------------------------


@router.get("/games", response_class=HTMLResponse)
async def history(
    pages: ThePages,
    request: Request,
    page: Annotated[int, Depends(_page)],
    status: Literal["playing", "over"] | None = None,
) -> Response:
    rows = pages.store.list(limit=PER_PAGE, offset=(page - 1) * PER_PAGE, status=status)
    total = pages.store.count(status)
    return pages.templates.TemplateResponse(
        request,
        "history.html",
        {
            "games": [pages.titled(summary(m)) for m in rows],
            "page": page,
            "pages": max(1, (total + PER_PAGE - 1) // PER_PAGE),
            "total": total,
            "status": status,
        },
    )


@router.get("/games/{match_id}", response_class=HTMLResponse)
async def play_page(pages: ThePages, request: Request, match_id: str) -> Response:
    match = await pages.find(request, match_id)
    if isinstance(match, Response):
        return match
    return pages.templates.TemplateResponse(
        request,
        "play.html",
        {
            "m": pages.show(match, request, svg=True),
            "family": page_family(match.game),
            "controls": ui.controls(match.game),
            "view": view_of(match.game),
            "rules": list(match.game.rules_summary),
        },
    )


@router.get("/games/{match_id}/replay", response_class=HTMLResponse)
async def replay_page(pages: ThePages, request: Request, match_id: str) -> Response:
    match = await pages.find(request, match_id)
    if isinstance(match, Response):
        return match
    return pages.templates.TemplateResponse(
        request,
        "replay.html",
        {
            "m": pages.show(match),
            "svg0": ui.board_svg(match.game, match.states[0]),
            "levels": list(ui.levels(match.game)),
        },
    )


@router.get("/games/{match_id}/record.txt")
async def download_text(pages: ThePages, request: Request, match_id: str) -> Response:
    match = await pages.find(request, match_id)
    if isinstance(match, Response):
        return match
    name = f"ggp-{match.key.replace(':', '-')}-{match.id}.txt"
    return Response(
        text_record(match, pages.games.title(match.key)),
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'inline; filename="{name}"'},
    )


@router.get("/games/{match_id}/record.json")
async def download(pages: ThePages, match_id: str) -> SafeJSONResponse:
    record = record_of(pages.store, match_id, pages.echo, pages.games)
    name = f"ggp-{record['game']}-{match_id}.json"
    return SafeJSONResponse(record, headers={"Content-Disposition": f'attachment; filename="{name}"'})
