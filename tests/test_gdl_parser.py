"""The GDL reader and reasoner on small rule sheets written here.

Tic-tac-toe checked against its well-known counts, and one small sheet per
feature: comments, case-insensitive symbols, ``or``, ``distinct``, ``not``,
recursion (static, dynamic, and through a positive cycle), ``base``/``input``.
"""

from __future__ import annotations

import pickle

import pytest

import ggp
from ggp.gdl import GDLGame, from_text, parse_program

TICTACTOE = """
; Tic-tac-toe, the classic GGP example
(role xplayer)
(role oplayer)
(index 1) (index 2) (index 3)
(<= (base (cell ?x ?y ?m)) (index ?x) (index ?y) (mark ?m))
(<= (base (control ?p)) (role ?p))
(mark x) (mark o) (mark b)
(<= (input ?p (mark ?x ?y)) (role ?p) (index ?x) (index ?y))
(<= (input ?p noop) (role ?p))
(<= (init (cell ?x ?y b)) (index ?x) (index ?y))
(init (control xplayer))

(<= (legal ?p (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?p)))
(<= (legal xplayer noop) (true (control oplayer)))
(<= (legal oplayer noop) (true (control xplayer)))

(<= (next (cell ?m ?n x)) (does xplayer (mark ?m ?n)) (true (cell ?m ?n b)))
(<= (next (cell ?m ?n o)) (does oplayer (mark ?m ?n)) (true (cell ?m ?n b)))
(<= (next (cell ?m ?n ?w)) (true (cell ?m ?n ?w)) (distinct ?w b))
(<= (next (cell ?m ?n b)) (does ?w (mark ?j ?k)) (true (cell ?m ?n b))
    (or (distinct ?m ?j) (distinct ?n ?k)))
(<= (next (control xplayer)) (true (control oplayer)))
(<= (next (control oplayer)) (true (control xplayer)))

(<= (row ?m ?x) (true (cell ?m 1 ?x)) (true (cell ?m 2 ?x)) (true (cell ?m 3 ?x)))
(<= (column ?n ?x) (true (cell 1 ?n ?x)) (true (cell 2 ?n ?x)) (true (cell 3 ?n ?x)))
(<= (diagonal ?x) (true (cell 1 1 ?x)) (true (cell 2 2 ?x)) (true (cell 3 3 ?x)))
(<= (diagonal ?x) (true (cell 1 3 ?x)) (true (cell 2 2 ?x)) (true (cell 3 1 ?x)))
(<= (line ?x) (row ?m ?x))
(<= (line ?x) (column ?m ?x))
(<= (line ?x) (diagonal ?x))
(<= open (true (cell ?m ?n b)))

(<= (goal xplayer 100) (line x))
(<= (goal xplayer 50) (not (line x)) (not (line o)) (not open))
(<= (goal xplayer 0) (line o))
(<= (goal xplayer 0) (not (line x)) (not (line o)) open)
(<= (goal oplayer 100) (line o))
(<= (goal oplayer 50) (not (line x)) (not (line o)) (not open))
(<= (goal oplayer 0) (line x))
(<= (goal oplayer 0) (not (line x)) (not (line o)) open)
(<= terminal (line x))
(<= terminal (line o))
(<= terminal (not open))
"""


def ttt() -> GDLGame:
    return from_text(TICTACTOE, "tictactoe")


def play(game: GDLGame, *joints: tuple[str, ...]) -> ggp.State:
    state = game.initial_state()
    for joint in joints:
        state = game.next_state(state, list(joint))
    return state


def test_tictactoe_start() -> None:
    game = ttt()
    s = game.initial_state()
    assert game.roles == ("xplayer", "oplayer")
    assert [str(m) for m in game.legal_moves(s, "xplayer")] == [f"(mark {x} {y})" for x in "123" for y in "123"]
    assert [str(m) for m in game.legal_moves(s, "oplayer")] == ["noop"]
    assert not game.is_terminal(s)
    assert game.goals(s) == (0, 0)
    assert len(game.state_facts(s)) == 10
    assert "(control xplayer)" in game.state_facts(s)


