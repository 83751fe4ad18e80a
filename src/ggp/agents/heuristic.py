"""A material heuristic found at meta-gaming time: how much each fact of a state says about the outcome.

Sancho's heuristics (piece counts, mobility) are chosen at the start clock by testing them on random games.
This is the same idea, made general over rule sheets: the facts of the state are counted in groups (each
predicate, each value of each of its arguments, and each pair of values of a predicate of three or more
arguments: ``(cell ?x ?y white)`` counts white pieces, ``(cell ?x 7 white)`` white pieces on row 7), and a
ridge regression of each role's final goal on those counts, over states sampled from random games, gives a
linear evaluation. It is used only if it predicts the outcome of games it was not fitted on
(:data:`MIN_EXPLAINED`), and then blended with the random rollout at the search's leaves (:class:`Material`,
``material`` of :class:`ggp.agents.uct.UCTSearch`).

>>> import ggp
>>> from ggp.agents.heuristic import feature_groups
>>> groups = feature_groups(["(cell 1 1 white)", "(cell 1 2 white)", "(cell 1 2 black)"])
>>> white = (groups[:, 0] == 1) & (groups[:, 1] == 1) & (groups[:, 2] == 0)  # a group counts the white pieces
>>> bool(white.any())
True
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import numpy as np

from ..core.game import Game
from ..core.kernels import rng_state
from ..core.kif import parse_terms, term_text
from ..core.native import KernelGame

#: The share of a state's random-play value (mean over roles) the heuristic must predict to be used.
MIN_EXPLAINED = 0.3
#: The heuristic's weight in a leaf's value (the rest: the random rollout's).
BLEND = 0.5
#: Most states sampled, and the chance of sampling each step of a random game (one in ``EVERY``).
MAX_SAMPLES = 20_000
EVERY = 4
#: Most feature groups fitted (the solve takes their number cubed).
MAX_FEATURES = 1500
#: The ridge regression's penalty, per sample.
RIDGE = 0.01


@dataclass(frozen=True)
class Material:
    """A linear evaluation of states: role ``r``'s value (0..1) is ``bias[r] + weights[r] @ state``, clipped;
    ``explained``: the share of a state's value under random play that it predicted on held-out games
    (mean over roles, see :func:`fit`)."""

    weights: np.ndarray
    bias: np.ndarray
    explained: float
    samples: int

    def params(self, blend: float = BLEND) -> np.ndarray:
        """As the compiled leaf reads them: the blend, each role's bias, then each role's weights."""
        return np.concatenate([[blend], self.bias, self.weights.ravel()]).astype(np.float64)

    def value(self, array: np.ndarray) -> np.ndarray:
        """Each role's value of a state array (0..1)."""
        return np.clip(self.bias + self.weights @ array.astype(np.float64), 0.0, 1.0)


