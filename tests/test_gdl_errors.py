"""Broken rule sheets get a GDLError (a ggp.GGPError and a ValueError) naming the line and the problem."""

from __future__ import annotations

import pytest

import ggp
from ggp.gdl import GDLError, from_text

GOOD_TAIL = """
(<= (legal p go) (true s))
(<= (next s) (does p go))
(<= terminal (true s))
(goal p 100)
"""


def error_of(text: str) -> GDLError:
    with pytest.raises(GDLError) as info:
        from_text(text, "broken")
    err = info.value
    assert isinstance(err, ggp.GGPError) and isinstance(err, ValueError)
    return err


# --- syntax ------------------------------------------------------------------------------------


def test_unclosed_parenthesis() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal p go)\n    (true s)\n")
    assert err.line == 3
    assert "line 3" in str(err) and "never closed" in str(err)


def test_extra_closing_parenthesis() -> None:
    err = error_of("(role p)\n(init s))\n")
    assert err.line == 2
    assert "line 2" in str(err) and "')' without a matching '('" in str(err)


def test_empty_list() -> None:
    err = error_of("(role p)\n\n(init ())\n")
    assert "line 3" in str(err) and "empty list" in str(err)


def test_variable_as_relation_name() -> None:
    err = error_of("(role p)\n(<= (legal p go)\n  (?rel s))\n")
    assert "line 3" in str(err) and "relation name cannot be a variable" in str(err)


def test_wrong_arity_of_a_keyword() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal go) (true s))\n")
    assert "line 3" in str(err) and "'legal' takes 2 arguments, not 1" in str(err)


def test_inconsistent_arity() -> None:
    err = error_of("(role p)\n(cell 1 2)\n(cell 3)\n")
    assert "line 3" in str(err) and "relation 'cell' is used with 1 arguments here but with 2 on line 2" in str(err)


def test_true_as_a_head() -> None:
    err = error_of("(role p)\n(<= (true s) (foo))\n")
    assert "line 2" in str(err) and "'true' cannot be the head" in str(err)


def test_next_in_a_body() -> None:
    err = error_of("(role p)\n(init s)\n(<= (foo) (next s))\n")
    assert "line 3" in str(err) and "'next' cannot appear in a rule body" in str(err)


def test_no_role() -> None:
    err = error_of("(init s)\n")
    assert "declares no role" in str(err)


def test_role_by_a_rule() -> None:
    err = error_of("(thing a)\n(<= (role ?x) (thing ?x))\n")
    assert "line 2" in str(err) and "'role' must be given by facts" in str(err)


def test_gdl_ii_misuses_are_refused_in_words() -> None:
    body = error_of("(role p)\n(init s)\n(<= (sees p s) (does p go))\n(<= (legal p stay) (sees p s))\n" + GOOD_TAIL)
    assert body.line == 4 and "'sees' cannot be used in a rule's body" in str(body)
    chance = "(role p)\n(role random)\n(init s)\n(<= (legal random go) (true s))\n"
    blind = error_of(chance + "(<= (sees random s) (true s))\n" + GOOD_TAIL)
    assert blind.line == 5 and "random is chance and perceives nothing" in str(blind)
    scored = error_of("(role p)\n(init s)\n(<= (sees p s) (does p go))\n(goal random 10)\n(role random)\n" + GOOD_TAIL)
    assert scored.line == 4 and "random is chance" in str(scored) and "has no goal" in str(scored)
    fluent = error_of("(role p)\n(init (sees p s))\n(<= (sees p s) (does p go))\n" + GOOD_TAIL)
    assert fluent.line == 2 and "rename it" in str(fluent)
    # a frame rule for every fluent would keep a percept past its step, and read it
    framed = error_of("(role p)\n(init s)\n(<= (sees p s) (does p go))\n(<= (next ?f) (true ?f))\n" + GOOD_TAIL)
    assert framed.line == 4 and "(true ?f)" in str(framed) and "would read percepts" in str(framed)
    kept = error_of("(role p)\n(init s)\n(<= (sees p s) (does p go))\n(keep s)\n(<= (next ?f) (keep ?f))\n" + GOOD_TAIL)
    assert kept.line == 5 and "(next ?f)" in str(kept) and "carry percepts" in str(kept)


