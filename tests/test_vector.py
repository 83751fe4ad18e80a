"""ggp.vector: batched steps agree row by row with the Game API, and refuse bad input without side effects."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ggp
from conftest import GAME_NAMES
from ggp.core.native import NativeGame
from ggp.vector import VectorGame

# Every game's longest possible match is shorter than this many steps (Amazons 10x10: at most
# 92 arrows, two steps each; bomberman: 50; wallmaze: 30), so every row ends at least once.
STEPS = 200


def native(name: str) -> NativeGame:
    game = ggp.load(name)
    assert isinstance(game, NativeGame)
    return game


def expected_mask(game: NativeGame, state: Any, role: int) -> np.ndarray:
    """The legal actions of the Game API's legal moves, as a bool mask."""
    mask = np.zeros(game.kernel.num_actions, dtype=bool)
    for move in game.legal_moves(state, game.roles[role]):
        a = game.text_action(state.array, role, str(move))
        assert 0 <= a < game.kernel.num_actions
        mask[a] = True
    return mask


def check_rows(vg: VectorGame, refs: list[Any]) -> None:
    """Every row of ``vg`` is the reference state, with its terminal flag, goals and legal actions."""
    game = vg.game
    assert vg.states.shape == (vg.batch, game.initial_array().shape[0])
    masks = [vg.legal_mask(r) for r in range(2)]
    compact = [vg.legal_actions(r) for r in range(2)]
    for i, ref in enumerate(refs):
        assert vg.state(i) == ref
        assert np.array_equal(vg.states[i], ref.array)
        assert bool(vg.terminal[i]) == game.is_terminal(ref)
        assert tuple(int(g) for g in vg.goals[i]) == game.goals(ref)
        for r in range(2):
            assert np.array_equal(masks[r][i], expected_mask(game, ref, r))
            actions, counts = compact[r]
            n = int(counts[i])
            assert list(actions[i, :n]) == list(game.legal_actions(ref, game.roles[r]))
            assert (actions[i, n:] == -1).all()


@pytest.mark.parametrize("name", GAME_NAMES)
def test_agrees_with_game_api_under_autoreset(name: str) -> None:
    game = native(name)
    vg = VectorGame(name, 5, autoreset=True, seed=3)
    refs: list[Any] = [game.initial_state()] * vg.batch
    resets = 0
    check_rows(vg, refs)
    for _ in range(STEPS):
        actions = vg.random_actions()
        assert actions.shape == (vg.batch, 2) and actions.dtype == np.int64
        nxt = []
        for i, ref in enumerate(refs):
            if game.is_terminal(ref):
                # next-step autoreset: the step after the terminal state brings the initial state back
                assert list(actions[i]) == [-1, -1]
                nxt.append(game.initial_state())
                resets += 1
                continue
            texts = [game.action_text(ref.array, r, int(actions[i, r])) for r in range(2)]
            for r, role in enumerate(game.roles):
                assert texts[r] in {str(m) for m in game.legal_moves(ref, role)}
            nxt.append(game.next_state(ref, texts))
        vg.step(actions)
        refs = nxt
        check_rows(vg, refs)
    assert resets >= vg.batch  # every row finished (and was reset) at least once


@pytest.mark.parametrize("name", GAME_NAMES)
def test_terminal_rows_without_autoreset(name: str) -> None:
    vg = VectorGame(name, 4, seed=5)
    for _ in range(STEPS):
        if vg.terminal.any():
            break
        vg.step(vg.random_actions())
    assert vg.terminal.any()
    first = int(np.flatnonzero(vg.terminal)[0])
    before = [vg.states.copy(), vg.terminal.copy(), vg.goals.copy()]
    actions = vg.random_actions()  # legal in the other rows, -1 in terminal ones
    with pytest.raises(ggp.GameOverError, match=f"row {first} is terminal") as info:
        vg.step(actions)
    assert isinstance(info.value, ValueError)
    assert all(np.array_equal(a, b) for a, b in zip(before, [vg.states, vg.terminal, vg.goals], strict=True))
    # The documented way on: reset the finished rows, then step again.
    finished = vg.terminal.copy()
    vg.reset(finished)
    assert not vg.terminal.any()
    vg.step(vg.random_actions())
    assert not np.array_equal(vg.states, before[0])


