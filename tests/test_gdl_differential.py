"""Random games played side by side on a native engine and on the GDL reasoner.

At every state of every game, both must give the same legal moves for every
role, the same terminal flag, the same goals and the same facts; both then take
the same random joint move. Run for the shared rule sheets and for ggp's own.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ggp
import ggp.gdl
from conftest import GAME_NAMES, SHARED, sheet_text
from ggp.core.kernels import rng_state
from ggp.gdl import builtin, load_file
from ggp.gdl.differential_step import dn_playouts
from ggp.gdl.evaluate import pn_playouts
from ggp.gdl.grounder import ground
from ggp.gdl.parser import parse_program
from ggp.gdl.propnet import build_propnet

# Games per pair: Amazons games are long (about 90 and 140 states) with many moves.
GAMES = {"amazons_10x10": 4, "amazons_8x8": 6, "bomberman": 30, "bomberman2p": 30, "wallmaze": 30}


def side_by_side(native: Any, gdl: Any, games: int, seed: int) -> int:
    rng = random.Random(seed)
    states = 0
    for g in range(games):
        a, b = native.initial_state(), gdl.initial_state()
        while True:
            where = f"{native.name} game {g} state {states}"
            legal = [sorted(str(m) for m in native.legal_moves(a, r)) for r in native.roles]
            assert [sorted(str(m) for m in gdl.legal_moves(b, r)) for r in gdl.roles] == legal, where
            assert gdl.is_terminal(b) is native.is_terminal(a), where
            assert gdl.goals(b) == native.goals(a), where
            assert gdl.state_facts(b) == native.state_facts(a), where
            states += 1
            if native.is_terminal(a):
                break
            joint = [rng.choice(moves) for moves in legal]
            a, b = native.next_state(a, joint), gdl.next_state(b, joint)
    return states


@pytest.mark.parametrize("name", GAME_NAMES)
def test_shared_sheet_agrees_with_the_native_engine(name: str) -> None:
    gdl = load_file(SHARED / "gdl" / f"{name}.kif")
    assert side_by_side(ggp.load(name), gdl, GAMES[name], seed=7) > GAMES[name]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_ggp_sheet_agrees_with_the_native_engine(name: str) -> None:
    assert side_by_side(ggp.load(name), builtin(name), GAMES[name], seed=11) > GAMES[name]


OUTCOMES = {
    "amazons_10x10": {(0, 100), (100, 0)},
    "amazons_8x8": {(0, 100), (100, 0)},
    "bomberman": {(0, 100), (100, 0), (50, 50)},
    "bomberman2p": {(0, 100), (100, 0), (50, 50)},
    "wallmaze": {(0, 0), (100, 0), (0, 100), (75, 25), (25, 75), (50, 50)},
}


@pytest.mark.parametrize("name", GAME_NAMES)
def test_compiled_playouts_end_in_outcomes_of_the_game(name: str) -> None:
    """The compiled playout loop on ggp's sheet: every game ends, with an outcome the rules allow."""
    goals, lengths, transitions = builtin(name).random_playouts(40, seed=3)
    assert transitions == int(lengths.sum()) > 0
    assert {(int(a), int(b)) for a, b in goals} <= OUTCOMES[name]
    assert (lengths > 0).all()


@pytest.mark.parametrize("name", GAME_NAMES)
@pytest.mark.parametrize("sheet", ["shared", "ggp"])
def test_incremental_and_sweeping_evaluators_play_the_same_games(name: str, sheet: str) -> None:
    """Same seed, same games: the incremental evaluator (also when its stack runs out) agrees with the sweep."""
    game = load_file(SHARED / "gdl" / f"{name}.kif") if sheet == "shared" else builtin(name)
    count = 6 if name.startswith("amazons") else 25
    sweep = game.random_playouts(count, seed=21, incremental=False)
    for scratch in (0, 10):
        incremental = game.random_playouts(count, seed=21, incremental=True, scratch=scratch)
        assert (incremental[0] == sweep[0]).all() and (incremental[1] == sweep[1]).all()
        assert incremental[2] == sweep[2]


# --- the propnet's optimisations and the kernel's two modes --------------------------------------
# Sheets beside the shared ones: tic-tac-toe, and two corpus sheets whose networks have cyclic blocks
# (recursive definitions evaluated to a least fixpoint), the part of the evaluators easiest to get wrong.
CORPUS_SHEETS = ["atariGoVariant_7x7", "cubicup_3player"]


SHEETS = (
    [f"shared:{n}" for n in GAME_NAMES]
    + [f"ggp:{n}" for n in ("bomberman2p", "wallmaze")]
    + ["tictactoe"]
    + [f"corpus:{n}" for n in CORPUS_SHEETS]
)


