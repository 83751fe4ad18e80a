"""Match records: one JSON document per match, readable back, validated and replayable.

A record holds everything needed to audit a match: the game, the agent spec
of each role, the clocks, the seed, the start and end times, every joint move
(KIF text, in role order) with each role's think time and any fault (an agent
that raised, returned an illegal move or a non-move, or ran out of time, and
the random legal move the referee played for it), the final goals, the number
of steps and the final state.

The document (format ``ggp-match``, version 1)::

    {
      "format": "ggp-match", "version": 1,
      "game": "wallmaze", "roles": ["white", "black"],
      "agents": {"white": "random:seed=1", "black": "random:seed=2"},
      "clocks": {"start": 5.0, "play": 1.0, "grace": 0.25, "margin": 0.1},
      "seed": 7,
      "started": "2025-01-01T12:00:00.000+00:00", "finished": "2025-01-01T12:00:01.250+00:00",
      "faults": [],                      # faults of start and stop (see below)
      "moves": [                         # joint move k is played from state k-1
        {"step": 1, "joint": ["(move 2 5 3 5)", "noop"], "times": [0.0003, 0.0002], "faults": []},
        ...
      ],
      "steps": 29, "goals": [100, 0], "terminal": true,
      "final_state": {...}               # Game.state_to_dict of the final state
    }

A fault is ``{"phase": "start"|"play"|"stop", "step": k or null, "role": ...,
"kind": ..., "message": ..., "returned": ..., "played": ...}``; ``kind`` is one
of :data:`FAULT_KINDS`, ``returned`` what the agent returned (text, or null),
``played`` the move the referee played instead (play faults only) and
``traceback`` (optional) the agent's traceback. A think time is ``null`` when
the agent was not asked (it was still busy with an earlier call).

>>> import ggp
>>> from ggp.agents import RandomAgent
>>> from ggp.match import Referee
>>> game = ggp.load("wallmaze")
>>> record = Referee(game, play_clock=1.0, seed=3).run([RandomAgent(seed=1), RandomAgent(seed=2)])
>>> again = MatchRecord.from_json(record.to_json(), verify=True)
>>> again.goals == record.goals and again.steps == len(again.moves)
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import GGPError
from ..core.game import Game, State
from ..core.information import Information, information_of
from .calls import FAULT_KINDS, PHASES, Fault

FORMAT = "ggp-match"
VERSION = 1
#: The largest match record file read (a long Amazons 10x10 match takes well under 1 MiB).
MAX_RECORD_BYTES = 64 * 2**20


class RecordFormatError(GGPError, ValueError):
    """A match record is malformed, or its moves do not replay to its result."""


@dataclass(frozen=True)
class JointMove:
    """One step of a match: the joint move played (role order), think times and faults."""

    step: int
    joint: tuple[str, ...]
    times: tuple[float | None, ...]
    faults: tuple[Fault, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "joint": list(self.joint),
            "times": list(self.times),
            "faults": [f.to_dict() for f in self.faults],
        }


@dataclass
class MatchRecord:
    """The record of one match; see the module documentation for the JSON document."""

    game: str
    roles: tuple[str, ...]
    agents: tuple[str, ...]
    start_clock: float | None
    play_clock: float | None
    seed: int | None
    started: str
    finished: str
    moves: list[JointMove]
    goals: tuple[int, ...]
    final_state: dict[str, Any]
    terminal: bool = True
    grace: float = 0.0
    margin: float = 0.0
    faults: list[Fault] = field(default_factory=list)

    # --- derived ---------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        """The number of joint moves played."""
        return len(self.moves)

    def all_faults(self) -> Iterator[Fault]:
        """Every fault of the match, in the order they happened (start, play, stop)."""
        yield from (f for f in self.faults if f.phase == "start")
        for move in self.moves:
            yield from move.faults
        yield from (f for f in self.faults if f.phase != "start")

    def agent_of(self, role: str) -> str:
        """The agent spec that played ``role``."""
        return self.agents[self.roles.index(role)]

    # --- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "roles": list(self.roles),
            "agents": dict(zip(self.roles, self.agents, strict=True)),
            "clocks": {"start": self.start_clock, "play": self.play_clock, "grace": self.grace, "margin": self.margin},
            "seed": self.seed,
            "started": self.started,
            "finished": self.finished,
            "faults": [f.to_dict() for f in self.faults],
            "moves": [m.to_dict() for m in self.moves],
            "steps": self.steps,
            "goals": list(self.goals),
            "terminal": self.terminal,
            "final_state": self.final_state,
        }

    def to_json(self, compact: bool = False) -> str:
        """The record as JSON text: one line per field and per move, or (``compact``) one line in all."""
        data = self.to_dict()
        if compact:
            return json.dumps(data, separators=(",", ":"))
        lines = []
        for key, value in data.items():
            if key in ("moves", "faults") and value:
                items = ",\n".join(f"    {json.dumps(item)}" for item in value)
                lines.append(f"  {json.dumps(key)}: [\n{items}\n  ]")
            else:
                lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
        return "{\n" + ",\n".join(lines) + "\n}"

    def save(self, path: str | Path) -> Path:
        """Write the record to ``path`` (creating its folder); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_json() + "\n", encoding="utf-8")
        return target

    @classmethod
    def from_dict(cls, data: Any, *, verify: bool = False, source: str = "match record") -> MatchRecord:
        """Read a record from its parsed JSON; :class:`RecordFormatError` says what is wrong.

        With ``verify``, the moves are also replayed through the game (see :meth:`verify`).
        """
        record = _parse(data, source)
        if verify:
            record.verify(source=source)
        return record

    @classmethod
    def from_json(cls, text: str | bytes, *, verify: bool = False, source: str = "match record") -> MatchRecord:
        """Read a record from JSON text; :class:`RecordFormatError` says what is wrong."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise RecordFormatError(f"{source}: not JSON: {exc}") from None
        except RecursionError:
            raise RecordFormatError(f"{source}: not a match record: its JSON nests too deeply") from None
        return cls.from_dict(data, verify=verify, source=source)

    @classmethod
    def load(cls, path: str | Path, *, verify: bool = False) -> MatchRecord:
        """Read the record in file ``path``; :class:`RecordFormatError` for a missing or malformed file."""
        try:
            with Path(path).open("rb") as fh:
                data = fh.read(MAX_RECORD_BYTES + 1)
            if len(data) > MAX_RECORD_BYTES:
                raise RecordFormatError(
                    f"cannot read match record {str(path)!r}: it is larger than {MAX_RECORD_BYTES // 2**20} MiB"
                )
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RecordFormatError(f"cannot read match record {str(path)!r}: {exc}") from None
        return cls.from_json(text, verify=verify, source=str(path))

    # --- replay ----------------------------------------------------------------------------
    def load_game(self) -> Game:
        """The game this record is of; :class:`RecordFormatError` if it is unknown or its roles differ."""
        from ..registry import load

        try:
            game = load(self.game)
        except GGPError as exc:
            raise RecordFormatError(f"match record of an unknown game: {exc}") from None
        if tuple(game.roles) != self.roles:
            raise RecordFormatError(
                f"the record's roles {', '.join(self.roles)} are not those of {game.name} ({', '.join(game.roles)})"
            )
        return game

    def replay(self, game: Game | None = None, *, source: str = "match record") -> list[State]:
        """Every state of the match, from the initial one to the final one, by replaying the moves.

        Raises :class:`RecordFormatError` naming the step if a joint move is illegal.
        """
        game = game or self.load_game()
        state = game.initial_state()
        states = [state]
        for move in self.moves:
            try:
                state = game.next_state(state, [game.parse_move(text) for text in move.joint])
            except GGPError as exc:
                raise RecordFormatError(f"{source}: step {move.step} does not replay: {exc}") from None
            states.append(state)
        return states

    def views(self, game: Game | None = None) -> dict[str, Information]:
        """Each player's view of the match (its own moves and percepts, step by step), from the true history
        the record keeps: what a GDL-II game's player knew at each step. In a game of perfect information a
        view is the role's own moves alone (every role saw the state)."""
        game = game or self.load_game()
        states = self.replay(game)
        joints = [[game.parse_move(text) for text in move.joint] for move in self.moves]
        return {role: information_of(game, role, states, joints) for role in game.players}

    def verify(self, game: Game | None = None, *, source: str = "match record") -> list[State]:
        """Replay the moves and check that they reach the recorded final state and goals.

        Returns the states (as :meth:`replay`); raises :class:`RecordFormatError` otherwise.
        """
        game = game or self.load_game()
        states = self.replay(game, source=source)
        final = states[-1]
        terminal = game.is_terminal(final)
        if terminal != self.terminal:
            how = "ends" if terminal else "does not end"
            raise RecordFormatError(f"{source}: the game {how} after the recorded {self.steps} moves")
        goals = tuple(game.goals(final))
        if goals != self.goals:
            raise RecordFormatError(f"{source}: the moves give goals {list(goals)}, the record says {list(self.goals)}")
        try:
            recorded = game.state_from_dict(self.final_state)
        except GGPError as exc:
            raise RecordFormatError(f"{source}: final_state is not a state of {game.name}: {exc}") from None
        if recorded != final:
            raise RecordFormatError(f"{source}: the moves do not reach the recorded final state")
        return states


