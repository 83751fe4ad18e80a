"""The compiled simulation loop of UCT and its leaf scorers, as templates for ``Kernel.specialise``.

:func:`_run_template` runs a batch of simulations over the tree's arrays (select by UCB1, expand,
score leaves in batches, back up values and proofs); the leaf templates score a batch of leaves by
random rollouts or by a blend of present and final goals (:func:`goal_blend`). Free names
(``kernel_*``, ``score_batch``, ``leaf_values``, ``leaf_value``) are bound when specialised.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.game import Game
from ..core.native import KernelGame
from .uct_tree import _FNV, _find, _insert, _state_hash, _try_prove, _ucb_pick

# --- the compiled simulation loop (a template: see Kernel.specialise) -------------------------
# (ruff and mypy see free names here; Kernel.specialise binds them.)


def _run_template(  # type: ignore[no-untyped-def]
    ctx,
    sims,
    root,
    c,
    solve,
    states,
    node_visits,
    node_terminal,
    proven,
    pval,
    expanded,
    counts,
    offsets,
    coff,
    act,
    act_visits,
    act_value,
    child,
    nhash,
    stamp,
    table,
    meta,
    rng,
    path,
    buf,
    work,
    val,
    joint,
    res,
    params,
    transpose,
    decisive,
    batch,
    bstates,
    bpath,
    bstart,
    bdepth,
    bval,
):
    # meta: [nodes used, action-pool entries used, child-pool entries used, simulations ever run]. A
    # node's children are numbered in mixed radix over the roles' moves, the last role fastest.
    # With ``transpose``, a new child's state is first looked up in ``table``: a state reached by
    # another order is linked, not copied, so the tree is a graph whose nodes share their statistics
    # (each edge keeps its own move statistics in its parent). ``stamp`` marks the nodes on the
    # current path, so a path that comes back to one of them (a repeated position) ends there.
    # A proven node (terminal, or solved from its children when ``solve``) is not searched
    # below: a simulation that reaches it scores its exact value.
    nr = num_roles  # type: ignore[name-defined]  # noqa: F821
    width = buf.shape[0]
    capacity = states.shape[0]
    pool = act.shape[0]
    children = child.shape[0]
    max_depth = path.shape[0]
    done = 0
    queued = 0  # leaves waiting in the batch
    bstart[0] = 0
    for _ in range(sims):
        if proven[root]:  # solved: further simulations would only re-read its value
            break
        done += 1
        meta[3] += 1
        sim = meta[3]
        node = root
        depth = 0
        cycle = False
        pending = False  # the leaf waits in the batch for its value
        while True:
            if proven[node]:
                for r in range(nr):
                    val[r] = pval[node, r]
                break
            if depth == max_depth:  # a path longer than any game we know: score it here, not off the path array
                bstates[queued] = states[node]
                pending = True
                break
            if not expanded[node]:
                fits = meta[1] + nr * width <= pool
                if (node_visits[node] == 0 and node != root) or not fits:
                    bstates[queued] = states[node]
                    pending = True
                    break
                a = meta[1]
                product = 1
                for r in range(nr):
                    k = kernel_legal(ctx, states[node], r, buf)  # type: ignore[name-defined]  # noqa: F821
                    act[a : a + k] = buf[:k]
                    offsets[node, r] = a
                    counts[node, r] = k
                    a += k
                    product *= k
                if product == 0:  # a role without a move: the game cannot go on, so it scores as it stands
                    kernel_goals(ctx, states[node], res)  # type: ignore[name-defined]  # noqa: F821
                    for r in range(nr):
                        val[r] = res[r] / 100.0
                        pval[node, r] = val[r]
                    proven[node] = True
                    break
                if meta[2] + product > children:
                    bstates[queued] = states[node]
                    pending = True
                    break
                act_visits[meta[1] : a] = 0
                act_value[meta[1] : a] = 0.0
                coff[node] = meta[2]
                child[meta[2] : meta[2] + product] = -1
                meta[1] = a
                meta[2] += product
                expanded[node] = True
                if decisive and product > 1:
                    # Decisive moves: where one role chooses, a move that ends the game at once with its top
                    # goal proves the node now, so a win in one is never missed for want of samples (and,
                    # one ply up, a move that allows it is proven lost).
                    mover = -1
                    for r in range(nr):
                        joint[r] = act[offsets[node, r]]
                        if counts[node, r] > 1:
                            mover = r
                    if counts[node, mover] == product:
                        for i in range(product):
                            joint[mover] = act[offsets[node, mover] + i]
                            work[:] = states[node]
                            kernel_apply(ctx, work, joint)  # type: ignore[name-defined]  # noqa: F821
                            if not kernel_terminal(ctx, work):  # type: ignore[name-defined]  # noqa: F821
                                continue
                            kernel_goals(ctx, work, res)  # type: ignore[name-defined]  # noqa: F821
                            if res[mover] < 100:
                                continue
                            win = -1
                            h = _state_hash(work)  # rare (a win at once): hashed whether or not it is looked up
                            if transpose:
                                win = _find(table, nhash, states, work, h)
                            if win < 0 and meta[0] < capacity:  # the winning child is kept: its move is known
                                win = meta[0]
                                meta[0] += 1
                                states[win] = work
                                if transpose:
                                    _insert(table, nhash, win, h)
                                node_terminal[win] = True
                                proven[win] = True
                                for r in range(nr):
                                    pval[win, r] = res[r] / 100.0
                                node_visits[win] = 0
                                expanded[win] = False
                            if win >= 0:
                                child[coff[node] + i] = win
                            proven[node] = True
                            for r in range(nr):
                                pval[node, r] = res[r] / 100.0
                            break
                        if proven[node]:
                            continue  # scored at the loop's top, and proven up the path
            log_parent = np.log(max(node_visits[node], 1))
            path[depth, 0] = node
            stamp[node] = sim
            j = 0
            for r in range(nr):
                i = _ucb_pick(act_visits, act_value, offsets[node, r], counts[node, r], log_parent, c, rng)
                path[depth, 1 + r] = i
                j = j * counts[node, r] + i
                joint[r] = act[offsets[node, r] + i]
            depth += 1
            j += coff[node]
            nxt = child[j]
            if nxt < 0:
                # A move not taken before: its state, then (with ``transpose``) the node already holding
                # it, else a new node, else (the tree full) a score without storing it.
                work[:] = states[node]
                kernel_apply(ctx, work, joint)  # type: ignore[name-defined]  # noqa: F821
                h = _FNV
                if transpose:
                    h = _state_hash(work)
                    nxt = _find(table, nhash, states, work, h)
                if nxt < 0 and meta[0] < capacity:
                    nxt = meta[0]
                    meta[0] += 1
                    states[nxt] = work
                    if transpose:
                        _insert(table, nhash, nxt, h)
                    node_terminal[nxt] = kernel_terminal(ctx, states[nxt])  # type: ignore[name-defined]  # noqa: F821
                    proven[nxt] = node_terminal[nxt]
                    if proven[nxt]:
                        kernel_goals(ctx, states[nxt], res)  # type: ignore[name-defined]  # noqa: F821
                        for r in range(nr):
                            pval[nxt, r] = res[r] / 100.0
                    node_visits[nxt] = 0
                    expanded[nxt] = False
                if nxt < 0:
                    if kernel_terminal(ctx, work):  # type: ignore[name-defined]  # noqa: F821
                        kernel_goals(ctx, work, res)  # type: ignore[name-defined]  # noqa: F821
                        for r in range(nr):
                            val[r] = res[r] / 100.0
                    else:
                        bstates[queued] = work
                        pending = True
                    break
                child[j] = nxt
            if stamp[nxt] == sim:
                # Back at a position of this path (a repetition): scored from here, and the path ends with
                # the move that came back, so no node is counted twice.
                cycle = True
                if proven[nxt]:
                    for r in range(nr):
                        val[r] = pval[nxt, r]
                else:
                    bstates[queued] = states[nxt]
                    pending = True
                break
            node = nxt
        # The visits count now, the value when it is known: a leaf waiting in the batch is a loss for the
        # moment (a virtual loss), which steers the batch's later paths to other leaves.
        if not cycle:
            node_visits[node] += 1
        for d in range(depth):
            p = path[d, 0]
            node_visits[p] += 1
            for r in range(nr):
                a = offsets[p, r] + path[d, 1 + r]
                act_visits[a] += 1
                if not pending:
                    act_value[a] += val[r]
        if pending:
            # its path joins the batch's (a flat list, the rows bstart[b] to bstart[b] + bdepth[b])
            used = bstart[queued]
            if used + depth > bpath.shape[0]:  # no room (deep paths): the waiting leaves are scored first
                score_batch(ctx, rng, params, queued, bstates, bpath, bstart, bdepth, bval, offsets, act_value)  # type: ignore[name-defined]  # noqa: F821
                bstates[0] = bstates[queued]
                queued = 0
                used = 0
            bpath[used : used + depth] = path[:depth]
            bstart[queued] = used
            bdepth[queued] = depth
            queued += 1
            bstart[queued] = used + depth
            if queued == batch:
                score_batch(ctx, rng, params, queued, bstates, bpath, bstart, bdepth, bval, offsets, act_value)  # type: ignore[name-defined]  # noqa: F821
                queued = 0
                bstart[0] = 0
        elif solve and not cycle and proven[node]:
            for d in range(depth - 1, -1, -1):
                p = path[d, 0]
                if proven[p] or not _try_prove(p, counts, coff, child, proven, pval):
                    break
    if queued > 0:
        score_batch(ctx, rng, params, queued, bstates, bpath, bstart, bdepth, bval, offsets, act_value)  # type: ignore[name-defined]  # noqa: F821
    return done


def _score_batch_template(ctx, rng, params, n, bstates, bpath, bstart, bdepth, bval, offsets, act_value):  # type: ignore[no-untyped-def]
    # The leaves waiting in the batch scored together, each value added along its path.
    leaf_values(ctx, bstates, n, rng, bval, params)  # type: ignore[name-defined]  # noqa: F821
    for b in range(n):
        for d in range(bstart[b], bstart[b] + bdepth[b]):
            p = bpath[d, 0]
            for r in range(bval.shape[1]):
                act_value[offsets[p, r] + bpath[d, 1 + r]] += bval[b, r]


def _each_leaf_template(ctx, states, n, rng, out, params):  # type: ignore[no-untyped-def]
    # A batch scored one leaf after another by the search's leaf value.
    for b in range(n):
        leaf_value(ctx, states[b], rng, out[b], params)  # type: ignore[name-defined]  # noqa: F821


def _batch_rollouts_template(ctx, states, n, rng, out, params):  # type: ignore[no-untyped-def]
    # A batch scored by the kernel's batched random rollouts (a rule sheet's: 128 games bit-parallel).
    res = np.empty((n, out.shape[1]), dtype=np.int64)
    kernel_rollouts(ctx, states, n, rng, res)  # type: ignore[name-defined]  # noqa: F821
    for b in range(n):
        for r in range(out.shape[1]):
            out[b, r] = res[b, r] / 100.0


def _rollout_value_template(ctx, s, rng, out, params):  # type: ignore[no-untyped-def]
    # The default leaf value: play the game's random rollout to the end, score its goals.
    kernel_rollout(ctx, s, rng)  # type: ignore[name-defined]  # noqa: F821
    res = np.empty(out.shape[0], dtype=np.int64)
    kernel_goals(ctx, s, res)  # type: ignore[name-defined]  # noqa: F821
    for r in range(out.shape[0]):
        out[r] = res[r] / 100.0


def _goal_blend_template(ctx, s, rng, out, params):  # type: ignore[no-untyped-def]
    # A leaf value for sheets whose goals change during play (a score, captured stones): the goals as
    # they stand at the leaf, weighted params[0], blended with a random rollout's final goals. A goal the
    # sheet leaves undefined before the end (below 0) counts as the rollout's.
    nr = out.shape[0]
    now = np.empty(nr, dtype=np.int64)
    kernel_goals(ctx, s, now)  # type: ignore[name-defined]  # noqa: F821
    kernel_rollout(ctx, s, rng)  # type: ignore[name-defined]  # noqa: F821
    res = np.empty(nr, dtype=np.int64)
    kernel_goals(ctx, s, res)  # type: ignore[name-defined]  # noqa: F821
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
