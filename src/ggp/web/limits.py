"""Every bound the web app keeps, in one place: :class:`Limits`.

A server that anyone on its network can reach must not let one visitor take
all its memory, threads or time. Each number below bounds one resource; the
defaults suit one person's machine. :meth:`Limits.from_env` reads overrides
from ``GGP_WEB_<FIELD>`` environment variables (``GGP_WEB_MAX_LIVE_MATCHES=16``,
``GGP_WEB_ALLOWED_HOSTS=localhost,ggp.example``), and
``dataclasses.replace(limits, field=value)`` makes a variant in code.

>>> Limits().max_agent_time
60.0
>>> Limits.from_env({"GGP_WEB_AGENT_THREADS": "4"}).agent_threads
4
>>> Limits(agent_threads=0)
Traceback (most recent call last):
...
ValueError: agent_threads must be a whole number of at least 1, not 0
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_PREFIX = "GGP_WEB_"


@dataclass(frozen=True)
class Limits:
    """The web app's bounds (see the module docstring); invalid values raise ``ValueError`` naming the field."""

    # --- matches in memory -------------------------------------------------------------------------
    #: Matches held in memory at once (playing, or recently opened). When full, a match nobody watches and no
    #: agent works on is unloaded to make room (it stays in SQLite); if none can be, ``LimitReached`` is raised.
    #: What a match holds is mostly its agents' search trees: an Amazons player's is 60-90 MB, so 16 such
    #: matches take about 1.5 GB (and the allocator keeps up to as much again for reuse).
    max_live_matches: int = 16
    #: Seconds a match with no activity and nobody watching stays in memory; it is reloaded when opened again.
    idle_seconds: float = 600.0
    #: Seconds a match with people may go without a move before it is ended as abandoned (not while in memory).
    abandon_seconds: float = 3 * 86400.0
    #: Seconds a client refused by ``max_live_matches`` is told to wait (HTTP ``Retry-After``).
    retry_after: int = 30

    # --- agents ----------------------------------------------------------------------------------------
    #: The largest ``agent_time`` (seconds an agent may think per move) a match may ask for.
    max_agent_time: float = 60.0
    #: The largest ``pace`` (seconds at least between the steps of a match without people).
    max_pace: float = 10.0
    #: The longest ``human_time`` (a person's clock per move, 0 for none) a match may ask for.
    max_human_time: float = 3600.0
    #: Threads that run agents' moves, shared by all matches in turn (one call per match at a time).
    agent_threads: int = 2
    #: Threads that make and start agents for new or reopened matches, apart from the thinking ones, so that
    #: a new game starts while other matches' agents think.
    start_threads: int = 1
    #: Seconds an agent's ``start`` may take (it may compile code on first use) before a random agent replaces it.
    agent_start_time: float = 120.0
    #: Seconds past its clock an agent's move is still waited for; later, a random move is played for it.
    grace: float = 0.25

    # --- HTTP (used by the app, kept here so that every bound is in one object) -------------------------
    #: Largest request body in bytes; a longer one is refused before it is read.
    max_body_bytes: int = 65536
    #: Largest ``offset`` of a list request (and the page number times the page size).
    max_page_offset: int = 10**6
    #: Most matches one list request returns.
    max_page_size: int = 500
    #: Longest ``wait=`` (seconds) a request may ask for.
    max_wait: float = 60.0
    #: Event streams one client may hold open at once.
    max_streams_per_client: int = 16
    #: Characters of a client's input quoted back in an error message.
    max_echo_chars: int = 80
    #: Host names (the ``Host`` header, without the port) the server answers; others are refused.
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]", "::1")

    # --- the arena (remote GGP players) -----------------------------------------------------------------
    #: Addresses a registered player's URL may point to although they are loopback, private, link-local or
    #: reserved (refused by default, so that the server cannot be made to probe its own network): networks
    #: (``127.0.0.0/8``, ``10.1.2.3``) or host names. ``GGP_WEB_ARENA_ALLOW=127.0.0.0/8``.
    arena_allow: tuple[str, ...] = ()
    #: Arena matches played at once.
    arena_matches: int = 2
    #: Arena matches one registered player plays at once (a GGP player plays one match at a time).
    arena_player_matches: int = 1
    #: The games the arena schedules (built-in names or catalog keys), in turn.
    arena_games: tuple[str, ...] = ("wallmaze", "bomberman2p", "amazons_8x8")
    #: Uploaded sheets that may be added to the arena's games besides those (each at most 512 KiB).
    arena_uploads: int = 8
    #: The built-in agents that play in the arena against registered players (agent specs).
    arena_agents: tuple[str, ...] = ("random", "mcts")
    #: The arena's clocks, in seconds: to start (read the rules) and per move.
    arena_start_clock: float = 10.0
    arena_play_clock: float = 2.0
    #: Seconds between matchmaking rounds (a registration or a finished match starts one at once).
    arena_interval: float = 5.0
    #: Registered players kept (paused ones count; removed ones do not).
    arena_max_players: int = 200
    #: Registrations one client address may make per hour.
    arena_registrations_per_hour: int = 20
    #: A player whose share of faulty moves in a match is over this fraction gets a strike; two strikes in a
    #: row pause it, and so does not answering INFO before a match.
    arena_fault_share: float = 0.25

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type == "int":
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"{f.name} must be a whole number of at least 1, not {value!r}")
            elif f.type == "float":
                floor_ok = f.name in (
                    "idle_seconds",
                    "grace",
                    "arena_fault_share",
                )  # 0 is meaningful: unload at once / no grace
                if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                    raise ValueError(f"{f.name} must be a finite number of seconds, not {value!r}")
                if value < 0 or (value == 0 and not floor_ok):
                    raise ValueError(f"{f.name} must be {'0 or more' if floor_ok else 'more than 0'}, not {value!r}")
                object.__setattr__(self, f.name, float(value))
        hosts = self.allowed_hosts
        if isinstance(hosts, str) or not all(isinstance(h, str) and h.strip() for h in hosts) or not hosts:
            raise ValueError(f"allowed_hosts must be a non-empty tuple of host names, not {hosts!r}")
        object.__setattr__(self, "allowed_hosts", tuple(h.strip().lower() for h in hosts))
        for name in ("arena_allow", "arena_games", "arena_agents"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ValueError(f"{name} must be a tuple of texts, not {value!r}")
            object.__setattr__(self, name, tuple(v.strip() for v in value))
        if not self.arena_fault_share <= 1:
            raise ValueError(f"arena_fault_share must be a fraction from 0 to 1, not {self.arena_fault_share!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Limits:
        """Limits from ``GGP_WEB_<FIELD>`` variables of ``environ`` (default ``os.environ``), then ``overrides``.

        A malformed variable raises ``ValueError`` naming it.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            name = _PREFIX + f.name.upper()
            text = env.get(name)
            if text is None:
                continue
            try:
                if f.type == "int":
                    values[f.name] = int(text)
                elif f.type == "float":
                    values[f.name] = float(text)
                else:
                    values[f.name] = tuple(h for h in text.replace(" ", ",").split(",") if h)
            except ValueError:
                raise ValueError(f"{name} must be a number, not {text!r}") from None
        values.update(overrides)
        try:
            return cls(**values)
        except ValueError as exc:
            raise ValueError(f"{exc} (from {_PREFIX}* environment variables or arguments)") from None
