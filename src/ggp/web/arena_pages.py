"""The arena's JSON API (``/api/arena``) and pages (``/arena``): registration, players, matches, ratings.

Changing a player (pause, resume, remove) needs its owner's token, answered
once by registration (taking an uploaded sheet out of the arena, the token
adding it answered): an API client sends it in the ``X-GGP-Arena-Token``
header; a browser keeps it in an HttpOnly cookie set by the registration.
"""

import urllib.parse
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, Field

from .api_shared import at_most
from .arena import Arena, ArenaError
from .limits import Limits
from .security import SafeJSONResponse

HEADER = "X-GGP-Arena-Token"
COOKIE = "ggp_arena"


class PlayerIn(BaseModel):
    """A remote GGP player to register."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=200, description="the player's name", examples=["my-player"])
    url: str = Field(max_length=400, description="where it answers GGP messages", examples=["http://host:9147"])
    contact: str = Field("", max_length=200, description="how to reach its owner (optional)")


class GameIn(BaseModel):
    """An uploaded sheet for the arena to play."""

    model_config = ConfigDict(extra="forbid")

    game: str = Field(max_length=200, description="the upload's catalog key (POST /api/sheets answers it)")


class StatusIn(BaseModel):
    """A player's new status."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["active", "paused"] = Field(description="active (play matches) or paused")


def _tokens(request: Request) -> dict[str, str]:
    """The player tokens this browser holds (``id:token`` pairs in the cookie)."""
    out = {}
    for part in (request.cookies.get(COOKIE) or "").split(","):
        pid, _, token = part.partition(":")
        if pid and token:
            out[pid] = token
    return out


def _token(request: Request, player_id: str) -> str | None:
    return request.headers.get(HEADER) or _tokens(request).get(player_id)


def _remember(response: Response, request: Request, player_id: str, token: str) -> None:
    tokens = {**_tokens(request), player_id: token}
    value = ",".join(f"{p}:{t}" for p, t in list(tokens.items())[-40:])
    response.set_cookie(
        COOKIE, value, max_age=365 * 86400, httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )


def _game_id(key: str) -> str:
    """The name an added sheet's token goes by in the cookie (whose pairs are ``id:token``): ``game-HASH``."""
    return "game-" + key.partition(":")[2]


def _refused(exc: ArenaError) -> HTTPException:
    return HTTPException(exc.status, exc.message)


def _client(request: Request) -> str:
    """The client's address (the arena counts registrations per address)."""
    return request.client.host if request.client else "?"


#: The arena's JSON API (``/api/arena``).
api = APIRouter(prefix="/api/arena", tags=["arena"])
#: The arena's pages, and (included at the end of this module) its API: what an app mounts.
router = APIRouter()


def _arena(request: Request) -> Arena:
    return request.app.state.arena


def _limits(request: Request) -> Limits:
    return request.app.state.limits


#: The app's arena and limits.
TheArena = Annotated[Arena, Depends(_arena)]
TheLimits = Annotated[Limits, Depends(_limits)]


def _wait(
    request: Request,
    wait: Annotated[float, Query(ge=0, allow_inf_nan=False, description="seconds (`Limits.max_wait`)")] = 0.0,
) -> float:
    return at_most("wait", wait, _limits(request).max_wait)


# --- the players: the list, registering, one player, pausing and removing one's own -------------------


@api.get("/players", summary="The players (registered ones and ggp's agents) with their overall ratings")
async def api_players(arena: TheArena) -> dict[str, Any]:
    ratings = {r["id"]: r for r in await arena.ratings_off_loop()}
    return {"players": [{**p.public(), "rating": ratings.get(p.id)} for p in arena.players()]}


@api.post(
    "/players",
    status_code=201,
    summary="Register a remote GGP player by URL (it must answer INFO); answers the owner's `token`",
    responses={400: {"description": "bad or refused URL, or no INFO answer"}, 409: {"description": "taken"}},
)
async def api_register(arena: TheArena, body: PlayerIn, request: Request, response: Response) -> dict[str, Any]:
    try:
        player, token = await arena.register(body.name, body.url, body.contact, _client(request))
    except ArenaError as exc:
        raise _refused(exc) from None
    _remember(response, request, player.id, token)
    return {**player.public(), "token": token}


