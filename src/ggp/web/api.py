"""The JSON API under ``/api``: matches, moves, seats and live event streams.

Every write names its match's seat by a token (see :mod:`ggp.web.seats`);
every request body is a pydantic model, every parameter is bounded by
:class:`~ggp.web.limits.Limits`, and every error is ``{"detail": "..."}`` with
a status that says whose fault it is (400 malformed, 403 not your seat, 404
unknown, 409 too late, 413 too large, 429/503 busy: try again after
``Retry-After`` seconds).
"""

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictInt
from starlette.types import Receive, Scope, Send

from ..agents import AGENTS
from . import seats as seat_cookies
from . import ui
from .catalog import Catalog
from .limits import Limits
from .live_match import LimitReached, LiveMatch, MoveRejected
from .manager import Manager
from .record import match_record
from .security import SafeJSONResponse, clip
from .settings import HUMAN, Settings, agent_catalog
from .store import Store
from .views import Presenter, is_match_id, summary

#: Most matches one event stream follows.
MAX_STREAM_GAMES = 100
#: Seconds between keep-alive comments on an idle event stream (proxies close silent connections).
KEEPALIVE = 15.0


# --- request bodies -------------------------------------------------------------------------------
class NewMatch(BaseModel):
    """A new match: the game, who plays each role, how agents are timed, and which seats the creator takes."""

    model_config = ConfigDict(extra="forbid")

    game: str = Field(description="a game name, as listed by GET /api/catalog", examples=["wallmaze"])
    players: dict[str, str] = Field(
        default_factory=dict,
        description="role -> 'human' or an agent spec such as 'random:seed=3'; roles left out are human",
        examples=[{"white": "human", "black": "random"}],
    )
    agent_time: float = Field(1.0, gt=0, allow_inf_nan=False, description="seconds an agent may think per move")
    pace: float = Field(
        0.0, ge=0, allow_inf_nan=False, description="seconds at least between steps of a match without people"
    )
    human_time: float = Field(
        0.0,
        ge=0,
        allow_inf_nan=False,
        description="seconds a person has per move (0: no clock); when it runs out a random legal move is played",
    )
    seats: list[str] | None = Field(
        None,
        description="the human roles the creator takes (default: all); the others stay open for others to join",
        examples=[["white"]],
    )


class MoveIn(BaseModel):
    """A person's move for the step the client saw."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description="the role moving (a seat this client owns)", examples=["white"])
    move: JsonValue = Field(
        description="KIF text such as '(move 2 5 3 5)', or the game's short notation ('e', 'd1-d5')",
        examples=["(move 2 5 3 5)"],
    )
    step: StrictInt = Field(
        ge=0,
        description="the step this move is for (the view's `step`); a move for another step is refused with 409",
        examples=[0],
    )


class QuickPlay(BaseModel):
    """A game in one click: against the computer at a level, against a friend by link, or agents watched."""

    model_config = ConfigDict(extra="forbid")

    game: str = Field(description="a game key, as listed by GET /api/catalog", examples=["wallmaze"])
    mode: Literal["computer", "friend", "watch"] = Field(
        "computer", description="computer: you against an agent; friend: the other seats open; watch: agents only"
    )
    level: Literal["easy", "medium", "hard"] = Field("medium", description="the computer's strength")
    side: str | None = Field(None, description="the role you play (default: the first role)", examples=["white"])
    human_time: float = Field(
        0.0, ge=0, allow_inf_nan=False, description="your seconds per move (0: no clock; see POST /api/games)"
    )


class SheetIn(BaseModel):
    """A rule sheet to upload."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("", max_length=200, description="a name for the game", examples=["Tic-tac-toe"])
    rules: str = Field(description="the GDL rule sheet (KIF text)")


