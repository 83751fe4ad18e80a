"""The compiled UCT tree: its arrays as named structures, and its node-level operations (UCB1 choice, the
state hash table, MCTS-Solver proving).

The arrays are preallocated by :class:`ggp.agents.uct.UCTSearch` (as attributes of the same names) and
handed to the compiled simulation loop (:mod:`ggp.agents.uct_loop`) as three named tuples, :class:`Tree`,
:class:`Scratch` and :class:`Waiting`, with the search's :class:`Options`; numba reads a named tuple's
fields by name at no cost. The helpers below serve the loop and the depth-first solver
(:mod:`ggp.agents.solver`), which shares the hash table.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..core.kernels import rng_below


class Tree(NamedTuple):
    """The search graph: nodes (states and statistics) and the pools of their move lists and child links.

    Node ``n``'s moves for role ``r`` are ``act[offsets[n, r] : offsets[n, r] + counts[n, r]]``, each with its
    visits and summed value (``act_visits``, ``act_value``); its children, numbered in mixed radix over the
    roles' moves (the last role fastest), start at ``child[coff[n]]`` (-1: not yet made). ``meta`` counts the
    nodes, action-pool and child-pool entries in use, and the simulations ever run.
    """

    states: np.ndarray
    node_visits: np.ndarray
    node_terminal: np.ndarray
    #: Solved nodes and their exact values (each role's goal / 100).
    proven: np.ndarray
    pval: np.ndarray
    expanded: np.ndarray
    counts: np.ndarray
    offsets: np.ndarray
    coff: np.ndarray
    act: np.ndarray
    act_visits: np.ndarray
    act_value: np.ndarray
    child: np.ndarray
    #: Transpositions: each node's state hash, and an open-addressing table from hashes to nodes.
    nhash: np.ndarray
    table: np.ndarray
    #: The last simulation whose path passed through each node (a path that comes back ends).
    stamp: np.ndarray
    meta: np.ndarray
    #: Per node, role 0's share of the change in the balance of pieces its move made (0.5: none; see
    #: ``displace`` of Options).
    hval: np.ndarray
    #: All-moves-as-first statistics (``rave`` of Options), beside ``act_visits`` and ``act_value``: how many
    #: scored simulations through the node played the move later on (by the same role, in the tree or the
    #: rollout), and the sum of their values.
    amaf_visits: np.ndarray
    amaf_value: np.ndarray
    #: Implicit minimax (``minimax`` of Options): per node and role, the heuristic evaluation of its state
    #: backed up by minimax over the children made so far (a terminal node: its goals). One row when off.
    mm: np.ndarray


class Scratch(NamedTuple):
    """One simulation's working arrays: its path (node, then each role's move index, per step), a move
    buffer, a state, the values backed up, a joint move and goals."""

    path: np.ndarray
    buf: np.ndarray
    work: np.ndarray
    val: np.ndarray
    joint: np.ndarray
    res: np.ndarray
    #: Progressive bias: each role's weight of each byte of the state in its piece count (one row of one 0
    #: each when off), and the node being expanded's counts and a child's.
    pieces: np.ndarray
    tally: np.ndarray
    #: What a quiet move is assumed worth to each role: the root's mean value, once it is credible.
    base: np.ndarray
    #: Implicit minimax: the evaluation of states, a material heuristic as
    #: :meth:`ggp.agents.heuristic.Material.params` packs it (one 0 when off).
    heur: np.ndarray


class Waiting(NamedTuple):
    """Leaves waiting to be scored together: their states, and their paths one after another (leaf ``b``'s
    are the rows ``start[b]`` to ``start[b] + depth[b]`` of ``path``); ``val`` receives their values."""

    states: np.ndarray
    path: np.ndarray
    start: np.ndarray
    depth: np.ndarray
    val: np.ndarray
    #: Per leaf, role and move (a move's index in the kernel's actions): whether its rollout made it, and, as
    #: the RAVE scorer climbs the leaf's path, whether the path made it below (``rave`` only; one entry when off).
    played: np.ndarray


class Options(NamedTuple):
    """How the loop searches: UCB1's exploration constant; MCTS-Solver's proofs; transpositions; decisive
    moves (a win at once looked for once a node has ``decisive_at`` visits); progressive bias (the virtual
    visits given on expansion to a move that changes the piece counts, 0: off)."""

    c: float
    solve: bool
    transpose: bool
    decisive: bool
    bias: float
    displace: bool
    #: The visits a node has when its moves are tried for a win at once (1: as it is expanded; the root is tried
    #: from its first pass, one kept from the last search's tree too).
    decisive_at: int = 1
    #: RAVE: a move's value in the selection mixes in its all-moves-as-first value (``Tree.amaf_*``), weighted
    #: as Sancho does, ``R / (R + n + rave * n * R + 1)`` for ``R`` all-moves-as-first samples and ``n``
    #: visits; 0: off.
    rave: float = 0.0
    #: Implicit minimax backups (Lanctot, Winands, Pepels and Sturtevant, 2014): where one role chooses, a
    #: move's value in the selection is its mean mixed with its node's minimax value (``Tree.mm``) at this
    #: weight; 0: off.
    minimax: float = 0.0


@nb.njit(cache=True)
def _ucb_pick(
    visits: np.ndarray,
    values: np.ndarray,
    off: int,
    n: int,
    log_parent: float,
    c: float,
    rng: np.ndarray,
    child: np.ndarray,
    first: int,
    proven: np.ndarray,
    pval: np.ndarray,
    solved: int,
    amaf_visits: np.ndarray,
    amaf_value: np.ndarray,
    rave: float,
    mm: np.ndarray,
    chooser: int,
    minimax: float,
) -> int:
    # Unvisited moves first, chosen at random; then the best UCB1 score. ``solved`` (a role, -1: none): the
    # one role with a choice, for which a move whose node (``child[first + i]``) is proven counts at its
    # proven value, not the mean of the samples taken before the proof (as MctsRefGamer's complete nodes
    # do): a move found lost counts as lost at once (only exploration still visits it), instead of as its
    # mean slowly sinks. ``chooser`` (a role, -1: none): the one role with a choice; with ``minimax`` (> 0),
    # its move's mean is mixed with that weight with the move's node's minimax value for it (``mm``), so a
    # move the evaluation backed up by minimax finds good or bad is told apart before its samples can.
    # With ``rave`` (> 0): :func:`_rave_pick`.
    if rave > 0:
        return _rave_pick(visits, values, off, n, log_parent, c, rng, child, first, proven, pval, solved, amaf_visits, amaf_value, rave)  # fmt: skip
    unvisited = 0
    pick = -1
    for i in range(n):
        if visits[off + i] == 0:
            unvisited += 1
            if rng_below(rng, unvisited) == 0:
                pick = i
    if pick >= 0:
        return pick
    # Start from move 0, not -1: a NaN score (a leaf value's NaN, a counter gone
    # wrong) must still give an index inside the node's moves.
    pick = 0
    best = -np.inf
    for i in range(n):
        v = visits[off + i]
        mean = values[off + i] / v
        if minimax > 0 and chooser >= 0:
            ch = child[first + i]
            if ch >= 0:
                mean = (1.0 - minimax) * mean + minimax * mm[ch, chooser]
        if solved >= 0:
            ch = child[first + i]
            if ch >= 0 and proven[ch]:
                mean = pval[ch, solved]
        score = mean + c * np.sqrt(log_parent / v)
        if score > best:
            best = score
            pick = i
    return pick


#: How much less a move's all-moves-as-first value is explored than its own (Sancho's
#: RAVE_EXPLORATION_REDUCTION_FACTOR).
_RAVE_EXPLORE = 7.0


# (_ucb_pick's arguments, untyped here: numba types them)
@nb.njit(cache=True)
def _rave_pick(visits, values, off, n, log_parent, c, rng, child, first, proven, pval, solved, amaf_visits, amaf_value, rave):  # type: ignore[no-untyped-def]  # fmt: skip
    # Sancho's selection with RAVE (TreeNode.getSelectionValue): each move's UCB1 score, mixed with its
    # all-moves-as-first mean plus a seventh of the exploration, weight R / (R + n + rave * n * R + 1). An
    # unvisited move's UCB1 score is the node's mean so far plus the exploration of one visit, and its
    # all-moves-as-first one a bonus of 0.5: so moves whose role did well making them later, in the tree or
    # the rollouts, are tried first, and one that did badly may wait. A move whose node is proven (``solved``,
    # as in _ucb_pick) counts at its proven value, unmixed. Exact ties are broken at random.
    total, seen = 0.0, 0
    for i in range(n):
        if visits[off + i] > 0:
            total += values[off + i]
            seen += visits[off + i]
    fpu = total / seen if seen > 0 else 0.5
    pick = 0
    best = -np.inf
    ties = 0
    for i in range(n):
        v = visits[off + i]
        if v > 0:
            explore = c * np.sqrt(log_parent / v)
            score = values[off + i] / v + explore
            bonus = explore / _RAVE_EXPLORE
        else:
            score = fpu + c * np.sqrt(max(log_parent, 1.0))
            bonus = 0.5
        ch = child[first + i] if solved >= 0 else -1
        if ch >= 0 and proven[ch]:
            score = pval[ch, solved] + (c * np.sqrt(log_parent / v) if v > 0 else 0.0)
        else:
            na = amaf_visits[off + i]
            if na > 0:
                beta = na / (na + v + rave * v * na + 1.0)
                score = (1.0 - beta) * score + beta * (amaf_value[off + i] / na + bonus)
        if score > best:
            best, pick, ties = score, i, 1
        elif score == best:
            ties += 1
            if rng_below(rng, ties) == 0:
                pick = i
    return pick


_FNV = np.uint64(0xCBF29CE484222325)
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_S33 = np.uint64(33)


@nb.njit(cache=True)
def _state_hash(s: np.ndarray) -> np.uint64:
    # Each element is mixed in (murmur's finaliser), so the table's low bits depend on every element:
    # a propnet's state differs from its neighbour's in one element, anywhere.
    h = _FNV
    for i in range(s.shape[0]):
        h ^= np.uint64(s[i])
        h *= _MIX
        h ^= h >> _S33
    return h


@nb.njit(cache=True)
def _find(table: np.ndarray, nhash: np.ndarray, states: np.ndarray, s: np.ndarray, h: np.uint64) -> int:
    # The node holding state ``s`` (hash ``h``), or -1. Linear probing over a power-of-two table that is
    # never more than half full; a hash match is confirmed on the whole state.
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    for _ in range(table.shape[0]):
        n = table[i]
        if n < 0:
            return -1
        if nhash[n] == h:
            same = True
            for k in range(s.shape[0]):
                if states[n, k] != s[k]:
                    same = False
                    break
            if same:
                return n
        i = (i + 1) & mask
    return -1


@nb.njit(cache=True)
def _insert(table: np.ndarray, nhash: np.ndarray, node: int, h: np.uint64) -> None:
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    for _ in range(table.shape[0]):
        if table[i] < 0:
            table[i] = node
            nhash[node] = h
            return
        i = (i + 1) & mask


@nb.njit(cache=True)
def _set_proven(proven: np.ndarray, pval: np.ndarray, node: int, src: int) -> None:
    proven[node] = True
    for r in range(pval.shape[1]):
        pval[node, r] = pval[src, r]


@nb.njit(cache=True)
def _try_prove(
    node: int, counts: np.ndarray, coff: np.ndarray, child: np.ndarray, proven: np.ndarray, pval: np.ndarray
) -> bool:
    # MCTS-Solver's rule for an expanded node whose child was just proven. Where at most one role has a
    # choice, the node is worth its best child for that role (max^n): proven at once by a child that
    # gives the mover the top goal, else when every child is proven. Where several roles choose at once,
    # only a node all of whose children are proven to the same goals is proven (sound without solving
    # the matrix game).
    nr = counts.shape[1]
    product = 1
    mover = 0
    movers = 0
    for r in range(nr):
        product *= counts[node, r]
        if counts[node, r] > 1:
            movers += 1
            mover = r
    start = coff[node]
    best = -1
    complete = True
    for j in range(start, start + product):
        ch = child[j]
        if ch < 0 or not proven[ch]:
            complete = False
            if movers > 1:
                return False
            continue
        if movers > 1:
            if best < 0:
                best = ch
            else:
                for r in range(nr):
                    if pval[ch, r] != pval[best, r]:
                        return False
            continue
        if pval[ch, mover] >= 1.0:
            _set_proven(proven, pval, node, ch)
            return True
        if best < 0 or pval[ch, mover] > pval[best, mover]:
            best = ch
    if complete and best >= 0:
        _set_proven(proven, pval, node, best)
        return True
    return False


# --- keeping a subtree: its nodes moved to the front of the arrays, the rest freed -------------------
@nb.njit(cache=True)
def _reachable(
    root: int,
    used: int,
    expanded: np.ndarray,
    counts: np.ndarray,
    coff: np.ndarray,
    child: np.ndarray,
    node_visits: np.ndarray,
    proven: np.ndarray,
    min_visits: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes reachable from ``root`` in breadth-first order (``root`` first), and each node's place in
    that order (-1: not reachable). A child visited fewer than ``min_visits`` times, and not proven, is left
    out with all below it."""
    place = np.full(used, -1, dtype=np.int64)
    order = np.empty(used, dtype=np.int64)
    order[0] = root
    place[root] = 0
    found, i = 1, 0
    while i < found:
        n = order[i]
        i += 1
        if not expanded[n]:
            continue
        m = 1
        for r in range(counts.shape[1]):
            m *= counts[n, r]
        for j in range(coff[n], coff[n] + m):
            c = child[j]
            if c >= 0 and place[c] < 0 and (node_visits[c] >= min_visits or proven[c]):
                place[c] = found
                order[found] = c
                found += 1
    return order[:found], place


