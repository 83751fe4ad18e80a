"""The fallback reasoner (ggp.gdl.prover): rules proved top-down, for sheets too large to ground.

It must agree with the propnet wherever both play, recursion and stratified
negation included, and be chosen by itself when grounding gives up.
"""

from __future__ import annotations

import pickle
import random
import re
from pathlib import Path

import pytest

import ggp
import ggp.gdl
from conftest import SHARED
from ggp.gdl import GDLError, GDLGame, ProverGame, builtin, grounder, joins, load_text, prover, rules_text
from ggp.gdl.sheet import GDLLimitError

CORPUS = SHARED / "corpus" / "kif"


def agree(propnet: GDLGame, top_down: ProverGame, games: int, seed: int, max_steps: int = 60) -> int:
    """Play random games on both reasoners; at each state they must agree on everything. Returns the states."""
    rng = random.Random(seed)
    compared = 0
    for _ in range(games):
        a, b = propnet.initial_state(), top_down.initial_state()
        for _ in range(max_steps):
            assert propnet.state_facts(a) == top_down.state_facts(b)
            assert propnet.is_terminal(a) is top_down.is_terminal(b)
            compared += 1
            if propnet.is_terminal(a):
                assert propnet.goals(a) == top_down.goals(b)
                break
            joint = []
            for role in propnet.roles:
                legal = propnet.legal_moves(a, role)
                assert legal == top_down.legal_moves(b, role), role
                joint.append(rng.choice(legal))
            a, b = propnet.next_state(a, joint), top_down.next_state(b, [m.text for m in joint])
    return compared


def test_agrees_with_the_propnet_on_tictactoe() -> None:
    text = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()
    assert agree(GDLGame(text, "tictactoe"), ProverGame(text, "tictactoe"), games=4, seed=3) > 20


@pytest.mark.parametrize("name", ["bomberman2p", "amazons_8x8"])
def test_agrees_with_the_propnet_on_ggps_sheets(name: str) -> None:
    assert agree(builtin(name), ProverGame(rules_text(name), name), games=2, seed=5, max_steps=25) > 10


@pytest.mark.parametrize("name", ["hanoi", "knightsTour", "futoshiki4", "pawnWhopping"])
def test_agrees_with_the_propnet_on_corpus_sheets(name: str) -> None:
    """Recursive relations, goals negating goal for another value, function terms."""
    path = CORPUS / f"{name}.kif"
    assert path.is_file(), f"the GDL corpus is missing: {path}"
    text = path.read_text()
    assert agree(GDLGame(text, name), ProverGame(text, name), games=3, seed=2) > 10


REACH = """
(role p)
(init (at a))
(edge a b) (edge b c) (edge c d) (edge d b) (edge e a)
; left recursive, through a cycle: a naive top-down prover loops forever here
(<= (path ?x ?y) (path ?x ?z) (edge ?z ?y))
(<= (path ?x ?y) (edge ?x ?y))
(<= (legal p (go ?y)) (true (at ?x)) (path ?x ?y))
(<= (next (at ?y)) (does p (go ?y)))
(<= stuck (true (at ?x)) (not (path ?x ?x)))
(<= terminal (true (at d)))
(<= (goal p 100) (true (at d)))
(<= (goal p 0) (not (true (at d))))
"""


def test_left_recursion_through_a_cycle() -> None:
    game = ProverGame(REACH, "reach")
    s = game.initial_state()
    assert [str(m) for m in game.legal_moves(s, "p")] == ["(go b)", "(go c)", "(go d)"]
    t = game.next_state(s, ["(go c)"])
    assert [str(m) for m in game.legal_moves(t, "p")] == ["(go b)", "(go c)", "(go d)"]
    assert game.goals(t) == (0,)
    end = game.next_state(t, ["(GO D)"])
    assert game.is_terminal(end) and game.goals(end) == (100,)
    assert agree(GDLGame(REACH, "reach"), game, games=5, seed=1) > 5


def test_chosen_when_grounding_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grounder, "MAX_ATOMS", 20)
    game = load_text(REACH, "reach-too-large")
    assert isinstance(game, ProverGame) and game.engine == "prover"
    assert "grounding is infeasible" in game.engine_reason and "gave up" in game.engine_reason
    assert [str(m) for m in game.legal_moves(game.initial_state(), "p")] == ["(go b)", "(go c)", "(go d)"]
    load_text.cache_clear()