@pytest.mark.parametrize("name", GAME_NAMES)
@pytest.mark.parametrize("role", [0, 1])
def test_illegal_action_changes_no_row(name: str, role: int) -> None:
    game = native(name)
    vg = VectorGame(name, 5, seed=11)
    for _ in range(3):  # no game can end in three steps
        vg.step(vg.random_actions())
    assert not vg.terminal.any()
    row = 3
    good = vg.random_actions()
    mask = vg.legal_mask(role)[row]
    in_range = [int(a) for a in np.flatnonzero(~mask)]
    state = vg.state(row)
    legal = {str(m) for m in game.legal_moves(state, game.roles[role])}
    for bad in [*in_range[:3], -1, vg.num_actions, 2**40]:
        before = [vg.states.copy(), vg.terminal.copy(), vg.goals.copy()]
        actions = good.copy()
        actions[row, role] = bad
        with pytest.raises(ggp.IllegalMoveError) as info:
            vg.step(actions)
        err = info.value
        assert f"row {row}:" in str(err)
        assert err.role == game.roles[role]
        assert set(err.legal) == legal
        if 0 <= bad < vg.num_actions:
            text = game.action_text(state.array, role, bad)
            readable = game.text_action(state.array, role, text) == bad
            assert err.move == (text if readable else f"action {bad}")
        else:
            assert err.move == f"action {bad}"
        assert err.move in str(err)
        assert all(np.array_equal(a, b) for a, b in zip(before, [vg.states, vg.terminal, vg.goals], strict=True))
    vg.step(good)  # the legal actions still go through


def test_illegal_move_names_the_move_text() -> None:
    vg = VectorGame("bomberman", 2)
    # bomberman alternates, bomberwoman waits first: noop is all she may do.
    with pytest.raises(
        ggp.IllegalMoveError, match=r"bomberman: row 1: dropBomb \(action 6\) is not a legal move for bomberwoman"
    ):
        vg.step(np.array([[5, 0], [5, 6]]))
    assert (vg.states == vg.game.initial_array()).all()


def test_autoreset_ignores_the_actions_of_terminal_rows() -> None:
    vg = VectorGame("wallmaze", 3, autoreset=True, seed=2)
    while not vg.terminal.any():
        vg.step(vg.random_actions())
    done = vg.terminal.copy()
    final_states, final_goals = vg.states.copy(), vg.goals.copy()
    actions = vg.random_actions()
    assert (actions[done] == -1).all() and (actions[~done] >= 0).all()
    actions[done] = 99  # not even an action: ignored, as the row is reset
    vg.step(actions)
    assert (vg.states[done] == vg.game.initial_array()).all()
    assert not vg.terminal[done].any()
    assert (vg.goals[done] == vg.game.goals(vg.game.initial_state())).all()
    assert not np.array_equal(final_states[done], vg.states[done])
    for i in np.flatnonzero(done):  # the goals reported with the terminal state were its goals
        assert tuple(final_goals[i]) == vg.game.goals(vg.game.state_from_array(final_states[i]))


@pytest.mark.parametrize(
    "actions",
    [
        np.zeros(4, dtype=np.int64),
        np.zeros((4, 3), dtype=np.int64),
        np.zeros((5, 2), dtype=np.int64),
        np.zeros((4, 2, 1), dtype=np.int64),
        np.zeros((4, 2), dtype=np.float64),
        np.zeros((4, 2), dtype=bool),
        [["noop", "noop"]] * 4,
        np.int64(0),
    ],
)
def test_bad_actions_arrays_raise_value_error(actions: Any) -> None:
    vg = VectorGame("wallmaze", 4)
    vg.step(vg.random_actions())
    before = vg.states.copy()
    with pytest.raises(ValueError, match="actions must") as info:
        vg.step(actions)
    assert not isinstance(info.value, ggp.IllegalMoveError)
    assert np.array_equal(vg.states, before)


