"""Three GDL-II example sheets, played: Kriegspiel tic-tac-toe, liar's dice and breakthrough in the fog
(ggp/gdl/examples). Each must load on the propnet, give every role a legal move until it ends, let a role
know its legal moves from its own moves and percepts, and tell a role nothing it must not know: the
percepts are checked against the true state along seeded random playouts."""

from __future__ import annotations

import random
import statistics

import pytest

from ggp.agents.hidden import Belief, HiddenPlayer, RandomHiddenPlayer
from ggp.core.information import Seen
from ggp.gdl import ProverGame
from ggp.gdl.examples import EXAMPLES, example_text, load_example
from ggp.match.hidden import play_hidden_match

#: Each sheet's chance role, the most joint moves a game can last, and the goals (players only) it can end on.
SHEETS = {
    "krieg_tictactoe": (None, 18, {(100, 0), (0, 100), (50, 50)}),
    "liars_dice": ("random", 11, {(100, 0), (0, 100)}),
    "fog_breakthrough": (None, 24, {(100, 0), (0, 100), (50, 50)}),
}


def history(game, rng):
    """A uniformly random playout (chance included), as (state, joint move, next state) triples."""
    state = game.initial_state()
    while not game.is_terminal(state):
        joint = [rng.choice(list(game.legal_moves(state, role))) for role in game.roles]
        after = game.next_state(state, joint)
        yield state, joint, after
        state = after


def play(game, state, *joints):
    """``state`` after the joint moves, each a string of moves in role order."""
    for joint in joints:
        state = game.next_state(state, joint.split(","))
    return state


def moves(game, state, role):
    return [str(m) for m in game.legal_moves(state, role)]


def words(fact):
    """A flat fact's words: '(cell 1 2 x)' -> ['cell', '1', '2', 'x']."""
    return fact.strip("()").split()


def player_goals(game, state):
    return tuple(game.goals(state)[game.role_index(r)] for r in game.players)


# --- every sheet ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHEETS))
def test_the_sheet_is_an_example_and_loads_on_the_propnet_as_gdl_ii(name) -> None:
    chance, _, _ = SHEETS[name]
    game = load_example(name)
    assert name in EXAMPLES and game.engine == "propnet"
    assert game.hidden_information and game.chance_role == chance
    assert len(game.players) == 2 and game.players == tuple(r for r in game.roles if r != chance)


@pytest.mark.parametrize("name", sorted(SHEETS))
def test_random_playouts_end_in_time_and_every_state_before_the_end_gives_every_role_a_move(name) -> None:
    _, longest, endings = SHEETS[name]
    game = load_example(name)
    rng = random.Random(11)
    seen = set()
    for _ in range(300):
        steps = list(history(game, rng))
        assert 0 < len(steps) <= longest
        assert all(game.legal_moves(state, role) for state, _, _ in steps for role in game.roles)
        seen.add(player_goals(game, steps[-1][2]))
    assert seen == endings  # every ending the rules allow happens


@pytest.mark.parametrize("name", sorted(SHEETS))
def test_random_hidden_players_finish_their_matches_without_a_fault(name) -> None:
    _, longest, endings = SHEETS[name]
    game = load_example(name)
    for seed in range(12):
        players = {role: RandomHiddenPlayer(seed=seed * 7 + i) for i, role in enumerate(game.players)}
        match = play_hidden_match(game, players, seed=seed)
        assert not match.faults
        goals = tuple(match.goals[game.role_index(r)] for r in game.players)
        assert goals in endings and sum(goals) == 100
        assert 0 < len(match.joints) <= longest
        assert all(len(match.views[r].steps) == len(match.joints) for r in game.players)


@pytest.mark.parametrize("name", sorted(SHEETS))
def test_a_role_knows_its_legal_moves_from_its_own_moves_and_percepts(name) -> None:
    """Every state a role cannot tell from the true one (an unthinned belief holds them all) gives it the same
    legal moves: the sheet is well formed, a role always knows what it may do."""
    game = load_example(name)
    rng = random.Random(5)
    for _ in range(12):
        beliefs = {role: Belief(game, role, size=1_000_000, rng=random.Random(0)) for role in game.players}
        for _, joint, after in history(game, rng):
            for role, belief in beliefs.items():
                i = game.role_index(role)
                belief.update(Seen(joint[i], game.percepts(after, role)))
                states = [s for s, _ in belief.hypotheses()]
                assert after in states
                if not game.is_terminal(after):
                    legal = set(moves(game, after, role))
                    assert all(set(moves(game, s, role)) == legal for s in states)