#: prereq holds for every 6-bit string while the game is at s: 64 rule instances, found in one round.
BITS = (
    "(role p) (init s) (bit 0) (bit 1)"
    " (<= (prereq ?a ?b ?c ?d ?e ?f) (bit ?a) (bit ?b) (bit ?c) (bit ?d) (bit ?e) (bit ?f) (true s))"
    " (<= (legal p go) (prereq 0 1 0 1 0 1)) (<= (next t) (does p go)) (<= terminal (true t)) (goal p 100)"
)


def test_the_prover_is_chosen_by_estimate_before_grounding_explodes(monkeypatch: pytest.MonkeyPatch) -> None:
    # 64 instances and their 64 heads are over 100: refused before the round that would find them, by the
    # estimate (the generic bound, checked while a round runs, says "gave up (over ...")
    monkeypatch.setattr(grounder, "MAX_ATOMS", 100)
    game = load_text(BITS, "bits-estimated")
    load_text.cache_clear()
    assert isinstance(game, ProverGame)
    found = re.search(r"before a round of about (\d+) rule instances", game.engine_reason)
    assert found is not None and 64 <= int(found.group(1)) <= 70  # prereq's, and a few of the other rules
    assert [str(m) for m in game.legal_moves(game.initial_state(), "p")] == ["go"]
    # with room for them, the estimate lets the sheet ground
    monkeypatch.setattr(grounder, "MAX_ATOMS", 1000)
    grounds = load_text(BITS, "bits-grounds")
    load_text.cache_clear()
    assert isinstance(grounds, GDLGame) and agree(grounds, game, games=3, seed=2) > 3


def test_the_estimate_counts_each_join_step() -> None:
    from ggp.gdl.parser import parse_program

    g = grounder.Grounder(parse_program(BITS, "bits"))
    g.ground()
    rule = next(r for r in g.program.rules if r.relation == "prereq")
    plan = joins.make_plan(rule, None, set(), g.store.estimate)
    # six lookups of bit, two rows each, and the one (true s): 2^6
    assert g._instances(plan) == 64.0
    # the plan begins with its most selective lookup, (true s): fed 5 rows there, it finds 5 x 2^6
    assert plan.steps[0].relation == "true"
    assert g._instances(plan, 5) == 5 * 64.0


def test_the_propnet_when_the_sheet_grounds() -> None:
    game = load_text(REACH, "reach-grounds")
    assert isinstance(game, GDLGame) and game.engine == "propnet"
    load_text.cache_clear()


def test_a_corpus_sheet_too_large_to_ground_is_played_top_down() -> None:
    """ruleDepthExponential's prereqN holds for every N-bit string: a state asks about few of them."""
    path = CORPUS / "ruleDepthExponential.kif"
    game = ProverGame(path.read_text(), "ruleDepthExponential")
    s = game.initial_state()
    for _ in range(8):
        assert [str(m) for m in game.legal_moves(s, "robot")] == ["continue", "giveUp"]
        s = game.next_state(s, ["continue"])
    assert game.state_facts(s) == ["(step 9)"]
    end = game.next_state(s, ["giveUp"])
    assert game.is_terminal(end)
    assert game.goals(end)[0] > 0


def test_actions_are_numbered_as_met_and_kept() -> None:
    game = ProverGame(REACH, "reach")
    s = game.initial_state()
    acts = game.legal_actions(s, "p")
    moves = [game.action_to_move(s, "p", int(a)) for a in acts]
    assert [str(m) for m in moves] == ["(go b)", "(go c)", "(go d)"]
    assert game.num_actions("p") == 3
    assert game.apply_actions(s, [int(acts[2])]) == game.next_state(s, ["(go d)"])
    assert game.move_to_action(s, "p", "(go a)") == -1
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(s, ["(go a)"])


