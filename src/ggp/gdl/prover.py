"""The fallback reasoner: GDL rules evaluated top-down, without grounding, for sheets too large to ground.

Some sheets are small to play but huge to ground: ``ruleDepthExponential``
defines ``prereqN`` over every N-bit string (2^20 ground atoms for N = 20),
yet a state asks about a handful of them. :class:`Prover` answers the
questions a state asks (``legal``, ``terminal``, ``goal``, ``next``) by
resolution from the query down, as ggp-base's prover does, with tabling:

- each subgoal (an atom with its variables renamed canonically) is solved
  once per state and its answers kept; the relations that depend on neither
  ``true`` nor ``does`` keep their answers across states (tabled once per
  sheet), and the question of ``next`` reuses the tables its state's
  ``legal``, ``terminal`` and ``goal`` filled (only relations that depend on
  ``does`` are the joint move's own);
- a recursive subgoal is solved to a fixpoint: the goals of a strongly
  connected group of calls are re-run until no answer is added, then all of
  them are complete at once (so left recursion terminates and is complete);
  a relation in no cycle of the rules is solved in one pass;
- negation is by failure over a complete subgoal (the parser has checked the
  negation is stratified);
- rule bodies are compiled to Python (:mod:`ggp.gdl.prover_compile`), one
  function per rule and shape of subgoal: variables are locals, the head is
  matched by comparisons, ``true`` is looked up in the state's facts indexed
  by functor and first argument, and each body literal calls its relation's
  table with a key built in place (no unification, no substitution). A rule
  the compiler leaves out is resolved by generic unification, as every rule
  is with ``Prover(program, compiled=False)``.

The Game API over it is :class:`~ggp.gdl.prover_game.ProverGame`.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..core.kif import Term
from .prover_compile import Unsupported, compile_facts, compile_rule, key_template
from .sheet import Atom, GDLError, GDLLimitError, Literal, Program, Rule, check_bounds, show, term_vars
from .validity import reaches, strongly_connected

#: The Python recursion a proof may use: deep recursive rules nest calls.
_RECURSION = 20_000
#: Most answers one question may find (rules that build ever larger terms would find them forever).
MAX_ANSWERS = 5_000_000
#: Most processor seconds one question may take (of the asking thread's own time, so a busy machine does not
#: trip it): a question past it belongs to a game no clock could play on this reasoner.
MAX_QUESTION_SECONDS = 20.0
#: How deeply an answer's terms may nest (as in a rule sheet's text).
MAX_TERM_DEPTH = 100


def _is_var(t: Term) -> bool:
    return isinstance(t, str) and t[:1] == "?"


def _walk(t: Term, s: dict[str, Term]) -> Term:
    while isinstance(t, str) and t[:1] == "?" and t in s:
        t = s[t]
    return t


def _subst_atom(atom: Atom, s: dict[str, Term]) -> Atom:
    return tuple(_subst(x, s) for x in atom)


def _subst(t: Term, s: dict[str, Term]) -> Term:
    if isinstance(t, str):
        if t[:1] == "?":
            v = s.get(t)
            return t if v is None else _subst(v, s)
        return t
    return tuple(_subst(x, s) for x in t)


def _unify(a: Term, b: Term, s: dict[str, Term]) -> bool:
    """Extend ``s`` so that ``a`` and ``b`` are equal; False (``s`` partly extended) if they cannot be."""
    a = _walk(a, s)
    b = _walk(b, s)
    if a == b:
        return True
    if isinstance(a, str) and a[:1] == "?":
        s[a] = b
        return True
    if isinstance(b, str) and b[:1] == "?":
        s[b] = a
        return True
    if isinstance(a, str) or isinstance(b, str) or len(a) != len(b):
        return False
    return all(_unify(x, y, s) for x, y in zip(a, b, strict=True))


def _ground(t: Term) -> bool:
    if isinstance(t, str):
        return t[:1] != "?"
    return all(_ground(x) for x in t)


def _depth(t: Term) -> int:
    if isinstance(t, str):
        return 0
    return 1 + max(_depth(x) for x in t)


def _canon(atom: Atom) -> Atom:
    """The atom with its variables renamed in order of appearance (the table key of a subgoal)."""
    names: dict[str, str] = {}

    def walk(t: Term) -> Term:
        if isinstance(t, str):
            if t[:1] == "?":
                return names.setdefault(t, f"?\x00{len(names)}")
            return t
        return tuple(walk(x) for x in t)

    return tuple(walk(x) for x in atom)


def _functor(t: Term) -> Term:
    return t if isinstance(t, str) else t[0]


class _Entry:
    """A subgoal's table: its answers (ground atoms) and where its evaluation stands."""

    __slots__ = ("active", "answers", "complete", "depth", "low", "seen", "sweep")

    def __init__(self) -> None:
        self.answers: list[Atom] = []
        self.seen: set[Atom] = set()
        self.complete = False
        self.active = False
        self.depth = 0
        self.low = 0
        self.sweep = -1