@pytest.mark.parametrize("name", sorted(SHEETS))
def test_the_prover_gives_the_propnet_s_percepts_and_goals(name) -> None:
    net, prover = load_example(name), ProverGame(example_text(name), f"{name}_prover")
    rng = random.Random(2)
    for _ in range(3):
        b = prover.initial_state()
        for _, joint, a in history(net, rng):
            b = prover.next_state(b, [str(m) for m in joint])
            assert all(net.percepts(a, r) == prover.percepts(b, r) for r in net.players)
        assert prover.is_terminal(b) and net.goals(a) == prover.goals(b)


# --- Kriegspiel tic-tac-toe -----------------------------------------------------------------------------


def test_krieg_percepts_name_a_cell_only_to_the_player_that_tried_it() -> None:
    game = load_example("krieg_tictactoe")
    rng = random.Random(1)
    failed = 0
    for _ in range(300):
        for state, joint, after in history(game, rng):
            before, now = set(game.state_facts(state)), set(game.state_facts(after))
            for i, role in enumerate(game.players):
                other = game.players[1 - i]
                move, their = str(joint[i]), str(joint[1 - i])
                results = []
                for percept in game.percepts(after, role):
                    if percept == "your_turn":  # the opponent's try succeeded, and nothing more
                        assert their.startswith("(mark") and f"(control {role})" in now
                        assert f"(cell {their[6:-1]} {other})" in now - before
                        continue
                    kind, m, n = words(percept)
                    assert move == f"(mark {m} {n})"  # only the cell it tried
                    results.append(kind)
                    if kind == "marked":
                        assert f"(cell {m} {n} {role})" in now - before and f"(control {other})" in now
                    else:
                        assert kind == "taken" and f"(cell {m} {n} {other})" in before
                        assert f"(control {role})" in now  # it tries again
                        failed += 1
                assert len(results) == (1 if move.startswith("(mark") else 0)
    assert failed > 100


def test_krieg_a_try_on_the_opponent_s_cell_is_answered_and_the_player_tries_again() -> None:
    game = load_example("krieg_tictactoe")
    s = play(game, game.initial_state(), "(mark 2 2),noop")
    assert game.percepts(s, "xplayer") == ("(marked 2 2)",) and game.percepts(s, "oplayer") == ("your_turn",)
    assert "(mark 2 2)" in moves(game, s, "oplayer")  # it does not know the cell is taken
    s = play(game, s, "noop,(mark 2 2)")
    assert game.percepts(s, "oplayer") == ("(taken 2 2)",) and game.percepts(s, "xplayer") == ()
    assert moves(game, s, "xplayer") == ["noop"]  # still o's turn
    assert len(moves(game, s, "oplayer")) == 8 and "(mark 2 2)" not in moves(game, s, "oplayer")
    s = play(game, s, "noop,(mark 1 1)")
    assert game.percepts(s, "oplayer") == ("(marked 1 1)",) and game.percepts(s, "xplayer") == ("your_turn",)
    assert "(mark 1 1)" in moves(game, s, "xplayer") and "(mark 2 2)" not in moves(game, s, "xplayer")
    s = play(game, s, "(mark 1 1),noop")
    assert game.percepts(s, "xplayer") == ("(taken 1 1)",) and not game.is_terminal(s)


def test_krieg_three_in_a_row_wins_and_a_full_board_without_one_draws() -> None:
    game = load_example("krieg_tictactoe")
    x, o = "(mark {}),noop", "noop,(mark {})"
    s = play(game, game.initial_state(), x.format("1 1"), o.format("2 1"), x.format("1 2"), o.format("2 2"))
    assert not game.is_terminal(s)
    s = play(game, s, x.format("1 3"))
    assert game.is_terminal(s) and game.goals(s) == (100, 0)
    # x o x / x o o / o x x: no line
    cells = ["1 1", "2 2", "1 3", "1 2", "3 2", "2 3", "2 1", "3 1", "3 3"]
    s = game.initial_state()
    for k, cell in enumerate(cells):
        assert not game.is_terminal(s)
        s = play(game, s, (x if k % 2 == 0 else o).format(cell))
    assert game.is_terminal(s) and game.goals(s) == (50, 50)


