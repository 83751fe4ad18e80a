"""The FastAPI application: pages to play, watch and replay, and the JSON API behind them.

Pages: ``/`` (the games and "new game"), ``/games`` (history), ``/games/{id}``
(play or watch, live), ``/games/{id}/replay`` and ``/games/{id}/record.json``.
The JSON API lives under ``/api`` and is documented at ``/docs``.

>>> import warnings
>>> with warnings.catch_warnings():  # starlette asks for httpx2 in its TestClient; httpx works as well
...     warnings.simplefilter("ignore")
...     from fastapi.testclient import TestClient
>>> with TestClient(create_app(":memory:")) as client:
...     match = client.post("/api/games", json={"game": "wallmaze", "players": {"black": "random"}}).json()
...     reply = client.post(f"/api/games/{match['id']}/moves", json={"role": "white", "move": "(move 2 5 3 5)"})
...     client.get(f"/api/games/{match['id']}", params={"wait": 5}).json()["step"]
1
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field

import ggp

from ..agents import AGENTS
from ..core.registry import games as builtin_games
from ..core.registry import load
from . import ui
from .record import iso, match_record
from .sessions import HUMAN, Manager, Match, MoveRejected, Settings, agent_catalog
from .store import Store, StoredMatch, default_db_path

_HERE = resources.files("ggp.web")
#: Longest a request may wait (``wait=`` seconds) for agents to move.
MAX_WAIT = 60.0


# --- request bodies -------------------------------------------------------------------------------
class NewMatch(BaseModel):
    """A new match: the game, who plays each role, and how agents are timed."""

    game: str = Field(description="a game name, as listed by GET /api/catalog", examples=["wallmaze"])
    players: dict[str, str] = Field(
        default_factory=dict,
        description="role -> 'human' or an agent spec such as 'random:seed=3'; roles left out are human",
        examples=[{"white": "human", "black": "random"}],
    )
    agent_time: float = Field(1.0, description="seconds an agent may think per move (its play clock)")
    pace: float = Field(0.0, description="seconds at least between steps of a match without people, for watching")


class MoveIn(BaseModel):
    """A person's move. Only ``role`` and ``move`` are needed."""

    role: Any = Field(None, description="the role moving", examples=["white"])
    move: Any = Field(
        None, description="KIF text such as '(move 2 5 3 5)', or the game's short notation ('e', 'd1-d5')"
    )
    step: Any = Field(None, description="optional: the step this move is for; a stale step is refused with 409")


