"""Rewrites of a program before it is grounded (:mod:`ggp.gdl.grounder`): fluents only frame rules keep
are frozen into static facts, and rules are split by variable elimination so that a rule has about as many
instances as the atoms it joins."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from ..core.kif import Term
from .sheet import Literal, Program, Rule, term_vars


def _signature(term: Term) -> tuple[str, int] | None:
    """A fluent's function name and arity (None for a variable: any fluent)."""
    if isinstance(term, str):
        return None if term.startswith("?") else (term, 0)
    return (str(term[0]), len(term) - 1)


def frozen_fluents(program: Program) -> set[tuple[str, int]]:
    """The fluents (by :func:`_signature`) whose facts hold in every state exactly when ``init`` gives them.

    A fluent is frozen when every ``next`` rule that can make one of its facts is a frame rule
    ``(<= (next F) (true F))`` and every fact ``init`` gives it is kept by one: walls of a maze, the board's
    geometry kept in the state. Its ``true`` literals are then as static as ``init``, which keeps rules that
    negate them from looking as if they could reach any argument (a move through a wall, off the board).
    """
    frames: list[Term] = []
    touched: set[tuple[str, int]] = set()
    for rule in program.rules:
        if rule.relation != "next":
            continue
        made = rule.head[1]
        if len(rule.body) == 1 and rule.body[0].kind == "pos" and rule.body[0].atom == ("true", made):
            frames.append(made)
            continue
        sig = _signature(made)
        if sig is None:
            return set()
        touched.add(sig)
    frozen: set[tuple[str, int]] = set()
    thawed: set[tuple[str, int]] = set(touched)
    for rule in program.rules:
        if rule.relation == "init":
            fact = rule.head[1]
            sig = _signature(fact)
            if sig is None or sig in thawed:
                continue
            if any(_instance_of(fact, frame, {}) for frame in frames):
                frozen.add(sig)
            else:  # a fact no frame rule keeps: gone after the first move
                frozen.discard(sig)
                thawed.add(sig)
    return frozen


def _instance_of(term: Term, pattern: Term, binding: dict[str, Term]) -> bool:
    """Whether the ground ``term`` is an instance of ``pattern`` (extending ``binding``)."""
    if isinstance(pattern, str):
        if pattern.startswith("?"):
            if pattern in binding:
                return binding[pattern] == term
            binding[pattern] = term
            return True
        return pattern == term
    if isinstance(term, str) or len(term) != len(pattern):
        return False
    return all(_instance_of(t, p, binding) for t, p in zip(term, pattern, strict=True))


def freeze(program: Program) -> Program:
    """``program`` with the ``true`` literals of frozen fluents read as ``init`` literals."""
    frozen = frozen_fluents(program)
    if not frozen:
        return program

    def thaw(lit: Literal) -> Literal:
        if lit.kind in ("pos", "neg") and lit.atom[0] == "true" and _signature(lit.atom[1]) in frozen:
            return Literal(lit.kind, ("init", lit.atom[1]), lit.line)
        return lit

    rules = [Rule(r.head, tuple(thaw(lit) for lit in r.body), r.line) for r in program.rules]
    return dataclasses.replace(program, rules=rules)


def _vars_of(lits: Iterable[Literal]) -> set[str]:
    out: set[str] = set()
    for lit in lits:
        term_vars(lit.atom, out)
    return out


def decompose(rule: Rule, dynamic: set[str], names: Iterator[int]) -> list[Rule]:
    """``rule`` split into rules with fewer variables each, that together derive the same head atoms.

    A rule's instances are every combination of its variables' values, so a rule that joins literals on
    variables its head does not show can have far more instances than atoms it derives: the frame rule
    ``(<= (next (cell ?x ?y ?p)) (does ?r (move ?a ?b ?c ?d)) (true (cell ?x ?y ?p)) (distinct ...))`` has one
    per move, cell and piece. Variables are eliminated one at a time, as in bucket elimination: the literals
    that use variable ``?v`` (with a literal whose relation is dynamic among them) become a rule of their own
    whose head keeps only the variables the rest of the rule needs, ``(aux ?x ?y)``, and the rule uses that
    head instead (one instance per move and cell, then one per cell and piece). The variable whose
    elimination leaves the fewest shared variables goes first; a literal is only split off with every
    variable of its negations and ``distinct`` bound by its own positive literals. ``names`` numbers the
    new relations (one counter for the whole program: the rules an ``or`` expands to share their line).
    """
    head_vars = term_vars(rule.head)
    lits = list(rule.body)
    out: list[Rule] = []
    dynamic = set(dynamic)
    while True:
        best: tuple[tuple[int, int, str], list[Literal], list[str]] | None = None
        for v in sorted(_vars_of(lits) - head_vars):
            positives = [lit for lit in lits if lit.kind == "pos" and v in term_vars(lit.atom)]
            inside = _vars_of(positives)
            # positive literals over those variables only just filter: in with them (no chain of parts)
            positives += [
                lit for lit in lits if lit.kind == "pos" and lit not in positives and term_vars(lit.atom) <= inside
            ]
            rest = [lit for lit in lits if lit.kind == "pos" and lit not in positives]
            others = [lit for lit in lits if lit.kind != "pos"]
            # conditions go inside when all their variables are bound there, and must if they use one that goes
            conds = [lit for lit in others if term_vars(lit.atom) and term_vars(lit.atom) <= inside]
            outside = head_vars | _vars_of(rest) | _vars_of(lit for lit in others if lit not in conds)
            gone = inside - outside
            if not gone or any(term_vars(lit.atom) & gone and not term_vars(lit.atom) <= inside for lit in others):
                continue
            bucket = positives + conds
            if len(bucket) == len(lits) or not any(str(lit.atom[0]) in dynamic for lit in bucket):
                continue
            keep = sorted(inside & outside)
            score = (len(inside), len(keep), v)
            if best is None or score < best[0]:
                best = (score, bucket, keep)
        if best is None:
            break
        _, bucket, keep = best
        aux = (f"{rule.relation} {rule.line}.{next(names)}", *keep)  # with a space: no symbol of a sheet
        out.append(Rule(aux, tuple(bucket), rule.line))
        dynamic.add(aux[0])
        lits = [lit for lit in lits if lit not in bucket] + [Literal("pos", aux, rule.line)]
    if not out:
        return [rule]
    return [*out, Rule(rule.head, tuple(lits), rule.line)]
