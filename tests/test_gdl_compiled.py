"""The network compiled to machine code (the kernel's COMPILED mode) against the interpreted sweep.

Along random walks, both kernels must give every role the same legal actions, the same terminal flag, the same
goals and the same next state; perft counts, random playouts and the kernel's own playout loop must agree. The
sheets: the shared seed sheets, tic-tac-toe (also its unoptimised network, whose gates read the constant nodes),
and corpus sheets with cyclic blocks (recursive definitions, compiled to fixpoint loops). Then the code's safety
checks, its disk cache and the lifetime of its engines.
"""

from __future__ import annotations

import dataclasses
import gc
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import GAME_NAMES, SHARED, sheet_text
from ggp.core.kernels import perft, random_playouts, rng_state
from ggp.gdl import codegen, codegen_ir, from_text
from ggp.gdl import kernel as gk
from ggp.gdl.grounder import ground
from ggp.gdl.network import Propnet
from ggp.gdl.parser import parse_program
from ggp.gdl.propnet import build_propnet

#: Corpus sheets: atariGoVariant_7x7 and cubicup_3player have cyclic blocks; connectFour and 3pConnectFour
#: are small and plain. (amazons_10x10, beyond the compile limit, is never compiled but here: left out.)
CORPUS = ["atariGoVariant_7x7", "cubicup_3player", "connectFour", "3pConnectFour"]
SHEETS = (
    [f"shared:{n}" for n in GAME_NAMES if n != "amazons_10x10"]
    + ["tictactoe", "tictactoe:raw"]
    + [f"corpus:{n}" for n in CORPUS]
)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # One code cache for this module's tests (per worker): compiled once, and apart from the user's own.
    monkeypatch.setenv("GGP_CACHE", str(tmp_path_factory.getbasetemp() / "gdl-code-cache"))


def _propnet(which: str) -> tuple[Any, Propnet]:
    text, name = sheet_text(which)
    game = from_text(text, name)
    if which.endswith(":raw"):
        program = parse_program(text, name)
        return game, build_propnet(ground(program), program, optimise=False)
    return game, game.propnet


def _walk_states(kernel: Any, start: np.ndarray, roles: int, games: int, seed: int, limit: int) -> list[np.ndarray]:
    """States of random games (through ``kernel``), the start first."""
    rng = random.Random(seed)
    ctx = kernel.context()
    out = [start.copy()]
    buf = np.empty(max(1, kernel.max_actions), dtype=np.int64)
    for _ in range(games):
        s = start.copy()
        for _ in range(limit):
            if kernel.terminal(ctx, s):
                break
            joint = np.zeros(roles, dtype=np.int64)
            for r in range(roles):
                n = kernel.legal(ctx, s, r, buf)
                assert n > 0
                joint[r] = buf[rng.randrange(n)]
            kernel.apply(ctx, s, joint)
            out.append(s.copy())
    return out


@pytest.mark.parametrize("which", SHEETS)
def test_compiled_network_answers_as_the_interpreted_sweep(which: str) -> None:
    """Along random walks: each role's legal actions, the terminal flag, the goals, and the state after the same
    random joint move, identical in the compiled and the interpreted kernel (one context each, asked in the
    order of the walk, so the compiled step's state left in the values is used too)."""
    game, propnet = _propnet(which)
    sweep, compiled = gk.gdl_kernel(propnet, gk.SWEEP), gk.gdl_kernel(propnet, gk.COMPILED)
    assert gk.evaluation_mode(compiled) == "compiled"
    roles = len(game.roles)
    start = np.asarray(propnet.net.init, dtype=np.uint8).copy()
    games, limit = (2, 60) if "amazons" in which else (6, 200)
    rng = random.Random(5)
    a_ctx, b_ctx = sweep.context(), compiled.context()
    width = max(1, sweep.max_actions)
    got, want = np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64)
    steps = 0
    for g in range(games):
        s = start.copy()
        for i in range(limit):
            where = f"{which} game {g} step {i}"
            joint = np.zeros(roles, dtype=np.int64)
            for r in range(roles):
                n = compiled.legal(b_ctx, s, r, got)
                assert n == sweep.legal(a_ctx, s, r, want) and (got[:n] == want[:n]).all(), where
                if n:
                    joint[r] = want[rng.randrange(n)]
            term = bool(sweep.terminal(a_ctx, s))
            assert bool(compiled.terminal(b_ctx, s)) is term, where
            ga, gb = np.zeros(roles, np.int64), np.zeros(roles, np.int64)
            sweep.goals(a_ctx, s, ga)
            compiled.goals(b_ctx, s, gb)
            assert (ga == gb).all(), where
            if term:
                break
            after_a, after_b = s.copy(), s.copy()
            sweep.apply(a_ctx, after_a, joint)
            compiled.apply(b_ctx, after_b, joint)
            assert (after_a == after_b).all(), where
            s = after_a
            steps += 1
    assert steps > games