@api.get("/players/{player_id}", summary="A player, its ratings and its recent matches")
async def api_player(arena: TheArena, player_id: str) -> dict[str, Any]:
    try:
        player = arena.player(player_id)
    except ArenaError as exc:
        raise _refused(exc) from None
    return {
        **player.public(),
        "rating": next((r for r in await arena.ratings_off_loop() if r["id"] == player.id), None),
        "matches": arena.matches(limit=30, player_id=player.id),
        "pauses": arena.pauses(player.id),
    }


@api.post("/players/{player_id}/status", summary="Pause or resume your player (owner's token)")
async def api_status(arena: TheArena, player_id: str, body: StatusIn, request: Request) -> dict[str, Any]:
    try:
        return arena.set_status(player_id, _token(request, player_id), body.status).public()
    except ArenaError as exc:
        raise _refused(exc) from None


@api.delete("/players/{player_id}", status_code=204, summary="Remove your player (owner's token)")
async def api_remove(arena: TheArena, player_id: str, request: Request) -> Response:
    try:
        arena.set_status(player_id, _token(request, player_id), "removed")
    except ArenaError as exc:
        raise _refused(exc) from None
    return Response(status_code=204)


# --- the games played (with uploads added and taken out), the matches and their records, the ratings ---


@api.get("/games", summary="The games the arena plays in turn: the operator's, then uploaded sheets added")
async def api_games(arena: TheArena, limits: TheLimits) -> dict[str, Any]:
    return {"games": [arena.game_info(k) for k in arena.game_keys()], "max_uploads": limits.arena_uploads}


@api.post(
    "/games",
    status_code=201,
    summary="Add an uploaded sheet to the arena's games; answers the `token` that may take it out",
    responses={404: {"description": "no such upload"}, 409: {"description": "played already, or full"}},
)
async def api_add_game(arena: TheArena, body: GameIn, request: Request, response: Response) -> dict[str, Any]:
    try:
        info, token = await arena.add_game(body.game)
    except ArenaError as exc:
        raise _refused(exc) from None
    _remember(response, request, _game_id(info["game"]), token)
    return {**info, "token": token}


@api.delete("/games/{key}", status_code=204, summary="Take an uploaded sheet out of the arena (its token)")
async def api_remove_game(arena: TheArena, key: str, request: Request) -> Response:
    try:
        arena.remove_game(key, _token(request, _game_id(key)))
    except ArenaError as exc:
        raise _refused(exc) from None
    return Response(status_code=204)


@api.get("/matches", summary="Arena matches, newest first")
async def api_matches(
    arena: TheArena,
    limit: Annotated[int, Query(ge=1, le=200)] = 30,
    status: Literal["running", "over", "failed"] | None = None,
) -> dict[str, Any]:
    return {"matches": arena.matches(limit=limit, status=status)}


@api.get("/matches/{match_id}", summary="A match as the live viewer shows it (`wait` for the next step)")
async def api_match(
    arena: TheArena,
    match_id: str,
    wait: Annotated[float, Depends(_wait)],
    version: Annotated[int, Query(ge=-1)] = -1,
) -> dict[str, Any]:
    live = arena.live.get(match_id)
    if live is not None and wait and version == live.version:
        await live.wait_change(version, wait)
    try:
        return arena.view(match_id)
    except ArenaError as exc:
        raise _refused(exc) from None


@api.get("/matches/{match_id}/record", summary="The match record in ggp's format")
async def api_record(arena: TheArena, match_id: str) -> SafeJSONResponse:
    try:
        _, record, _ = arena.record(match_id)
    except ArenaError as exc:
        raise _refused(exc) from None
    name = f"ggp-arena-{match_id}.json"
    return SafeJSONResponse(record.to_dict(), headers={"Content-Disposition": f'inline; filename="{name}"'})


@api.get("/matches/{match_id}/ggp-base", summary="The match record in ggp-base's match JSON")
async def api_ggp_base(arena: TheArena, match_id: str) -> SafeJSONResponse:
    try:
        data = arena.ggp_base(match_id)
    except ArenaError as exc:
        raise _refused(exc) from None
    name = f"ggp-base-{match_id}.json"
    return SafeJSONResponse(data, headers={"Content-Disposition": f'inline; filename="{name}"'})


@api.get("/ratings", summary="Bradley-Terry ratings with 95 % intervals, over all games or one")
async def api_ratings(arena: TheArena, game: Annotated[str | None, Query(max_length=120)] = None) -> dict[str, Any]:
    return {"game": game, "ratings": await arena.ratings_off_loop(game)}