@nb.njit(cache=True)
def _repack_pools(
    order: np.ndarray,
    place: np.ndarray,
    t: Tree,
) -> None:
    """Rewrite the action and child pools for the nodes of ``order`` (kept in that order, renumbered by
    ``place``), their segments one after another from the start; ``meta[1:3]`` become the pools' new use."""
    nr = t.counts.shape[1]
    k = order.shape[0]
    na, nc = 0, 0
    for i in range(k):
        n = order[i]
        if t.expanded[n]:
            m = 1
            for r in range(nr):
                na += t.counts[n, r]
                m *= t.counts[n, r]
            nc += m
    act = np.empty(na, dtype=t.act.dtype)
    visits = np.empty(na, dtype=t.act_visits.dtype)
    value = np.empty(na, dtype=t.act_value.dtype)
    rave = t.amaf_visits.shape[0] > 1
    amaf_visits = np.empty(na if rave else 0, dtype=t.amaf_visits.dtype)
    amaf_value = np.empty(na if rave else 0, dtype=t.amaf_value.dtype)
    child = np.empty(nc, dtype=t.child.dtype)
    offsets = np.zeros((k, nr), dtype=t.offsets.dtype)
    coff = np.zeros(k, dtype=t.coff.dtype)
    a, cc = 0, 0
    for i in range(k):
        n = order[i]
        if not t.expanded[n]:
            continue
        m = 1
        for r in range(nr):
            o, cnt = t.offsets[n, r], t.counts[n, r]
            offsets[i, r] = a
            for j in range(cnt):
                act[a + j] = t.act[o + j]
                visits[a + j] = t.act_visits[o + j]
                value[a + j] = t.act_value[o + j]
                if rave:
                    amaf_visits[a + j] = t.amaf_visits[o + j]
                    amaf_value[a + j] = t.amaf_value[o + j]
            a += cnt
            m *= cnt
        coff[i] = cc
        for j in range(m):
            c = t.child[t.coff[n] + j]
            child[cc + j] = place[c] if c >= 0 else -1
        cc += m
    t.act[:na] = act
    t.act_visits[:na] = visits
    t.act_value[:na] = value
    if rave:
        t.amaf_visits[:na] = amaf_visits
        t.amaf_value[:na] = amaf_value
    t.child[:nc] = child
    t.offsets[:k] = offsets
    t.coff[:k] = coff
    t.meta[1] = na
    t.meta[2] = nc


