"""The arena's stored tables (players, matches, pauses, games) and what is read from them: a :class:`Player`
from its row, and a :class:`LiveArenaMatch` as watchers see a running match."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.errors import GGPError
from ..core.game import Game, State
from .live import Watched

SCHEMA = """
CREATE TABLE IF NOT EXISTS arena_players (
    id        TEXT PRIMARY KEY,
    kind      TEXT NOT NULL,            -- remote | agent
    name      TEXT NOT NULL,
    url       TEXT NOT NULL,            -- the GGP URL, or the agent spec of a built-in agent
    contact   TEXT NOT NULL DEFAULT '',
    owner     TEXT NOT NULL DEFAULT '', -- SHA-256 of the owner's token (empty for built-in agents)
    status    TEXT NOT NULL,            -- active | paused | removed
    reason    TEXT NOT NULL DEFAULT '', -- why it is paused
    strikes   INTEGER NOT NULL DEFAULT 0,
    created   REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS arena_matches (
    id        TEXT PRIMARY KEY,
    game      TEXT NOT NULL,            -- a catalog key
    roles     TEXT NOT NULL,            -- JSON list
    players   TEXT NOT NULL,            -- JSON list of player ids, role order
    status    TEXT NOT NULL,            -- running | over | failed
    goals     TEXT,                     -- JSON list once over
    record    TEXT,                     -- the match record (ggp's format) once over
    error     TEXT NOT NULL DEFAULT '',
    started   REAL NOT NULL,
    finished  REAL
);
CREATE INDEX IF NOT EXISTS arena_matches_by_started ON arena_matches (started);
-- the running matches, newest first (the arena's page, the API's ?status=): without it each look walks the
-- whole history backwards through the started index, reading every row
CREATE INDEX IF NOT EXISTS arena_matches_by_status ON arena_matches (status, started);
CREATE TABLE IF NOT EXISTS arena_pauses (  -- every pause of a player by the arena, with its reason (kept on resume)
    player    TEXT NOT NULL,
    at        REAL NOT NULL,
    reason    TEXT NOT NULL,
    match     TEXT NOT NULL DEFAULT ''  -- the match that caused it, if one did
);
CREATE INDEX IF NOT EXISTS arena_pauses_by_player ON arena_pauses (player, at);
CREATE TABLE IF NOT EXISTS arena_games (  -- uploaded sheets the arena plays besides Limits.arena_games
    key       TEXT PRIMARY KEY,         -- the catalog key, upload:HASH (the text is in the sheets table)
    owner     TEXT NOT NULL,            -- SHA-256 of the token that may take it out again
    added     REAL NOT NULL
)
"""


@dataclass
class Player:
    """A registered player (``remote``) or one of ggp's agents (``agent``)."""

    id: str
    kind: str
    name: str
    url: str
    contact: str
    status: str
    reason: str
    strikes: int
    created: float
    owner: str = field(default="", repr=False)

    def public(self) -> dict[str, Any]:
        """What anyone may see (not the owner's token hash)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "url": self.url,
            "contact": self.contact,
            "status": self.status,
            "reason": self.reason,
            "created": self.created,
        }


def player_from_row(row: Any) -> Player:
    return Player(
        id=row["id"],
        kind=row["kind"],
        name=row["name"],
        url=row["url"],
        contact=row["contact"],
        status=row["status"],
        reason=row["reason"],
        strikes=int(row["strikes"]),
        created=float(row["created"]),
        owner=row["owner"],
    )


class LiveArenaMatch(Watched):
    """A running arena match as watchers see it: the states so far, updated from the referee's thread."""

    def __init__(self, match_id: str, key: str, game: Game, players: list[Player]) -> None:
        super().__init__()
        self.id = match_id
        self.key = key
        self.game = game
        self.players = players
        self.states: list[State] = [game.initial_state()]
        self.joints: list[tuple[str, ...]] = []
        self.status = "running"
        self.goals: list[int] | None = None
        self.error = ""

    def add_step(self, joint: tuple[str, ...]) -> None:
        """The referee played ``joint`` (called on the event loop)."""
        try:
            moves = [self.game.parse_move(m) for m in joint]
            self.states.append(self.game.next_state(self.states[-1], moves))
        except GGPError:
            return  # the record is the truth; the live view only misses a picture
        self.joints.append(tuple(joint))
        self.changed()
