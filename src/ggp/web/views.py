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
from ..core.information import Information
from ..match.outcome import outcome
from ..registry import view_of
from . import ui
from .live_match import LiveMatch
from .manager import Manager
from .record import iso, opened_from
from .seats import Seats
from .settings import CHANCE, HUMAN
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
            if not match.is_chance(role)  # chance takes no seat: the referee plays it
        }

    def show(
        self, match: LiveMatch, request: Request | None = None, *, svg: bool = False, mine: Iterable[str] | None = None
    ) -> dict[str, Any]:
        """The match's view; with ``request``, ``mine`` lists the seats that request owns (or those given: the
        seats whose tokens a response hands out)."""
        if mine is None and request is not None:
            mine = Seats(request).owned(self.manager, match, match.roles)
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

    A game of hidden information (GDL-II) shows, while it is played, no state, no moves of the history and no
    legal moves but those of the client's own seats: each seat it owns sees its information (its own moves and
    percepts, step by step, as the facts), and everyone sees what is public (whose turn, the step, the
    status, the players). Once it is over everything is shown, every seat's view too. Chance takes no seat
    and is left out of the roles shown.
    """
    game, state = match.game, match.state
    over = match.over
    hidden = match.hidden
    fam = page_family(game)
    seated = match.seat_roles
    owned = [] if mine is None else [r for r in seated if r in set(mine)]
    legal = {}
    to_act = []
    awaiting = match.awaiting()
    for role in seated:
        moves = sorted(game.legal_moves(state, role))
        if not over and not (len(moves) == 1 and moves[0].text == "noop"):
            to_act.append(role)
        if role in awaiting and (not hidden or role in owned):
            legal[role] = ui.annotate_generic(game, moves) if fam == "grid" else ui.annotate(game, state, role, moves)
    last = dict(zip(match.roles, match.joints[-1], strict=True)) if match.joints and not hidden else None
    goals = match.goals if over else None
    seat_goals = [g for r, g in zip(match.roles, goals, strict=True) if r in seated] if goals is not None else None
    played = [] if hidden else history(match)
    out: dict[str, Any] = {
        "id": match.id,
        "game": match.key,
        "title": title if title is not None else match.key,
        "family": fam,
        "controls": ui.controls(game),
        "turn": None if over or hidden else view_of(game).turn(game, state),
        "roles": list(seated),
        "players": {r: p for r, p in zip(match.roles, match.players, strict=True) if r in seated},
        "names": {
            r: ui.player_name(game, p, match.settings.agent_time)
            for r, p in zip(match.roles, match.players, strict=True)
            if r in seated
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
        "outcome": outcome(seated, seat_goals, match.ended or "terminal") if over else None,
        "goals": dict(zip(seated, seat_goals, strict=True)) if seat_goals is not None else None,
        "state": {} if hidden else game.state_to_dict(state),
        "to_act": to_act,
        "awaiting": awaiting,
        "submitted": [r for r in seated if r in match.pending and not over],
        "thinking": {r: round(max(0.0, time.time() - t), 3) for r, t in match.thinking.items()},
        "legal": legal,
        "last_joint": last,
        # a fault note names the move played for a role: hidden while a game of hidden information is on
        "notes": [] if hidden else list(match.notes),
        "seats": seats,
        "moves": played,
        "turns": [] if hidden else turns(match, played),
        "explain": [] if hidden else explanations(match),
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
        view_of(game).changed(game, match.states[-2], state)
        if match.joints and fam not in ("grid", "facts") and not hidden
        else []
    )
    if hidden:
        # who has a choice, who has answered and who thinks would tell others what a seat's percepts told it
        # (in Krieg tic-tac-toe, that a try hit an opponent's cell): each client learns it of its own seats only
        out["to_act"] = [r for r in to_act if r in owned]
        out["awaiting"] = [r for r in awaiting if r in owned]
        out["submitted"] = [r for r in out["submitted"] if r in owned]
        out["thinking"] = {}
    if game.hidden_information:
        out["hidden"] = hidden
        # each seat's view: the client's own seats while the match is on, every seat once it is over
        shown = owned if hidden else list(seated)
        out["information"] = {r: information_lines(match.information(r)) for r in shown}
        if hidden:
            lines = _seen_lines(out["information"])
            out["facts"] = lines
            if svg:
                out["svg"] = ui.lines_svg(lines, game.board_size)
        else:
            out["facts"] = game.state_facts(state) + _seen_lines(out["information"], every=True)
    elif fam in ("grid", "facts"):
        out["facts"] = ui.generic_svg(game, state)[1] if fam == "grid" else game.state_facts(state)
    if mine is not None:
        out["mine"] = owned
    if svg and "svg" not in out:
        out["svg"] = ui.board_svg(game, state, before=match.states[-2] if len(match.states) > 1 else None)
    return out


def information_lines(seen: Information) -> list[str]:
    """A role's information in words, a line per step in which it did or saw something:
    ``step 2: you played (choose 1); you saw (open_door 3)``."""
    out = []
    for k, step in enumerate(seen.steps, 1):
        parts = [] if step.move.text == "noop" else [f"you played {step.move}"]
        if step.percepts:
            parts.append("you saw " + " ".join(step.percepts))
        if parts:
            out.append(f"step {k}: " + "; ".join(parts))
    return out


def _seen_lines(information: dict[str, list[str]], every: bool = False) -> list[str]:
    """The facts list's lines of the seats' views: one seat's lines as they are, several seats' each named."""
    if not information:
        return [ui.HIDDEN_NOTE]
    if len(information) == 1 and not every:
        (lines,) = information.values()
        return lines or ["nothing seen yet"]
    return [f"{role}: {line}" for role, lines in information.items() for line in lines or ["nothing seen"]]


def summary(m: StoredMatch) -> dict[str, Any]:
    """A stored match in one line of the history (chance, a GDL-II game's ``random``, left out: it has no seat)."""
    roles = [r for r, p in zip(m.roles, m.players, strict=True) if p != CHANCE]
    goals = None if m.goals is None else [g for r, g in zip(m.roles, m.goals, strict=True) if r in roles]
    return {
        "id": m.id,
        "game": m.game,
        "players": {r: p for r, p in zip(m.roles, m.players, strict=True) if r in roles},
        "status": m.status,
        "ended": m.ended,
        "result": m.result,
        "outcome": outcome(roles, goals, m.ended or "terminal") if m.status == "over" else None,
        "steps": m.steps,
        "goals": dict(zip(roles, goals, strict=True)) if goals is not None else None,
        "created": iso(m.created),
        "updated": iso(m.updated),
    }


def page_family(game: Game) -> str:
    """What the play page draws: the game's family (its own board), else ``grid`` for a rule sheet whose
    facts describe a board, else ``facts`` (a list of facts and the legal moves)."""
    fam = ui.family(game)
    if fam != "other":
        return fam
    if game.hidden_information:  # no board: a seat's view is a list of what it did and saw
        return "facts"
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
    seats = [(r, p) for r, p in zip(match.roles, match.players, strict=True) if not match.is_chance(r)]
    names = [f"{r}: {ui.player_name(game, p, match.settings.agent_time)}" for r, p in seats]
    goals = match.goals
    seat_goals = (
        None if goals is None else [g for r, g in zip(match.roles, goals, strict=True) if not match.is_chance(r)]
    )
    result = outcome(match.seat_roles, seat_goals, match.ended) if match.over and match.ended else "in progress"
    lines = [f"{title} · game {match.id}", " · ".join(names), f"Started {iso(match.created)[:16]} UTC", ""]
    lines += [f"Result: {result}", ""]
    if match.hidden:
        return "\n".join([*lines, "The moves are shown once the game is over (a game of hidden information)."]) + "\n"
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