# --- liar's dice ----------------------------------------------------------------------------------------


def test_liars_dice_a_player_sees_its_own_die_and_the_other_s_only_on_a_call() -> None:
    game = load_example("liars_dice")
    rng = random.Random(3)
    calls = 0
    for _ in range(400):
        for _, joint, after in history(game, rng):
            facts = game.state_facts(after)
            dice = {words(f)[1]: words(f)[2] for f in facts if f.startswith("(die ")}
            called = "liar" in [str(m) for m in joint]
            calls += called
            for i, role in enumerate(game.players):
                other = game.players[1 - i]
                shown = []
                for percept in game.percepts(after, role):
                    if percept.startswith("(your_die "):
                        assert str(joint[game.role_index("random")]) == f"(roll {dice[role]})"
                        assert percept == f"(your_die {dice[role]})"
                        assert set(dice) == ({"first"} if role == "first" else {"first", "second"})
                    elif percept.startswith("(did "):
                        assert percept == f"(did {other} {joint[1 - i]})"
                    else:
                        assert called and percept.startswith("(die ")
                        shown.append(percept)
                assert shown == ([f"(die first {dice['first']})", f"(die second {dice['second']})"] if called else [])
    assert calls == 400  # every game ends on a call


def test_liars_dice_a_call_reveals_the_dice_and_the_highest_face_is_wild() -> None:
    game = load_example("liars_dice")
    rolled = play(game, game.initial_state(), "noop,noop,(roll 2)", "noop,noop,(roll 4)")
    assert moves(game, rolled, "first") == [f"(bid {q} {f})" for q in (1, 2) for f in (1, 2, 3, 4)]  # no call yet
    assert moves(game, rolled, "second") == ["noop"]
    s = play(game, rolled, "(bid 2 2),noop,noop")
    assert game.percepts(s, "second") == ("(did first (bid 2 2))",) and game.percepts(s, "first") == ()
    assert moves(game, s, "second") == ["(bid 2 3)", "(bid 2 4)", "liar"]
    s = play(game, s, "noop,liar,noop")
    dice = ("(die first 2)", "(die second 4)")
    assert game.is_terminal(s) and game.percepts(s, "second") == dice
    assert game.percepts(s, "first") == ("(did second liar)", *dice)
    assert game.goals(s)[:2] == (100, 0)  # a 2 and a wild 4: two 2s, the bid holds, the caller loses
    s = play(game, rolled, "(bid 1 1),noop,noop", "noop,(bid 2 1),noop", "liar,noop,noop")
    assert game.is_terminal(s) and game.goals(s)[:2] == (100, 0)  # one 1 (the wild die) of two: the caller wins
    s = play(game, rolled, "(bid 2 4),noop,noop")
    assert moves(game, s, "second") == ["liar"]  # nothing is higher
    s = play(game, s, "noop,liar,noop")
    assert game.goals(s)[:2] == (0, 100)  # one 4 only


# --- breakthrough in the fog ----------------------------------------------------------------------------


def board(game, state):
    return {(int(w[1]), int(w[2])): w[3] for w in map(words, game.state_facts(state)) if w[0] == "cell"}


def test_fog_a_player_sees_exactly_the_enemy_pieces_next_to_its_own_and_its_own_losses() -> None:
    game = load_example("fog_breakthrough")
    rng = random.Random(4)
    lost = hidden = 0
    for _ in range(300):
        for state, _, after in history(game, rng):
            was, now = board(game, state), board(game, after)
            for role in game.players:
                mine = [c for c, p in now.items() if p == role]
                near = {
                    c
                    for c, p in now.items()
                    if p != role and any(max(abs(c[0] - a), abs(c[1] - b)) == 1 for a, b in mine)
                }
                hidden += sum(1 for p in now.values() if p != role) - len(near)
                taken = {c for c, p in was.items() if p == role and now.get(c, role) != role}
                percepts = [words(p) for p in game.percepts(after, role)]
                assert all(w[0] in ("enemy", "lost") for w in percepts)
                assert {(int(w[1]), int(w[2])) for w in percepts if w[0] == "enemy"} == near
                assert {(int(w[1]), int(w[2])) for w in percepts if w[0] == "lost"} == taken
                lost += len(taken)
    assert lost > 300 and hidden > 3000  # captures happen, and most enemy pieces stay in the fog


