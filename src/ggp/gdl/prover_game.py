"""A GDL game played by the tabled top-down :class:`~ggp.gdl.prover.Prover`: the Game API over its answers.

:class:`ProverGame` asks the prover the questions a state is asked (``legal``, ``terminal``, ``goal``,
``next``), keeps the answers of the states asked last, and numbers moves as play meets them.

On the sheets that go to it (too large to ground) and on small ones played
on it, it plays random playouts faster than ggp-base's ProverStateMachine:
``bench/prover_speed.py`` measures both side by side.

:func:`~ggp.gdl.game.load_text` picks this engine by itself when grounding
gives up as too large; the game says so in :attr:`ProverGame.engine_reason`.
It is the Python Game API only, with no compiled kernel: searches that need
one (compiled MCTS, ``ggp random --compiled``) refuse such a game.

>>> game = ProverGame("(role p) (init (s 0)) (succ 0 1) (<= (legal p go) (true (s ?x)))"
...                   " (<= (next (s ?y)) (true (s ?x)) (succ ?x ?y)) (<= terminal (true (s 1)))"
...                   " (goal p 100)", name="tiny")
>>> s = game.next_state(game.initial_state(), ["go"])
>>> game.state_facts(s), game.is_terminal(s), game.goals(s)
(['(s 1)'], True, (100,))
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import MoveSyntaxError, StateFormatError
from ..core.game import Game, Move, State
from ..core.kif import KifSyntaxError, Term, parse_term
from .gdl_ii import chance_role
from .parser import parse_program
from .prover import Prover, _Context
from .sheet import GDLError, Program, show
from .view import FactsView

#: States whose answers are kept (each holds the tables of its subgoals).
_CACHED_STATES = 64


class ProverState(State):
    """A state of a :class:`ProverGame`: the set of facts that hold (inner terms of ``true``)."""

    __slots__ = ("_facts", "_game", "_hash")

    def __init__(self, game: ProverGame, facts: frozenset[Term]) -> None:
        self._game = game
        self._facts = facts
        self._hash = hash((game.name, facts))

    @property
    def game(self) -> ProverGame:
        return self._game

    @property
    def facts(self) -> frozenset[Term]:
        return self._facts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProverState):
            return NotImplemented
        return self._facts == other._facts and self._game.name == other._game.name

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"<State {self._game.name} {' '.join(self._game.state_facts(self))}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_state, (self._game.rules_text, self._game.name, self._game.engine_reason, self._facts))


def _restore_state(text: str, name: str, reason: str, facts: frozenset[Term]) -> ProverState:
    return ProverState(ProverGame(text, name, reason=reason), facts)


class ProverGame(FactsView, Game):
    """A GDL game played by the tabled top-down :class:`Prover` instead of a propnet (see the module).

    Actions are numbered in the order moves are first met (a role's moves are
    not known before play finds them without grounding), so :meth:`num_actions`
    grows as play goes on; an action once given keeps its move.
    """

    #: Which reasoner plays the game (a :class:`~ggp.gdl.GDLGame` says ``propnet``).
    engine = "prover"

    def __init__(
        self,
        text: str,
        name: str = "gdl",
        description: str = "",
        *,
        reason: str = "",
        program: Program | None = None,
        compiled: bool = True,
    ) -> None:
        t0 = time.perf_counter()
        self.name = name
        self.rules_text = text
        self.program = program if program is not None else parse_program(text, name)
        self.engine_reason = reason or "asked for"
        sp = self.program.spelling
        self._spelling = sp
        self.roles = tuple(sp.get(r, r) for r in self.program.roles)
        self.hidden_information = self.program.gdl_ii
        self.chance_role = chance_role(self.program)
        self.description = description or f"a game read from a GDL rule sheet ({len(self.roles)} roles)"
        self.prover = Prover(self.program, compiled=compiled)
        self._contexts: OrderedDict[frozenset[Term], _Context] = OrderedDict()
        self._last: _Context | None = None  # the context asked last (a state is asked several questions in a row)
        self._lock = threading.Lock()
        # the questions every state is asked, made ready once
        q = self.prover.query
        self._q_legal = [q(("legal", role, "?m")) for role in self.program.roles]
        self._q_goal = [q(("goal", role, "?v")) for role in self.program.roles]
        self._q_terminal = q(("terminal",))
        self._q_next = q(("next", "?x"))
        init = self.prover.ask(("init", "?x"), _Context(frozenset(), None))
        self._initial = ProverState(self, frozenset(a[1] for a in init))
        self._moves: list[list[Move]] = [[] for _ in self.roles]
        self._move_terms: list[list[Term]] = [[] for _ in self.roles]
        self._move_index: list[dict[Term, int]] = [{} for _ in self.roles]
        self.load_seconds = time.perf_counter() - t0
        #: Seconds spent parsing and grounding before grounding gave up, when :func:`~ggp.gdl.load_text` chose
        #: this reasoner for that reason (0: made directly); :attr:`load_seconds` includes them.
        self.tried_seconds = 0.0

    # --- evaluation ------------------------------------------------------------------------------
    def _state(self, state: State) -> ProverState:
        if not isinstance(state, ProverState) or state._game.name != self.name:
            got = state.game.name if isinstance(state, State) else type(state).__name__
            raise TypeError(f"{self.name}: expected a state of {self.name}, got {got}")
        return state

    def _context(self, state: ProverState) -> _Context:
        last = self._last
        if last is not None and last.facts is state._facts:
            return last
        with self._lock:
            ctx = self._contexts.get(state._facts)
            if ctx is None:
                ctx = self._contexts[state._facts] = _Context(state._facts, None)
                if len(self._contexts) > _CACHED_STATES:
                    self._contexts.popitem(last=False)
            else:
                self._contexts.move_to_end(state._facts)
            self._last = ctx
            return ctx

    def _legal_terms(self, state: ProverState, r: int) -> list[Term]:
        ctx = self._context(state)
        got: list[Term] | None = ctx.memo.get(("legal", r))
        if got is None:
            key, tid = self._q_legal[r]
            got = ctx.memo[("legal", r)] = [a[2] for a in self.prover.ask(key, ctx, tid)]
        return got

    def _action(self, r: int, term: Term) -> int:
        index = self._move_index[r]
        a = index.get(term)
        if a is None:
            with self._lock:
                a = index.get(term)
                if a is None:
                    a = index[term] = len(self._moves[r])
                    self._moves[r].append(Move(show(term, self._spelling)))
                    self._move_terms[r].append(term)
        return a

    # --- the Game API ----------------------------------------------------------------------------
    def initial_state(self) -> ProverState:
        return self._initial

    def legal_moves(self, state: State, role: str) -> tuple[Move, ...]:
        r = self.role_index(role)
        s = self._state(state)
        moves = sorted(self._moves[r][self._action(r, t)] for t in self._legal_terms(s, r))
        if not moves and not self.is_terminal(s):
            raise GDLError(
                f"{self.name}: role {role} has no legal move in a non-terminal state; every role must have a "
                f"legal move until the game ends. The state: {' '.join(self.state_facts(s)[:12])}"
            )
        return tuple(moves)

    def is_terminal(self, state: State) -> bool:
        ctx = self._context(self._state(state))
        got: bool | None = ctx.memo.get("terminal")
        if got is None:
            got = ctx.memo["terminal"] = bool(self.prover.ask(self._q_terminal[0], ctx, self._q_terminal[1]))
        return got

    def goals(self, state: State) -> tuple[int, ...]:
        s = self._state(state)
        ctx = self._context(s)
        terminal = self.is_terminal(s)
        out = []
        for r in range(len(self.program.roles)):
            key, tid = self._q_goal[r]
            values = sorted({int(str(a[2])) for a in self.prover.ask(key, ctx, tid) if str(a[2]).isdigit()})
            if terminal and not values:
                raise GDLError(
                    f"{self.name}: the game is over but no 'goal' rule gives role {self.roles[r]} a value "
                    f"in this state: {' '.join(self.state_facts(s))}"
                )
            if terminal and len(values) > 1:
                raise GDLError(
                    f"{self.name}: the game is over and the 'goal' rules give role {self.roles[r]} several "
                    f"values ({', '.join(map(str, values))}) in this state: {' '.join(self.state_facts(s))}"
                )
            out.append(values[-1] if values else 0)
        return tuple(out)

    def parse_move(self, text: str) -> Move:
        if not isinstance(text, str):
            raise MoveSyntaxError(f"{self.name}: a move is KIF text, not {type(text).__name__}")
        try:
            term = parse_term(text)
        except KifSyntaxError as exc:
            raise MoveSyntaxError(f"{self.name}: {text!r} is not a move ({exc})") from None
        return self.move_from_term(term)

    def move_from_term(self, term: Term) -> Move:
        text = show(_lower(term), self._spelling)
        return Move(text)

    # --- the action core -------------------------------------------------------------------------
    def num_actions(self, role: str) -> int:
        return len(self._moves[self.role_index(role)])

    def legal_actions(self, state: State, role: str) -> np.ndarray:
        r = self.role_index(role)
        s = self._state(state)
        ctx = self._context(s)
        got: np.ndarray | None = ctx.memo.get(("actions", r))
        if got is None:
            terms = self._legal_terms(s, r)
            got = ctx.memo[("actions", r)] = np.array(sorted(self._action(r, t) for t in terms), dtype=np.int64)
        return got.copy()

    def action_to_move(self, state: State | None, role: str, action: int) -> Move:
        moves = self._moves[self.role_index(role)]
        if not 0 <= action < len(moves):
            raise ValueError(f"{self.name}: {role}'s actions met so far are 0 to {len(moves) - 1}, not {action}")
        return moves[action]

    def move_to_action(self, state: State | None, role: str, move: Move | str) -> int:
        try:
            term = _lower(move.term if isinstance(move, Move) else self.parse_move(move).term)
        except KifSyntaxError:
            return -1
        r = self.role_index(role)
        a = self._move_index[r].get(term)
        if a is None and state is not None and term in self._legal_terms(self._state(state), r):
            a = self._action(r, term)
        return -1 if a is None else a

    def _apply_legal(self, state: State, actions: Sequence[int]) -> ProverState:
        s = self._state(state)
        does = {
            role: self._move_terms[r][a] for r, (role, a) in enumerate(zip(self.program.roles, actions, strict=True))
        }
        key, tid = self._q_next
        nxt = self.prover.ask(key, _Context(s._facts, does, self._context(s)), tid)
        return ProverState(self, frozenset(a[1] for a in nxt))

    # --- presentation and storage ----------------------------------------------------------------
    def state_facts(self, state: State) -> list[str]:
        return sorted(show(f, self._spelling) for f in self._state(state)._facts)

    def state_to_dict(self, state: State) -> dict[str, Any]:
        return {"game": self.name, "facts": self.state_facts(state)}

    def state_from_dict(self, data: dict[str, Any]) -> ProverState:
        if not isinstance(data, dict):
            raise StateFormatError(f"{self.name}: a state must be a JSON object, not {type(data).__name__}")
        if data.get("game", self.name) != self.name:
            raise StateFormatError(f"this state is of {data.get('game')!r}, not of {self.name!r}")
        facts = data.get("facts")
        if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
            raise StateFormatError(f"{self.name}: a state document has 'facts', a list of KIF texts")
        terms = set()
        for f in facts:
            try:
                terms.add(_lower(parse_term(f)))
            except KifSyntaxError as exc:
                raise StateFormatError(f"{self.name}: {f!r} is not a fact ({exc})") from None
        return ProverState(self, frozenset(terms))

    def __repr__(self) -> str:
        return f"<ProverGame {self.name!r}: {len(self.program.rules)} rules, not grounded>"


def _lower(t: Term) -> Term:
    if isinstance(t, str):
        return t.lower()
    return tuple(_lower(x) for x in t)


__all__ = ["ProverGame", "ProverState"]