def test_states_pickle_and_round_trip_as_documents() -> None:
    game = ProverGame(REACH, "reach")
    t = game.next_state(game.initial_state(), ["(go c)"])
    assert game.state_from_dict(game.state_to_dict(t)) == t
    back = pickle.loads(pickle.dumps(t))
    assert back.game.state_facts(back) == ["(at c)"]


def test_rules_that_build_ever_larger_terms_stop_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "(role p) (init s) (nat 0) (<= (nat (succ ?x)) (nat ?x)) (<= (legal p (go ?x)) (nat ?x) (true s))"
    text += " (<= (next s) (does p ?m)) (<= terminal (true t)) (goal p 0)"
    monkeypatch.setattr(prover, "MAX_TERM_DEPTH", 30)
    game = ProverGame(text, "infinite")
    with pytest.raises(GDLLimitError, match=r"gave up: .* nested over 30 deep"):
        game.legal_moves(game.initial_state(), "p")
    with pytest.raises(GDLLimitError):  # and again: the broken-off tables were dropped, not left half done
        game.legal_moves(game.initial_state(), "p")


def test_a_terminal_state_without_a_goal_is_an_error() -> None:
    text = "(role p) (init s) (<= (legal p go) (true s)) (<= (next t) (true s)) (<= terminal (true t))"
    text += " (<= (goal p 100) (true s))"
    game = ProverGame(text, "goalless")
    t = game.next_state(game.initial_state(), ["go"])
    with pytest.raises(GDLError, match="no 'goal' rule gives role p a value"):
        game.goals(t)


# --- compiled rule bodies, tables kept across states ------------------------------------------------------------

#: Keys the compiler meets in many shapes: a variable repeated in a key ((eq ?x ?x)), function terms half bound
#: ((wrap (f ?n))), a head variable against a key term that is not ground ((anyterm (f ?k)), (fact (cell ?c ?v)):
#: left to the generic resolution), (true ?x), does with its role unbound, or, (not (distinct ...)), left recursion,
#: negation of a relation, of true and of does.
TRICKY = """
(role a) (role b)
(init (cell 1 x)) (init (cell 2 o)) (init (pair (f 1) (g 2))) (init (ctr 0))
(num 0) (num 1) (num 2) (num 3)
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (eq ?x ?x) (num ?x))
(<= (lt ?x ?y) (succ ?x ?y))
(<= (lt ?x ?z) (lt ?x ?y) (succ ?y ?z))
(<= (wrap (f ?x)) (num ?x))
(<= (anyterm ?z) (wrap ?z))
(<= (hasf ?n) (anyterm (f ?n)) (wrap (f ?n)))
(<= (same2 ?x) (eq ?x ?x))
(<= (fact ?x) (true ?x))
(<= (pairfirst ?a) (true (pair (f ?a) ?b)))
(<= (legal ?r (set ?n)) (role ?r) (hasf ?n) (lt ?n 3) (not (true (ctr ?n))))
(<= (legal ?r (mark ?c)) (role ?r) (true (cell ?c ?v)) (or (distinct ?v x) (same2 ?c)))
(<= (legal ?r (pick ?c)) (role ?r) (fact (cell ?c ?v)) (not (distinct ?v o)))
(<= (legal ?r noop) (role ?r))
(<= (moved ?r) (does ?r (set ?n)))
(<= (anymark ?c) (does ?r (mark ?c)))
(<= (next (ctr ?m)) (true (ctr ?n)) (succ ?n ?m))
(<= (next (cell ?c ?v)) (true (cell ?c ?v)) (not (anymark ?c)))
(<= (next (cell ?c y)) (anymark ?c))
(<= (next (pair (f ?n) (g ?n))) (does a (set ?n)))
(<= (next (pair ?x ?y)) (true (pair ?x ?y)) (not (moved a)))
(<= (next (seen ?x)) (wrap ?x) (pairfirst ?n) (eq (f ?n) ?x))
(<= (next (quiet ?r)) (role ?r) (not (does ?r noop)) (not (moved ?r)))
(<= terminal (true (ctr 3)))
(<= (goal ?r 100) (role ?r) (true (cell 1 y)))
(<= (goal ?r 0) (role ?r) (not (true (cell 1 y))))
"""

CHESS10 = Path(__file__).parent / "data" / "prover" / "chess10.kif"


