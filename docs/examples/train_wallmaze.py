"""Train a masked tabular Q-learning agent on wall maze against ``random``, on CPU, with numpy only.

    python docs/examples/train_wallmaze.py --episodes 6000 --out wallmaze_q.npz

then play it with ggp's own referee (the policy agent comes from the agent module ``ggp.rl.policy``)::

    ggp match wallmaze --agent-module ggp.rl.policy --white policy:path=wallmaze_q.npz --black random \\
        --games 200 --swap --seed 1

The agent learns through :func:`ggp.rl.gym_env`: one role of wall maze, the other played by the
``random`` agent spec. It reads the legal-action mask at every step: it explores and exploits among
the legal actions only (Monte Carlo control: each episode's discounted result is backed up into
every state and action it visited). Its table is keyed by the
observation's marker and target planes (channels 1 to 3: own marker, other marker, own target;
the step plane is left out), and since observations are egocentric, one table plays either role:
training alternates white and black.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ggp.rl
from ggp.rl.qtable import QTable


def train(episodes: int, seed: int = 0, alpha: float = 0.1, gamma: float = 0.95) -> QTable:
    """Every-visit Monte Carlo control: epsilon-greedy over the legal actions, each episode's discounted
    return backed up into every (state, action) it visited."""
    envs = [ggp.rl.gym_env("wallmaze", role=role, opponent="random") for role in ("white", "black")]
    table = QTable("wallmaze", envs[0].action_space.n, channels=(1, 2, 3))
    rng = np.random.default_rng(seed)
    for episode in range(episodes):
        env = envs[episode % 2]
        eps = max(0.05, 1.0 - episode / (0.5 * episodes))
        obs, info = env.reset(seed=seed * 1_000_003 + episode)
        visited: list[tuple[np.ndarray, int]] = []
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            q = table.values(obs)
            if rng.random() < eps:
                action = int(rng.choice(legal))
            else:
                best = q[legal].max()
                action = int(rng.choice(legal[q[legal] == best]))
            visited.append((q, action))
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        ret = float(reward)  # the only reward comes at the end: the goal, scaled to [-1, 1]
        for q, action in reversed(visited):
            q[action] += alpha * (ret - q[action])
            ret *= gamma
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="wallmaze_q.npz")
    args = parser.parse_args()
    t = time.perf_counter()
    table = train(args.episodes, args.seed)
    table.save(args.out)
    print(f"{args.episodes} episodes in {time.perf_counter() - t:.1f} s; {len(table)} states; saved {args.out}")
    print(
        "evaluate: ggp match wallmaze --agent-module ggp.rl.policy "
        f"--white policy:path={args.out} --black random --games 200 --swap --seed 1"
    )


if __name__ == "__main__":
    main()