@pytest.mark.parametrize("which", ["shared:bomberman2p", "shared:wallmaze", "tictactoe", "corpus:atariGoVariant_7x7"])
def test_compiled_kernel_perft_playouts_and_jumps_agree(which: str) -> None:
    """Perft counts and random playouts (the generic loop and the kernel's own) as the interpreted sweep; one
    context asked about states in any order answers as a fresh one."""
    game, propnet = _propnet(which)
    sweep, compiled = gk.gdl_kernel(propnet, gk.SWEEP), gk.gdl_kernel(propnet, gk.COMPILED)
    start = game.initial_array()
    assert perft(compiled, start, 3) == perft(sweep, start, 3) > 0
    plain = dataclasses.replace(
        compiled, namespace={k: v for k, v in compiled.namespace.items() if k != "kernel_playout"}
    )
    for max_steps in (1_000_000, 5):
        a = random_playouts(sweep, start, 10, seed=4, max_steps=max_steps)
        for kernel in (compiled, plain):
            b = random_playouts(kernel, start, 10, seed=4, max_steps=max_steps)
            assert (a[0] == b[0]).all() and (a[1] == b[1]).all(), max_steps
    states = _walk_states(sweep, start, len(game.roles), 4, seed=8, limit=25)
    shared = compiled.context()
    width = max(1, compiled.max_actions)
    for s in [*states[::3], *states[::-5]]:
        fresh = sweep.context()
        for r in range(len(game.roles)):
            got, want = np.empty(width, np.int64), np.empty(width, np.int64)
            n = compiled.legal(shared, s, r, got)
            assert n == sweep.legal(fresh, s, r, want) and (got[:n] == want[:n]).all()
        ended, expected = s.copy(), s.copy()
        compiled.rollout(shared, ended, rng_state(3))
        sweep.rollout(fresh, expected, rng_state(3))
        assert (ended == expected).all()


def test_the_stuck_sheet_stops_where_a_role_has_no_move() -> None:
    """The compiled playout loop stops, scored where it stopped, when the only role has no move left."""
    text = (
        "(role p) (init s0) (<= (legal p go) (true s0)) (<= (next s1) (does p go)) (<= terminal (true s2))"
        " (<= (goal p 50) (true s1)) (<= (goal p 0) (true s0))"
    )
    game = from_text(text, "stuck")
    kernel = gk.gdl_kernel(game.propnet, gk.COMPILED)
    goals, lengths = random_playouts(kernel, game.initial_array(), 5, seed=1)
    assert lengths.tolist() == [1] * 5 and goals.tolist() == [[50]] * 5


# --- safety ----------------------------------------------------------------------------------------


def _tictactoe() -> Propnet:
    text, name = sheet_text("tictactoe")
    return from_text(text, name).propnet


@pytest.mark.parametrize(
    "field, change",
    [
        ("lits", lambda a: a.__setitem__(0, 2 * 100_000)),  # a literal past the last node
        ("lits", lambda a: a.__setitem__(-1, -3)),
        ("order", lambda a: a.__setitem__(0, 1)),  # the constant true node as a gate
        ("next", lambda a: a.__setitem__(0, 10**6)),
        ("legal_node", lambda a: a.__setitem__(0, -1)),
        ("blocks", lambda a: a.__setitem__(1, 10**6)),
    ],
)
def test_the_generator_refuses_an_index_out_of_range(field: str, change: Any) -> None:
    """Every node index the code will hold is checked before any code exists: a network whose arrays point
    outside it is refused with an error, not compiled."""
    net = _tictactoe().net
    arr = getattr(net, field).copy()
    change(arr)
    bad = net._replace(**{field: arr})
    with pytest.raises(codegen.CodegenError):
        codegen.network_ir(bad, "f")
    assert "define void @f" in codegen.network_ir(net, "f")