def agree_provers(one: ProverGame, two: ProverGame, games: int, seed: int, max_steps: int = 60) -> int:
    """:func:`agree` between two prover games (their actions may be numbered apart: compared as moves)."""
    rng = random.Random(seed)
    compared = 0
    for _ in range(games):
        a, b = one.initial_state(), two.initial_state()
        for _ in range(max_steps):
            assert one.state_facts(a) == two.state_facts(b)
            assert one.is_terminal(a) is two.is_terminal(b)
            assert one.goals(a) == two.goals(b)
            compared += 1
            if one.is_terminal(a):
                break
            joint = []
            for role in one.roles:
                legal = one.legal_moves(a, role)
                assert legal == two.legal_moves(b, role), role
                joint.append(rng.choice(legal).text)
            a, b = one.next_state(a, joint), two.next_state(b, joint)
    return compared


def test_compiled_rules_agree_with_the_propnet_on_tricky_keys() -> None:
    compiled = ProverGame(TRICKY, "tricky")
    assert agree(GDLGame(TRICKY, "tricky"), compiled, games=6, seed=4) > 10
    # and the rules were compiled, but where a head's variable meets a key's term that is not ground
    funcs = [f for fs in compiled.prover._funcs if fs for f in fs]
    left = {f.relation for f in funcs if isinstance(f, prover.Rule)}
    assert left == {"anyterm", "fact"}  # (anyterm (f ?k)), (fact (cell ?c ?v))
    assert any(not isinstance(f, prover.Rule) for f in funcs)


@pytest.mark.parametrize("name", ["tictactoe", "TRICKY", "breakthroughSmall", "dotsAndBoxes", "chess10"])
def test_compiled_rules_agree_with_generic_resolution(name: str) -> None:
    """The compiled rules give what unification rule by rule gives (Prover(compiled=False)), state by state."""
    if name == "tictactoe":
        text = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()
    elif name == "TRICKY":
        text = TRICKY
    elif name == "chess10":
        text = CHESS10.read_text()
    else:
        text = (CORPUS / f"{name}.kif").read_text()
    steps = 12 if name == "chess10" else 60
    compared = agree_provers(ProverGame(text, name), ProverGame(text, name, compiled=False), 2, 7, steps)
    assert compared > 5


@pytest.mark.parametrize("name", ["tictactoe", "TRICKY", "checkersTiny"])
def test_tables_kept_across_states_give_what_fresh_tables_give(name: str) -> None:
    """Relations that do not depend on the state are tabled once per sheet, a state's relations are reused by
    its next state's question: each state's answers must be those of a new prover that saw no other state."""
    if name == "tictactoe":
        text = (Path(ggp.gdl.__file__).parent / "tictactoe.kif").read_text()
    elif name == "TRICKY":
        text = TRICKY
    else:
        text = (CORPUS / f"{name}.kif").read_text()
    game = ProverGame(text, name)
    rng = random.Random(11)
    s = game.initial_state()
    for _ in range(40):
        fresh = ProverGame(text, name, program=game.program)
        t = fresh.state_from_dict(game.state_to_dict(s))
        assert game.is_terminal(s) is fresh.is_terminal(t)
        assert game.goals(s) == fresh.goals(t)
        if game.is_terminal(s):
            break
        joint = []
        for role in game.roles:
            legal = game.legal_moves(s, role)
            assert legal == fresh.legal_moves(t, role)
            joint.append(rng.choice(legal).text)
        nxt = game.next_state(s, joint)
        assert game.state_facts(nxt) == fresh.state_facts(fresh.next_state(t, joint))
        s = nxt
    assert game.prover.static_table  # something was tabled once for the sheet


def test_chess10_is_too_large_to_ground_and_goes_to_the_prover() -> None:
    game = load_text(CHESS10.read_text(), "chess10")
    load_text.cache_clear()
    assert isinstance(game, ProverGame) and "grounding is infeasible" in game.engine_reason
    s = game.initial_state()
    # 10 pawns one step each, 2 knights x 3 squares (a knight's fourth square is its own pawn's)
    assert len(game.legal_moves(s, "white")) == 10 + 2 * 2 and game.legal_moves(s, "black") == (ggp.Move("noop"),)
