"""The generic Monte Carlo tree search player: ``mcts``, ``mcts:time=1.0``, ``mcts:sims=5000,c=1.4``.

On every game :func:`ggp.load` returns, built-in or read from a rule sheet, it
runs the compiled decoupled UCT of :mod:`ggp.agents.uct` over the game's
kernel, with what strong GGP players add to it:

* MCTS-Solver: proven values propagate up the tree, a proven win is played at
  once and a search whose root is solved stops early;
* transpositions (available, off by default: they did not measurably win): a
  state reached by two orders of moves is one node of the search graph, found
  by its hash, whose statistics both paths share;
* tree reuse: the subtree of the position reached is kept from move to move
  (and from the start clock's search of the first position);
* time management: a search ends by the clock it is told less a safety
  margin (:func:`budget`), in chunks of about a hundredth of it;
* both cores: with a clock, ``threads`` trees are searched at once (root
  parallelism; the compiled loop releases the GIL) and their root statistics
  are summed;
* thinking between messages: :meth:`MCTSAgent.ponder` goes on searching the
  current tree in the background until the next call;
* single-player puzzles are searched by nested Monte Carlo search
  (:mod:`ggp.agents.puzzle`), which keeps the best line found;
* an exhaustive depth-first solver with a transposition table
  (:mod:`ggp.agents.solver`) runs beside the trees on one thread where one
  role moves at a time (in a game of two roles, also where both choose at
  once: what the player is sure of), from the start clock on, and alone (the trees idle)
  on the referee's clock at steps where the player has a single move: a game
  small enough to be read to the end in the start clock and the first moves
  (Sheep and Wolf, whose random playouts mislead) is then played perfectly;
  on a larger one it is given up after :data:`DFS_PLAY_CLOCKS` play clocks of
  search that proved nothing.

>>> import ggp
>>> agent = MCTSAgent(sims=200, seed=1)
>>> game = ggp.load("wallmaze")
>>> agent.start(game, "white")
>>> str(agent.select_move(game.initial_state()))
'(move 2 5 3 5)'
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from typing import Annotated, Any

import numpy as np

from ..core.game import Game, Move, State
from ..core.native import KernelGame
from .base import Agent, Choice, Limit
from .factor import FactorGames, factor_games
from .game_tree import GameTreeSearch
from .heuristic import Material, find_material, find_pieces, goals_move, piece_evaluation
from .options import MAX_C, MAX_CAPACITY, MAX_SECONDS, MAX_SEED, MAX_SIMS, MIN_CAPACITY, Range, check_options
from .puzzle import PuzzleSearch
from .shape import SHAPE_SECONDS, measure_shape
from .solver import FULL, PROVEN, SEARCHING, UNKNOWN, DFSolver
from .uct import MAX_TREE_BYTES, SearchResult, UCTSearch, next_chunk, traces_rollouts, tree_bytes
from .uct_loop import goal_blend
from .uct_tree import keep_subtree

#: Fraction of the time limit kept back for the referee's round trip.
SAFETY = 0.1
#: Seconds kept back besides: the last chunk, turning the root's actions into moves, the reply.
SAFETY_SECONDS = 0.03
#: Seconds per move of the generic player when neither its spec nor a clock says.
DEFAULT_TIME = 1.0
#: How much of a call's lateness (time past its plan) is still expected of the next call.
LATENESS_DECAY = 0.8
#: Seconds past its end that the start clock's search is waited for (see MCTSAgent._parallel).
START_GRACE = 0.05
#: Most search threads (root parallelism) an agent may run.
MAX_THREADS = 8
#: Most virtual visits progressive bias may give a move (``bias``).
MAX_BIAS = 20
#: The largest constant of the RAVE weight (``rave``; the larger, the sooner a move's own visits outweigh it).
MAX_RAVE = 100.0
#: The RAVE weight's constant where ``rave`` is left to the game's shape and the shape suits it
#: (:attr:`ggp.agents.shape.Shape.suits_rave`; Sancho's value).
SHAPE_RAVE = 0.05
#: The share of the start clock spent measuring the game's shape, at most :data:`ggp.agents.shape.SHAPE_SECONDS`.
SHAPE_SHARE = 0.05
#: The weight of the goals at a leaf in the goal heuristic's leaf value (the rest: the rollout's).
GOAL_WEIGHT = 0.3
#: The exhaustive solver's allowance beyond the start clock: this many play clocks of its processor time
#: (its own thread's, so that a loaded machine does not cut it short) in searches that end without proving
#: the position searched; then it is given up for the match.
DFS_PLAY_CLOCKS = 8
#: With ``deepen``: the table of the solver that walks each position a ply deeper at a time, in bytes.
DEEPEN_BYTES = 64 << 20
#: With ``deepen``: the plies of its first walk from each position, and the most it deepens to.
FIRST_PLIES = 2
MAX_PLIES = 64
#: The exhaustive solver's share of the one search thread of a player told to use one (``threads=1``): it
#: takes turns with the tree instead of running on a core of its own. Its time is charged to its allowance
#: as if it had had the thread (divided by this share), so it is given up after as many moves as with a
#: thread of its own.
DFS_SHARE = 0.3
#: Most seconds of the start clock spent looking for a material heuristic (:mod:`ggp.agents.heuristic`), and
#: at most this share of the start clock.
MATERIAL_SECONDS = 2.0
#: The share of a move's time spent checking the move about to be played (see MCTSAgent._verified).
VERIFY_SHARE = 0.2
MATERIAL_SHARE = 0.1
#: The start clock of the whole game's search where a sheet's sub-games stop being played one at a time.
WHOLE_START = 0.05
#: The table of the solver that looks for the quickest of proven wins, in bytes; the deepest it looks, in plies;
#: the expansions it makes between two looks at the clock.
QUICK_BYTES = 32 << 20
QUICK_PLIES = 40
QUICK_EXPANSIONS = 4096
#: Most seconds of the start clock spent checking that a sheet's sub-games are played one at a time, and at
#: most this share of it (:func:`ggp.agents.factor.factor_games`).
FACTOR_SECONDS = 1.0
FACTOR_SHARE = 0.05


def budget(own: float | None, time_limit: float | None) -> float | None:
    """Seconds to think: the agent's own setting, cut to the time limit less a safety margin.

    >>> budget(None, 1.0), budget(2.0, None), budget(0.5, 10.0)
    (0.87, 2.0, 0.5)
    """
    if time_limit is None:
        return own
    room = _room(time_limit)
    return room if own is None else min(own, room)


def _room(time_limit: float) -> float:
    # the time limit less the safety margins, at least 10 ms
    return max(0.01, time_limit * (1 - SAFETY) - SAFETY_SECONDS)


def merge(results: list[SearchResult]) -> SearchResult:
    """One result from several trees searched from the same root: visits and goals summed per move.

    A move one tree proved keeps its proven value (each proof is sound on its own).
    """
    first = results[0]
    if len(results) == 1:
        return first
    moves, visits, values, proven = [], [], [], []
    for r in range(len(first.roles)):
        order = {m: i for i, m in enumerate(first.moves[r])}
        v = np.zeros(len(order), dtype=np.int64)
        total = np.zeros(len(order))
        pv = np.full(len(order), np.nan)
        for res in results:
            for k, m in enumerate(res.moves[r]):
                i = order.get(m)
                if i is None:  # not the same root: cannot happen for trees reset to one state
                    continue
                v[i] += int(res.visits[r][k])
                total[i] += float(res.values[r][k]) * int(res.visits[r][k])
                if res.proven and not np.isnan(res.proven[r][k]):
                    pv[i] = res.proven[r][k]
        moves.append(first.moves[r])
        visits.append(v)
        values.append(np.where(v > 0, total / np.maximum(v, 1), 0.0))
        proven.append(pv)
    solved = next((res.solved for res in results if res.solved is not None), None)
    return SearchResult(
        roles=first.roles,
        moves=tuple(moves),
        visits=tuple(visits),
        values=tuple(values),
        simulations=sum(res.simulations for res in results),
        nodes=sum(res.nodes for res in results),
        seconds=max(res.seconds for res in results),
        bytes=sum(res.bytes for res in results),
        proven=tuple(proven),
        solved=solved,
    )


class MCTSAgent(Agent):
    """Decoupled UCT with random rollouts and MCTS-Solver; for the role to act in a turn-based game, plain UCT.

    Give ``sims`` for a fixed number of simulations per move (one tree,
    reproducible with a seed), or ``time`` (seconds) for a time budget; a
    referee's tighter time limit always wins. Without either, it thinks for
    the whole time limit less a safety margin (:func:`budget`), or
    :data:`DEFAULT_TIME` when there is no limit. ``c`` is the UCB1
    constant for goals scaled to 0..1 (unset: :attr:`sheet_c` on a rule
    sheet, :attr:`default_c` on a built-in game) and ``capacity`` the number of nodes a
    tree may hold. ``threads`` trees are searched at once under a clock
    (default 2: both cores of a small machine). ``solve`` turns MCTS-Solver on,
    ``puzzle`` the nested Monte Carlo search of single-player games, ``ponder``
    the search between calls (:meth:`ponder`), ``dfs`` the exhaustive solver
    beside the trees (under a clock, on a game of several roles) or beside the
    puzzle search (:mod:`ggp.agents.puzzle`), ``material``
    the material heuristic of a rule sheet (:mod:`ggp.agents.heuristic`: found
    at the start clock where random games show one, then blended with the
    rollouts at the leaves; off by default: it has not yet won matches, see
    bench/results/material_ablation.jsonl), ``verify`` the check of the move
    about to be played (:data:`VERIFY_SHARE` of the time searching below it
    alone, for a reply that wins by force; off by default: its matches
    against Sancho, bench/SANCHO.md, showed no gain yet), ``greedy`` Sancho's
    greedy rollouts on a rule sheet (:mod:`ggp.agents.greedy`: a win in one
    taken, a threat of one answered; off by default until matches show a
    gain, bench/SANCHO.md), ``bias`` progressive bias on a rule sheet (the
    virtual visits a move that changes the piece counts starts with,
    :func:`ggp.agents.heuristic.find_pieces`; 0, off, by default: it lost in
    self-play, bench/results/bias_ablation.jsonl), ``displace`` Sancho's
    two-role piece heuristic on a rule sheet whose roles start with armies
    (values backed up through a capture moved towards the capturer,
    UCTSearch's ``displace``; bench/results/displace_ablation.jsonl), ``deepen``
    the exhaustive solver, once given up, replaced by one that walks each
    position a ply deeper at a time (:meth:`DFSolver.deepen`), for short forced
    wins and losses (off by default; bench/SANCHO.md), ``rave`` RAVE on a rule
    sheet whose leaves are scored by batched random rollouts (each move's value
    mixed with its all-moves-as-first value, the number the weight's constant,
    0: off; UCTSearch's ``rave``; ``none``, the default: :data:`SHAPE_RAVE` where
    the sheet's random games at the start clock show a marking game of 60 moves
    a turn or more, :attr:`ggp.agents.shape.Shape.suits_rave`, and off elsewhere:
    against Sancho it won gomoku_11x11 and lost more than it won on narrower
    games, bench/SANCHO.md), ``factor`` Sancho's factorisation: a sheet of
    independent sub-games in which every role moves in one at a time
    (connectFourSimultaneous's two boards, chinook's odd and even squares) is
    searched one sub-game at a time, the one the role moves in now, by a player
    of its own (:mod:`ggp.agents.factor`; on by default), ``minimax`` implicit
    minimax backups on a rule sheet of two roles or more (the weight, 0 to 1, of
    each move's minimax value in the selection, 0: off; the evaluation backed up
    is the material heuristic :func:`ggp.agents.heuristic.find_material` fits at the
    start clock, or where it finds none, the balance of the roles' pieces
    (:func:`ggp.agents.heuristic.piece_evaluation`), and where neither is found
    the option is off for the match; not
    with ``rave``; UCTSearch's ``minimax``). A sheet without a kernel (one the
    top-down prover plays) is searched by :class:`~ggp.agents.game_tree.GameTreeSearch`.
    The values each option accepts are declared on ``__init__`` (:mod:`ggp.agents.options`); any other raises
    ValueError, whether it comes from a spec or from Python.

    Game-specific players subclass it and set the class attributes below: the
    game they are made for, a compiled leaf evaluation in place of the random
    rollout, its parameters, and their own UCB constant. They search one tree
    (``threads`` defaults to 1 for them), as they tune its parameters.
    """

    name = "mcts"
    #: The game class this player is made for (None: every game).
    plays: type[Game] | None = None
    #: A compiled leaf value ``(s, rng, out, params)`` (see UCTSearch); None: random rollouts.
    leaf_value: Any = None
    #: Initial ``params`` of the leaf value.
    leaf_params: tuple[float, ...] = ()
    #: ``c`` when the spec does not set it.
    default_c = 1.4
    #: ``c`` of the general player on a rule sheet (a game of the GDL reasoner) when the spec does not set
    #: it: measured against 1.4 in self-play (64.1 over 32 matches of 8 corpus games, 0.3 s a move) and
    #: against the plain-Python UCT (bench/GGP_BASE.md).
    sheet_c = 0.7
    #: Transpositions: a state reached by two orders of moves is one node (UCTSearch's ``transpose``). Off:
    #: measured, they did not win more (bench/GGP_BASE.md), and cost native games' simulations.
    transpose = False
    #: Decisive moves: a node where one role has a win in one is proven when expanded (UCTSearch's
    #: ``decisive``); for the general player, not the game-specific ones tuned without it.
    decisive = True
    #: The visits a node has when decisive moves look for its wins at once (the root: from its first pass).
    #: Trying every move of every new node cost knightThrough three quarters of its simulations once leaves
    #: were scored 128 at a time; a node visited this often is where a missed win would cost.
    decisive_at = 8
    #: Goal heuristic: on a sheet whose goals change during play (:func:`goals_move`), a leaf is worth the
    #: goals as they stand (weight :data:`GOAL_WEIGHT`) blended with a random rollout's.
    goal_heuristic = False
    #: Leaves scored in batches where the game's kernel plays many rollouts in one call (a rule sheet's: 128,
    #: bit-parallel; UCTSearch's ``batch``). Off: one leaf at a time.
    batched = True

    @check_options
    def __init__(
        self,
        time: Annotated[float | None, Range(gt=0, le=MAX_SECONDS)] = None,
        sims: Annotated[int | None, Range(ge=1, le=MAX_SIMS)] = None,
        c: Annotated[float | None, Range(ge=0, le=MAX_C)] = None,
        seed: Annotated[int | None, Range(ge=0, le=MAX_SEED)] = None,
        reuse: bool = True,
        capacity: Annotated[int, Range(ge=MIN_CAPACITY, le=MAX_CAPACITY)] = 200_000,
        threads: Annotated[int | None, Range(ge=1, le=MAX_THREADS)] = None,
        solve: bool = True,
        puzzle: bool = True,
        ponder: bool = True,
        dfs: bool = True,
        material: bool = False,
        verify: bool = False,
        greedy: bool = False,
        bias: Annotated[int, Range(ge=0, le=MAX_BIAS)] = 0,
        displace: bool = False,
        deepen: bool = False,
        rave: Annotated[float | None, Range(ge=0, le=MAX_RAVE)] = None,
        factor: bool = True,
        minimax: Annotated[float, Range(ge=0, le=1)] = 0.0,
    ) -> None:
        #: The options as given, for the players of a sheet's sub-games (see :meth:`start`).
        self._options = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        super().__init__()
        if time is not None and sims is not None:
            raise ValueError(f"{self.name}: give either time or sims, not both")
        if minimax > 0 and rave:
            raise ValueError(f"{self.name}: minimax and rave each make the selection's values: give one")
        if sims is None and time is None and self.plays is not None:
            time = DEFAULT_TIME  # the game-specific players keep their fixed budget
        self.time = time
        self.sims = sims
        self.c = self.default_c if c is None else c
        self._c_given = c is not None
        self.seed = seed
        self.reuse = reuse
        self.capacity = capacity
        self.threads = threads if threads is not None else (2 if self.plays is None else 1)
        self.solve = solve
        self.puzzle = puzzle
        self.pondering = ponder
        self.dfs = dfs
        self.material = material
        self.verify = verify
        self.greedy = greedy
        self.bias = bias
        self.displace = displace
        self.deepen = deepen
        self.rave = rave
        self.factor = factor
        self.minimax = minimax
        #: Implicit minimax's weight in the match being played (0 where no evaluation was found), and the
        #: evaluation it backs up (:func:`ggp.agents.heuristic.find_material`).
        self._minimax = 0.0
        self.found_evaluation: Material | None = None
        #: Where the sheet being played is independent sub-games (``factor``): them, and a player of each.
        self._factors: FactorGames | None = None
        self._parts: list[MCTSAgent] = []
        #: RAVE's constant in the match being played: ``rave``, or where it is None, the game shape's choice.
        self._rave = rave or 0.0
        self._dfs_role: str | None = None
        #: Each role's pieces on the sheet being played, for progressive bias (None: none found, or off).
        self.found_pieces: np.ndarray | None = None
        #: The material heuristic found for the game being played (None: none found, or not looked for).
        self.found_material: Material | None = None
        self._dfs: DFSolver | None = None
        #: Processor seconds the solver may still spend on searches that prove nothing (see DFS_PLAY_CLOCKS).
        self._dfs_left = 0.0
        self._tree: UCTSearch | None = None
        self._trees: list[UCTSearch] = []
        self._puzzle: PuzzleSearch | None = None
        #: The search of a game without a kernel (a sheet only the top-down prover plays), else None.
        self._plain: GameTreeSearch | None = None
        self._goals_move = False
        self._greedy = False
        self._displace = False
        self._ponder_stop = threading.Event()
        self._ponder_threads: list[threading.Thread] = []
        self.last_simulations = 0
        self._lateness = 0.0
        #: The sub-game's player that chose the last move (None: the whole game was searched).
        self._last_part: MCTSAgent | None = None
        #: The sub-game to think about between messages, and the state the last move was chosen in.
        self._ponder_part: tuple[int, State] | None = None
        #: The last search's root statistics (None before the first search).
        self.last_result: SearchResult | None = None

    # --- the match ---------------------------------------------------------------------------------
    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        if self.plays is not None and not isinstance(game, self.plays):
            raise ValueError(f"the {self.name} player does not play {game.name}")
        self.stop_pondering()
        super().start(game, role, start_clock, play_clock)
        began = time.perf_counter()
        seed = self.seed if self.seed is not None else random.randrange(2**31)
        self._plain = None
        self._factors, self._parts, self._last_part, self._ponder_part = None, [], None, None
        if self.factor and self.plays is None and self._start_parts(game, role, start_clock, play_clock, seed, began):
            self._trees, self._tree, self._dfs, self._puzzle = [], None, None, None
            return
        if not isinstance(game, KernelGame):
            if self.plays is not None:
                raise ValueError(f"the {self.name} player needs a game with a kernel; {game.name} has none")
            # A sheet only the top-down prover plays: searched through the game's own methods, slowly.
            self._trees, self._tree, self._dfs, self._puzzle = [], None, None, None
            self._plain = GameTreeSearch(game, role, seed=seed)
            seconds = budget(None, start_clock)
            if seconds is not None and not game.is_terminal(game.initial_state()):
                left = seconds - (time.perf_counter() - began)
                if left > 0.05:
                    self._plain.improve(game.initial_state(), left)
            return
        if not self._c_given and self.plays is None:
            self.c = self.sheet_c if getattr(game, "engine", None) is not None else self.default_c
        self._lateness = 0.0
        self._puzzle = None
        if self.puzzle and len(game.roles) == 1 and self.plays is None:
            self._puzzle = PuzzleSearch(game, seed=seed, solve=self.dfs)
        count = self.threads if self.sims is None else 1
        self._goals_move = self.goal_heuristic and self.plays is None and goals_move(game)
        # greedy rollouts replace the random ones, and with them the material heuristic blended into them
        self._greedy = self.greedy and self.plays is None and not self._goals_move
        self.found_material = None
        looking = MATERIAL_SECONDS if start_clock is None else min(MATERIAL_SECONDS, MATERIAL_SHARE * start_clock)
        fitted = self.material and self.plays is None and self._puzzle is None and not self._goals_move
        fitted = fitted and not self._greedy
        if fitted:
            self.found_material = find_material(game, seconds=looking, seed=seed)
        self.found_evaluation, self._minimax = None, 0.0
        if self.minimax > 0 and self.plays is None and self._puzzle is None:
            # (the fit is looked for once: where the material heuristic was, its answer stands)
            self.found_evaluation = self.found_material if fitted else find_material(game, seconds=looking, seed=seed)
            if self.found_evaluation is None:  # no fit that predicts random games: the armies' balance, if any
                pieces = find_pieces(game)
                if pieces is not None:
                    self.found_evaluation = piece_evaluation(pieces, game.initial_array())
            self._minimax = self.minimax if self.found_evaluation is not None else 0.0
        # (implicit minimax and RAVE each make the selection's values: the game's shape does not add RAVE to it)
        self._rave = 0.0 if self._minimax > 0 else self._rave_for(game, start_clock, seed)
        self.found_pieces = None
        self._displace = self.displace and len(game.roles) == 2  # (Sancho's two-role heuristic)
        if (self.bias or self._displace) and self.plays is None and self._puzzle is None:
            self.found_pieces = find_pieces(game)
        self._trees = [self._make_tree(game, seed + i, count) for i in range(count)]
        self._tree = self._trees[0]
        self._dfs = None
        self._dfs_role = role if len(game.roles) == 2 else None
        if self.dfs and self.sims is None and self.plays is None and len(game.roles) > 1:
            self._dfs = DFSolver(game, role=self._dfs_role)
            self._dfs_left = (budget(None, start_clock) or 0.0) + DFS_PLAY_CLOCKS * (
                budget(self.time, play_clock) or DEFAULT_TIME
            )
        # The start clock: compile (or load the compiled code from its cache) now, then search the first
        # position; its tree is kept for the first move.
        state = game.initial_state()
        for tree in self._trees:
            tree.reset(state)
            tree.run(1)
            keep_subtree(tree._tree, 0, tree.transpose)  # the root kept in place: compiles what moving it runs
        if self._puzzle is not None:
            self._puzzle.warm(state)
        if self._dfs is not None and not game.is_terminal(state):
            # Compiled now too: a sheet's solver compiles for seconds, which must not come out of a move.
            self._dfs.reset(state)
            if self._dfs.status == UNKNOWN and self._dfs.simultaneous:  # roles choosing at once beyond the walk
                self._dfs = None
            else:
                self._dfs.run(1)
        seconds = budget(None, start_clock)
        if seconds is not None and not game.is_terminal(state):
            left = seconds - (time.perf_counter() - began)
            if left > 0.05:
                if self._puzzle is not None:
                    self._puzzle.improve(state, left)
                else:
                    self._parallel(state, left, start=True)

    def _start_parts(
        self, game: Game, role: str, start_clock: float | None, play_clock: float | None, seed: int, began: float
    ) -> bool:
        """Where ``game`` is independent sub-games in which every role moves in one at a time
        (:mod:`ggp.agents.factor`), start a player of each, sharing the start clock; whether it is."""
        try:
            split = factor_games(
                game,
                seconds=None if start_clock is None else min(FACTOR_SECONDS, FACTOR_SHARE * start_clock),
                seed=seed,
            )
        except Exception:
            return False
        if split is None:
            return False
        self._factors = split
        options = {**self._options, "factor": False, "seed": seed}
        for i, sub in enumerate(split.games):
            part = type(self)(**options)
            left = None if start_clock is None else max(0.0, start_clock - (time.perf_counter() - began))
            part.start(sub, role, None if left is None else left / (len(split.games) - i), play_clock)
            self._parts.append(part)
        return True

    def _part_state(self, i: int, state: State) -> State:
        """``state`` in sub-game ``i``: with the other sub-games' facts as its tree's root has them where its tree
        holds that position (their moves are not made there, so its tree is kept from move to move), else as
        they are."""
        assert self._factors is not None
        tree = self._parts[i]._tree
        root = None if tree is None else tree._root_state
        if root is not None and self.reuse:
            kept = self._factors.project(state, i, others=root)
            # (not where the older facts would end the sub-game while the game goes on)
            if tree is not None and tree._find_below(kept) >= 0 and not self._parts[i].game.is_terminal(kept):
                return kept
        return self._factors.project(state, i)

    def _start_whole(self) -> None:
        """Searches the whole game from now on: a state where this role's moves are not in one sub-game."""
        self.stop_pondering()
        self._factors, self._parts = None, []
        self.factor = False
        try:
            # (a start clock too short to search in: the compiled code is the sub-games', already loaded)
            self.start(self.game, self.role, WHOLE_START, self.play_clock)
        finally:
            self.factor = True

    def stop(self, state: State, goals: Any) -> None:
        self.stop_pondering()
        if self._factors is not None:
            for i, part in enumerate(self._parts):
                part.stop(self._factors.project(state, i), goals)
        self._dfs = None  # its table is large: freed with the match
        self._puzzle = None  # (so is the puzzle search's solver's)
        self._plain = None

    def _rave_for(self, game: KernelGame, start_clock: float | None, seed: int) -> float:
        """RAVE's constant for this match: ``rave`` where given, else :data:`SHAPE_RAVE` on a rule sheet of
        two roles whose random games (at most :data:`SHAPE_SHARE` of the start clock) show a shape that suits
        it (:attr:`ggp.agents.shape.Shape.suits_rave`), else 0."""
        if self.rave is not None:
            return self.rave
        if self.plays is not None or self._puzzle is not None or len(game.roles) != 2:
            return 0.0
        if not traces_rollouts(game, None if self.batched else 1):  # no rollouts that mark their moves
            return 0.0
        # without a clock, however long it takes: a seeded player's choice must not depend on the machine's speed
        seconds = None if start_clock is None else min(SHAPE_SECONDS, SHAPE_SHARE * start_clock)
        return SHAPE_RAVE if measure_shape(game, seconds=seconds, seed=seed).suits_rave else 0.0

    def _make_tree(self, game: KernelGame, seed: int, count: int = 1) -> UCTSearch:
        leaf = type(self).leaf_value  # a compiled function, not a method
        params = self.leaf_params
        if leaf is None and self.goal_heuristic and self.plays is None and self._goals_move:
            leaf, params = goal_blend(game), (GOAL_WEIGHT,)
        # A rule sheet's states can be large: all trees together take at most half the memory a tree may take.
        material = self.found_material if leaf is None else None
        greedy = self._greedy and leaf is None
        batch = None if self.batched else 1
        # (RAVE reads the moves of the batched random rollouts: where the leaves are scored otherwise, it is off)
        rave = self._rave if not greedy and traces_rollouts(game, batch, leaf, material) else 0.0
        minimax = self._minimax  # (0 where no evaluation was found)
        capacity = self.capacity
        while (
            capacity > MIN_CAPACITY and count * tree_bytes(game, capacity, rave > 0, minimax > 0) > MAX_TREE_BYTES // 2
        ):
            capacity //= 2
        capacity = max(capacity, MIN_CAPACITY)
        return UCTSearch(
            game,
            capacity=capacity,
            c=self.c,
            seed=seed,
            leaf_value=leaf,
            params=params,
            solve=self.solve,
            transpose=self.transpose,
            decisive=self.decisive and self.plays is None,
            decisive_at=self.decisive_at,
            batch=batch,
            material=material,
            greedy=greedy,
            pieces=self.found_pieces,
            bias=self.bias if self.found_pieces is not None else 0,
            displace=self._displace and self.found_pieces is not None,
            rave=rave,
            minimax=minimax,
            evaluation=self.found_evaluation if minimax > 0 else None,
        )

    def choose(self, state: State, limit: Limit = Limit()) -> Choice:  # noqa: B008 - a frozen value
        """The move, with the search's visits of each legal move (its policy) and its figures."""
        self.last_result = None
        move = self.select_move(state, limit.time)
        result = self.last_result if self._last_part is None else self._last_part.last_result
        if result is None or self.role not in result.roles:  # nothing to decide, or not searched here
            return Choice(move)
        r = result.roles.index(self.role)
        policy = tuple((m, int(v)) for m, v in zip(result.moves[r], result.visits[r], strict=True))
        values = dict(zip(result.moves[r], result.values[r], strict=True))
        info = {"simulations": result.simulations, "seconds": result.seconds, "value": float(values.get(move, 0.0))}
        return Choice(move, policy, info)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        began = time.perf_counter()
        self.stop_pondering()
        self._last_part = None
        self._ponder_part = None
        if self._factors is not None:
            i = self._factors.part_of(state, self.role)
            if i is not None:
                # the sub-game where this role moves now, searched as a game of its own
                part = self._parts[i]
                left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - began))
                part.last_result = None
                move = part.select_move(self._part_state(i, state), left)
                self._last_part = part
                self._ponder_part = (i + 1) % len(self._parts), state
                self.last_simulations = part.last_simulations
                return self.game.parse_move(move.text)
            self._start_whole()
        legal = self.game.legal_moves(state, self.role)
        if not legal:
            raise RuntimeError(f"{self.game.name}: {self.role} has no legal move in this state")
        seconds = budget(self.time, time_limit)
        if seconds is None and self.sims is None:
            seconds = DEFAULT_TIME
        if seconds is not None and time_limit is not None:
            # The time limit began with the call: stopping the thinking ahead (a chunk of rollouts, which on a
            # loaded machine took up to 1.5 s) and listing the moves came out of it.
            seconds = min(seconds, _room(time_limit - (time.perf_counter() - began)))
        if len(legal) == 1 and self._puzzle is None and self._plain is None:
            # Nothing to decide, but the trees move here, so that thinking on the opponents' time (ponder)
            # grows the position they are deciding in.
            if self.sims is None and self.reuse:
                for tree in self._trees:
                    if not tree.advance(state):
                        tree.reset(state)
            if seconds is not None and time_limit is not None and self._dfs is not None:
                # The referee's clock is ours at this step too: the exhaustive solver (one thread, the trees
                # idle) walks the position the others are deciding in, which a proof needs anyway.
                seconds = max(0.01, seconds - self._lateness)
                self._solve_alone(state, began + seconds)  # moving the trees' roots came out of it
                late = time.perf_counter() - began - seconds
                self._lateness = max(0.0, late, LATENESS_DECAY * self._lateness)
            return legal[0]
        if seconds is not None and time_limit is not None:
            # A loaded machine makes calls overrun what they planned (threads wait for a core): plan with
            # the lateness seen so far in this match, within the room the time limit gives.
            seconds = max(0.01, seconds - self._lateness)
        if self._plain is not None:
            if self.sims is not None:
                move = self._plain.move(state, playouts=self.sims)
            else:
                move = self._plain.move(state, seconds if seconds is not None else DEFAULT_TIME)
            self.last_simulations = self._plain.playouts
        elif self._puzzle is not None:
            move = self._puzzle.move(state, seconds if seconds is not None else DEFAULT_TIME)
        else:
            move = self._search(state, self.sims, seconds)
        if seconds is not None:
            late = time.perf_counter() - began - seconds
            self._lateness = max(0.0, late, LATENESS_DECAY * self._lateness)
        return move

    def _search(self, state: State, sims: int | None, seconds: float | None) -> Move:
        assert self._tree is not None
        tree = self._tree
        if sims is not None and seconds is not None:  # a count, but never past the clock
            deadline = time.perf_counter() + seconds
            if not (self.reuse and tree.advance(state)):
                tree.reset(state)
            done = 0
            while done < sims and time.perf_counter() < deadline and not tree.solved:
                step = min(256, sims - done)
                tree.run(step)
                done += step
            result = tree.result()
        elif sims is not None:
            result = tree.search(state, sims=sims, reuse=self.reuse)
        else:
            assert seconds is not None
            end = time.perf_counter() + seconds
            checking = VERIFY_SHARE * seconds if self.verify and self.solve and len(self.game.roles) > 1 else 0.0
            searched = self._parallel(state, seconds - checking)
            assert searched is not None  # (None only for the start clock's search)
            result = self._verified(searched, end) if checking else searched
            quickest = self._quickest_win(state, result, end)
            if quickest is not None:
                self.last_simulations = result.simulations
                self.last_result = result
                return quickest
        self.last_simulations = result.simulations
        self.last_result = result
        return result.best(self.role)

    def _quickest_win(self, state: State, result: SearchResult, deadline: float) -> Move | None:
        """Where the search proved a move of this role wins (the top goal), the first move of a shortest forced
        win, found by ``deadline`` by the exhaustive solver walking one ply deeper at a time; None if it finds
        none in the time. MCTS-Solver proves some win, not the quickest: in a won position it played on without
        closing, 18 steps on one board of connectFourSimultaneous, while Sancho won the race on the other."""
        r = self._role_index()
        if (
            r < 0
            or not self.dfs
            or self.plays is not None
            or not result.proven
            or not isinstance(self.game, KernelGame)
        ):
            return None
        proven = result.proven[r]
        if not len(proven) or not np.nanmax(np.append(proven, -1.0)) >= 100.0:
            return None
        # A fresh table: a table kept from an earlier move holds positions proven by deeper walks, which would
        # count as won at any depth here.
        solver = DFSolver(self.game, max_bytes=QUICK_BYTES, role=self._dfs_role)
        for limit in range(1, QUICK_PLIES + 1):
            solver.deepen(limit, state)
            if solver.mover != r:  # (the role is not the one to choose here after all)
                return None
            while solver.status == SEARCHING and time.perf_counter() < deadline:
                solver.run(QUICK_EXPANSIONS)
            if solver.status == SEARCHING or solver.status == FULL:
                return None
            value = solver.value()
            if value is not None and value[r] >= 100.0:
                wins = [m for m, v in solver.move_values().items() if v >= 100.0]
                return wins[0] if wins else None
        return None

    def _verified(self, result: SearchResult, deadline: float) -> SearchResult:
        """``result`` with the move it would play checked until ``deadline``: the first tree searches below
        that move alone (the opponents' replies), and if that proves it lost the next best is checked, and so
        on. Where every move looks alike, the visits spread over all of them and a reply that wins by force
        a few moves on is found only below the move that allows it (a breakthrough race lost so to Sancho).
        Only where the player alone chooses at the root."""
        tree = self._trees[0]
        if self.role not in result.roles or tree.solved:
            return result
        r = result.roles.index(self.role)
        checked: set[int] = set()
        while time.perf_counter() < deadline:
            move = result.best(self.role)
            i = result.moves[r].index(move)
            if i in checked or (result.proven and not np.isnan(result.proven[r][i])):
                break  # checked already, or proven: nothing more to learn here
            checked.add(i)
            node = tree.child_of(i)
            if node <= 0:
                break
            chunk = 64
            while not tree.proven[node] and time.perf_counter() < deadline:
                t0 = time.perf_counter()
                tree.run_below(node, chunk)
                chunk = next_chunk(chunk, time.perf_counter() - t0, (deadline - t0) / 10, tree.batch)
            if not tree.proven[node]:
                break  # no refutation found in the time: it is played
            proven = [np.array(p, dtype=float) for p in result.proven]
            for k in range(len(proven)):
                if len(proven[k]) == len(result.moves[k]) and (k == r or len(proven[k]) == 1):
                    proven[k][i if k == r else 0] = 100.0 * float(tree.pval[node, k])
            result = dataclasses.replace(result, proven=tuple(proven))
        return result

    def _parallel(self, state: State, seconds: float, *, start: bool = False) -> SearchResult | None:
        """Search every tree from ``state`` for ``seconds``, one thread each, and merge their roots.

        While the exhaustive solver is on and ``state`` is not proven, it takes one thread of its own, in
        place of one tree when there are several; with a single tree it takes turns with it on one thread
        (:data:`DFS_SHARE` of the time), so that ``threads=1`` means one thread.

        ``start``: the search of the start clock, whose result is not needed. Its threads are waited for
        until ``seconds`` and :data:`START_GRACE` have passed; one still in a chunk then (a loaded machine
        kept a START 10 s past its clock) is told to stop and is left to end like thinking ahead, and
        joined by the next call; the result is None.
        """
        began = time.perf_counter()
        deadline = began + seconds
        solver = self._solver_at(state)
        trees = self._trees if solver is None or len(self._trees) == 1 else self._trees[:-1]
        for tree in trees:
            if not (self.reuse and tree.advance(state)):
                tree.reset(state)
        solved = threading.Event()
        cpu: list[float] = []
        jobs: list[tuple[Any, tuple[Any, ...]]]
        if solver is not None and len(trees) == 1:
            jobs = [(_grow_sharing, (trees[0], solver, deadline, seconds, solved, self._role_index(), cpu))]
        else:
            jobs = [(_grow, (t, deadline, seconds, solved)) for t in trees]
            if solver is not None:
                jobs.append((_grow_dfs, (solver, deadline, seconds, solved, self._role_index(), cpu)))
        if len(jobs) == 1 and not start:
            jobs[0][0](*jobs[0][1])
        else:
            workers = [threading.Thread(target=f, args=a, name="ggp-mcts", daemon=True) for f, a in jobs]
            for w in workers:
                w.start()
            for w in workers:
                w.join(None if not start else max(0.0, deadline + START_GRACE - time.perf_counter()))
            if any(w.is_alive() for w in workers):
                solved.set()
                self._ponder_stop, self._ponder_threads = solved, workers
                return None
        spent = time.perf_counter() - began
        result = merge([t.result(spent) for t in trees])
        if solver is not None and solver.status != PROVEN and not solver.limit:
            self._dfs_left -= sum(cpu) / (DFS_SHARE if len(trees) == 1 else 1.0)
        return self._with_proofs(result)

    def _solve_alone(self, state: State, deadline: float) -> None:
        """Run the exhaustive solver from ``state`` until ``deadline`` in this thread, if it is to search there."""
        solver = self._solver_at(state)
        seconds = deadline - time.perf_counter()
        if solver is None or seconds <= 0:
            return
        cpu: list[float] = []
        _grow_dfs(solver, deadline, seconds, threading.Event(), self._role_index(), cpu)
        if solver.status != PROVEN and not solver.limit:
            self._dfs_left -= sum(cpu)

    def _role_index(self) -> int:
        return self.game.roles.index(self.role) if self.role in self.game.roles else -1

    def _solver_at(self, state: State) -> DFSolver | None:
        """The exhaustive solver with ``state`` as its root, if it is to search there; None otherwise.

        A solver that ran out of room or of its allowance is given up (and its memory freed); with
        ``deepen``, a fresh one then walks each position a ply deeper at a time (:meth:`DFSolver.deepen`).
        """
        solver = self._dfs
        if solver is None:
            return None
        if solver.limit == 0 and (solver.status == FULL or (self._dfs_left <= 0 and solver.status != PROVEN)):
            self._dfs = solver = None
            if not self.deepen:
                return None
        if solver is None or solver.status == FULL:
            assert isinstance(self.game, KernelGame)
            solver = self._dfs = DFSolver(self.game, max_bytes=DEEPEN_BYTES, role=self._dfs_role)
            solver.deepen(FIRST_PLIES, state)
        elif solver.root_state != state:
            if solver.limit:
                solver.deepen(FIRST_PLIES, state)
            else:
                solver.reset(state)
        if solver.status == UNKNOWN and solver.simultaneous:  # roles choosing at once beyond the walk
            self._dfs = None
            return None
        return solver if solver.status == SEARCHING else None

    def _with_proofs(self, result: SearchResult) -> SearchResult:
        """``result`` with the exhaustive solver's proven root moves added to its proven values."""
        solver = self._dfs
        if solver is None or solver.root_state is None or solver.mover is None or not result.proven:
            return result
        values = solver.move_values()
        if not values:
            return result
        r = solver.mover
        pv = np.array(result.proven[r], dtype=float)
        for i, move in enumerate(result.moves[r]):
            if move in values:
                pv[i] = values[move]
        proven = tuple(pv if k == r else p for k, p in enumerate(result.proven))
        # (where roles choose at once, the solver's value is only what the player is sure of: not the game's)
        solved = solver.value() if result.solved is None and not solver.simultaneous else result.solved
        return dataclasses.replace(result, proven=proven, solved=solved)

    # --- thinking between calls -------------------------------------------------------------------------
    def ponder(self) -> None:
        """Go on searching the trees' current root in the background until the next call.

        The GGP player calls it after answering PLAY: the opponents' think time
        then grows the subtree the next move reuses. A no-op when ``ponder`` is
        off, for puzzles, or before a search.
        """
        if self._ponder_part is not None:
            # the sub-game this role moves in next (a guess: the one it did not move in, as where they take
            # turns), its trees moved to where it stands
            self.stop_pondering()
            i, state = self._ponder_part
            part = self._parts[i]
            sub = self._part_state(i, state)
            if self.pondering and not part.game.is_terminal(sub):
                for tree in part._trees:
                    tree.advance(sub)  # (or a fresh tree from there)
                part.ponder()
            return
        if not self.pondering or self._puzzle is not None or not self._trees:
            return
        self.stop_pondering()
        if any(t._root_state is None or t.solved for t in self._trees):
            return
        self._ponder_stop = stop = threading.Event()
        self._ponder_threads = [
            threading.Thread(target=_grow, args=(t, None, 1.0, stop), name="ggp-mcts-ponder", daemon=True)
            for t in self._trees
        ]
        for w in self._ponder_threads:
            w.start()

    def stop_pondering(self) -> None:
        """End the background search, if any (within one chunk of a few milliseconds)."""
        self._ponder_stop.set()
        for w in self._ponder_threads:
            w.join()
        self._ponder_threads = []
        for part in self._parts:
            part.stop_pondering()

    def __repr__(self) -> str:
        what = f"sims={self.sims}" if self.sims is not None else f"time={self.time or 'clock'}"
        return f"{type(self).__name__}({what}, c={self.c}, seed={self.seed!r})"