def test_tictactoe_a_won_game() -> None:
    game = ttt()
    s = play(
        game,
        ("(mark 1 1)", "noop"),
        ("noop", "(mark 2 1)"),
        ("(mark 1 2)", "noop"),
        ("noop", "(mark 2 2)"),
        ("(mark 1 3)", "noop"),
    )
    assert game.is_terminal(s)
    assert game.goals(s) == (100, 0)


def test_tictactoe_reachable_positions_have_the_known_counts() -> None:
    """5,478 positions can arise in tic-tac-toe; 958 of them end the game: 626 won by x, 316 by o, 16 drawn."""
    game = ttt()
    seen = {game.initial_state()}
    frontier = list(seen)
    outcomes = {"x": 0, "o": 0, "draw": 0}
    while frontier:
        state = frontier.pop()
        if game.is_terminal(state):
            g = game.goals(state)
            outcomes["x" if g == (100, 0) else "o" if g == (0, 100) else "draw"] += 1
            assert g in ((100, 0), (0, 100), (50, 50))
            continue
        for joint in game.joint_moves(state):
            nxt = game.next_state(state, joint)
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    assert len(seen) == 5478
    assert outcomes == {"x": 626, "o": 316, "draw": 16}


def test_tictactoe_base_and_input() -> None:
    game = ttt()
    # base declares 30 facts; the reasoner's base propositions are those that can ever hold
    assert set(game.base_facts) <= {f"(cell {x} {y} {m})" for x in "123" for y in "123" for m in "xob"} | {
        "(control xplayer)",
        "(control oplayer)",
    }
    assert len(game.base_facts) == 29  # 27 (cell x y m) and 2 (control p)
    assert game.declared_base == sorted(game.base_facts)
    assert game.declared_inputs("xplayer") == sorted([f"(mark {x} {y})" for x in "123" for y in "123"] + ["noop"])
    assert {str(m) for m in game.all_moves("oplayer")} == {f"(mark {x} {y})" for x in "123" for y in "123"} | {"noop"}


def test_comments_and_case_are_ignored_but_spelling_is_kept() -> None:
    text = """
    ; a one-player game; comments run to the end of a line
    (ROLE Robot)   ; the only role
    (INIT (Light Off))
    (<= (LEGAL robot flipSwitch) (TRUE (light off)))  ; ; ;
    (<= (legal ROBOT Wait) (true (LIGHT ON)))
    (<= (next (light on)) (does robot FLIPSWITCH))
    (<= (next (light on)) (TRUE (light on)))
    (<= (next (light OFF)) (true (light off)) (not (does robot flipswitch)))
    (<= terminal (true (light on)) (does-not-matter))
    (<= (does-not-matter)) ; a 0-ary relation written as a list
    (<= (goal robot 100) (true (light on)))
    (<= (goal robot 0) (true (light off)))
    """
    game = from_text(text, "switch")
    assert game.roles == ("Robot",)
    s = game.initial_state()
    assert game.state_facts(s) == ["(Light Off)"]
    assert [str(m) for m in game.legal_moves(s, "Robot")] == ["flipSwitch"]
    assert game.parse_move("FLIPswitch").text == "flipSwitch"
    with pytest.raises(ggp.MoveSyntaxError, match="not a move"):
        game.parse_move("(flipswitch)")  # a one-element list is another term
    t = game.next_state(s, ["flipswitch"])
    assert game.state_facts(t) == ["(Light ON)"]
    assert game.is_terminal(t) and game.goals(t) == (100,)