class ResignIn(BaseModel):
    """Who resigns."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description="the resigning role (a seat this client owns)", examples=["white"])


_AUTH = (
    "Human seats belong to whoever took them: the creator of a match (all its human seats, or those named in "
    "`seats`) or whoever joined an open seat (`POST /api/games/{id}/seats/{role}`). Each seat has a secret token, "
    "returned as `tokens` when it is taken and kept by browsers in an HttpOnly cookie; an API client sends it in "
    f"the `{seat_cookies.HEADER}` header. A move, resignation, abort or delete without the seat's token is "
    "refused with 403; anyone may watch."
)


def api_description(limits: Limits) -> str:
    """The OpenAPI description: how moves, waiting, seats and limits work."""
    return (
        "Play, watch and replay the ggp games. Moves are KIF text in the rule sheets' spelling, e.g. "
        "`(move 2 5 3 5)`, `(fire 2 5)`, `dropBomb`, `noop`, with the `step` they are for. A match moves on by "
        "itself while agents play; `wait=SECONDS` on a GET or a move makes the answer wait until people must move "
        "again or the match is over. An illegal or malformed move is answered with 400 and a message naming the "
        "legal moves, and changes nothing.\n\n"
        f"**Seats.** {_AUTH}\n\n"
        f"**Limits.** Request bodies up to {limits.max_body_bytes} bytes (413 beyond); `agent_time` up to "
        f"{limits.max_agent_time:g} s, `pace` up to {limits.max_pace:g} s, `human_time` up to {limits.max_human_time:g} s; `wait` up to {limits.max_wait:g} s; "
        f"`offset` up to {limits.max_page_offset}, `limit` up to {limits.max_page_size}; "
        f"{limits.max_streams_per_client} event streams per client (429 beyond); at most "
        f"{limits.max_live_matches} matches in play at once (503 with `Retry-After` beyond). Writes from pages of "
        "other origins are refused (403), and so are requests for hosts the server does not serve (421)."
    )


def detail(message: str, *inputs: object, limit: int = 80) -> str:
    """An error message that quotes each long client input in ``inputs`` by its first ``limit`` characters."""
    for text in sorted({str(i) for i in inputs if isinstance(i, str) and len(i) > limit}, key=len, reverse=True):
        message = message.replace(text, clip(text, limit))
        message = message.replace(repr(text), repr(clip(text, limit)))
    return message if len(message) <= 4000 else clip(message, 4000)


def build_router(manager: Manager, store: Store, limits: Limits, presenter: Presenter) -> APIRouter:
    """The ``/api`` routes over ``manager`` and ``store``."""
    router = APIRouter(prefix="/api", tags=["api"])
    echo = limits.max_echo_chars
    streams: Counter[str] = Counter()  # open event streams per client address

    async def find(match_id: str) -> LiveMatch | None:
        """The match, or None; 503 when the server is too full to reopen it."""
        try:
            return await manager.get(match_id) if is_match_id(match_id) else None
        except LimitReached as exc:
            raise busy(exc) from None

    async def get_match(match_id: str) -> LiveMatch:
        match = await find(match_id)
        if match is None:
            raise HTTPException(404, f"no match {clip(match_id, echo)!r}")
        return match

    shown = presenter.show

    def rejected(exc: MoveRejected, *inputs: object) -> SafeJSONResponse:
        body: dict[str, Any] = {"detail": detail(exc.message, *inputs, limit=echo)}
        if exc.legal:
            body["legal"] = exc.legal
        return SafeJSONResponse(body, status_code=exc.status)

    def busy(exc: LimitReached) -> HTTPException:
        return HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)})

    Wait = Annotated[
        float,
        Query(ge=0, le=limits.max_wait, allow_inf_nan=False, description="wait up to this many seconds for agents"),
    ]
    Svg = Annotated[bool, Query(description="include the board as SVG")]

    # --- reading ----------------------------------------------------------------------------------
    @router.get("/catalog", summary="The games (built-in, from the sheet directory, uploaded) and the agents")
    async def api_catalog() -> dict[str, Any]:
        out = []
        for entry in manager.games.builtins():
            game = manager.games.load(entry.key)
            out.append(
                {
                    "name": entry.key,
                    "title": entry.title,
                    "roles": list(game.roles),
                    "description": entry.description,
                    "agents": ui.agents_for(game, AGENTS),
                    "levels": list(ui.LEVELS[ui.family(game)]),
                }
            )
        sheets = [
            {"name": e.key, "title": e.title, "description": e.description, "source": e.source}
            for e in manager.games.sheets() + manager.games.uploads()
        ]
        return {"games": out, "sheets": sheets, "agents": agent_catalog(), "human": HUMAN}

    @router.get("/sheets/{key}", summary="A rule sheet's game: roles, name, description (the sheet is grounded)")
    async def api_sheet(key: Annotated[str, Path(max_length=120)]) -> dict[str, Any]:
        return await sheet_info(manager, key, echo)

    @router.post(
        "/sheets",
        status_code=201,
        summary="Upload a rule sheet; it is checked by the reasoner and then offered like any game",
        responses={400: {"description": "the sheet does not load (the reasoner's message)"}},
    )
    async def api_upload(body: SheetIn) -> dict[str, Any]:
        try:
            entry = await asyncio.to_thread(manager.games.upload, body.name, body.rules)
        except ValueError as exc:
            raise HTTPException(400, detail(str(exc), limit=4000)) from None
        return await sheet_info(manager, entry.key, echo)

    @router.post(
        "/play",
        status_code=201,
        summary="Start a game in one click: against the computer at a level, a friend by link, or watch agents",
        responses={400: {"description": "bad game, level or side"}, 503: {"description": "too busy"}},
    )
    async def api_play(body: QuickPlay, request: Request, response: Response) -> dict[str, Any]:
        try:
            match, tokens = await quick_play(manager, limits, body)
        except LimitReached as exc:
            raise busy(exc) from None
        except ValueError as exc:
            raise HTTPException(400, detail(str(exc), body.game, body.side, limit=echo)) from None
        seat_cookies.remember(response, request, match.id, tokens)
        out = shown(match)
        out["mine"] = [r for r in match.roles if r in tokens]
        return out

    @router.post(
        "/games/{match_id}/rematch",
        status_code=201,
        summary="A new match of the same game with the seats swapped; you keep your side of the board's player",
        responses={403: {"description": "you hold no seat of a match with people"}},
    )
    async def api_rematch(match_id: str, request: Request, response: Response) -> Any:
        match = await get_match(match_id)
        seats = seat_cookies.Seats(request)
        mine = [r for r in match.roles if manager.owns(match, r, seats.token(r))]
        if match.has_humans and not mine:
            return rejected(MoveRejected(403, "only a player of this match can ask for a rematch; start a new game"))
        if match.rematch is not None:
            again = await find(match.rematch)
            if again is not None and not again.over:
                # the other player asked first: join the open seat meant for us
                wanted = [rotate(match.roles, r) for r in mine]
                tokens = {}
                for role in wanted:
                    with contextlib.suppress(MoveRejected):
                        tokens[role] = manager.claim_seat(again, role)
                seat_cookies.remember(response, request, again.id, tokens)
                out = shown(again)
                out["mine"] = [r for r in again.roles if r in tokens]
                return out
        players = {rotate(match.roles, r): p for r, p in zip(match.roles, match.players, strict=True)}
        take = [rotate(match.roles, r) for r in mine]
        try:
            again, tokens = await manager.create(match.key, players, match.settings, seats=take)
        except LimitReached as exc:
            raise busy(exc) from None
        except ValueError as exc:
            raise HTTPException(400, detail(str(exc), limit=echo)) from None
        match.rematch = again.id
        match.changed()
        seat_cookies.remember(response, request, again.id, tokens)
        out = shown(again)
        out["mine"] = [r for r in again.roles if r in tokens]
        return out

    @router.get("/games", summary="List matches, newest first")
    async def api_list(
        limit: Annotated[int, Query(ge=1, le=limits.max_page_size)] = 50,
        offset: Annotated[int, Query(ge=0, le=limits.max_page_offset)] = 0,
        status: Literal["playing", "over"] | None = None,
    ) -> dict[str, Any]:
        rows = store.list(limit=limit, offset=offset, status=status)
        return {"total": store.count(status), "games": [summary(m) for m in rows]}

    @router.get("/games/{match_id}", summary="A match's current state (with `mine`: the seats you own)")
    async def api_get(match_id: str, request: Request, svg: Svg = False, wait: Wait = 0.0) -> dict[str, Any]:
        match = await get_match(match_id)
        if wait:
            with manager.watch(match):  # a waiting client keeps the match in memory, as a stream does
                await manager.wait_idle(match, wait)
        return shown(match, request, svg=svg)

    @router.get("/games/{match_id}/legal", summary="A role's legal moves now")
    async def api_legal(match_id: str, role: Annotated[str, Query(max_length=200)]) -> dict[str, Any]:
        match = await get_match(match_id)
        if role not in match.roles:
            raise HTTPException(
                400, f"{match.game.name} has no role {clip(role, echo)!r}; its roles are {', '.join(match.roles)}"
            )
        return {
            "role": role,
            "step": match.step,
            "terminal": match.over,
            "moves": [] if match.over else ui.annotate(match.game, match.state, role),
        }

    @router.get("/games/{match_id}/steps/{step}", summary="The state after a step (for replays)")
    async def api_step(match_id: str, step: Annotated[int, Path(ge=0, le=10**9)]) -> dict[str, Any]:
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

    @router.get("/games/{match_id}/record", summary="The match record (JSON)")
    async def api_record(match_id: str) -> dict[str, Any]:
        return record_of(store, match_id, echo, manager.games)

    # --- writing ----------------------------------------------------------------------------------
    @router.post(
        "/games",
        status_code=201,
        summary="Create a match; you own the human seats you take (their tokens are in `tokens`)",
        responses={400: {"description": "bad game, players or settings"}, 503: {"description": "too busy"}},
    )
    async def api_create(body: NewMatch, request: Request, response: Response) -> dict[str, Any]:
        settings = Settings(agent_time=body.agent_time, pace=body.pace, human_time=body.human_time)
        try:
            match, tokens = await manager.create(body.game, body.players, settings, seats=body.seats)
        except LimitReached as exc:
            raise busy(exc) from None
        except ValueError as exc:
            inputs = [body.game, *body.players, *body.players.values(), *(body.seats or [])]
            raise HTTPException(400, detail(str(exc), *inputs, limit=echo)) from None
        seat_cookies.remember(response, request, match.id, tokens)
        out = shown(match)
        out["mine"] = [r for r in match.roles if r in tokens]
        out["tokens"] = tokens
        return out

    @router.post(
        "/games/{match_id}/seats/{role}",
        status_code=201,
        summary="Take an open human seat; answers its token (and keeps it in the browser's cookie)",
        responses={409: {"description": "the seat is taken"}, 400: {"description": "not a human seat"}},
    )
    async def api_claim(
        match_id: str, role: Annotated[str, Path(max_length=200)], request: Request, response: Response
    ) -> Any:
        match = await get_match(match_id)
        try:
            token = manager.claim_seat(match, role)
        except MoveRejected as exc:
            return rejected(exc, role)
        seat_cookies.remember(response, request, match.id, {role: token})
        return {"id": match.id, "role": role, "token": token}

    @router.post(
        "/games/{match_id}/moves",
        summary="Submit a move for a seat you own",
        responses={
            400: {"description": "illegal or malformed move (names the legal moves)"},
            403: {"description": "not your seat"},
            409: {"description": "a move for another step, or the seat has moved already"},
        },
    )
    async def api_move(
        match_id: str, body: MoveIn, request: Request, svg: Svg = False, wait: Wait = 0.0
    ) -> SafeJSONResponse:
        match = await get_match(match_id)
        seats = seat_cookies.Seats(request)
        try:
            manager.submit(match, body.role, body.move, body.step, seats.token(body.role))
        except MoveRejected as exc:
            return rejected(exc, body.role, body.move)
        if wait:
            with manager.watch(match):
                await manager.wait_idle(match, wait)
        return SafeJSONResponse(shown(match, request, svg=svg))

    @router.post(
        "/games/{match_id}/resign",
        summary="Resign a seat you own: the match ends, the other roles win",
        responses={403: {"description": "not your seat"}, 409: {"description": "the match is over"}},
    )
    async def api_resign(match_id: str, body: ResignIn, request: Request) -> Any:
        match = await get_match(match_id)
        try:
            await manager.resign(match, body.role, seat_cookies.Seats(request).token(body.role))
        except MoveRejected as exc:
            return rejected(exc, body.role)
        return shown(match, request, svg=True)

    @router.post(
        "/games/{match_id}/draw",
        summary="Offer a draw for a seat you own, or accept the other's offer (matches of people only)",
        responses={403: {"description": "not your seat"}, 409: {"description": "the match is over"}},
    )
    async def api_draw(match_id: str, body: ResignIn, request: Request) -> Any:
        match = await get_match(match_id)
        try:
            await manager.offer_draw(match, body.role, seat_cookies.Seats(request).token(body.role))
        except MoveRejected as exc:
            return rejected(exc, body.role)
        return shown(match, request, svg=True)

    @router.post(
        "/games/{match_id}/abort",
        summary="Abort a match before its first move (any seat owner)",
        responses={403: {"description": "you own no seat"}, 409: {"description": "moves were made"}},
    )
    async def api_abort(match_id: str, request: Request) -> Any:
        match = await get_match(match_id)
        try:
            await manager.abort(match, owner_token(match, request))
        except MoveRejected as exc:
            return rejected(exc)
        return shown(match, request, svg=True)

    @router.delete(
        "/games/{match_id}",
        status_code=204,
        summary="Delete a finished match from the history (an owner of one of its seats)",
        responses={403: {"description": "you own no seat"}, 409: {"description": "the match is being played"}},
    )
    async def api_delete(match_id: str, request: Request) -> Response:
        match = await get_match(match_id)
        try:
            await manager.delete(match.id, owner_token(match, request))
        except MoveRejected as exc:
            return rejected(exc)
        return Response(status_code=204)

    def owner_token(match: LiveMatch, request: Request) -> str | None:
        """A token of the request that owns some seat of ``match`` (the first one that does), else None."""
        tokens = seat_cookies.Seats(request).tokens()
        for token in tokens:
            if any(manager.owns(match, role, token) for role in match.roles):
                return token
        return tokens[0] if tokens else None

    # --- event streams ----------------------------------------------------------------------------
    async def events(matches: list[LiveMatch], missing: list[str], request: Request) -> StreamingResponse:
        client = request.client.host if request.client else "?"
        if streams[client] >= limits.max_streams_per_client:
            raise HTTPException(
                429,
                f"this client has {streams[client]} event streams open, the most allowed; "
                "close one (one stream can follow many games: /api/events?games=a,b)",
                headers={"Retry-After": "5"},
            )
        streams[client] += 1

        def release() -> None:
            streams[client] -= 1
            if streams[client] <= 0:
                del streams[client]

        async def stream() -> AsyncIterator[str]:
            with contextlib.ExitStack() as watching:
                for m in matches:
                    watching.enter_context(manager.watch(m))
                async for chunk in _stream(matches, missing):
                    yield chunk

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return _EventStream(stream(), release, headers=headers)

    async def _stream(matches: list[LiveMatch], missing: list[str]) -> AsyncIterator[str]:
        yield "retry: 2000\n\n"
        for match_id in missing:
            yield f"event: gone\ndata: {json.dumps({'id': match_id})}\n\n"
        seen = dict.fromkeys((m.id for m in matches), -1)
        live = list(matches)
        while live:
            for m in list(live):
                if m.closed is not None:  # deleted (a watched match is not unloaded)
                    yield f"event: gone\ndata: {json.dumps({'id': m.id})}\n\n"
                    live.remove(m)
                    continue
                if m.version != seen[m.id]:
                    seen[m.id] = m.version
                    yield f"event: update\ndata: {json.dumps(shown(m, svg=True))}\n\n"
                if m.over:  # its last view is out: nothing more will come
                    live.remove(m)
            if not live:
                break
            if not await _any_change(live, seen, KEEPALIVE):
                yield ": keep-alive\n\n"
        yield "event: end\ndata: {}\n\n"

    @router.get(
        "/games/{match_id}/events",
        summary="Server-sent events: the match's view (with SVG) at every change; ends when the match is over",
        response_class=StreamingResponse,
        responses={429: {"description": "too many streams open"}},
    )
    async def api_events(match_id: str, request: Request) -> StreamingResponse:
        return await events([await get_match(match_id)], [], request)

    @router.get(
        "/events",
        summary="Server-sent events for several matches on one connection (`update` views, `gone`, `end`)",
        response_class=StreamingResponse,
        responses={429: {"description": "too many streams open"}},
    )
    async def api_events_many(
        request: Request,
        games: Annotated[
            str, Query(max_length=MAX_STREAM_GAMES * 65, description="match ids separated by commas", examples=["a,b"])
        ],
    ) -> StreamingResponse:
        ids = list(dict.fromkeys(g.strip() for g in games.split(",") if g.strip()))
        if not ids or len(ids) > MAX_STREAM_GAMES:
            raise HTTPException(400, f"games must name 1 to {MAX_STREAM_GAMES} match ids separated by commas")
        matches, missing = [], []
        for match_id in ids:
            match = await find(match_id)
            if match is None:
                missing.append(clip(match_id, echo))
            else:
                matches.append(match)
        return await events(matches, missing, request)

    return router


class _EventStream(StreamingResponse):
    """A ``text/event-stream`` answer that calls ``release`` when it ends, however it ends."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], None], headers: dict[str, str]) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


