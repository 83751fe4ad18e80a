"""Every ggp game as an OpenSpiel game: :func:`openspiel_game` makes a ``pyspiel`` Python game and registers it.

The game is registered as ``ggp_<name>`` (a rule sheet's name with anything
but letters, digits and ``_`` made ``_``), so ``pyspiel.load_game("ggp_wallmaze")``
works once :func:`openspiel_game` has run for it. OpenSpiel's own algorithms
then run on it unchanged: ``MCTSBot``, the evaluation tools, CFR on a small
sequential game.

* Players are the game's roles, in order; actions the game's integer actions
  (``num_distinct_actions`` is the largest role's action space).
* Turn-taking games are ``SEQUENTIAL``: the current player is the role with a
  choice (the idle role, whose only move is ``noop``, plays it by itself).
  Games where several roles choose at once are ``SIMULTANEOUS``: such a state's
  current player is ``PlayerId.SIMULTANEOUS``, every role gives an action (an
  idle one its single legal move); states with one role to choose are
  sequential nodes. Which kind a rule sheet is, is found by random playouts
  (any state with two roles to choose makes it simultaneous), unless
  ``simultaneous=`` says.
* Returns are the goals scaled to [-1, 1], ``(goal - 50) / 50``, at the end.
  Built-in games that are constant-sum (Amazons, Bomberman) are ``ZERO_SUM``;
  the others ``GENERAL_SUM``.
* Observation tensors are :mod:`ggp.rl.observe`'s, flattened.

>>> import pyspiel
>>> from ggp.rl import openspiel_game
>>> game = openspiel_game("amazons_8x8")
>>> game.get_type().short_name, str(game.get_type().dynamics)
('ggp_amazons_8x8', 'Dynamics.SEQUENTIAL')
>>> state = game.new_initial_state()
>>> state.current_player(), len(state.legal_actions())
(0, 60)
>>> pyspiel.load_game("ggp_amazons_8x8").num_players()
2
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel  # type: ignore[import-not-found]
from open_spiel.python.observation import IIGObserverForPublicInfoGame  # type: ignore[import-untyped]

from ..core.game import Game
from ..core.native import KernelGame
from ..registry import load
from .core import RLGame
from .openspiel_ii import openspiel_hidden_game, short_name

#: Random playouts run to tell a rule sheet's kind and length.
PROBES = 24

# The games by short name: states hold the name, not the game, so that OpenSpiel's clone
# (a deepcopy of the Python state) copies a few small arrays and nothing else.
_GAMES: dict[str, _Setup] = {}
_LOCK = threading.Lock()


class _Setup:
    def __init__(self, rg: RLGame, simultaneous: bool) -> None:
        self.rg = rg
        self.simultaneous = simultaneous


def _probe(rg: RLGame, simultaneous: bool | None) -> tuple[bool, int]:
    """(simultaneous?, longest playout) from a few seeded random playouts through the kernel."""
    rng = np.random.default_rng(0)
    sim, longest = False, 0
    joint = np.zeros(rg.num_roles, dtype=np.int64)
    for _ in range(PROBES):
        s = rg.initial()
        steps = 0
        while not rg.terminal(s) and steps < 10_000:
            movers = rg.movers(s)
            sim = sim or len(movers) > 1
            for r in range(rg.num_roles):
                legal = rg.legal(s, r)
                joint[r] = legal[rng.integers(len(legal))]
            rg.apply(s, joint)
            steps += 1
        longest = max(longest, steps)
    return (sim if simultaneous is None else simultaneous), longest


def openspiel_game(
    game: str | Path | Game | RLGame,
    *,
    simultaneous: bool | None = None,
    max_game_length: int | None = None,
    goal_unit: float = 50.0,
) -> Any:
    """``game`` (a name, a rule sheet's path or a loaded game) as a ``pyspiel.Game``, registered by its short name.

    ``simultaneous`` forces the dynamics (None: found by random playouts);
    ``max_game_length`` is what the game tells OpenSpiel about its length
    (None: the game's own bound, :attr:`~ggp.Game.max_steps`, else ten times
    the longest of a few random playouts, at least 100).

    A GDL-II game (chance, hidden information) is made by :func:`~ggp.rl.openspiel_ii.openspiel_hidden_game`,
    with chance nodes and information states; ``goal_unit`` scales its returns, ``(goal - 50) / goal_unit``.
    """
    if isinstance(game, (str, Path)):
        game = load(game)
    if isinstance(game, Game) and game.hidden_information:
        return openspiel_hidden_game(game, goal_unit=goal_unit)
    if not isinstance(game, (KernelGame, RLGame)):
        raise TypeError(f"ggp.rl needs a game with a compiled kernel (any game ggp.load returns), not {game!r}")
    rg = RLGame.of(game)
    name = short_name(rg.game)
    sim, longest = _probe(rg, simultaneous)
    length = max_game_length or rg.game.max_steps or max(100, 10 * longest)
    constant_sum = rg.game.constant_sum
    game_type = pyspiel.GameType(
        short_name=name,
        long_name=f"ggp {rg.name}",
        dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS if sim else pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=(
            pyspiel.GameType.Information.IMPERFECT_INFORMATION
            if sim
            else pyspiel.GameType.Information.PERFECT_INFORMATION
        ),
        utility=pyspiel.GameType.Utility.ZERO_SUM if constant_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=rg.num_roles,
        min_num_players=rg.num_roles,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={},
    )
    info = pyspiel.GameInfo(
        num_distinct_actions=rg.num_actions,
        max_chance_outcomes=0,
        num_players=rg.num_roles,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0 if constant_sum else None,
        max_game_length=int(length),
    )
    with _LOCK:
        _GAMES[name] = _Setup(rg, sim)
        _INFO[name] = (game_type, info)
        if name not in pyspiel.registered_names():
            # one subclass per game: pyspiel builds a registered game by calling its class with the parameters
            cls = type(f"GGPSpielGame_{name}", (GGPSpielGame,), {"_registered_name": name})
            pyspiel.register_game(game_type, cls)
    return GGPSpielGame(name, game_type, info, {})


_INFO: dict[str, tuple[Any, Any]] = {}


def register_builtin_games() -> list[str]:
    """Register every built-in game (:func:`ggp.game_names`) with OpenSpiel; returns their short names.

    Afterwards ``pyspiel.load_game("ggp_bomberman2p")`` and the like work in this process.
    """
    from ..registry import game_names

    return [openspiel_game(name).get_type().short_name for name in game_names()]


class GGPSpielGame(pyspiel.Game):
    """A ggp game as a ``pyspiel`` Python game (made by :func:`openspiel_game`)."""

    _registered_name = ""

    def __init__(self, *args: Any) -> None:
        # (name, game type, info, params) from openspiel_game, or (params,) from pyspiel.load_game
        name = args[0] if len(args) == 4 else self._registered_name
        params = args[-1] if args else {}
        game_type, info = _INFO[name]
        super().__init__(game_type, info, params or {})
        self._name = name

    def new_initial_state(self) -> GGPSpielState:
        return GGPSpielState(self, self._name)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        if iig_obs_type is None or not iig_obs_type.perfect_recall:
            return GGPObserver(self._name, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class GGPSpielState(pyspiel.State):
    """A state of a :class:`GGPSpielGame`: the kernel's state array and who is to choose."""

    def __init__(self, game: Any, name: str) -> None:
        super().__init__(game)
        self._name = name
        setup = _GAMES[name]
        self._s = setup.rg.initial()
        self._refresh()

    def _setup(self) -> _Setup:
        return _GAMES[self._name]

    def _refresh(self) -> None:
        rg = self._setup().rg
        self._over = rg.terminal(self._s)
        self._movers = [] if self._over else rg.movers(self._s)

    def current_player(self) -> int:
        if self._over:
            return int(pyspiel.PlayerId.TERMINAL)
        if len(self._movers) > 1:
            if not self._setup().simultaneous:
                raise RuntimeError(
                    f"{self._name}: several roles choose at once in this state; "
                    f"make the game with openspiel_game(..., simultaneous=True)"
                )
            return int(pyspiel.PlayerId.SIMULTANEOUS)
        return self._movers[0]

    def _legal_actions(self, player: int) -> list[int]:
        if self._over:
            return []
        return sorted(int(a) for a in self._setup().rg.legal(self._s, player))

    def _joint(self, chosen: dict[int, int]) -> np.ndarray:
        rg = self._setup().rg
        joint = np.zeros(rg.num_roles, dtype=np.int64)
        for r in range(rg.num_roles):
            if r in chosen:
                a = rg.check(self._s, r, chosen[r])
                if a is None:
                    raise rg.illegal(self._s, r, chosen[r])
                joint[r] = a
            else:
                joint[r] = rg.legal(self._s, r)[0]  # an idle role's one move
        return joint

    def _apply_action(self, action: int) -> None:
        self._play(self._joint({self._movers[0]: int(action)}))

    def _apply_actions(self, actions: list[int]) -> None:
        self._play(self._joint({r: int(a) for r, a in enumerate(actions)}))

    def _play(self, joint: np.ndarray) -> None:
        self._s = self._s.copy()  # a clone shares nothing with its original
        self._setup().rg.apply(self._s, joint)
        self._refresh()

    def _action_to_string(self, player: int, action: int) -> str:
        rg = self._setup().rg
        if player < 0 or not 0 <= action < rg.num_actions:
            return f"action {action}"
        try:
            return rg._text(self._s, player, int(action))
        except (IndexError, KeyError, ValueError):
            return f"action {action}"

    def is_terminal(self) -> bool:
        return bool(self._over)

    def returns(self) -> list[float]:
        if not self._over:
            return [0.0] * self._setup().rg.num_roles
        return self._setup().rg.rewards(self._s)

    def game_state(self) -> Any:
        """This state as an immutable state of ggp's Game API."""
        return self._setup().rg.state(self._s)

    def state_array(self) -> np.ndarray:
        """A copy of the kernel's state array."""
        return self._s.copy()

    def __str__(self) -> str:
        rg = self._setup().rg
        return " ".join(rg.game.state_facts(rg.state(self._s)))


class GGPObserver:
    """OpenSpiel's observer protocol over :mod:`ggp.rl.observe`: ``tensor``, ``dict``, ``set_from``, ``string_from``."""

    def __init__(self, name: str, params: Any) -> None:
        if params:
            raise ValueError(f"the observer of {name} takes no parameters, not {params!r}")
        self._name = name
        shape = _GAMES[name].rg.observer.shape
        self.tensor = np.zeros(int(np.prod(shape)), dtype=np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: GGPSpielState, player: int) -> None:
        self.tensor[:] = _GAMES[self._name].rg.observer.observe(state._s, player).reshape(-1)

    def string_from(self, state: GGPSpielState, player: int) -> str:
        return str(state)
