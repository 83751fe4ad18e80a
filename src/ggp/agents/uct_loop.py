"""The compiled simulation loop of UCT and its leaf scorers, as templates for ``Kernel.specialise``.

:func:`_run_template` runs a batch of simulations over the tree (a :class:`~ggp.agents.uct_tree.Tree`,
with its :class:`~ggp.agents.uct_tree.Scratch` and :class:`~ggp.agents.uct_tree.Waiting` leaves): select
by UCB1, expand (with decisive moves, :func:`_decisive_win_template`), add children, score leaves in
batches, back up values and proofs. With transpositions a state reached by another order of moves is
linked, not copied, so the tree is a graph whose nodes share their statistics (each edge keeps its own
move statistics in its parent); ``stamp`` marks the nodes of the current path, so a path that comes back
to one of them (a repeated position) ends there. A proven node (terminal, or solved from its children
with MCTS-Solver) is not searched below: a simulation that reaches it scores its exact value.

The leaf templates score a batch of leaves by random rollouts or by a blend of present and final goals
(:func:`goal_blend`). Free names (``kernel_*``, ``decisive_win``, ``over``, ``score_batch``,
``leaf_values``, ``leaf_value``) are bound when specialised.
"""

# The templates' free names (above) are bound by Kernel.specialise and numba types every compiled
# function's arguments, so ruff and mypy are told once for the module instead of on each line.
# ruff: noqa: F821
# mypy: disable-error-code="name-defined, no-untyped-def"

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ..core.game import Game
from ..core.native import KernelGame
from .uct_tree import _FNV, _find, _insert, _state_hash, _try_prove, _ucb_pick

# --- the compiled simulation loop (templates: see Kernel.specialise) ---------------------------