def test_or_not_distinct_and_negated_disjunction() -> None:
    text = """
    (role p)
    (num 1) (num 2) (num 3) (num 4)
    (init (at 1))
    (<= (legal p (go ?n)) (true (at ?m)) (num ?n) (distinct ?n ?m)
        (or (small ?n) (big ?n)))                    ; or
    (<= (small ?n) (num ?n) (not (big ?n)) (not (distinct ?n 1)))  ; not distinct: ?n = 1
    (big 4)
    (big 3)
    (<= (next (at ?n)) (does p (go ?n)))
    (<= terminal (true (at ?n)) (not (or (small ?n) (big ?n))))     ; not (or ...)
    (<= (goal p 100) (true (at 2)))
    (<= (goal p 0) (true (at ?n)) (distinct ?n 2))
    """
    game = from_text(text, "features")
    s = game.initial_state()
    # from 1: small = {1}, big = {3, 4}; distinct from 1 leaves 3 and 4
    assert [str(m) for m in game.legal_moves(s, "p")] == ["(go 3)", "(go 4)"]
    assert not game.is_terminal(s)
    t = game.next_state(s, ["(go 3)"])
    assert [str(m) for m in game.legal_moves(t, "p")] == ["(go 1)", "(go 4)"]
    assert game.goals(t) == (0,)


REACH = """
    (role p)
    (node a) (node b) (node c) (node d)
    (init (edge a b)) (init (edge b a)) (init (edge b c)) (init (edge d a))
    (init (at a))
    (<= (reach ?x) (true (at ?x)))
    (<= (reach ?y) (reach ?x) (true (edge ?x ?y)))
    (<= (legal p (cut ?x ?y)) (true (edge ?x ?y)))
    (legal p stay)
    (<= (next (edge ?x ?y)) (true (edge ?x ?y)) (not (does p (cut ?x ?y))))
    (<= (next (at ?x)) (true (at ?x)))
    (<= (next (visible ?x)) (reach ?x))
    (<= (later ?x ?y) (before ?x ?y))                   ; static recursion
    (<= (later ?x ?z) (before ?x ?y) (later ?y ?z))
    (before a b) (before b c) (before c d)
    (<= (next (order ?x ?y)) (later ?x ?y) (true (at a)) (reach ?y))
    (<= terminal (true (visible c)) (not (reach c)))
    (<= (goal p 100) (reach d))
    (<= (goal p 0) (not (reach d)))
    """


def test_recursion_static_and_dynamic_with_a_positive_cycle() -> None:
    """Reachability over edges that are part of the state: the ground program has a positive cycle a <-> b."""
    game = from_text(REACH, "reach")
    s = game.initial_state()
    t = game.next_state(s, ["stay"])
    facts = game.state_facts(t)
    assert [f for f in facts if f.startswith("(visible")] == ["(visible a)", "(visible b)", "(visible c)"]
    assert [f for f in facts if f.startswith("(order")] == [
        "(order a b)",
        "(order a c)",
        "(order b c)",
    ]
    assert not game.is_terminal(t)
    u = game.next_state(t, ["(cut b c)"])
    assert "(edge b c)" not in game.state_facts(u)
    assert game.is_terminal(u)  # c was visible, and is no longer reachable
    assert game.goals(u) == (0,)
    # the cycle is evaluated to its least fixpoint: d stays unreachable although d -> a
    assert "(visible d)" not in facts


def test_states_are_values() -> None:
    game = ttt()
    a = play(game, ("(mark 2 2)", "noop"))
    b = play(game, ("(mark 2 2)", "noop"))
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != game.initial_state()
    assert game.state_from_dict(game.state_to_dict(a)) == a
    assert game.state_from_json(game.state_to_json(a)) == a
    assert pickle.loads(pickle.dumps(a)) == a
    assert "(cell 2 2 x)" in str(a)
    assert game.svg(a).startswith("<svg") and "(cell 2 2 x)" in game.svg(a)
    assert game.state_to_dict(a)["facts"] == game.state_facts(a)


def test_parse_program_keeps_roles_in_order() -> None:
    p = parse_program("(role b) (role a) (role c)")
    assert p.roles == ("b", "a", "c")