# --- reading and validating ---------------------------------------------------------------------
def _parse(data: Any, source: str) -> MatchRecord:
    def fail(where: str, what: str) -> RecordFormatError:
        return RecordFormatError(f"{source}: {where}: {what}")

    if not isinstance(data, dict):
        raise RecordFormatError(f"{source}: a match record is a JSON object, not {_kind(data)}")
    if data.get("format") != FORMAT:
        raise fail("format", f"expected {FORMAT!r}, found {data.get('format')!r}: this is not a ggp match record")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise fail("version", f"expected a positive whole number, found {version!r}")
    if version > VERSION:
        raise fail("version", f"version {version} is newer than this ggp reads ({VERSION}); upgrade ggp")
    required = ("game", "roles", "agents", "clocks", "seed", "started", "finished", "moves", "steps", "goals")
    missing = [key for key in (*required, "final_state") if key not in data]
    if missing:
        raise fail("fields", f"missing {', '.join(missing)}")

    game = _text(data["game"], "game", fail)
    roles_raw = data["roles"]
    if not isinstance(roles_raw, list) or not roles_raw:
        raise fail("roles", f"expected a non-empty list of role names, found {_kind(roles_raw)}")
    roles = tuple(_text(r, f"roles[{i}]", fail) for i, r in enumerate(roles_raw))
    if len(set(roles)) != len(roles):
        raise fail("roles", "a role is named twice")
    agents_raw = data["agents"]
    if not isinstance(agents_raw, dict) or set(agents_raw) != set(roles):
        raise fail("agents", f"expected an object with one agent spec per role ({', '.join(roles)})")
    agents = tuple(_text(agents_raw[r], f"agents.{r}", fail) for r in roles)

    clocks = data["clocks"]
    if not isinstance(clocks, dict):
        raise fail("clocks", f"expected an object, found {_kind(clocks)}")
    start_clock = _number(clocks.get("start"), "clocks.start", fail, optional=True)
    play_clock = _number(clocks.get("play"), "clocks.play", fail, optional=True)
    grace = _number(clocks.get("grace", 0.0), "clocks.grace", fail) or 0.0
    margin = _number(clocks.get("margin", 0.0), "clocks.margin", fail) or 0.0

    seed = data["seed"]
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise fail("seed", f"expected a whole number or null, found {_kind(seed)}")
    started = _text(data["started"], "started", fail)
    finished = _text(data["finished"], "finished", fail)

    faults_raw = data.get("faults", [])
    if not isinstance(faults_raw, list):
        raise fail("faults", f"expected a list, found {_kind(faults_raw)}")
    faults = [_fault(f, f"faults[{i}]", roles, fail) for i, f in enumerate(faults_raw)]
    for i, f in enumerate(faults):
        if f.phase == "play":
            raise fail(f"faults[{i}]", "faults of play belong to their move in 'moves'")

    moves_raw = data["moves"]
    if not isinstance(moves_raw, list):
        raise fail("moves", f"expected a list of joint moves, found {_kind(moves_raw)}")
    moves = [_joint_move(m, i, roles, fail) for i, m in enumerate(moves_raw)]
    steps = data["steps"]
    if not isinstance(steps, int) or isinstance(steps, bool) or steps != len(moves):
        raise fail("steps", f"says {steps!r} but the record has {len(moves)} joint moves")

    goals_raw = data["goals"]
    if not isinstance(goals_raw, list) or len(goals_raw) != len(roles):
        raise fail("goals", f"expected a list of {len(roles)} goal values, one per role")
    goals = tuple(_goal(g, f"goals[{i}]", fail) for i, g in enumerate(goals_raw))
    terminal = data.get("terminal", True)
    if not isinstance(terminal, bool):
        raise fail("terminal", f"expected true or false, found {_kind(terminal)}")
    final_state = data["final_state"]
    if not isinstance(final_state, dict):
        raise fail("final_state", f"expected a state object, found {_kind(final_state)}")
    return MatchRecord(
        game=game,
        roles=roles,
        agents=agents,
        start_clock=start_clock,
        play_clock=play_clock,
        seed=seed,
        started=started,
        finished=finished,
        moves=moves,
        goals=goals,
        final_state=final_state,
        terminal=terminal,
        grace=grace,
        margin=margin,
        faults=faults,
    )