def _run_template(ctx, sims, root, opts, t, s, w, rng, params):
    # ``sims`` simulations from ``root`` (see the module's docstring). The common steps stay in this function:
    # handing arrays to another compiled function each simulation cost up to a quarter of the speed.
    nr = num_roles
    states, node_visits, node_terminal, proven, pval = t.states, t.node_visits, t.node_terminal, t.proven, t.pval
    expanded, counts, offsets, coff, act, child = t.expanded, t.counts, t.offsets, t.coff, t.act, t.child
    act_visits, act_value, nhash, table, stamp, meta = t.act_visits, t.act_value, t.nhash, t.table, t.stamp, t.meta
    path, buf, work, val, joint, res = s.path, s.buf, s.work, s.val, s.joint, s.res
    wstates, wpath, wstart, wdepth = w.states, w.path, w.start, w.depth
    first = meta[3]
    queued = wstart[0] = 0  # leaves waiting in the batch
    for _ in range(sims):
        if proven[root]:  # solved: further simulations would only re-read its value
            break
        sim = meta[3] = meta[3] + 1
        node, depth, cycle, pending = root, 0, False, False  # (pending: the leaf waits in the batch)
        while True:
            if proven[node]:
                for r in range(nr):
                    val[r] = pval[node, r]
                break
            if depth == path.shape[0]:  # a path longer than any game we know: scored here, not off the array
                wstates[queued] = states[node]
                pending = True
                break
            if not expanded[node]:  # its moves into the pool and room for its children, or scored as it is
                a, product = meta[1], 1
                if (node_visits[node] > 0 or node == root) and a + nr * buf.shape[0] <= act.shape[0]:
                    for r in range(nr):
                        k = kernel_legal(ctx, states[node], r, buf)
                        act[a : a + k] = buf[:k]
                        offsets[node, r] = a
                        counts[node, r] = k
                        a += k
                        product *= k
                    if product == 0:  # a role without a move: the game cannot go on, so it scores as it stands
                        kernel_goals(ctx, states[node], res)
                        pval[node] = res / 100.0
                        proven[node] = True
                        continue
                if a == meta[1] or meta[2] + product > child.shape[0]:
                    wstates[queued] = states[node]
                    pending = True
                    break
                act_visits[meta[1] : a] = 0
                act_value[meta[1] : a] = 0.0
                if opts.rave > 0:
                    t.amaf_visits[meta[1] : a] = 0
                    t.amaf_value[meta[1] : a] = 0.0
                coff[node] = meta[2]
                child[meta[2] : meta[2] + product] = -1
                meta[1] = a
                meta[2] += product
                expanded[node] = True
                look = opts.decisive and (node == root or node_visits[node] >= opts.decisive_at)
                if (look or opts.bias > 0) and product > 1 and decisive_win(ctx, node, product, opts, t, s, look, True):
                    continue  # proven: scored at the loop's top, and proven up the path
            elif opts.decisive and (
                node_visits[node] == opts.decisive_at or (node == root and node_visits[node] < opts.decisive_at)
            ):
                # (each pass adds one visit, so every node passes this count once: expanded before it, it looks
                # now. A root kept from the last move's tree was expanded as a child, with fewer visits than
                # that: it looks at each pass until it has them, a few moves' updates, so a win at once there
                # is never left to the samples)
                product = 1
                for r in range(nr):
                    product *= counts[node, r]
                if product > 1 and decisive_win(ctx, node, product, opts, t, s, True, False):
                    continue
            log_parent = np.log(max(node_visits[node], 1))
            path[depth, 0] = node
            stamp[node] = sim
            j = 0
            mover = -1  # the one role with a choice, if only one has
            if opts.solve or opts.minimax > 0:
                for r in range(nr):
                    if counts[node, r] > 1:
                        mover = r if mover == -1 else -2
            for r in range(nr):
                i = _ucb_pick(
                    act_visits,
                    act_value,
                    offsets[node, r],
                    counts[node, r],
                    log_parent,
                    opts.c,
                    rng,
                    child,
                    coff[node],
                    proven,
                    pval,
                    mover if opts.solve and r == mover else -1,
                    t.amaf_visits,
                    t.amaf_value,
                    opts.rave,
                    t.mm,
                    mover if r == mover else -1,
                    opts.minimax,
                )
                path[depth, 1 + r] = i
                j = j * counts[node, r] + i
                joint[r] = act[offsets[node, r] + i]
            depth += 1
            path[depth - 1, 1 + nr] = -1  # the child this step leads to, once known
            j += coff[node]
            nxt = child[j]
            if nxt < 0:  # a move not taken before: the node holding its state (transpositions), else a new one
                work[:] = states[node]
                kernel_apply(ctx, work, joint)
                h = _state_hash(work) if opts.transpose else _FNV
                if opts.transpose:
                    nxt = _find(table, nhash, states, work, h)
                if nxt < 0 and meta[0] < states.shape[0]:
                    nxt = meta[0]
                    meta[0] += 1
                    states[nxt] = work
                    if opts.transpose:
                        _insert(table, nhash, nxt, h)
                    node_terminal[nxt] = proven[nxt] = kernel_terminal(ctx, work)
                    if proven[nxt]:
                        kernel_goals(ctx, work, res)
                        for r in range(nr):
                            pval[nxt, r] = res[r] / 100.0
                    node_visits[nxt] = 0
                    expanded[nxt] = False
                    t.hval[nxt] = 0.5
                    if opts.displace:
                        _piece_counts(states[node], s.pieces, s.tally[0])
                        _piece_counts(work, s.pieces, s.tally[1])
                        t.hval[nxt] = _piece_shift(s.tally)
                    if opts.minimax > 0:
                        if proven[nxt]:
                            t.mm[nxt] = pval[nxt]
                        else:
                            _material_value(work, s.heur, nr, t.mm[nxt])
                if nxt < 0:  # the tree is full: the state is scored without being stored
                    pending = not over(ctx, work, val, res)
                    wstates[queued] = work
                    break
                child[j] = nxt
            path[depth - 1, 1 + nr] = nxt
            if stamp[nxt] == sim:
                # Back at a position of this path (a repetition): scored from there; the path ends here.
                cycle, pending = True, not proven[nxt]
                for r in range(nr):
                    val[r] = pval[nxt, r]
                wstates[queued] = states[nxt]
                break
            node = nxt
        if opts.minimax > 0:
            _minimax_up(path, depth, t)
        _back_up(node, depth, cycle, pending, path, val, node_visits, offsets, act_visits, act_value, t.hval, opts)
        if pending:
            # its path joins the batch's (a flat list, the rows wstart[b] to wstart[b] + wdepth[b])
            used = wstart[queued]
            if used + depth > wpath.shape[0]:  # no room (deep paths): the waiting leaves are scored first
                score_batch(ctx, rng, params, queued, t, w, opts)
                wstates[0] = wstates[queued]
                queued = used = 0
            wpath[used : used + depth] = path[:depth]
            wstart[queued], wdepth[queued] = used, depth
            queued += 1
            wstart[queued] = used + depth
            if queued == wstates.shape[0]:
                score_batch(ctx, rng, params, queued, t, w, opts)
                queued = wstart[0] = 0
        elif opts.solve and not cycle and proven[node]:
            _prove_path(path, depth, counts, coff, child, proven, pval)
    if queued > 0:
        score_batch(ctx, rng, params, queued, t, w, opts)
    return meta[3] - first