def test_a_fuse_is_copied_as_one_block_and_small_networks_are_vectorised() -> None:
    """Bomberman's bomb timers move down one step over the whole board: their next values are a run of other
    base propositions, copied as one block into the scratch next state; the network is small enough for
    LLVM's vectoriser, amazons_8x8's is not."""
    _, bomber = _propnet("shared:bomberman")
    ir = codegen.network_ir(bomber.net, "f")
    nexts = [int(n) for n in bomber.net.next]
    nbase = len(nexts)
    longest = run = 0
    for i in range(1, nbase):
        copy = 2 <= nexts[i] < 2 + nbase and nexts[i] == nexts[i - 1] + 1 and nexts[i] != 2 + i
        run = run + 1 if copy else 0
        longest = max(longest, run + 1)
    assert longest >= codegen_ir.COPY_RUN
    copies = [line for line in ir.splitlines() if "@llvm.memcpy" in line and "call" in line]
    assert any(f"i64 {longest}, i1 false" in line for line in copies)
    assert codegen.vectorised(bomber.net)
    _, amazons = _propnet("shared:amazons_8x8")
    assert not codegen.vectorised(amazons.net)


def test_the_ir_holds_integers_only() -> None:
    """The generated code names nodes by number; no text of the sheet reaches it."""
    propnet = _tictactoe()
    ir = codegen.network_ir(propnet.net, "f")
    for text in [*propnet.base_texts, *(t for texts in propnet.move_texts for t in texts)]:
        assert text not in ir


def test_a_compiled_context_holds_a_value_per_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """The code indexes the values unchecked: a context whose values are not one byte per node is refused."""
    propnet = _tictactoe()
    real = gk.dn_alloc

    def short(net: Any, scratch: int) -> tuple[np.ndarray, ...]:
        dn = real(net, scratch)
        return (dn[0][:-1], *dn[1:])

    monkeypatch.setattr(gk, "dn_alloc", short)
    with pytest.raises(ValueError, match="one value per node"):
        gk.context(propnet, gk.COMPILED)


# --- the disk cache and the engines ------------------------------------------------------------------


def test_the_object_code_is_compiled_once_and_a_bad_cache_file_rebuilt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "cache"))
    # a network of this test's own: no context elsewhere in this process holds its engine
    text = (
        "(role p) (init (c 0)) (<= (legal p (go ?i)) (true (c ?j)) (succ ?j ?i)) (<= (next (c ?i)) (does p (go ?i)))"
        " (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (<= terminal (true (c 4))) (<= (goal p 37) (true (c 4)))"
        " (<= (goal p 0) (not (true (c 4))))"
    )
    propnet = from_text(text, "cachetest").propnet
    compiles: list[int] = []
    real = codegen.object_code

    def counted(net: Any, name: str) -> bytes:
        compiles.append(1)
        return real(net, name)

    monkeypatch.setattr(codegen, "object_code", counted)

    def fresh_process() -> None:  # forget the engines this process holds, as a new process would
        gc.collect()
        with codegen._LOCK:
            codegen._drain()
            codegen._RECENT.clear()

    fresh_process()
    kernel = gk.gdl_kernel(propnet, gk.COMPILED)
    start = np.asarray(propnet.net.init, dtype=np.uint8)
    expected = random_playouts(kernel, start, 6, seed=2)
    assert len(compiles) == 1
    (entry,) = (tmp_path / "cache").glob("gdl-code-*")
    del kernel
    fresh_process()
    again = gk.gdl_kernel(propnet, gk.COMPILED)
    assert (random_playouts(again, start, 6, seed=2)[1] == expected[1]).all()
    assert len(compiles) == 1  # read from the cache
    assert "read from the cache" in gk.compile_report(propnet) or "compiled" in gk.compile_report(propnet)
    for damage in (b"garbage", entry.read_bytes()[:-7], entry.read_bytes()[:40] + b"\0" * 64):
        del again
        fresh_process()
        entry.write_bytes(damage)
        again = gk.gdl_kernel(propnet, gk.COMPILED)
        assert (random_playouts(again, start, 6, seed=2)[1] == expected[1]).all()
        assert entry.read_bytes() != damage  # rewritten whole
    n = len(compiles)
    assert n == 4
    # a cache folder that cannot be made (a file in its place) costs a compile, not an error
    del again
    fresh_process()
    monkeypatch.setenv("GGP_CACHE", str(entry))
    third = gk.gdl_kernel(propnet, gk.COMPILED)
    assert (random_playouts(third, start, 6, seed=2)[1] == expected[1]).all() and len(compiles) == n + 1