def test_fog_a_capture_is_told_to_the_loser_and_reaching_the_far_row_wins() -> None:
    game = load_example("fog_breakthrough")
    w, b = "(move {}),noop", "noop,(move {})"
    s = play(game, game.initial_state(), w.format("3 1 3 2"), b.format("4 5 4 4"))
    assert game.percepts(s, "white") == () and game.percepts(s, "black") == ()  # still a row apart
    assert "(move 3 2 3 3)" in moves(game, s, "white")
    s = play(game, s, w.format("3 2 3 3"))
    assert game.percepts(s, "white") == ("(enemy 4 4)",) and game.percepts(s, "black") == ("(enemy 3 3)",)
    assert "(move 4 4 3 3)" in moves(game, s, "black") and "(move 4 4 4 3)" in moves(game, s, "black")
    blocked = play(game, s, b.format("3 5 3 4"))  # face to face: no straight move, diagonal captures
    assert game.percepts(blocked, "white") == ("(enemy 3 4)", "(enemy 4 4)")
    assert {"(move 3 3 2 4)", "(move 3 3 4 4)"} <= set(moves(game, blocked, "white"))
    assert "(move 3 3 3 4)" not in moves(game, blocked, "white")
    s = play(game, s, b.format("4 4 3 3"))  # a capture
    assert board(game, s)[(3, 3)] == "black" and sum(p == "white" for p in board(game, s).values()) == 4
    assert game.percepts(s, "white") == ("(lost 3 3)",) and game.percepts(s, "black") == ()
    s = play(game, s, w.format("1 1 1 2"), b.format("3 3 3 2"))
    assert game.percepts(s, "white") == ("(enemy 3 2)",)  # next to (2 1) and (4 1)
    s = play(game, s, w.format("5 1 5 2"))
    assert game.percepts(s, "black") == ("(enemy 2 1)", "(enemy 4 1)")
    assert {"(move 3 2 2 1)", "(move 3 2 3 1)", "(move 3 2 4 1)"} <= set(moves(game, s, "black"))
    s = play(game, s, b.format("3 2 2 1"))
    assert game.is_terminal(s) and game.goals(s) == (0, 100)


def test_fog_capturing_every_enemy_piece_wins_and_the_step_limit_draws() -> None:
    # a board of one piece each: white's first move captures black's only piece
    text = example_text("fog_breakthrough")
    start = [line for line in text.splitlines() if line.startswith("(init (cell")]
    small = text
    for line in start:
        small = small.replace(line, "")
    small += "\n(init (cell 2 1 white)) (init (cell 3 2 black))\n"
    game = ProverGame(small, "fog_one_each")  # the prover: a hand-played sheet needs no compiling
    s = play(game, game.initial_state(), "(move 2 1 3 2),noop")
    assert game.is_terminal(s) and game.goals(s) == (100, 0)
    # the step limit, brought down to 4 steps: a draw at the limit
    short = ProverGame(text.replace("(true (step 24))", "(true (step 4))"), "fog_short")
    w, b = "(move {}),noop", "noop,(move {})"
    s = play(short, short.initial_state(), w.format("1 1 1 2"), b.format("1 5 1 4"), w.format("5 1 5 2"))
    assert not short.is_terminal(s)
    s = play(short, s, b.format("5 5 5 4"))
    assert short.is_terminal(s) and short.goals(s) == (50, 50)
    full = load_example("fog_breakthrough")
    assert not full.is_terminal(
        play(
            full,
            full.initial_state(),
            w.format("1 1 1 2"),
            b.format("1 5 1 4"),
            w.format("5 1 5 2"),
            b.format("5 5 5 4"),
        )
    )


# --- a player that uses what it knows ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "samples", "matches"), [("krieg_tictactoe", 16, 12), ("liars_dice", 32, 20), ("fog_breakthrough", 8, 8)]
)
def test_the_hidden_information_player_beats_a_random_one(name, samples, matches) -> None:
    """A fixed budget (samples per move), so the matches are the same however busy the machine is."""
    game = load_example(name)
    scores = []
    for i in range(matches):
        seat = game.players[i % 2]
        players = {
            r: HiddenPlayer(samples=samples, playouts=4, seed=i) if r == seat else RandomHiddenPlayer(seed=100 + i)
            for r in game.players
        }
        match = play_hidden_match(game, players, seed=i)
        assert not match.faults
        scores.append(match.goals[game.role_index(seat)])
    assert statistics.mean(scores) >= 70