def _decisive_win_template(ctx, node, product, opts, t, s, look, prior):
    # Decisive moves (``look``): where one role chooses, a move that ends the game at once with its top goal
    # proves the node now, so a win in one is never missed for want of samples (and, one ply up, a move that
    # allows it is proven lost). The winning child is kept where there is room: its move is known. True when
    # the node is proven so. With progressive bias (``prior``: on expansion), each move that changes the
    # piece counts starts with virtual visits worth what it gains or loses (_piece_prior).
    nr = num_roles
    mover = -1
    for r in range(nr):
        s.joint[r] = t.act[t.offsets[node, r]]
        if t.counts[node, r] > 1:
            mover = r
    if t.counts[node, mover] != product:
        return False
    weight = int(opts.bias) if prior else 0
    if weight > 0:
        _piece_counts(t.states[node], s.pieces, s.tally[0])
    for i in range(product):
        s.joint[mover] = t.act[t.offsets[node, mover] + i]
        s.work[:] = t.states[node]
        kernel_apply(ctx, s.work, s.joint)
        if not kernel_terminal(ctx, s.work):
            if weight > 0:
                _piece_counts(s.work, s.pieces, s.tally[1])
                gain = _piece_prior(s.tally, mover, s.base[mover])
                if gain >= 0:
                    k = t.offsets[node, mover] + i
                    t.act_visits[k] = weight
                    t.act_value[k] = weight * gain
            continue
        if not look:
            continue
        kernel_goals(ctx, s.work, s.res)
        if s.res[mover] < 100:
            continue
        win = -1
        h = _state_hash(s.work)  # rare (a win at once): hashed whether or not it is looked up
        if opts.transpose:
            win = _find(t.table, t.nhash, t.states, s.work, h)
        if win < 0 and t.meta[0] < t.states.shape[0]:
            win = t.meta[0]
            t.meta[0] += 1
            t.states[win] = s.work
            if opts.transpose:
                _insert(t.table, t.nhash, win, h)
            t.node_terminal[win] = True
            t.proven[win] = True
            for r in range(nr):
                t.pval[win, r] = s.res[r] / 100.0
            t.node_visits[win] = 0
            t.expanded[win] = False
            t.hval[win] = 0.5
            if opts.minimax > 0:
                t.mm[win] = t.pval[win]
        if win >= 0:
            t.child[t.coff[node] + i] = win
        t.proven[node] = True
        for r in range(nr):
            t.pval[node, r] = s.res[r] / 100.0
        return True
    return False