def _playouts(net: Any, incremental: bool, count: int, seed: int, scratch: int = 0) -> tuple[Any, ...]:
    roles = int(net.header[3])
    goals = np.zeros((count, roles), dtype=np.int64)
    lengths = np.zeros(count, dtype=np.int64)
    error = np.zeros(2, dtype=np.int64)
    args = (net, np.asarray(net.init, dtype=np.uint8).copy(), count, rng_state(seed), 400, goals, lengths, error)
    n = dn_playouts(*args, scratch) if incremental else pn_playouts(*args)
    return goals, lengths, n, tuple(error)


@pytest.mark.parametrize("which", SHEETS)
def test_optimised_network_plays_the_same_games_as_the_raw_one(which: str) -> None:
    """Folding, merging, flattening and dropping gates changes no legal move, next state, terminal test or goal:
    the optimised network, by either evaluator, plays exactly the games the program's own network plays."""
    text, name = sheet_text(which)
    program = parse_program(text, name)
    grounded = ground(program)
    raw = build_propnet(grounded, program, optimise=False)
    opt = build_propnet(grounded, program, optimise=True)
    assert opt.num_gates <= raw.num_gates and opt.move_texts == raw.move_texts
    assert opt.base_texts == raw.base_texts
    count = 4 if "amazons" in name else 12
    expected = _playouts(raw.net, False, count, seed=5)
    assert expected[2] > 0 and expected[3] == (0, 0)
    for incremental, scratch in ((False, 0), (True, 0), (True, 9)):
        got = _playouts(opt.net, incremental, count, seed=5, scratch=scratch)
        assert (got[0] == expected[0]).all() and (got[1] == expected[1]).all(), (incremental, scratch)
        assert got[2:] == expected[2:]


