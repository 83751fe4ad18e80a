"""Greedy rollouts: random playouts that take a win in one and answer a threat of one.

A uniformly random playout of a race (breakthrough, knightthrough) lets a piece one step from the goal row
wander, and lets the other side ignore it: its value says little about who is ahead. Sancho's answer (its
blog and its ``ForwardDeadReckonPropnetStateMachine``'s greedy rollouts), rebuilt here over any kernel:

* where one role chooses, each of its moves known to end games is tried first: one that ends this game
  with the role's top goal is played; one that ends it otherwise is avoided while another move remains;
* where that win exists (or a forced step loses the game for the role that chose before it), the role that
  chose just before (another role) takes back its move and tries its next one in turn, until one leaves no
  such loss in one or none is left: a threat is answered where an answer exists;
* which moves end games is learnt as the rollouts go: a move after which a game was over is marked in
  ``params`` (one flag per role and action), so the tries cost only the few moves that can end a game.

Games of simultaneous moves (more than one role choosing) are played uniformly at random.
"""

# The template's free names (``kernel_*``, ``num_roles``) are bound by Kernel.specialise.
# ruff: noqa: F821
# mypy: disable-error-code="name-defined, no-untyped-def"

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.game import Game
from ..core.kernels import rng_below
from ..core.native import KernelGame

#: A greedy playout gives up after this many steps (a rule sheet's game may never end).
MAX_STEPS = 100_000


def _greedy_rollout_template(ctx, s, rng, out, params):
    # ``params``: a flag per role and action (1: seen to end a game), then a trailing 0 (UCTSearch's).
    nr = num_roles
    na = (params.shape[0] - 1) // nr
    moves = np.empty((nr, na), dtype=np.int64)
    counts = np.empty(nr, dtype=np.int64)
    avoid = np.zeros(na, dtype=np.bool_)
    joint = np.empty(nr, dtype=np.int64)
    res = np.empty(nr, dtype=np.int64)
    work = np.empty_like(s)
    # the last step where one role chose at random: its state, moves, the joint move's other parts, which
    # of its moves it began with and which it plays now (a threat answered tries the next one)
    prev = np.empty_like(s)
    pmoves = np.empty(na, dtype=np.int64)
    pavoid = np.zeros(na, dtype=np.bool_)
    pjoint = np.empty(nr, dtype=np.int64)
    prole = -1
    pn = pfirst = pcur = 0
    steps = 0
    while steps < MAX_STEPS and not kernel_terminal(ctx, s):
        chooser = -1
        choosers = 0
        stuck = False
        for r in range(nr):
            counts[r] = kernel_legal(ctx, s, r, moves[r])
            if counts[r] == 0:
                stuck = True
            elif counts[r] > 1:
                choosers += 1
                chooser = r
        if stuck:  # a role without a move (a broken sheet): scored as it stands
            break
        if choosers > 1:  # moves at once: uniformly at random
            for r in range(nr):
                joint[r] = moves[r, rng_below(rng, counts[r])]
            kernel_apply(ctx, s, joint)
            prole = -1
            steps += 1
            continue
        for r in range(nr):
            joint[r] = moves[r, 0]
        threat = False
        win = -1
        n = base = avoided = 0
        if choosers == 0:  # nobody chooses: the forced step, unless it loses the game for the role before
            work[:] = s
            kernel_apply(ctx, work, joint)
            if prole >= 0 and kernel_terminal(ctx, work):
                kernel_goals(ctx, work, res)
                threat = res[prole] == 0
        else:
            n = counts[chooser]
            base = chooser * na
            for i in range(n):
                avoid[i] = False
                if params[base + moves[chooser, i]] > 0.0:
                    joint[chooser] = moves[chooser, i]
                    work[:] = s
                    kernel_apply(ctx, work, joint)
                    if kernel_terminal(ctx, work):
                        kernel_goals(ctx, work, res)
                        if res[chooser] >= 100:
                            win = i
                            break
                        avoid[i] = True
                        avoided += 1
            threat = win >= 0 and prole >= 0 and prole != chooser
        if threat:  # the role before takes its move back for its next one not known to lose, if it has one
            nxt = (pcur + 1) % pn
            while nxt != pfirst and pavoid[nxt]:
                nxt = (nxt + 1) % pn
            if nxt != pfirst:
                pcur = nxt
                s[:] = prev
                pjoint[prole] = pmoves[pcur]
                kernel_apply(ctx, s, pjoint)
                continue
        if choosers == 0:
            s[:] = work
            steps += 1
            continue
        if win >= 0:
            joint[chooser] = moves[chooser, win]
            kernel_apply(ctx, s, joint)
            steps += 1
            break
        pick = rng_below(rng, n - avoided if avoided < n else n)
        i = 0
        while True:  # the pick-th move not avoided (where all are, the pick-th move)
            if avoided == n or not avoid[i]:
                if pick == 0:
                    break
                pick -= 1
            i += 1
        joint[chooser] = moves[chooser, i]
        prev[:] = s
        pjoint[:] = joint
        pmoves[:n] = moves[chooser, :n]
        pavoid[:n] = avoid[:n]
        prole, pn, pfirst, pcur = chooser, n, i, i
        kernel_apply(ctx, s, joint)
        steps += 1
        if params[base + moves[chooser, i]] == 0.0 and kernel_terminal(ctx, s):
            params[base + moves[chooser, i]] = 1.0  # learnt: this move can end a game
    kernel_goals(ctx, s, res)
    for r in range(nr):
        out[r] = res[r] / 100.0


def greedy_rollout(game: Game) -> Any:
    """The compiled leaf value ``(ctx, s, rng, out, params)`` of greedy rollouts for ``game``'s kernel (see the
    module docstring). Like a kernel's functions it trusts its arguments: ``params`` must be
    :func:`greedy_params` and a trailing 0 (their length sizes its arrays), as ``UCTSearch(greedy=True)``
    makes them."""
    if not isinstance(game, KernelGame):
        raise TypeError(f"compiled search needs a game with a kernel; {game.name} has none")
    return game.kernel.specialise(_greedy_rollout_template)


def greedy_params(game: KernelGame) -> tuple[float, ...]:
    """The greedy rollout's initial ``params``: no move yet known to end a game (UCTSearch appends the trailing 0)."""
    kernel = game.kernel
    return (0.0,) * (kernel.num_roles * kernel.num_actions)