@nb.njit(cache=True)
def _piece_counts(state, pieces, out):
    # Each role's piece count in ``state``: the sum of its weights of the state's set bytes.
    for r in range(pieces.shape[0]):
        acc = 0.0
        for i in range(min(state.shape[0], pieces.shape[1])):
            if state[i] != 0:
                acc += pieces[r, i]
        out[r] = acc


@nb.njit(cache=True)
def _piece_shift(count):
    # Role 0's share (0..1, 0.5: none) of the change in the balance of pieces from count[0] to count[1], as
    # Sancho's two-role piece heuristic has it: a logistic of the change in (ours - theirs) / (ours +
    # theirs), times a quarter of the pieces left (so about a quarter of the change in ours - theirs: one
    # piece taken is worth the same however many are left).
    eps = 1e-6
    ours, theirs = count[1, 0] + eps, count[1, 1] + eps
    before_ours, before_theirs = count[0, 0] + eps, count[0, 1] + eps
    now = (ours - theirs) / (ours + theirs)
    before = (before_ours - before_theirs) / (before_ours + before_theirs)
    return 1.0 / (1.0 + np.exp(-(ours + theirs) / 4.0 * (now - before)))


@nb.njit(cache=True)
def _piece_prior(count, mover, base):
    # What a move that takes the piece counts from count[0] to count[1] is worth to ``mover`` (0..1), as
    # Sancho's piece heuristic has it: the share of the change it gains over the average role, through a
    # logistic, then ``base`` (what a quiet move is worth) moved that far towards 1 or 0. -1: no change.
    nr = count.shape[1]
    before = 0.0
    after = 0.0
    same = True
    for r in range(nr):
        before += count[0, r]
        after += count[1, r]
        same = same and count[0, r] == count[1, r]
    if same or after <= 0:
        return -1.0
    gain = (count[1, mover] - count[0, mover]) - (after - before) / nr
    h = 1.0 / (1.0 + np.exp(-10.0 * gain / (after / nr)))
    if h > 0.5:
        return base + (1.0 - base) * (h - 0.5) / 0.5
    return base - base * (0.5 - h) / 0.5


def _over_template(ctx, s, val, res):
    # Whether state ``s`` ends the game; if so its goals (/ 100) are in ``val``.
    if not kernel_terminal(ctx, s):
        return False
    kernel_goals(ctx, s, res)
    for r in range(val.shape[0]):
        val[r] = res[r] / 100.0
    return True


@nb.njit(cache=True)
def _minimax_up(path, depth, t):
    # Implicit minimax: the nodes of a path take, from the deepest up, the minimax of their children's values
    # (Tree.mm), until one is left unchanged (nothing above it changes then).
    for d in range(depth - 1, -1, -1):
        if not _minimax_node(path[d, 0], t):
            return


@nb.njit(cache=True)
def _minimax_node(p, t):
    # Node ``p``'s minimax value from its children made so far (a proven child: its exact value): where one
    # role chooses, the child best for it; where several do, the mean of the children (moves at once have no
    # minimax); where none is made yet, its own evaluation stays; a proven node, its exact value. Whether it
    # changed.
    nr = t.mm.shape[1]
    chooser = -1
    product = 1
    for r in range(nr):
        product *= t.counts[p, r]
        if t.counts[p, r] > 1:
            chooser = r if chooser == -1 else -2
    first = t.coff[p]
    changed = False
    if t.proven[p]:
        for r in range(nr):
            if t.mm[p, r] != t.pval[p, r]:
                t.mm[p, r] = t.pval[p, r]
                changed = True
        return changed
    if chooser == -2:
        for r in range(nr):
            total, made = 0.0, 0
            for j in range(product):
                ch = t.child[first + j]
                if ch >= 0:
                    made += 1
                    total += t.pval[ch, r] if t.proven[ch] else t.mm[ch, r]
            if made > 0 and t.mm[p, r] != total / made:
                t.mm[p, r] = total / made
                changed = True
        return changed
    role = max(chooser, 0)
    best = -1.0
    pick = -1
    for j in range(product):
        ch = t.child[first + j]
        if ch >= 0:
            v = t.pval[ch, role] if t.proven[ch] else t.mm[ch, role]
            if v > best:
                best, pick = v, ch
    if pick < 0:
        return False
    for r in range(nr):
        v = t.pval[pick, r] if t.proven[pick] else t.mm[pick, r]
        if t.mm[p, r] != v:
            t.mm[p, r] = v
            changed = True
    return changed