def test_a_fact_read_by_every_move_is_factored_out_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Amazons' ``(true (turn white move))`` is part of every one of white's queen moves, beside the queen's
    square, and changes at every step: paired with each square into a gate of its own, it is read by one
    gate per square, and a step updates a count per square instead of one per move."""
    from ggp.gdl import optimise as propnet

    text, name = sheet_text("shared:amazons_8x8")
    program = parse_program(text, name)
    grounded = ground(program)

    def readers(net: Any, fact: str) -> int:  # (the gates it guards read it too)
        node = 2 + built.base_texts.index(fact)
        return int(net.fanout_ptr[node + 1] - net.fanout_ptr[node] + net.guarded_ptr[node + 1] - net.guarded_ptr[node])

    built = build_propnet(grounded, program)
    factored = readers(built.net, "(turn white move)")
    monkeypatch.setattr(propnet, "FACTOR_READERS", 1 << 30)
    built = build_propnet(grounded, program)
    assert readers(built.net, "(turn white move)") >= 1456
    assert 64 <= factored <= 64 + 4  # a gate per square, and the few rules that read the turn alone


def test_a_fact_read_by_very_many_gates_guards_them() -> None:
    """The turn facts of Amazons are read by a gate per square (the queen there AND the turn): each such gate
    counts only its square and is guarded by the turn. A guarded gate whose count is at the threshold is armed:
    a turn that changes sets only those (the squares holding the mover's amazons), and updates no count. In
    every state of a random game, a guarded gate is its guard AND its count at the threshold, and each guard's
    armed list holds exactly its gates at the threshold."""
    from ggp.gdl import from_text
    from ggp.gdl.differential import DN_ACOUNT, DN_APOS, DN_ARMED, DN_CNT, DN_VALS, dn_alloc, dn_reset
    from ggp.gdl.differential_step import dn_step
    from ggp.gdl.propnet import GUARD_READERS

    text, name = sheet_text("shared:amazons_8x8")
    game = from_text(text, name)
    net = game.propnet.net
    node = 2 + game.propnet.base_texts.index("(turn white move)")
    guarded = np.asarray(net.guarded[net.guarded_ptr[node] : net.guarded_ptr[node + 1]])
    assert guarded.size >= max(64, GUARD_READERS)
    assert (np.asarray(net.guard)[guarded] == node).all()
    assert int(net.fanout_ptr[node + 1] - net.fanout_ptr[node]) < guarded.size
    dn = dn_alloc(net, 0)
    dn_reset(net, dn, np.asarray(net.init, dtype=np.uint8))
    every = np.nonzero(np.asarray(net.guard) >= 2)[0]
    rng = random.Random(2)
    lptr, ldoes, lnode = net.legal_ptr, net.legal_does, net.legal_node
    for _ in range(60):
        vals, cnt = dn[DN_VALS], dn[DN_CNT]
        want = (cnt[every] == 0) & (vals[np.asarray(net.guard)[every]] == 1)
        assert (vals[every] == want).all()
        for u in np.unique(np.asarray(net.guard)[every]):  # every guard's armed list, and where each gate sits
            lo, hi = int(net.guarded_ptr[u]), int(net.guarded_ptr[u + 1])
            armed = dn[DN_ARMED][lo : lo + dn[DN_ACOUNT][u]]
            assert sorted(armed) == sorted(g for g in net.guarded[lo:hi] if cnt[g] == 0)
            assert all(dn[DN_ARMED][dn[DN_APOS][g]] == g for g in armed)
        assert dn[DN_ACOUNT][node] == 4  # (the squares of white's four amazons)
        if vals[net.header[4]]:
            break
        does = np.array(
            [ldoes[rng.choice([k for k in range(lptr[r], lptr[r + 1]) if vals[lnode[k]]])] for r in range(2)],
            dtype=np.int32,
        )
        dn_step(net, dn, does)


def test_setting_facts_one_at_a_time_agrees_with_loading_them_on_a_guarded_network() -> None:
    """dn_set on Amazons, whose turn facts guard gates: after each fact set (turns, amazons, arrows), every value
    and count is what loading the same facts from scratch gives."""
    from ggp.gdl import from_text
    from ggp.gdl.differential import dn_init, dn_set

    text, name = sheet_text("shared:amazons_8x8")
    game = from_text(text, name)
    net = game.propnet.net
    texts = game.propnet.base_texts
    nodes = int(net.header[0])
    base = np.asarray(net.init, dtype=np.uint8).copy()
    vals, cnt = np.zeros(nodes, dtype=np.uint8), np.zeros(nodes, dtype=np.int32)
    dn_init(net, vals, cnt, base)
    stack, dirty = np.zeros(4 * nodes + 64, dtype=np.int32), np.zeros(2 * (len(net.blocks) // 3) + 1, dtype=np.int32)
    steps = [
        ("(turn white move)", 0),
        ("(turn white fire)", 1),
        ("(cell 1 3 white)", 0),
        ("(cell 1 4 white)", 1),
        ("(cell 2 4 arrow)", 1),
        ("(turn white fire)", 0),
        ("(turn black move)", 1),
        ("(cell 1 6 black)", 0),
    ]
    for fact, value in steps:
        i = texts.index(fact)
        assert dn_set(net, vals, cnt, stack, dirty, 2 + i, value)
        base[i] = value
        fresh_vals, fresh_cnt = np.zeros(nodes, dtype=np.uint8), np.zeros(nodes, dtype=np.int32)
        dn_init(net, fresh_vals, fresh_cnt, base)
        assert (vals == fresh_vals).all(), fact
        assert (cnt == fresh_cnt).all(), fact


@pytest.mark.parametrize("which", ["shared:bomberman2p", "shared:wallmaze", "tictactoe", "corpus:atariGoVariant_7x7"])
def test_kernel_modes_agree_and_a_context_follows_any_jump(which: str) -> None:
    """The kernel's sweep and differential modes give the same perft counts and random games; one context asked
    about states in any order (as a search's is: a leaf, a rollout from it, then the root again) answers as a
    fresh one does."""
    from ggp.core.kernels import perft, random_playouts
    from ggp.gdl import from_text
    from ggp.gdl.kernel import DIFFERENTIAL, SWEEP, gdl_kernel

    text, name = sheet_text(which)
    game = from_text(text, name)
    sweep, diff = gdl_kernel(game.propnet, SWEEP), gdl_kernel(game.propnet, DIFFERENTIAL)
    start = game.initial_array()
    assert perft(sweep, start, 3) == perft(diff, start, 3) > 0
    a, b = random_playouts(sweep, start, 8, seed=4), random_playouts(diff, start, 8, seed=4)
    assert (a[0] == b[0]).all() and (a[1] == b[1]).all()
    rng = random.Random(3)
    states = []
    for _ in range(6):  # states from several random games
        s = game.initial_state()
        for _ in range(rng.randrange(1, 30)):
            if game.is_terminal(s):
                break
            s = game.next_state(s, [rng.choice(game.legal_moves(s, r)) for r in game.roles])
        states.append(game.array_of(s).copy())
    width = max(1, diff.max_actions)
    for kernel in (sweep, diff):
        shared = kernel.context()
        for s in [*states, *states[::-1], start]:
            fresh = kernel.context()
            for role in range(len(game.roles)):
                got, want = np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64)
                n = kernel.legal(shared, s, role, got)
                assert n == kernel.legal(fresh, s, role, want) and (got[:n] == want[:n]).all()
            assert kernel.terminal(shared, s) == kernel.terminal(fresh, s)
            goals, expected = np.zeros(len(game.roles), np.int64), np.zeros(len(game.roles), np.int64)
            kernel.goals(shared, s, goals)
            kernel.goals(fresh, s, expected)
            assert (goals == expected).all()
            # a rollout from here leaves the context at a game's end (and, differentially, bookmarks s)
            ended, expected_end = s.copy(), s.copy()
            kernel.rollout(shared, ended, rng_state(len(states)))
            kernel.rollout(kernel.context(), expected_end, rng_state(len(states)))
            assert (ended == expected_end).all()
            if not kernel.terminal(shared, s) and n > 0:
                joint = np.zeros(len(game.roles), dtype=np.int64)
                for role in range(len(game.roles)):
                    m = kernel.legal(fresh, s, role, want)
                    joint[role] = want[rng.randrange(m)]
                after, expected_after = s.copy(), s.copy()
                kernel.apply(shared, after, joint)
                kernel.apply(kernel.context(), expected_after, joint)
                assert (after == expected_after).all()


#: After one move the only role has none left, in a state that is not terminal: a playout stops there.
STUCK = (
    "(role p) (init s0) (<= (legal p go) (true s0)) (<= (next s1) (does p go)) (<= terminal (true s2))"
    " (<= (goal p 50) (true s1)) (<= (goal p 0) (true s0))"
)


@pytest.mark.parametrize(
    "which", ["shared:amazons_8x8", "shared:bomberman2p", "tictactoe", "corpus:3pConnectFour", "stuck"]
)
def test_the_kernels_own_playout_loop_plays_the_generic_loops_games(which: str) -> None:
    """random_playouts runs a rule sheet's own compiled playout (one call a game) when the kernel has one: the
    same games, lengths and goals as the generic loop over legal/apply/terminal, in both modes, also when
    max_steps cuts them short."""
    import dataclasses

    from ggp.core.kernels import random_playouts
    from ggp.gdl import from_text
    from ggp.gdl.kernel import DIFFERENTIAL, SWEEP, gdl_kernel

    text, name = (STUCK, "stuck") if which == "stuck" else sheet_text(which)
    game = from_text(text, name)
    start = game.initial_array()
    for mode in (SWEEP, DIFFERENTIAL):
        fused = gdl_kernel(game.propnet, mode)
        assert "kernel_playout" in fused.namespace
        plain = {k: v for k, v in fused.namespace.items() if k != "kernel_playout"}
        generic = dataclasses.replace(fused, namespace=plain)
        for max_steps in (1_000_000, 5):
            a = random_playouts(fused, start, 12, seed=9, max_steps=max_steps)
            b = random_playouts(generic, start, 12, seed=9, max_steps=max_steps)
            assert (a[0] == b[0]).all() and (a[1] == b[1]).all(), (mode, max_steps)
            assert a[1].max() <= max_steps and a[1].sum() > 0
        if which == "stuck":  # one move, then no move: scored where it stopped
            assert a[1].tolist() == [1] * 12 and a[0].tolist() == [[50]] * 12


def test_the_evaluators_choice_is_made_once_per_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ggp.gdl import kernel as gk
    from ggp.gdl.game import GDLGame

    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "cache"))
    # each measurement answers the other mode than the last: what a kernel uses says where it came from
    answers = [gk.SWEEP, gk.DIFFERENTIAL, gk.SWEEP]
    measured: list[int] = []

    def measure(propnet: Any, budget: float = 0.05) -> int:
        measured.append(answers[len(measured)])
        return measured[-1]

    monkeypatch.setattr(gk, "fastest_mode", measure)
    text, name = sheet_text("tictactoe")
    first = GDLGame(text, name)
    assert gk.evaluation_mode(first.kernel) == "sweep" and measured == [gk.SWEEP]
    assert first.random_playouts(3, seed=1)[2] > 0 and len(measured) == 1  # the playout loop follows the kernel
    assert first._incremental_is_faster() is False
    # another load of the sheet (another process would do the same) reads the choice instead of measuring
    second = GDLGame(text, name)
    assert gk.evaluation_mode(second.kernel) == "sweep" and len(measured) == 1
    # a damaged cache entry is measured again and rewritten
    (entry,) = (tmp_path / "cache").iterdir()
    entry.write_text("garbage")
    third = GDLGame(text, name)
    assert gk.evaluation_mode(third.kernel) == "differential" and len(measured) == 2
    assert entry.read_text() == str(gk.DIFFERENTIAL)
    assert gk.evaluation_mode(GDLGame(text, name).kernel) == "differential" and len(measured) == 2
    # a cache folder that cannot be made (a file is in its place) costs a measurement, not an error
    monkeypatch.setenv("GGP_CACHE", str(entry))
    assert gk.evaluation_mode(GDLGame(text, name).kernel) == "sweep" and len(measured) == 3
