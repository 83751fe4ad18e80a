"""An exhaustive depth-first solver with a transposition table, over any game's kernel.

MCTS-Solver proves what its tree happens to sample; a game whose random
playouts mislead (Sheep and Wolf: the sheep win only by keeping a formation
for tens of moves, which random sheep never do) needs the whole game tree
read, and a small one can be read in seconds. :class:`DFSolver` walks the game
depth-first from a root, max^n where one role chooses (each node is worth its
best child for the role to move; a child giving the mover the top goal, 100,
cuts the rest), and stores every position it finishes in a table keyed by the
whole state, so a position reached by two orders is solved once. It is
resumable: :meth:`DFSolver.run` takes a budget of expansions, and the walk's
stack lives in arrays between calls. A new root (the next move) restarts the
walk but keeps the table.

A position is left unknown, never guessed, where the walk cannot prove it:
several roles choosing at once, a path that comes back to one of its own
positions, or one deeper than :data:`MAX_DEPTH`; a node with an unknown child
is unknown unless another child already gives the mover the top goal.

A solver given a ``role`` values every other role's choice as the one worst
for that role, and also walks positions where that role and one other choose
at once, as if the other chose after seeing its move: each of the role's moves
is worth the worst of the other's answers, so what is proven is what the role
is *sure of* whatever the others do (a proven 100 is a win by force; at a
position of moves at once a 0 only says the move can be beaten by an answer
that guesses it). In a game whose goals always add up to the same total this is
the max^n value.
Bidding tic-tac-toe is solved so in about two seconds: each side is sure of a
draw, and bids of 2 or 3 can be beaten (Sancho, which proves the same, won all
four matches where ggp bid by a simultaneous tree search alone).

>>> from pathlib import Path
>>> import ggp, ggp.gdl
>>> game = ggp.load(Path(ggp.gdl.__file__).parent / "tictactoe.kif")  # the sheet ggp ships
>>> solver = DFSolver(game)
>>> solver.reset(game.initial_state())
>>> while solver.status == SEARCHING:
...     done = solver.run(100_000)  # expansions made
>>> solver.value()  # tic-tac-toe is a draw
(50.0, 50.0)
>>> 0 < solver.positions <= 5478  # each reachable position solved at most once
True
"""

from __future__ import annotations

from typing import Annotated

import numba as nb
import numpy as np

from ..core.game import Game, Move, State
from ..core.native import KernelGame
from .options import Range, check_option
from .uct_tree import _find, _insert, _state_hash

#: Deepest path the walk follows; deeper positions are unknown.
MAX_DEPTH = 1024
#: Most memory the table may take (states, hashes, values).
MAX_TABLE_BYTES = 256 << 20
#: Most positions the table may hold.
MAX_ENTRIES = 4_000_000

#: :attr:`DFSolver.status`: the walk goes on.
SEARCHING = 0
#: The root is proven (:meth:`DFSolver.value`).
PROVEN = 1
#: The walk is over and the root could not be proven (simultaneous moves, cycles, depth).
UNKNOWN = 2
#: The table is full: the walk stops (what it proved stays readable).
FULL = 3

_BUDGET = Annotated[int, Range(ge=0, le=10**9)]


@nb.njit(cache=True)
def _store(
    table: np.ndarray,
    thash: np.ndarray,
    tstate: np.ndarray,
    tval: np.ndarray,
    tknown: np.ndarray,
    meta: np.ndarray,
    s: np.ndarray,
    h: np.uint64,
    val: np.ndarray,
    known: bool,
) -> None:
    # meta[1]: entries used; meta[5]: set once an entry did not fit.
    if meta[1] >= tstate.shape[0]:
        meta[5] = 1
        return
    e = meta[1]
    meta[1] += 1
    tstate[e] = s
    tknown[e] = known
    for r in range(val.shape[0]):
        tval[e, r] = val[r]
    _insert(table, thash, e, h)  # the search tree's hash table: linear probing, at most half full