# --- the app --------------------------------------------------------------------------------------
def create_app(db_path: str | Path | None = None, *, workers: int = 4) -> FastAPI:
    """The web app over the SQLite file ``db_path`` (default: :func:`~ggp.web.store.default_db_path`)."""
    path = str(db_path) if db_path is not None else str(default_db_path())
    store = Store(path)
    manager = Manager(store, workers=workers)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await manager.close()
        store.close()

    app = FastAPI(
        title="ggp web",
        version=ggp.__version__,
        description=(
            "Play, watch and replay the ggp games. Moves are KIF text in the rule sheets' spelling, e.g. "
            "`(move 2 5 3 5)`, `(fire 2 5)`, `dropBomb`, `noop`. A match moves on by itself while agents play; "
            "`wait=SECONDS` on a GET or a move makes the answer wait until people must move again or the match "
            "is over. An illegal or malformed move is answered with 400 and a message naming the legal moves, "
            "and changes nothing."
        ),
        lifespan=lifespan,
    )
    app.state.manager = manager
    app.state.store = store
    app.state.db_path = path
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    templates.env.globals["version"] = ggp.__version__
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()))
            parts.append(f"{where}: {err.get('msg', 'invalid')}")
        return JSONResponse({"detail": "; ".join(parts) or "malformed request"}, status_code=400)

    async def get_match(match_id: str) -> Match:
        match = await manager.get(match_id)
        if match is None:
            raise HTTPException(404, f"no match {match_id!r}")
        return match

    # --- API ------------------------------------------------------------------------------------
    @app.get("/api/catalog", tags=["api"], summary="The games and the registered agents")
    async def api_catalog() -> dict[str, Any]:
        out = []
        for name in builtin_games():
            game = load(name)
            out.append(
                {
                    "name": name,
                    "roles": list(game.roles),
                    "description": game.description,
                    "agents": ui.agents_for(game, AGENTS),
                }
            )
        return {"games": out, "agents": agent_catalog(), "human": HUMAN}

    @app.get("/api/games", tags=["api"], summary="List matches, newest first")
    async def api_list(
        limit: int = Query(50, ge=1, le=500),
        offset: int = Query(0, ge=0),
        status: str | None = Query(None, pattern="^(playing|over)$"),
    ) -> dict[str, Any]:
        rows = store.list(limit=limit, offset=offset, status=status)
        return {"total": store.count(status), "games": [summary(m) for m in rows]}

    @app.post("/api/games", tags=["api"], status_code=201, summary="Create a match")
    async def api_create(body: NewMatch) -> dict[str, Any]:
        try:
            match = await manager.create(body.game, body.players, Settings(agent_time=body.agent_time, pace=body.pace))
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        return view(match)

    @app.get("/api/games/{match_id}", tags=["api"], summary="A match's current state")
    async def api_get(
        match_id: str,
        svg: bool = Query(False, description="include the board as SVG"),
        wait: float = Query(0.0, ge=0, description="first wait up to this many seconds for agents to move"),
    ) -> dict[str, Any]:
        match = await get_match(match_id)
        if wait:
            await manager.wait_idle(match, min(wait, MAX_WAIT))
        return view(match, svg=svg)

    @app.get("/api/games/{match_id}/legal", tags=["api"], summary="A role's legal moves now")
    async def api_legal(match_id: str, role: str) -> dict[str, Any]:
        match = await get_match(match_id)
        if role not in match.roles:
            raise HTTPException(400, f"{match.game.name} has no role {role!r}; its roles are {', '.join(match.roles)}")
        return {
            "role": role,
            "step": match.step,
            "terminal": match.over,
            "moves": ui.annotate(match.game, match.state, role),
        }

    @app.post(
        "/api/games/{match_id}/moves",
        tags=["api"],
        summary="Submit a person's move",
        responses={400: {"description": "illegal or malformed move (names the legal moves)"}, 409: {}},
    )
    async def api_move(
        match_id: str,
        body: MoveIn,
        svg: bool = Query(False, description="include the board as SVG"),
        wait: float = Query(0.0, ge=0, description="then wait up to this many seconds for agents to move"),
    ) -> JSONResponse:
        match = await get_match(match_id)
        step = body.step
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            return JSONResponse({"detail": f"step must be a whole number, not {step!r}"}, status_code=400)
        role = body.role
        if not isinstance(role, str):
            roles = ", ".join(match.roles)
            return JSONResponse({"detail": f"role must be one of {roles}, not {role!r}"}, status_code=400)
        try:
            manager.submit(match, role, body.move, step)
        except MoveRejected as exc:
            return JSONResponse({"detail": exc.message, "legal": exc.legal}, status_code=exc.status)
        if wait:
            await manager.wait_idle(match, min(wait, MAX_WAIT))
        return JSONResponse(view(match, svg=svg))

    @app.get("/api/games/{match_id}/steps/{step}", tags=["api"], summary="The state after a step (for replays)")
    async def api_step(match_id: str, step: int) -> dict[str, Any]:
        match = await get_match(match_id)
        if not 0 <= step <= match.step:
            raise HTTPException(404, f"step {step} is not in this match (0..{match.step})")
        state = match.states[step]
        game = match.game
        terminal = game.is_terminal(state)
        return {
            "step": step,
            "steps": match.step,
            "joint": dict(zip(match.roles, match.joints[step - 1], strict=True)) if step else None,
            "state": game.state_to_dict(state),
            "terminal": terminal,
            "goals": dict(zip(match.roles, game.goals(state), strict=True)) if terminal else None,
            "svg": ui.board_svg(game, state),
        }

    @app.get("/api/games/{match_id}/record", tags=["api"], summary="The match record (JSON)")
    async def api_record(match_id: str) -> dict[str, Any]:
        return record_of(match_id)

    @app.get(
        "/api/games/{match_id}/events",
        tags=["api"],
        summary="Server-sent events: the match's view (with SVG) at every change",
        response_class=StreamingResponse,
    )
    async def api_events(match_id: str, request: Request) -> StreamingResponse:
        match = await get_match(match_id)

        async def stream() -> AsyncIterator[str]:
            seen = -1
            yield "retry: 2000\n\n"
            while True:
                if match.version != seen:
                    seen = match.version
                    yield f"event: update\ndata: {json.dumps(view(match, svg=True))}\n\n"
                elif not await match.wait_change(seen, 15.0):
                    yield ": keep-alive\n\n"
                if await request.is_disconnected():
                    return

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    def record_of(match_id: str) -> dict[str, Any]:
        stored = store.load(match_id)
        if stored is None:
            raise HTTPException(404, f"no match {match_id!r}")
        return match_record(load(stored.game), stored)

    # --- pages ----------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def home(request: Request) -> Response:
        cards = []
        for name in builtin_games():
            game = load(name)
            cards.append(
                {
                    "name": name,
                    "description": game.description,
                    "roles": game.roles,
                    "svg": game.svg(game.initial_state(), 260),
                    "rules": ui.RULES.get(name, []),
                    "agents": ui.agents_for(game, AGENTS),
                }
            )
        recent = store.list(limit=8)
        agents = agent_catalog()
        return templates.TemplateResponse(
            request,
            "home.html",
            {
                "cards": cards,
                "agents": agents,
                "default_agent": "random" if "random" in AGENTS else sorted(AGENTS)[0],
                "example_options": "seed=3",
                "recent": [summary(m) for m in recent],
            },
        )

    @app.post("/new", include_in_schema=False)
    async def new_from_form(request: Request) -> Response:
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"))

        def field(key: str, default: str = "") -> str:
            return form.get(key, [default])[0].strip()

        name = field("game")
        try:
            game = load(name) if name in builtin_games() else None
            if game is None:
                raise ValueError(f"unknown game {name!r}")
            players = {}
            for role in game.roles:
                who = field(f"player_{role}", HUMAN) or HUMAN
                options = field(f"options_{role}")
                players[role] = f"{who}:{options}" if options and who != HUMAN else who
            settings = Settings(agent_time=float(field("agent_time", "1") or 1), pace=float(field("pace", "0") or 0))
            match = await manager.create(name, players, settings)
        except ValueError as exc:
            return templates.TemplateResponse(
                request, "error.html", {"title": "Cannot start that game", "message": str(exc)}, status_code=400
            )
        return RedirectResponse(f"/games/{match.id}", status_code=303)

    @app.get("/games", response_class=HTMLResponse, include_in_schema=False)
    async def history(request: Request, page: int = Query(1, ge=1), status: str | None = None) -> Response:
        per_page = 50
        status = status if status in ("playing", "over") else None
        rows = store.list(limit=per_page, offset=(page - 1) * per_page, status=status)
        total = store.count(status)
        return templates.TemplateResponse(
            request,
            "history.html",
            {
                "games": [summary(m) for m in rows],
                "page": page,
                "pages": max(1, (total + per_page - 1) // per_page),
                "total": total,
                "status": status,
            },
        )

    @app.get("/games/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    async def play_page(request: Request, match_id: str) -> Response:
        match = await manager.get(match_id)
        if match is None:
            return not_found(request, match_id)
        return templates.TemplateResponse(
            request,
            "play.html",
            {"m": view(match, svg=True), "family": ui.family(match.game), "rules": ui.RULES.get(match.game.name, [])},
        )

    @app.get("/games/{match_id}/replay", response_class=HTMLResponse, include_in_schema=False)
    async def replay_page(request: Request, match_id: str) -> Response:
        match = await manager.get(match_id)
        if match is None:
            return not_found(request, match_id)
        return templates.TemplateResponse(
            request,
            "replay.html",
            {"m": view(match, svg=False), "svg0": ui.board_svg(match.game, match.states[0])},
        )

    @app.get("/games/{match_id}/record.json", include_in_schema=False)
    async def download(match_id: str) -> JSONResponse:
        record = record_of(match_id)
        name = f"ggp-{record['game']}-{match_id}.json"
        return JSONResponse(record, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    def not_found(request: Request, match_id: str) -> Response:
        return templates.TemplateResponse(
            request,
            "error.html",
            {"title": "No such game", "message": f"There is no game {match_id!r} in this server's history."},
            status_code=404,
        )

    return app


# --- JSON views ---------------------------------------------------------------------------------------
def view(match: Match, svg: bool = False) -> dict[str, Any]:
    """What the API and the play page show of a match now."""
    game, state = match.game, match.state
    over = match.over
    legal = {}
    to_act = []
    awaiting = match.awaiting()
    for role in match.roles:
        moves = sorted(game.legal_moves(state, role))
        if not over and not (len(moves) == 1 and moves[0].text == "noop"):
            to_act.append(role)
        if role in awaiting:
            legal[role] = ui.annotate(game, state, role, moves)
    last = dict(zip(match.roles, match.joints[-1], strict=True)) if match.joints else None
    out: dict[str, Any] = {
        "id": match.id,
        "game": game.name,
        "family": ui.family(game),
        "roles": list(match.roles),
        "players": dict(zip(match.roles, match.players, strict=True)),
        "settings": asdict(match.settings),
        "created": iso(match.created),
        "version": match.version,
        "step": match.step,
        "status": "over" if over else "playing",
        "terminal": over,
        "goals": dict(zip(match.roles, game.goals(state), strict=True)) if over else None,
        "state": game.state_to_dict(state),
        "to_act": to_act,
        "awaiting": awaiting,
        "submitted": [r for r in match.roles if r in match.pending and not over],
        "thinking": {r: round(max(0.0, time.time() - t), 3) for r, t in match.thinking.items()},
        "legal": legal,
        "last_joint": last,
        "notes": list(match.notes),
    }
    if svg:
        out["svg"] = ui.board_svg(game, state)
    return out


def summary(m: StoredMatch) -> dict[str, Any]:
    """A stored match in one line of the history."""
    return {
        "id": m.id,
        "game": m.game,
        "players": dict(zip(m.roles, m.players, strict=True)),
        "status": m.status,
        "steps": m.steps,
        "goals": dict(zip(m.roles, m.goals, strict=True)) if m.goals is not None else None,
        "created": iso(m.created),
        "updated": iso(m.updated),
    }
