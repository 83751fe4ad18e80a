"""A GDL-II game (hidden information, chance) as an OpenSpiel game with chance nodes and information states.

:func:`openspiel_game` hands games with :attr:`~ggp.Game.chance_role` or
:attr:`~ggp.Game.hidden_information` here. A GDL step, where every role moves at once, becomes a run of
OpenSpiel nodes: one node for each role with a choice, in role order, chance's a chance node (each outcome
with the same probability, as GDL-II's ``random`` plays). Roles
with one legal move play it by themselves. A player's information state is what it knows
(:class:`~ggp.core.information.Information`: its own moves and its percepts, step by step), so a move chosen
earlier in the same step stays hidden from the players after it, as in the simultaneous step it stands for.
So OpenSpiel's CFR, exploitability and best-response tools run on any GDL-II sheet unchanged.

* Players are :attr:`~ggp.Game.players` (every role but chance), in order; a player's actions are its
  integer actions (:meth:`~ggp.Game.legal_actions`); chance outcomes are chance's actions.
* Returns are ``(goal - 50) / goal_unit`` at the end: a sheet whose goals are 50 plus 25 times the chips won
  (our Kuhn poker) gives OpenSpiel's chips with ``goal_unit=25``.
* Information state strings are ``Information.text()``; the tensor holds, for each of the first
  ``max_steps`` steps, the player's move (one-hot over its actions) and its percepts (one bit per percept
  the sheet can give it). Observations (without perfect recall) are the last step's alone.

>>> import pyspiel
>>> from ggp.gdl.examples import load_example
>>> game = openspiel_hidden_game(load_example("kuhn_poker"), goal_unit=25)
>>> state = game.new_initial_state()
>>> state.is_chance_node(), [p for _, p in state.chance_outcomes()]
(True, [0.3333333333333333, 0.3333333333333333, 0.3333333333333333])
>>> str(game.get_type().utility)
'Utility.ZERO_SUM'
"""

from __future__ import annotations

import random
import re
import threading
from typing import Any

import numpy as np
import pyspiel  # type: ignore[import-not-found]

from ..core.game import Game, State
from ..gdl.gdl_ii import percept_of

#: Random playouts run to find a sheet's length and whether its goals always add up to the same total.
PROBES = 200
#: Transitions remembered per game (CFR walks the same tree again and again).
MEMO = 500_000

_SETUPS: dict[str, _Setup] = {}
_LOCK = threading.Lock()


class _Setup:
    """What every state of one registered game shares: the game, its players and the transitions seen."""

    def __init__(self, game: Game, goal_unit: float, max_steps: int) -> None:
        self.game = game
        self.goal_unit = goal_unit
        self.max_steps = max_steps
        self.players = game.players
        self.player_index = [game.role_index(r) for r in self.players]
        self.chance = game.role_index(game.chance_role) if game.chance_role is not None else None
        self.memo: dict[tuple[State, tuple[int, ...]], State] = {}
        #: The initial node's fields, made once (OpenSpiel makes a new state for every clone).
        self.first: dict[str, Any] | None = None
        #: The OpenSpiel game type and info made for this setup.
        self.made: tuple[Any, Any] = (None, None)
        # the percepts each player can get, for the tensors (a propnet game lists them among its facts)
        facts = list(getattr(game, "base_facts", ()))
        self.percept_index: list[dict[str, int]] = []
        for role in self.players:
            texts = [p for p in (percept_of(f, role) for f in facts) if p is not None]
            self.percept_index.append({t: i for i, t in enumerate(texts)})
        self.tensors = bool(facts)
        self.step_size = [game.num_actions(r) + len(ix) for r, ix in zip(self.players, self.percept_index, strict=True)]

    def __deepcopy__(self, memo: dict[int, Any]) -> _Setup:
        return self  # shared by a game's states: OpenSpiel's clone must not copy the game

    def play(self, state: State, joint: tuple[int, ...]) -> State:
        key = (state, joint)
        after = self.memo.get(key)
        if after is None:
            game = self.game
            moves = [game.action_to_move(state, role, a) for role, a in zip(game.roles, joint, strict=True)]
            after = game.play(state, moves)
            if len(self.memo) >= MEMO:
                self.memo.clear()
            self.memo[key] = after
        return after


