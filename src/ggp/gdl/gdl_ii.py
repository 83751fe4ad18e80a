"""GDL-II's two keywords read into GDL-I's terms, so that every engine plays them unchanged.

GDL-II (Thielscher 2010) adds the role ``random`` (chance: it moves uniformly among its legal moves, takes no
seat and needs no goal) and ``(sees ?role ?percept)``: what a role perceives of a transition, derived, like
``next``, from the state and the joint move. Both are lowered here, on the read rules:

* each ``(<= (sees R P) body)`` becomes ``(<= (next (sees R P)) body)``: the percepts of a transition are
  fluents of the state it leads to, held for one step (no rule may keep them: a ``next`` or ``true`` of a
  variable fluent is refused in a GDL-II sheet), so the prover, the grounder
  and the compiled propnet compute them as they compute any fluent, and a playout through the kernel carries
  them at no extra cost;
* ``random`` gets ``(goal random 0)``, and goal rules for every role (``(goal ?p 50)``) leave it out: the
  engines keep chance as a role of the joint move, and the match loop, the host and the OpenSpiel adapter
  play its move uniformly.

Neither name is reserved in GDL-I, so a sheet is GDL-II only when it uses them as GDL-II does: a ``sees``
rule about a role, or a role ``random`` that no goal rule names.

>>> from ggp.gdl.parser import parse_program
>>> p = parse_program("(role p) (role random) (init s) (<= (legal random (deal ?c)) (card ?c)) (card a)"
...                   " (legal p noop) (<= (sees p ?c) (does random (deal ?c))) (<= terminal (true t))"
...                   " (goal p 100)")
>>> p.gdl_ii, [r.head for r in p.rules if r.relation in ("next", "goal")]
(True, [('next', ('sees', 'p', '?c')), ('goal', 'p', '100'), ('goal', 'random', '0')])
"""

from __future__ import annotations

from .sheet import GDLError, Literal, Program, Rule, show

#: The role that stands for chance in GDL-II.
CHANCE = "random"
#: The relation of percepts, and the fluent a percept becomes in the state after the transition.
SEES = "sees"


def _fail(where: str, line: int, what: str) -> GDLError:
    return GDLError(f"{where}line {line}: {what}", line)


def _is_variable(term: object) -> bool:
    return isinstance(term, str) and term.startswith("?")


def is_gdl_ii(program: Program) -> bool:
    """Whether the read sheet uses ``sees`` or ``random`` as GDL-II does."""
    roles = {rule.head[1] for rule in program.rules if rule.relation == "role"}
    for rule in program.rules:
        if rule.relation == SEES and len(rule.head) == 3:
            seer = rule.head[1]
            if isinstance(seer, str) and (seer in roles or seer.startswith("?")):
                return True
    return CHANCE in roles and not _random_has_goal(program)


def _random_has_goal(program: Program) -> bool:
    """Whether a goal rule names ``random`` itself (a rule for every role, ``(goal ?p 50)``, does not make
    chance a player: GDL-II sheets write those too)."""
    return any(rule.relation == "goal" and len(rule.head) == 3 and rule.head[1] == CHANCE for rule in program.rules)


