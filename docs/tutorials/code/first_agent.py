"""Write your first agent: a player that takes a win in one move when it sees one, and plays it against
ggp's random player on tic-tac-toe, a rule sheet that ships with ggp."""

from importlib.resources import files

import ggp
from ggp.agents import AGENTS, Agent, make_agent
from ggp.match import run_match


class WinInOne(Agent):
    """Plays a move that ends the game with the best goal for us, else a random legal move."""

    def start(self, game, role, start_clock=None, play_clock=None):
        super().start(game, role, start_clock, play_clock)
        import random

        self.rng = random.Random(0)
        self.me = game.roles.index(role)

    def select_move(self, state, time_limit=None):
        game = self.game
        mine = game.legal_moves(state, self.role)
        # The others' moves: in a turn-based game the idle role has exactly one (noop).
        others = {r: game.legal_moves(state, r)[0] for r in game.roles if r != self.role}
        best, best_goal = None, -1
        for move in mine:
            joint = [move if r == self.role else others[r] for r in game.roles]
            after = game.next_state(state, joint)
            if game.is_terminal(after) and game.goals(after)[self.me] > best_goal:
                best, best_goal = move, game.goals(after)[self.me]
        if best is not None and best_goal > 50:
            return best
        return self.rng.choice(mine)


AGENTS["win-in-one"] = WinInOne  # now "win-in-one" is an agent spec, as "random" and "mcts" are


def main(games: int = 20) -> float:
    game = ggp.load(str(files("ggp.gdl") / "tictactoe.kif"))
    total = 0
    for i in range(games):
        ours, theirs = make_agent("win-in-one"), make_agent(f"random:seed={i}")
        seat = i % 2  # swap seats every game
        agents = [ours, theirs] if seat == 0 else [theirs, ours]
        record = run_match(game, agents, start_clock=None, play_clock=None, seed=i)
        total += record.goals[seat]
    mean = total / games
    print(f"win-in-one against random on tic-tac-toe: mean goal {mean:.1f} over {games} games")
    return mean


if __name__ == "__main__":
    main()
