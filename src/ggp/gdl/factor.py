"""Independent sub-games of a rule sheet, and each one as a game of its own (Sancho's factorisation).

Some sheets are two or more games played side by side: connectFourSimultaneous is two boards of connect
four, each role dropping on one while the other drops on the other; chinook is checkers on the odd squares
and on the even ones. A role's move there changes one board only, so a search of the whole game (the pairs of
moves, 64 a step on the two boards of eight columns) spreads its samples over choices that do not meet.
Searching the board where the role moves now, as a game of its own, is searching a turn-taking game of 8.

:func:`find_factors` reads the ground program: a base fact belongs with every fact and move its ``next`` rule
reads, a move with every fact its ``legal`` rule reads (through the views in between); views that only
``terminal`` and ``goal`` read join nothing, since they decide the end, not the play. The connected groups
that hold moves are the factors; base facts that no move touches (a step counter) are kept in every factor.

:func:`factor_sheet` writes one factor as a ground rule sheet: the other factors' facts stay as they are
(``(<= (next p) (true p))``), their moves are gone, and a role with none of the factor's moves legal has the
one move :data:`PASS`; the factor ends when no role has one of its moves, or where the whole game ends. Its
base facts are the whole game's, so a state of the game is a state of the factor (:func:`factor_state`).

>>> import ggp
>>> from ggp.gdl.grounder import ground
>>> game = ggp.load("../shared/corpus/kif/connectFourSimultaneous.kif")
>>> factors = find_factors(ground(game.program))
>>> len(factors.groups), [len(g.moves) for g in factors.groups]
(2, [16, 16])
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .grounder import GroundProgram, GroundRule
from .network import H_NBASE, H_NDOES, H_NNODES, Propnet
from .sheet import Atom, Program, Term, show

#: The move of a role that has none of the factor's moves legal (the other factors' moves, unseen here).
PASS = "factor_pass"
#: The view that holds where a role has one of the factor's moves legal.
_ANY = "factor_any"
#: Most ground rules a sheet may have for its factors to be looked for (the analysis is linear in them).
MAX_RULES = 2_000_000
#: Most gates a network may have for :func:`network_splits` to look (about a second of Python per 500,000).
MAX_GATES = 300_000


@dataclass(frozen=True)
class Factor:
    """One independent sub-game: its base facts and moves (ground atoms' KIF texts, ``(does r m)``'s ``r m``)."""

    facts: frozenset[Term]
    moves: frozenset[tuple[str, Term]]


@dataclass(frozen=True)
class Factors:
    """The factors of a sheet, and the base facts no move touches (kept in every factor)."""

    groups: tuple[Factor, ...]
    neutral: frozenset[Term]


class _Union:
    def __init__(self) -> None:
        self.parent: dict[Atom, Atom] = {}

    def find(self, a: Atom) -> Atom:
        parent = self.parent
        root = parent.setdefault(a, a)
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:  # (path compression)
            parent[a], a = root, parent[a]
        return root

    def union(self, a: Atom, b: Atom) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def find_factors(gp: GroundProgram) -> Factors | None:
    """The independent sub-games of the ground program ``gp``, or None where there are fewer than two."""
    if len(gp.rules) > MAX_RULES:
        return None
    by_head: dict[Atom, list[GroundRule]] = {}
    for rule in gp.rules:
        by_head.setdefault(rule.head, []).append(rule)
    uf = _Union()
    seen: set[Atom] = set()

    def reach(start: Atom) -> None:
        # every view under a next or legal output joins its body's atoms (iterative: views may nest deeply)
        stack = [start]
        while stack:
            atom = stack.pop()
            if atom in seen:
                continue
            seen.add(atom)
            uf.find(atom)
            for rule in by_head.get(atom, ()):
                for b in (*rule.pos, *rule.neg):
                    uf.union(atom, b)
                    if b[0] not in ("true", "does"):
                        stack.append(b)

    facts = {row[0] for row in gp.rows("true")}
    moves: set[tuple[str, Term]] = set()
    for rule in gp.rules:
        head = rule.head
        if head[0] == "next":
            uf.union(head, ("true", head[1]))
            facts.add(head[1])
            reach(head)
        elif head[0] == "legal":
            uf.union(head, ("does", head[1], head[2]))
            moves.add((str(head[1]), head[2]))
            reach(head)
    for row in gp.static.get("legal", ()):
        moves.add((str(row[0]), row[1]))
        uf.find(("does", row[0], row[1]))
    for row in gp.static.get("next", ()):
        facts.add(row[0])
    groups: dict[Atom, tuple[set[Term], set[tuple[str, Term]]]] = {}
    for f in facts:
        groups.setdefault(uf.find(("true", f)), (set(), set()))[0].add(f)
    for r, m in moves:
        groups.setdefault(uf.find(("does", r, m)), (set(), set()))[1].add((r, m))
    with_moves = [Factor(frozenset(fs), frozenset(ms)) for fs, ms in groups.values() if ms and fs]
    if len(with_moves) < 2:
        return None
    neutral = frozenset(f for fs, ms in groups.values() if not ms for f in fs)
    with_moves.sort(key=lambda g: sorted(map(str, g.facts))[0] if g.facts else "")
    return Factors(tuple(with_moves), neutral)


def network_splits(propnet: Propnet) -> bool:
    """Whether ``propnet`` falls into two or more groups of base facts and moves that no ``next`` or ``legal``
    output links (:func:`find_factors`'s test on the compiled network: cheap, and at hand even where the
    network came from the cache and the sheet was never grounded in this process). False past
    :data:`MAX_GATES` gates."""
    net = propnet.net
    if propnet.num_gates > MAX_GATES:
        return False
    n_base = int(net.header[H_NBASE])
    first_gate = 2 + n_base + int(net.header[H_NDOES])
    n_nodes = int(net.header[H_NNODES])
    parent = list(range(n_nodes))

    def find(a: int) -> int:
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:
            parent[a], a = root, parent[a]
        return root

    def union(a: int, b: int) -> None:
        if a >= 2 and b >= 2:  # (never through the constants)
            parent[find(a)] = find(b)

    ptr, lits = net.ptr.tolist(), net.lits.tolist()
    stack: list[int] = []
    for b, out in enumerate(net.next.tolist()):
        union(2 + b, out)
        stack.append(out)
    does = [d for d in net.legal_does.tolist()]
    for node, d in zip(net.legal_node.tolist(), does, strict=True):
        union(d, node)
        stack.append(node)
    seen = bytearray(n_nodes)
    while stack:
        g = stack.pop()
        if g < first_gate or seen[g]:
            continue
        seen[g] = 1
        for lit in lits[ptr[g] : ptr[g + 1]]:
            n = lit >> 1
            union(g, n)
            if n >= first_gate:
                stack.append(n)
    with_moves = {find(d) for d in does if d >= 2}
    with_facts = {find(2 + b) for b in range(n_base)}
    return len(with_moves & with_facts) >= 2


_NAME = re.compile(r"^[a-z][a-z0-9_\-]*$")


def factor_sheet(gp: GroundProgram, program: Program, factors: Factors, index: int) -> str:
    """The ground rule sheet of factor ``index`` of ``factors`` (see the module)."""
    factor = factors.groups[index]
    sp = program.spelling
    renamed: dict[str, str] = {}

    def rel(name: str) -> str:
        # the grounder's own relations ("next 225.2") are not KIF names: each gets one that is
        if name in renamed:
            return renamed[name]
        got = name if _NAME.match(name) else f"factor_r{len(renamed)}"
        renamed[name] = got
        return got

    def atom_text(a: Atom) -> str:
        name = rel(str(a[0]))
        head = show(a[0], sp) if name == a[0] else name  # (a renamed relation has no spelling of its own)
        return head if len(a) == 1 else "(" + " ".join([head, *(show(t, sp) for t in a[1:])]) + ")"

    keep_next = factor.facts | factors.neutral
    own = factor.moves
    lines: list[str] = [f"(role {show(r, sp)})" for r in program.roles]
    lines += [f"(init {show(row[0], sp)})" for row in sorted(gp.static.get("init", ()), key=str)]
    frozen: set[Term] = set()
    for row in gp.rows("true"):
        if row[0] not in keep_next:
            frozen.add(row[0])
    for rule in gp.rules:
        head = rule.head
        if head[0] == "next" and head[1] not in keep_next:
            continue
        if head[0] == "legal" and (str(head[1]), head[2]) not in own:
            continue
        if any(b[0] == "does" and (str(b[1]), b[2]) not in own for b in rule.pos):
            continue  # (a move of another factor: never made here)
        body = [atom_text(b) for b in rule.pos] + [f"(not {atom_text(b)})" for b in rule.neg]
        lines.append(f"(<= {atom_text(head)} {' '.join(body)})" if body else atom_text(head))
        if head[0] == "legal":
            lines.append(
                f"(<= ({_ANY} {show(head[1], sp)}) {' '.join(body)})" if body else f"({_ANY} {show(head[1], sp)})"
            )
    for relation in ("legal", "goal", "next"):
        for row in sorted(gp.static.get(relation, ()), key=str):
            if relation == "legal" and (str(row[0]), row[1]) not in own:
                continue
            if relation == "next" and row[0] not in keep_next:
                continue
            lines.append(atom_text((relation, *row)))
            if relation == "legal":
                lines.append(f"({_ANY} {show(row[0], sp)})")
    if gp.static.get("terminal"):
        lines.append("terminal")
    # Every role passing happens only where the factor has ended, so the second rule never holds; it is
    # there so that the grounder, which finds the facts a sheet can reach from its init, keeps each one.
    all_pass = " ".join(f"(does {show(r, sp)} {PASS})" for r in program.roles)
    for fact in sorted(frozen, key=str):
        text = show(fact, sp)
        lines.append(f"(<= (next {text}) (true {text}))")
        lines.append(f"(<= (next {text}) {all_pass})")
    for r in program.roles:
        lines.append(f"(<= (legal {show(r, sp)} {PASS}) (not ({_ANY} {show(r, sp)})))")
    lines.append("(<= terminal " + " ".join(f"(not ({_ANY} {show(r, sp)}))" for r in program.roles) + ")")
    return "\n".join(lines) + "\n"


__all__ = ["PASS", "Factor", "Factors", "factor_sheet", "find_factors", "network_splits"]