@nb.njit(cache=True)
def _fold_child(
    level: int,
    known: bool,
    val: np.ndarray,
    top: float,
    snext: np.ndarray,
    smover: np.ndarray,
    sbest: np.ndarray,
    shas: np.ndarray,
    sunk: np.ndarray,
    scut: np.ndarray,
    rval: np.ndarray,
    rdone: np.ndarray,
    me: int,
    sinter: np.ndarray,
) -> None:
    # A child of ``level`` was valued (val, known): fold it into the node's best (a root's child also
    # into rval / rdone).
    nr = val.shape[0]
    if level == 0:
        i = snext[0] - 1
        rdone[i] = 1 if known else 2
        for r in range(nr):
            rval[i, r] = val[r]
    if not known:
        sunk[level] = True
    elif me >= 0 and smover[level] != me:  # another role's choice (an answer to ``me``'s too): the worst for ``me``
        if not shas[level] or val[me] < sbest[level, me]:
            shas[level] = True
            for r in range(nr):
                sbest[level, r] = val[r]
            if val[me] <= 0.0:
                scut[level] = True
    else:
        m = smover[level]
        if not shas[level] or val[m] > sbest[level, m]:
            shas[level] = True
            for r in range(nr):
                sbest[level, r] = val[r]
            if val[m] >= top:
                scut[level] = True


@nb.njit(cache=True)
def _on_path(sstate: np.ndarray, shash: np.ndarray, c: int, h: np.uint64) -> bool:
    # Whether the position at level ``c`` (hash ``h``) repeats one of its ancestors on the stack.
    for d in range(c):
        if shash[d] == h:
            same = True
            for k in range(sstate.shape[1]):
                if sstate[d, k] != sstate[c, k]:
                    same = False
                    break
            if same:
                return True
    return False


@nb.njit(cache=True)
def _scaled_goals(res: np.ndarray, val: np.ndarray) -> None:
    # The kernel's goals (0..100) as values (0..1).
    for r in range(val.shape[0]):
        val[r] = res[r] / 100.0


@nb.njit(cache=True)
def _push(
    c: int,
    mover: int,
    h: np.uint64,
    smover: np.ndarray,
    shash: np.ndarray,
    snext: np.ndarray,
    shas: np.ndarray,
    sunk: np.ndarray,
    scut: np.ndarray,
) -> None:
    # Level ``c`` starts on a freshly expanded node: no child tried, no value yet.
    smover[c] = mover
    shash[c] = h
    snext[c] = 0
    shas[c] = False
    sunk[c] = False
    scut[c] = False


@nb.njit(cache=True)
def _finished_value(
    level: int, sbest: np.ndarray, shas: np.ndarray, sunk: np.ndarray, scut: np.ndarray, val: np.ndarray
) -> bool:
    # The finished node at ``level``'s value into ``val``, and whether it is proven: it is if a child gave
    # the mover the top goal, or if every child is proven.
    for r in range(val.shape[0]):
        val[r] = sbest[level, r] if shas[level] else 0.0
    return shas[level] and (scut[level] or not sunk[level])


def _expand_template(ctx, s, c, buf, sjoint, scount, smoves, me, sopp, soppn, soppr):  # type: ignore[no-untyped-def]
    # Expand the child at level ``c`` (state ``s``): each role's single move into sjoint[c], the moves of
    # the role with a choice into smoves[c, :scount[c]] (where ``me`` chooses, its moves; another role
    # choosing beside it: that role's into sopp[c, :soppn[c]], the role in soppr[c]). Returns (that role,
    # how many roles have a choice), or (-1, -1) if a role has no move at all.
    mover = -1
    movers = 0
    mine = False
    for r in range(num_roles):  # type: ignore[name-defined]  # noqa: F821
        k = kernel_legal(ctx, s, r, buf)  # type: ignore[name-defined]  # noqa: F821
        if k == 0:
            return -1, -1
        sjoint[c, r] = buf[0]
        if k > 1:
            movers += 1
            if r != me:
                soppn[c] = k
                soppr[c] = r
                sopp[c, :k] = buf[:k]
            if r == me or not mine:
                mine = r == me
                mover = r
                scount[c] = k
                smoves[c, :k] = buf[:k]
    return mover, movers