def test_sees_and_random_keep_their_gdl_i_meaning_where_gdl_ii_does_not_use_them() -> None:
    # A player called random, with a goal, and a relation sees about something other than a role are
    # plain GDL: the sheet is played as GDL-I, random taking its seat.
    chance = "(role p)\n(role random)\n(init s)\n(<= (legal random go) (true s))\n"
    game = from_text(chance + GOOD_TAIL + "(goal random 0)\n(<= (sees s s) (true s))\n", "plain")
    assert game.roles == game.players == ("p", "random")
    assert game.chance_role is None and not game.hidden_information


# --- safety ------------------------------------------------------------------------------------


def test_unsafe_variable_in_the_head() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal p (go ?x))\n    (true s))\n" + GOOD_TAIL)
    assert err.line == 3
    assert "line 3" in str(err) and "unsafe rule" in str(err) and "?x appears in the head" in str(err)


def test_unsafe_variable_in_a_negation() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal p go)\n    (true s)\n    (not (true (mark ?y))))\n" + GOOD_TAIL)
    assert err.line == 5
    assert "unsafe rule" in str(err) and "?y in (not (true (mark ?y)))" in str(err)


def test_unsafe_variable_in_a_distinct() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal p go)\n    (true s)\n    (distinct ?z s))\n" + GOOD_TAIL)
    assert err.line == 5
    assert "unsafe rule" in str(err) and "?z in (distinct ?z s)" in str(err)


def test_unsafe_variable_in_a_fact() -> None:
    err = error_of("(role p)\n(cell ?x)\n")
    assert "line 2" in str(err) and "unsafe rule" in str(err) and "?x appears in a fact" in str(err)


# --- stratification and GDL's restrictions -----------------------------------------------------


def test_recursion_through_negation() -> None:
    text = "(role p)\n(init s)\n(<= a (true s) (not b))\n(<= b (true s) (not c))\n(<= c a)\n" + GOOD_TAIL
    err = error_of(text)
    assert "unstratified negation" in str(err)
    assert "line 3" in str(err) or "line 4" in str(err)
    assert err.line in (3, 4)


def test_negation_of_itself() -> None:
    err = error_of("(role p)\n(init s)\n(<= (odd ?x) (true ?x) (not (odd ?x)))\n" + GOOD_TAIL)
    assert "line 3" in str(err) and "unstratified negation" in str(err) and "(not odd)" in str(err)


def test_negation_of_an_atom_of_itself_that_can_be_the_same() -> None:
    """Refused although the arguments differ: (goal p ?v) can be (goal p 0), which the rule derives."""
    text = "(role p)\n(init s)\n(val 0) (val 100)\n(<= (goal p 0)\n  (val ?v)\n  (not (goal p ?v)))\n"
    err = error_of(text + "(<= (legal p go) (true s))\n(<= (next s) (does p go))\n(<= terminal (true s))\n")
    assert err.line == 6
    assert "unstratified negation" in str(err) and "(not (goal p ?v))" in str(err)


def test_static_negation_of_the_same_atom_through_a_constant() -> None:
    err = error_of("(role p)\n(init s)\n(n 1) (n 2)\n(<= (q ?x) (n ?x) (not (q 1)))\n" + GOOD_TAIL)
    assert err.line == 4 and "unstratified negation" in str(err) and "(not (q 1))" in str(err)


def test_legal_must_not_depend_on_does() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal p go) (did))\n(<= (did) (does p go))\n")
    assert "line 3" in str(err) and "'legal' must not depend on 'does'" in str(err)


def test_init_must_not_depend_on_the_state() -> None:
    err = error_of("(role p)\n(init s)\n(<= (init t) (true s))\n" + GOOD_TAIL)
    assert "line 3" in str(err) and "'init' must not depend on the state" in str(err)


def test_goal_values_must_be_0_to_100() -> None:
    err = error_of("(role p)\n(init s)\n(<= (legal p go) (true s))\n(<= (goal p 150) (true s))\n")
    assert "line 4" in str(err) and "goal value 150" in str(err) and "from 0 to 100" in str(err)


def test_rules_that_build_ever_larger_terms() -> None:
    text = "(role p)\n(init (count 0))\n(<= (next (count (s ?n))) (true (count ?n)))\n(legal p go)\n"
    err = error_of(text)
    assert "grounding gave up" in str(err) and "ever larger terms" in str(err)


# --- at play time ------------------------------------------------------------------------------


