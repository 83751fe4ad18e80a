"""A propositional network over a ground program, and the compiled functions that run it.

Nodes are numbered: 0 is *false*, 1 is *true*, then one node per base
proposition (``true`` facts: the state), one per ``does`` input, then the
gates. A gate is an AND or an OR over literals ``2 * node + negated``; gates
are numbered in topological order, except that a set of mutually recursive
gates (a positive cycle in the ground program) forms a *cyclic block*,
evaluated to its least fixpoint.

The whole network is a tuple of int32 arrays (:data:`NET` layout below), so
one set of numba functions, compiled once and cached on disk, serves every
game. A transition is three sweeps over parts of the network: phase ``A``
computes the legal moves and the terminal test from the state, phase ``G`` the
goals (only when needed), phase ``C`` the next state from the state and the
chosen moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numba as nb
import numpy as np

from ..core.kernels import rng_below
from .grounder import GroundProgram
from .parser import Atom, GDLError, Program, show, strongly_connected

AND, OR = 0, 1
FALSE, TRUE = 0, 1

#: The fields of ``Network.header``: counts, the terminal node, and where each phase's blocks start and end.
H_NNODES, H_NBASE, H_NDOES, H_NROLES, H_TERMINAL, H_A0, H_A1, H_G0, H_G1, H_C0, H_C1, H_MAXLEGAL = range(12)


class Network(NamedTuple):
    """The network as int32 arrays, by name; compiled code takes it whole (a numba named tuple).

    Nodes: 0 false, 1 true, then the base propositions, the ``does`` inputs and the gates.
    """

    #: Counts and positions: see the ``H_*`` constants.
    header: np.ndarray
    #: Per node: AND or OR (gates only).
    kind: np.ndarray
    #: Per gate: where its literals start in ``lits`` (``ptr[g]`` to ``ptr[g + 1]``).
    ptr: np.ndarray
    #: Literals ``2 * node + negated``.
    lits: np.ndarray
    #: Gates in evaluation order.
    order: np.ndarray
    #: Triples (start, end in ``order``, cyclic?) per block.
    blocks: np.ndarray
    #: Per role: where its legal entries start (``legal_ptr[r]`` to ``legal_ptr[r + 1]``).
    legal_ptr: np.ndarray
    #: Per legal entry: the node saying whether the move is legal, and its ``does`` node (-1: none).
    legal_node: np.ndarray
    legal_does: np.ndarray
    #: Per role: where its goal entries start; per goal entry: its node and value.
    goal_ptr: np.ndarray
    goal_node: np.ndarray
    goal_value: np.ndarray
    #: Per base proposition: the node of its value in the next state.
    next: np.ndarray
    #: The initial state's base propositions.
    init: np.ndarray
    #: For the differential evaluator: each node's readers, each gate's cyclic block and threshold.
    fanout_ptr: np.ndarray
    fanout: np.ndarray
    cyclic: np.ndarray
    threshold: np.ndarray


PHASE_A, PHASE_G, PHASE_C = 0, 1, 2


@dataclass
class Propnet:
    """The network arrays and what their indices mean."""

    net: Network
    roles: tuple[str, ...]
    #: Base propositions (state facts), as KIF text in the sheet's spelling, sorted.
    base_texts: list[str]
    base_terms: list[Any]
    #: Per role, the move texts of its legal entries (in order of the legal arrays).
    move_texts: list[list[str]]
    num_gates: int
    num_literals: int

    @property
    def header(self) -> np.ndarray:
        return self.net.header

    @property
    def num_nodes(self) -> int:
        return int(self.net.header[H_NNODES])

    @property
    def num_base(self) -> int:
        return int(self.net.header[H_NBASE])


# --- compiled evaluation -------------------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _gate(vals: np.ndarray, kind: np.ndarray, ptr: np.ndarray, lits: np.ndarray, g: int) -> np.uint8:
    lo = ptr[g]
    hi = ptr[g + 1]
    if kind[g] == 0:  # AND: false as soon as one literal is false
        for k in range(lo, hi):
            lit = lits[k]
            if vals[lit >> 1] == (lit & 1):
                return np.uint8(0)
        return np.uint8(1)
    for k in range(lo, hi):  # OR
        lit = lits[k]
        if vals[lit >> 1] != (lit & 1):
            return np.uint8(1)
    return np.uint8(0)


# The public functions below check the sizes of what they are given, then call an unchecked
# twin; the loops of this module call the twins, so the checks stay out of the hot paths.


@nb.njit(cache=True)
def pn_eval(net: Network, vals: np.ndarray, phase: int) -> None:
    """Evaluate the gates of ``phase`` (0 legal+terminal, 1 goals, 2 next) into ``vals``."""
    if phase < 0 or phase > 2 or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_eval: phase is 0, 1 or 2 and vals holds a value per node")
    _eval(net, vals, phase)


@nb.njit(cache=True)
def _eval(net: Network, vals: np.ndarray, phase: int) -> None:
    header = net.header
    kind = net.kind
    ptr = net.ptr
    lits = net.lits
    order = net.order
    blocks = net.blocks
    b0 = header[5 + 2 * phase]
    b1 = header[6 + 2 * phase]
    for b in range(b0, b1):
        start = blocks[3 * b]
        end = blocks[3 * b + 1]
        if blocks[3 * b + 2] == 0:
            for k in range(start, end):
                g = order[k]
                vals[g] = _gate(vals, kind, ptr, lits, g)
        else:  # a positive cycle: least fixpoint from all false
            for k in range(start, end):
                vals[order[k]] = 0
            changed = True
            while changed:
                changed = False
                for k in range(start, end):
                    g = order[k]
                    v = _gate(vals, kind, ptr, lits, g)
                    if v != vals[g]:
                        vals[g] = v
                        changed = True


@nb.njit(cache=True)
def pn_load(net: Network, vals: np.ndarray, base: np.ndarray) -> None:
    """Put a state (base bits) into ``vals`` and compute legality and termination (phase A)."""
    if base.shape[0] != net.header[H_NBASE] or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_load: base holds one bit per base proposition and vals a value per node")
    _load(net, vals, base)


@nb.njit(cache=True)
def _load(net: Network, vals: np.ndarray, base: np.ndarray) -> None:
    nbase = net.header[H_NBASE]
    vals[0] = 0
    vals[1] = 1
    for i in range(nbase):
        vals[2 + i] = base[i]
    _eval(net, vals, 0)


@nb.njit(cache=True)
def pn_next(net: Network, vals: np.ndarray, does: np.ndarray, base_out: np.ndarray) -> None:
    """The next state's base bits, from loaded ``vals`` and the ``does`` nodes of the joint move (-1: none)."""
    nbase = net.header[H_NBASE]
    if base_out.shape[0] < nbase or vals.shape[0] < net.header[H_NNODES]:
        raise ValueError("pn_next: base_out holds one bit per base proposition and vals a value per node")
    for i in range(does.shape[0]):
        if does[i] >= 2 + nbase + net.header[H_NDOES] or (does[i] >= 0 and does[i] < 2 + nbase):
            raise ValueError("pn_next: does holds does-nodes of the network (or -1)")
    _next(net, vals, does, base_out)