def _deepened(solver: DFSolver) -> bool:
    """Whether a solver walking to a limit that left its root unknown now walks a ply deeper."""
    if solver.status != UNKNOWN or not 0 < solver.limit < MAX_PLIES or solver.simultaneous:
        return False
    solver.deepen(solver.limit + 1)
    return solver.status == SEARCHING


def _grow_dfs(
    solver: DFSolver, deadline: float, seconds: float, stop: threading.Event, role: int, cpu: list[float]
) -> None:
    """Run the exhaustive solver until ``deadline``, its root is proven, or ``stop`` is set, in chunks of
    about a hundredth of ``seconds``. A root proven to give ``role`` the top goal stops the trees too. The
    processor time it took is appended to ``cpu``."""
    began = time.thread_time()
    chunk = 16
    while not stop.is_set() and (solver.status == SEARCHING or _deepened(solver)):
        t0 = time.perf_counter()
        room = min(seconds / 100, deadline - t0)
        if room <= 0:
            break
        done = solver.run(chunk)
        rate = max(done, 1) / max(time.perf_counter() - t0, 1e-6)
        chunk = max(16, min(int(rate * room), 2 * chunk, 1 << 20))
    cpu.append(time.thread_time() - began)
    value = solver.value()
    if value is not None and 0 <= role < len(value) and value[role] >= 100:
        stop.set()


