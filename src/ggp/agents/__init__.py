"""Players: the :class:`Agent` interface, the built-in agents and :func:`make_agent`.

Agents are named by *spec strings*, as on the command line: the agent's name,
then optionally ``:`` and comma-separated ``key=value`` options.

>>> from ggp.agents import make_agent
>>> make_agent("random:seed=3")
RandomAgent(seed=3)

The options of an agent are the keyword parameters of its factory (usually
the class), and each value is converted by that parameter's annotation
(``int``, ``float``, ``bool``, ``str``, optionally ``| None``). An annotation
``Annotated[float, Range(ge=0)]`` also declares the values the option takes
(:mod:`ggp.agents.options`); :func:`make_agent` refuses any other with a
ValueError naming the agent, the option and its range, and so does the agent
class itself when its ``__init__`` is wrapped by :func:`check_options`, as every
built-in agent's is. A new agent plugs in with one line:
``AGENTS["mcts"] = MCTSAgent``. A game family's own agents (the Amazons
player, say) come from its :class:`~ggp.core.family.Family` record and are
imported the first time they are asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from ..registry import family_agents, resolve
from .base import Agent, Choice, Limit
from .mcts import MCTSAgent
from .options import Range, check_option, check_options, convert_option, option_types
from .uniform import RandomAgent

#: Something that builds an agent from keyword options: usually the agent class.
AgentFactory = Callable[..., Agent]


class AgentRegistry(MutableMapping[str, AgentFactory]):
    """Agents by spec name: those set here, then every game family's own (imported when first asked for).

    It is a mapping like a dict: ``AGENTS["mine"] = MyAgent`` adds one, ``del AGENTS["mine"]`` removes
    one (a family's agent too, until it is set again).
    """

    def __init__(self, own: dict[str, AgentFactory]) -> None:
        self._own = dict(own)
        self._hidden: set[str] = set()

    def _families(self) -> dict[str, str]:
        return {name: ref for name, (_, ref) in family_agents().items() if name not in self._hidden}

    def __getitem__(self, name: str) -> AgentFactory:
        if name in self._own:
            return self._own[name]
        ref = self._families().get(name)
        if ref is None:
            raise KeyError(name)
        return resolve(ref)

    def __setitem__(self, name: str, factory: AgentFactory) -> None:
        self._own[name] = factory
        self._hidden.discard(name)

    def __delitem__(self, name: str) -> None:
        if name in self._own:
            del self._own[name]
        elif name in self._families():
            self._hidden.add(name)
        else:
            raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._own
        yield from (name for name in self._families() if name not in self._own)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self._own or name in self._families()

    def __repr__(self) -> str:
        return f"AgentRegistry({sorted(self)})"


#: The agents :func:`make_agent` knows, by spec name (lower case).
AGENTS: AgentRegistry = AgentRegistry({"random": RandomAgent, "mcts": MCTSAgent})

__all__ = [
    "AGENTS",
    "Agent",
    "AgentFactory",
    "AgentRegistry",
    "Choice",
    "Limit",
    "MCTSAgent",
    "RandomAgent",
    "Range",
    "agent_options",
    "check_options",
    "describe_agents",
    "make_agent",
]


def agent_options(name: str) -> dict[str, Any]:
    """The options agent ``name`` accepts, each with its annotation (``str`` if unannotated).

    A declared range comes as ``Annotated[type, Range(...)]``; :meth:`Range.of`
    reads it back (None when the option declares none):

    >>> opts = agent_options("mcts")
    >>> list(opts)
    ['time', 'sims', 'c', 'seed', 'reuse', 'capacity', 'threads', 'solve', 'puzzle', 'ponder', 'dfs', 'material', 'verify', 'greedy', 'bias', 'displace', 'deepen', 'rave', 'factor', 'minimax']
    >>> str(Range.of(opts["c"]))
    '>= 0 and <= 100'
    """
    return option_types(AGENTS[name])


def describe_agents() -> str:
    """The known agents and their options, as one line: ``random (options: seed)``."""
    parts = []
    for name in sorted(AGENTS):
        opts = agent_options(name)
        parts.append(f"{name} (options: {', '.join(opts)})" if opts else f"{name} (no options)")
    return ", ".join(parts)


def make_agent(spec: str, **defaults: Any) -> Agent:
    """The agent a spec string names: ``random``, ``random:seed=3``.

    ``defaults`` are options used when the spec does not set them and the
    agent accepts them (others are ignored): ``make_agent(spec, seed=7)``
    seeds any agent that takes a seed. Raises ``ValueError``, listing the
    known agents or the agent's options, for an unknown name, an unknown or
    repeated option, or a value that is not of the option's type or outside
    its declared range.
    """
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string like 'random:seed=3', not {type(spec).__name__}")
    name, sep, rest = spec.partition(":")
    name = name.strip().lower()
    if name not in AGENTS:
        shown = f"unknown agent {name!r}" if name else "empty agent spec"
        raise ValueError(f"{shown}; the known agents are: {describe_agents()}")
    known = agent_options(name)
    given: dict[str, Any] = {}
    for item in rest.split(",") if sep and rest.strip() else []:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"agent option {item.strip()!r} in {spec!r} is not of the form key=value")
        if key not in known:
            raise ValueError(f"agent {name!r} has no option {key!r}; its options are: {', '.join(known) or 'none'}")
        if key in given:
            raise ValueError(f"agent option {key!r} is given twice in {spec!r}")
        given[key] = convert_option(name, key, value.strip(), known[key])
    for key, value in defaults.items():
        if key in known and key not in given:
            # Only declared ranges are checked here: an undeclared option's type is its factory's business.
            given[key] = check_option(name, key, value, known[key]) if Range.of(known[key]) else value
    return AGENTS[name](**given)
