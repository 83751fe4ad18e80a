"""Opening a match: its players and seats checked for a new one, the moves it opens with when it continues
another from a position, one reopened from the store, and its agents made and started on the start threads."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..agents import Agent, make_agent
from ..agents.hidden import hidden_agent
from ..core.errors import GGPError
from ..core.game import Game, State
from ..match.calls import Fault, time_limit
from . import ui
from .agent_pool import AgentPool, Dropped
from .catalog import Catalog
from .limits import Limits
from .live_match import LiveMatch, describe_goals
from .settings import CHANCE, HUMAN, Settings, normalise_player
from .store import StoredMatch


def players_of(game: Game, players: dict[str, str] | Sequence[str]) -> list[str]:
    """Each role's player, normalised: ``players`` maps roles to ``human`` or an agent spec (roles left out:
    human), or lists them in the order of the game's seats (:attr:`~ggp.Game.players`). The chance role of a
    GDL-II game takes no seat: its player is :data:`~ggp.web.settings.CHANCE`, the referee. ``ValueError``
    saying what is wrong otherwise."""
    chance = game.chance_role
    seated = game.players
    if isinstance(players, dict):
        if chance is not None and chance in players:
            raise ValueError(
                f"{chance} is chance in {game.name}: the referee plays it, uniformly at random; no player takes its "
                f"seat (the seats are {', '.join(seated)})"
            )
        unknown = set(players) - set(game.roles)
        if unknown:
            raise ValueError(f"{game.name} has no role {sorted(unknown)[0]!r}; its roles are {', '.join(seated)}")
        specs = [players.get(role, HUMAN) for role in seated]
    else:
        specs = list(players)
        if len(specs) != len(seated):
            raise ValueError(f"{game.name} needs {len(seated)} players: {', '.join(seated)}")
    normalised = []
    for role, spec in zip(seated, specs, strict=True):
        if not isinstance(spec, str):
            raise ValueError(f"the player of {role} must be 'human' or an agent spec string")
        try:
            normalised.append(normalise_player(spec))
        except ValueError as exc:
            raise ValueError(f"{role}: {exc}") from None
    by_role = dict(zip(seated, normalised, strict=True))
    return [CHANCE if role == chance else by_role[role] for role in game.roles]


def seats_taken(game: Game, players: Sequence[str], seats: Iterable[str] | None) -> list[str]:
    """The human roles whose seats the creator takes: ``seats`` (default: every human role), each once.
    ``ValueError`` for a seat that is not a human role."""
    humans = [r for r, p in zip(game.roles, players, strict=True) if p == HUMAN]
    taken = list(dict.fromkeys(humans if seats is None else [seats] if isinstance(seats, str) else seats))
    for role in taken:
        if role not in humans:
            what = "no human role" if role in game.players else "no role"
            raise ValueError(
                f"{game.name} has {what} {role!r} to take a seat for; its human roles are {', '.join(humans)}"
            )
    return taken


def restore(stored: StoredMatch, games: Catalog, limits: Limits, clock: Callable[[], float]) -> LiveMatch:
    """The match as stored; one still played gets this server's clocks if the stored ones exceed ``limits``."""
    game = games.load(stored.game)
    settings = Settings.from_dict(stored.settings)
    match = LiveMatch(stored.id, game, stored.players, settings, clock, key=stored.game)
    match.states = [game.state_from_json(s) for s in stored.states]
    match.joints = [tuple(j) for j in stored.joints]
    match.times = list(stored.times)
    match.infos = list(stored.infos)
    match.created = stored.created
    match.new_turn()  # the step in progress: the one after the stored states
    match._seats = dict(stored.seats)
    for info in match.infos:
        match.notes += [ui.fault_note(game, Fault(**f)) for f in info.get("faults", [])]
    if stored.status == "over" or game.is_terminal(match.state):
        match.ended = stored.ended or "terminal"
        if match.ended == "terminal":
            match._goals = tuple(int(g) for g in game.goals(match.state))
            match.result_text = stored.result or describe_goals(match.roles, match._goals, game.chance_role)
        else:
            match._goals = tuple(int(g) for g in stored.goals) if stored.goals is not None else None
            match.result_text = stored.result
        return match
    # an older server may have allowed longer clocks than this one does
    if settings.agent_time > limits.max_agent_time or not settings.agent_time > 0:
        match.notes.append(f"the agents' time per move is {limits.max_agent_time:g} s, this server's maximum")
        settings.agent_time = limits.max_agent_time
    settings.pace = min(max(settings.pace, 0.0), limits.max_pace)
    for role, text in stored.pending.items():
        if role in game.roles and match.is_human(role):
            with contextlib.suppress(GGPError):
                match.turn.take(role, game.check_move(match.state, role, text))
    return match


