"""Compiled Monte Carlo tree search over a native game's kernel.

One algorithm serves every game: decoupled UCT (DUCT). Each node keeps, for
each role separately, the visits and summed goals of that role's moves, and
each role picks its own move by UCB1; the pair indexes the child. In a
turn-based game the idle role has the single move ``noop``, so DUCT is plain
UCT for the role to act. Leaves are scored by the game's random rollout
(for Amazons the fast hierarchical one).

The tree lives in preallocated arrays and one compiled call runs a batch of
simulations, so search speed is the kernel's speed:

>>> import ggp
>>> from ggp.agents.uct import search
>>> game = ggp.load("wallmaze")
>>> result = search(game, game.initial_state(), sims=2000, seed=1)
>>> result.simulations
2000
>>> sorted(str(m) for m in result.moves[0])
['(move 2 5 3 5)', 'noop']
>>> int(result.visits[0].sum())
2000

A node's moves are listed when the node is first passed through (its second
visit), not when it is created, so the many leaves visited once cost only
their state.

This module is the Python side (:class:`UCTSearch`, :class:`SearchResult`,
:func:`search`): it allocates the tree's arrays and reads results from them.
The compiled simulation loop and leaf scorers are in :mod:`ggp.agents.uct_loop`,
the node-level helpers (UCB1, state hash table, proving) in
:mod:`ggp.agents.uct_tree`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from ..core.game import Game, Move, State
from ..core.kernels import rng_state
from ..core.native import KernelGame
from .greedy import greedy_params, greedy_rollout
from .heuristic import Material
from .options import MAX_C, MAX_CAPACITY, MAX_SEED, MAX_SIMS, MIN_CAPACITY, Range, check_option
from .uct_loop import (
    _batch_rollouts_template,
    _decisive_win_template,
    _each_leaf_template,
    _over_template,
    _rave_score_batch_template,
    _rollout_value_template,
    _run_template,
    _score_batch_template,
)
from .uct_tree import Options, Scratch, Tree, Waiting, _find, _insert, _state_hash, keep_subtree

MAX_DEPTH = 4096  # longer than any built-in game (Amazons 10x10: at most 2 * 92 steps); deeper paths are cut
#: Most memory one tree's arrays may take; a larger tree is refused before anything is allocated.
MAX_TREE_BYTES = 2 << 30
#: Most leaves one batch scores together (see UCTSearch's ``batch``).
MAX_BATCH = 128
# A move's visits are int32 counts: a tree whose root would pass this many visits starts afresh.
_MAX_VISITS = 2**31 - 1
#: A tree (or one of its pools) fuller than this makes room before simulating on (see UCTSearch._make_room).
FULL = 0.9
# (the fewest simulations run between two checks of the room left)
_MIN_STEP = 256

# What the public entry points accept (the same declarations as the agents' options).
_C = Annotated[float, Range(ge=0, le=MAX_C)]
_SEED = Annotated[int, Range(ge=0, le=MAX_SEED)]
_CAPACITY = Annotated[int, Range(ge=MIN_CAPACITY, le=MAX_CAPACITY)]
_SIMS = Annotated[int, Range(ge=0, le=MAX_SIMS)]
_SECONDS = Annotated[float, Range(ge=0)]
_BATCH = Annotated[int, Range(ge=1, le=MAX_BATCH)]
_VISITS = Annotated[int, Range(ge=1, le=_MAX_VISITS)]
_BIAS = Annotated[int, Range(ge=0, le=100)]
_RAVE = Annotated[float, Range(ge=0, le=100)]
_MINIMAX = Annotated[float, Range(ge=0, le=1)]
#: The heaviest weight a piece may have in ``pieces`` (counts stay far from overflow and rounding).
_MAX_PIECE = 1e6


# --- the Python side ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SearchResult:
    """What a search found at the root: for each role, its moves with visits and mean goals."""

    roles: tuple[str, ...]
    #: Per role, the root's legal moves (the kernel's order).
    moves: tuple[tuple[Move, ...], ...]
    #: Per role, how often each move was tried.
    visits: tuple[np.ndarray, ...]
    #: Per role, each move's mean goal (0..100) in the simulations that tried it.
    values: tuple[np.ndarray, ...]
    simulations: int
    nodes: int
    seconds: float
    #: Memory held by the tree's arrays.
    bytes: int
    #: Per role, each move's proven goal (0..100) where MCTS-Solver proved it, else NaN. Only the
    #: role to move in a position where no other role has a choice gets proven moves.
    proven: tuple[np.ndarray, ...] = ()
    #: The root's proven goals, one per role, or None while it is not solved.
    solved: tuple[float, ...] | None = None

    def best(self, role: str) -> Move:
        """``role``'s move: a proven best one if the solver found it, else the most visited among those
        not proven worse (ties: the higher mean goal); ValueError if it has none.

        A move proven to reach the top goal is played at once; a move proven worse than another proven
        one, or proven to lose while some move is still open, is not played.
        """
        r = self.roles.index(role)
        n = len(self.moves[r])
        if n == 0:
            raise ValueError(f"{role} has no move in the searched state (is it terminal?)")
        candidates = np.ones(n, dtype=bool)
        if self.proven and len(self.proven[r]) == n:
            pv = self.proven[r]
            known = ~np.isnan(pv)
            if known.any():
                top = float(pv[known].max())
                if top >= 100 or known.all():
                    candidates = known & (pv == top)
                else:
                    candidates = ~known | (pv == top)
                    if top <= 0:
                        candidates = ~known
        order = np.lexsort((self.values[r], self.visits[r], candidates))
        return self.moves[r][int(order[-1])]


class UCTSearch:
    """A reusable search tree for one game with a kernel, built-in or a rule sheet's (arrays allocated once).

    ``capacity`` bounds the number of nodes (2 to 2,000,000, and at most
    :data:`MAX_TREE_BYTES` of arrays); :meth:`run` keeps room in it by dropping
    the least visited nodes when it is nearly full (:data:`FULL`). ``c`` (finite, 0 to 100)
    is the UCB1 constant and ``seed`` an int from 0 to 2^63 - 1; other values
    raise ValueError before anything is allocated. ``leaf_value`` replaces
    the random rollout as the score of a new leaf: a compiled function
    ``(s, rng, out, params)`` writing each role's value (0..1) into ``out[0:2]``;
    ``params`` is this object's float array :attr:`params`, which the caller may
    change between searches (its values, not its length: an opponent model, say). ``solve`` turns
    MCTS-Solver on; ``transpose`` makes a state reached by two orders of moves
    one node (found by its hash in a table), whose statistics both paths share:
    the tree becomes a graph, and a path that comes back to one of its own
    positions ends there. ``decisive`` (with ``solve``) checks, when a node where
    one role chooses is expanded (below the root: once it has ``decisive_at``
    visits), whether one of its moves wins at once: if so the node is proven
    there (a win in one is then never missed for want of samples, and the move
    that allowed it is proven lost). With ``solve``, where one role chooses, a
    move whose node is proven counts in the selection at its proven value, not
    the mean of the samples taken before the proof. ``batch`` (1 to
    :data:`MAX_BATCH`) leaves are scored together: the paths to them are chosen
    one after another, each waiting leaf counted on its path as a loss until its
    value arrives (a virtual loss, which steers the next paths elsewhere); None
    means the kernel's own batch where it plays many rollouts in one call (a rule
    sheet's: :data:`ggp.gdl.lanes.LANES`, bit-parallel, where that is faster) and no
    ``leaf_value`` is given, else 1. ``greedy`` scores leaves by greedy rollouts
    (:mod:`ggp.agents.greedy`) in place of ``leaf_value``, ``params`` and ``material``.
    ``bias`` (0 to 100 virtual visits; 0: off) is progressive bias as Sancho's piece
    heuristic gives it: when a node where one role chooses is expanded, each of its
    moves that changes the piece counts (``pieces``: each role's weight of each
    byte of the state, :func:`ggp.agents.heuristic.find_pieces`) starts with that
    many visits, worth what it gains the mover over the average role (a capture
    more than a quiet move, a move that loses a piece less); they count among
    that move's visits in :meth:`result`. ``displace`` (two roles, with
    ``pieces``) is Sancho's two-role piece heuristic: a node whose move changed
    the balance of pieces keeps role 0's share of the change (:attr:`hval`),
    and every value backed up through it is moved that far towards the side
    that gained, at every step above it. ``minimax`` (0 to 1; 0: off) is implicit
    minimax backups (Lanctot, Winands, Pepels and Sturtevant, 2014), with
    ``evaluation`` (a :class:`~ggp.agents.heuristic.Material`) as the evaluation:
    each new node keeps each role's evaluation of its state (a terminal one its
    goals), backed up by minimax over the children made so far (where several
    roles choose at once, their mean), and where one role chooses, a move's value
    in the selection is ``(1 - minimax) * mean + minimax * that value``.
    """

    def __init__(
        self,
        game: Game,
        capacity: int = 200_000,
        c: float = 1.4,
        seed: int = 0,
        leaf_value: Any = None,
        params: Sequence[float] = (),
        solve: bool = True,
        transpose: bool = False,
        decisive: bool = False,
        batch: int | None = None,
        material: Material | None = None,
        greedy: bool = False,
        pieces: np.ndarray | None = None,
        bias: int = 0,
        displace: bool = False,
        decisive_at: int = 1,
        rave: float = 0.0,
        minimax: float = 0.0,
        evaluation: Material | None = None,
    ) -> None:
        if not isinstance(game, KernelGame):
            raise TypeError(f"compiled search needs a game with a kernel; {game.name} has none")
        if greedy:
            if leaf_value is not None or material is not None:
                raise ValueError(
                    "UCTSearch: greedy rollouts are a leaf value of their own: give no leaf_value or material"
                )
            # (built here, with params of the one length the compiled rollout may read)
            leaf_value, params = greedy_rollout(game), greedy_params(game)
        self.game = game
        self.c = check_option("UCTSearch", "c", c, _C)
        seed = check_option("UCTSearch", "seed", seed, _SEED)
        capacity = check_option("UCTSearch", "capacity", capacity, _CAPACITY)
        decisive_at = check_option("UCTSearch", "decisive_at", decisive_at, _VISITS)
        kernel = game.kernel
        if batch is None:
            batch = kernel.rollout_batch() if leaf_value is None else 1
        batch = check_option("UCTSearch", "batch", batch, _BATCH)
        # (one leaf at a time: the kernel's own rollout; a batch of a kernel without batched rollouts: the same)
        batched = batch > 1 and leaf_value is None and "kernel_rollouts" in kernel.namespace
        rave = check_option("UCTSearch", "rave", rave, _RAVE)
        minimax = check_option("UCTSearch", "minimax", minimax, _MINIMAX)
        if minimax > 0 and evaluation is None:
            raise ValueError("UCTSearch: implicit minimax needs an evaluation of states (evaluation=)")
        if minimax > 0 and rave > 0:
            raise ValueError("UCTSearch: implicit minimax and RAVE each make the selection's values: give one")
        if rave > 0 and not traces_rollouts(game, batch, leaf_value, material):
            raise ValueError(
                f"UCTSearch: RAVE reads the moves of batched random rollouts, which {game.name}'s search would not "
                "play here (a built-in game, a leaf value or material heuristic of its own, or batch=1): give rave=0"
            )
        nr = kernel.num_roles
        width = max(1, kernel.max_actions)
        initial = game.initial_array()
        length = initial.shape[0]
        # Pools for the move lists and child links of expanded nodes (those visited
        # twice). In wide games about a quarter of the nodes get expanded, each
        # taking its full width; a search that runs out of pool keeps simulating
        # without expanding further.
        pool = max(capacity * min(width, 32), 2 * nr * width)
        need = tree_bytes(game, capacity, rave > 0, minimax > 0)
        if need > MAX_TREE_BYTES:
            most = capacity * MAX_TREE_BYTES // need
            raise ValueError(
                f"UCTSearch: a tree of {capacity:,} nodes for {game.name} would take {need / 2**30:.1f} GB, more "
                f"than the {MAX_TREE_BYTES / 2**30:.0f} GB allowed; give a capacity of at most {most:,}"
            )
        self.ctx = kernel.context()
        self.states = np.zeros((capacity, length), dtype=kernel.dtype)
        self.node_visits = np.zeros(capacity, dtype=np.int64)
        self.node_terminal = np.zeros(capacity, dtype=np.bool_)
        #: Solved nodes and their exact values (each role's goal / 100).
        self.proven = np.zeros(capacity, dtype=np.bool_)
        self.pval = np.zeros((capacity, nr), dtype=np.float64)
        self.expanded = np.zeros(capacity, dtype=np.bool_)
        #: Per node and role: how many moves, and where they start in the action pool.
        self.counts = np.zeros((capacity, nr), dtype=np.int64)
        self.offsets = np.zeros((capacity, nr), dtype=np.int64)
        self.coff = np.zeros(capacity, dtype=np.int64)
        self.act = np.zeros(pool, dtype=np.int32)
        self.act_visits = np.zeros(pool, dtype=np.int32)
        self.act_value = np.zeros(pool, dtype=np.float32)
        self.child = np.zeros(pool, dtype=np.int32)
        #: RAVE's all-moves-as-first statistics beside each move's own (one entry each when off).
        self.amaf_visits = np.zeros(pool if rave > 0 else 1, dtype=np.int32)
        self.amaf_value = np.zeros(pool if rave > 0 else 1, dtype=np.float32)
        #: RAVE: the all-moves-as-first weight's constant (see Options.rave; 0: off).
        self.rave = float(rave)
        #: Transpositions: each node's state hash, and an open-addressing table from hashes to nodes
        #: (one entry when off: the compiled loop does not read them then).
        self.nhash = np.zeros(capacity if transpose else 1, dtype=np.uint64)
        self.table = np.full(_table_size(capacity) if transpose else 1, -1, dtype=np.int32)
        #: The last simulation whose path passed through each node (a path that comes back ends).
        self.stamp = np.zeros(capacity, dtype=np.int64)
        #: Per node, role 0's share of the change in the balance of pieces its move made (0.5: none; ``displace``).
        self.hval = np.full(capacity, 0.5, dtype=np.float64)
        #: Implicit minimax: per node and role, its evaluation backed up by minimax (one row when off).
        self.mm = np.full((capacity if minimax > 0 else 1, nr), 0.5, dtype=np.float64)
        #: Implicit minimax's weight in the selection (0: off).
        self.minimax = float(minimax)
        self.evaluation = evaluation
        if evaluation is not None:
            packed = evaluation.params(blend=0.0)
            if (
                evaluation.weights.shape != (nr, length)
                or evaluation.bias.shape != (nr,)
                or not np.isfinite(packed).all()
            ):
                raise ValueError(f"UCTSearch: the evaluation does not fit {game.name}'s states")
            self.heur = packed
        else:
            self.heur = np.zeros(1, dtype=np.float64)
        self.meta = np.zeros(4, dtype=np.int64)
        self.rng = rng_state(seed)
        # (each step: the node, each role's move, and the child it leads to, -1 while unknown)
        self.path = np.zeros((MAX_DEPTH, 2 + nr), dtype=np.int64)
        self.buf = np.zeros(width, dtype=np.int64)
        self.work = np.zeros(length, dtype=kernel.dtype)
        self.val = np.zeros(nr, dtype=np.float64)
        self.joint = np.zeros(nr, dtype=np.int64)
        self.res = np.zeros(nr, dtype=np.int64)
        bias = check_option("UCTSearch", "bias", bias, _BIAS)
        if displace and nr != 2:
            raise ValueError(f"UCTSearch: displace is Sancho's two-role piece heuristic; {game.name} has {nr} roles")
        if bias > 0 or displace:
            if pieces is None:
                raise ValueError("UCTSearch: bias and displace need each role's pieces (pieces=)")
            pieces = np.asarray(pieces, dtype=np.float64)
            if pieces.shape != (nr, length) or not np.isfinite(pieces).all() or not (pieces >= 0).all():
                raise ValueError(
                    f"UCTSearch: pieces must be an array of shape ({nr}, {length}) for {game.name}, of weights >= 0"
                )
            if pieces.max(initial=0.0) > _MAX_PIECE:
                raise ValueError(f"UCTSearch: a piece's weight must be at most {_MAX_PIECE:g}")
            self.pieces = pieces.copy()
        else:  # not read: the loop looks at pieces only with bias or displace
            self.pieces = np.zeros((1, 1), dtype=np.float64)
        #: Progressive bias: the virtual visits a move that changes the piece counts starts with.
        self.bias = float(bias)
        #: Values backed up through a node whose move changed the balance of pieces displaced towards the side
        #: that gained (Sancho's two-role piece heuristic).
        self.displace = bool(displace)
        self.tally = np.zeros((2, nr), dtype=np.float64)
        self.base = np.full(nr, 0.5, dtype=np.float64)
        if material is not None:
            if leaf_value is not None:
                raise ValueError("UCTSearch: give a leaf_value or a material heuristic, not both")
            packed = material.params()
            fits = material.weights.shape == (nr, length) and material.bias.shape == (nr,)
            if not fits or not np.isfinite(packed).all() or not 0.0 <= packed[0] <= 1.0:
                raise ValueError(f"UCTSearch: the material heuristic does not fit {game.name}'s states")
            params = packed.tolist()
        elif leaf_value is None:
            params = ()  # the rollouts would read them as a material heuristic
        self.params = np.array([*params, 0.0], dtype=np.float64)  # never empty: numba needs a typed array
        self._params_shape = self.params.shape
        #: Leaves scored together: a batch's paths are chosen first (each waiting leaf counted as a loss on
        #: its path meanwhile), then its leaves scored in one call (a rule sheet's kernel plays 128
        #: rollouts at once, bit-parallel), then its values added.
        self.batch = batch
        self.bstates = np.zeros((batch, length), dtype=kernel.dtype)
        # (the waiting paths, one after another: room for 64 steps a leaf, and for one path as deep as any;
        # deeper batches are scored early)
        self.bpath = np.zeros((MAX_DEPTH + 64 * batch, 2 + nr), dtype=np.int64)
        self.bstart = np.zeros(batch + 1, dtype=np.int64)
        self.bdepth = np.zeros(batch, dtype=np.int64)
        self.bval = np.zeros((batch, nr), dtype=np.float64)
        self.bplayed = np.zeros((batch, nr, width) if rave > 0 else (1, 1, 1), dtype=np.bool_)
        # The same arrays, named, as the compiled loop takes them.
        self._tree = Tree(**{name: getattr(self, name) for name in Tree._fields})
        self._scratch = Scratch(**{name: getattr(self, name) for name in Scratch._fields})
        self._waiting = Waiting(**{name: getattr(self, "b" + name) for name in Waiting._fields})
        # (a material heuristic is read from ``params`` by the rollout templates: no code of its own to compile)
        if rave > 0:
            score = self._score_batch = kernel.specialise(_rave_score_batch_template)
        else:
            if batched:
                leaf_values = kernel.specialise(_batch_rollouts_template)
            else:
                if leaf_value is None:
                    leaf_value = kernel.specialise(_rollout_value_template)
                leaf_values = kernel.specialise(_each_leaf_template, leaf_value=leaf_value)
            score = self._score_batch = kernel.specialise(_score_batch_template, leaf_values=leaf_values)
        decisive_win = kernel.specialise(_decisive_win_template)
        over = kernel.specialise(_over_template)
        self._run = kernel.specialise(_run_template, score_batch=score, decisive_win=decisive_win, over=over)
        #: MCTS-Solver: proven values propagate up the tree (off: plain DUCT, proving only terminal nodes).
        self.solve = bool(solve)
        #: Transpositions: a state reached by two orders of moves is one node.
        self.transpose = bool(transpose)
        #: Decisive moves (with ``solve``): expanding a node where one role chooses tries each of its moves
        #: for a win at once.
        self.decisive = bool(decisive)
        #: The visits a node has when decisive moves look for its wins at once (1: as it is expanded).
        self.decisive_at = decisive_at
        self.root = 0
        self._root_state: State | None = None
        self._sims = 0
        # Set when dropping nodes freed too little room (see _simulate); cleared when the root moves.
        self._no_room = False

    @property
    def nbytes(self) -> int:
        """Memory held by the tree's arrays."""
        return sum(a.nbytes for a in self._tree)

    @property
    def nodes(self) -> int:
        """Nodes in use (after the root moves down, only those below it: see :meth:`advance`)."""
        return int(self.meta[0])

    def reset(self, state: State) -> None:
        """Start a new tree whose root is ``state``."""
        self.states[0] = _array(self.game, state)
        self.node_visits[0] = 0
        self.node_terminal[0] = self.game.is_terminal(state)
        self.proven[0] = self.node_terminal[0]
        if self.proven[0]:
            self.pval[0] = np.asarray(self.game.goals(state), dtype=np.float64) / 100.0
        self.expanded[0] = False
        self.hval[0] = 0.5
        if self.minimax > 0 and self.evaluation is not None:
            self.mm[0] = self.pval[0] if self.proven[0] else self.evaluation.value(self.states[0])
        self.meta[:3] = (1, 0, 0)  # meta[3] counts on: the nodes' stamps stay below it
        if self.transpose:
            self.table.fill(-1)
            _insert(self.table, self.nhash, 0, np.uint64(_state_hash(self.states[0])))
        self.root = 0
        self._root_state = state
        self._sims = 0
        self._no_room = False

    def advance(self, state: State) -> bool:
        """Move the root to ``state`` if the tree holds it at the root or one or two steps below it.

        Returns whether a subtree was kept; otherwise starts afresh from ``state``. Two steps cover an
        agent that did not search in a state where it had a single move. Only what lies below ``state``
        is kept (:func:`~ggp.agents.uct_tree.keep_subtree`): the room the rest took is free again, so a
        tree filled by a long think (the start clock, pondering) goes on growing below the position reached.
        """
        node = self._find_below(state) if self._root_state is not None else -1
        if node < 0:
            self.reset(state)
            return False
        if node != 0:
            keep_subtree(self._tree, node, self.transpose)
            self._no_room = False
        self.root = 0
        self._root_state = state
        self._sims = self._root_simulations()
        return True

    def _find_below(self, state: State) -> int:
        """The node of ``state`` at the root or one or two steps below it (with transpositions: anywhere); -1 if none."""
        target = _array(self.game, state)
        if np.array_equal(self.states[self.root], target):  # searched here already (start clock, pondering)
            return self.root
        if self.transpose:  # every node is in the table, whatever the order of moves that reached it
            return int(_find(self.table, self.nhash, self.states, target, np.uint64(_state_hash(target))))
        level = np.array([self.root], dtype=np.int64)
        for _ in range(2):
            # Vectorised: a wide game's root has thousands of children, each with thousands of its own.
            parts = []
            for node in level[self.expanded[level]]:
                start = int(self.coff[node])
                kids = self.child[start : start + int(np.prod(self.counts[node]))]
                parts.append(kids[kids >= 0])
            below = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
            if below.size == 0:
                break
            hits = np.flatnonzero((self.states[below] == target).all(axis=1))
            if hits.size:
                return int(below[hits[0]])
            level = below
        return -1

    def child_of(self, move: int) -> int:
        """The node reached by the root's ``move`` (an index into the mover's moves) where one role alone
        chooses there; -1 if several choose, the root is not expanded, or that child is not made yet. The
        index holds until the next :meth:`run` (which may drop nodes to make room) or :meth:`advance`."""
        root = self.root
        if not self.expanded[root] or int((self.counts[root] > 1).sum()) > 1:
            return -1
        if not 0 <= move < int(self.counts[root].max()):
            return -1
        return int(self.child[int(self.coff[root]) + move])

    def run_below(self, node: int, sims: int) -> None:
        """Run ``sims`` simulations from ``node`` (a node of this tree) as if it were the root: its subtree
        grows and may be proven, and the root's own statistics are left as they are (the root's count of
        simulations too). MCTSAgent checks the move it is about to play this way."""
        if not 0 < node < self.nodes or self._root_state is None:
            raise ValueError(f"UCTSearch: no node {node} below the root")
        if int(self.node_visits[node]) + sims > _MAX_VISITS:
            return
        root, done = self.root, self._sims
        self.root = node
        try:
            self._simulate(sims, make_room=False)  # room made here would renumber the nodes under the caller
        finally:
            self.root, self._sims = root, done

    def _root_sums(self) -> tuple[list[int], list[float]]:
        # Each role's visits and value summed over its moves at the root (nothing before it is expanded).
        root, roles = self.root, range(self.counts.shape[1])
        if not self.expanded[root]:
            return [0 for _ in roles], [0.0 for _ in roles]
        moves = [slice(int(self.offsets[root, r]), int(self.offsets[root, r] + self.counts[root, r])) for r in roles]
        return [int(self.act_visits[m].sum()) for m in moves], [float(self.act_value[m].sum()) for m in moves]

    def _root_simulations(self) -> int:
        # The simulations that passed through the root's moves: a kept subtree's first visit scored it
        # as a leaf, and visits to a proven child stop there, so the node's own count is not it. (The
        # fewest over the roles: progressive bias's virtual visits are only the chooser's.)
        visits, _ = self._root_sums()
        return min(visits, default=0)

    def _set_base(self) -> None:
        # What progressive bias assumes a quiet move is worth to each role: the root's mean value once it has
        # more than 50 simulations (read between runs, when no leaf waits in a batch), else an even 0.5.
        visits, values = self._root_sums()
        credible = min(visits, default=0) > 50
        for r, (n, v) in enumerate(zip(visits, values, strict=True)):
            self.base[r] = v / n if credible and n else 0.5

    @property
    def solved(self) -> bool:
        """Whether the root's value is proven (MCTS-Solver): searching it further changes nothing."""
        return bool(self.proven[self.root])

    def run(self, sims: int) -> None:
        """Run ``sims`` (0 to 10^8) more simulations from the current root.

        A root whose visit counts would overflow (2^31 - 1) starts a fresh tree first. A tree nearly full
        makes room first, dropping its least visited nodes (:meth:`_make_room`).
        """
        self._simulate(check_option("UCTSearch", "sims", sims, _SIMS), make_room=True)

    def _simulate(self, sims: int, make_room: bool) -> None:
        if self._root_state is None:
            raise RuntimeError("call reset(state) before run()")
        if self.params.shape != self._params_shape or self.params.dtype != np.float64:
            # the compiled leaf reads as many as it was made for: a longer or shorter array would be read past
            raise ValueError(f"UCTSearch: params must stay a float array of shape {self._params_shape}")
        if sims == 0 or self.proven[self.root]:
            return
        if int(self.node_visits[self.root]) + sims > _MAX_VISITS:
            self.reset(self._root_state)
        if self.bias > 0:
            self._set_base()
        options = Options(
            float(self.c),
            self.solve,
            self.transpose,
            self.solve and self.decisive,
            self.bias,
            self.displace,
            self.decisive_at,
            self.rave,
            self.minimax,
        )
        while sims > 0 and not self.proven[self.root]:
            step = sims
            if make_room and not self._no_room:
                if self._nearly_full():
                    # Proven nodes stay, and the root's own moves take their room: where dropping the rest
                    # frees too little, the tree stays full (simulations go on, adding no nodes) until its
                    # root moves, instead of dropping nodes again every step.
                    self._no_room = not self._make_room() or self._nearly_full()
                if not self._no_room:
                    step = min(sims, max(_MIN_STEP, self._room_left()))
            done = int(
                self._run(
                    self.ctx, step, self.root, options, self._tree, self._scratch, self._waiting, self.rng, self.params
                )
            )
            self._sims += done
            sims -= step

    def _room_left(self) -> int:
        # A simulation adds a node or two, and expands one (pool entries: about the average so far per node):
        # a step ends about when the tree or a pool reaches FULL.
        nodes = max(1, self.nodes)
        room = int(FULL * self.states.shape[0]) - self.nodes
        for used, pool in ((int(self.meta[1]), self.act.shape[0]), (int(self.meta[2]), self.child.shape[0])):
            room = min(room, (int(FULL * pool) - used) * nodes // max(1, used))
        return room

    def _nearly_full(self) -> bool:
        return (
            self.nodes > FULL * self.states.shape[0]
            or self.meta[1] > FULL * self.act.shape[0]
            or self.meta[2] > FULL * self.child.shape[0]
        )

    def _make_room(self) -> bool:
        """Drop the least visited nodes, with all below them: a search that fills its tree goes on growing
        where it looks most, as Sancho's node pool does, instead of scoring leaves under a frozen tree.

        The threshold leaves fewer than half the nodes visited more often; proven nodes stay whatever their
        visits. While a pool is still more than half full (wide games), the threshold doubles. Each dropped
        node's parent keeps the statistics of the move to it, and makes the node again when the move is next
        taken. Nodes are renumbered: an index from :meth:`child_of` holds only until the next :meth:`run`.
        Returns False where the pools stay more than half full with nothing left to drop.
        """
        used = self.nodes
        visits = self.node_visits[:used]
        half = self.states.shape[0] // 2
        least = int(np.partition(visits, used - half)[used - half]) + 1 if used > half else 1
        most = int(np.delete(visits, self.root).max()) if used > 1 else 0  # (the root always stays)
        while True:
            kept = keep_subtree(self._tree, self.root, self.transpose, least)
            self.root = 0
            if 2 * self.meta[1] <= self.act.shape[0] and 2 * self.meta[2] <= self.child.shape[0]:
                return True
            if kept == 1 or least > most:  # only the root, or proven nodes, left to drop
                return False
            least *= 2  # the pools are the tighter bound: drop more

    def search(
        self, state: State, sims: int | None = None, seconds: float | None = None, reuse: bool = False
    ) -> SearchResult:
        """Search from ``state`` for ``sims`` simulations or ``seconds`` of wall time (exactly one).

        With ``reuse``, a subtree already grown below ``state`` (the previous
        root's child) is kept and extended.
        """
        if (sims is None) == (seconds is None):
            raise ValueError("give exactly one of sims and seconds")
        if sims is not None:
            sims = check_option("UCTSearch", "sims", sims, _SIMS)
        if seconds is not None:
            seconds = check_option("UCTSearch", "seconds", seconds, _SECONDS)
        began = time.perf_counter()
        if not (reuse and self.advance(state)):
            self.reset(state)
        if sims is not None:
            self.run(sims)
        else:
            assert seconds is not None
            deadline = began + seconds
            chunk = 1  # a simulation can take tens of milliseconds: start small, at most double
            while not self.solved:
                t0 = time.perf_counter()
                if t0 >= deadline:
                    break
                self.run(chunk)
                spent = time.perf_counter() - t0
                # Chunks of about a hundredth of the budget, never reaching past the deadline.
                chunk = next_chunk(chunk, spent, min(seconds / 100, deadline - time.perf_counter()), self.batch)
        return self.result(time.perf_counter() - began)

    def result(self, seconds: float = math.nan) -> SearchResult:
        """The root statistics of the current tree."""
        if self._root_state is None:
            raise RuntimeError("call reset(state) before result()")
        game = self.game
        state = self._root_state
        root = self.root
        moves, visits, values, proven = [], [], [], []
        single = int((self.counts[root] > 1).sum()) <= 1
        for r, role in enumerate(game.roles):
            if self.expanded[root]:
                off = int(self.offsets[root, r])
                n = int(self.counts[root, r])
                acts = self.act[off : off + n]
                v = self.act_visits[off : off + n].astype(np.int64)
                total = self.act_value[off : off + n].astype(np.float64)
                moves.append(tuple(game.action_to_move(state, role, int(a)) for a in acts))
                pv = np.full(n, np.nan)
                if single and (n > 1 or int(self.counts[root].max()) <= 1):
                    # Others have one move each, so the child of this role's move i is child[coff + i].
                    kids = self.child[int(self.coff[root]) : int(self.coff[root]) + n].astype(np.int64)
                    made = kids >= 0
                    solved = np.zeros(n, dtype=bool)
                    solved[made] = self.proven[kids[made]]
                    pv[solved] = 100.0 * self.pval[kids[solved], r]
                proven.append(pv)
            else:
                legal = game.legal_moves(state, role)
                moves.append(tuple(legal))
                v = np.zeros(len(legal), dtype=np.int64)
                total = np.zeros(len(legal))
                proven.append(np.full(len(legal), np.nan))
            visits.append(v)
            values.append(np.where(v > 0, 100.0 * total / np.maximum(v, 1), 0.0))
        return SearchResult(
            roles=game.roles,
            moves=tuple(moves),
            visits=tuple(visits),
            values=tuple(values),
            simulations=self._sims,
            nodes=self.nodes,
            seconds=seconds,
            bytes=self.nbytes,
            proven=tuple(proven),
            solved=tuple(float(100.0 * g) for g in self.pval[root]) if self.proven[root] else None,
        )


def next_chunk(chunk: int, spent: float, room: float, batch: int = 1) -> int:
    """How many simulations to run next in ``room`` seconds, the last ``chunk`` having taken ``spent``: at the
    rate measured, at most doubling (rates vary), at least one.

    With batches (``batch`` above 1), whole batches: a part of one costs as much as a whole one (Amazons: a
    sweep per step whether it steps one game or 128), so a chunk is a number of batches at the rate measured
    per batch, at least one batch.
    """
    if batch <= 1:
        rate = chunk / max(spent, 1e-6)
        return max(1, min(int(rate * room), 2 * chunk, 1 << 20))
    calls = -(-chunk // batch)
    per_call = spent / calls
    return batch * max(1, min(int(room / max(per_call, 1e-6)), 2 * calls, (1 << 20) // batch))


def _table_size(capacity: int) -> int:
    # A power of two at least twice the nodes: linear probing stays short while at most half full.
    return 1 << max(4, (2 * capacity - 1).bit_length())


def _array(game: KernelGame, state: State) -> np.ndarray:
    return game._array_of(state)


def traces_rollouts(game: KernelGame, batch: int | None = None, leaf_value: Any = None, material: Any = None) -> bool:
    """Whether a :class:`UCTSearch` of ``game`` made with these arguments scores its leaves by batched random
    rollouts that can mark the moves they make (a rule sheet's): what RAVE reads. ``batch`` None: the
    kernel's own choice, as in UCTSearch."""
    kernel = game.kernel
    if batch is None:
        batch = kernel.rollout_batch() if leaf_value is None else 1
    return batch > 1 and leaf_value is None and material is None and "kernel_traced_rollouts" in kernel.namespace


def tree_bytes(game: Game, capacity: int, rave: bool = False, minimax: bool = False) -> int:
    """About the memory a tree of ``capacity`` nodes takes for ``game`` (its arrays, allocated up front; with
    ``rave``, its all-moves-as-first statistics too; with ``minimax``, its minimax values)."""
    if not isinstance(game, KernelGame):
        raise TypeError(f"compiled search needs a game with a kernel; {game.name} has none")
    kernel = game.kernel
    width = max(1, kernel.max_actions)
    pool = max(capacity * min(width, 32), 2 * kernel.num_roles * width)
    state = game.initial_array().nbytes
    pooled = 6 if rave else 4  # (arrays of 4 bytes an entry in the pools)
    per_node = state + (5 + (3 if minimax else 2) * kernel.num_roles) * 8 + 2
    return capacity * per_node + pool * 4 * pooled + _table_size(capacity) * 4


def search(
    game: Game,
    state: State,
    sims: int | None = None,
    seconds: float | None = None,
    c: float = 1.4,
    seed: int = 0,
    capacity: int | None = None,
) -> SearchResult:
    """Run decoupled UCT from ``state`` for ``sims`` simulations or ``seconds`` of time.

    ``c`` is the UCB1 exploration constant for goals scaled to 0..1. The tree
    holds ``capacity`` nodes (default: one per simulation when ``sims`` is
    given, up to 2,000,000, else 500,000). Values out of range raise ValueError
    (see :class:`UCTSearch`).
    """
    if capacity is None:
        if sims is None:
            capacity = 500_000
        else:
            sims = check_option("search", "sims", sims, _SIMS)
            capacity = min(max(sims + 1, MIN_CAPACITY), MAX_CAPACITY)
    return UCTSearch(game, capacity=capacity, c=c, seed=seed).search(state, sims=sims, seconds=seconds)


def visit_counts(result: SearchResult, role: str) -> Sequence[tuple[Move, int]]:
    """``role``'s root moves with their visit counts, most visited first."""
    r = result.roles.index(role)
    pairs = [(m, int(v)) for m, v in zip(result.moves[r], result.visits[r], strict=True)]
    return sorted(pairs, key=lambda p: -p[1])
