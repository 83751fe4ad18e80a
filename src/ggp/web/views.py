"""What the API and the pages show of a match: JSON views built from the live match or the stored one."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from starlette.requests import Request

from ..core.family import View
from ..core.game import Game
from ..match.outcome import outcome
from ..registry import view_of
from . import ui
from .live_match import LiveMatch
from .manager import Manager
from .record import iso, opened_from
from .seats import Seats
from .settings import HUMAN
from .store import StoredMatch

_MATCH_ID = re.compile(r"[0-9a-f]{1,64}")


def is_match_id(text: str) -> bool:
    """Whether ``text`` can be a match id (lower-case hex), so that junk is answered 404 without a look-up."""
    return _MATCH_ID.fullmatch(text) is not None


class Presenter:
    """Views of the matches of one server (``epoch`` names it), with the seats of the client asking."""

    def __init__(self, manager: Manager, epoch: str) -> None:
        self.manager = manager
        self.epoch = epoch

    def seats(self, match: LiveMatch) -> dict[str, str]:
        """Each role's seat: ``agent``, ``open`` (a human seat nobody took) or ``taken``."""
        return {
            role: "agent" if player != HUMAN else ("taken" if match.seat_taken(role) else "open")
            for role, player in zip(match.roles, match.players, strict=True)
        }

    def show(self, match: LiveMatch, request: Request | None = None, *, svg: bool = False) -> dict[str, Any]:
        """The match's view; with ``request``, ``mine`` lists the seats that request owns."""
        mine = None if request is None else Seats(request).owned(self.manager, match, match.roles)
        title = self.manager.games.title(match.key)
        return view(match, epoch=self.epoch, svg=svg, seats=self.seats(match), mine=mine, title=title)