@nb.njit(cache=True)
def _rehash(t: Tree, used: int) -> None:
    """Refill the transposition table with the first ``used`` nodes' hashes."""
    t.table[:] = -1
    for n in range(used):
        _insert(t.table, t.nhash, n, t.nhash[n])


def keep_subtree(t: Tree, root: int, transpose: bool, min_visits: int = 0) -> int:
    """Keep only what is reachable from ``root``: its nodes become ``0 ..`` (``root`` is 0) and the pools hold
    only their segments, so the room the rest of the tree took is free again. Returns the nodes kept.

    What a search learned below the position reached is kept however full the tree was (ggp used to start
    afresh when it was more than 80% full: after a long think, every move). With ``min_visits``, a node
    visited fewer times (and not proven) goes too, with all below it: its parent keeps the statistics of the
    move to it, and makes the node again when the move is next taken. That is how a full tree makes room.
    """
    used = int(t.meta[0])
    order, place = _reachable(root, used, t.expanded, t.counts, t.coff, t.child, t.node_visits, t.proven, min_visits)
    _repack_pools(order, place, t)
    k = order.shape[0]
    for a in (t.states, t.node_visits, t.node_terminal, t.proven, t.pval, t.expanded, t.counts, t.stamp, t.hval):
        a[:k] = a[order]
    if t.mm.shape[0] > 1:  # (implicit minimax on: a value per node)
        t.mm[:k] = t.mm[order]
    if transpose:
        t.nhash[:k] = t.nhash[order]
        _rehash(t, k)
    t.meta[0] = k
    return k
