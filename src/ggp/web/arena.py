"""The arena: GGP players registered by URL play rated matches, against each other and ggp's own agents.

As on ggp.org's Tiltyard, anyone may register a player (a name, the URL it answers GGP messages on, a contact). The
server asks it INFO before taking it and before each match; a player that does not answer is paused, and so is one
that stops answering during a match (its last moves and STOP unanswered: no reply in time, no connection), and one
whose moves fail (time out, are illegal, are not moves) in too large a share of two matches in a row
(:attr:`~ggp.web.limits.Limits.arena_fault_share`). The reason, naming the match and the faults, is shown with the
player, and every pause is kept (``arena_pauses``) when the player is resumed. Its owner (the holder of the token
registration answers) may pause, resume or remove it.

A matchmaking loop (:meth:`Arena.run`) keeps up to ``arena_matches`` matches going: it takes the games of
``arena_games`` in turn, the idle active players that have played least, and fills the other roles with the built-in
agents of ``arena_agents``. Each match is refereed by ``ggp host``'s code (:func:`ggp.protocol.host.host_match`) with
the arena's start and play clocks, in a thread of the arena's own (one per match at once); its steps are followed
live, and its record is kept in the app's SQLite file, downloadable in ggp's format and in ggp-base's.

Ratings are Bradley-Terry (:func:`ggp.match.ratings.fit`) over every pair of players in every finished
match (the higher goal wins; equal goals draw), per game and over all games, with bootstrap intervals,
fitted in a worker thread and kept ten times as long as the fit took, from tallies (wins, draws and losses
per pair) kept up to date as matches end: a fit's time and memory depend on the number of players, not
on the length of the history (:class:`~ggp.web.arena_tally.Tally`).

``bench/arena_soak.py`` soaks the arena with misbehaving players for an hour (``tests/test_arena_soak.py``
for a minute). Remote URLs are checked against the allow-list (:mod:`ggp.web.remote_player`), so that registering cannot
make the server probe its own network. Ratings are fitted from tallies (:mod:`ggp.web.arena_tally`); records
are also served in ggp-base's format (:mod:`ggp.web.ggp_base_record`); pausing a misbehaving player is
:mod:`ggp.web.arena_conduct`; the stored tables are :mod:`ggp.web.arena_model`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import random
import re
import secrets
import shutil
import tempfile
import threading
import time
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..core.game import Game
from ..match.outcome import outcome
from ..match.record import MatchRecord
from ..protocol.host import Transport, host_match
from . import ui
from .arena_conduct import judge, pause
from .arena_model import SCHEMA, LiveArenaMatch, Player, player_from_row
from .arena_tally import PROVISIONAL_GAMES, Tally, rate_tally
from .catalog import Catalog
from .ggp_base_record import ggp_base_match
from .limits import Limits
from .remote_player import ArenaError, PinnedTransport, ask_info, check_url
from .settings import hash_token, token_matches
from .store import Store

_log = logging.getLogger(__name__)

_ID = re.compile(r"[0-9a-z-]{1,40}")
#: A ratings table is served for this many times the seconds its fit took, although matches have ended since
#: (see :meth:`Arena.ratings`): fitting takes at most about a tenth of the server's time.
RATINGS_KEEP = 10.0
#: A table whose fit took longer than this (seconds) is answered as it is when stale, while it is fitted again
#: in a worker thread (see :meth:`Arena.ratings_off_loop`): a page asking for several tables does not wait for
#: fits. A quicker fit (a small arena) is waited for, so that its table is always the latest.
RATINGS_SLOW_FIT = 0.05
_MAX_NAME = 60
_MAX_CONTACT = 120


class Arena:
    """The arena of one server: its players, matches, ratings and matchmaking loop (see the module docstring)."""

    def __init__(self, store: Store, limits: Limits, games: Catalog, transport: Transport | None = None) -> None:
        self.store = store
        self.limits = limits
        self.games = games
        #: Every message to a remote player goes through it: INFO, and the matches' (set on each RemoteMatch).
        self.transport = transport or PinnedTransport(limits.arena_allow)
        self.live: dict[str, LiveArenaMatch] = {}
        self._busy: dict[str, int] = {}  # player id -> arena matches it plays now
        self._turn = 0  # the next game of arena_games
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._registrations: dict[str, deque[float]] = {}
        self._rng = random.Random()
        # game (None: over all) -> (kept until, matches counted, table, seconds the fit took)
        self._ratings_cache: dict[str | None, tuple[float, int, list[dict[str, Any]], float]] = {}
        self._refitting: set[str | None] = set()  # the tables being fitted again in the background
        self._ratings_lock = threading.Lock()
        # What the ratings and the matchmaking need of the history, kept up to date as matches start and end
        # (counted once from the stored matches below) rather than read from every stored row each time:
        # tallies per game (and over all, None), and each player's matches (any status), for the least-played
        # first. Their sizes are set by the players and games, not by the number of matches.
        self._tallies: dict[str | None, Tally] = {None: Tally()}
        self._played_counts: Counter[str] = Counter()
        self._tally_lock = threading.Lock()  # the referee's end (event loop) vs a fit (worker thread)
        self._closed = False
        self._sheets: Path | None = None  # uploaded sheets' files for the host, made when first needed
        # The referees' threads, one per match at most: a match holds its thread for minutes, and on the
        # event loop's default executor (a few threads on a small machine) matches would keep the app's other
        # work, and the matchmaking round's own INFO checks, waiting.
        self._referees = ThreadPoolExecutor(max_workers=limits.arena_matches, thread_name_prefix="ggp-arena-match")
        store.execute_script(SCHEMA)
        # matches that were running when the server stopped cannot go on: their players were told nothing more
        store.execute(
            "UPDATE arena_matches SET status = 'failed', error = 'the server stopped during the match', "
            "finished = ? WHERE status = 'running'",
            (time.time(),),
        )
        for row in store.iterate("SELECT game, players, status, goals FROM arena_matches"):
            players = json.loads(row["players"])
            self._played_counts.update(players)
            if row["status"] == "over" and row["goals"] is not None:
                self._count_result(row["game"], players, json.loads(row["goals"]))
        for spec in limits.arena_agents:
            pid = "agent-" + re.sub(r"[^0-9a-z]+", "-", spec.lower()).strip("-")
            store.execute(
                "INSERT OR IGNORE INTO arena_players (id, kind, name, url, status, created) "
                "VALUES (?, 'agent', ?, ?, 'active', ?)",
                (pid, f"ggp {spec}", spec, time.time()),
            )

    # --- players -------------------------------------------------------------------------------------
    def players(self, include_removed: bool = False) -> list[Player]:
        """Every player, built-in agents first, then by name."""
        where = "" if include_removed else "WHERE status != 'removed'"
        rows = self.store.query(f"SELECT * FROM arena_players {where} ORDER BY kind, name")
        return [player_from_row(r) for r in rows]

    def player(self, player_id: str) -> Player:
        """The player with this id; :class:`ArenaError` (404) if there is none."""
        rows = (
            self.store.query("SELECT * FROM arena_players WHERE id = ?", (player_id,))
            if _ID.fullmatch(player_id)
            else []
        )
        if not rows:
            raise ArenaError(404, f"no arena player {player_id[:40]!r}")
        return player_from_row(rows[0])

    async def register(self, name: str, url: str, contact: str, client: str) -> tuple[Player, str]:
        """Register a remote player (after its URL passes the allow-list and it answers INFO).

        Returns the player and its owner's token (to pause, resume or remove it). :class:`ArenaError`: 400 for
        a bad name or URL or a player that does not answer, 409 for a URL already registered, 429 for too many
        registrations from this client, 507 when the arena holds ``arena_max_players``.
        """
        name = " ".join(str(name).split())
        contact = " ".join(str(contact).split())
        if not name or len(name) > _MAX_NAME:
            raise ArenaError(400, f"a player needs a name of 1 to {_MAX_NAME} characters")
        if len(contact) > _MAX_CONTACT:
            raise ArenaError(400, f"the contact is at most {_MAX_CONTACT} characters")
        now = time.time()
        if len(self._registrations) > 1000:  # forget the clients with no registration in the last hour
            self._registrations = {c: d for c, d in self._registrations.items() if d and d[-1] >= now - 3600}
        recent = self._registrations.setdefault(client, deque())
        while recent and recent[0] < now - 3600:
            recent.popleft()
        if len(recent) >= self.limits.arena_registrations_per_hour:
            raise ArenaError(429, "too many registrations from this address in the last hour; try again later")
        count = self.store.query(
            "SELECT COUNT(*) AS n FROM arena_players WHERE kind = 'remote' AND status != 'removed'"
        )
        if int(count[0]["n"]) >= self.limits.arena_max_players:
            raise ArenaError(507, f"the arena holds {self.limits.arena_max_players} players, its limit")
        url = await asyncio.to_thread(check_url, url, self.limits.arena_allow)
        if self.store.query("SELECT 1 FROM arena_players WHERE url = ? AND status != 'removed'", (url,)):
            raise ArenaError(409, f"a player at {url} is registered already")
        recent.append(now)
        info = await asyncio.to_thread(ask_info, url, self.transport)
        token = secrets.token_urlsafe(24)
        pid = secrets.token_hex(5)
        self.store.execute(
            "INSERT INTO arena_players (id, kind, name, url, contact, owner, status, created) "
            "VALUES (?, 'remote', ?, ?, ?, ?, 'active', ?)",
            (pid, name, url, contact, hash_token(token), now),
        )
        if info.get("name"):
            _log.info("arena: registered %s (%s) at %s", name, info.get("name"), url)
        self.wake()
        return self.player(pid), token

    def set_status(self, player_id: str, token: str | None, status: str) -> Player:
        """Pause, resume (``active``) or remove a player; its owner's token is needed (403 without it)."""
        player = self.player(player_id)
        if player.kind != "remote":
            raise ArenaError(403, "ggp's own agents are run by the server; they cannot be paused or removed")
        if not token_matches(token, player.owner):
            raise ArenaError(403, "only the owner of this player may change it: send the token registration gave")
        if player.status == "removed":
            raise ArenaError(409, "this player was removed; register it again")
        reason = "paused by its owner" if status == "paused" else ""
        self.store.execute(
            "UPDATE arena_players SET status = ?, reason = ?, strikes = 0 WHERE id = ?", (status, reason, player_id)
        )
        self.wake()
        return self.player(player_id)

    def pauses(self, player_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """The arena's pauses of a player, newest first: when, why, and the match that caused it."""
        rows = self.store.query(
            "SELECT at, reason, match FROM arena_pauses WHERE player = ? ORDER BY at DESC LIMIT ?", (player_id, limit)
        )
        return [{"at": r["at"], "reason": r["reason"], "match": r["match"]} for r in rows]

    # --- games ---------------------------------------------------------------------------------------
    def game_keys(self) -> list[str]:
        """The games the arena plays in turn: the operator's (``arena_games``), then uploads added to it."""
        rows = self.store.query("SELECT key FROM arena_games ORDER BY added")
        return [*self.limits.arena_games, *(str(r["key"]) for r in rows if r["key"] not in self.limits.arena_games)]

    async def add_game(self, key: str) -> tuple[dict[str, str], str]:
        """Put an uploaded sheet into the arena's rotation; returns it and the token that may take it out.

        :class:`ArenaError`: 404 for a key that is no uploaded sheet, 400 if it does not load, 409 if the arena
        plays it already or plays :attr:`~ggp.web.limits.Limits.arena_uploads` uploads already.
        """
        key = str(key).strip()
        if not key.startswith("upload:") or self.games.upload_text(key) is None:
            raise ArenaError(404, f"no uploaded rule sheet {key[:80]!r}: upload it first (POST /api/sheets)")
        if key in self.game_keys():
            raise ArenaError(409, "the arena plays this sheet already")
        if len(self.game_keys()) - len(self.limits.arena_games) >= self.limits.arena_uploads:
            raise ArenaError(
                409, f"the arena plays at most {self.limits.arena_uploads} uploaded sheets; one must be taken out first"
            )
        try:
            await asyncio.to_thread(self.games.load, key)
        except ValueError as exc:
            raise ArenaError(400, str(exc)) from None
        token = secrets.token_urlsafe(24)
        # INSERT OR IGNORE: of two requests adding the same sheet at once, the first keeps it
        self.store.execute(
            "INSERT OR IGNORE INTO arena_games (key, owner, added) VALUES (?, ?, ?)",
            (key, hash_token(token), time.time()),
        )
        self.wake()
        return self.game_info(key), token

    def remove_game(self, key: str, token: str | None) -> None:
        """Take an uploaded sheet out of the rotation (matches of it under way finish); the adder's token."""
        rows = self.store.query("SELECT owner FROM arena_games WHERE key = ?", (key,))
        if not rows:
            raise ArenaError(404, f"the arena plays no uploaded sheet {key[:80]!r}")
        if not token_matches(token, str(rows[0]["owner"])):
            raise ArenaError(403, "only who added this sheet may take it out: send the token adding it gave")
        self.store.execute("DELETE FROM arena_games WHERE key = ?", (key,))

    def game_info(self, key: str) -> dict[str, str]:
        entry = self.games.entry(key)
        return {"game": key, "title": entry.title, "source": entry.source}

    def _rules_ref(self, key: str) -> str:
        """What ``host_match`` reads the rules of ``key`` from: a built-in name, or a sheet file (an upload's
        text is written once to the arena's own directory, as the host sends a file's text)."""
        path = self.games.rules_path(key)
        if path is not None:
            return str(path)
        text = self.games.upload_text(key)
        if text is None:
            return key
        if self._sheets is None:
            self._sheets = Path(tempfile.mkdtemp(prefix="ggp-arena-sheets-"))
        file = self._sheets / f"{key[7:]}.kif"  # the key's hash: 16 hex digits
        if not file.is_file():
            file.write_text(text, encoding="utf-8")
        return str(file)

    # --- matches -------------------------------------------------------------------------------------
    def matches(self, limit: int = 30, player_id: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        """Matches, newest first, as summaries."""
        query = "SELECT id, game, roles, players, status, goals, error, started, finished FROM arena_matches"
        args: list[Any] = []
        where = []
        if player_id is not None:
            where.append("EXISTS (SELECT 1 FROM json_each(arena_matches.players) WHERE value = ?)")
            args.append(player_id)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY started DESC LIMIT ?"
        args.append(limit)
        names = {p.id: p.name for p in self.players(include_removed=True)}
        out = []
        for r in self.store.query(query, args):
            roles, players = json.loads(r["roles"]), json.loads(r["players"])
            out.append(
                {
                    "id": r["id"],
                    "game": r["game"],
                    "title": self.games.title(r["game"]),
                    "roles": roles,
                    "players": [
                        {"role": ro, "id": p, "name": names.get(p, p)} for ro, p in zip(roles, players, strict=True)
                    ],
                    "status": r["status"],
                    "goals": json.loads(r["goals"]) if r["goals"] else None,
                    "outcome": outcome(roles, json.loads(r["goals"])) if r["goals"] else None,
                    "error": r["error"],
                    "started": r["started"],
                    "finished": r["finished"],
                }
            )
        return out

    def match_row(self, match_id: str) -> Any:
        rows = (
            self.store.query("SELECT * FROM arena_matches WHERE id = ?", (match_id,)) if _ID.fullmatch(match_id) else []
        )
        if not rows:
            raise ArenaError(404, f"no arena match {match_id[:40]!r}")
        return rows[0]

    def view(self, match_id: str) -> dict[str, Any]:
        """A match as the live viewer shows it: the board now, the moves, the players, the result."""
        live = self.live.get(match_id)
        row = self.match_row(match_id)
        game = live.game if live is not None else self.games.load(row["game"])
        if live is not None:
            states, joints, version = live.states, live.joints, live.version
        else:
            record = MatchRecord.from_dict(json.loads(row["record"])) if row["record"] else None
            joints = [m.joint for m in record.moves] if record else []
            states = record.replay(game) if record else [game.initial_state()]
            version = -1
        roles = json.loads(row["roles"])
        names = {p.id: p.name for p in self.players(include_removed=True)}
        status = live.status if live is not None else row["status"]
        # a game of hidden information shows no state and no moves while it is played (its players see their
        # own views through the GGP protocol; a watcher sees them once it is over)
        hidden = game.hidden_information and status == "running"
        return {
            "id": match_id,
            "game": row["game"],
            "title": self.games.title(row["game"]),
            "roles": roles,
            "players": {
                ro: {"id": p, "name": names.get(p, p)} for ro, p in zip(roles, json.loads(row["players"]), strict=True)
            },
            "status": status,
            "version": version,
            "step": len(joints),
            "goals": json.loads(row["goals"]) if row["goals"] else None,
            "outcome": outcome(roles, json.loads(row["goals"])) if row["goals"] else None,
            "error": row["error"],
            "moves": []
            if hidden
            else [{r: ui.readable(game, m) for r, m in zip(roles, joint, strict=True)} for joint in joints],
            "svg": ui.lines_svg([ui.HIDDEN_NOTE], game.board_size)
            if hidden
            else ui.board_svg(game, states[-1], before=states[-2] if len(states) > 1 else None),
        }

    def record(self, match_id: str) -> tuple[Game, MatchRecord, Any]:
        """The game, record and row of a finished match; :class:`ArenaError` 404/409 otherwise."""
        row = self.match_row(match_id)
        if not row["record"]:
            raise ArenaError(409, "this match has no record: it is being played or it failed to start")
        return self.games.load(row["game"]), MatchRecord.from_dict(json.loads(row["record"])), row

    def ggp_base(self, match_id: str) -> dict[str, Any]:
        """The finished match in ggp-base's match JSON."""
        game, record, row = self.record(match_id)
        names = {p.id: p.name for p in self.players(include_removed=True)}
        return ggp_base_match(
            game, record, match_id, [names.get(p, p) for p in json.loads(row["players"])], row["started"]
        )

    # --- ratings -------------------------------------------------------------------------------------
    def ratings(self, game: str | None = None) -> list[dict[str, Any]]:
        """Bradley-Terry ratings with 95 % intervals, best first: per game, or over all games (None).

        A table is kept (for the arena's games and over all) and fitted again when matches have ended since,
        but not before :data:`RATINGS_KEEP` times the time its fit took has passed: a fit from the tallies
        (its 200 bootstrap resamples) takes a fraction of a second with a dozen players, whatever the length
        of the history, and the players' list asks for it at every look. Callers on the event loop use
        :meth:`ratings_off_loop`.
        """
        cached = self._ratings_cache.get(game)
        if cached is not None and time.monotonic() < cached[0]:
            return cached[2]
        with self._ratings_lock:  # one fit at a time: a second asker gets the first one's table
            cached = self._ratings_cache.get(game)
            if cached is not None and time.monotonic() < cached[0]:
                return cached[2]
            return self._fit_ratings(game, cached)

    async def ratings_off_loop(self, game: str | None = None) -> list[dict[str, Any]]:
        """:meth:`ratings` in a worker thread, so that a fit does not hold up the event loop.

        A stale table whose fit took over :data:`RATINGS_SLOW_FIT` is answered at once, and fitted again in
        the background (one fit per table at a time): on a busy arena a fit takes a few tenths of a second on
        a loaded machine, and the arena's page asks for one table per game and one over all, each stale again
        a few seconds after its fit as matches keep ending, so a visitor waited for up to three fits.
        """
        cached = self._ratings_cache.get(game)
        if cached is None or cached[3] < RATINGS_SLOW_FIT:
            return await asyncio.to_thread(self.ratings, game)
        if time.monotonic() >= cached[0] and game not in self._refitting:
            self._refitting.add(game)
            task = asyncio.get_running_loop().create_task(asyncio.to_thread(self.ratings, game))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(lambda _: self._refitting.discard(game))
        return cached[2]

    def _count_result(self, game: str, players: list[str], goals: list[int]) -> None:
        """Count a finished match in the tallies of its game and over all."""
        values = [int(g) for g in goals]
        with self._tally_lock:
            self._tallies[None].add(players, values)
            self._tallies.setdefault(game, Tally()).add(players, values)

    def _fit_ratings(
        self, game: str | None, cached: tuple[float, int, list[dict[str, Any]], float] | None
    ) -> list[dict[str, Any]]:
        began = time.monotonic()
        with self._tally_lock:
            kept = self._tallies.get(game)
            tally = kept.copy() if kept is not None else Tally()
        if cached is not None and cached[1] == tally.matches:
            return cached[2]
        table: list[dict[str, Any]] = []
        if tally.pairs:
            names = {p.id: p for p in self.players(include_removed=True)}
            for line in rate_tally(tally, resamples=200):
                p = names.get(line.agent)
                table.append(
                    {
                        "id": line.agent,
                        "name": p.name if p else line.agent,
                        "kind": p.kind if p else "?",
                        "status": p.status if p else "?",
                        "rating": round(line.rating),
                        "low": round(line.low),
                        "high": round(line.high),
                        "games": line.games,
                        "provisional": line.games < PROVISIONAL_GAMES,
                        "wins": line.wins,
                        "draws": line.draws,
                        "losses": line.losses,
                    }
                )
        if game is None or game in self.game_keys():  # a table per game asked for would be a table per URL
            now = time.monotonic()
            self._ratings_cache[game] = (now + RATINGS_KEEP * (now - began), tally.matches, table, now - began)
        return table

    # --- the matchmaking loop ------------------------------------------------------------------------
    def wake(self) -> None:
        """Run a matchmaking round now (a player came or came back, a match ended)."""
        self._wake.set()

    async def run(self) -> None:
        """Schedule matches until cancelled (see the module docstring)."""
        while not self._closed:
            try:
                await self.round()
            except Exception:  # a bad round must not end the arena
                _log.exception("arena: matchmaking round failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.limits.arena_interval)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        # a referee still running ends by its clocks (its thread is not waited for: the server is stopping)
        self._referees.shutdown(wait=False, cancel_futures=True)
        if self._sheets is not None:
            shutil.rmtree(self._sheets, ignore_errors=True)

    async def round(self) -> list[str]:
        """Start as many matches as the limits allow; the ids of those started."""
        started: list[str] = []
        tries = 0
        keys = self.game_keys()
        while len(self.live) < self.limits.arena_matches and tries < 2 * len(keys) + 2:
            tries += 1
            free = [
                p
                for p in self.players()
                if p.kind == "remote"
                and p.status == "active"
                and self._busy.get(p.id, 0) < self.limits.arena_player_matches
            ]
            if not free or not keys:
                break
            key = keys[self._turn % len(keys)]
            self._turn += 1
            try:
                game = await asyncio.to_thread(self.games.load, key)
            except ValueError as exc:
                _log.warning("arena: cannot load %s: %s", key, exc)
                continue
            played = self._played_counts
            self._rng.shuffle(free)
            free.sort(key=lambda p: played.get(p.id, 0))
            chosen = free[: len(game.roles)]
            agents = [p for p in self.players() if p.kind == "agent" and p.status == "active"]
            while len(chosen) < len(game.roles) and agents:
                chosen.append(self._rng.choice(agents))
            if len(chosen) < len(game.roles):
                break
            self._rng.shuffle(chosen)
            ready = []
            for p in chosen:
                if p.kind != "remote":
                    ready.append(p)
                    continue
                try:
                    # again before each match: the name may resolve elsewhere now (and the allow-list change)
                    await asyncio.to_thread(check_url, p.url, self.limits.arena_allow)
                    await asyncio.to_thread(ask_info, p.url, self.transport)
                    ready.append(p)
                except ArenaError as exc:
                    pause(self.store, p, f"did not answer before a match: {exc.message}")  # no match caused it
            if len(ready) < len(chosen):
                continue
            started.append(self._start(key, game, chosen))
        return started

    def _start(self, key: str, game: Game, players: list[Player]) -> str:
        match_id = secrets.token_hex(6)
        self.store.execute(
            "INSERT INTO arena_matches (id, game, roles, players, status, started) VALUES (?, ?, ?, ?, 'running', ?)",
            (match_id, key, json.dumps(list(game.roles)), json.dumps([p.id for p in players]), time.time()),
        )
        live = LiveArenaMatch(match_id, key, game, players)
        self.live[match_id] = live
        for p in players:
            self._busy[p.id] = self._busy.get(p.id, 0) + 1
            self._played_counts[p.id] += 1
        task = asyncio.get_running_loop().create_task(self._play(live))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return match_id

    async def _play(self, live: LiveArenaMatch) -> None:
        loop = asyncio.get_running_loop()
        game_ref = self._rules_ref(live.key)

        def on_step(step: int, joint: tuple[str, ...]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody watches any more
                loop.call_soon_threadsafe(live.add_step, joint)

        players = {role: p.url for role, p in zip(live.game.roles, live.players, strict=True)}
        try:
            record = await loop.run_in_executor(
                self._referees,
                functools.partial(
                    host_match,
                    game_ref,
                    players,
                    start_clock=self.limits.arena_start_clock,
                    play_clock=self.limits.arena_play_clock,
                    grace=0.5,
                    match_id=f"ggp.arena.{live.id}",
                    on_step=on_step,
                    check_players=False,
                    on_remote=lambda session: setattr(session, "transport", self.transport),
                ),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the rules failed, or a player could not be reached at all
            live.status = "failed"
            live.error = str(exc)[:500]
            self.store.execute(
                "UPDATE arena_matches SET status = 'failed', error = ?, finished = ? WHERE id = ?",
                (live.error, time.time(), live.id),
            )
        else:
            live.status = "over"
            live.goals = list(record.goals)
            self.store.execute(
                "UPDATE arena_matches SET status = 'over', goals = ?, record = ?, finished = ? WHERE id = ?",
                (json.dumps(list(record.goals)), record.to_json(compact=True), time.time(), live.id),
            )
            self._count_result(live.key, [p.id for p in live.players], list(record.goals))
            judge(self.store, self.limits, live, record)
        finally:
            for p in live.players:
                left = self._busy.get(p.id, 0) - 1
                if left > 0:
                    self._busy[p.id] = left
                else:  # no entry for an idle player: the dict holds the players playing now, no more
                    self._busy.pop(p.id, None)
            self.live.pop(live.id, None)
            live.changed()
            self.wake()