class _Context:
    """One state (and joint move, for ``next``): its facts indexed, and its subgoal tables.

    A joint move's context keeps only the relations that depend on ``does`` in its own :attr:`table`; the
    others are the state's, kept in the state's context (its :attr:`state_table`), so ``next`` reuses what
    ``legal``, ``terminal`` and ``goal`` found in the same state.
    """

    __slots__ = ("by_first", "by_functor", "does", "facts", "memo", "state_table", "table")

    def __init__(self, facts: frozenset[Term], does: dict[str, Term] | None, parent: _Context | None = None) -> None:
        self.facts = facts
        self.by_functor: dict[Term, list[Term]]
        self.by_first: dict[tuple[Term, Term], list[Term]]
        if parent is not None and parent.facts is facts:
            self.by_functor = parent.by_functor
            self.by_first = parent.by_first
        else:
            self.by_functor = {}
            self.by_first = {}
            for f in facts:
                if isinstance(f, tuple):
                    self.by_functor.setdefault(f[0], []).append(f)
                    if len(f) > 1:
                        self.by_first.setdefault((f[0], f[1]), []).append(f)
                else:
                    self.by_functor.setdefault(f, []).append(f)
        self.does = does or {}
        self.memo: dict[Any, Any] = {}  # the game's answers in this state (legal moves, terminal, goals)
        self.table: dict[Atom, _Entry] = {}
        self.state_table = parent.table if parent is not None and parent.facts is facts else self.table


