"""What the JSON API and the HTML pages share: the request bodies, error messages that quote client input,
and the answers both give (a quick-play match, a rule sheet's game, a stored match's record)."""

import asyncio
from typing import Any, Literal, TypeVar

from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictInt

from ..agents import AGENTS
from . import ui
from .catalog import Catalog
from .limits import Limits
from .live_match import LiveMatch
from .manager import Manager
from .record import match_record
from .security import clip
from .settings import HUMAN, Settings
from .store import Store
from .views import is_match_id


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
    from_game: str | None = Field(
        None, max_length=64, description="continue from a position of this match (its id) instead of the start"
    )
    from_step: int = Field(0, ge=0, description="with from_game: the position after this many of its steps")


class SheetIn(BaseModel):
    """A rule sheet to upload."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("", max_length=200, description="a name for the game", examples=["Tic-tac-toe"])
    rules: str = Field(description="the GDL rule sheet (KIF text)")


class ResignIn(BaseModel):
    """Who resigns."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description="the resigning role (a seat this client owns)", examples=["white"])


_Number = TypeVar("_Number", int, float)


def at_most(name: str, value: _Number, bound: float) -> _Number:
    """``value`` of the query parameter ``name``, or the 400 any other malformed parameter gets when it is over
    ``bound`` (a bound of the app's :class:`~ggp.web.limits.Limits`, so known only once an app is made)."""
    if value > bound:
        message = f"Input should be less than or equal to {bound}"
        raise RequestValidationError([{"type": "less_than_equal", "loc": ("query", name), "msg": message}])
    return value


def detail(message: str, *inputs: object, limit: int = 80) -> str:
    """An error message that quotes each long client input in ``inputs`` by its first ``limit`` characters."""
    for text in sorted({str(i) for i in inputs if isinstance(i, str) and len(i) > limit}, key=len, reverse=True):
        message = message.replace(text, clip(text, limit))
        message = message.replace(repr(text), repr(clip(text, limit)))
    return message if len(message) <= 4000 else clip(message, 4000)


def record_of(store: Store, match_id: str, echo: int = 80, games: Catalog | None = None) -> dict[str, Any]:
    """The match record of a stored match; 404 if there is none."""
    stored = store.load(match_id) if is_match_id(match_id) else None
    if stored is None:
        raise HTTPException(404, f"no match {clip(match_id, echo)!r}")
    game = (games or Catalog()).load(stored.game)
    if game.hidden_information and stored.status != "over":
        raise HTTPException(403, HIDDEN_RECORD)
    return match_record(game, stored)


#: Why the record of a game of hidden information is not given while it is played.
HIDDEN_RECORD = (
    "this is a game of hidden information: its record (the true state and every move) is given once it is over; "
    "until then each seat sees only its own view (GET /api/games/ID with the seat's token)"
)


def rotate(roles: tuple[str, ...], role: str) -> str:
    """Where ``role``'s player sits in a rematch: the next role (white -> black -> white)."""
    return roles[(roles.index(role) + 1) % len(roles)]


async def quick_play(manager: Manager, limits: Limits, body: QuickPlay) -> tuple[LiveMatch, dict[str, str]]:
    """Create the match a :class:`QuickPlay` asks for; ``ValueError`` / :class:`LimitReached` as create does."""
    if not manager.games.known(body.game):
        raise ValueError(f"unknown game {body.game!r}; see GET /api/catalog for the games")
    game = await asyncio.to_thread(manager.games.load, body.game)
    side = body.side or game.players[0]
    if side not in game.players:  # (chance, in a GDL-II game, takes no seat)
        raise ValueError(f"{game.name} has no role {side!r} to play; its seats are {', '.join(game.players)}")
    opening = await asyncio.to_thread(_opening, manager, body) if body.from_game is not None else []
    spec, seconds = ui.level(game, body.level, limits.max_agent_time)
    if spec not in ui.agents_for(game, AGENTS) and spec.split(":")[0] not in ui.agents_for(game, AGENTS):
        spec = "random"
    if body.mode == "watch":
        players = dict.fromkeys(game.players, spec)
        settings = Settings(agent_time=seconds, pace=min(0.5, limits.max_pace))
        return await manager.create(body.game, players, settings, opening=opening, opened_from=body.from_game)
    if body.mode == "friend":
        players = dict.fromkeys(game.players, HUMAN)
    else:
        players = {r: (HUMAN if r == side else spec) for r in game.players}
    settings = Settings(agent_time=seconds, human_time=body.human_time)
    return await manager.create(body.game, players, settings, seats=[side], opening=opening, opened_from=body.from_game)


def _opening(manager: Manager, body: QuickPlay) -> list[tuple[str, ...]]:
    """The steps of the match ``body.from_game`` up to ``body.from_step``: a new game continues from there."""
    source = manager.store.load(body.from_game) if body.from_game and is_match_id(body.from_game) else None
    if source is None:
        raise ValueError(f"no match {body.from_game!r} to continue from")
    if source.status != "over":  # (fair play: a game being played is not handed to the engine to finish)
        raise ValueError(f"match {source.id} is still being played: continue from it once it is over")
    if source.game != body.game:
        raise ValueError(f"match {source.id} is a game of {source.game}, not of {body.game}")
    if body.from_step > len(source.joints):
        raise ValueError(
            f"match {source.id} has {len(source.joints)} steps: continue from step 0 to {len(source.joints)}"
        )
    return [tuple(j) for j in source.joints[: body.from_step]]


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
        "roles": list(game.players),  # the seats: chance (a GDL-II game's random) takes none
        "hidden_information": game.hidden_information,
        "levels": list(ui.levels(game)),
        # propnet, or prover for a sheet too large to ground (slower, and only agents without a kernel play it)
        "engine": getattr(game, "engine", "native"),
    }