def _dfs_template(  # type: ignore[no-untyped-def]
    ctx,
    budget,
    top,
    sstate,
    shash,
    smoves,
    scount,
    snext,
    smover,
    sjoint,
    sbest,
    shas,
    sunk,
    scut,
    table,
    thash,
    tstate,
    tval,
    tknown,
    meta,
    rval,
    rdone,
    buf,
    val,
    res,
    joint,
    me,
    sopp,
    soppn,
    soppr,
    spara,
    sinter,
):
    # meta: [level, entries, status, expansions ever, root moves, table full, plies limit (0: none)]. With a
    # limit, a position that many plies below the root is unknown unless it ends the game or is in the table,
    # and an unknown position is not stored (a deeper walk later reads it again). Level L of the stack holds a
    # position being expanded: its state and hash, the mover's moves (smoves[L, :scount[L]]), the next to
    # try, the other roles' single moves (sjoint), the best child value so far (sbest, when shas), whether
    # a child was unknown (sunk) and whether a child gave the mover the top goal (scut). A finished node
    # hands its value (val, known) to its parent; the root's children's values go to rval / rdone.
    depth = sstate.shape[0]
    if 0 < meta[6] < depth - 1:
        depth = meta[6] + 1
    done = 0
    level = meta[0]
    known = False
    deliver = False
    while True:
        if deliver:
            # A child of ``level`` was valued (val, known): fold it into the node's best.
            deliver = False
            _fold_child(level, known, val, top, snext, smover, sbest, shas, sunk, scut, rval, rdone, me, sinter)
        # The next child of the node at ``level``, if any.
        if not scut[level] and snext[level] < scount[level]:
            if done >= budget:
                break
            i = snext[level]
            snext[level] = i + 1
            if level == 0 and rdone[i] != 0:  # valued from the table before the walk began
                continue
            if spara[level]:
                # ``me``'s move i where another role chooses at once: the next level is that role's answer
                # knowing it (the same position, not stored), the worst of which ``me`` is sure to get.
                c = level + 1
                done += 1
                meta[3] += 1
                if c >= depth - 1:
                    known = False
                    deliver = True
                    continue
                sstate[c] = sstate[level]
                sjoint[c] = sjoint[level]
                sjoint[c, me] = smoves[level, i]
                n = soppn[level]
                scount[c] = n
                smoves[c, :n] = sopp[level, :n]
                _push(c, soppr[level], shash[level], smover, shash, snext, shas, sunk, scut)
                spara[c] = False
                sinter[c] = True
                level = c
                continue
            joint[:] = sjoint[level]
            joint[smover[level]] = smoves[level, i]
            c = level + 1
            sstate[c] = sstate[level]
            kernel_apply(ctx, sstate[c], joint)  # type: ignore[name-defined]  # noqa: F821
            done += 1
            meta[3] += 1
            # Value the child at once where it can be: the end, the table, a repetition, the depth.
            if kernel_terminal(ctx, sstate[c]):  # type: ignore[name-defined]  # noqa: F821
                kernel_goals(ctx, sstate[c], res)  # type: ignore[name-defined]  # noqa: F821
                _scaled_goals(res, val)
                known = True
                deliver = True
                continue
            h = _state_hash(sstate[c])
            e = _find(table, thash, tstate, sstate[c], h)
            if e >= 0:
                known = tknown[e]
                val[:] = tval[e]
                deliver = True
                continue
            if _on_path(sstate, shash, c, h) or c >= depth - 1:
                known = False
                deliver = True
                continue
            # Expand the child: who moves, and with what.
            mover, movers = expand(ctx, sstate[c], c, buf, sjoint, scount, smoves, me, sopp, soppn, soppr)  # type: ignore[name-defined]  # noqa: F821
            if movers < 0:  # a role without a move: the game cannot go on, so it scores as it stands
                kernel_goals(ctx, sstate[c], res)  # type: ignore[name-defined]  # noqa: F821
                _scaled_goals(res, val)
                _store(table, thash, tstate, tval, tknown, meta, sstate[c], h, val, True)
                known = True
                deliver = True
                continue
            paranoid = movers == 2 and me >= 0 and mover == me
            if movers > 1 and not paranoid:  # simultaneous choices: not solved here
                val[:] = 0.0
                _store(table, thash, tstate, tval, tknown, meta, sstate[c], h, val, False)
                known = False
                deliver = True
                continue
            if movers == 0:  # every role has one move: the node is worth its one child
                mover = 0
                scount[c] = 1
                smoves[c, 0] = sjoint[c, 0]
            _push(c, mover, h, smover, shash, snext, shas, sunk, scut)
            spara[c] = paranoid
            sinter[c] = False
            level = c
            continue
        # The node at ``level`` is finished.
        known = _finished_value(level, sbest, shas, sunk, scut, val)
        if (level > 0 or known) and not sinter[level] and (known or meta[6] == 0):
            _store(table, thash, tstate, tval, tknown, meta, sstate[level], shash[level], val, known)
        if level == 0:
            meta[2] = 1 if known else 2
            level = -1
            break
        if meta[5] != 0:  # the table is full: stop here rather than walk on without storing
            meta[2] = 3
            break
        level -= 1
        deliver = True
    meta[0] = level
    return done