@nb.njit(cache=True)
def _next(net: Network, vals: np.ndarray, does: np.ndarray, base_out: np.ndarray) -> None:
    nbase = net.header[H_NBASE]
    nxt = net.next
    for i in range(does.shape[0]):
        if does[i] >= 0:
            vals[does[i]] = 1
    _eval(net, vals, 2)
    for i in range(nbase):
        base_out[i] = vals[nxt[i]]
    for i in range(does.shape[0]):
        if does[i] >= 0:
            vals[does[i]] = 0


@nb.njit(cache=True)
def pn_goals(net: Network, vals: np.ndarray, out: np.ndarray, count: np.ndarray) -> None:
    """Each role's goal (phase G): ``out[r]`` the highest true goal value, ``count[r]`` how many distinct are true."""
    if out.shape[0] < net.header[H_NROLES] or count.shape[0] < net.header[H_NROLES]:
        raise ValueError("pn_goals: out and count hold an entry per role")
    pn_eval(net, vals, 1)
    _read_goals(net, vals, out, count)


@nb.njit(cache=True)
def _game_over(
    net: Network,
    vals: np.ndarray,
    goals_evaluated: bool,
    g: int,
    steps: int,
    max_steps: int,
    out_goals: np.ndarray,
    error: np.ndarray,
) -> bool:
    """Whether playout ``g`` ends at the state in ``vals``: its goals (or -1s past ``max_steps``)
    go to ``out_goals[g]``; a terminal state without a goal for some role sets ``error``."""
    nroles = net.header[H_NROLES]
    if vals[net.header[H_TERMINAL]] == 1:
        if not goals_evaluated:
            _eval(net, vals, 1)
        goals = np.empty(nroles, dtype=np.int64)
        ngoals = np.empty(nroles, dtype=np.int64)
        _read_goals(net, vals, goals, ngoals)
        for r in range(nroles):
            if ngoals[r] == 0:
                error[0] = 2
                error[1] = r
                return True
            out_goals[g, r] = goals[r]
        return True
    if steps >= max_steps:
        for r in range(nroles):
            out_goals[g, r] = -1
        return True
    return False


