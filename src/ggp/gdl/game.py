"""The Game API over a GDL rule sheet: parse, ground, compile to a propnet, play."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import MoveSyntaxError, StateFormatError
from ..core.game import Move, State
from ..core.kernels import rng_state
from ..core.kif import KifSyntaxError, Term, parse_term, term_text
from ..core.native import KernelGame, KernelState
from .build import built_network
from .differential_step import dn_playouts
from .evaluate import pn_goals, pn_load, pn_playouts
from .gdl_ii import chance_role, percept_of
from .grounder import GroundingTooLarge
from .kernel import evaluation_mode, gdl_kernel
from .network import H_MAXLEGAL, H_TERMINAL, Propnet
from .parser import parse_program
from .prover_game import ProverGame
from .sheet import GDLError, show
from .view import FactsView

#: What each thread loading a rule sheet is doing now (thread id -> stage), for a progress display.
_STAGES: dict[int, str] = {}


def loading_stage(thread_id: int) -> str | None:
    """What the thread ``thread_id`` is doing while it loads a rule sheet (``grounding``, say), or None."""
    return _STAGES.get(thread_id)


def _stage(what: str | None) -> None:
    if what is None:
        _STAGES.pop(threading.get_ident(), None)
    else:
        _STAGES[threading.get_ident()] = what


class GDLState(KernelState):
    """A state of a GDL game: which base propositions hold (one byte each, 0 or 1)."""

    __slots__ = ("_array", "_bits", "_game", "_hash")

    def __init__(self, game: GDLGame, bits: bytes) -> None:
        self._game = game
        self._bits = bits
        self._hash = hash((game.name, bits))
        self._array: np.ndarray | None = None
        # What the game has worked out about this state (a value: the answers never change): the terminal
        # flag under -1, each role's legal actions under r and legal moves under (r,). A caller of the Game
        # API asks each again and again (a move's legality, the terminal test before it), and states are
        # new at every step of a game, so a cache keyed by state would mostly miss and cost its lookups.
        self._memo: dict[Any, Any] | None = None

    @property
    def game(self) -> GDLGame:
        return self._game

    @property
    def bits(self) -> bytes:
        """The base propositions' truth values, in the order of :attr:`GDLGame.base_facts`."""
        return self._bits

    @property
    def array(self) -> np.ndarray:
        """The base bits as a read-only uint8 array (what the propnet functions take)."""
        arr = self._array
        if arr is None:
            arr = self._array = np.frombuffer(self._bits, dtype=np.uint8)
        return arr

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GDLState):
            return NotImplemented
        return self._bits == other._bits and (
            self._game is other._game or self._game.fingerprint == other._game.fingerprint
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"<State {self._game.name} {' '.join(self._game.state_facts(self))}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_state, (self._game.rules_text, self._game.name, self._bits))


def _restore_state(text: str, name: str, bits: bytes) -> GDLState:
    return GDLState(from_text(text, name), bits)


class GDLGame(FactsView, KernelGame):
    """A game defined by a GDL rule sheet, played on a compiled propnet.

    >>> game = GDLGame("(role p) (init s0) (<= (legal p go) (true s0)) (<= (next s1) (does p go))"
    ...                " (<= terminal (true s1)) (goal p 100)", name="tiny")
    >>> s = game.initial_state()
    >>> game.state_facts(s), [str(m) for m in game.legal_moves(s, "p")]
    (['s0'], ['go'])
    >>> t = game.next_state(s, ["GO"])
    >>> game.is_terminal(t), game.goals(t)
    (True, (100,))
    """

    #: Which reasoner plays the game: the propnet (a :class:`~ggp.gdl.prover_game.ProverGame` says ``prover``).
    engine = "propnet"
    #: Why that reasoner.
    engine_reason = "the sheet grounds"

    def __init__(self, text: str, name: str = "gdl", description: str = "") -> None:
        t0 = time.perf_counter()
        self.name = name
        self.rules_text = text
        self.fingerprint = hashlib.sha1(f"{name}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
        _stage("parsing the rules")
        self.program = parse_program(text, name)
        self.parse_seconds = time.perf_counter() - t0
        _stage("grounding the rules and building the propnet")
        built = built_network(text, self.program)
        self.ground_seconds, self.build_seconds = built.ground_seconds, built.build_seconds
        #: Where this load's network came from (``ggp info`` says it): built here, by a child, or read from the cache.
        self.network_source = built.how
        self.propnet: Propnet = built.propnet
        sp = self.program.spelling
        self.roles = tuple(sp.get(r, r) for r in self.program.roles)
        self.hidden_information = self.program.gdl_ii
        self.chance_role = chance_role(self.program)
        # the sheet's own declarations, when it has them (GDL's optional base and input)
        self._declared_base = built.declared_base
        self._declared_inputs = built.declared_inputs
        self.description = description or f"a game read from a GDL rule sheet ({len(self.roles)} roles)"
        net = self.propnet.net
        self._net = net
        self._terminal = int(net.header[H_TERMINAL])
        self._legal_ptr = net.legal_ptr
        self._legal_node = net.legal_node
        self._legal_does = net.legal_does
        self._moves: list[list[Move]] = [[Move(t) for t in texts] for texts in self.propnet.move_texts]
        self._move_index: list[dict[str, int]] = [{m.text: i for i, m in enumerate(ms)} for ms in self._moves]
        # parse_move: every move any role may ever make, found without regard to case
        self._vocabulary: dict[str, Move] = {}
        for ms in self._moves:
            for m in ms:
                self._vocabulary.setdefault(m.text.lower(), m)
        self._base_index = {t.lower(): i for i, t in enumerate(self.propnet.base_texts)}
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._initial = GDLState(self, bytes(np.asarray(net.init, dtype=np.uint8)))
        self._fastest: bool | None = None  # is the incremental evaluator the faster one here?
        _stage("compiling the kernel")
        self.kernel = gdl_kernel(self.propnet)
        self.dtype = np.dtype(np.uint8)
        self.load_seconds = time.perf_counter() - t0
        _stage(None)

    # --- evaluation --------------------------------------------------------------------------
    def _state_of(self, state: State) -> GDLState:
        if not isinstance(state, GDLState) or (state._game is not self and state._game.fingerprint != self.fingerprint):
            got = state.game.name if isinstance(state, State) else type(state).__name__
            raise TypeError(f"{self.name}: expected a state of {self.name}, got {got}")
        return state

    def _values(self, state: GDLState) -> np.ndarray:
        """The propnet's values with ``state`` loaded (legality and terminal computed); shared, do not write."""
        with self._lock:
            vals = self._cache.get(state._bits)
            if vals is not None:
                self._cache.move_to_end(state._bits)
                return vals
        vals = np.zeros(self.propnet.num_nodes, dtype=np.uint8)
        pn_load(self._net, vals, np.frombuffer(state._bits, dtype=np.uint8))
        with self._lock:
            self._cache[state._bits] = vals
            if len(self._cache) > 256:
                self._cache.popitem(last=False)
        return vals

    def _legal_indices(self, vals: np.ndarray, r: int) -> np.ndarray:
        lo, hi = self._legal_ptr[r], self._legal_ptr[r + 1]
        return np.flatnonzero(vals[self._legal_node[lo:hi]])

    def _no_legal_move(self, state: GDLState, r: int) -> GDLError:
        lines = sorted({rule.line for rule in self.program.rules if rule.relation == "legal"})
        where = f" (the 'legal' rules are on line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})"
        facts = self.state_facts(state)
        shown = " ".join(facts[:12]) + (f" ... ({len(facts)} facts)" if len(facts) > 12 else "")
        return GDLError(
            f"{self.name}: role {self.roles[r]} has no legal move in a non-terminal state{where if lines else ''}; "
            f"every role must have a legal move until the game ends. The state: {shown}"
        )

    # --- the Game API ------------------------------------------------------------------------
    def initial_state(self) -> GDLState:
        return self._initial

    def legal_moves(self, state: State, role: str) -> tuple[Move, ...]:
        s = self._state_of(state)
        r = self.role_index(role)
        memo = self._memo_of(s)
        moves: tuple[Move, ...] | None = memo.get((r,))
        if moves is None:
            listed = self._moves[r]
            moves = tuple(listed[a] for a in self._legal_of(s, r).tolist())
            if not moves and not self.is_terminal(s):
                raise self._no_legal_move(s, r)
            memo[(r,)] = moves
        return moves

    def is_terminal(self, state: State) -> bool:
        s = self._state_of(state)
        memo = self._memo_of(s)
        over: bool | None = memo.get(-1)
        if over is None:
            over = memo[-1] = bool(self.kernel.terminal(self._context(), s.array))
        return over

    # --- the action core: role r's action i is its i-th move in the sheet's list of moves ------
    def num_actions(self, role: str) -> int:
        return len(self._moves[self.role_index(role)])

    def action_to_move(self, state: State | None, role: str, action: int) -> Move:
        moves = self._moves[self.role_index(role)]
        if not 0 <= action < len(moves):
            raise ValueError(f"{self.name}: {role}'s actions are 0 to {len(moves) - 1}, not {action}")
        return moves[action]

    def move_to_action(self, state: State | None, role: str, move: Move | str) -> int:
        text = move.text if isinstance(move, Move) else self.parse_move(move).text
        return self._move_index[self.role_index(role)].get(text, -1)

    def initial_array(self) -> np.ndarray:
        return np.frombuffer(self._initial._bits, dtype=np.uint8).copy()

    def state_from_array(self, array: np.ndarray) -> GDLState:
        arr = np.ascontiguousarray(array, dtype=np.uint8).reshape(-1)
        self.kernel.check(arr)  # type: ignore[misc]
        return GDLState(self, arr.tobytes())

    def _array_of(self, state: State) -> np.ndarray:
        return self._state_of(state).array

    def _wrap(self, array: np.ndarray) -> GDLState:
        return GDLState(self, array.tobytes())

    def goals(self, state: State) -> tuple[int, ...]:
        s = self._state_of(state)
        vals = self._values(s).copy()
        n = len(self.roles)
        best = np.zeros(n, dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        pn_goals(self._net, vals, best, count)
        if vals[self._terminal]:
            for r in range(n):
                if count[r] == 0:
                    raise GDLError(
                        f"{self.name}: the game is over but no 'goal' rule gives role {self.roles[r]} a value "
                        f"in this state: {' '.join(self.state_facts(s))}"
                    )
                if count[r] > 1:
                    values = sorted(
                        {
                            int(v)
                            for k, v in zip(
                                range(int(self._net.goal_ptr[r]), int(self._net.goal_ptr[r + 1])),
                                self._net.goal_value[self._net.goal_ptr[r] : self._net.goal_ptr[r + 1]],
                                strict=True,
                            )
                            if vals[self._net.goal_node[k]]
                        }
                    )
                    raise GDLError(
                        f"{self.name}: the game is over and the 'goal' rules give role {self.roles[r]} several "
                        f"values ({', '.join(map(str, values))}) in this state: {' '.join(self.state_facts(s))}"
                    )
        return tuple(int(v) if c else 0 for v, c in zip(best, count, strict=True))

    def parse_move(self, text: str) -> Move:
        if not isinstance(text, str):
            raise MoveSyntaxError(f"{self.name}: a move is KIF text, not {type(text).__name__}")
        try:
            term = parse_term(text)
        except KifSyntaxError as exc:
            raise MoveSyntaxError(f"{self.name}: {text!r} is not a move ({exc})") from None
        return self._from_term(term, text)

    def move_from_term(self, term: Term) -> Move:
        return self._from_term(term, None)

    def _from_term(self, term: Term, text: str | None) -> Move:
        move = self._vocabulary.get(term_text(term).lower())
        if move is None:
            some = ", ".join(sorted({m.text for ms in self._moves for m in ms})[:6])
            shown = text if text is not None else term_text(term)
            raise MoveSyntaxError(f"{self.name}: {shown!r} is not a move of this game; moves look like: {some}")
        return move

    # --- presentation and storage --------------------------------------------------------------
    def state_facts(self, state: State) -> list[str]:
        s = self._state_of(state)
        texts = self.propnet.base_texts
        bits = s._bits
        return [texts[i] for i in range(len(bits)) if bits[i]]

    def percepts(self, state: State, role: str) -> tuple[str, ...]:
        if not self.hidden_information:
            return ()
        bits = self._state_of(state)._bits
        return tuple(text for i, text in self._percept_facts(role) if bits[i])

    @lru_cache(maxsize=64)  # noqa: B019 - a few roles per game, kept as long as the game
    def _percept_facts(self, role: str) -> tuple[tuple[int, str], ...]:
        """The base propositions that are ``role``'s percepts: (index, percept text), read once."""
        seen = ((i, percept_of(t, role)) for i, t in enumerate(self.propnet.base_texts))
        return tuple((i, p) for i, p in seen if p is not None)

    def state_to_dict(self, state: State) -> dict[str, Any]:
        return {"game": self.name, "facts": self.state_facts(state)}

    def state_from_dict(self, data: dict[str, Any]) -> GDLState:
        if not isinstance(data, dict):
            raise StateFormatError(f"{self.name}: a state must be a JSON object, not {type(data).__name__}")
        game = data.get("game", self.name)
        if game != self.name:
            raise StateFormatError(f"this state is of {game!r}, not of {self.name!r}")
        facts = data.get("facts")
        if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
            raise StateFormatError(f"{self.name}: a state document has 'facts', a list of KIF texts")
        bits = bytearray(self.propnet.num_base)
        for f in facts:
            try:
                key = term_text(parse_term(f)).lower()
            except KifSyntaxError as exc:
                raise StateFormatError(f"{self.name}: {f!r} is not a fact ({exc})") from None
            i = self._base_index.get(key)
            if i is None:
                raise StateFormatError(f"{self.name}: {f!r} is no fact of this game's states")
            bits[i] = 1
        return GDLState(self, bytes(bits))

    # --- extras --------------------------------------------------------------------------------
    @property
    def base_facts(self) -> list[str]:
        """Every fact a state of this game may hold, sorted (the propnet's base propositions)."""
        return list(self.propnet.base_texts)

    def all_moves(self, role: str) -> list[Move]:
        """Every move ``role`` may make in some state (its legal moves over all states, relaxed)."""
        return list(self._moves[self.role_index(role)])

    @property
    def declared_base(self) -> list[str]:
        """The facts the sheet's ``base`` relation declares, sorted (empty if it has none)."""
        return list(self._declared_base)

    def declared_inputs(self, role: str) -> list[str]:
        """The moves the sheet's ``input`` relation declares for ``role``, sorted (empty if it has none)."""
        return list(self._declared_inputs[self.role_index(role)])

    @property
    def max_legal(self) -> int:
        return int(self._net.header[H_MAXLEGAL])

    def random_playouts(
        self,
        count: int,
        seed: int = 0,
        state: State | None = None,
        max_steps: int = 100_000,
        *,
        incremental: bool | None = None,
        scratch: int = 0,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Play ``count`` uniformly random games in one compiled call.

        Returns ``(goals, lengths, transitions)``: goals of shape (count, roles)
        (-1 for a game cut off at ``max_steps``), each game's number of joint
        moves, and the total number of transitions.

        Two evaluators play exactly the same games: ``incremental=True``
        propagates only what changes from step to step, ``False`` sweeps the
        network at every step; by default the faster one for this game is
        measured once and used. ``scratch`` sizes the incremental evaluator's
        stack (0: ample; tests make it tiny to exercise its fallback).
        """
        if incremental is None:
            incremental = self._incremental_is_faster()
        start = self._state_of(state) if state is not None else self._initial
        goals = np.zeros((count, len(self.roles)), dtype=np.int64)
        lengths = np.zeros(count, dtype=np.int64)
        error = np.zeros(2, dtype=np.int64)
        base0 = np.frombuffer(start._bits, dtype=np.uint8).copy()
        if incremental:
            n = dn_playouts(self._net, base0, count, rng_state(seed), max_steps, goals, lengths, error, scratch)
        else:
            n = pn_playouts(self._net, base0, count, rng_state(seed), max_steps, goals, lengths, error)
        if error[0]:
            r = int(error[1])
            what = "has no legal move in a non-terminal state" if error[0] == 1 else "has no goal in a terminal state"
            raise GDLError(f"{self.name}: in a random playout, role {self.roles[r]} {what}")
        return goals, lengths, int(n)

    def _incremental_is_faster(self) -> bool:
        # the kernel's choice (measured once per network, kept on disk): only that evaluator's loop compiles
        if self._fastest is None:
            self._fastest = evaluation_mode(self.kernel) == "differential"
        return self._fastest

    def __repr__(self) -> str:
        pn = self.propnet
        return f"<GDLGame {self.name!r}: {pn.num_base} base facts, {pn.num_gates} gates>"


@lru_cache(maxsize=32)
def from_text(text: str, name: str = "gdl") -> GDLGame:
    """The game a rule sheet's text defines (cached: the same text gives the same game object)."""
    return GDLGame(text, name)


@lru_cache(maxsize=32)
def load_text(text: str, name: str = "gdl") -> GDLGame | ProverGame:
    """The game a rule sheet's text defines, on the propnet, or on the top-down prover when the sheet is too
    large to ground (``game.engine`` says which and ``game.engine_reason`` why; cached like :func:`from_text`).

    >>> load_text("(role p) (init s) (<= (legal p go) (true s)) (<= (next t) (does p go))"
    ...           " (<= terminal (true t)) (goal p 100)", "tiny").engine
    'propnet'
    """
    began = time.perf_counter()
    try:
        return from_text(text, name)
    except GroundingTooLarge as exc:
        tried = time.perf_counter() - began
        _stage("starting the top-down prover (too large to ground)")
        game = ProverGame(text, name, reason=f"grounding is infeasible: {exc}")
        # the load took the attempt too (``ggp info`` shows both parts)
        game.tried_seconds = tried
        game.load_seconds += tried
        return game
    finally:
        _stage(None)


#: The largest rule sheet file read (the largest built-in sheet is about 10 KB; a GGP message at most 4 MiB).
MAX_SHEET_BYTES = 16 * 1024 * 1024


def load_file(path: str | Path) -> GDLGame | ProverGame:
    """The game of a rule sheet file, named after the file (``rules/wallmaze.kif`` is ``wallmaze``); see
    :func:`load_text` for the reasoner it plays on."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            data = fh.read(MAX_SHEET_BYTES + 1)
    except OSError as exc:
        raise GDLError(f"{p.name}: cannot read the rule sheet: {exc.strerror or exc}") from None
    if len(data) > MAX_SHEET_BYTES:
        raise GDLError(f"{p.name}: a rule sheet is at most {MAX_SHEET_BYTES // (1024 * 1024)} MiB; this file is larger")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GDLError(f"{p.name}: a rule sheet must be UTF-8 text ({exc})") from None
    if "\x00" in text:
        raise GDLError(f"{p.name}: a rule sheet is text, but this file holds NUL bytes (is it binary?)")
    return load_text(text, p.stem)


__all__ = ["GDLGame", "GDLState", "from_text", "load_file", "load_text", "show"]
