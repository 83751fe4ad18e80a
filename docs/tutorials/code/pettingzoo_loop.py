"""Every game is a PettingZoo environment: a masked random policy plays the standard AEC loop on a
built-in game and on a rule sheet, and a Gymnasium environment puts one role against an agent spec."""

from importlib.resources import files

import numpy as np

import ggp.rl


def play_aec(game, seed: int = 0) -> dict:
    env = ggp.rl.aec_env(game)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _info = env.last()
        returns[agent] += reward
        # PettingZoo's rule: a finished agent steps with None; the others choose among their legal actions only
        done = terminated or truncated
        action = None if done else int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(action)
    env.close()
    return returns


def play_gym(seed: int = 0) -> float:
    env = ggp.rl.gym_env("wallmaze", role="white", opponent="random")  # the other role plays the `random` agent
    _observation, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _observation, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    return total


def main() -> None:
    print("amazons_8x8:", play_aec("amazons_8x8"))  # rewards are goals scaled to [-1, 1]
    print("tic-tac-toe sheet:", play_aec(str(files("ggp.gdl") / "tictactoe.kif")))
    print("wallmaze as white against random:", play_gym())


if __name__ == "__main__":
    main()
