"""Mutants of real rule sheets: a sentence dropped, a body literal negated, two arguments swapped.

A mutant is text; many no longer validate (a variable left unbound, negation made recursive), and the runner
skips and counts those. The sentences are handled as KIF terms (:func:`ggp.core.kif.parse_terms`), and printed
back one a line.
"""

from __future__ import annotations

import random

from ...core.kif import Term, parse_terms

#: The mutations, by name.
MUTATIONS = ("drop", "negate", "swap")


def sentences(text: str) -> list[Term]:
    """The sheet's top-level sentences."""
    return parse_terms(text)


def render(terms: list[Term]) -> str:
    """A sheet of these sentences, one a line."""
    return "\n".join(_text(t) for t in terms) + "\n"


def _text(t: Term) -> str:
    if isinstance(t, str):
        return t
    return "(" + " ".join(_text(x) for x in t) + ")"


def _is_rule(t: Term) -> bool:
    return isinstance(t, tuple) and len(t) >= 2 and isinstance(t[0], str) and t[0] == "<="


def _atoms(t: Term, path: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Paths to the atoms of a sentence with two or more arguments (heads, body literals, inside not/or)."""
    out: list[tuple[int, ...]] = []
    if not isinstance(t, tuple) or not t or not isinstance(t[0], str):
        return out
    op = t[0].lower()
    if op == "<=":
        for i in range(1, len(t)):
            out += _atoms(t[i], (*path, i))
        return out
    if op in ("not", "or"):
        for i in range(1, len(t)):
            out += _atoms(t[i], (*path, i))
        return out
    if op == "true" and len(t) == 2:  # the fact inside
        return _atoms(t[1], (*path, 1)) if isinstance(t[1], tuple) else out
    if len(t) >= 3:
        out.append(path)
    return out


def _get(t: Term, path: tuple[int, ...]) -> Term:
    for i in path:
        assert isinstance(t, tuple)
        t = t[i]
    return t


def _put(t: Term, path: tuple[int, ...], value: Term) -> Term:
    if not path:
        return value
    assert isinstance(t, tuple)
    i = path[0]
    return (*t[:i], _put(t[i], path[1:], value), *t[i + 1 :])


def mutate(text: str, rng: random.Random, how: str | None = None) -> tuple[str, str]:
    """A mutant of ``text`` and what was done (``how``: one of :data:`MUTATIONS`, else at random)."""
    terms = sentences(text)
    if not terms:
        return text, "nothing to mutate"
    how = how or rng.choice(MUTATIONS)
    if how == "drop":
        i = rng.randrange(len(terms))
        return render(terms[:i] + terms[i + 1 :]), f"dropped {_text(terms[i])[:80]}"
    if how == "negate":
        rules = [i for i, t in enumerate(terms) if _is_rule(t) and len(t) > 2]
        if rules:
            i = rng.choice(rules)
            rule = terms[i]
            assert isinstance(rule, tuple)
            j = rng.randrange(2, len(rule))
            lit = rule[j]
            if isinstance(lit, tuple) and lit and isinstance(lit[0], str) and lit[0].lower() == "not":
                new: Term = lit[1]
            else:
                new = ("not", lit)
            terms[i] = (*rule[:j], new, *rule[j + 1 :])
            return render(terms), f"negated {_text(lit)[:60]} in {_text(rule)[:60]}"
        how = "swap"
    candidates = [(i, p) for i, t in enumerate(terms) for p in _atoms(t)]
    if not candidates:
        return render(terms), "nothing to mutate"
    i, path = rng.choice(candidates)
    atom = _get(terms[i], path)
    assert isinstance(atom, tuple)
    a, b = rng.sample(range(1, len(atom)), 2)
    swapped = list(atom)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    terms[i] = _put(terms[i], path, tuple(swapped))
    return render(terms), f"swapped arguments {a} and {b} of {_text(atom)[:60]}"


__all__ = ["MUTATIONS", "mutate", "render", "sentences"]