@nb.njit(cache=True)
def _random_joint(net: Network, vals: np.ndarray, rng: np.ndarray, does: np.ndarray, error: np.ndarray) -> bool:
    """A uniformly random legal move for each role into ``does``; False, with ``error`` set, if a role has none.

    Both evaluators draw through this, so they play the same games for the same ``rng``.
    """
    lptr = net.legal_ptr
    lnode = net.legal_node
    ldoes = net.legal_does
    for r in range(net.header[H_NROLES]):
        n = 0
        for k in range(lptr[r], lptr[r + 1]):
            n += vals[lnode[k]]
        if n == 0:
            error[0] = 1
            error[1] = r
            return False
        j = rng_below(rng, n)
        for k in range(lptr[r], lptr[r + 1]):
            if vals[lnode[k]] == 1:
                if j == 0:
                    does[r] = ldoes[k]
                    break
                j -= 1
    return True


@nb.njit(cache=True)
def _check_playout_arrays(
    net: Network,
    base0: np.ndarray,
    count: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
) -> None:
    if base0.shape[0] != net.header[H_NBASE] or count < 0:
        raise ValueError("playouts: base0 holds one bit per base proposition and count is not negative")
    if out_goals.shape[0] < count or out_goals.shape[1] < net.header[H_NROLES] or out_lengths.shape[0] < count:
        raise ValueError("playouts: out_goals holds (count, roles) entries and out_lengths count")
    if error.shape[0] < 2:
        raise ValueError("playouts: error holds two entries")


@nb.njit(cache=True)
def pn_playouts(
    net: Network,
    base0: np.ndarray,
    count: int,
    rng: np.ndarray,
    max_steps: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
) -> int:
    """Play ``count`` uniformly random games from ``base0``; returns the number of transitions.

    A transition is the legal moves of every role, the terminal test and the
    next state. ``error`` gets ``[1, role]`` when a role has no legal move in a
    non-terminal state and ``[2, role]`` when a terminal state gives a role no
    goal; the playouts stop there.
    """
    header = net.header
    nbase = header[1]
    _check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    vals = np.zeros(header[0], dtype=np.uint8)
    base = np.empty(nbase, dtype=np.uint8)
    nxt = np.empty(nbase, dtype=np.uint8)
    does = np.full(header[3], -1, dtype=np.int32)
    transitions = 0
    for g in range(count):
        base[:] = base0
        steps = 0
        while True:
            _load(net, vals, base)
            if _game_over(net, vals, False, g, steps, max_steps, out_goals, error):
                break
            if not _random_joint(net, vals, rng, does, error):
                return transitions
            _next(net, vals, does, nxt)
            base[:] = nxt
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions


# --- incremental evaluation ----------------------------------------------------------------------
# ``vals`` holds every node's value and ``cnt`` every gate's number of true literals; changing an
# input propagates only along the readers of what changed. A transition in a typical game changes a
# handful of base propositions, so this does far less work than a sweep over the whole network.