def view(
    match: LiveMatch,
    *,
    epoch: str,
    seats: dict[str, str],
    svg: bool = False,
    mine: Iterable[str] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """What the API and the play page show of a match now.

    ``epoch`` names the server instance (a restarted server counts ``version`` from 0 again); ``seats`` maps
    each role to ``agent``, ``open`` or ``taken``; ``mine`` lists the seats of the client asking (left out of
    views that go to everyone, such as the event streams).
    """
    game, state = match.game, match.state
    over = match.over
    fam = page_family(game)
    legal = {}
    to_act = []
    awaiting = match.awaiting()
    for role in match.roles:
        moves = sorted(game.legal_moves(state, role))
        if not over and not (len(moves) == 1 and moves[0].text == "noop"):
            to_act.append(role)
        if role in awaiting:
            legal[role] = ui.annotate_generic(game, moves) if fam == "grid" else ui.annotate(game, state, role, moves)
    last = dict(zip(match.roles, match.joints[-1], strict=True)) if match.joints else None
    goals = match.goals if over else None
    played = history(match)
    out: dict[str, Any] = {
        "id": match.id,
        "game": match.key,
        "title": title if title is not None else match.key,
        "family": fam,
        "controls": ui.controls(game),
        "turn": None if over else view_of(game).turn(game, state),
        "roles": list(match.roles),
        "players": dict(zip(match.roles, match.players, strict=True)),
        "names": {
            r: ui.player_name(game, p, match.settings.agent_time)
            for r, p in zip(match.roles, match.players, strict=True)
        },
        "settings": asdict(match.settings),
        "created": iso(match.created),
        "epoch": epoch,
        "version": match.version,
        "step": match.step,
        "status": "over" if over else "playing",
        "terminal": over,
        "ended": match.ended,
        "result": match.result_text,
        "outcome": outcome(match.roles, goals, match.ended or "terminal") if over else None,
        "goals": dict(zip(match.roles, goals, strict=True)) if goals is not None else None,
        "state": game.state_to_dict(state),
        "to_act": to_act,
        "awaiting": awaiting,
        "submitted": [r for r in match.roles if r in match.pending and not over],
        "thinking": {r: round(max(0.0, time.time() - t), 3) for r, t in match.thinking.items()},
        "legal": legal,
        "last_joint": last,
        "notes": list(match.notes),
        "seats": seats,
        "moves": played,
        "turns": turns(match, played),
        "explain": explanations(match),
        "rematch": match.rematch,
        # a game continued from a position of another: that game, and how many of its steps this one opened with
        "opened_from": opened_from(match.infos),
        "draw_offers": sorted(match.draw_offers),
        # the people's clock in this step: seconds per move and left (None when it does not run)
        "clock": {"seconds": match.settings.human_time, "left": left}
        if (left := match.clock_left()) is not None
        else None,
    }
    # the last step's cells on a family's own board (a rule sheet's grid marks them in its picture)
    out["last_cells"] = (
        view_of(game).changed(game, match.states[-2], state) if match.joints and fam not in ("grid", "facts") else []
    )
    if fam in ("grid", "facts"):
        out["facts"] = ui.generic_svg(game, state)[1] if fam == "grid" else game.state_facts(state)
    if mine is not None:
        out["mine"] = [r for r in match.roles if r in set(mine)]
    if svg:
        out["svg"] = ui.board_svg(game, state, before=match.states[-2] if len(match.states) > 1 else None)
    return out


def summary(m: StoredMatch) -> dict[str, Any]:
    """A stored match in one line of the history."""
    return {
        "id": m.id,
        "game": m.game,
        "players": dict(zip(m.roles, m.players, strict=True)),
        "status": m.status,
        "ended": m.ended,
        "result": m.result,
        "outcome": outcome(m.roles, m.goals, m.ended or "terminal") if m.status == "over" else None,
        "steps": m.steps,
        "goals": dict(zip(m.roles, m.goals, strict=True)) if m.goals is not None else None,
        "created": iso(m.created),
        "updated": iso(m.updated),
    }


def page_family(game: Game) -> str:
    """What the play page draws: the game's family (its own board), else ``grid`` for a rule sheet whose
    facts describe a board, else ``facts`` (a list of facts and the legal moves)."""
    fam = ui.family(game)
    if fam != "other":
        return fam
    return "grid" if ui.grid_of(game) is not None else "facts"


def history(match: LiveMatch) -> list[dict[str, Any]]:
    """Every joint move so far: ``step``, ``joint`` (role -> KIF), ``readable`` (role -> notation) and
    ``forced`` (the roles whose only legal move was played for them)."""
    game = match.game
    out = []
    for k, joint in enumerate(match.joints, 1):
        info = match.infos[k - 1] if k - 1 < len(match.infos) else {}
        out.append(
            {
                "step": k,
                "joint": dict(zip(match.roles, joint, strict=True)),
                "readable": {r: ui.readable(game, m) for r, m in zip(match.roles, joint, strict=True)},
                "forced": list(info.get("forced", [])),
            }
        )
    return out


def turns(match: LiveMatch, moves: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The moves as numbered turns, as people write a game down.

    Where roles choose one at a time (the others' only move is a pass), a turn is each role's move once round,
    a role's steps running (Amazons' move and arrow) one ply in its view's words (``1. white c1-c5/e7 black
    f8-f4/a4``); in a game where roles have chosen together, a turn is one step with every choosing role's move.
    Each ply: ``role``, ``text``, ``moves`` (its KIF), ``steps`` and ``forced`` (its only legal move was played).
    ``moves`` is the match's :func:`history` when the caller has it already.
    """
    view = view_of(match.game)
    steps = []
    for entry in history(match) if moves is None else moves:
        info = match.infos[entry["step"] - 1] if entry["step"] - 1 < len(match.infos) else {}
        # who had a choice (in steps stored before "single" was kept: who did not pass), else everyone
        movers = [r for r in match.roles if r not in info["single"]] if "single" in info else []
        movers = movers or [r for r in match.roles if entry["joint"][r] != "noop"] or list(match.roles)
        steps.append((entry, movers))
    out: list[dict[str, Any]] = []
    if any(len(movers) > 1 for _, movers in steps):
        for entry, movers in steps:
            plies = [_ply(r, entry, view) for r in movers]
            out.append({"number": len(out) + 1, "plies": plies})
        return out
    first = steps[0][1][0] if steps else None  # the role whose move opens a turn
    for entry, (role,) in steps:
        last = out[-1]["plies"][-1] if out else None
        if last is not None and last["role"] == role:  # a turn of several steps (a move, then its arrow)
            last["parts"].append(entry["readable"][role])
            last["moves"].append(entry["joint"][role])
            last["steps"].append(entry["step"])
            last["forced"] = last["forced"] or role in entry["forced"]
            last["text"] = view.ply(last["parts"])
            continue
        if role == first or not out:
            out.append({"number": len(out) + 1, "plies": []})
        out[-1]["plies"].append(_ply(role, entry, view))
    for turn in out:
        for ply in turn["plies"]:
            ply.pop("parts", None)
    return out


def text_record(match: LiveMatch, title: str) -> str:
    """A match as a person writes it down: the game, who played, the result in words, then the numbered turns
    in the game's notation (the readable export beside the JSON record)."""
    game = match.game
    seats = zip(match.roles, match.players, strict=True)
    names = [f"{r}: {ui.player_name(game, p, match.settings.agent_time)}" for r, p in seats]
    result = outcome(match.roles, match.goals, match.ended) if match.over and match.ended else "in progress"
    lines = [f"{title} · game {match.id}", " · ".join(names), f"Started {iso(match.created)[:16]} UTC", ""]
    lines += [f"Result: {result}", ""]
    for turn in turns(match):
        plies = "  ".join(f"{p['role']} {p['text']}" for p in turn["plies"])
        lines.append(f"{turn['number']}. {plies}")
    return "\n".join(lines) + "\n"


def _ply(role: str, entry: dict[str, Any], view: View) -> dict[str, Any]:
    said = entry["readable"][role]
    return {
        "role": role,
        "text": view.ply([said]),
        "parts": [said],
        "moves": [entry["joint"][role]],
        "steps": [entry["step"]],
        "forced": role in entry["forced"],
    }


def explanations(match: LiveMatch) -> list[str]:
    """What the last step did that the board does not show: forced moves, a blocked step."""
    if not match.joints:
        return []
    game = match.game
    joint = dict(zip(match.roles, match.joints[-1], strict=True))
    # the forced steps at the end, however many came one after the other (an arrow, then the other's move)
    first = len(match.infos)
    while first > 0 and match.infos[first - 1].get("forced"):
        first -= 1
    out = [
        f"{role} had one legal move, {ui.readable(game, match.joints[k][match.roles.index(role)])}: "
        f"it was played for {role}"
        for k in range(first, len(match.infos))
        for role in match.infos[k].get("forced", [])
    ]
    return out + ui.explain(game, match.states[-2], joint, match.states[-1])