def test_engines_are_freed_when_no_context_uses_them() -> None:
    """Contexts come and go; the engines that hold compiled code do not pile up (a few recent ones are kept)."""
    gc.collect()
    base = codegen.loaded_count()
    texts = [
        f"(role p) (init (c {k})) (<= (legal p (go {i})) (true (c {k}))) (<= (next (c {k})) (does p (go 0)))"
        f" (<= terminal (true (c {k}))) (goal p {i})"
        for k in range(3)
        for i in range(4)
    ]
    for n, text in enumerate(texts):
        propnet = from_text(text, f"tiny{n}").propnet
        ctx = gk.context(propnet, gk.COMPILED)
        assert ctx[1][ctx[1][gk.S_FLAGS] + gk.F_MODE] == gk.COMPILED
        del ctx
        gc.collect()
    assert codegen.loaded_count() <= base + codegen.KEEP_RECENT


def test_a_large_network_stays_interpreted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Beyond the compile limit the choice is between the two interpreters, with no compile; the choice is kept
    on disk under a key of its own (old choices between two evaluators are measured again)."""
    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "cache"))
    propnet = _tictactoe()
    real = gk._compiled_context
    compiles: list[int] = []

    def counted(pn: Propnet) -> Any:
        compiles.append(1)
        return real(pn)

    monkeypatch.setattr(gk, "_compiled_context", counted)
    # The evaluators timed alike (a loaded machine must not decide the test): the differential one does not
    # lead, so the compiled sweep is measured too.
    monkeypatch.setattr(gk, "_time_modes", lambda pn, contexts, budget: dict.fromkeys(contexts, 1.0))
    assert gk.compilable(propnet)
    assert gk.fastest_mode(propnet) in (gk.SWEEP, gk.DIFFERENTIAL, gk.COMPILED) and compiles == [1]
    monkeypatch.setenv("GGP_COMPILE_LIMIT", "10")
    assert not gk.compilable(propnet)
    assert gk.fastest_mode(propnet) in (gk.SWEEP, gk.DIFFERENTIAL) and compiles == [1]
    assert gk._mode_file(propnet).name.startswith("gdl-mode3-")
    # a run with numba's bounds checks on (interpreters several times slower) keeps its choice apart
    import numba

    was = numba.config.BOUNDSCHECK
    plain = gk._mode_file(propnet)
    monkeypatch.setattr(numba.config, "BOUNDSCHECK", 0 if was else 1)
    assert gk._mode_file(propnet) != plain
    monkeypatch.setattr(numba.config, "BOUNDSCHECK", was)
    assert gk._mode_file(propnet) == plain
    # a cached choice of the compiled evaluator is not taken where the network may not be compiled
    path = gk._mode_file(propnet)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(gk.COMPILED))
    assert gk.chosen_mode(propnet) in (gk.SWEEP, gk.DIFFERENTIAL) and compiles == [1]


def test_a_network_that_does_not_compile_is_interpreted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A failure of the compiler costs the speed, with a warning, not the game."""
    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "cache"))
    text = "(role p) (init s) (<= (legal p (go 7)) (true s)) (<= (next s) (does p (go 7))) (<= terminal (true t))"
    propnet = from_text(text + " (goal p 51)", "nocompile").propnet

    def broken(net: Any, name: str) -> bytes:
        raise RuntimeError("LLVM said no")

    monkeypatch.setattr(codegen, "object_code", broken)
    # the evaluators timed alike, so that the compile is tried whatever the machine's load
    monkeypatch.setattr(gk, "_time_modes", lambda pn, contexts, budget: dict.fromkeys(contexts, 1.0))
    with pytest.warns(UserWarning, match="LLVM said no"):
        assert gk.fastest_mode(propnet) in (gk.SWEEP, gk.DIFFERENTIAL)


def test_a_sheet_gives_the_same_network_in_every_process() -> None:
    """Node numbers do not follow Python's string hashing (which differs per process): what is kept per network
    on disk, the compiled code and the evaluator's choice, is found again by the next process."""
    import os
    import subprocess
    import sys

    script = (
        "import hashlib; from ggp.gdl import load_file; from ggp.gdl.kernel import packed_network;"
        f"print(hashlib.sha1(packed_network(load_file({str(SHARED / 'gdl' / 'wallmaze.kif')!r}).propnet)"
        ".tobytes()).hexdigest())"
    )
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1