class DFSolver:
    """A resumable depth-first solver with a transposition table (see the module docstring).

    ``max_bytes`` bounds the table's memory (at most :data:`MAX_TABLE_BYTES`),
    so it holds up to ``entries`` positions. ``role``: the role whose sure
    outcome is proven where it and another role choose at once (see the module
    docstring; None: such positions are unknown). :meth:`reset` sets the root,
    :meth:`run` walks on for a budget of expansions, :attr:`status` says
    whether the root is proven, and :meth:`move_values` gives the root's moves
    proven so far.
    """

    def __init__(self, game: Game, max_bytes: int = MAX_TABLE_BYTES, role: str | None = None) -> None:
        if not isinstance(game, KernelGame):
            raise TypeError(f"the solver needs a game with a kernel; {game.name} has none")
        if role is not None and role not in game.roles:
            raise ValueError(f"DFSolver: {role!r} is not a role of {game.name} (its roles: {', '.join(game.roles)})")
        max_bytes = check_option(
            "DFSolver", "max_bytes", max_bytes, Annotated[int, Range(ge=1 << 16, le=MAX_TABLE_BYTES)]
        )
        self.game = game
        kernel = game.kernel
        nr = kernel.num_roles
        width = max(1, kernel.max_actions)
        initial = game.initial_array()
        length = initial.shape[0]
        per_entry = initial.nbytes + 8 + 8 * nr + 1 + 8  # state, hash, values, flag, its share of the table
        entries = max(16, min(MAX_ENTRIES, max_bytes // per_entry))
        self.ctx = kernel.context()
        self.table = np.full(1 << max(5, (2 * entries - 1).bit_length()), -1, dtype=np.int32)
        self.thash = np.zeros(entries, dtype=np.uint64)
        self.tstate = np.zeros((entries, length), dtype=kernel.dtype)
        self.tval = np.zeros((entries, nr), dtype=np.float64)
        self.tknown = np.zeros(entries, dtype=np.bool_)
        self.sstate = np.zeros((MAX_DEPTH, length), dtype=kernel.dtype)
        self.shash = np.zeros(MAX_DEPTH, dtype=np.uint64)
        self.smoves = np.zeros((MAX_DEPTH, width), dtype=np.int64)
        self.scount = np.zeros(MAX_DEPTH, dtype=np.int64)
        self.snext = np.zeros(MAX_DEPTH, dtype=np.int64)
        self.smover = np.zeros(MAX_DEPTH, dtype=np.int64)
        self.sjoint = np.zeros((MAX_DEPTH, nr), dtype=np.int64)
        self.sbest = np.zeros((MAX_DEPTH, nr), dtype=np.float64)
        self.shas = np.zeros(MAX_DEPTH, dtype=np.bool_)
        self.sunk = np.zeros(MAX_DEPTH, dtype=np.bool_)
        self.scut = np.zeros(MAX_DEPTH, dtype=np.bool_)
        self.meta = np.zeros(7, dtype=np.int64)
        self.meta[0] = -1
        self.meta[2] = UNKNOWN
        self.rval = np.zeros((width, nr), dtype=np.float64)
        #: Per root move: 0 not valued yet, 1 proven (rval), 2 unknown.
        self.rdone = np.zeros(width, dtype=np.int64)
        self.buf = np.zeros(width, dtype=np.int64)
        self.val = np.zeros(nr, dtype=np.float64)
        self.res = np.zeros(nr, dtype=np.int64)
        self.joint = np.zeros(nr, dtype=np.int64)
        #: The role whose guaranteed outcome the walk proves where two roles choose at once (-1: none).
        self.me = -1 if role is None else game.roles.index(role)
        # Per level, where ``me`` and another role choose at once: the other's moves and index; whether the
        # level is ``me``'s choice there (spara), or the other's answer to it (sinter).
        self.sopp = np.zeros((MAX_DEPTH, width), dtype=np.int64)
        self.soppn = np.zeros(MAX_DEPTH, dtype=np.int64)
        self.soppr = np.zeros(MAX_DEPTH, dtype=np.int64)
        self.spara = np.zeros(MAX_DEPTH, dtype=np.bool_)
        self.sinter = np.zeros(MAX_DEPTH, dtype=np.bool_)
        self._run = kernel.specialise(_dfs_template, expand=kernel.specialise(_expand_template))
        self._root_state: State | None = None
        #: The role choosing at the root: the one with a choice, or where two choose at once the solver's
        #: ``role`` (None: nobody has a choice, or several have and the walk cannot prove it).
        self.mover: int | None = None
        #: Whether several roles choose at the root (a position the walk proves only for its ``role``).
        self.simultaneous = False

    @property
    def capacity(self) -> int:
        """Most positions the table holds."""
        return int(self.tstate.shape[0])

    @property
    def limit(self) -> int:
        """How many plies below the root the walk reads (0: as deep as :data:`MAX_DEPTH`)."""
        return int(self.meta[6])

    def deepen(self, limit: int, state: State | None = None) -> None:
        """Walk again from the root (or from ``state``, the new root), ``limit`` plies deep (1 to MAX_DEPTH - 1;
        0: no limit).

        Below the limit a position is unknown unless the game ends there or the table proved it; a
        position left unknown so is not stored, so that a deeper walk reads it again, while every proven
        one is kept. Deepening one ply at a time finds the shortest forced wins and losses first, where a
        walk without a limit reads the first move's whole subtree before the second move's.
        """
        limit = check_option("DFSolver", "limit", limit, Annotated[int, Range(ge=0, le=MAX_DEPTH - 1)])
        root = state if state is not None else self._root_state
        if root is None:
            raise RuntimeError("call reset(state) before deepen(), or give deepen the state")
        self.meta[6] = limit
        self.reset(root)

    @property
    def positions(self) -> int:
        """Positions in the table (proven or left unknown)."""
        return int(self.meta[1])

    @property
    def status(self) -> int:
        """:data:`SEARCHING`, :data:`PROVEN`, :data:`UNKNOWN` or :data:`FULL`."""
        return int(self.meta[2])

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.table, self.thash, self.tstate, self.tval, self.tknown, self.sstate))

    def reset(self, state: State) -> None:
        """Make ``state`` the root of a new walk; the table (every position proven so far) is kept.

        The root's moves already valued in the table are read at once.
        """
        game = self.game
        self._root_state = state
        self.rdone[:] = 0
        self.meta[0] = -1
        self.mover = None
        self.simultaneous = False
        if game.is_terminal(state):
            self.meta[2] = UNKNOWN
            return
        s = game._array_of(state)
        movers = [r for r, role in enumerate(game.roles) if len(game.legal_actions(state, role)) > 1]
        self.simultaneous = len(movers) > 1
        paranoid = len(movers) == 2 and self.me in movers
        if not (len(movers) == 1 or paranoid) or self.meta[5]:
            self.meta[2] = FULL if self.meta[5] else UNKNOWN  # forced, or simultaneous beyond the walk
            return
        if paranoid:
            self._reset_paranoid(state, s, movers)
            return
        self.spara[0] = self.sinter[0] = False
        mover = self.mover = movers[0]
        acts = np.asarray(game.legal_actions(state, game.roles[mover]), dtype=np.int64)
        self.sstate[0] = s
        self.shash[0] = _state_hash(self.sstate[0])
        self.scount[0] = len(acts)
        self.smoves[0, : len(acts)] = acts
        self.smover[0] = mover
        for r, role in enumerate(game.roles):
            self.sjoint[0, r] = int(game.legal_actions(state, role)[0])
        self.snext[0] = 0
        self.shas[0] = self.sunk[0] = self.scut[0] = False
        self.meta[0] = 0
        self.meta[2] = SEARCHING
        # The root's children already in the table (a walk of an earlier move proved them): valued now,
        # so that a won position is played at once and a proven child is not walked again.
        for i, a in enumerate(acts):
            joint = [int(self.sjoint[0, r]) for r in range(len(game.roles))]
            joint[mover] = int(a)
            child = game.apply_actions(state, joint)
            if game.is_terminal(child):
                self.rdone[i] = 1
                self.rval[i] = np.asarray(game.goals(child), dtype=np.float64) / 100.0
            else:
                arr = game._array_of(child)
                e = int(_find(self.table, self.thash, self.tstate, arr, np.uint64(_state_hash(arr))))
                if e < 0:
                    continue
                self.rdone[i] = 1 if self.tknown[e] else 2
                self.rval[i] = self.tval[e]
            if self.rdone[i] == 1:
                if not self.shas[0] or self.rval[i, mover] > self.sbest[0, mover]:
                    self.shas[0] = True
                    self.sbest[0] = self.rval[i]
                if self.rval[i, mover] >= 1.0:
                    self.scut[0] = True
            else:
                self.sunk[0] = True
        if self.scut[0] or bool((self.rdone[: len(acts)] != 0).all()):  # nothing left to walk
            proven = bool(self.shas[0] and (self.scut[0] or not self.sunk[0]))
            self.meta[0] = -1
            self.meta[2] = PROVEN if proven else UNKNOWN

    def _reset_paranoid(self, state: State, s: np.ndarray, movers: list[int]) -> None:
        # ``me`` and another role choose at once at the root: the root is ``me``'s choice, each move worth
        # the worst the other's answers leave it (the walk values them, none is read from the table here).
        game, me = self.game, self.me
        other = movers[0] if movers[1] == me else movers[1]
        mine = np.asarray(game.legal_actions(state, game.roles[me]), dtype=np.int64)
        theirs = np.asarray(game.legal_actions(state, game.roles[other]), dtype=np.int64)
        self.mover = me
        self.sstate[0] = s
        self.shash[0] = _state_hash(self.sstate[0])
        self.scount[0] = len(mine)
        self.smoves[0, : len(mine)] = mine
        self.soppn[0] = len(theirs)
        self.sopp[0, : len(theirs)] = theirs
        self.soppr[0] = other
        self.smover[0] = me
        for r, role in enumerate(game.roles):
            self.sjoint[0, r] = int(game.legal_actions(state, role)[0])
        self.snext[0] = 0
        self.shas[0] = self.sunk[0] = self.scut[0] = False
        self.spara[0], self.sinter[0] = True, False
        self.meta[0] = 0
        self.meta[2] = SEARCHING

    def run(self, budget: int) -> int:
        """Walk on for at most ``budget`` (0 to 10^9) expansions; returns those done."""
        budget = check_option("DFSolver", "budget", budget, _BUDGET)
        if self._root_state is None:
            raise RuntimeError("call reset(state) before run()")
        if self.status != SEARCHING or budget == 0:
            return 0
        return int(
            self._run(
                self.ctx,
                budget,
                1.0,
                self.sstate,
                self.shash,
                self.smoves,
                self.scount,
                self.snext,
                self.smover,
                self.sjoint,
                self.sbest,
                self.shas,
                self.sunk,
                self.scut,
                self.table,
                self.thash,
                self.tstate,
                self.tval,
                self.tknown,
                self.meta,
                self.rval,
                self.rdone,
                self.buf,
                self.val,
                self.res,
                self.joint,
                self.me,
                self.sopp,
                self.soppn,
                self.soppr,
                self.spara,
                self.sinter,
            )
        )

    def value(self) -> tuple[float, ...] | None:
        """The root's proven goals (0..100 per role), or None while it is not proven. Where the root's role and
        another choose at once, the role's entry is what it is sure of, and the others' are those of the answer
        that leaves it least."""
        if self.status != PROVEN:
            return None
        return tuple(float(100.0 * v) for v in self.sbest[0])

    def proven(self, state: State) -> tuple[float, ...] | None:
        """``state``'s proven goals (0..100 per role): its own where it is terminal, else what the walk stored
        for it; None where the walk has not proven it (or never reached it)."""
        game = self.game
        if game.is_terminal(state):
            return tuple(float(g) for g in game.goals(state))
        arr = game._array_of(state)
        e = int(_find(self.table, self.thash, self.tstate, arr, np.uint64(_state_hash(arr))))
        if e < 0 or not self.tknown[e]:
            return None
        return tuple(float(100.0 * v) for v in self.tval[e])

    def move_values(self) -> dict[Move, float]:
        """The root mover's moves proven so far, each with its proven goal for the mover (0..100)."""
        if self._root_state is None or self.mover is None:
            return {}
        game, state, role = self.game, self._root_state, self.game.roles[self.mover]
        out = {}
        for i in range(int(self.scount[0])):
            if self.rdone[i] == 1:
                out[game.action_to_move(state, role, int(self.smoves[0, i]))] = float(100.0 * self.rval[i, self.mover])
        return out

    @property
    def root_state(self) -> State | None:
        return self._root_state
