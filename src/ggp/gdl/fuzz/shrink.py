"""Shrinking a sheet the engines disagree on: greedily drop sentences, body literals and ``or`` branches while
the disagreement stays (delta debugging over the sheet's sentences, then over each rule's body)."""

from __future__ import annotations

import time
from collections.abc import Callable

from ...core.kif import Term
from .mutate import render, sentences

#: A test of a candidate sheet: does it still show the disagreement?
Still = Callable[[str], bool]


def _chunks(n: int, size: int) -> list[tuple[int, int]]:
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def _drop_sentences(terms: list[Term], still: Still, out_of_time: Callable[[], bool]) -> list[Term]:
    size = max(1, len(terms) // 2)
    while size >= 1:
        changed = True
        while changed and not out_of_time():
            changed = False
            for lo, hi in reversed(_chunks(len(terms), size)):
                trial = terms[:lo] + terms[hi:]
                if trial and still(render(trial)):
                    terms = trial
                    changed = True
                if out_of_time():
                    break
        if size == 1:
            break
        size //= 2
    return terms


def _is_rule(t: Term) -> bool:
    return isinstance(t, tuple) and len(t) >= 2 and t[0] == "<="


def _simpler_rules(rule: tuple) -> list[Term]:
    """Rules one step simpler than ``rule``: a body literal dropped, an ``or`` replaced by one of its branches,
    a ``not`` dropped."""
    out: list[Term] = []
    for j in range(2, len(rule)):
        body = rule[:j] + rule[j + 1 :]
        out.append(body if len(body) > 2 else body[1])
    for j in range(2, len(rule)):
        lit = rule[j]
        if isinstance(lit, tuple) and lit and isinstance(lit[0], str) and lit[0].lower() == "or":
            out += [(*rule[:j], branch, *rule[j + 1 :]) for branch in lit[1:]]
    return out


def shrink(text: str, still: Still, seconds: float = 120.0) -> str:
    """A smaller sheet on which ``still`` holds (``still(text)`` must hold), within about ``seconds`` of this
    thread's processor time (so that how far it gets does not depend on how busy the machine is)."""
    until = time.thread_time() + seconds

    def out_of_time() -> bool:
        return time.thread_time() > until

    terms = sentences(text)
    while True:
        before = render(terms)
        terms = _drop_sentences(terms, still, out_of_time)
        i = 0
        while i < len(terms) and not out_of_time():
            t = terms[i]
            if _is_rule(t):
                assert isinstance(t, tuple)
                for simpler in _simpler_rules(t):
                    trial = [*terms[:i], simpler, *terms[i + 1 :]]
                    if still(render(trial)):
                        terms = trial
                        break
                else:
                    i += 1
                continue
            i += 1
        if render(terms) == before or out_of_time():
            return render(terms)


__all__ = ["shrink"]