@nb.njit(cache=True)
def _prove_path(path, depth, counts, coff, child, proven, pval):
    # MCTS-Solver: a simulation ended on a proven node; its ancestors are proven as far as they can be.
    for d in range(depth - 1, -1, -1):
        p = path[d, 0]
        if proven[p] or not _try_prove(p, counts, coff, child, proven, pval):
            return


@nb.njit(cache=True, inline="always")
def _back_up(node, depth, cycle, pending, path, val, node_visits, offsets, act_visits, act_value, hval, opts):
    # The visits count now, the value when it is known: a leaf waiting in the batch is a loss for the
    # moment (a virtual loss), which steers the batch's later paths to other leaves. From the leaf up: a
    # value passing a node that changed the piece balance is displaced towards the side that gained.
    if not cycle:
        node_visits[node] += 1
    nr = val.shape[0]
    for d in range(depth - 1, -1, -1):
        p = path[d, 0]
        node_visits[p] += 1
        if opts.displace and not pending:
            _displace(val, hval, path[d, 1 + nr])
        for r in range(nr):
            a = offsets[p, r] + path[d, 1 + r]
            act_visits[a] += 1
            if not pending:
                act_value[a] += val[r]


@nb.njit(cache=True)
def _displace(val, hval, node):
    # Sancho's piece heuristic on the way up (its TreeNode's "heuristic adjusted value"): a node whose move
    # changed the balance (hval, role 0's share of the change, 0.5 when none) moves both roles' values
    # that far towards the side that gained. Two roles.
    if node < 0 or hval[node] == 0.5:
        return
    h = hval[node]
    up, down = (0, 1) if h > 0.5 else (1, 0)
    f = abs(h - 0.5) / 0.5
    val[up] += (1.0 - val[up]) * f
    val[down] -= val[down] * f


def _score_batch_template(ctx, rng, params, n, t, w, opts):
    # The ``n`` leaves waiting in the batch ``w`` scored together, each value added along its path (from the
    # leaf up, displaced as in _back_up).
    leaf_values(ctx, w.states, n, rng, w.val, params)
    _add_values(n, t, w, opts)


def _rave_score_batch_template(ctx, rng, params, n, t, w, opts):
    # The batch scored by rollouts that mark the moves they play (``w.played``), each value added along its
    # path as _score_batch_template does, and to the all-moves-as-first statistics of every move of a node on
    # the path that its role played later on: in the rollout, or in the tree below the node.
    nr = w.val.shape[1]
    res = np.empty((n, nr), dtype=np.int64)
    kernel_traced_rollouts(ctx, w.states, n, rng, res, w.played)
    for b in range(n):
        for r in range(nr):
            w.val[b, r] = res[b, r] / 100.0
    played, act, offsets, counts = w.played, t.act, t.offsets, t.counts
    for b in range(n):
        for d in range(w.start[b] + w.depth[b] - 1, w.start[b] - 1, -1):
            p = w.path[d, 0]
            for r in range(nr):
                o = offsets[p, r]
                played[b, r, act[o + w.path[d, 1 + r]]] = True  # (the move made here counts here too)
                if counts[p, r] > 1:
                    for i in range(counts[p, r]):
                        if played[b, r, act[o + i]]:
                            t.amaf_visits[o + i] += 1
                            t.amaf_value[o + i] += w.val[b, r]
    _add_values(n, t, w, opts)


