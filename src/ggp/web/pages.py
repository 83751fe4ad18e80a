"""The HTML pages: the games, the history, play / watch, replay, and the new-game form."""

import asyncio
import urllib.parse
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from ..agents import AGENTS
from ..registry import game_names
from . import seats as seat_cookies
from . import ui
from .api import NewMatch, QuickPlay, detail, quick_play, record_of, sheet_info
from .catalog import MAX_UPLOAD_BYTES
from .limits import Limits
from .live_match import LimitReached, LiveMatch
from .manager import Manager
from .security import SafeJSONResponse, clip
from .settings import HUMAN, Settings, agent_catalog
from .store import Store
from .views import Presenter, is_match_id, page_family, summary

#: Matches on one page of the history.
PER_PAGE = 50


def build_router(
    manager: Manager, store: Store, limits: Limits, templates: Jinja2Templates, presenter: Presenter
) -> APIRouter:
    """The pages over ``manager`` and ``store``."""
    router = APIRouter(include_in_schema=False)
    echo = limits.max_echo_chars
    shown = presenter.show

    def error(
        request: Request, status: int, title: str, message: str, headers: dict[str, str] | None = None
    ) -> Response:
        return templates.TemplateResponse(
            request, "error.html", {"title": title, "message": message}, status_code=status, headers=headers
        )

    async def find(request: Request, match_id: str) -> LiveMatch | Response:
        """The match, or the page to answer instead (404, or 503 when the server is full)."""
        try:
            match = await manager.get(match_id) if is_match_id(match_id) else None
        except LimitReached as exc:
            retry = {"Retry-After": str(exc.retry_after)}
            return error(request, 503, "The server is busy", str(exc), retry)
        return match if match is not None else not_found(request, match_id)

    def not_found(request: Request, match_id: str) -> Response:
        return error(
            request, 404, "No such game", f"There is no game {clip(match_id, echo)!r} in this server's history."
        )

    games = manager.games

    @router.get("/", response_class=HTMLResponse)
    async def home(request: Request) -> Response:
        cards = []
        for entry in games.builtins():
            name = entry.key
            game = games.load(name)
            cards.append(
                {
                    "name": name,
                    "title": entry.title,
                    "description": entry.description,
                    "levels": list(ui.LEVELS[ui.family(game)]),
                    "roles": game.roles,
                    "svg": game.svg(game.initial_state(), 260),
                    "rules": list(game.rules_summary),
                    "agents": ui.agents_for(game, AGENTS),
                }
            )
        return templates.TemplateResponse(
            request,
            "home.html",
            {
                "cards": cards,
                "agents": agent_catalog(),
                "default_agent": "random" if "random" in AGENTS else sorted(AGENTS)[0],
                "example_options": "seed=3",
                "recent": [titled(summary(m)) for m in store.list(limit=8)],
                "limits": limits,
                "has_sheets": games.sheets_dir is not None,
            },
        )

    def titled(row: dict[str, Any]) -> dict[str, Any]:
        row["title"] = games.title(row["game"])
        return row

    @router.post("/play")
    async def play_from_form(request: Request) -> Response:
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=16)
        fields = {k: v[0].strip() for k, v in form.items() if v}
        try:
            body = QuickPlay.model_validate({k: fields[k] for k in ("game", "mode", "level", "side") if k in fields})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            return error(request, 400, "Cannot start that game", detail(problems, limit=echo))
        try:
            match, tokens = await quick_play(manager, limits, body)
        except LimitReached as exc:
            return error(request, 503, "The server is busy", str(exc), {"Retry-After": str(exc.retry_after)})
        except ValueError as exc:
            return error(request, 400, "Cannot start that game", detail(str(exc), body.game, limit=echo))
        response = RedirectResponse(f"/games/{match.id}", status_code=303)
        seat_cookies.remember(response, request, match.id, tokens)
        return response

    @router.get("/sheets", response_class=HTMLResponse)
    async def sheets_page(request: Request) -> Response:
        return templates.TemplateResponse(
            request,
            "sheets.html",
            {
                "sheets": games.sheets(),
                "uploads": games.uploads(),
                "directory": games.sheets_dir is not None,
                "max_upload": MAX_UPLOAD_BYTES,
            },
        )

    @router.post("/sheets")
    async def upload_from_form(request: Request) -> Response:
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=8)
        name = form.get("name", [""])[0]
        text = form.get("rules", [""])[0]
        try:
            entry = await asyncio.to_thread(games.upload, name, text)
        except ValueError as exc:
            return error(request, 400, "That rule sheet does not load", detail(str(exc), limit=4000))
        return RedirectResponse(f"/sheets/{urllib.parse.quote(entry.key)}", status_code=303)

    @router.get("/sheets/{key}", response_class=HTMLResponse)
    async def sheet_page(request: Request, key: str) -> Response:
        try:
            info = await sheet_info(manager, key, echo)
        except HTTPException as exc:
            return error(request, exc.status_code, "No such game", str(exc.detail))
        game = games.load(key)
        svg = ui.board_svg(game, game.initial_state(), 320) if page_family(game) == "grid" else ""
        return templates.TemplateResponse(request, "sheet.html", {"s": info, "svg": svg})

    @router.post("/new")
    async def new_from_form(request: Request) -> Response:
        form = urllib.parse.parse_qs(
            (await request.body()).decode("utf-8", "replace"), max_num_fields=4 * seat_cookies._MAX_SEATS + 8
        )

        def field(key: str, default: str = "") -> str:
            return form.get(key, [default])[0].strip()

        name = field("game")
        roles = games.load(name).roles if name in game_names() else ()
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
            return error(request, 400, "Cannot start that game", detail(problems, limit=echo))
        try:
            settings = Settings(agent_time=body.agent_time, pace=body.pace, human_time=body.human_time)
            match, tokens = await manager.create(body.game, body.players, settings, seats=body.seats)
        except LimitReached as exc:
            retry = {"Retry-After": str(exc.retry_after)}
            return error(request, 503, "The server is busy", str(exc), retry)
        except ValueError as exc:
            return error(request, 400, "Cannot start that game", detail(str(exc), name, *players.values(), limit=echo))
        response = RedirectResponse(f"/games/{match.id}", status_code=303)
        seat_cookies.remember(response, request, match.id, tokens)
        return response

    @router.get("/games", response_class=HTMLResponse)
    async def history(
        request: Request,
        page: Annotated[int, Query(ge=1, le=limits.max_page_offset // PER_PAGE + 1)] = 1,
        status: Literal["playing", "over"] | None = None,
    ) -> Response:
        rows = store.list(limit=PER_PAGE, offset=(page - 1) * PER_PAGE, status=status)
        total = store.count(status)
        return templates.TemplateResponse(
            request,
            "history.html",
            {
                "games": [titled(summary(m)) for m in rows],
                "page": page,
                "pages": max(1, (total + PER_PAGE - 1) // PER_PAGE),
                "total": total,
                "status": status,
            },
        )

    @router.get("/games/{match_id}", response_class=HTMLResponse)
    async def play_page(request: Request, match_id: str) -> Response:
        match = await find(request, match_id)
        if isinstance(match, Response):
            return match
        return templates.TemplateResponse(
            request,
            "play.html",
            {
                "m": shown(match, request, svg=True),
                "family": page_family(match.game),
                "rules": list(match.game.rules_summary),
            },
        )

    @router.get("/games/{match_id}/replay", response_class=HTMLResponse)
    async def replay_page(request: Request, match_id: str) -> Response:
        match = await find(request, match_id)
        if isinstance(match, Response):
            return match
        return templates.TemplateResponse(
            request,
            "replay.html",
            {"m": shown(match), "svg0": ui.board_svg(match.game, match.states[0])},
        )

    @router.get("/games/{match_id}/record.json")
    async def download(match_id: str) -> SafeJSONResponse:
        record = record_of(store, match_id, echo, games)
        name = f"ggp-{record['game']}-{match_id}.json"
        return SafeJSONResponse(record, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    return router
