"""Agent options: every option of every agent declares its range, and a value outside it is refused at every door.

The issue these guard: ``mcts:c=nan`` (or ``c=-1``) passed ``make_agent``, the
compiled UCB pick then returned -1 and indexed with it, and the process died
with a segfault: the web server, ``ggp serve``, ``ggp match``, ``ggp play`` and
tournaments alike, since they all build agents through ``make_agent``.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import ggp
from conftest import GAME_NAMES
from ggp.agents import AGENTS, Agent, Range, agent_options, make_agent
from ggp.agents.mcts import MAX_BIAS, MAX_RAVE, MAX_THREADS
from ggp.agents.options import MAX_C, MAX_CAPACITY, MAX_SECONDS, MAX_SEED, MAX_SIMS, MIN_CAPACITY
from ggp.agents.uct import MAX_TREE_BYTES, UCTSearch, search

BUILT_IN = ["random", "mcts", "amazons", "bomberman", "wallmaze"]
# Every option of every built-in agent: (agent, option).
OPTIONS = [(name, key) for name in BUILT_IN for key in agent_options(name)]

# Hostile spec texts, refused by every option (numeric or flag).
HOSTILE_TEXTS = ["nan", "inf", "-inf", "-1", "1e400", "1" + "0" * 30, "", "abc", "True", "10**30", "0x10", "1.5.2"]
# Hostile Python values, refused by every option: numbers are never bools and flags never numbers.
HOSTILE_VALUES: list[Any] = [float("nan"), float("inf"), -float("inf"), -1, 10**30, 1e300, "", "abc", "1", [1]]
# What a bool option refuses besides: numbers that look like flags.
HOSTILE_FLAG_VALUES: list[Any] = [0, 1, 2, 0.0, np.int64(1), None]
# What a numeric option refuses besides: bools and their numpy cousins.
HOSTILE_NUMBER_VALUES: list[Any] = [True, False, np.bool_(True)]


def is_flag(name: str, key: str) -> bool:
    """Whether ``key`` is a true-or-false option of agent ``name`` (declared ``bool``, so without a range)."""
    return agent_options(name)[key] is bool


def quoted(text: str) -> str:
    """How a message quotes a refused spec value: numbers as written, other text in quotes, cut to 24 characters."""
    try:
        float(text)
        out = text
    except ValueError:
        out = repr(text)
    return out if len(out) <= 24 else out[:21] + "..."


def expected_range(name: str, key: str) -> list[str]:
    """What the message must say the option takes: its bounds, or 'true or false' for a flag."""
    declared = Range.of(agent_options(name)[key])
    if declared is None:
        return ["true or false"]
    bounds = [b for b in (declared.ge, declared.gt, declared.le) if b is not None]
    assert len(bounds) == 2, f"{name}: {key} should be bounded on both sides"
    return [str(int(b)) if float(b).is_integer() else str(b) for b in bounds]


def test_every_option_of_every_agent_declares_its_values() -> None:
    assert set(BUILT_IN) <= set(AGENTS)
    for name, key in OPTIONS:
        declared = Range.of(agent_options(name)[key])
        assert declared is not None or is_flag(name, key), f"{name}: {key} declares no range"
    ranges = {key: Range.of(agent_options("mcts")[key]) for key in agent_options("mcts")}
    assert ranges == {
        "time": Range(gt=0, le=MAX_SECONDS),
        "sims": Range(ge=1, le=MAX_SIMS),
        "c": Range(ge=0, le=MAX_C),
        "seed": Range(ge=0, le=MAX_SEED),
        "reuse": None,
        "capacity": Range(ge=MIN_CAPACITY, le=MAX_CAPACITY),
        "threads": Range(ge=1, le=MAX_THREADS),
        "solve": None,
        "puzzle": None,
        "ponder": None,
        "dfs": None,
        "material": None,
        "verify": None,
        "greedy": None,
        "bias": Range(ge=0, le=MAX_BIAS),
        "displace": None,
        "deepen": None,
        "rave": Range(ge=0, le=MAX_RAVE),
        "factor": None,
        "minimax": Range(ge=0, le=1),
    }
    assert Range.of(agent_options("random")["seed"]) == Range(ge=0, le=MAX_SEED)
    assert Range.of(agent_options("bomberman")["seed"]) == Range(ge=0, le=MAX_SEED)


@pytest.mark.parametrize(("name", "key"), OPTIONS)
@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_a_spec_with_a_hostile_value_is_refused_naming_agent_option_and_range(name: str, key: str, text: str) -> None:
    if is_flag(name, key) and text == "True":
        text = "maybe"  # 'True' is a fine flag
    with pytest.raises(ValueError) as info:
        make_agent(f"{name}:{key}={text}")
    message = str(info.value)
    assert message.startswith(f"{name}: {key} must be ")
    assert all(bound in message for bound in expected_range(name, key)), message
    assert message.endswith(f", got {quoted(text)}")


@pytest.mark.parametrize(("name", "key"), OPTIONS)
def test_direct_construction_refuses_hostile_values_too(name: str, key: str) -> None:
    factory = AGENTS[name]
    extra = HOSTILE_FLAG_VALUES if is_flag(name, key) else HOSTILE_NUMBER_VALUES
    for value in HOSTILE_VALUES + extra:
        with pytest.raises(ValueError) as info:
            factory(**{key: value})
        message = str(info.value)
        assert message.startswith(f"{name}: {key} must be "), message
        assert all(bound in message for bound in expected_range(name, key)), message


@pytest.mark.parametrize(("name", "key"), OPTIONS)
def test_defaults_given_to_make_agent_are_checked_as_well(name: str, key: str) -> None:
    with pytest.raises(ValueError, match=f"^{name}: {key} must be "):
        make_agent(name, **{key: 7 if is_flag(name, key) else float("nan")})


def test_mcts_c_nan_is_refused_before_any_search() -> None:
    for spec in ("mcts:c=nan", "mcts:c=-1", "amazons:c=nan", "wallmaze:c=-0.5", "mcts:c=NaN,sims=10"):
        with pytest.raises(ValueError, match=r": c must be a finite number >= 0 and <= 100"):
            make_agent(spec)
    with pytest.raises(ValueError, match=r"^mcts: c must be a finite number >= 0 and <= 100, or none, got nan$"):
        make_agent("mcts:c=nan")


def test_a_long_value_is_quoted_by_a_short_prefix_only() -> None:
    with pytest.raises(ValueError) as info:
        make_agent("mcts:c=" + "9" * 5000)
    assert len(str(info.value)) < 120
    assert str(info.value).endswith("...")


def test_bounds_themselves_are_accepted() -> None:
    low = make_agent(f"mcts:sims=1,c=0,seed=0,capacity={MIN_CAPACITY},reuse=off")
    high = make_agent(f"mcts:sims={MAX_SIMS},c={MAX_C:g},seed={MAX_SEED},capacity={MAX_CAPACITY}")
    timed = make_agent(f"mcts:time={MAX_SECONDS:g}")
    assert (low.sims, low.c, low.seed, low.capacity, low.reuse) == (1, 0.0, 0, MIN_CAPACITY, False)  # type: ignore[attr-defined]
    assert (high.sims, high.c, high.seed, high.capacity) == (MAX_SIMS, MAX_C, MAX_SEED, MAX_CAPACITY)  # type: ignore[attr-defined]
    assert timed.time == MAX_SECONDS  # type: ignore[attr-defined]
    assert make_agent(f"random:seed={MAX_SEED}").seed == MAX_SEED  # type: ignore[attr-defined]
    assert make_agent("bomberman:seed=0").seed == 0  # type: ignore[attr-defined]
    # Values are normalised: an int for a float option arrives as a float, numpy scalars as Python numbers.
    agent = AGENTS["mcts"](c=1, sims=np.int64(3), seed=np.uint8(4))
    assert (type(agent.c), type(agent.sims), type(agent.seed)) == (float, int, int)  # type: ignore[attr-defined]


# --- extreme but valid options play legal moves ------------------------------------------------------
SEARCHERS = {"mcts", "amazons", "wallmaze"}  # the agents with sims, c and capacity
PLAYS = {
    "amazons": ("amazons_10x10", "amazons_8x8"),
    "bomberman": ("bomberman", "bomberman2p"),
    "wallmaze": ("wallmaze",),
}


@pytest.mark.parametrize("game_name", [*GAME_NAMES, "gdl:wallmaze"])
def test_extreme_valid_options_still_play_legal_moves(game_name: str) -> None:
    if game_name.startswith("gdl:"):
        from ggp.gdl import builtin

        game: ggp.Game = builtin(game_name[4:])
    else:
        game = ggp.load(game_name)
    native = not game_name.startswith("gdl:")
    agents = [n for n in BUILT_IN if n not in PLAYS or (native and game.name in PLAYS[n])]
    assert "mcts" in agents and "random" in agents
    for name in agents:
        for extreme in ("0", f"{MAX_C:g}"):
            if name in SEARCHERS:
                spec = f"{name}:sims=1,c={extreme},capacity={MIN_CAPACITY},seed={MAX_SEED if extreme == '0' else 0}"
            else:
                spec = f"{name}:seed={MAX_SEED if extreme == '0' else 0}"
            agent = make_agent(spec)
            role = game.roles[0]
            agent.start(game, role)
            state = game.initial_state()
            for _ in range(4):  # a few plies, so a reused (full) tree is searched again
                if game.is_terminal(state):
                    break
                move = agent.select_move(state)
                assert move in game.legal_moves(state, role), f"{spec} on {game.name}"
                joint = [move if r == role else game.legal_moves(state, r)[0] for r in game.roles]
                state = game.next_state(state, joint)


# --- the compiled search's own doors ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"c": float("nan")}, "UCTSearch: c must be a finite number >= 0 and <= 100, got nan"),
        ({"c": -1.0}, "UCTSearch: c must be"),
        ({"c": float("inf")}, "UCTSearch: c must be"),
        ({"seed": -1}, "UCTSearch: seed must be an int from 0 to"),
        ({"seed": 2**64}, "UCTSearch: seed must be"),
        ({"seed": 1.5}, "UCTSearch: seed must be"),
        ({"capacity": 0}, "UCTSearch: capacity must be an int from 2 to 2000000, got 0"),
        ({"capacity": 1}, "UCTSearch: capacity must be"),
        ({"capacity": 10**12}, "UCTSearch: capacity must be"),
        ({"capacity": True}, "UCTSearch: capacity must be"),
    ],
)
def test_uct_search_refuses_bad_parameters(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError) as info:
        UCTSearch(ggp.load("wallmaze"), **kwargs)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sims": -1},
        {"sims": MAX_SIMS + 1},
        {"sims": 10**30},
        {"sims": True},
        {"sims": 2.5},
        {"seconds": float("nan")},
        {"seconds": float("inf")},
        {"seconds": -1.0},
        {"c": float("nan"), "sims": 10},
        {"seed": -5, "sims": 10},
        {"capacity": 1, "sims": 10},
    ],
)
def test_search_refuses_bad_budgets_and_parameters(kwargs: dict[str, Any]) -> None:
    game = ggp.load("wallmaze")
    with pytest.raises(ValueError, match=r"^(UCTSearch|search): (sims|seconds|c|seed|capacity) must be"):
        search(game, game.initial_state(), **kwargs)


def test_run_refuses_bad_counts_and_the_tree_stays_usable() -> None:
    game = ggp.load("wallmaze")
    tree = UCTSearch(game, capacity=100, seed=1)
    tree.reset(game.initial_state())
    tree.run(50)
    for bad in (-1, MAX_SIMS + 1, float("nan"), "10", None):
        with pytest.raises(ValueError, match=r"^UCTSearch: sims must be an int from 0 to 100000000"):
            tree.run(bad)  # type: ignore[arg-type]
    tree.run(50)
    assert tree.result().simulations == 100


def test_a_tree_too_big_for_memory_is_refused_before_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    import ggp.agents.uct as uct

    game = ggp.load("amazons_10x10")
    fits = UCTSearch(game, capacity=1000)
    per_node = fits.nbytes / 1000
    assert 500 < per_node < 800  # the bound MAX_CAPACITY is chosen from: ~670 bytes a node on Amazons 10x10
    assert MAX_CAPACITY * per_node < MAX_TREE_BYTES
    monkeypatch.setattr(uct, "MAX_TREE_BYTES", 100 * 2**20)
    with pytest.raises(ValueError, match=r"would take .* GB, more than .*; give a capacity of at most"):
        UCTSearch(game, capacity=1_000_000)


# --- third-party agents keep working --------------------------------------------------------------
class _Loose(Agent):
    """A plug-in agent that declares no ranges: its options are converted by type only."""

    name = "loose"

    def __init__(self, depth: int = 1, c: float = 1.0, label: str | None = None) -> None:
        super().__init__()
        self.depth, self.c, self.label = depth, c, label

    def select_move(self, state: ggp.State, time_limit: float | None = None) -> ggp.Move:
        return self.game.legal_moves(state, self.role)[0]


def test_a_third_party_agent_without_ranges_keeps_type_conversion_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(AGENTS, "loose", _Loose)
    assert agent_options("loose") == {"depth": int, "c": float, "label": str | None}
    agent = make_agent("loose:depth=-5,c=inf,label=x")
    assert isinstance(agent, _Loose)
    assert (agent.depth, agent.c, agent.label) == (-5, float("inf"), "x")
    loose = make_agent("loose", c=float("nan"))  # an undeclared option's default is its factory's business
    assert isinstance(loose, _Loose) and loose.c != loose.c
    with pytest.raises(ValueError, match=r"^loose: depth must be an int, got 'abc'$"):
        make_agent("loose:depth=abc")


# --- the crash itself, in a child process --------------------------------------------------------
CRASH = """
import ggp
from ggp.agents import make_agent
game = ggp.load({game!r})
try:
    agent = make_agent({spec!r}, seed=1)
except ValueError as exc:
    print("refused:", exc)
    raise SystemExit(3)
agent.start(game, game.roles[0])
agent.select_move(game.initial_state())
print("searched")
"""


@pytest.mark.parametrize(
    ("spec", "game"),
    [
        ("mcts:c=nan,sims=200", "wallmaze"),
        ("mcts:c=-1,sims=200", "wallmaze"),
        ("amazons:c=nan,sims=200", "amazons_8x8"),
    ],
)
def test_the_crashing_specs_now_fail_cleanly_in_a_fresh_process(spec: str, game: str) -> None:
    # Before the fix each of these died with SIGSEGV (return code -11) in select_move.
    proc = subprocess.run(
        [sys.executable, "-c", CRASH.format(spec=spec, game=game)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert ": c must be a finite number >= 0 and <= 100" in proc.stdout
