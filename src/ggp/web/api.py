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
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from ..agents import AGENTS
from ..match.outcome import outcome
from . import seats as seat_cookies
from . import ui
from .api_events import MAX_STREAM_GAMES, EventStreams
from .api_shared import (
    HIDDEN_RECORD,
    MoveIn,
    NewMatch,
    QuickPlay,
    ResignIn,
    SheetIn,
    at_most,
    detail,
    quick_play,
    record_of,
    rotate,
    sheet_info,
)
from .limits import Limits
from .live_match import LimitReached, LiveMatch, MoveRejected
from .manager import Manager
from .review import review
from .security import SafeJSONResponse, clip
from .settings import HUMAN, Settings, agent_catalog
from .store import Store
from .views import Presenter, is_match_id, summary

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


class Api:
    """What the routes work with: the manager and store, the limits, how a match is shown, the event streams."""

    def __init__(self, manager: Manager, store: Store, limits: Limits, presenter: Presenter) -> None:
        self.manager = manager
        self.store = store
        self.limits = limits
        self.echo = limits.max_echo_chars
        self.show = presenter.show
        self.streams = EventStreams(manager, limits, presenter)

    async def find(self, match_id: str) -> LiveMatch | None:
        """The match, or None; 503 when the server is too full to reopen it."""
        try:
            return await self.manager.get(match_id) if is_match_id(match_id) else None
        except LimitReached as exc:
            raise self.busy(exc) from None

    async def get_match(self, match_id: str) -> LiveMatch:
        """The match; 404 if there is none."""
        match = await self.find(match_id)
        if match is None:
            raise HTTPException(404, f"no match {clip(match_id, self.echo)!r}")
        return match

    def rejected(self, exc: MoveRejected, *inputs: object) -> SafeJSONResponse:
        """The answer to a refused request, quoting ``inputs`` shortened (with the legal moves when known)."""
        body: dict[str, Any] = {"detail": detail(exc.message, *inputs, limit=self.echo)}
        if exc.legal:
            body["legal"] = exc.legal
        return SafeJSONResponse(body, status_code=exc.status)

    @staticmethod
    def busy(exc: LimitReached) -> HTTPException:
        """503 with ``Retry-After``: the server is too full."""
        return HTTPException(503, str(exc), headers={"Retry-After": str(exc.retry_after)})

    def owner_token(self, match: LiveMatch, request: Request) -> str | None:
        """A token of the request that owns some seat of ``match`` (the first one that does), else None."""
        tokens = seat_cookies.Seats(request).tokens()
        for token in tokens:
            if any(self.manager.owns(match, role, token) for role in match.roles):
                return token
        return tokens[0] if tokens else None


#: The ``/api`` routes; each app keeps the :class:`Api` they work with in ``app.state.api``.
router = APIRouter(prefix="/api", tags=["api"])


def _api(request: Request) -> Api:
    return request.app.state.api


#: Include the board as SVG.
Svg = Annotated[bool, Query(description="include the board as SVG")]
#: The app's :class:`Api`.
TheApi = Annotated[Api, Depends(_api)]


def _wait(
    request: Request,
    wait: Annotated[
        float,
        Query(ge=0, allow_inf_nan=False, description="wait up to this many seconds (`Limits.max_wait`) for agents"),
    ] = 0.0,
) -> float:
    return at_most("wait", wait, request.app.state.limits.max_wait)


#: Seconds a request may wait for agents, bounded by the app's limits.
Wait = Annotated[float, Depends(_wait)]


def _limit(request: Request, limit: Annotated[int, Query(ge=1, description="`Limits.max_page_size`")] = 50) -> int:
    return at_most("limit", limit, request.app.state.limits.max_page_size)


def _offset(request: Request, offset: Annotated[int, Query(ge=0, description="`Limits.max_page_offset`")] = 0) -> int:
    return at_most("offset", offset, request.app.state.limits.max_page_offset)


# --- the games and sheets on offer, uploads, and starting a game in one click or again ----------------


@router.get("/catalog", summary="The games (built-in, from the sheet directory, uploaded) and the agents")
async def api_catalog(api: TheApi) -> dict[str, Any]:
    out = []
    for entry in api.manager.games.builtins():
        game = api.manager.games.load(entry.key)
        out.append(
            {
                "name": entry.key,
                "title": entry.title,
                "roles": list(game.players),
                "description": entry.description,
                "agents": ui.agents_for(game, AGENTS),
                "levels": list(ui.levels(game)),
            }
        )
    sheets = [
        {"name": e.key, "title": e.title, "description": e.description, "source": e.source}
        for e in api.manager.games.sheets() + api.manager.games.uploads()
    ]
    return {"games": out, "sheets": sheets, "agents": agent_catalog(), "human": HUMAN}