class Prover:
    """Tabled top-down evaluation of a checked GDL program (see the module's docstring)."""

    def __init__(self, program: Program, *, compiled: bool = True) -> None:
        self.program = program
        dynamic = reaches(program, {"true", "does"})
        self.static_rel = {r.relation for r in program.rules} - dynamic
        self.move_rel = reaches(program, {"does"})
        edges: dict[str, list[str]] = {}
        for rule in program.rules:
            uses = edges.setdefault(rule.relation, [])
            uses.extend(str(lit.atom[0]) for lit in rule.body if lit.kind in ("pos", "neg"))
        #: The relations in a cycle of the rules: their subgoals are solved to a fixpoint; the others in one pass.
        self.recursive: set[str] = set()
        for comp in strongly_connected(sorted(set(edges) | {d for ds in edges.values() for d in ds}), edges):
            if len(comp) > 1 or comp[0] in edges.get(comp[0], ()):
                self.recursive.update(comp)
        self.rules: dict[tuple[str, int], list[Rule]] = {}
        for rule in program.rules:
            self.rules.setdefault((rule.relation, len(rule.head)), []).append(rule)
        #: Whether rules are compiled to Python functions (:mod:`ggp.gdl.prover_compile`); False: every rule is
        #: resolved by the generic unification below (the reference the compiled rules are tested against).
        self.compiled = compiled
        self.static_table: dict[Atom, _Entry] = {}
        self._bodies: dict[int, list[tuple[Literal, tuple[str, ...]]]] = {
            id(rule): [(lit, tuple(sorted(term_vars(lit.atom)))) for lit in rule.body] for rule in program.rules
        }
        self._rule_vars = {id(rule): tuple(sorted(term_vars(rule.head))) for rule in program.rules}
        self._orders: dict[tuple[int, frozenset[str]], list[Literal]] = {}
        # templates of keys (see prover_compile): their numbers, relation, table and rules' functions
        self._tids: dict[tuple[Term, ...], int] = {}
        self._tpl: list[tuple[Term, ...]] = []
        self._kind: list[int] = []  # 0: the static table, 1: the state's, 2: the joint move's
        self._flat: list[bool] = []  # the relation is not recursive: one pass completes a subgoal
        self._funcs: list[list[Any] | None] = []
        self._env = {
            "SOLVE": self._solve_key,
            "ST": self.static_table,
            "DEEP": self._deep_check,
            "CHECK": self._check_answers,
        }
        self._stack_depth = 0
        self._low = 0
        self._changes = 0
        self._changes_at_ask = 0
        self._cpu_at_ask = time.thread_time()
        self._evals = 0
        self._sweeps = 0
        self._sweep_at: list[int] = []  # the current sweep of the active subgoal at each depth
        self._pending: list[_Entry] = []
        self.lock = threading.RLock()  # the tables are shared: one proof at a time

    # --- queries ---------------------------------------------------------------------------------
    def query(self, atom: Atom) -> tuple[Atom, int]:
        """``atom`` made ready for :meth:`ask` (canonical, with its template's number): a question asked often."""
        key = atom if _ground(atom) else _canon(atom)
        return key, self._tid(key_template(key))

    def ask(self, atom: Atom, ctx: _Context, tid: int = -1) -> list[Atom]:
        """Every ground instance of ``atom`` that holds in ``ctx`` (``atom`` and ``tid`` from :meth:`query`, or
        any atom and no ``tid``)."""
        with self.lock:
            limit = sys.getrecursionlimit()
            if limit < _RECURSION:
                sys.setrecursionlimit(_RECURSION)
            self._stack_depth = 0
            self._low = 1 << 60
            self._changes_at_ask = self._changes
            self._cpu_at_ask = time.thread_time()
            collecting = gc.isenabled()
            gc.disable()  # tables are acyclic; the cyclic collector would rescan them all, again and again
            try:
                return list(self._solve(atom, ctx) if tid < 0 else self._solve_key(atom, tid, ctx))
            except RecursionError:
                self._forget(ctx)
                raise GDLError(
                    f"{self.program.name}: the rules recurse too deeply for the fallback reasoner (asking {show(atom)})"
                ) from None
            except BaseException:
                self._forget(ctx)
                raise
            finally:
                if collecting:
                    gc.enable()
                if limit < _RECURSION:
                    sys.setrecursionlimit(limit)

    def _check(self) -> None:
        check_bounds(f"{self.program.name}: ", "proving")
        if self._changes - self._changes_at_ask > MAX_ANSWERS:
            raise GDLLimitError(
                f"{self.program.name}: the fallback reasoner gave up after {MAX_ANSWERS:,} answers to one "
                "question: the rules build ever larger terms, or the game is too large"
            )
        if time.thread_time() - self._cpu_at_ask > MAX_QUESTION_SECONDS:
            raise GDLLimitError(
                f"{self.program.name}: the fallback reasoner gave up on one question after {MAX_QUESTION_SECONDS:g} s "
                "of processor time: the game is too large to play on it"
            )

    def _check_answers(self, found: int) -> None:
        """A compiled rule's check every 4,096 answers of one subgoal (before they are counted)."""
        self._changes += found
        try:
            self._check()
        finally:
            self._changes -= found

    def _deep_check(self, key: Atom, answer: Atom) -> None:
        if _depth(answer) > MAX_TERM_DEPTH:
            raise GDLLimitError(
                f"{self.program.name}: the fallback reasoner gave up: {show(key)} has answers with "
                f"terms nested over {MAX_TERM_DEPTH} deep (the rules build ever larger terms)"
            )

    def _forget(self, ctx: _Context) -> None:
        """After a proof broke off: drop every table it left unfinished."""
        for table in (ctx.table, ctx.state_table, self.static_table):
            for key in [k for k, e in table.items() if not e.complete]:
                del table[key]
        self._pending.clear()
        self._sweep_at.clear()

    # --- templates and compiled rules ------------------------------------------------------------
    def _tid(self, tpl: tuple[Term, ...]) -> int:
        tid = self._tids.get(tpl)
        if tid is None:
            rel = str(tpl[0])
            tid = self._tids[tpl] = len(self._tpl)
            self._tpl.append(tpl)
            self._kind.append(0 if rel in self.static_rel else 2 if rel in self.move_rel else 1)
            self._flat.append(rel not in self.recursive)
            self._funcs.append(None)
        return tid

    def _site(self, rel: str, tpl: tuple[Term, ...]) -> tuple[int, str]:
        if rel in ("true", "does"):
            raise Unsupported(f"{rel} of another arity")
        tid = self._tid(tpl)
        return tid, ("ST", "SS", "DT")[self._kind[tid]]

    def _rules_for(self, tid: int) -> list[Any]:
        """The functions (or, where a rule is not compiled, the rules) that answer keys of template ``tid``."""
        tpl = self._tpl[tid]
        rules = self.rules.get((str(tpl[0]), len(tpl)), [])
        out: list[Any] = []
        if not self.compiled:
            out = list(rules)
        else:
            facts = [r.head for r in rules if not r.body and _ground(r.head)]
            if facts:
                out.append(compile_facts(facts, tpl))
            for rule in rules:
                if not rule.body and _ground(rule.head):
                    continue
                bodies = self._bodies[id(rule)]

                def order_for(bound: frozenset[str], rule: Rule = rule, bodies: Any = bodies) -> list[Literal]:
                    key = (id(rule), bound)
                    order = self._orders.get(key)
                    if order is None:
                        order = self._orders[key] = self._order(bodies, bound)
                    return order

                deep = rule.relation in self.recursive or rule.relation in ("next", "init")
                fn = compile_rule(rule, tpl, order_for, self._site, self._env, deep)
                out.append(rule if fn is None else fn)
        self._funcs[tid] = out
        return out

    # --- tabled resolution -----------------------------------------------------------------------
    def _solve(self, atom: Atom, ctx: _Context) -> list[Atom]:
        rel = str(atom[0])
        if rel == "true":
            return self._true(atom, ctx)
        if rel == "does":
            return self._does(atom, ctx)
        key = atom if _ground(atom) else _canon(atom)
        return self._solve_key(key, self._tid(key_template(key)), ctx)

    def _solve_key(self, key: Atom, tid: int, ctx: _Context) -> list[Atom]:
        """The answers of ``key`` (canonical, of template number ``tid``), from its table or proved now."""
        kind = self._kind[tid]
        table = self.static_table if kind == 0 else ctx.state_table if kind == 1 else ctx.table
        e = table.get(key)
        if e is None:
            e = table[key] = _Entry()
        elif e.complete:
            return e.answers
        elif e.active:  # a recursive call: the answers so far, and the caller is in the group of e
            self._low = min(self._low, e.depth)
            return e.answers
        elif e.low < len(self._sweep_at) and self._sweep_at[e.low] == e.sweep:
            # a member of a group still being swept, evaluated in this sweep already: its answers so far
            self._low = min(self._low, e.low)
            return e.answers
        self._evals += 1
        if not self._evals & 0x3FF:
            self._check()
        funcs = self._funcs[tid]
        if funcs is None:
            funcs = self._rules_for(tid)
        if self._flat[tid]:
            # nothing this subgoal calls can call it back (its relation is in no cycle): one pass, complete
            self._apply(funcs, key, e, ctx)
            e.complete = True
            return e.answers
        outer_low = self._low
        outer_pending = len(self._pending)
        e.active = True
        e.depth = self._stack_depth
        self._stack_depth += 1
        self._sweep_at.append(0)
        try:
            while True:
                self._low = 1 << 60
                before = self._changes
                self._sweeps += 1
                self._sweep_at[e.depth] = self._sweeps
                self._apply(funcs, key, e, ctx)
                low = self._low
                if low < e.depth or low > e.depth or self._changes == before:
                    break  # part of a group led from below; or not recursive; or the group reached its fixpoint
        finally:
            self._stack_depth -= 1
            self._sweep_at.pop()
            e.active = False
        if low >= e.depth:  # e leads its group (or is alone): the group is complete
            e.complete = True
            for member in self._pending[outer_pending:]:
                member.complete = True
            del self._pending[outer_pending:]
            self._low = outer_low
        else:  # provisional until the group's leader (at depth low) finds its fixpoint
            e.low = low
            e.sweep = self._sweep_at[low]
            self._pending.append(e)
            self._low = min(outer_low, low)
        return e.answers

    def _apply(self, funcs: list[Any], key: Atom, e: _Entry, ctx: _Context) -> None:
        """One pass of a subgoal's rules (compiled functions, or rules left to unification), counting new answers."""
        found = len(e.answers)
        for fn in funcs:
            if fn.__class__ is Rule:
                self._evaluate(fn, key, e, ctx)
            else:
                fn(key, ctx, e.seen, e.answers)
        self._changes += len(e.answers) - found

    def _evaluate(self, rule: Rule, key: Atom, e: _Entry, ctx: _Context) -> None:
        """One rule by generic unification (where it is not compiled): its answers for ``key`` into ``e``."""
        s: dict[str, Term] = {}
        # the rule's variables are the sheet's (?x); the subgoal's are canonical (?\x000): they never meet
        if not _unify(rule.head, key, s):
            return
        bound = frozenset(v for v in self._rule_vars[id(rule)] if _ground(_subst(v, s)))
        order = self._orders.get((id(rule), bound))
        if order is None:
            order = self._orders[(id(rule), bound)] = self._order(self._bodies[id(rule)], bound)
        for found in self._body(order, 0, s, ctx):
            answer = _subst_atom(key, found)
            if answer not in e.seen:
                self._deep_check(key, answer)
                e.seen.add(answer)
                e.answers.append(answer)
                if not len(e.answers) & 0xFFF:
                    self._check_answers(len(e.answers))

    def _body(self, order: list[Literal], i: int, s: dict[str, Term], ctx: _Context) -> Iterator[dict[str, Term]]:
        if i == len(order):
            yield s
            return
        lit = order[i]
        if lit.kind == "distinct":
            if _subst(lit.atom[0], s) != _subst(lit.atom[1], s):
                yield from self._body(order, i + 1, s, ctx)
            return
        if lit.kind == "same":
            t = dict(s)
            if _unify(lit.atom[0], lit.atom[1], t):
                yield from self._body(order, i + 1, t, ctx)
            return
        goal = _subst_atom(lit.atom, s)
        if lit.kind == "neg":
            if not self._solve(goal, ctx):
                yield from self._body(order, i + 1, s, ctx)
            return
        for answer in list(self._solve(goal, ctx)):
            t = dict(s)
            if _unify(goal, answer, t):
                yield from self._body(order, i + 1, t, ctx)

    @staticmethod
    def _order(lits: list[tuple[Literal, tuple[str, ...]]], bound: frozenset[str]) -> list[Literal]:
        """The order to prove a body in, given the variables the head binds: at each point a check whose
        variables are bound, else a fact of the state or move, else the first positive literal left (whose
        answers bind its variables; negations and distinct wait for theirs, as the rule is safe)."""
        left = list(lits)
        known = set(bound)
        out: list[Literal] = []
        while left:
            pick = next((k for k, (_, names) in enumerate(left) if known.issuperset(names)), -1)
            if pick < 0:
                pos = [k for k, (lit, _) in enumerate(left) if lit.kind == "pos"]
                state = [k for k in pos if left[k][0].atom[0] in ("true", "does")]
                pick = state[0] if state else pos[0] if pos else 0
            lit, names = left.pop(pick)
            out.append(lit)
            known.update(names)
        return out

    def _true(self, atom: Atom, ctx: _Context) -> list[Atom]:
        pattern = atom[1]
        if _ground(pattern):
            return [atom] if pattern in ctx.facts else []
        out: list[Atom] = []
        for fact in ctx.by_functor.get(_functor(pattern), ()):
            if _unify(pattern, fact, {}):
                out.append(("true", fact))
        return out

    def _does(self, atom: Atom, ctx: _Context) -> list[Atom]:
        out = []
        for role, move in ctx.does.items():
            candidate: Atom = ("does", role, move)
            if _unify(atom, candidate, {}):
                out.append(candidate)
        return out


__all__ = ["Prover"]
