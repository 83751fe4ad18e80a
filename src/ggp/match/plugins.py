"""Agent modules: code that registers more agents in :data:`ggp.agents.AGENTS`.

An agent module is an ordinary Python module that, when imported, adds its
agents to the registry (``AGENTS["mine"] = MyAgent``). ``ggp match`` and
``ggp tournament`` take ``--agent-module MODULE`` (a dotted module name on
``sys.path`` or the path of a ``.py`` file) and import it in every process that
builds agents from spec strings: the command itself and each tournament
worker. A tournament database remembers its agent modules, so resuming it
needs no option.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from ..core.errors import GGPError


class AgentModuleError(GGPError, ImportError):
    """An agent module could not be imported."""


def load_agent_module(name: str) -> ModuleType:
    """Import the agent module ``name``: a ``.py`` file's path or a dotted module name.

    A file is imported once per process under a name derived from its
    absolute path. Raises :class:`AgentModuleError` saying why it failed.
    """
    text = name.strip()
    looks_like_file = text.endswith(".py") or "/" in text or "\\" in text
    if looks_like_file:
        path = Path(text).expanduser().resolve()
        if not path.is_file():
            raise AgentModuleError(f"agent module file {text!r} does not exist")
        key = f"ggp_agent_module_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
        if key in sys.modules:
            return sys.modules[key]
        spec = importlib.util.spec_from_file_location(key, path)
        if spec is None or spec.loader is None:
            raise AgentModuleError(f"cannot import agent module file {text!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[key]
            raise AgentModuleError(f"agent module {text!r} failed to import: {type(exc).__name__}: {exc}") from None
        return module
    try:
        return importlib.import_module(text)
    except Exception as exc:
        raise AgentModuleError(f"agent module {text!r} failed to import: {type(exc).__name__}: {exc}") from None


def load_agent_modules(names: Iterable[str]) -> list[ModuleType]:
    """Import each agent module in ``names`` (see :func:`load_agent_module`)."""
    return [load_agent_module(n) for n in names]


def canonical_module_name(name: str) -> str:
    """How a module is remembered: files by absolute path (valid from any folder), modules by name."""
    text = name.strip()
    if text.endswith(".py") or "/" in text or "\\" in text:
        return str(Path(text).expanduser().resolve())
    return text