async def start_agents(match: LiveMatch, strict: bool, starters: AgentPool, limits: Limits) -> None:
    """Make and start the match's agents on the start threads.

    ``strict``: ``ValueError`` for an agent that fails (a new match); else a random agent replaces it.
    """
    game, clock = match.game, match.settings.agent_time
    start_time = limits.agent_start_time
    # Agents may search during their start clock; a person waiting for the game to begin should not wait
    # long for that, so they are told about one move's time (compiling on first use may still take longer,
    # up to start_time).
    told_start = time_limit(min(start_time, max(1.0, clock)))
    told_play = time_limit(clock)
    notes: list[str] = []

    def make(spec: str) -> Agent:
        # a seat of a GDL-II game gets an agent that decides on what its role knows, never on the state
        return (
            hidden_agent(spec, seed=secrets.randbelow(2**31), seconds=told_play or clock)
            if game.hidden_information
            else make_agent(spec)
        )

    def start_all() -> dict[str, Agent]:
        agents: dict[str, Agent] = {}
        for role, spec in zip(match.roles, match.players, strict=True):
            if spec in (HUMAN, CHANCE):
                continue
            try:
                agent = make(spec)
                agent.start(game, role, start_clock=told_start, play_clock=told_play)
            except Exception as exc:
                if strict:
                    raise ValueError(f"{role}: the agent {spec!r} cannot play {game.name}: {exc}") from None
                notes.append(f"{role}: the agent {spec!r} could not start ({exc}); a random agent plays instead")
                agent = make("random")
                agent.start(game, role, start_clock=told_start, play_clock=told_play)
            agents[role] = agent
        if game.hidden_information and agents:
            # a GDL-II agent plays out from the states it thinks possible on the compiled kernel: compiled on
            # first use, which is done here, on the start clock, rather than in its first move's time
            playouts = getattr(game, "random_playouts", None)
            if playouts is not None:
                with contextlib.suppress(Exception):
                    playouts(1, seed=0, state=game.initial_state())
        return agents

    if all(p in (HUMAN, CHANCE) for p in match.players):
        return
    job = starters.submit(match.id, start_all)
    try:
        await job.started
        agents = await asyncio.wait_for(asyncio.shield(job.done), start_time + limits.grace)
    except TimeoutError:
        starters.abandon(job)
        if strict:
            raise ValueError(
                f"the agents did not start within {start_time:g} s (this server's limit); try again"
            ) from None
        notes.append(f"the agents did not start within {start_time:g} s; random agents play instead")
        agents = {}
        for role, spec in zip(match.roles, match.players, strict=True):
            if spec not in (HUMAN, CHANCE):
                agents[role] = make("random")
                agents[role].start(game, role, start_clock=told_start, play_clock=told_play)
    except Dropped:
        if strict:
            raise ValueError("the server is stopping; try again") from None
        return
    if match.over or match.closed is not None:
        return  # ended while its agents started: they are not needed
    match.agents = agents
    match.notes += notes


def play_opening(
    game: Game, opening: Sequence[Sequence[str]], opened_from: str | None
) -> list[tuple[State, tuple[str, ...], dict[str, Any]]]:
    """The steps of ``opening`` (joint moves as KIF texts) from the initial state: each state, joint move and
    info (the roles with one legal move, ``single``; the match it came from, ``opened_from``). ``ValueError``
    for a move that is not legal there, or an opening that ends the game."""
    state = game.initial_state()
    out = []
    for k, joint in enumerate(opening, 1):
        if game.is_terminal(state):
            raise ValueError(f"the game is over after step {k - 1}: continue from an earlier step")
        if len(joint) != len(game.roles):
            raise ValueError(f"step {k}: {len(game.roles)} moves, one per role, not {len(joint)}")
        try:
            moves = [game.check_move(state, r, m) for r, m in zip(game.roles, joint, strict=True)]
        except GGPError as exc:
            raise ValueError(f"step {k}: {exc}") from None
        info: dict[str, Any] = {"times": [None] * len(game.roles), "faults": []}
        info["single"] = [r for r in game.roles if len(game.legal_moves(state, r)) == 1]
        if opened_from is not None:
            info["opened_from"] = opened_from
        state = game.next_state(state, moves)
        out.append((state, tuple(str(m) for m in moves), info))
    if out and game.is_terminal(state):
        raise ValueError(f"the game is over after step {len(out)}: continue from an earlier step")
    return out
