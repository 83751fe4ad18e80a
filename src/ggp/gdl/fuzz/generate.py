"""Random valid GDL rule sheets, shaped like real ones, from a seed.

Every sheet is valid by construction: rules are safe (each variable of a rule is bound by a positive literal
of its body), negation is stratified (a derived relation negates only relations defined before it), ``legal``,
``goal`` and ``terminal`` never depend on ``does``, ``init`` depends only on static relations, and a step counter
ends every game after a few steps. What varies: one to three roles, turn-taking or simultaneous moves, static
facts and derived static relations (a successor chain, its transitive closure, a symmetric neighbour relation),
state facts with function terms, derived state relations ("views") with recursion (over the successor chain and
over the neighbour relation, whose ground instances form positive cycles), negation, ``distinct``, ``or`` and
``(not (distinct ...))``, moves with arguments, frame rules, effects of moves, several goal values per role.

>>> text = generate(7)
>>> text == generate(7) and "(role " in text
True
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

# A sort is a base sort name ("n" numbers, "o" objects, "r" roles, "s" steps) or a compound sort
# (functor, sort, ...) whose terms are (functor term ...).
Sort = str | tuple
# A literal or term is kept as text built from nested lists; a body literal is (text, kind, vars) below.

ROLE_NAMES = ["white", "black", "red", "blue", "xplayer", "oplayer", "robot", "green"]
OBJECT_NAMES = ["a", "b", "c", "x", "o", "empty", "wall", "gold"]
FUNCTORS = ["pos", "cell", "pair", "at", "loc"]
STATIC_NAMES = ["adjacent", "link", "marked", "special", "colour", "weight", "region", "corner"]
FLUENT_NAMES = ["cell", "holds", "piece", "score", "flag", "visited", "owner", "lamp"]
VIEW_NAMES = ["open", "reach", "line", "safe", "blocked", "won", "full", "near", "lit", "count", "ready"]
ACTION_NAMES = ["mark", "move", "put", "take", "push", "jump", "play"]


@dataclass
class Relation:
    name: str
    sorts: tuple[Sort, ...]
    kind: str  # "static", "fluent", "view", "mview"
    index: int = 0  # views: the order of definition (negation only of earlier ones)


@dataclass
class _Body:
    """A rule body under construction: its literals and the variables bound (by sort)."""

    lits: list[str] = field(default_factory=list)
    bound: dict[str, Sort] = field(default_factory=dict)


class Generator:
    """One sheet's random choices (see :func:`generate`)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.var_count = 0

    # --- vocabulary -------------------------------------------------------------------------------
    def setup(self) -> None:
        rng = self.rng
        self.roles = rng.sample(ROLE_NAMES, rng.choice([1, 2, 2, 2, 3]))
        self.turns = len(self.roles) > 1 and rng.random() < 0.5
        self.k = rng.choice([2, 3, 3, 4, 4, 5, 7])  # numbers 1..k
        self.steps = rng.randint(2, 7)  # the game ends when the step counter reaches this
        self.objects = rng.sample(OBJECT_NAMES, rng.randint(1, 3))
        top = max(self.k, self.steps)
        self.numbers = [str(i) for i in range(1, self.k + 1)]
        self.succ = [(str(i), str(i + 1)) for i in range(0, top)]
        functor = rng.choice(FUNCTORS)
        self.compound: Sort = (functor, "n", "n") if rng.random() < 0.5 else (functor, "n")
        self.statics: list[Relation] = [
            Relation("index", ("n",), "static"),
            Relation("kind", ("o",), "static"),
            Relation("succ", ("s", "s"), "static"),
        ]
        self.facts: list[str] = [f"(role {r})" for r in self.roles]
        self.facts += [f"(index {n})" for n in self.numbers]
        self.facts += [f"(kind {o})" for o in self.objects]
        self.facts += [f"(succ {a} {b})" for a, b in self.succ]
        self.rules: list[str] = []
        # random static facts
        for name in rng.sample(STATIC_NAMES, rng.randint(0, 2)):
            sorts = tuple(rng.choice(["n", "o"]) for _ in range(rng.randint(1, 2)))
            rel = Relation(name, sorts, "static")
            rows = {tuple(self.const(s) for s in sorts) for _ in range(rng.randint(1, 5))}
            self.facts += [f"({name} {' '.join(row)})" for row in sorted(rows)]
            self.statics.append(rel)
        # derived static relations: the successor's closure, a symmetric neighbour relation
        if rng.random() < 0.6:
            self.rules.append("(<= (less ?x ?y) (succ ?x ?y))")
            if rng.random() < 0.5:
                self.rules.append("(<= (less ?x ?z) (succ ?x ?y) (less ?y ?z))")
            else:
                self.rules.append("(<= (less ?x ?z) (less ?x ?y) (less ?y ?z))")
            self.statics.append(Relation("less", ("s", "s"), "static"))
        if rng.random() < 0.8:
            self.rules.append("(<= (nbr ?x ?y) (succ ?x ?y) (index ?x) (index ?y))")
            self.rules.append("(<= (nbr ?x ?y) (nbr ?y ?x))")
            self.statics.append(Relation("nbr", ("n", "n"), "static"))
        if rng.random() < 0.3:  # a derived static relation with negation
            body = self.body(positive=self.statics, negative=list(self.statics), need=("n",))
            head_var = self.pick_var(body, "n")
            self.rules.append(self.rule(f"(good {head_var})", body))
            self.statics.append(Relation("good", ("n",), "static"))
        # state facts
        self.fluents: list[Relation] = [Relation("step", ("s",), "fluent")]
        if self.turns:
            self.fluents.append(Relation("control", ("r",), "fluent"))
        for name in rng.sample(FLUENT_NAMES, rng.randint(1, 3)):
            arity = rng.choice([0, 1, 1, 2, 2])
            choices: list[Sort] = ["n", "n", "o", "r", self.compound]
            fluent_sorts = tuple(rng.choice(choices) for _ in range(arity))
            self.fluents.append(Relation(name, fluent_sorts, "fluent"))
        # moves: per role a few forms (shared forms with probability)
        forms = []
        for name in rng.sample(ACTION_NAMES, rng.randint(1, 3)):
            arity = rng.choice([0, 1, 1, 2])
            forms.append((name, tuple(rng.choice(["n", "n", "o", self.compound]) for _ in range(arity))))
        self.actions = {r: [f for f in forms if rng.random() < 0.8] or forms[:1] for r in self.roles}
        self.views: list[Relation] = []
        self.mviews: list[Relation] = []

    def const(self, sort: Sort) -> str:
        rng = self.rng
        if isinstance(sort, tuple):
            return "(" + " ".join([sort[0], *(self.const(s) for s in sort[1:])]) + ")"
        if sort == "n":
            return rng.choice(self.numbers)
        if sort == "o":
            return rng.choice(self.objects)
        if sort == "r":
            return rng.choice(self.roles)
        return str(rng.randint(0, self.steps))  # "s"

    def new_var(self) -> str:
        self.var_count += 1
        return f"?{self.rng.choice('xyzvwmpq')}{self.var_count}"

    # --- literals ---------------------------------------------------------------------------------
    def term(self, sort: Sort, body: _Body, bind: bool) -> str:
        """A term of ``sort``: a bound variable, a new variable (``bind``: in a positive literal), or a constant."""
        rng = self.rng
        if isinstance(sort, tuple):
            if bind and rng.random() < 0.3:  # a variable for the whole compound term
                v = self.new_var()
                body.bound.setdefault(v, sort)
                return v
            olds = [v for v, s in body.bound.items() if s == sort]
            if olds and rng.random() < 0.3:
                return rng.choice(olds)
            return "(" + " ".join([sort[0], *(self.term(s, body, bind) for s in sort[1:])]) + ")"
        olds = [v for v, s in body.bound.items() if s == sort]
        x = rng.random()
        if olds and x < 0.45:
            return rng.choice(olds)
        if bind and x < 0.85:
            v = self.new_var()
            body.bound[v] = sort
            return v
        return self.const(sort)

    def atom(self, rel: Relation, body: _Body, bind: bool) -> str:
        args = [self.term(s, body, bind) for s in rel.sorts]
        inner = rel.name if not args else f"({rel.name} {' '.join(args)})"
        return f"(true {inner})" if rel.kind == "fluent" else inner

    def does(self, body: _Body, bind: bool) -> str:
        rng = self.rng
        role = rng.choice(self.roles)
        name, sorts = rng.choice(self.actions[role])
        who = role
        if bind and rng.random() < 0.3:
            who = self.term("r", body, True)
        args = [self.term(s, body, bind) for s in sorts]
        move = name if not args else f"({name} {' '.join(args)})"
        return f"(does {who} {move})"

    def unary(self, rel: Relation, v: str) -> str:
        return f"(true ({rel.name} {v}))" if rel.kind == "fluent" else f"({rel.name} {v})"

    def pick_var(self, body: _Body, sort: Sort) -> str:
        """A variable of ``sort`` bound in ``body`` (bound now by a domain literal when there is none)."""
        olds = [v for v, s in body.bound.items() if s == sort]
        if olds:
            return self.rng.choice(olds)
        return self.bind(body, sort)

    def bind(self, body: _Body, sort: Sort) -> str:
        rng = self.rng
        if isinstance(sort, tuple):
            parts = [self.pick_var(body, s) if rng.random() < 0.5 else self.bind(body, s) for s in sort[1:]]
            # (GDL has no equality: a compound is bound through its parts)
            return "(" + " ".join([sort[0], *parts]) + ")"
        v = self.new_var()
        body.bound[v] = sort
        if sort == "n":
            body.lits.append(f"(index {v})")
        elif sort == "o":
            body.lits.append(f"(kind {v})")
        elif sort == "r":
            body.lits.append(f"(role {v})")
        else:
            body.lits.append(f"(true (step {v}))" if rng.random() < 0.5 else f"(succ {v} {rng.randint(1, self.steps)})")
            if "(succ" in body.lits[-1] and body.lits[-1].endswith(" 0)"):
                body.lits[-1] = f"(succ {v} 1)"
        return v

    def negatable_literal(self, body: _Body, negative: list[Relation]) -> str | None:
        """A literal over bound variables and constants only: a negation, a distinct, or a positive check."""
        rng = self.rng
        x = rng.random()
        if x < 0.3:
            sorts = [s for s in set(body.bound.values()) if isinstance(s, str)]
            if sorts:
                sort = rng.choice(sorts)
                a = self.term(sort, body, False)
                b = self.term(sort, body, False)
                if a != b:
                    return f"(distinct {a} {b})" if rng.random() < 0.85 else f"(not (distinct {a} {b}))"
        if not negative:
            return None
        rel = rng.choice(negative)
        return f"(not {self.atom(rel, body, False)})"

    def body(
        self,
        positive: list[Relation],
        negative: list[Relation],
        need: tuple[Sort, ...] = (),
        does: bool = False,
        size: int | None = None,
    ) -> _Body:
        rng = self.rng
        body = _Body()
        n = size if size is not None else rng.choice([0, 1, 1, 2, 2, 3])
        for _ in range(n):
            if does and rng.random() < 0.4:
                body.lits.append(self.does(body, True))
            elif positive:
                body.lits.append(self.atom(rng.choice(positive), body, True))
        for sort in need:
            if not any(s == sort for s in body.bound.values()) and not isinstance(sort, tuple):
                self.bind(body, sort)
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            if body.bound or negative:
                lit = self.negatable_literal(body, negative)
                if lit:
                    body.lits.append(lit)
        unary = [r for r in positive if r.sorts == ("n",)]
        if len(unary) >= 2 and rng.random() < 0.15:  # an 'or' whose every branch binds a new variable
            v = self.new_var()
            branches = [self.unary(r, v) for r in rng.sample(unary, 2)]
            body.lits.append(f"(or {' '.join(branches)})")
            body.bound[v] = "n"
        if rng.random() < 0.2:  # an 'or' of checks over the variables bound so far
            maybe = [self.negatable_literal(body, negative) for _ in range(rng.randint(2, 3))]
            maybe += [self.atom(rng.choice(positive), body, False) for _ in range(rng.randint(0, 1)) if positive]
            parts = [p for p in maybe if p]
            if len(parts) >= 2:
                body.lits.append(f"(or {' '.join(parts)})")
                if rng.random() < 0.2:
                    body.lits[-1] = f"(not {body.lits[-1]})"
        rng.shuffle(body.lits)
        return body

    def rule(self, head: str, body: _Body) -> str:
        if not body.lits:
            return head
        return f"(<= {head} {' '.join(body.lits)})"

    def head(self, name: str, sorts: tuple[Sort, ...], body: _Body) -> str:
        args = [self.head_term(s, body) for s in sorts]
        return name if not args else f"({name} {' '.join(args)})"

    def head_term(self, sort: Sort, body: _Body) -> str:
        rng = self.rng
        if isinstance(sort, tuple):
            olds = [v for v, s in body.bound.items() if s == sort]
            if olds and rng.random() < 0.6:
                return rng.choice(olds)
            return "(" + " ".join([sort[0], *(self.head_term(s, body) for s in sort[1:])]) + ")"
        olds = [v for v, s in body.bound.items() if s == sort]
        if olds and rng.random() < 0.8:
            return rng.choice(olds)
        if rng.random() < 0.5:
            return self.const(sort)
        return self.bind(body, sort)

    # --- the sheet --------------------------------------------------------------------------------
    def views_and_rules(self) -> None:
        rng = self.rng
        state = self.statics + self.fluents
        for i, name in enumerate(rng.sample(VIEW_NAMES, rng.randint(0, 4))):
            arity = rng.choice([0, 1, 1, 2])
            sorts = tuple(rng.choice(["n", "n", "n", "o", "r"]) for _ in range(arity))
            view = Relation(name, sorts, "view", i)
            earlier = list(self.views)
            for _ in range(rng.randint(1, 3)):
                body = self.body(state + earlier, self.fluents + self.statics + earlier, need=sorts)
                self.rules.append(self.rule(self.head(name, sorts, body), body))
            recursive = bool(sorts) and sorts[0] == "n" and rng.random() < 0.75
            if recursive:  # recursion along the chain or neighbours
                link = rng.choice(["nbr", "nbr", "succ"] if any(r.name == "nbr" for r in self.statics) else ["succ"])
                body = _Body()
                x, y = self.new_var(), self.new_var()
                body.bound = {x: "n", y: "n"}
                rest = [self.head_term(s, body) for s in sorts[1:]]
                body.lits = [f"({name} {' '.join([x, *rest])})", f"({link} {x} {y})"]
                if link == "succ":
                    body.lits.append(f"(index {y})")
                extra = self.negatable_literal(body, self.fluents + earlier)
                if extra and rng.random() < 0.7:
                    body.lits.append(extra)
                if rng.random() < 0.5:
                    body.lits.append(self.atom(rng.choice(self.fluents), body, False))
                rng.shuffle(body.lits)
                self.rules.append(self.rule(f"({name} {' '.join([y, *rest])})", body))
            if not recursive and sorts == ("n",) and rng.random() < 0.3:
                # negation of the relation itself, for other arguments (stratified rule by rule)
                one, two = rng.sample(self.numbers, 2)
                body = self.body(state + earlier, self.fluents + earlier)
                body.lits.append(f"(not ({name} {one}))")
                rng.shuffle(body.lits)
                self.rules.append(self.rule(f"({name} {two})", body))
            self.views.append(view)
        if rng.random() < 0.3:  # a relation of the moves, read by next only
            sorts = tuple(rng.choice(["n", "o"]) for _ in range(rng.randint(0, 1)))
            body = self.body(state + self.views, self.fluents + self.views, need=sorts, does=True, size=2)
            if not any("(does" in lit for lit in body.lits):
                body.lits.append(self.does(body, True))
            self.rules.append(self.rule(self.head("moved", sorts, body), body))
            self.mviews.append(Relation("moved", sorts, "mview"))

    def init(self) -> None:
        rng = self.rng
        self.facts.append("(init (step 0))")
        if self.turns:
            self.facts.append(f"(init (control {self.roles[0]}))")
        for rel in self.fluents[1 + self.turns :]:
            for _ in range(rng.randint(0, 3)):
                inner = rel.name if not rel.sorts else f"({rel.name} {' '.join(self.const(s) for s in rel.sorts)})"
                fact = f"(init {inner})"
                if fact not in self.facts:
                    self.facts.append(fact)
            if rel.sorts and rng.random() < 0.3:  # init by a rule over static relations
                body = self.body(self.statics, self.statics, need=tuple(s for s in rel.sorts if isinstance(s, str)))
                self.rules.append(self.rule(f"(init {self.head(rel.name, rel.sorts, body)})", body))

    def legal(self) -> None:
        rng = self.rng
        reads = self.statics + self.fluents + self.views
        for role in self.roles:
            # the move that is always there (when it is not the role's turn, with turns)
            if self.turns:
                self.rules.append(f"(<= (legal {role} noop) (not (true (control {role}))))")
                if rng.random() < 0.8:
                    self.rules.append(
                        f"(<= (legal {role} noop) (true (control {role})) (true (step {self.steps - 1})))"
                    )
            elif rng.random() < 0.85:
                self.rules.append(f"(legal {role} noop)")
            else:
                body = self.body(reads, self.fluents + self.views)
                self.rules.append(self.rule(f"(legal {role} noop)", body))
            for name, sorts in self.actions[role]:
                for _ in range(rng.randint(1, 2)):
                    body = self.body(reads, self.fluents + self.statics + self.views, need=sorts)
                    if self.turns:
                        body.lits.append(f"(true (control {role}))")
                    who = role
                    if rng.random() < 0.2:
                        who = self.pick_var(body, "r")
                        if self.turns:
                            body.lits[-1] = f"(true (control {who}))" if body.lits else body.lits[-1]
                    args = [self.head_term(s, body) for s in sorts]
                    move = name if not args else f"({name} {' '.join(args)})"
                    rng.shuffle(body.lits)
                    self.rules.append(self.rule(f"(legal {who} {move})", body))

    def next(self) -> None:
        rng = self.rng
        self.rules.append("(<= (next (step ?t2)) (true (step ?t1)) (succ ?t1 ?t2))")
        if self.turns:
            for a, b in zip(self.roles, self.roles[1:] + self.roles[:1], strict=True):
                self.rules.append(f"(<= (next (control {b})) (true (control {a})))")
        reads = self.statics + self.fluents + self.views + self.mviews
        for rel in self.fluents[1 + self.turns :]:
            mode = rng.random()
            if mode < 0.12:  # kept by a plain frame rule only: the grounder treats it as static
                inner = (
                    rel.name if not rel.sorts else f"({rel.name} {' '.join(f'?f{j}' for j in range(len(rel.sorts)))})"
                )
                self.rules.append(f"(<= (next {inner}) (true {inner}))")
                continue
            if mode < 0.17 and rel.sorts:  # a frame rule for some facts only
                inner = f"({rel.name} {' '.join(self.const(x) for x in rel.sorts)})"
                self.rules.append(f"(<= (next {inner}) (true {inner}))")
                continue
            if mode < 0.8:  # a frame rule
                body = _Body()
                body.lits.append(self.atom(rel, body, True))
                for _ in range(rng.randint(0, 2)):
                    if rng.random() < 0.5:
                        body.lits.append(f"(not {self.does(body, False)})")
                    else:
                        lit = self.negatable_literal(body, self.fluents + self.views + self.mviews)
                        if lit:
                            body.lits.append(lit)
                inner = body.lits[0][len("(true ") : -1]
                rng.shuffle(body.lits)
                self.rules.append(self.rule(f"(next {inner})", body))
            for _ in range(rng.randint(1, 3)):  # effects
                body = self.body(reads, self.fluents + self.statics + self.views + self.mviews, does=True)
                self.rules.append(self.rule(f"(next {self.head(rel.name, rel.sorts, body)})", body))

    def ends(self) -> None:
        rng = self.rng
        self.rules.append(f"(<= terminal (true (step {self.steps})))")
        reads = self.statics + self.fluents + self.views
        for _ in range(rng.choice([0, 0, 1, 2])):
            body = self.body(reads, self.fluents + self.views, size=rng.randint(1, 2))
            self.rules.append(self.rule("terminal", body))
        values = [0, 25, 50, 75, 100]
        for role in self.roles:
            for _ in range(rng.randint(1, 3)):
                body = self.body(reads, self.fluents + self.views)
                self.rules.append(self.rule(f"(goal {role} {rng.choice(values)})", body))
            if rng.random() < 0.2:  # a value where no other is given
                value = rng.choice(values)
                other = rng.choice([v for v in values if v != value])
                self.rules.append(f"(<= (goal {role} {value}) (not (goal {role} {other})))")
            if rng.random() < 0.3:  # a goal for every role at once
                body = self.body(reads, self.fluents + self.views)
                who = self.pick_var(body, "r")
                self.rules.append(self.rule(f"(goal {who} {rng.choice(values)})", body))

    def recase(self, line: str) -> str:
        return "".join(_recase_token(t, self.rng) for t in re.split(r"(\s+|[()])", line))

    def sheet(self) -> str:
        self.setup()
        self.views_and_rules()
        self.init()
        self.legal()
        self.next()
        self.ends()
        if self.rng.random() < 0.15:  # GDL's optional declarations
            self.facts += [f"(base (step {i}))" for i in range(self.steps + 1)]
            self.facts.append("(<= (input ?r noop) (role ?r))")
        lines = self.facts + self.rules
        if self.rng.random() < 0.1:  # symbols in other letter cases (GDL ignores case)
            lines = [self.recase(line) for line in lines]
        if self.rng.random() < 0.5:
            head, tail = lines[: len(self.roles)], lines[len(self.roles) :]
            self.rng.shuffle(tail)
            lines = head + tail
        return "\n".join(lines) + "\n"


def _recase_token(tok: str, rng: random.Random) -> str:
    if tok in ("(", ")") or rng.random() > 0.15:
        return tok
    return tok.upper() if rng.random() < 0.5 else tok[:1].upper() + tok[1:]


def generate(seed: int) -> str:
    """A random valid GDL rule sheet; the same seed gives the same sheet."""
    return Generator(seed).sheet()


__all__ = ["generate"]