def test_a_role_without_a_legal_move_in_a_non_terminal_state() -> None:
    text = """(role p)
(role q)
(init s)
(<= (legal p go) (true s))
(<= (legal q go) (true s))
(<= (legal p go) (true t))
(<= (next t) (true s))
(<= terminal (true u))
(goal p 0)
(goal q 0)
"""
    game = from_text(text, "stuck")
    s = game.initial_state()
    t = game.next_state(s, ["go", "go"])
    with pytest.raises(GDLError) as info:
        game.legal_moves(t, "q")
    assert "role q has no legal move in a non-terminal state" in str(info.value)
    assert "lines 4, 5, 6" in str(info.value)  # where the legal rules are
    assert [str(m) for m in game.legal_moves(t, "p")] == ["go"]
    with pytest.raises(GDLError, match="role q has no legal move"):
        game.next_state(t, ["go", "go"])
    with pytest.raises(GDLError, match="role q has no legal move"):
        game.random_playouts(3)


def test_a_terminal_state_without_a_goal() -> None:
    text = "(role p)\n(init s)\n(<= (legal p go) (true s))\n(<= (next t) (true s))\n(<= terminal (true t))\n"
    text += "(<= (goal p 100) (true s))\n"
    game = from_text(text, "goalless")
    s = game.initial_state()
    assert game.goals(s) == (100,)
    t = game.next_state(s, ["go"])
    assert game.is_terminal(t)
    with pytest.raises(GDLError) as info:
        game.goals(t)
    assert "the game is over but no 'goal' rule gives role p a value" in str(info.value)
    with pytest.raises(GDLError, match="has no goal in a terminal state"):
        game.random_playouts(2)


def test_a_terminal_state_with_two_goals() -> None:
    text = "(role p)\n(init s)\n(<= (legal p go) (true s))\n(<= (next t) (true s))\n(<= terminal (true t))\n"
    text += "(goal p 0)\n(<= (goal p 100) (true t))\n"
    game = from_text(text, "twogoals")
    t = game.next_state(game.initial_state(), ["go"])
    with pytest.raises(GDLError, match=r"several values \(0, 100\)"):
        game.goals(t)


def test_illegal_moves_and_bad_states_get_the_api_errors() -> None:
    text = "(role p)\n(init s)\n(<= (legal p go) (true s))\n(legal p wait)\n(<= (next t) (does p go))\n"
    text += "(<= terminal (true t))\n(goal p 50)\n"
    game = from_text(text, "api")
    s = game.initial_state()
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(s, ["jump"])
    with pytest.raises(ggp.IllegalMoveError):
        game.next_state(s, ["go", "go"])
    with pytest.raises(ggp.MoveSyntaxError):
        game.parse_move("(go")
    t = game.next_state(s, ["GO"])
    with pytest.raises(ggp.GameOverError):
        game.next_state(t, ["wait"])
    with pytest.raises(ggp.StateFormatError):
        game.state_from_dict({"game": "api", "facts": ["(nothing)"]})
    with pytest.raises(ggp.StateFormatError):
        game.state_from_dict({"game": "other", "facts": []})


def test_load_a_missing_rule_sheet() -> None:
    with pytest.raises(ggp.UnknownGameError, match=r"no such rule sheet"):
        ggp.load("no/such/rules.kif")


def test_a_broken_file_loaded_through_ggp_load(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "broken.kif"
    path.write_text("(role p)\n(init s)\n(<= (legal p (go ?x)) (true s))\n")
    with pytest.raises(GDLError, match=r"broken: line 3: unsafe rule"):
        ggp.load(path)


def test_random_is_chance_even_where_a_goal_rule_scores_every_role() -> None:
    # Kuhn poker without its sees rules: (goal ?p 50) (player ?p) is about the players, not about chance.
    text = """(role p) (role random) (init s)
    (<= (legal ?r go) (role ?r) (true s)) (<= (next t) (does p go)) (<= terminal (true t))
    (<= (goal ?r 50) (role ?r) (true s)) (<= (goal ?r 100) (role ?r) (true t))"""
    game = from_text(text, "chance_only")
    assert game.chance_role == "random" and game.players == ("p",)
    after = game.next_state(game.initial_state(), ["go", "go"])
    assert game.is_terminal(after) and game.goals(after) == (100, 0)  # chance scores nothing