class _Value(tuple):
    """A tuple of immutable parts that a deepcopy (OpenSpiel's clone) hands on instead of copying."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> _Value:
        return self


def short_name(game: Game) -> str:
    """The name the game is registered under: ``ggp_`` and its name, other characters made ``_``."""
    return "ggp_" + re.sub(r"[^A-Za-z0-9_]", "_", game.name)


def _probe(game: Game) -> tuple[int, bool]:
    """(longest of some seeded random playouts in steps, whether every end's goals had one total)."""
    rng = random.Random(0)
    longest, totals = 0, set()
    players = [game.role_index(r) for r in game.players]
    for _ in range(PROBES):
        s = game.initial_state()
        steps = 0
        while not game.is_terminal(s) and steps < 10_000:
            s = game.play(s, [rng.choice(list(game.legal_moves(s, r))) for r in game.roles])
            steps += 1
        longest = max(longest, steps)
        goals = game.goals(s)
        totals.add(sum(goals[i] for i in players))
    return longest, len(totals) == 1 and totals == {50 * len(players)}


def openspiel_hidden_game(game: Game, *, goal_unit: float = 50.0, max_steps: int | None = None) -> Any:
    """``game`` (a GDL-II game) as a ``pyspiel.Game`` with chance nodes and information states, registered
    by its short name. ``goal_unit`` scales returns (see the module); ``max_steps`` bounds the steps the
    information state tensor holds (None: twice the longest of some random playouts)."""
    if not goal_unit > 0:
        raise ValueError(f"goal_unit must be positive, not {goal_unit!r}")
    name = short_name(game)
    longest, zero_sum = _probe(game)
    steps = max_steps or 2 * max(longest, 1)
    setup = _Setup(game, float(goal_unit), steps)
    n = len(setup.players)
    chance_outcomes = game.num_actions(game.chance_role) if game.chance_role is not None else 0
    game_type = pyspiel.GameType(
        short_name=name,
        long_name=f"ggp {game.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if chance_outcomes
            else pyspiel.GameType.ChanceMode.DETERMINISTIC
        ),
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=n,
        min_num_players=n,
        provides_information_state_string=True,
        provides_information_state_tensor=setup.tensors,
        provides_observation_string=True,
        provides_observation_tensor=setup.tensors,
        parameter_specification={},
    )
    info = pyspiel.GameInfo(
        num_distinct_actions=max(game.num_actions(r) for r in setup.players),
        max_chance_outcomes=chance_outcomes,
        num_players=n,
        min_utility=-50.0 / goal_unit,
        max_utility=50.0 / goal_unit,
        utility_sum=0.0 if zero_sum else None,
        max_game_length=steps * (n + 1),
    )
    with _LOCK:
        # pyspiel.load_game(name) makes the game last made under this name; a game made here keeps its own
        _SETUPS[name] = setup
        setup.made = (game_type, info)
        if name not in pyspiel.registered_names():
            cls = type(f"GGPHiddenGame_{name}", (GGPHiddenGame,), {"_registered_name": name})
            pyspiel.register_game(game_type, cls)
    return GGPHiddenGame(setup, {})


class GGPHiddenGame(pyspiel.Game):
    """A GDL-II game as a ``pyspiel`` Python game (made by :func:`openspiel_hidden_game`)."""

    _registered_name = ""

    def __init__(self, *args: Any) -> None:
        # (setup, params) from openspiel_hidden_game, or (params,) from pyspiel.load_game
        setup = args[0] if len(args) == 2 else _SETUPS[self._registered_name]
        params = args[-1] if args else {}
        game_type, info = setup.made
        super().__init__(game_type, info, params or {})
        self._setup = setup

    def new_initial_state(self) -> GGPHiddenState:
        return GGPHiddenState(self, self._setup)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        private = iig_obs_type is None or iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        return HiddenObserver(self._setup, recall, private, params)