@nb.njit(cache=True)
def _add_values(n, t, w, opts):
    # Each waiting leaf's value (w.val) added to the moves along its path, from the leaf up (displaced as in
    # _back_up: the values are changed in place on the way).
    nr = w.val.shape[1]
    for b in range(n):
        for d in range(w.start[b] + w.depth[b] - 1, w.start[b] - 1, -1):
            p = w.path[d, 0]
            if opts.displace:
                _displace(w.val[b], t.hval, w.path[d, 1 + nr])
            for r in range(nr):
                t.act_value[t.offsets[p, r] + w.path[d, 1 + r]] += w.val[b, r]


def _each_leaf_template(ctx, states, n, rng, out, params):
    # A batch scored one leaf after another by the search's leaf value.
    for b in range(n):
        leaf_value(ctx, states[b], rng, out[b], params)


def _batch_rollouts_template(ctx, states, n, rng, out, params):
    # A batch scored by the kernel's batched random rollouts (a rule sheet's: 128 games bit-parallel), blended
    # with a linear evaluation of each leaf where ``params`` holds one (see _blend).
    nr = out.shape[1]
    if params.shape[0] > 1:
        for b in range(n):
            _material_value(states[b], params, nr, out[b])
    res = np.empty((n, nr), dtype=np.int64)
    kernel_rollouts(ctx, states, n, rng, res)
    for b in range(n):
        _blend(res[b], params, out[b])


def _rollout_value_template(ctx, s, rng, out, params):
    # The default leaf value: play the game's random rollout to the end, score its goals (blended with a linear
    # evaluation of the leaf where ``params`` holds one, see _blend).
    nr = out.shape[0]
    if params.shape[0] > 1:
        _material_value(s, params, nr, out)
    kernel_rollout(ctx, s, rng)
    res = np.empty(nr, dtype=np.int64)
    kernel_goals(ctx, s, res)
    _blend(res, params, out)


@nb.njit(cache=True)
def _material_value(s, params, nr, out):
    # Each role's linear evaluation of a state, clipped to 0..1: ``params`` is the blend, each role's bias,
    # then each role's weight of each byte of the state (ggp.agents.heuristic.Material.params), then a 0.
    length = s.shape[0]
    for r in range(nr):
        acc = params[1 + r]
        base = 1 + nr + r * length
        for i in range(length):
            if s[i] != 0:
                acc += params[base + i]
        out[r] = min(1.0, max(0.0, acc))


@nb.njit(cache=True)
def _blend(goals, params, out):
    # A rollout's goals (0..100) as a leaf's values: alone when ``params`` holds no evaluation (only the
    # trailing 0), else blended with the evaluation already in ``out`` (weight params[0]).
    if params.shape[0] > 1:
        w = params[0]
        for r in range(out.shape[0]):
            out[r] = w * out[r] + (1.0 - w) * goals[r] / 100.0
    else:
        for r in range(out.shape[0]):
            out[r] = goals[r] / 100.0


def _goal_blend_template(ctx, s, rng, out, params):
    # A leaf value for sheets whose goals change during play (a score, captured stones): the goals as
    # they stand at the leaf, weighted params[0], blended with a random rollout's final goals. A goal the
    # sheet leaves undefined before the end (below 0) counts as the rollout's.
    nr = out.shape[0]
    now = np.empty(nr, dtype=np.int64)
    kernel_goals(ctx, s, now)
    kernel_rollout(ctx, s, rng)
    res = np.empty(nr, dtype=np.int64)
    kernel_goals(ctx, s, res)
    w = params[0]
    for r in range(nr):
        g = now[r] if now[r] >= 0 else res[r]
        out[r] = (w * g + (1.0 - w) * res[r]) / 100.0


def goal_blend(game: Game) -> Any:
    """The compiled leaf value that blends the goals at the leaf with a rollout's (``params[0]``: the weight
    of the goals at the leaf), for ``game``'s kernel."""
    if not isinstance(game, KernelGame):
        raise TypeError(f"compiled search needs a game with a kernel; {game.name} has none")
    return game.kernel.specialise(_goal_blend_template)
