"""The propositional network of a rule sheet: its arrays by name (:class:`Network`) and what they mean.

Nodes are numbered: 0 is *false*, 1 is *true*, then one node per base
proposition (``true`` facts: the state), one per ``does`` input, then the
gates. A gate is an AND or an OR over literals ``2 * node + negated``; gates
are numbered in topological order, except that a set of mutually recursive
gates (a positive cycle in the ground program) forms a *cyclic block*,
evaluated to its least fixpoint. :mod:`ggp.gdl.propnet` builds a network,
:mod:`ggp.gdl.evaluate` and :mod:`ggp.gdl.differential` run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

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
    #: For the differential evaluator: each node's readers (``fanout_ptr[n]`` to ``fanout_ptr[n + 1]``),
    #: as ``4 * gate + 2 * (gate in a cyclic block) + negated``; each gate's cyclic block (-1: none)
    #: and threshold (how many true literals make it true).
    fanout_ptr: np.ndarray
    fanout: np.ndarray
    cyclic: np.ndarray
    threshold: np.ndarray
    #: Per node, the legal entries it decides (``legal_of_ptr[n]`` to ``legal_of_ptr[n + 1]`` in ``legal_of``),
    #: and per legal entry its role: how the differential evaluator keeps each role's legal set.
    legal_of_ptr: np.ndarray
    legal_of: np.ndarray
    legal_role: np.ndarray
    #: Per node, the base propositions whose next value it is, or which it is (``next_of_ptr[n]`` to
    #: ``next_of_ptr[n + 1]`` in ``next_of``): a step looks only at those whose node changed.
    next_of_ptr: np.ndarray
    next_of: np.ndarray
    #: Per node: 1 if it decides a legal entry, plus 2 if a base proposition watches it.
    watch: np.ndarray
    #: For the differential evaluator: per gate, its guard (1, the node *true*: none), an input of an AND gate
    #: read by very many gates (Amazons' turn facts), left out of the gate's count and fanout: the gate is
    #: its guard AND its count at the threshold. Per node, the gates it guards (``guarded_ptr[n]`` to
    #: ``guarded_ptr[n + 1]`` in ``guarded``; the differential evaluator keeps, in the same ranges, the gates whose
    #: counts stand at the threshold: those a change of the guard sets).
    guard: np.ndarray
    guarded_ptr: np.ndarray
    guarded: np.ndarray


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