class GGPHiddenState(pyspiel.State):
    """A node of a :class:`GGPHiddenGame`: the true state, the actions chosen so far in the step under way,
    and what each player knows."""

    def __init__(self, game: Any, setup: _Setup) -> None:
        super().__init__(game)
        self._setup_of = setup
        first = setup.first
        if first is not None:  # OpenSpiel clones a state by making a new one and copying its fields over
            self.__dict__.update(first)
            return
        self._s: State = setup.game.initial_state()
        #: Each player's steps so far, as texts (an information state's parts).
        self._seen: tuple[tuple[str, ...], ...] = _Value(() for _ in setup.players)
        #: The same steps as (action, percept texts), for the tensors.
        self._steps: tuple[tuple[tuple[int, tuple[str, ...]], ...], ...] = _Value(() for _ in setup.players)
        self._chosen: tuple[int, ...] = ()
        self._advance()
        setup.first = {k: v for k, v in self.__dict__.items() if k.startswith("_")}

    def _setup(self) -> _Setup:
        return self._setup_of

    def _advance(self) -> None:
        """Find the next role to choose in this step, playing the step whenever every role has its move."""
        setup = self._setup()
        game = setup.game
        while True:
            self._over = game.is_terminal(self._s)
            if self._over:
                self._legal: list[int] = []
                self._mover = -1
                return
            while len(self._chosen) < len(game.roles):
                r = len(self._chosen)
                legal = sorted(int(a) for a in game.legal_actions(self._s, game.roles[r]))
                if len(legal) > 1:
                    self._legal, self._mover = legal, r
                    return
                self._chosen = (*self._chosen, legal[0])
            self._finish_step()

    def _finish_step(self) -> None:
        setup = self._setup()
        game = setup.game
        joint = self._chosen
        after = setup.play(self._s, joint)
        seen, steps = list(self._seen), list(self._steps)
        for p, (role, r) in enumerate(zip(setup.players, setup.player_index, strict=True)):
            percepts = game.percepts(after, role)
            move = game.action_to_move(self._s, role, joint[r])
            text = f"{move} / {' '.join(percepts)}" if percepts else str(move)
            seen[p] = (*seen[p], text)
            steps[p] = (*steps[p], (joint[r], percepts))
        self._s, self._seen, self._steps, self._chosen = after, _Value(seen), _Value(steps), ()

    def current_player(self) -> int:
        if self._over:
            return int(pyspiel.PlayerId.TERMINAL)
        if self._mover == self._setup().chance:
            return int(pyspiel.PlayerId.CHANCE)
        return self._setup().player_index.index(self._mover)

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._legal) if player == self.current_player() else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        p = 1.0 / len(self._legal)
        return [(a, p) for a in self._legal]

    def _apply_action(self, action: int) -> None:
        if int(action) not in self._legal:
            raise ValueError(f"{self._setup().game.name}: {action} is not a legal action here; legal: {self._legal}")
        self._chosen = (*self._chosen, int(action))
        self._advance()

    def _action_to_string(self, player: int, action: int) -> str:
        game = self._setup().game
        role = game.chance_role if player == int(pyspiel.PlayerId.CHANCE) else None
        if role is None and 0 <= player < len(self._setup().players):
            role = self._setup().players[player]
        if role is None or not 0 <= action < game.num_actions(role):
            return f"action {action}"
        return str(game.action_to_move(self._s, role, int(action)))

    def is_terminal(self) -> bool:
        return bool(self._over)

    def returns(self) -> list[float]:
        setup = self._setup()
        if not self._over:
            return [0.0] * len(setup.players)
        goals = setup.game.goals(self._s)
        return [(goals[r] - 50) / setup.goal_unit for r in setup.player_index]

    def information_text(self, player: int) -> str:
        """What ``player`` knows: its role, then each step's move and percepts."""
        return f"{self._setup().players[player]}: " + " | ".join(self._seen[player])

    def game_state(self) -> State:
        """The true state of ggp's Game API (the step under way not yet played)."""
        return self._s

    def __str__(self) -> str:
        facts = self._setup().game.state_facts(self._s) if hasattr(self._setup().game, "state_facts") else []
        chosen = ",".join(str(a) for a in self._chosen)
        return " ".join(facts) + (f" [{chosen}]" if chosen else "")


class HiddenObserver:
    """OpenSpiel's observer protocol for a GDL-II game: a player's information (``perfect_recall``) or its
    last step alone, as a string and a tensor. An observer of public information only (OpenSpiel's
    ``private_info`` other than ``SINGLE_PLAYER``) sees the number of steps and whether the game is over:
    in GDL-II nothing else is common knowledge."""

    def __init__(self, setup: _Setup, perfect_recall: bool, private: bool, params: Any) -> None:
        if params:
            raise ValueError(f"the observer of {setup.game.name} takes no parameters, not {params!r}")
        self._setup = setup
        self._recall = perfect_recall
        self._private = private
        width = max(setup.step_size)
        rows = setup.max_steps if perfect_recall else 1
        self.tensor = np.zeros(rows * width + 1, dtype=np.float32)
        self.dict = {"steps": self.tensor[:-1].reshape(rows, width), "over": self.tensor[-1:]}

    def set_from(self, state: GGPHiddenState, player: int) -> None:
        setup = self._setup
        self.tensor[:] = 0
        self.dict["over"][0] = float(state.is_terminal())
        if not self._private:
            return
        rows = self.dict["steps"]
        role = setup.players[player]
        actions = setup.game.num_actions(role)
        index = setup.percept_index[player]
        history = state._steps[player] if self._recall else state._steps[player][-1:]
        if len(history) > rows.shape[0]:
            raise ValueError(
                f"{setup.game.name}: this history has {len(history)} steps and the information state tensor holds "
                f"{rows.shape[0]}: make the game with openspiel_hidden_game(..., max_steps={2 * len(history)})"
            )
        for t, (action, percepts) in enumerate(history):
            rows[t, action] = 1.0
            for text in percepts:
                i = index.get(text)
                if i is not None:
                    rows[t, actions + i] = 1.0

    def string_from(self, state: GGPHiddenState, player: int) -> str:
        seen = state._seen[player]
        if not self._private:
            return f"step {len(seen)}" + (" (over)" if state.is_terminal() else "")
        if self._recall:
            return state.information_text(player)
        role = self._setup.players[player]
        return f"{role}: step {len(seen)}: " + (seen[-1] if seen else "")
