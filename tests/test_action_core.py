"""The action core: every game, built-in or read from a rule sheet, is integers in a compiled kernel.

Each built-in game is run twice, on its native kernel and on the kernel of its
own GDL sheet (``ggp rules GAME``): perft, the batched VectorGame, compiled UCT
and the Game API's action methods must agree. Action numbers differ between the
two (the native game numbers its own moves, the sheet numbers its moves in
the sheet's order), so legal sets are compared as move texts.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import ggp
from conftest import GAME_NAMES
from ggp.agents.uct import search
from ggp.core.kernels import perft, random_playouts, rollouts
from ggp.gdl import builtin
from ggp.vector import VectorGame

# Perft depths that take a moment on the GDL kernel, and what RULES.md says they count.
PERFT = {
    "amazons_10x10": (2, 2_176),
    "amazons_8x8": (3, 70_386),
    "bomberman": (6, None),
    "bomberman2p": (4, None),
    "wallmaze": (6, None),
}


def texts(game: ggp.Game, state: ggp.State, role: str, actions: np.ndarray) -> list[str]:
    return sorted(game.action_to_move(state, role, int(a)).text for a in actions)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_perft_counts_agree_on_native_and_gdl_kernels(name: str) -> None:
    native, sheet = ggp.load(name), builtin(name)
    depth, known = PERFT[name]
    count = perft(native.kernel, native.initial_state().array, depth)
    assert perft(sheet.kernel, sheet.initial_array(), depth) == count
    if known is not None:
        assert count == known


@pytest.mark.parametrize("name", GAME_NAMES)
def test_legal_actions_and_apply_actions_agree_along_random_walks(name: str) -> None:
    native, sheet = ggp.load(name), builtin(name)
    rng = random.Random(5)
    for _ in range(2):
        a, b = native.initial_state(), sheet.initial_state()
        while not native.is_terminal(a):
            joint_a, joint_b = [], []
            for role in native.roles:
                legal_a, legal_b = native.legal_actions(a, role), sheet.legal_actions(b, role)
                assert texts(native, a, role, legal_a) == texts(sheet, b, role, legal_b)
                pick = int(legal_a[rng.randrange(len(legal_a))])
                move = native.action_to_move(a, role, pick)
                assert native.move_to_action(a, role, move) == pick
                joint_a.append(pick)
                joint_b.append(sheet.move_to_action(b, role, move))
            a, b = native.apply_actions(a, joint_a), sheet.apply_actions(b, joint_b)
            assert native.state_facts(a) == sheet.state_facts(b)
        assert sheet.is_terminal(b) and sheet.goals(b) == native.goals(a)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_vector_game_masks_agree_on_native_and_gdl_kernels(name: str) -> None:
    native = VectorGame(name, batch=8, autoreset=True, seed=3)
    sheet = VectorGame(builtin(name), batch=8, autoreset=True, seed=3)
    for _ in range(25):
        joint = native.random_actions()
        mapped = np.empty_like(joint)
        for i in range(native.batch):
            sa, sb = native.state(i), sheet.state(i)
            assert native.game.state_facts(sa) == sheet.game.state_facts(sb)
            for r, role in enumerate(native.roles):
                mask_a = np.flatnonzero(native.legal_mask(role)[i])
                mask_b = np.flatnonzero(sheet.legal_mask(role)[i])
                assert texts(native.game, sa, role, mask_a) == texts(sheet.game, sb, role, mask_b)
                if native.terminal[i]:
                    mapped[i, r] = -1
                else:
                    move = native.game.action_to_move(sa, role, int(joint[i, r]))
                    mapped[i, r] = sheet.game.move_to_action(sb, role, move)
        native.step(joint)
        sheet.step(mapped)
        assert (native.terminal == sheet.terminal).all()
        assert (native.goals == sheet.goals).all()


@pytest.mark.parametrize("name", ["wallmaze", "bomberman2p", "amazons_8x8"])
def test_compiled_uct_runs_on_the_gdl_kernel(name: str) -> None:
    sheet = builtin(name)
    start = sheet.initial_state()
    result = search(sheet, start, sims=300, seed=2)
    assert result.simulations == 300
    for r, role in enumerate(sheet.roles):
        assert int(result.visits[r].sum()) == 300
        assert sorted(m.text for m in result.moves[r]) == sorted(m.text for m in sheet.legal_moves(start, role))
        assert result.best(role) in sheet.legal_moves(start, role)


def test_rule_sheet_loops_serve_any_number_of_roles() -> None:
    # Three roles, simultaneous: each picks a or b each step for three steps; goals reward agreeing with role 0.
    text = """
    (role r1) (role r2) (role r3)
    (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3)
    (<= (legal ?r a) (role ?r)) (<= (legal ?r b) (role ?r))
    (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
    (<= (next (same ?r)) (does r1 ?m) (does ?r ?m))
    (<= terminal (true (step 3)))
    (<= (goal ?r 100) (role ?r) (true (same ?r)))
    (<= (goal ?r 0) (role ?r) (not (true (same ?r))))
    """
    game = ggp.gdl.from_text(text, "three")
    assert game.kernel.num_roles == 3
    assert perft(game.kernel, game.initial_array(), 3) == 8**3
    goals, lengths = random_playouts(game.kernel, game.initial_array(), 50, seed=1)
    assert goals.shape == (50, 3) and (lengths == 3).all()
    assert (goals[:, 0] == 100).all() and set(np.unique(goals[:, 1:])) <= {0, 100}
    assert rollouts(game.kernel, game.initial_array(), 20, seed=4).shape == (20, 3)
    result = search(game, game.initial_state(), sims=200, seed=1)
    assert [int(v.sum()) for v in result.visits] == [200, 200, 200]
    vg = VectorGame(game, batch=4, autoreset=True, seed=1)
    for _ in range(7):
        vg.step(vg.random_actions())
    assert vg.goals.shape == (4, 3)


def test_apply_actions_refuses_an_illegal_action_and_changes_nothing() -> None:
    game = ggp.load("wallmaze")
    start = game.initial_state()
    before = game.state_to_json(start)
    legal = set(int(a) for a in game.legal_actions(start, "white"))
    illegal = next(a for a in range(game.num_actions("white")) if a not in legal)
    with pytest.raises(ggp.IllegalMoveError, match="not a legal action for white"):
        game.apply_actions(start, [illegal, 0])
    with pytest.raises(ggp.IllegalMoveError):
        game.apply_actions(start, [True, 0])
    assert game.state_to_json(start) == before
