"""Players: the :class:`Agent` interface, the built-in agents and :func:`make_agent`.

Agents are named by *spec strings*, as on the command line: the agent's name,
then optionally ``:`` and comma-separated ``key=value`` options.

>>> from ggp.agents import make_agent
>>> make_agent("random:seed=3")
RandomAgent(seed=3)

The options of an agent are the keyword parameters of its factory (usually
the class), and each value is converted by that parameter's annotation
(``int``, ``float``, ``bool``, ``str``, optionally ``| None``). A new agent
plugs in with one line: ``AGENTS["mcts"] = MCTSAgent``.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, cast

from .amazons import AmazonsAgent
from .base import Agent
from .bomberman import BombermanAgent
from .mcts import MCTSAgent
from .random import RandomAgent
from .wallmaze import WallMazeAgent

#: Something that builds an agent from keyword options: usually the agent class.
AgentFactory = Callable[..., Agent]

#: The agents :func:`make_agent` knows, by spec name (lower case).
AGENTS: dict[str, AgentFactory] = {
    "random": RandomAgent,
    "mcts": MCTSAgent,
    "amazons": AmazonsAgent,
    "bomberman": BombermanAgent,
    "wallmaze": WallMazeAgent,
}

__all__ = [
    "AGENTS",
    "Agent",
    "AgentFactory",
    "MCTSAgent",
    "RandomAgent",
    "WallMazeAgent",
    "agent_options",
    "describe_agents",
    "make_agent",
]


def agent_options(name: str) -> dict[str, Any]:
    """The options agent ``name`` accepts, each with its annotated type (``str`` if unannotated)."""
    factory = AGENTS[name]
    target: Any = cast(Any, factory).__init__ if isinstance(factory, type) else factory
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: treat every option as text
        hints = {}
    options: dict[str, Any] = {}
    for param in inspect.signature(factory).parameters.values():
        if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            options[param.name] = hints.get(param.name, str)
    return options


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
    repeated option, or a value of the wrong type.
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
        given[key] = _convert(name, key, value.strip(), known[key])
    for key, value in defaults.items():
        if key in known and key not in given:
            given[key] = value
    return AGENTS[name](**given)


def _convert(agent: str, key: str, text: str, annotation: Any) -> Any:
    """``text`` as a value of ``annotation``'s type; ValueError naming the option otherwise."""
    origin = typing.get_origin(annotation)
    choices: tuple[Any, ...] = (
        typing.get_args(annotation) if origin in (typing.Union, types.UnionType) else (annotation,)
    )
    if type(None) in choices and text.lower() == "none":
        return None
    for kind in choices:
        if kind is type(None):
            continue
        try:
            return _convert_one(text, kind)
        except (TypeError, ValueError):
            continue
    wanted = " or ".join(getattr(k, "__name__", str(k)) for k in choices)
    raise ValueError(f"agent {agent!r}: option {key}={text!r} is not a valid {wanted}")


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _convert_one(text: str, kind: Any) -> Any:
    if kind is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(text)
    if kind is int:
        return int(text)
    if kind is float:
        return float(text)
    if kind is str or kind is Any:
        return text
    return kind(text)