def test_load_a_rule_sheet_file(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "tictactoe.kif"
    path.write_text(TICTACTOE)
    game = ggp.load(str(path))
    assert isinstance(game, GDLGame)
    assert game.name == "tictactoe"
    assert ggp.load(path) is game  # loaded once per text


def test_incremental_evaluator_on_a_positive_cycle() -> None:
    """Random playouts of the reachability game (a cyclic block in the propnet): both evaluators agree."""
    game = from_text(REACH, "reach")
    sweep = game.random_playouts(50, seed=4, max_steps=12, incremental=False)
    for scratch in (0, 6):
        incremental = game.random_playouts(50, seed=4, max_steps=12, incremental=True, scratch=scratch)
        assert (incremental[0] == sweep[0]).all() and (incremental[1] == sweep[1]).all()
    assert {int(g) for g in sweep[0][:, 0]} >= {0}


# --- what the public GDL corpus needs -----------------------------------------------------------


def test_goal_rules_that_negate_goal_for_another_value() -> None:
    """Stratified once arguments are considered: (goal robot 100) negates (goal robot 0), never itself."""
    text = """
    (role robot)
    (init (cell 1 blank)) (init (cell 2 blank))
    (<= (legal robot (fill ?c)) (true (cell ?c blank)))
    (<= (next (cell ?c full)) (does robot (fill ?c)))
    (<= (next (cell ?c ?s)) (true (cell ?c ?s)) (not (does robot (fill ?c))))
    (<= open (true (cell ?c blank)))
    (<= terminal (not open))
    (<= (goal robot 0) open)
    (<= (goal robot 100) (not (goal robot 0)))
    """
    game = from_text(text, "fill")
    s = game.initial_state()
    assert game.goals(s) == (0,) and not game.is_terminal(s)
    t = play(game, ("(fill 1)",), ("(fill 2)",))
    assert game.is_terminal(t) and game.goals(t) == (100,)


def test_static_relation_negating_itself_for_other_arguments() -> None:
    """(tag other ?x) negates (tag small ?x): the static part is evaluated rule group by rule group."""
    text = """
    (role p)
    (init s)
    (num 1) (num 2) (num 3)
    (foo 2)
    (<= (big 3) (num 3))
    (<= (big ?x) (num ?x) (foo ?x))
    (<= (small ?x) (num ?x) (not (big ?x)))
    (<= (tag small ?x) (small ?x))
    (<= (tag other ?x) (num ?x) (not (tag small ?x)))
    (<= (legal p (go ?x)) (true s) (tag other ?x))
    (<= (next t) (does p ?m))
    (<= terminal (true t))
    (goal p 100)
    """
    game = from_text(text, "tags")
    assert [str(m) for m in game.legal_moves(game.initial_state(), "p")] == ["(go 2)", "(go 3)"]


def test_rule_bodies_longer_than_python_nests_loops() -> None:
    """A rule of 26 literals (static, then dynamic): its join is generated as several functions."""
    chain = " ".join(f"(succ ?b{i} ?b{i + 1})" for i in range(1, 25))
    text = f"""
    (role p)
    (init (at 0))
    {" ".join(f"(succ {i} {i + 1})" for i in range(40))}
    (<= (far ?a ?z) (succ ?a ?b1) {chain} (succ ?b25 ?z))
    (<= (legal p (jump ?z)) (far ?a ?z) (true (at ?a)))
    (<= (legal p (hop ?z)) (true (at ?a)) (succ ?a ?b1) {chain} (succ ?b25 ?z))
    (<= (next (at ?z)) (does p (jump ?z)))
    (<= (next (at ?z)) (does p (hop ?z)))
    (<= terminal (true (at ?x)) (distinct ?x 0))
    (goal p 100)
    """
    game = from_text(text, "long")
    assert [str(m) for m in game.legal_moves(game.initial_state(), "p")] == ["(hop 26)", "(jump 26)"]
    assert game.state_facts(play(game, ("(hop 26)",))) == ["(at 26)"]


MAZE = """
    (role p)
    (init (at 1)) (init (wall 3)) (init (step 0))
    (<= (legal p (go ?y)) (true (at ?x)) (succ ?x ?y) (not (true (wall ?y))))
    (legal p stay)
    (<= (next (at ?y)) (does p (go ?y)))
    (<= (next (at ?x)) (true (at ?x)) (does p stay))
    (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
    (<= terminal (true (step 60)))
    (goal p 100)
    """ + " ".join(f"(succ {i} {i + 1})" for i in range(60))


def test_facts_only_frame_rules_keep_are_as_static_as_init() -> None:
    """A wall kept by its frame rule stops the relaxed grounding too: (at ?x) stays within the walls."""
    from ggp.gdl.grounder import ground
    from ggp.gdl.rewrite import frozen_fluents

    text = MAZE + "\n(<= (next (wall ?x)) (true (wall ?x)))"
    program = parse_program(text, "maze")
    assert frozen_fluents(program) == {("wall", 1)}
    facts = {row[0] for row in ground(program).dynamic["true"]}
    assert ("at", "2") in facts and ("at", "4") not in facts
    game = from_text(text, "maze")
    s = play(game, ("(go 2)",))
    assert [str(m) for m in game.legal_moves(s, "p")] == ["stay"]


def test_facts_no_rule_keeps_vanish_after_the_first_move() -> None:
    from ggp.gdl.rewrite import frozen_fluents

    assert frozen_fluents(parse_program(MAZE, "maze")) == set()  # the wall is not kept: gone after a move
    game = from_text(MAZE, "maze without a frame rule")
    s = play(game, ("stay",), ("(go 2)",))
    assert [str(m) for m in game.legal_moves(s, "p")] == ["(go 3)", "stay"]


def test_frame_rules_over_every_move_and_cell_ground_small() -> None:
    """Split by variable elimination, the frame rule has about moves x cells instances, not moves x cells x marks."""
    from ggp.gdl.grounder import ground

    text = """
    (role p)
    (<= (init (cell ?x ?y b)) (n ?x) (n ?y))
    (<= (legal p (mark ?x ?y)) (true (cell ?x ?y b)))
    (<= (next (cell ?x ?y x)) (does p (mark ?x ?y)))
    (<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (does p (mark ?u ?v)) (or (distinct ?x ?u) (distinct ?y ?v)))
    (<= open (true (cell ?x ?y b)))
    (<= terminal (not open))
    (goal p 100)
    """ + " ".join(f"(n {i})" for i in range(1, 13))
    program = parse_program(text, "marks")
    # unsplit: 144 cells x 2 marks x 144 moves x 2 cases of the 'or', about 83,000
    assert len(ground(program).rules) < 10_000
    game = from_text(text, "marks")
    s = play(game, ("(mark 3 4)",), ("(mark 12 1)",))
    facts = game.state_facts(s)
    assert "(cell 3 4 x)" in facts and "(cell 12 1 x)" in facts and "(cell 4 3 b)" in facts
    assert len(facts) == 144


def test_large_static_relations_are_computed_on_demand(monkeypatch: pytest.MonkeyPatch) -> None:
    from ggp.gdl import grounder

    monkeypatch.setattr(grounder, "DEFER_ROWS", 5)
    text = """
    (role p)
    (init (at 3))
    (<= (gap ?a ?b) (succ ?a ?x) (succ ?x ?b))
    (<= (far ?a 99) (gap ?a ?b) (gap ?b ?c))
    (<= (legal p (go ?b)) (true (at ?a)) (gap ?a ?b))
    (<= (legal p rest) (true (at ?a)) (not (gap ?a 7)))
    (<= (legal p leap) (true (at ?a)) (far ?a ?z))
    (<= (next (at ?b)) (does p (go ?b)))
    (<= (next (at ?a)) (true (at ?a)) (does p rest))
    (<= terminal (true (at 9)))
    (goal p 100)
    """ + " ".join(f"(succ {i} {i + 1})" for i in range(20))
    g = grounder.Grounder(parse_program(text, "gaps"))
    g.ground()
    assert set(g.lazy) == {"gap", "far"}  # 18 and 16 rows: over the (patched) allowance
    game = from_text(text, "gaps (deferred)")
    s = game.initial_state()
    assert [str(m) for m in game.legal_moves(s, "p")] == ["(go 5)", "leap", "rest"]
    t = play(game, ("(go 5)",))
    assert [str(m) for m in game.legal_moves(t, "p")] == ["(go 7)", "leap"]  # (gap 5 7): no rest