# --- the arena's pages: the arena, a player, a match, and the forms that register, add, change --------


def error(request: Request, status: int, title: str, message: str) -> Response:
    """The error page."""
    return _templates(request).TemplateResponse(
        request, "error.html", {"title": title, "message": message}, status_code=status
    )


def _templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


@router.get("/arena", response_class=HTMLResponse, include_in_schema=False)
async def arena_page(arena: TheArena, limits: TheLimits, request: Request) -> Response:
    keys = arena.game_keys()
    per_game = {g: await arena.ratings_off_loop(g) for g in keys}
    overall = await arena.ratings_off_loop()
    mine = set(_tokens(request))
    return _templates(request).TemplateResponse(
        request,
        "arena.html",
        {
            "ratings": overall,
            "per_game": {g: rows for g, rows in per_game.items() if rows},
            "titles": {g: arena.games.title(g) for g in keys},
            "uploaded": [g for g in keys if g not in limits.arena_games],
            "addable": [e for e in arena.games.uploads(20) if e.key not in keys],
            "mine_games": {g for g in keys if _game_id(g) in mine},
            "players": arena.players(),
            "running": arena.matches(limit=20, status="running"),
            "recent": arena.matches(limit=20),
            "limits": limits,
            "mine": mine,
        },
    )


@router.post("/arena/players", include_in_schema=False)
async def register_from_form(arena: TheArena, request: Request) -> Response:
    form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=8)
    field = {k: v[0] for k, v in form.items() if v}
    try:
        player, token = await arena.register(
            field.get("name", ""), field.get("url", ""), field.get("contact", ""), _client(request)
        )
    except ArenaError as exc:
        return error(request, exc.status, "Cannot register that player", exc.message)
    response = RedirectResponse(f"/arena/players/{player.id}", status_code=303)
    _remember(response, request, player.id, token)
    return response


@router.post("/arena/games", include_in_schema=False)
async def add_game_from_form(arena: TheArena, request: Request) -> Response:
    form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=4)
    key = (form.get("game") or [""])[0]
    try:
        info, token = await arena.add_game(key)
    except ArenaError as exc:
        return error(request, exc.status, "Cannot add that sheet to the arena", exc.message)
    response = RedirectResponse("/arena#games", status_code=303)
    _remember(response, request, _game_id(info["game"]), token)
    return response


@router.post("/arena/games/{key}/remove", include_in_schema=False)
async def remove_game_from_form(arena: TheArena, request: Request, key: str) -> Response:
    try:
        arena.remove_game(key, _token(request, _game_id(key)))
    except ArenaError as exc:
        return error(request, exc.status, "Cannot take that sheet out of the arena", exc.message)
    return RedirectResponse("/arena#games", status_code=303)


@router.post("/arena/players/{player_id}/{action}", include_in_schema=False)
async def change_from_form(arena: TheArena, request: Request, player_id: str, action: str) -> Response:
    status = {"pause": "paused", "resume": "active", "remove": "removed"}.get(action)
    if status is None:
        return error(request, 404, "No such action", "a player can be paused, resumed or removed")
    try:
        arena.set_status(player_id, _token(request, player_id), status)
    except ArenaError as exc:
        return error(request, exc.status, "Cannot change that player", exc.message)
    return RedirectResponse("/arena" if status == "removed" else f"/arena/players/{player_id}", status_code=303)


@router.get("/arena/players/{player_id}", response_class=HTMLResponse, include_in_schema=False)
async def player_page(arena: TheArena, request: Request, player_id: str) -> Response:
    try:
        player = arena.player(player_id)
    except ArenaError as exc:
        return error(request, exc.status, "No such player", exc.message)
    return _templates(request).TemplateResponse(
        request,
        "arena_player.html",
        {
            "p": player,
            "rating": next((r for r in await arena.ratings_off_loop() if r["id"] == player.id), None),
            "matches": arena.matches(limit=30, player_id=player.id),
            "pauses": arena.pauses(player.id),
            "owner": player.id in _tokens(request),
        },
    )


@router.get("/arena/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
async def match_page(arena: TheArena, request: Request, match_id: str) -> Response:
    try:
        view = arena.view(match_id)
    except ArenaError as exc:
        return error(request, exc.status, "No such match", exc.message)
    return _templates(request).TemplateResponse(request, "arena_match.html", {"m": view})


router.include_router(api)