def _grow_sharing(
    tree: UCTSearch,
    solver: DFSolver,
    deadline: float,
    seconds: float,
    stop: threading.Event,
    role: int,
    cpu: list[float],
) -> None:
    """Run ``tree`` and the exhaustive solver by turns on this one thread until ``deadline``, the tree's root
    is solved or ``stop`` is set: in each hundredth of ``seconds`` the solver has :data:`DFS_SHARE` of the
    time while it still searches. The solver's processor time is appended to ``cpu``."""
    chunk, dfs_chunk, used = 1, 16, 0.0
    step = seconds / 100
    while not stop.is_set() and not tree.solved:
        t0 = time.perf_counter()
        room = min(step, deadline - t0)
        if room <= 0:
            break
        searching = solver.status == SEARCHING or _deepened(solver)
        tree_room = room * (1 - DFS_SHARE) if searching else room
        tree.run(chunk)
        chunk = next_chunk(chunk, time.perf_counter() - t0, tree_room, tree.batch)
        if searching:
            t1, c1 = time.perf_counter(), time.thread_time()
            done = solver.run(dfs_chunk)
            rate = max(done, 1) / max(time.perf_counter() - t1, 1e-6)
            dfs_chunk = max(16, min(int(rate * room * DFS_SHARE), 2 * dfs_chunk, 1 << 20))
            used += time.thread_time() - c1
            value = solver.value()
            if value is not None and 0 <= role < len(value) and value[role] >= 100:
                stop.set()
    cpu.append(used)
    if tree.solved:
        stop.set()


def _grow(tree: UCTSearch, deadline: float | None, seconds: float, stop: threading.Event) -> None:
    """Run ``tree`` until ``deadline`` (None: until ``stop``), its root is solved, or ``stop`` is set.

    Chunks take about a hundredth of ``seconds`` (at most 20 ms when
    pondering, so that stopping is quick) and never reach past the deadline.
    """
    chunk = 1  # a rule sheet's simulation can take tens of milliseconds: start small, at most double
    step = min(seconds / 100, 0.02) if deadline is None else seconds / 100
    while not stop.is_set() and not tree.solved:
        t0 = time.perf_counter()
        room = step if deadline is None else min(step, deadline - t0)
        if room <= 0:
            break
        tree.run(chunk)
        spent = time.perf_counter() - t0
        # At most doubling: a chunk whose simulations mostly ended on proven nodes measures a rate that the
        # next chunk, reaching open lines, would not keep up, and would overrun the clock.
        chunk = next_chunk(chunk, spent, room, tree.batch)
    if tree.solved:
        stop.set()