@nb.njit(cache=True)
def dn_init(net: Network, vals: np.ndarray, cnt: np.ndarray, base: np.ndarray) -> None:
    """Load ``base`` from scratch: every gate evaluated (no move made) and counted."""
    header = net.header
    if base.shape[0] != header[1] or vals.shape[0] < header[0] or cnt.shape[0] < header[0]:
        raise ValueError("dn_init: base holds one bit per base proposition, vals and cnt an entry per node")
    _dn_init(net, vals, cnt, base)


@nb.njit(cache=True)
def _dn_init(net: Network, vals: np.ndarray, cnt: np.ndarray, base: np.ndarray) -> None:
    header = net.header
    nbase = header[1]
    ptr = net.ptr
    lits = net.lits
    order = net.order
    vals[:] = 0
    vals[1] = 1
    for i in range(nbase):
        vals[2 + i] = base[i]
    _eval(net, vals, 0)
    _eval(net, vals, 1)
    _eval(net, vals, 2)
    for k in range(order.shape[0]):
        g = order[k]
        c = 0
        for j in range(ptr[g], ptr[g + 1]):
            lit = lits[j]
            if vals[lit >> 1] != (lit & 1):
                c += 1
        cnt[g] = c


@nb.njit(cache=True)
def _recompute_block(net: Network, vals: np.ndarray, b: int, stack: np.ndarray, top: int) -> int:
    """Re-evaluate cyclic block ``b`` to its least fixpoint; push its gates that changed. Returns the new top."""
    kind = net.kind
    ptr = net.ptr
    lits = net.lits
    order = net.order
    blocks = net.blocks
    start = blocks[3 * b]
    end = blocks[3 * b + 1]
    old = np.empty(end - start, dtype=np.uint8)
    for k in range(start, end):
        old[k - start] = vals[order[k]]
        vals[order[k]] = 0
    changed = True
    while changed:
        changed = False
        for k in range(start, end):
            g = order[k]
            v = _gate(vals, kind, ptr, lits, g)
            if v != vals[g]:
                vals[g] = v
                changed = True
    for k in range(start, end):
        g = order[k]
        if vals[g] != old[k - start]:
            stack[2 * top] = g
            stack[2 * top + 1] = vals[g]
            top += 1
    return top