def sample_states(
    game: KernelGame, games: int, seed: int = 0, max_steps: int = 1000, seconds: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """States of up to ``games`` random games from the start (one step in :data:`EVERY`), with each game's final
    goals (0..100) and those of one more random game from each state; ``seconds`` bounds the time.

    Played through the kernel's own functions, which any play of the game has compiled already: a template of
    its own would compile the sheet's network once more, for as long as the start clock on a large sheet.
    """
    kernel = game.kernel
    ctx = kernel.context()
    nr = kernel.num_roles
    rng = random.Random(seed)
    fast = rng_state(seed)
    buf = np.zeros(max(1, kernel.max_actions), dtype=np.int64)
    joint = np.zeros(nr, dtype=np.int64)
    res = np.zeros(nr, dtype=np.int64)
    s0 = game.initial_array()
    states: list[np.ndarray] = []
    goals: list[np.ndarray] = []
    again: list[np.ndarray] = []
    deadline = None if seconds is None else time.perf_counter() + seconds
    for _ in range(games):
        if len(states) >= MAX_SAMPLES or (deadline is not None and time.perf_counter() > deadline):
            break
        work = s0.copy()
        kept: list[np.ndarray] = []
        kept_again: list[np.ndarray] = []
        ended = True
        for _ in range(max_steps + 1):
            if kernel.terminal(ctx, work):
                break
            if deadline is not None and time.perf_counter() > deadline:
                ended = False  # the time is up: an unfinished game tells no outcome
                break
            if rng.randrange(EVERY) == 0:
                kept.append(work.copy())
                other = work.copy()
                kernel.rollout(ctx, other, fast)
                kernel.goals(ctx, other, res)
                kept_again.append(res.copy())
            for r in range(nr):
                k = int(kernel.legal(ctx, work, r, buf))
                if k == 0:
                    ended = False
                    break
                joint[r] = buf[rng.randrange(k)]
            if not ended:
                break
            kernel.apply(ctx, work, joint)
        else:
            ended = False  # cut off
        if not ended or not kept:
            continue  # a game cut off or stuck tells no outcome
        kernel.goals(ctx, work, res)
        states.extend(kept)
        goals.extend([res.copy()] * len(kept))
        again.extend(kept_again)
    if not states:
        empty = np.zeros((0, nr), dtype=np.int64)
        return np.zeros((0, s0.shape[0]), dtype=s0.dtype), empty, empty
    return np.array(states), np.array(goals), np.array(again)


def _split(fact: str) -> list[str]:
    """A fact's predicate and top-level arguments as texts: ``(cell 1 (a b) x)`` is ``cell 1 (a b) x``."""
    term = parse_terms(fact)[0]
    return [term_text(part) for part in term] if isinstance(term, tuple) else [term_text(term)]


def feature_groups(facts: list[str]) -> np.ndarray:
    """Which facts each feature counts, as a 0/1 matrix (features x facts): each predicate; each value of
    each argument of it; each pair of values of a predicate of three or more arguments."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, fact in enumerate(facts):
        pred, *args = _split(fact)
        keys: list[tuple[str, ...]] = [(pred,)]
        keys += [(pred, str(j), a) for j, a in enumerate(args)]
        if len(args) >= 3:
            keys += [
                (pred, str(j), args[j], str(k), args[k]) for j in range(len(args)) for k in range(j + 1, len(args))
            ]
        for key in keys:
            groups.setdefault(key, []).append(i)
    matrix = np.zeros((len(groups), len(facts)), dtype=np.float64)
    for f, members in enumerate(groups.values()):
        matrix[f, members] = 1.0
    return matrix


def fit(states: np.ndarray, goals: np.ndarray, again: np.ndarray, groups: np.ndarray) -> Material | None:
    """The ridge fit of each role's final goal on the feature counts; None if there is too little to fit, or
    it explains less than :data:`MIN_EXPLAINED` of what can be predicted of held-out games.

    Random games are so noisy that even the exact value of a state under random play (what rollouts
    estimate) predicts one game's outcome weakly: the correlation of two random games' outcomes from the
    same state (``goals`` and ``again``) is the share of the variance that any estimate can explain, and
    the fit is judged against it."""
    n = states.shape[0]
    if n < 200:
        return None
    if groups.shape[0] > MAX_FEATURES:  # a solve cubic in the features: a sheet this rich is not fitted
        return None
    x = states.astype(np.float64)[:, : groups.shape[1]] @ groups.T
    keep = x.std(axis=0) > 1e-9
    if not keep.any():
        return None
    x, g = x[:, keep], groups[keep]
    y = goals.astype(np.float64) / 100.0
    # Samples of one game are next to each other: the held-out part is the last fifth, whole games but one.
    cut = int(n * 0.8)
    train, test = slice(0, cut), slice(cut, n)
    w, b = _ridge(x[train], y[train])
    pred = x[test] @ w + b
    shares = []
    for r in range(y.shape[1]):
        if y[:, r].std() < 1e-9 or again[:, r].std() < 1e-9 or pred[:, r].std() < 1e-9 or y[test, r].std() < 1e-9:
            shares.append(0.0)
            continue
        ceiling = float(np.corrcoef(again[:, r], goals[:, r])[0, 1])
        found = float(np.corrcoef(pred[:, r], y[test, r])[0, 1])
        shares.append(0.0 if ceiling <= 0.01 or found <= 0 else min(1.0, found * found / ceiling))
    explained = float(np.mean(shares))
    if not explained >= MIN_EXPLAINED:
        return None
    w, b = _ridge(x, y)
    weights = (g.T @ w).T  # per fact: the sum of the weights of the features counting it
    full = np.zeros((y.shape[1], states.shape[1]))
    full[:, : weights.shape[1]] = weights
    return Material(weights=full, bias=b, explained=explained, samples=n)


def _ridge(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean_x, mean_y = x.mean(axis=0), y.mean(axis=0)
    xc = x - mean_x
    a = xc.T @ xc + RIDGE * x.shape[0] * np.eye(x.shape[1])
    w = np.linalg.solve(a, xc.T @ (y - mean_y))
    return w, mean_y - mean_x @ w


def find_material(game: Game, seconds: float = 2.0, seed: int = 0) -> Material | None:
    """The material heuristic of a rule sheet's game, if random games show one (see the module); None for a
    built-in game (their players have their own), a game of one role, or no heuristic found in ``seconds``."""
    if not isinstance(game, KernelGame) or getattr(game, "engine", None) is None or len(game.roles) < 2:
        return None
    facts = list(getattr(game, "base_facts", []))
    if not facts or game.initial_array().dtype != np.uint8:
        return None
    states, goals, again = sample_states(game, MAX_SAMPLES, seed, seconds=seconds)
    return fit(states, goals, again, feature_groups(facts))


def find_pieces(game: Game) -> np.ndarray | None:
    """Each role's pieces on a rule sheet, as weights of the state's facts (roles x facts): a fact of three
    or more arguments one of which is a role's name (``(cell 3 4 white)``) is a piece of that role. None for a
    built-in game, a game of one role, or a sheet where some role starts with fewer than two such pieces (connect
    four's stones, placed one a move; tron's one token).

    Sancho finds its piece sets by testing candidate predicates on random games; this is the simplest
    guess that holds for the board games of the corpus where roles are colours."""
    if not isinstance(game, KernelGame) or getattr(game, "engine", None) is None or len(game.roles) < 2:
        return None
    facts = list(getattr(game, "base_facts", []))
    length = game.initial_array().shape[0]
    if not facts or game.initial_array().dtype != np.uint8 or len(facts) > length:
        return None
    names = [r.lower() for r in game.roles]
    pieces = np.zeros((len(names), length), dtype=np.float64)
    for i, fact in enumerate(facts):
        args = _split(fact)[1:]
        if len(args) < 3:  # a board's cell has two coordinates and its content: (control white) is no piece
            continue
        for a in args:
            if a.lower() in names:
                pieces[names.index(a.lower()), i] = 1.0
    if not (pieces @ (game.initial_array() != 0) >= 2).all():
        # a role with no piece at the start (a game of placing stones, where every move adds one), or with
        # one (a token that stands for the player: tron's, a maze's runner), has no army to count
        return None
    return pieces


#: In :func:`piece_evaluation`, the fewest pieces of a lead worth the whole range (a role starting with more
#: than twice as many: half of them).
MIN_LEAD = 4


def piece_evaluation(pieces: np.ndarray, initial: np.ndarray) -> Material:
    """A linear evaluation from piece counts (``pieces``: each role's weight of each byte of the state, as
    :func:`find_pieces` gives them): role ``r`` is worth ``1/n`` plus ``(p_r - mean) / M``, clipped to 0..1,
    for ``p_r`` its pieces, ``mean`` the roles' mean and ``M`` :data:`MIN_LEAD` or half the most pieces a
    role starts with if more: between two roles a lead of ``M`` pieces is a sure win. Not fitted:
    ``explained`` and ``samples`` are 0.

    >>> pieces = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    >>> e = piece_evaluation(pieces, np.array([1, 1, 1, 1], dtype=np.uint8))
    >>> [float(v) for v in e.value(np.array([1, 1, 1, 0], dtype=np.uint8))]  # two pieces against one
    [0.625, 0.375]
    """
    nr = pieces.shape[0]
    start = pieces @ (initial != 0)
    lead = max(float(MIN_LEAD), float(start.max(initial=0.0)) / 2)
    weights = (pieces - pieces.mean(axis=0)) / lead
    return Material(weights=weights, bias=np.full(nr, 1.0 / nr), explained=0.0, samples=0)


def goals_move(game: Game, walks: int = 4, steps: int = 80, seconds: float = 1.0, seed: int = 0) -> bool:
    """Whether ``game``'s goals change during play: along a few random walks, the goals of the states
    before the end are not all the same (a score, captured stones; not a sheet whose goals are fixed until
    the end). Bounded by ``seconds``.

    >>> import ggp
    >>> goals_move(ggp.load("wallmaze"))
    False
    """
    rng = random.Random(seed)
    # The first calls may compile: the clock starts after a first step.
    first = game.initial_state()
    game.goals(first)
    if not game.is_terminal(first):
        legal = [game.legal_moves(first, role) for role in game.roles]
        if all(legal):
            game.goals(game.next_state(first, [moves[0] for moves in legal]))
    deadline = time.perf_counter() + seconds
    seen: set[tuple[int, ...]] = set()
    for _ in range(walks):
        state = game.initial_state()
        for _ in range(steps):
            if game.is_terminal(state) or time.perf_counter() > deadline:
                break
            try:
                seen.add(tuple(game.goals(state)))
            except Exception:  # goals undefined before the end: nothing to read during play
                return False
            legal = [game.legal_moves(state, role) for role in game.roles]
            if not all(legal):
                break
            state = game.next_state(state, [rng.choice(moves) for moves in legal])
    return len(seen) > 1


__all__ = [
    "BLEND",
    "MIN_EXPLAINED",
    "Material",
    "feature_groups",
    "find_material",
    "find_pieces",
    "fit",
    "goals_move",
    "piece_evaluation",
    "sample_states",
]