def lower_gdl_ii(program: Program, where: str) -> None:
    """Check a GDL-II sheet's uses of ``sees`` and ``random`` and rewrite them into GDL-I terms (see the
    module); a GDL-I sheet is left alone. Raises :class:`GDLError` naming the line of a misuse."""
    if not is_gdl_ii(program):
        return
    sp = program.spelling
    roles = [rule.head[1] for rule in program.rules if rule.relation == "role"]
    players = [r for r in roles if r != CHANCE]
    if not players:
        raise GDLError(f"{where}the sheet has no role but random: chance alone is no game (declare a player)")
    rules: list[Rule] = []
    for rule in program.rules:
        for lit in rule.body:
            if lit.kind in ("pos", "neg") and lit.atom[0] == SEES:
                raise _fail(
                    where,
                    lit.line,
                    "'sees' cannot be used in a rule's body: it says what a role perceives of a transition "
                    "(like 'next', only as a head); keep what must be remembered in a fluent",
                )
            if lit.kind in ("pos", "neg") and lit.atom[0] == "true" and _is_variable(lit.atom[1]):
                raise _fail(
                    where,
                    lit.line,
                    f"(true {lit.atom[1]}) in a GDL-II sheet would read percepts, which only their role "
                    "perceives: name the fluents this rule reads",
                )
            if lit.kind in ("pos", "neg") and lit.atom[0] == "true" and _is_sees_term(lit.atom[1]):
                raise _fail(
                    where,
                    lit.line,
                    "(true (sees ...)) reads percepts as a fluent; in GDL-II only the "
                    "role perceives them (remember what it must in a fluent of another name)",
                )
        if rule.relation == "next" and len(rule.head) == 2 and _is_variable(rule.head[1]):
            raise _fail(
                where,
                rule.line,
                f"(next {rule.head[1]}) in a GDL-II sheet would carry percepts on to the next step (a percept "
                "holds for the step it is perceived in): name the fluents this rule keeps",
            )
        if rule.relation in ("init", "next", "base") and len(rule.head) == 2 and _is_sees_term(rule.head[1]):
            raise _fail(
                where,
                rule.line,
                f"a fluent named 'sees' ({show(rule.head[1], sp)}) would be taken "
                "for a percept in a GDL-II sheet; rename it",
            )
        if rule.relation == "goal" and len(rule.head) == 3 and rule.head[1] == CHANCE:
            raise _fail(where, rule.line, "random is chance in a GDL-II sheet: it takes no seat and has no goal")
        if rule.relation == "goal" and len(rule.head) == 3 and CHANCE in roles and _is_variable(rule.head[1]):
            body = (*rule.body, Literal("distinct", (rule.head[1], CHANCE), rule.line))
            rules.append(Rule(rule.head, body, rule.line))
            continue
        if rule.relation == SEES:
            if len(rule.head) != 3:
                raise _fail(where, rule.line, "'sees' takes a role and a percept: (sees ?role ?percept)")
            seer = rule.head[1]
            if seer == CHANCE:
                raise _fail(where, rule.line, "random is chance and perceives nothing: 'sees' is about players")
            if isinstance(seer, str) and not seer.startswith("?") and seer not in roles:
                raise _fail(where, rule.line, f"(sees {show(seer, sp)} ...) names no role of the sheet")
            rules.append(Rule(("next", (SEES, seer, rule.head[2])), _seer_is_player(rule), rule.line))
            continue
        rules.append(rule)
    if CHANCE in roles:
        line = next(rule.line for rule in program.rules if rule.relation == "role" and rule.head[1] == CHANCE)
        rules.append(Rule(("goal", CHANCE, "0"), (), line))
    program.rules = rules
    program.gdl_ii = True


def percept_of(fact: str, role: str) -> str | None:
    """The percept a state's fact ``(sees ROLE P)`` gives ``role`` (``P``'s text), or None for any other fact.

    >>> percept_of("(sees first (your_card king))", "first"), percept_of("(holds first king)", "first")
    ('(your_card king)', None)
    """
    prefix = f"({SEES} {role} "
    return fact[len(prefix) : -1] if fact[: len(prefix)].lower() == prefix.lower() else None


def chance_role(program: Program) -> str | None:
    """The sheet's spelling of ``random`` when it is a GDL-II sheet with chance, else None."""
    if program.gdl_ii and CHANCE in program.roles:
        return program.spelling.get(CHANCE, CHANCE)
    return None


def _is_sees_term(term: object) -> bool:
    return isinstance(term, tuple) and len(term) == 3 and term[0] == SEES


def _seer_is_player(rule: Rule) -> tuple[Literal, ...]:
    """The body of a ``sees`` rule, with ``(distinct ?r random)`` added when the seer is a variable (chance
    perceives nothing, and the rule must stay safe)."""
    seer = rule.head[1]
    if isinstance(seer, str) and seer.startswith("?"):
        return (*rule.body, Literal("distinct", (seer, CHANCE), rule.line))
    return rule.body