async def _any_change(matches: list[LiveMatch], seen: dict[str, int], timeout: float) -> bool:
    """Wait until one of ``matches`` changes past the version in ``seen`` (True) or ``timeout`` passes (False)."""
    if len(matches) == 1:
        return await matches[0].wait_change(seen[matches[0].id], timeout)
    waits = [asyncio.ensure_future(m.wait_change(seen[m.id], timeout)) for m in matches]
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        return any(t.result() for t in done)
    finally:
        for t in waits:
            t.cancel()


def record_of(store: Store, match_id: str, echo: int = 80, games: Catalog | None = None) -> dict[str, Any]:
    """The match record of a stored match; 404 if there is none."""
    stored = store.load(match_id) if is_match_id(match_id) else None
    if stored is None:
        raise HTTPException(404, f"no match {clip(match_id, echo)!r}")
    return match_record((games or Catalog()).load(stored.game), stored)


def rotate(roles: tuple[str, ...], role: str) -> str:
    """Where ``role``'s player sits in a rematch: the next role (white -> black -> white)."""
    return roles[(roles.index(role) + 1) % len(roles)]


async def quick_play(manager: Manager, limits: Limits, body: QuickPlay) -> tuple[LiveMatch, dict[str, str]]:
    """Create the match a :class:`QuickPlay` asks for; ``ValueError`` / :class:`LimitReached` as create does."""
    if not manager.games.known(body.game):
        raise ValueError(f"unknown game {body.game!r}; see GET /api/catalog for the games")
    game = await asyncio.to_thread(manager.games.load, body.game)
    side = body.side or game.roles[0]
    if side not in game.roles:
        raise ValueError(f"{game.name} has no role {side!r}; its roles are {', '.join(game.roles)}")
    spec, seconds = ui.level(game, body.level, limits.max_agent_time)
    if spec not in ui.agents_for(game, AGENTS) and spec.split(":")[0] not in ui.agents_for(game, AGENTS):
        spec = "random"
    if body.mode == "watch":
        players = dict.fromkeys(game.roles, spec)
        settings = Settings(agent_time=seconds, pace=min(0.5, limits.max_pace))
        return await manager.create(body.game, players, settings)
    if body.mode == "friend":
        players = dict.fromkeys(game.roles, HUMAN)
    else:
        players = {r: (HUMAN if r == side else spec) for r in game.roles}
    settings = Settings(agent_time=seconds, human_time=body.human_time)
    return await manager.create(body.game, players, settings, seats=[side])


async def sheet_info(manager: Manager, key: str, echo: int) -> dict[str, Any]:
    """What the catalog knows of a game, with its roles (loading the sheet if needed); 404 if unknown."""
    if not manager.games.known(key):
        raise HTTPException(404, f"no game {clip(key, echo)!r}; see GET /api/catalog")
    try:
        game = await asyncio.to_thread(manager.games.load, key)
    except ValueError as exc:
        raise HTTPException(400, detail(str(exc), limit=4000)) from None
    entry = manager.games.entry(key)
    return {
        "name": key,
        "title": entry.title,
        "description": entry.description,
        "source": entry.source,
        "roles": list(game.roles),
        "levels": list(ui.LEVELS["other"]),
        # propnet, or prover for a sheet too large to ground (slower, and only agents without a kernel play it)
        "engine": getattr(game, "engine", "native"),
    }