def test_ggp_info_says_how_the_network_is_evaluated() -> None:
    from ggp.cli.info import facts

    text, name = sheet_text("tictactoe")
    rows = dict(facts(from_text(text, name), 0.0))
    assert rows["evaluator"].split()[0] in ("sweep", "differential", "compiled")
    assert "chosen or read in" in rows["evaluator"]
    assert (
        f"{len(from_text(text, name).propnet.net.lits):,} literals" in rows["evaluator"]
        or "measured" in rows["evaluator"]
    )


def test_a_cold_first_call_does_not_decide_the_evaluator(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process whose numba cache is cold, the first playout call compiles the loop for seconds; counted,
    it made the sweep look 100x slower than the differential evaluator, so the compiled code was never
    measured and the differential evaluator was kept on disk at a third of its speed. The first call of each
    evaluator is made outside the clock: here a clock that jumps 5 s at the first call stands for the compile,
    and no evaluator's time per transition holds any of it."""
    _, propnet = _propnet("shared:wallmaze")
    jump = [0.0]
    real_clock, real_steps = gk.time.process_time, gk.rollout_steps

    def first_call_compiles(ctx: Any, s: Any, rng: Any, max_steps: int) -> int:
        if not jump[0]:
            jump[0] = 5.0
        return int(real_steps(ctx, s, rng, max_steps))

    monkeypatch.setattr(gk, "rollout_steps", first_call_compiles)
    monkeypatch.setattr(gk.time, "process_time", lambda: real_clock() + jump[0])
    contexts = {gk.SWEEP: gk.context(propnet, gk.SWEEP), gk.DIFFERENTIAL: gk.context(propnet, gk.DIFFERENTIAL)}
    best = gk._time_modes(propnet, contexts, 0.05)
    assert jump[0] == 5.0
    assert max(best.values()) < 0.01  # seconds per transition: the 5 s fell outside the clock


def test_a_player_plays_a_new_sheet_interpreted_while_a_child_compiles_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``ggp serve`` and ``ggp web`` compile a new sheet's network aside (:mod:`ggp.gdl.aside`): its first
    context is interpreted at once, a child process compiles and times the network and keeps the choice, and
    the kernel's next context takes that choice."""
    from ggp.gdl import aside

    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "cache"))
    game = from_text(sheet_text("tictactoe")[0], "aside-tictactoe")
    propnet = game.propnet
    # the interpreters timed alike (the load of the machine must not decide the test): compiling is worth trying
    monkeypatch.setattr(gk, "_time_modes", lambda pn, contexts, budget: dict.fromkeys(contexts, 1.0))
    started: list[str] = []
    real_start = aside.start
    monkeypatch.setattr(aside, "start", lambda pn, key: started.append(key) or real_start(pn, key))
    monkeypatch.setattr(aside, "_on", aside.threading.Event())
    aside.compile_aside()
    assert aside.aside()
    first = gk.evaluation_mode(game.kernel)
    assert first in ("sweep", "differential") and len(started) == 1
    assert gk.recorded_mode(propnet) is None  # nothing kept until the child has chosen
    gk.evaluation_mode(game.kernel)  # a second context while the child works: no second child
    assert len(started) == 1 or gk.recorded_mode(propnet) is not None
    assert aside.wait(600.0), "the compiling child did not end"
    kept = gk.recorded_mode(propnet)
    assert kept is not None, "the child kept no choice"
    assert gk.evaluation_mode(game.kernel) == gk.MODE_NAMES[kept]


def test_a_sheet_not_worth_compiling_is_chosen_at_once_when_compiling_aside(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ggp.gdl import aside

    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GGP_COMPILE_LIMIT", "0")
    game = from_text(sheet_text("tictactoe")[0], "aside-small")
    monkeypatch.setattr(aside, "_on", aside.threading.Event())
    monkeypatch.setattr(aside, "start", lambda pn, key: pytest.fail("no child for a network that stays interpreted"))
    aside.compile_aside()
    mode = gk.evaluation_mode(game.kernel)
    assert mode in ("sweep", "differential")
    assert gk.recorded_mode(game.propnet) == {name: m for m, name in gk.MODE_NAMES.items()}[mode]