def _joint_move(data: Any, index: int, roles: Sequence[str], fail: Any) -> JointMove:
    where = f"moves[{index}]"
    if not isinstance(data, dict):
        raise fail(where, f"expected an object, found {_kind(data)}")
    step = data.get("step", index + 1)
    if step != index + 1 or isinstance(step, bool):
        raise fail(f"{where}.step", f"expected {index + 1}, found {step!r}")
    joint = data.get("joint")
    if not isinstance(joint, list) or len(joint) != len(roles):
        raise fail(f"{where}.joint", f"expected a list of {len(roles)} moves, one per role")
    texts = tuple(_text(m, f"{where}.joint[{i}]", fail) for i, m in enumerate(joint))
    times_raw = data.get("times", [None] * len(roles))
    if not isinstance(times_raw, list) or len(times_raw) != len(roles):
        raise fail(f"{where}.times", f"expected a list of {len(roles)} think times (seconds or null)")
    times = tuple(_number(t, f"{where}.times[{i}]", fail, optional=True) for i, t in enumerate(times_raw))
    faults_raw = data.get("faults", [])
    if not isinstance(faults_raw, list):
        raise fail(f"{where}.faults", f"expected a list, found {_kind(faults_raw)}")
    faults = tuple(_fault(f, f"{where}.faults[{i}]", roles, fail) for i, f in enumerate(faults_raw))
    for i, f in enumerate(faults):
        if f.phase != "play" or f.step != index + 1:
            raise fail(f"{where}.faults[{i}]", f"expected a fault of play at step {index + 1}")
    return JointMove(step=index + 1, joint=texts, times=times, faults=faults)


