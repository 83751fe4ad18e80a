"""ggp.rl's Gymnasium environments: gymnasium's own checker, opponents from agent specs, and the vector env
agreeing with single environments step by step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")

import gymnasium
from gymnasium.utils.env_checker import check_env

import ggp
import ggp.rl as rl
from ggp.core.errors import IllegalMoveError

TICTACTOE = str(Path(ggp.__file__).resolve().parent / "gdl" / "tictactoe.kif")


# gymnasium's notes on render fps and env specs are not failures
pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("game", ["wallmaze", "bomberman", "bomberman2p", "amazons_8x8", TICTACTOE])
def test_gymnasium_check_env_passes(game: str) -> None:
    check_env(rl.gym_env(game))
    check_env(rl.gym_env(game, render_mode="rgb_array", opponent="random:seed=4"), skip_render_check=False)


def test_the_agent_plays_only_where_it_has_a_choice_and_is_rewarded_by_its_goal() -> None:
    env = rl.gym_env("amazons_8x8", role="black", opponent="random")
    game = env.game
    for seed in range(3):
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            state = env.game_state()
            assert [str(m) for m in game.legal_moves(state, "black")] != ["noop"]
            assert np.array_equal(np.flatnonzero(env.action_masks()), np.sort(game.legal_actions(state, "black")))
            assert np.array_equal(info["action_mask"], env.action_masks())
            _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = terminated or truncated
        assert game.is_terminal(env.game_state())
        assert reward == (game.goals(env.game_state())[1] - 50) / 50


def test_opponents_are_agent_specs_and_a_bad_spec_is_refused_at_once() -> None:
    env = rl.gym_env("wallmaze", role="black", opponent="wallmaze")  # the built-in wall maze player
    wins = 0
    for seed in range(3):
        env.reset(seed=seed)
        done = False
        while not done:
            _, reward, terminated, truncated, _ = env.step(0)  # black waits: white walks through
            done = terminated or truncated
        wins += reward == -1.0
    assert wins == 3, "the wall maze player reaches its target when black only waits"
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        rl.gym_env("wallmaze", opponent="nobody")
    with pytest.raises(ValueError, match="has no role"):
        rl.gym_env("wallmaze", role="red")


def test_illegal_actions_lose_raise_or_are_replaced() -> None:
    env = rl.gym_env("wallmaze")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(2)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, 2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    strict = rl.gym_env("wallmaze", illegal="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="legal actions: 3"):
        strict.step(2)
    lenient = rl.gym_env("wallmaze", illegal="random")
    lenient.reset(seed=0)
    _, _, terminated, _, info = lenient.step(2)
    assert not terminated and info["illegal_action"] == 2


def test_max_steps_truncates() -> None:
    env = rl.gym_env("bomberman2p", max_steps=5)
    env.reset(seed=1)
    for k in range(5):
        _, reward, terminated, truncated, _ = env.step(5)  # stay where you are: nothing burns by step 6
        assert truncated == (k == 4) and not terminated and reward == 0.0


# (game, role number): every built-in game from both sides (the planes are egocentric), and a rule sheet
VECTOR_CASES = [
    (g, r) for g in ["wallmaze", "bomberman", "bomberman2p", "amazons_8x8", "amazons_10x10"] for r in (0, 1)
]


@pytest.mark.parametrize(("game", "r"), [*VECTOR_CASES, (TICTACTOE, 0)])
def test_the_vector_env_agrees_with_single_envs_step_by_step(game: str, r: int) -> None:
    # venv writes each step's observations whole into a new array; twin (copy=False) updates its own buffer in
    # place from each row's previous state: both must equal the single envs' observations at every step.
    # small (bytes, updated in place) must be the same planes times 255, to the nearest byte.
    batch = 6
    role = ggp.load(game).roles[r]
    venv = rl.vector_env(game, batch, seed=3, role=role)
    twin = rl.vector_env(game, batch, seed=3, role=role, copy=False)
    small = rl.vector_env(game, batch, seed=3, role=role, copy=False, dtype=np.uint8)
    obs, _ = venv.reset()
    twin.reset()
    s_obs, _ = small.reset()
    assert s_obs.dtype == np.uint8 and small.single_observation_space.contains(s_obs[0])
    singles = [rl.parallel_env(game) for _ in range(batch)]
    last = [e.reset()[0] for e in singles]
    rng = np.random.default_rng(0)
    ended = np.zeros(batch, dtype=bool)
    restarts = 0
    steps = 300 if game.startswith("amazons") else 120  # an Amazons game lasts 60 to 180 steps
    for _ in range(steps):
        masks = venv.action_masks()
        for i in range(batch):
            assert np.array_equal(obs[i], last[i][role]["observation"])
            assert np.abs(s_obs[i] - 255.0 * obs[i]).max() <= 0.5 + 1e-4
            if ended[i]:  # the next step resets this row and ignores its action: every action is allowed
                assert masks[i].all()
            else:
                assert np.array_equal(masks[i], last[i][role]["action_mask"].astype(bool))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, truncated, _ = venv.step(actions)
        t_obs, t_rewards, t_terminated, _, _ = twin.step(actions)
        assert np.array_equal(t_obs, obs) and np.array_equal(t_rewards, rewards)
        assert np.array_equal(t_terminated, terminated) and np.array_equal(twin.action_masks(), venv.action_masks())
        s_obs, s_rewards, s_terminated, _, _ = small.step(actions)
        assert np.array_equal(s_rewards, rewards) and np.array_equal(s_terminated, terminated)
        assert np.array_equal(small.action_masks(), venv.action_masks())
        for i, e in enumerate(singles):
            joint = venv.last_joint[i]
            if ended[i]:  # this step reset the row (next-step autoreset)
                assert (joint == -1).all()
                last[i] = e.reset()[0]
                assert not terminated[i] and rewards[i] == 0.0
                continue
            assert joint[venv.game.roles.index(role)] == actions[i]
            last[i], reward, terms, _, _ = e.step(dict(zip(e.possible_agents, (int(a) for a in joint), strict=True)))
            assert terminated[i] == terms[role]
            assert rewards[i] == reward[role]
        restarts += int(ended.sum())
        ended = terminated.copy()
        assert not truncated.any()
    assert restarts > 0, "the rows were restarted (autoreset) at least once"


def test_the_vector_env_refuses_an_illegal_action_naming_the_row() -> None:
    venv = rl.vector_env("wallmaze", 3)
    venv.reset()
    with pytest.raises(IllegalMoveError, match="row 1: 2 is not a legal action for white"):
        venv.step(np.array([0, 2, 0]))
    before = venv.states
    with pytest.raises(IllegalMoveError, match="row 2"):
        venv.step(np.array([0, 0, 1]))
    assert np.array_equal(venv.states, before), "a refused batch moves no row"
    with pytest.raises(ValueError, match="3 ints"):
        venv.step(np.array([0, 0]))


@pytest.mark.parametrize("game", ["wallmaze", "bomberman", "bomberman2p", "amazons_8x8", "amazons_10x10", TICTACTOE])
def test_an_observation_updated_between_any_two_states_is_the_second_state_s(game: str) -> None:
    # copy=False's in-place update compares two states field by field: it must work between any two states of
    # the game, not only a state and its successor (a restarted row jumps from its last state to the first)
    from ggp.rl.observe import observer_for
    from ggp.rl.planes import updater_for
    from ggp.vector import VectorGame

    g = ggp.load(game)
    obs = observer_for(g)
    update = updater_for(obs)
    vg = VectorGame(g, 8, autoreset=True, seed=5)
    states = [g.initial_array()]
    for _ in range(60):
        vg.step(vg.random_actions())
        states.extend(np.array(vg.states))
    rng = np.random.default_rng(1)
    for _ in range(300):
        a, b = (states[k] for k in rng.integers(len(states), size=2))
        for r in range(len(g.roles)):
            for dtype in (np.float32, np.uint8):
                out = obs.observe(a, r, dtype).reshape(-1)
                update(a, b, r, obs.aux_for(dtype), out)
                assert np.array_equal(out, obs.observe(b, r, dtype).reshape(-1))


def test_copy_true_returns_new_arrays_and_copy_false_the_env_s_own() -> None:
    own = rl.vector_env("amazons_8x8", 3, copy=False)
    new = rl.vector_env("amazons_8x8", 3)
    first, _ = own.reset()
    kept, _ = new.reset()
    mask = own.action_masks()
    assert not mask.flags.writeable, "copy=False: the live mask, read-only"
    assert new.action_masks().flags.writeable
    actions = np.array([np.flatnonzero(m)[0] for m in mask])
    second = own.step(actions)[0]
    assert second is first, "copy=False: the same buffer, updated in place"
    before = kept.copy()
    after = new.step(actions)[0]
    assert after is not kept and np.array_equal(kept, before), "copy=True: a step leaves earlier arrays alone"
    assert np.array_equal(after, second)


def test_reset_with_a_seed_replays_the_opponents_and_without_one_draws_on() -> None:
    venv = rl.vector_env("bomberman2p", 8, seed=4)

    def episode() -> list[np.ndarray]:
        joints = []
        for _ in range(10):
            venv.step(np.full(8, 5))  # the agent stays where it is; the opponent moves at random
            joints.append(venv.last_joint.copy())
        return joints

    venv.reset()
    first = episode()
    venv.reset(seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(first, episode(), strict=True))
    venv.reset()
    assert not all(np.array_equal(a, b) for a, b in zip(first, episode(), strict=True))


def test_byte_observations_are_the_float_planes_times_255_and_other_dtypes_are_refused() -> None:
    from ggp.rl.observe import observer_for

    for game in ("wallmaze", "bomberman", "amazons_10x10", TICTACTOE):
        g = ggp.load(game)
        obs = observer_for(g)
        s = g.initial_array()
        small, full = obs.observe(s, 1, np.uint8), obs.observe(s, 1)
        assert small.dtype == np.uint8 and np.abs(small - 255.0 * full).max() <= 0.5 + 1e-4
        assert set(np.unique(small)) <= {0, 255} | {int(np.floor(255 * v + 0.5)) for v in np.unique(full)}
    with pytest.raises(ValueError, match="float32 or uint8, not float64"):
        rl.vector_env("wallmaze", 2, dtype=np.float64)
    venv = rl.vector_env("wallmaze", 2, dtype=np.uint8)
    assert venv.single_observation_space == gymnasium.spaces.Box(0, 255, (9, 13, 5), dtype=np.uint8)