@nb.njit(cache=True)
def dn_set(
    net: Network,
    vals: np.ndarray,
    cnt: np.ndarray,
    stack: np.ndarray,
    dirty: np.ndarray,
    node: int,
    value: int,
) -> bool:
    """Set input ``node`` (a base or does node) to ``value`` and update every gate it affects.

    ``stack`` is scratch space (int32, ``4 * nodes`` is ample) and ``dirty`` an int32 array of
    ``2 * blocks + 1`` zeros. Returns False if the stack ran out: ``vals`` and ``cnt`` are then
    inconsistent and the caller reloads with :func:`dn_init`.
    """
    if (
        node < 0
        or node >= net.header[H_NNODES]
        or vals.shape[0] < net.header[H_NNODES]
        or cnt.shape[0] < net.header[H_NNODES]
    ):
        raise ValueError("dn_set: node is a node of the network; vals and cnt hold an entry per node")
    if dirty.shape[0] < 2 * (net.blocks.shape[0] // 3) + 1:
        raise ValueError("dn_set: dirty holds 2 * blocks + 1 entries")
    return _dn_set(net, vals, cnt, stack, dirty, node, value)


@nb.njit(cache=True)
def _dn_set(
    net: Network,
    vals: np.ndarray,
    cnt: np.ndarray,
    stack: np.ndarray,
    dirty: np.ndarray,
    node: int,
    value: int,
) -> bool:
    if vals[node] == value:
        return True
    fo_ptr = net.fanout_ptr
    fo = net.fanout
    cyc = net.cyclic
    thr = net.threshold
    nblocks = net.blocks.shape[0] // 3
    ndirty = 0
    capacity = stack.shape[0] // 2
    if capacity < 1:
        return False
    vals[node] = value
    stack[0] = node
    stack[1] = value
    top = 1
    while True:
        while top > 0:
            top -= 1
            n = stack[2 * top]
            v = stack[2 * top + 1]
            own = cyc[n]
            for k in range(fo_ptr[n], fo_ptr[n + 1]):
                r = fo[k]
                g = r >> 1
                c = cnt[g] + 1 if v != (r & 1) else cnt[g] - 1
                cnt[g] = c
                b = cyc[g]
                if b >= 0:
                    if b != own and dirty[b] == 0:
                        dirty[b] = 1
                        dirty[nblocks + ndirty] = b
                        ndirty += 1
                    continue
                new = 1 if c >= thr[g] else 0
                if new != vals[g]:
                    if top >= capacity:
                        dirty[:] = 0
                        return False
                    vals[g] = new
                    stack[2 * top] = g
                    stack[2 * top + 1] = new
                    top += 1
        if ndirty == 0:
            return True
        ndirty -= 1
        b = dirty[nblocks + ndirty]
        dirty[b] = 0
        if top + (net.blocks[3 * b + 1] - net.blocks[3 * b]) >= capacity:
            dirty[:] = 0
            return False
        top = _recompute_block(net, vals, b, stack, top)


@nb.njit(cache=True)
def _read_goals(net: Network, vals: np.ndarray, out: np.ndarray, count: np.ndarray) -> None:
    nroles = net.header[H_NROLES]
    gptr = net.goal_ptr
    gnode = net.goal_node
    gval = net.goal_value
    seen = np.zeros(101, dtype=np.uint8)
    for r in range(nroles):
        best = -1
        n = 0
        seen[:] = 0
        for k in range(gptr[r], gptr[r + 1]):
            if vals[gnode[k]] == 1:
                v = gval[k]
                if seen[v] == 0:
                    seen[v] = 1
                    n += 1
                if v > best:
                    best = v
        out[r] = best
        count[r] = n


@nb.njit(cache=True)
def dn_playouts(
    net: Network,
    base0: np.ndarray,
    count: int,
    rng: np.ndarray,
    max_steps: int,
    out_goals: np.ndarray,
    out_lengths: np.ndarray,
    error: np.ndarray,
    scratch: int,
) -> int:
    """:func:`pn_playouts` on the incremental evaluator: the same games for the same ``rng``, faster.

    ``scratch`` is the size of the propagation stack (0: ample); when it runs out, the step is
    evaluated from scratch instead.
    """
    header = net.header
    nnodes = header[0]
    nbase = header[1]
    nroles = header[3]
    nxt_node = net.next
    _check_playout_arrays(net, base0, count, out_goals, out_lengths, error)
    vals = np.zeros(nnodes, dtype=np.uint8)
    cnt = np.zeros(nnodes, dtype=np.int32)
    stack = np.empty(scratch if scratch > 0 else 4 * nnodes + 64, dtype=np.int32)
    dirty = np.zeros(2 * (net.blocks.shape[0] // 3) + 1, dtype=np.int32)
    nxt = np.empty(nbase, dtype=np.uint8)
    does = np.full(nroles, -1, dtype=np.int32)
    _dn_init(net, vals, cnt, base0)
    transitions = 0
    for g in range(count):
        if g > 0:
            for i in range(nbase):
                if not _dn_set(net, vals, cnt, stack, dirty, 2 + i, base0[i]):
                    _dn_init(net, vals, cnt, base0)
                    break
        steps = 0
        while True:
            if _game_over(net, vals, True, g, steps, max_steps, out_goals, error):
                break
            if not _random_joint(net, vals, rng, does, error):
                return transitions
            ok = True
            for r in range(nroles):
                if does[r] >= 0:
                    ok = ok and _dn_set(net, vals, cnt, stack, dirty, does[r], 1)
            if not ok:  # scratch space ran out: evaluate this step from scratch
                nxt[:] = vals[2 : 2 + nbase]
                _dn_init(net, vals, cnt, nxt)
                for r in range(nroles):
                    if does[r] >= 0:
                        vals[does[r]] = 1
                _eval(net, vals, 2)
            for i in range(nbase):
                nxt[i] = vals[nxt_node[i]]
            if ok:
                for r in range(nroles):
                    if does[r] >= 0:
                        ok = ok and _dn_set(net, vals, cnt, stack, dirty, does[r], 0)
            for i in range(nbase):
                if ok and vals[2 + i] != nxt[i]:
                    ok = _dn_set(net, vals, cnt, stack, dirty, 2 + i, nxt[i])
            if not ok:
                _dn_init(net, vals, cnt, nxt)
            steps += 1
            transitions += 1
        if error[0] != 0:
            return transitions
        out_lengths[g] = steps
    return transitions


# --- building -----------------------------------------------------------------------------------


class _Builder:
    def __init__(self, gp: GroundProgram, program: Program) -> None:
        self.gp = gp
        self.program = program
        self.sp = program.spelling
        self.where = f"{program.name}: "

    def build(self) -> Propnet:
        gp, sp = self.gp, self.sp
        # every atom gets an int id once; the rest works on ints
        atom_id: dict[Atom, int] = {}
        atoms: list[Atom] = []

        def aid(a: Atom) -> int:
            i = atom_id.get(a)
            if i is None:
                i = atom_id[a] = len(atoms)
                atoms.append(a)
            return i

        heads: list[int] = []
        bodies: list[list[int]] = []  # literals 2 * atom id + negated
        for gr in gp.rules:
            heads.append(aid(gr.head))
            bodies.append([2 * aid(a) for a in gr.pos] + [2 * aid(a) + 1 for a in gr.neg])
        n_atoms = len(atoms)
        inst: list[list[list[int]]] = [[] for _ in range(n_atoms)]
        for h, body in zip(heads, bodies, strict=True):
            inst[h].append(body)
        # inputs
        base_terms = sorted((row[0] for row in gp.dynamic.get("true", ())), key=lambda t: show(t, sp))
        base_texts = [show(t, sp) for t in base_terms]
        node = [-1] * n_atoms  # atom id -> node, once decided
        for i, t in enumerate(base_terms):
            j = atom_id.get(("true", t))
            if j is not None:
                node[j] = 2 + i
        does_atoms = sorted((a for a in atoms if a[0] == "does"), key=lambda a: show(a, sp))
        first_does = 2 + len(base_terms)
        for i, does_atom in enumerate(does_atoms):
            node[atom_id[does_atom]] = first_does + i
        first_gate = first_does + len(does_atoms)
        for j in range(n_atoms):  # inputs that can never hold
            if node[j] < 0 and not inst[j]:
                node[j] = FALSE
        derived = [j for j in range(n_atoms) if inst[j]]
        edges = [sorted({lit >> 1 for body in inst[j] for lit in body if inst[lit >> 1]}) for j in range(n_atoms)]
        comps = strongly_connected(derived, dict(enumerate(edges)))

        kind: list[int] = []
        ptr: list[int] = [0]
        lits: list[int] = []
        cyclic_of: list[int] = []  # per gate: 0, or an id of its cyclic component

        def new_gate(k: int, literals: list[int], comp_id: int) -> int:
            kind.append(k)
            lits.extend(literals)
            ptr.append(len(lits))
            cyclic_of.append(comp_id)
            return first_gate + len(kind) - 1

        T_POS, T_NEG, F_POS, F_NEG = 2 * TRUE, 2 * TRUE + 1, 2 * FALSE, 2 * FALSE + 1

        def simplify(body: list[int], pending_ok: bool) -> list[int] | None:
            """The body's literals over nodes, constants folded; None if it can never hold.

            Literals on atoms not decided yet (the same cyclic component) stay as ``-1 - 2 * atom``.
            """
            out: list[int] = []
            for lit in body:
                n = node[lit >> 1]
                if n < 0:
                    assert pending_ok
                    out.append(-1 - lit)
                    continue
                nl = 2 * n + (lit & 1)
                if nl in (T_POS, F_NEG):
                    continue
                if nl in (F_POS, T_NEG):
                    return None
                out.append(nl)
            return out

        for ci, comp in enumerate(comps):
            first = comp[0]
            cyc = len(comp) > 1 or first in edges[first]
            if cyc:
                comp_id = ci + 1
                pending: dict[int, list[list[int]]] = {}
                for a in comp:
                    kept_bodies = []
                    for body in inst[a]:
                        sb = simplify(body, True)
                        if sb is not None:
                            kept_bodies.append(sb)
                    pending[a] = kept_bodies
                # layout: the AND gates first, then one OR gate per atom of the component
                n_and = sum(1 for a in comp for body in pending[a] if len(body) != 1)
                base_id = first_gate + len(kind)
                gate_ids = {a: base_id + n_and + i for i, a in enumerate(comp)}
                or_inputs: dict[int, list[int]] = {a: [] for a in comp}
                and_gates: list[tuple[int, list[int]]] = []
                for a in comp:
                    for body in pending[a]:
                        resolved = [x if x >= 0 else 2 * gate_ids[(-1 - x) >> 1] + ((-1 - x) & 1) for x in body]
                        if len(resolved) == 1:
                            or_inputs[a].append(resolved[0])
                        else:
                            and_gates.append((a, resolved))
                for a, resolved in and_gates:
                    or_inputs[a].append(2 * new_gate(AND, resolved, comp_id))
                for a in comp:
                    gid = new_gate(OR, or_inputs[a], comp_id)
                    assert gid == gate_ids[a]
                    node[a] = gid
                continue
            a = first
            uniq: set[tuple[int, ...]] = set()
            always = False
            for body in inst[a]:
                sb = simplify(body, False)
                if sb is None:
                    continue
                if not sb:
                    always = True
                    break
                uniq.add(tuple(sorted(set(sb))))
            if always:
                node[a] = TRUE
            elif not uniq:
                node[a] = FALSE
            elif len(uniq) == 1:
                (only,) = uniq
                if len(only) == 1 and only[0] % 2 == 0:
                    node[a] = only[0] >> 1  # an alias
                else:
                    node[a] = new_gate(AND, list(only), 0)
            else:
                inputs = []
                for body_t in sorted(uniq):
                    if len(body_t) == 1:
                        inputs.append(body_t[0])
                    else:
                        inputs.append(2 * new_gate(AND, list(body_t), 0))
                node[a] = new_gate(OR, sorted(set(inputs)), 0)

        def out_node(atom: Atom) -> int:
            j = atom_id.get(atom)
            if j is not None:
                return node[j]
            if gp.holds_statically(atom):
                return TRUE
            return FALSE

        roles = gp.roles
        # legal moves
        legal_ptr = [0]
        legal_node: list[int] = []
        legal_does: list[int] = []
        move_texts: list[list[str]] = []
        legal_rows = gp.rows("legal")
        for r in roles:
            entries = []
            for row in legal_rows:
                if row[0] != r:
                    continue
                n = out_node(("legal", r, row[1]))
                if n == FALSE:
                    continue
                dj = atom_id.get(("does", r, row[1]))
                d = node[dj] if dj is not None and node[dj] >= first_does else -1
                entries.append((show(row[1], sp), n, d))
            entries.sort()
            move_texts.append([e[0] for e in entries])
            legal_node.extend(e[1] for e in entries)
            legal_does.extend(e[2] for e in entries)
            legal_ptr.append(len(legal_node))
        max_legal = max((legal_ptr[i + 1] - legal_ptr[i] for i in range(len(roles))), default=0)
        terminal = out_node(("terminal",))
        # goals
        goal_ptr = [0]
        goal_node: list[int] = []
        goal_value: list[int] = []
        goal_rows = gp.rows("goal")
        for r in roles:
            for row in sorted(goal_rows, key=lambda rw: show(rw[1], sp)):
                if row[0] != r:
                    continue
                n = out_node(("goal", r, row[1]))
                if n == FALSE:
                    continue
                value = row[1]
                if not (isinstance(value, str) and value.isdigit() and 0 <= int(value) <= 100):
                    line = next((g.line for g in gp.rules if g.head == ("goal", r, value)), None)
                    line = line or self.program.defined_at.get("goal")
                    at = f"line {line}: " if line else ""
                    raise GDLError(
                        f"{self.where}{at}goal value {show(value, sp)} of role {sp.get(r, r)} is not an integer "
                        "from 0 to 100",
                        line,
                    )
                goal_node.append(n)
                goal_value.append(int(value))
            goal_ptr.append(len(goal_node))
        next_node = [out_node(("next", t)) for t in base_terms]
        init_rows = gp.static.get("init", set())
        init = [1 if (t,) in init_rows else 0 for t in base_terms]

        n_gates = len(kind)
        n_nodes = first_gate + n_gates
        # phases: the gates each output needs, by backward reachability
        ptr_arr = np.array(ptr, dtype=np.int64)
        lits_arr = np.array(lits, dtype=np.int64)

        def ancestors(outputs: list[int], exclude: set[int]) -> list[int]:
            seen: set[int] = set()
            stack = [n for n in outputs if n >= first_gate]
            while stack:
                n = stack.pop()
                if n in seen or n in exclude:
                    continue
                seen.add(n)
                g = n - first_gate
                for lit in lits_arr[ptr_arr[g] : ptr_arr[g + 1]]:
                    m = int(lit) >> 1
                    if m >= first_gate and m not in seen:
                        stack.append(m)
            return sorted(seen)

        phase_a = ancestors([*legal_node, terminal], set())
        set_a = set(phase_a)
        phase_g = ancestors(goal_node, set_a)
        phase_c = ancestors(next_node, set_a)
        order: list[int] = []
        blocks: list[int] = []
        bounds: list[int] = []
        for gates in (phase_a, phase_g, phase_c):
            bounds.append(len(blocks) // 3)
            k = 0
            while k < len(gates):
                cid = cyclic_of[gates[k] - first_gate]
                j = k
                while j < len(gates) and cyclic_of[gates[j] - first_gate] == cid:
                    j += 1
                blocks.extend([len(order), len(order) + (j - k), 1 if cid else 0])
                order.extend(gates[k:j])
                k = j
            bounds.append(len(blocks) // 3)
        full_kind = [0] * first_gate + kind
        full_ptr = [0] * (first_gate + 1) + ptr[1:]
        header = [
            n_nodes,
            len(base_terms),
            len(does_atoms),
            len(roles),
            terminal,
            *bounds,
            max_legal,
        ]
        i32 = np.int32
        net = Network(
            np.array(header, dtype=i32),
            np.array(full_kind, dtype=i32),
            np.array(full_ptr, dtype=i32),
            np.array(lits, dtype=i32),
            np.array(order, dtype=i32),
            np.array(blocks, dtype=i32),
            np.array(legal_ptr, dtype=i32),
            np.array(legal_node, dtype=i32),
            np.array(legal_does, dtype=i32),
            np.array(goal_ptr, dtype=i32),
            np.array(goal_node, dtype=i32),
            np.array(goal_value, dtype=i32),
            np.array(next_node, dtype=i32),
            np.array(init, dtype=i32),
            *_fanout(n_nodes, first_gate, order, blocks, full_ptr, lits, kind),
        )
        return Propnet(net, roles, base_texts, base_terms, move_texts, n_gates, len(lits))


def _fanout(
    n_nodes: int,
    first_gate: int,
    order: list[int],
    blocks: list[int],
    full_ptr: list[int],
    lits: list[int],
    kinds_of_gates: list[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For incremental evaluation: each node's readers (``2 * gate + negated``) and each gate's cyclic block."""
    used = sorted(set(order))
    readers: list[list[int]] = [[] for _ in range(n_nodes)]
    for g in used:
        lo, hi = full_ptr[g], full_ptr[g + 1]
        for lit in lits[lo:hi]:
            readers[lit >> 1].append(2 * g + (lit & 1))
    fo_ptr = [0]
    fo: list[int] = []
    for n in range(n_nodes):
        if n >= 2:  # the constants never change
            fo.extend(readers[n])
        fo_ptr.append(len(fo))
    cyclic = [-1] * n_nodes
    for b in range(len(blocks) // 3):
        start, end, cyc = blocks[3 * b : 3 * b + 3]
        if cyc:
            for k in range(start, end):
                cyclic[order[k]] = b
    # a gate is true when its count of true literals reaches its threshold: all (AND) or one (OR)
    kinds = [0] * first_gate + kinds_of_gates
    threshold = [full_ptr[n + 1] - full_ptr[n] if kinds[n] == AND else 1 for n in range(first_gate, n_nodes)]
    i32 = np.int32
    return (
        np.array(fo_ptr, dtype=i32),
        np.array(fo, dtype=i32),
        np.array(cyclic, dtype=i32),
        np.array([0] * first_gate + threshold, dtype=i32),
    )


def build_propnet(gp: GroundProgram, program: Program) -> Propnet:
    """The propnet of a ground program."""
    return _Builder(gp, program).build()