def _fault(data: Any, where: str, roles: Sequence[str], fail: Any) -> Fault:
    if not isinstance(data, dict):
        raise fail(where, f"expected an object, found {_kind(data)}")
    role = _text(data.get("role"), f"{where}.role", fail)
    if role not in roles:
        raise fail(f"{where}.role", f"{role!r} is not a role of the match")
    kind = data.get("kind")
    if kind not in FAULT_KINDS:
        raise fail(f"{where}.kind", f"expected one of {', '.join(FAULT_KINDS)}, found {kind!r}")
    phase = data.get("phase", "play")
    if phase not in PHASES:
        raise fail(f"{where}.phase", f"expected one of {', '.join(PHASES)}, found {phase!r}")
    step = data.get("step")
    if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 1):
        raise fail(f"{where}.step", f"expected a step number or null, found {step!r}")
    message = _text(data.get("message", ""), f"{where}.message", fail)
    extras = {}
    for key in ("returned", "played", "traceback"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise fail(f"{where}.{key}", f"expected text or null, found {_kind(value)}")
        extras[key] = value
    return Fault(role=role, kind=kind, message=message, phase=phase, step=step, **extras)


def _text(value: Any, where: str, fail: Any) -> str:
    if not isinstance(value, str):
        raise fail(where, f"expected text, found {_kind(value)}")
    return value


def _number(value: Any, where: str, fail: Any, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        wanted = "a non-negative number" + (" or null" if optional else "")
        raise fail(where, f"expected {wanted}, found {value!r}")
    return float(value)


def _goal(value: Any, where: str, fail: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise fail(where, f"expected a goal value 0..100, found {value!r}")
    return value


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "a boolean", type(None): "null"}
    return names.get(type(value), f"a {type(value).__name__}")