@router.get("/sheets/{key}", summary="A rule sheet's game: roles, name, description (the sheet is grounded)")
async def api_sheet(api: TheApi, key: Annotated[str, Path(max_length=120)]) -> dict[str, Any]:
    return await sheet_info(api.manager, key, api.echo)


@router.post(
    "/sheets",
    status_code=201,
    summary="Upload a rule sheet; it is checked by the reasoner and then offered like any game",
    responses={400: {"description": "the sheet does not load (the reasoner's message)"}},
)
async def api_upload(api: TheApi, body: SheetIn) -> dict[str, Any]:
    try:
        entry = await asyncio.to_thread(api.manager.games.upload, body.name, body.rules)
    except ValueError as exc:
        raise HTTPException(400, detail(str(exc), limit=4000)) from None
    return await sheet_info(api.manager, entry.key, api.echo)


@router.post(
    "/play",
    status_code=201,
    summary="Start a game in one click: against the computer at a level, a friend by link, or watch agents",
    responses={400: {"description": "bad game, level or side"}, 503: {"description": "too busy"}},
)
async def api_play(api: TheApi, body: QuickPlay, request: Request, response: Response) -> dict[str, Any]:
    try:
        match, tokens = await quick_play(api.manager, api.limits, body)
    except LimitReached as exc:
        raise api.busy(exc) from None
    except ValueError as exc:
        raise HTTPException(400, detail(str(exc), body.game, body.side, limit=api.echo)) from None
    seat_cookies.remember(response, request, match.id, tokens)
    out = api.show(match, mine=list(tokens))
    return out


@router.post(
    "/games/{match_id}/rematch",
    status_code=201,
    summary="A new match of the same game with the seats swapped; you keep your side of the board's player",
    responses={403: {"description": "you hold no seat of a match with people"}},
)
async def api_rematch(api: TheApi, match_id: str, request: Request, response: Response) -> Any:
    match = await api.get_match(match_id)
    seats = seat_cookies.Seats(request)
    mine = [r for r in match.roles if api.manager.owns(match, r, seats.token(r))]
    if match.has_humans and not mine:
        return api.rejected(MoveRejected(403, "only a player of this match can ask for a rematch; start a new game"))
    if match.rematch is not None:
        again = await api.find(match.rematch)
        if again is not None and not again.over:
            # the other player asked first: join the open seat meant for us
            wanted = [rotate(match.seat_roles, r) for r in mine]
            tokens = {}
            for role in wanted:
                with contextlib.suppress(MoveRejected):
                    tokens[role] = api.manager.claim_seat(again, role)
            seat_cookies.remember(response, request, again.id, tokens)
            out = api.show(again, mine=list(tokens))
            return out
    seated = match.seat_roles  # (chance takes no seat: the referee plays it in the rematch too)
    players = {rotate(seated, r): p for r, p in zip(match.roles, match.players, strict=True) if r in seated}
    take = [rotate(seated, r) for r in mine]
    try:
        again, tokens = await api.manager.create(match.key, players, match.settings, seats=take)
    except LimitReached as exc:
        raise api.busy(exc) from None
    except ValueError as exc:
        raise HTTPException(400, detail(str(exc), limit=api.echo)) from None
    match.rematch = again.id
    match.changed()
    seat_cookies.remember(response, request, again.id, tokens)
    out = api.show(again, mine=list(tokens))
    return out


# --- reading matches: the list, a match's state, its legal moves, a past step, its record -------------
@router.get("/games", summary="List matches, newest first")
async def api_list(
    api: TheApi,
    limit: Annotated[int, Depends(_limit)],
    offset: Annotated[int, Depends(_offset)],
    status: Literal["playing", "over"] | None = None,
) -> dict[str, Any]:
    rows = api.store.list(limit=limit, offset=offset, status=status)
    return {"total": api.store.count(status), "games": [summary(m) for m in rows]}


@router.get("/games/{match_id}", summary="A match's current state (with `mine`: the seats you own)")
async def api_get(api: TheApi, match_id: str, request: Request, wait: Wait, svg: Svg = False) -> dict[str, Any]:
    match = await api.get_match(match_id)
    if wait:
        with api.manager.watch(match):  # a waiting client keeps the match in memory, as a stream does
            await api.manager.wait_idle(match, wait)
    return api.show(match, request, svg=svg)