def test_other_integer_actions_are_accepted() -> None:
    a = VectorGame("bomberman2p", 3, seed=4, autoreset=True)
    b = VectorGame("bomberman2p", 3, seed=4, autoreset=True)
    for _ in range(10):
        actions = a.random_actions()
        assert np.array_equal(actions, b.random_actions())
        a.step(actions)
        b.step(actions.astype(np.int8).T.copy().T)  # int8, not C-contiguous
    assert np.array_equal(a.states, b.states)
    a.step(a.random_actions().tolist())
    assert not np.array_equal(a.states, b.states)


def test_reset_mask_resets_only_those_rows() -> None:
    vg = VectorGame("wallmaze", 6, seed=9)
    for _ in range(6):  # wallmaze cannot end this soon
        vg.step(vg.random_actions())
    init = vg.game.initial_array()
    assert not (vg.states == init).all(axis=1).any()
    before = vg.states.copy()
    mask = np.array([True, False, False, True, True, False])
    vg.reset(mask)
    assert (vg.states[mask] == init).all()
    assert np.array_equal(vg.states[~mask], before[~mask])
    assert not vg.terminal[mask].any()
    assert (vg.goals[mask] == vg.game.goals(vg.game.initial_state())).all()
    for bad in (mask[:5], mask.astype(int), [1] * 6, np.ones((6, 1), dtype=bool)):
        with pytest.raises(ValueError, match="reset mask"):
            vg.reset(bad)  # type: ignore[arg-type]
    vg.reset()
    assert (vg.states == init).all()


def test_random_actions_reproducible_and_uniform() -> None:
    def actions_of(seed: int) -> list[np.ndarray]:
        vg = VectorGame("amazons_8x8", 8, seed=seed, autoreset=True)
        out = []
        for _ in range(30):
            out.append(vg.random_actions())
            vg.step(out[-1])
        return out

    same, again, other = actions_of(7), actions_of(7), actions_of(8)
    assert all(np.array_equal(x, y) for x, y in zip(same, again, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(same, other, strict=True))

    vg = VectorGame("bomberman2p", 4000, seed=1)
    draws = vg.random_actions()
    for r in range(2):
        legal = np.flatnonzero(vg.legal_mask(r)[0])
        counts = np.bincount(draws[:, r], minlength=vg.num_actions)
        assert set(np.flatnonzero(counts)) == set(legal)
        expected = vg.batch / len(legal)
        assert (np.abs(counts[legal] - expected) < 0.25 * expected).all()  # ~9 standard deviations


def test_views_are_read_only_and_live() -> None:
    vg = VectorGame("wallmaze", 2, seed=1)
    states, terminal, goals = vg.states, vg.terminal, vg.goals
    for arr, index in ((states, (0, 0)), (terminal, 0), (goals, (0, 1))):
        with pytest.raises(ValueError, match="read-only"):
            arr[index] = 1
    assert goals.dtype == np.int64 and terminal.dtype == np.bool_ and states.dtype == vg.game.dtype
    held = states.copy()
    vg.step(vg.random_actions())
    assert np.array_equal(states, vg.states)
    assert not np.array_equal(states, held)
    snapshot = vg.state(1)
    vg.step(vg.random_actions())
    assert snapshot != vg.state(1)  # a Game-API state is a copy


def test_construction_and_roles() -> None:
    game = native("amazons_8x8")
    vg = VectorGame(game, 3)
    assert vg.game is game and vg.roles == ("white", "black") and vg.batch == 3
    assert vg.num_actions == 4161 and vg.max_actions == game.kernel.max_actions
    assert np.array_equal(vg.legal_mask("black"), vg.legal_mask(1))
    assert vg.legal_mask(1).sum(axis=1).tolist() == [1, 1, 1]  # black waits: noop
    assert vg.state(-1) == game.initial_state()
    with pytest.raises(IndexError):
        vg.state(3)
    with pytest.raises(ValueError, match="role"):
        vg.legal_mask(2)
    with pytest.raises(ggp.IllegalMoveError, match="no role"):
        vg.legal_actions("red")
    for batch in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch"):
            VectorGame("wallmaze", batch)  # type: ignore[arg-type]
    with pytest.raises(ggp.UnknownGameError):
        VectorGame("chess", 2)
    with pytest.raises(TypeError):
        VectorGame(object(), 2)  # type: ignore[arg-type]
