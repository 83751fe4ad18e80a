"""Playing with hidden information: a belief over the states a role's information allows, and a player on it.

A role of a GDL-II game knows only its own moves and percepts (:class:`~ggp.core.information.Information`).
:class:`Belief` keeps hypotheses of the true state that give exactly that information, HyperPlay's bag of
models (Schofield and Thielscher), each weighted by how likely its history is: chance plays uniformly, and
other players are modelled as uniform too. A hypothesis whose history could not have produced a percept is
dropped; when none is left (a bag kept small by resampling can lose the truth), the bag is rebuilt by a
backtracking search for histories that give the role's information. Weighting matters: in Monty Hall, the
host's door tells the candidate more about the doors it could not open, and a bag that counts each
consistent history once (``weighted=False``) cannot tell, so it wins only half the time.

:class:`HiddenPlayer` samples states from the belief and scores each of its moves by random playouts through
the compiled kernel from those states (chance averaged over, not chosen), and plays the best.

>>> import random
>>> from ggp.gdl.examples import load_example
>>> game = load_example("montyhall")
>>> belief = Belief(game, "candidate", rng=random.Random(0))
>>> belief.update(Seen(game.parse_move("(choose 1)")))
>>> belief.update(Seen(game.parse_move("noop"), ("(open_door 3)",)))
>>> {game.state_facts(s)[0]: round(w, 3) for s, w in belief.hypotheses()}
{'(car 1)': 0.333, '(car 2)': 0.667}
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ..core.game import Game, Move, State
from ..core.information import Information, Seen
from .base import Agent, Choice, Limit

#: The joint moves of the other roles tried in one step over all hypotheses: each hypothesis tries its share
#: of them (at least :data:`MIN_JOINTS`), all of them where they are fewer, else a uniform sample.
UPDATE_JOINTS = 20_000
#: The joint moves each hypothesis may try in a step, however many hypotheses there are.
MIN_JOINTS = 32
#: The most joint moves the backtracking search for consistent histories tries when the bag is rebuilt.
REBUILD_JOINTS = 200_000


class Belief:
    """Weighted hypotheses of the true state, each consistent with ``role``'s information so far."""

    def __init__(
        self, game: Game, role: str, *, size: int = 256, weighted: bool = True, rng: random.Random | None = None
    ) -> None:
        self.game = game
        self.role = role
        self.me = game.role_index(role)
        self.size = size
        self.weighted = weighted
        self.rng = rng or random.Random()
        self.steps: list[Seen] = []
        self._bag: dict[State, float] = {game.initial_state(): 1.0}

    def hypotheses(self) -> list[tuple[State, float]]:
        """The hypotheses and their probabilities (summing to 1)."""
        total = sum(self._bag.values())
        return [(s, w / total) for s, w in self._bag.items()]

    def going_on(self) -> None:
        """The role is asked to move, so the game is not over: drop the hypotheses where it would be."""
        bag = {s: w for s, w in self._bag.items() if not self.game.is_terminal(s)}
        if not bag:
            raise ValueError(f"{self.game.name}: every state {self.role} thinks possible is terminal, yet it must move")
        self._bag = bag

    def legal_moves(self) -> list[Move]:
        """The role's legal moves: those of its likeliest hypothesis (a well-formed GDL-II sheet gives every
        hypothesis the same, since a role must know what it may do)."""
        state = max(self._bag.items(), key=lambda item: item[1])[0]
        return list(self.game.legal_moves(state, self.role))

    def sample(self, count: int) -> list[State]:
        """``count`` hypotheses drawn by weight."""
        states = list(self._bag)
        return self.rng.choices(states, weights=[self._bag[s] for s in states], k=count)

    def update(self, seen: Seen) -> None:
        """Take in one more step: the role's move and what it perceived. Raises ``ValueError`` when no history
        gives the role that information, and then leaves the belief as it was."""
        steps = [*self.steps, seen]
        bag: dict[State, float] = {}
        limit = max(MIN_JOINTS, UPDATE_JOINTS // len(self._bag))  # the step's work, bounded
        for state, weight in self._bag.items():
            for after, prior in self._children(state, seen, limit=limit):
                bag[after] = bag.get(after, 0.0) + weight * (prior if self.weighted else 1.0)
        if not bag:
            bag = self._rebuild(steps)
        if not bag:
            raise ValueError(
                f"{self.game.name}: no history of the game gives {self.role} the information "
                f"{Information(self.role, tuple(steps)).text()!r}"
            )
        self.steps, self._bag = steps, self._thin(bag)

    def _children(
        self, state: State, seen: Seen, budget: list[int] | None = None, limit: int = UPDATE_JOINTS
    ) -> Iterator[tuple[State, float]]:
        """The states after ``state`` where the role made its move and perceived what it did, each with the
        probability of the other roles' moves that lead there (each role uniform among its legal moves).
        More than ``limit`` joint moves are sampled: ``limit`` of them, drawn uniformly, stand for all.
        ``budget`` (a one-item list) is charged one per joint move tried, and ends the search at 0."""
        game = self.game
        if game.is_terminal(state) or seen.move not in game.legal_moves(state, self.role):
            return
        others = [list(game.legal_moves(state, r)) if i != self.me else [seen.move] for i, r in enumerate(game.roles)]
        count = math.prod(len(ms) for ms in others)
        joints: Iterator[Sequence[Move]] | list[list[Move]]
        if count <= limit:
            joints, share = itertools.product(*others), 1.0 / count
        else:  # too many to try: a uniform sample of them stands for all
            joints = [[self.rng.choice(ms) for ms in others] for _ in range(limit)]
            share = 1.0 / limit
        wanted = _percept_key(seen.percepts)
        for joint in joints:
            if budget is not None:
                if budget[0] <= 0:
                    return
                budget[0] -= 1
            after = game.play(state, joint)
            if _percept_key(game.percepts(after, self.role)) == wanted:
                yield after, share

    def _rebuild(self, steps: Sequence[Seen]) -> dict[State, float]:
        """Histories from the start that give the role the information ``steps``, found by randomised
        backtracking descents (HyperPlay's repair): up to ``size`` descents, each from the start, each ending
        in one consistent state (so the states found are spread over the histories, not clustered under one
        prefix), weighted by the probability of its history. :data:`REBUILD_JOINTS` joint moves at most."""
        found: dict[State, float] = {}
        budget = [REBUILD_JOINTS]

        def descend(state: State, depth: int, weight: float) -> bool:
            if depth == len(steps):
                found[state] = found.get(state, 0.0) + weight
                return True
            children = list(self._children(state, steps[depth], budget))
            self.rng.shuffle(children)
            return any(
                descend(after, depth + 1, weight * (prior if self.weighted else 1.0)) for after, prior in children
            )

        for _ in range(self.size):
            if budget[0] <= 0 or not descend(self.game.initial_state(), 0, 1.0):
                break
        return found

    def _thin(self, bag: dict[State, float]) -> dict[State, float]:
        """At most ``size`` hypotheses: resampled by weight when there are more (each drawn one counting once)."""
        if len(bag) <= self.size:
            return bag
        states = list(bag)
        drawn = self.rng.choices(states, weights=[bag[s] for s in states], k=self.size)
        thinned: dict[State, float] = {}
        for s in drawn:
            thinned[s] = thinned.get(s, 0.0) + 1.0
        return thinned


def _seen_key(seen: Seen) -> tuple[str, tuple[str, ...]]:
    return (seen.move.text.lower(), _percept_key(seen.percepts))


def _percept_key(percepts: Sequence[str]) -> tuple[str, ...]:
    """Percepts compared as GDL compares them: in any order, and letter case aside (a game manager may send
    them in its own spelling)."""
    return tuple(sorted(" ".join(p.lower().split()) for p in percepts))


class HiddenPlayer:
    """A player of games with hidden information: a :class:`Belief`, and random playouts from states drawn
    from it to score each legal move (flat Monte Carlo over HyperPlay's models). It thinks ``seconds`` a move
    (within the clock), or draws exactly ``samples`` states per move when that is given.

    Protocol, as :class:`~ggp.agents.Agent`'s but on information: :meth:`start`, then :meth:`choose` with
    the role's :class:`~ggp.core.information.Information` at every step, then :meth:`stop`.
    """

    name = "hidden"

    def __init__(
        self,
        *,
        size: int = 256,
        weighted: bool = True,
        playouts: int = 16,
        seconds: float = 0.2,
        samples: int | None = None,
        seed: int = 0,
    ) -> None:
        self.samples = samples
        self.size = size
        self.weighted = weighted
        self.playouts = playouts
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.game: Game | None = None
        self.role = ""
        self.belief: Belief | None = None
        self._think = seconds

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        game.role_index(role)
        self.game, self.role = game, role
        self.belief = Belief(game, role, size=self.size, weighted=self.weighted, rng=self.rng)
        # this match's thinking time: the configured seconds, within half the clock
        self._think = self.seconds if play_clock is None else min(self.seconds, max(0.01, 0.5 * play_clock))

    def _catch_up(self, information: Information) -> Belief:
        """The belief, brought up to ``information``; a history that is not the one taken in so far (a step
        told again differently, or fewer steps) starts the belief again from the start."""
        belief, game = self.belief, self.game
        if belief is None or game is None:
            raise RuntimeError("HiddenPlayer has not been started: call start(game, role) first")
        known, told = belief.steps, information.steps
        if len(told) < len(known) or any(_seen_key(a) != _seen_key(b) for a, b in zip(known, told, strict=False)):
            belief = self.belief = Belief(game, self.role, size=self.size, weighted=self.weighted, rng=self.rng)
        for seen in told[len(belief.steps) :]:
            belief.update(seen)
        belief.going_on()
        return belief

    def choose(self, information: Information, limit: Limit = Limit()) -> Choice:  # noqa: B008 - a frozen value
        """The move to make now, given everything the role knows."""
        belief = self._catch_up(information)
        moves = belief.legal_moves()
        if len(moves) == 1:
            return Choice(moves[0])
        return self._judge(belief, moves, limit)

    def _judge(self, belief: Belief, moves: list[Move], limit: Limit) -> Choice:
        """The choice among ``moves`` (two or more): each scored by random playouts from states drawn from the
        belief. Subclasses judge otherwise."""
        game = self.game
        assert game is not None
        seconds = self._think if limit.time is None else min(self._think, 0.8 * limit.time)
        deadline = time.perf_counter() + seconds
        totals = [0.0] * len(moves)
        counts = [0] * len(moves)
        me = belief.me
        while True:
            for i, move in enumerate(moves):
                state = belief.sample(1)[0]
                if move not in game.legal_moves(state, self.role):
                    continue
                joint = [
                    move if r == me else self.rng.choice(list(game.legal_moves(state, role)))
                    for r, role in enumerate(game.roles)
                ]
                after = game.play(state, joint)
                totals[i] += sum(self._playouts(after)) / self.playouts
                counts[i] += 1
            if self.samples is not None:  # a fixed budget: the same choice however busy the machine is
                if min(counts) >= self.samples:
                    break
            elif time.perf_counter() >= deadline and min(counts) > 0:
                break
        values = [t / c for t, c in zip(totals, counts, strict=True)]
        best = max(range(len(moves)), key=lambda i: (values[i], self.rng.random()))
        policy = tuple(zip(moves, counts, strict=True))
        return Choice(moves[best], policy, {"value": values[best], "simulations": sum(counts) * self.playouts})

    def _playouts(self, state: State) -> list[int]:
        """The role's goal at the end of random games from ``state`` (compiled, when the game has a kernel)."""
        game = self.game
        assert game is not None
        me = game.role_index(self.role)
        if game.is_terminal(state):
            return [game.goals(state)[me]] * self.playouts
        playouts = getattr(game, "random_playouts", None)
        if playouts is not None:
            goals, _, _ = playouts(self.playouts, seed=self.rng.getrandbits(31), state=state)
            return [int(g) for g in goals[:, me]]
        out = []
        for _ in range(self.playouts):
            s = state
            while not game.is_terminal(s):
                s = game.play(s, [self.rng.choice(list(game.legal_moves(s, r))) for r in game.roles])
            out.append(game.goals(s)[me])
        return out

    def stop(self, state: State | None = None, goals: Sequence[int] = ()) -> None:
        self.belief = None


class RandomHiddenPlayer(HiddenPlayer):
    """Plays uniformly among its legal moves (found from its belief, as a GDL-II player must)."""

    name = "random"

    def _judge(self, belief: Belief, moves: list[Move], limit: Limit) -> Choice:
        return Choice(self.rng.choice(moves))


class DeterminizedUCTPlayer(HiddenPlayer):
    """The classic baseline for hidden information: draw states from the belief and search each with the
    compiled UCT as if it were the true state (every role seeing everything), adding up the root visits of
    the role's moves over the samples (determinized UCT, Cowling et al.'s "determinization" ensemble).

    It keeps :class:`HiddenPlayer`'s belief, so the two differ only in how a move is judged: here each
    sample's opponents are searched as if they saw the whole state and answered best.
    """

    name = "determinized-uct"

    def __init__(self, *, determinizations: int = 8, simulations: int = 2_000, **options: Any) -> None:
        super().__init__(**options)
        self.determinizations = determinizations
        self.simulations = simulations
        self._search: Any = None

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        self._search = None  # a tree for this match's game

    def _judge(self, belief: Belief, moves: list[Move], limit: Limit) -> Choice:
        from .uct import UCTSearch

        game = self.game
        assert game is not None
        if self._search is None:
            capacity = max(self.simulations + 2, 1_000)
            self._search = UCTSearch(game, capacity=capacity, seed=self.rng.getrandbits(31))
        visits = dict.fromkeys(moves, 0)
        for state in belief.sample(self.determinizations):
            result = self._search.search(state, sims=self.simulations)
            r = result.roles.index(self.role)
            for move, count in zip(result.moves[r], result.visits[r], strict=True):
                if move in visits:
                    visits[move] += int(count)
        best = max(moves, key=lambda m: (visits[m], self.rng.random()))
        return Choice(best, tuple(visits.items()), {"simulations": self.determinizations * self.simulations})


class HiddenAgent(Agent):
    """A :class:`HiddenPlayer` behind the :class:`~ggp.agents.Agent` interface, for the referee and the GGP
    host. It decides on its role's information alone, built from what the referee tells every agent after
    each step (:meth:`~ggp.agents.Agent.observe`): the joint move played, of which it keeps its own move (the
    one played for it, after a fault too), and the state, of which it reads its role's percepts
    (:meth:`~ggp.Game.percepts`) and nothing else. The state :meth:`choose` is handed is not read.
    """

    reads_state = False

    def __init__(self, player: HiddenPlayer) -> None:
        super().__init__()
        self.player = player
        self.name = player.name
        self._information: Information | None = None

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        self.player.start(game, role, start_clock, play_clock)
        self._information = Information(role)

    def observe(self, state: State, joint: Sequence[Move]) -> None:
        info = self._information
        if info is not None:
            self._information = info.after(self.game, state, joint)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        return self.choose(state, Limit(time_limit)).move

    def choose(self, state: State, limit: Limit = Limit()) -> Choice:  # noqa: B008 - a frozen value
        info = self._information
        if info is None:
            raise RuntimeError("HiddenAgent has not been started: call start(game, role) first")
        return self.player.choose(info, limit)

    def stop(self, state: State, goals: Sequence[int]) -> None:
        self.player.stop(None, tuple(goals))

    def __repr__(self) -> str:
        return f"HiddenAgent({self.player.name})"


def hidden_agent(spec: str, *, seed: int = 0, seconds: float = 1.0) -> HiddenAgent:
    """The agent that plays a GDL-II game for an agent spec: ``random`` plays at random from what it knows,
    any other spec the :class:`HiddenPlayer` (the agents of games of perfect information would read the
    whole state), which takes the spec's ``time`` (seconds a move, else ``seconds``) and ``samples`` (states
    drawn per move: a fixed budget instead of a clock), or ``sims`` for ``samples``: the fixed budget an
    ``mcts`` spec that ``ggp serve`` accepts can name.

    >>> hidden_agent("mcts:time=0.5").player.seconds
    0.5
    >>> hidden_agent("mcts:sims=48").player.samples
    48
    """
    name, _, rest = spec.partition(":")
    options = dict(item.split("=", 1) for item in rest.split(",") if "=" in item)
    if name.strip().lower() == "random":
        return HiddenAgent(RandomHiddenPlayer(seed=seed))
    try:
        think = float(options.get("time", seconds))
        budget = options.get("samples", options.get("sims"))
        samples = int(budget) if budget is not None else None
    except ValueError:
        raise ValueError(f"{spec!r}: time is seconds and samples a whole number") from None
    if not (0 < think <= 86_400) or (samples is not None and not 0 < samples <= 1_000_000):
        raise ValueError(f"{spec!r}: time must be 0 to 86400 seconds and samples 1 to 1,000,000")
    return HiddenAgent(HiddenPlayer(seed=seed, seconds=think, samples=samples))