@router.get(
    "/games/{match_id}/legal",
    summary="A role's legal moves now (in a game of hidden information being played: a seat you own)",
    responses={403: {"description": "a game of hidden information: not your seat"}},
)
async def api_legal(
    api: TheApi, match_id: str, role: Annotated[str, Query(max_length=200)], request: Request
) -> dict[str, Any]:
    match = await api.get_match(match_id)
    if role not in match.seat_roles:
        raise HTTPException(
            400, f"{match.game.name} has no role {clip(role, api.echo)!r}; its roles are {', '.join(match.seat_roles)}"
        )
    if match.hidden and not api.manager.owns(match, role, seat_cookies.Seats(request).token(role)):
        raise HTTPException(
            403, f"a game of hidden information: {role}'s legal moves are shown to its seat only while it is played"
        )
    return {
        "role": role,
        "step": match.step,
        "terminal": match.over,
        "moves": [] if match.over else ui.annotate(match.game, match.state, role),
    }


@router.get(
    "/games/{match_id}/steps/{step}",
    summary="The state after a step (for replays; a game of hidden information once it is over)",
    responses={403: {"description": "a game of hidden information being played"}},
)
async def api_step(api: TheApi, match_id: str, step: Annotated[int, Path(ge=0, le=10**9)]) -> dict[str, Any]:
    match = await api.get_match(match_id)
    if match.hidden:
        raise HTTPException(403, HIDDEN_RECORD)
    if not 0 <= step <= match.step:
        raise HTTPException(404, f"step {step} is not in this match (0..{match.step})")
    state = match.states[step]
    game = match.game
    terminal = game.is_terminal(state)
    return {
        "step": step,
        "steps": match.step,
        "joint": dict(zip(match.roles, match.joints[step - 1], strict=True)) if step else None,
        "readable": {r: ui.readable(game, m) for r, m in zip(match.roles, match.joints[step - 1], strict=True)}
        if step
        else None,
        "state": game.state_to_dict(state),
        "terminal": terminal,
        "goals": dict(zip(match.roles, game.goals(state), strict=True)) if terminal else None,
        "outcome": outcome(match.roles, game.goals(state)) if terminal else None,
        "svg": ui.board_svg(game, state, before=match.states[step - 1] if step else None),
    }


@router.get(
    "/games/{match_id}/review",
    summary="The engine's estimate of the first role's result after every step, its largest swings, as a graph",
    responses={409: {"description": "the match is not over"}, 404: {"description": "no such match, or no kernel"}},
)
async def api_review(api: TheApi, match_id: str) -> dict[str, Any]:
    match = await api.get_match(match_id)
    if not match.over:
        raise HTTPException(409, "a match is reviewed once it is over")
    states = list(match.states)
    found = await asyncio.to_thread(review, match.id, match.game, match.roles, states)
    if found is None:
        raise HTTPException(404, f"{match.game.name} is played on the prover: the engine cannot review it")
    return found


@router.get("/games/{match_id}/record", summary="The match record (JSON)")
async def api_record(api: TheApi, match_id: str) -> dict[str, Any]:
    return record_of(api.store, match_id, api.echo, api.manager.games)


# --- creating a match, taking a seat, moving ----------------------------------------------------------
@router.post(
    "/games",
    status_code=201,
    summary="Create a match; you own the human seats you take (their tokens are in `tokens`)",
    responses={400: {"description": "bad game, players or settings"}, 503: {"description": "too busy"}},
)
async def api_create(api: TheApi, body: NewMatch, request: Request, response: Response) -> dict[str, Any]:
    settings = Settings(agent_time=body.agent_time, pace=body.pace, human_time=body.human_time)
    try:
        match, tokens = await api.manager.create(body.game, body.players, settings, seats=body.seats)
    except LimitReached as exc:
        raise api.busy(exc) from None
    except ValueError as exc:
        inputs = [body.game, *body.players, *body.players.values(), *(body.seats or [])]
        raise HTTPException(400, detail(str(exc), *inputs, limit=api.echo)) from None
    seat_cookies.remember(response, request, match.id, tokens)
    out = api.show(match, mine=list(tokens))
    out["tokens"] = tokens
    return out


@router.post(
    "/games/{match_id}/seats/{role}",
    status_code=201,
    summary="Take an open human seat; answers its token (and keeps it in the browser's cookie)",
    responses={409: {"description": "the seat is taken"}, 400: {"description": "not a human seat"}},
)
async def api_claim(
    api: TheApi, match_id: str, role: Annotated[str, Path(max_length=200)], request: Request, response: Response
) -> Any:
    match = await api.get_match(match_id)
    try:
        token = api.manager.claim_seat(match, role)
    except MoveRejected as exc:
        return api.rejected(exc, role)
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
    api: TheApi, match_id: str, body: MoveIn, request: Request, wait: Wait, svg: Svg = False
) -> SafeJSONResponse:
    match = await api.get_match(match_id)
    seats = seat_cookies.Seats(request)
    try:
        api.manager.submit(match, body.role, body.move, body.step, seats.token(body.role))
    except MoveRejected as exc:
        return api.rejected(exc, body.role, body.move)
    if wait:
        with api.manager.watch(match):
            await api.manager.wait_idle(match, wait)
    return SafeJSONResponse(api.show(match, request, svg=svg))


# --- ending a match (resigning, a draw, aborting) and deleting it from the history --------------------
async def _by_seat(
    api: Api, match_id: str, body: ResignIn, request: Request, act: Callable[..., Awaitable[object]]
) -> Any:
    """``act(match, role, token)`` for the seat ``body`` names, with the request's token: the match as it is
    then, or the refusal."""
    match = await api.get_match(match_id)
    try:
        await act(match, body.role, seat_cookies.Seats(request).token(body.role))
    except MoveRejected as exc:
        return api.rejected(exc, body.role)
    return api.show(match, request, svg=True)


@router.post(
    "/games/{match_id}/resign",
    summary="Resign a seat you own: the match ends, the other roles win",
    responses={403: {"description": "not your seat"}, 409: {"description": "the match is over"}},
)
async def api_resign(api: TheApi, match_id: str, body: ResignIn, request: Request) -> Any:
    return await _by_seat(api, match_id, body, request, api.manager.resign)


@router.post(
    "/games/{match_id}/takeback",
    summary="Take back your last move against the computer, and its reply (a seat you own)",
    responses={403: {"description": "not your seat"}, 409: {"description": "over, the computer thinks, or no move"}},
)
async def api_takeback(api: TheApi, match_id: str, body: ResignIn, request: Request) -> Any:
    return await _by_seat(api, match_id, body, request, api.manager.take_back)


@router.post(
    "/games/{match_id}/draw",
    summary="Offer a draw for a seat you own, or accept the other's offer (matches of people only)",
    responses={403: {"description": "not your seat"}, 409: {"description": "the match is over"}},
)
async def api_draw(api: TheApi, match_id: str, body: ResignIn, request: Request) -> Any:
    return await _by_seat(api, match_id, body, request, api.manager.offer_draw)


@router.post(
    "/games/{match_id}/abort",
    summary="Abort a match before its first move (any seat owner)",
    responses={403: {"description": "you own no seat"}, 409: {"description": "moves were made"}},
)
async def api_abort(api: TheApi, match_id: str, request: Request) -> Any:
    match = await api.get_match(match_id)
    try:
        await api.manager.abort(match, api.owner_token(match, request))
    except MoveRejected as exc:
        return api.rejected(exc)
    return api.show(match, request, svg=True)


@router.delete(
    "/games/{match_id}",
    status_code=204,
    summary="Delete a finished match from the history (an owner of one of its seats)",
    responses={403: {"description": "you own no seat"}, 409: {"description": "the match is being played"}},
)
async def api_delete(api: TheApi, match_id: str, request: Request) -> Response:
    match = await api.get_match(match_id)
    try:
        await api.manager.delete(match.id, api.owner_token(match, request))
    except MoveRejected as exc:
        return api.rejected(exc)
    return Response(status_code=204)


# --- server-sent events of one match or several (see :mod:`ggp.web.api_events`) -----------------------


@router.get(
    "/games/{match_id}/events",
    summary="Server-sent events: the match's view (with SVG) at every change; ends when the match is over",
    response_class=StreamingResponse,
    responses={429: {"description": "too many streams open"}},
)
async def api_events(api: TheApi, match_id: str, request: Request) -> StreamingResponse:
    return await api.streams.open([await api.get_match(match_id)], [], request)


@router.get(
    "/events",
    summary="Server-sent events for several matches on one connection (`update` views, `gone`, `end`)",
    response_class=StreamingResponse,
    responses={429: {"description": "too many streams open"}},
)
async def api_events_many(
    api: TheApi,
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
        match = await api.find(match_id)
        if match is None:
            missing.append(clip(match_id, api.echo))
        else:
            matches.append(match)
    return await api.streams.open(matches, missing, request)
