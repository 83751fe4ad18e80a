"""The package's layers: dependencies point one way, ``core <- games, gdl <- agents <- match <- protocol, web, cli``.

Every module of ``ggp`` is read with :mod:`ast` (nothing is imported, so no
import side effect hides or adds an edge). Its imports of ``ggp`` modules are
collected, absolute and relative, at module level and inside functions alike,
and each must point to the same layer or a lower one:

====  ===========================================================================
0     ``ggp.core``: the Game API, errors, KIF, kernels; ``ggp.testing``, the Game API's conformance check
1     ``ggp.games``, ``ggp.gdl``: the games themselves (a family's rules, kernel, notation and view)
1.5   ``ggp`` (the package's ``__init__``) and ``ggp.registry``: the front door,
      ``ggp.load``. They sit above the games because they list them, and below
      everything that plays them. They import the games and ``ggp.gdl`` only
      inside functions, so that ``import ggp`` stays light (checked below).
2     ``ggp.agents``, and each game family's player (``ggp.games.FAMILY.player``), which builds on them
3     ``ggp.match``
4     ``ggp.protocol``, ``ggp.web``, ``ggp.cli``, ``ggp.vector`` (the RL API),
      ``ggp.rl`` (PettingZoo, Gymnasium, OpenSpiel), ``ggp.bench``, ``ggp.__main__``
====  ===========================================================================

Importing ``ggp.x.y`` also runs ``ggp/__init__`` and ``ggp/x/__init__``;
those implicit imports of parent packages are not edges here (every module
would then depend on the front door). The module-level imports must also form
no cycle: a cycle makes what a module sees depend on which module was
imported first.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Layer of each part of the package, by the longest matching module-name prefix.
LAYERS: dict[str, float] = {
    "ggp.core": 0,
    "ggp.testing": 0,
    "ggp.games": 1,
    "ggp.gdl": 1,
    "ggp": 1.5,
    "ggp.registry": 1.5,
    "ggp.agents": 2,
    "ggp.match": 3,
    "ggp.protocol": 4,
    "ggp.web": 4,
    "ggp.cli": 4,
    "ggp.vector": 4,
    "ggp.rl": 4,
    "ggp.bench": 4,
    "ggp.__main__": 4,
}
#: The front door: it may name the games and ggp.gdl only inside functions (loaded on first use).
FRONT_DOOR = ("ggp", "ggp.registry")
LAZY_FOR_FRONT_DOOR = ("ggp.games", "ggp.gdl")

#: Known breaches on their way out, each with its reason. An entry that no longer breaches fails
#: test_transitional_breaches_are_still_there, so the list only shrinks.
TRANSITIONAL: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the ggp module imported
    line: int
    module_level: bool  # runs when the importing module is imported (not inside a function)


def module_names(root: Path) -> dict[str, Path]:
    """Every module under ``root/ggp`` by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted((root / "ggp").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, module_level: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, module_level
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _walk(child, False)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            # Seen by type checkers only: a layering edge, but nothing runs at import time.
            for stmt in child.body:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), False)
            for stmt in child.orelse:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), module_level)
        else:
            yield from _walk(child, module_level)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The ``ggp`` modules ``name`` (at ``path``) imports, with where and whether at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []
    for node, module_level in _walk(tree, True):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base_parts = package.split(".")
                if node.level - 1 > len(base_parts) - 1:
                    raise AssertionError(f"{path}:{node.lineno}: relative import beyond the top-level package")
                base = ".".join(base_parts[: len(base_parts) - (node.level - 1)])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in modules else base)
        for target in dict.fromkeys(targets):  # `from m import a, b` is one import of m
            if target == "ggp" or target.startswith("ggp."):
                found.append(Import(name, target, node.lineno, module_level))
    return found


def layer_of(name: str) -> float | None:
    # a family's player sits with the agents it builds on; the rest of its package with the games
    parts = name.split(".")
    if parts[:2] == ["ggp", "games"] and len(parts) >= 4 and parts[3] == "player":
        return LAYERS["ggp.agents"]
    # "ggp" names the package's __init__ alone: a module of ggp that no entry covers has no layer
    best = max((p for p in LAYERS if name == p or (p != "ggp" and name.startswith(p + "."))), key=len, default=None)
    return None if best is None else LAYERS[best]


def all_imports(root: Path) -> tuple[dict[str, Path], list[Import]]:
    modules = module_names(root)
    edges = [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]
    return modules, edges


def layer_breaches(root: Path) -> list[str]:
    """Every import of a higher layer (and every module of no known layer), as ``file:line: why``."""
    modules, edges = all_imports(root)
    problems = [f"{path}: module {name} is in no layer; add it to LAYERS" for name, path in modules.items()]
    problems = [p for p, name in zip(problems, modules, strict=True) if layer_of(name) is None]
    for imp in edges:
        if (imp.source, imp.target) in TRANSITIONAL:
            continue
        low, high = layer_of(imp.source), layer_of(imp.target)
        where = f"{modules[imp.source]}:{imp.line}"
        if imp.target not in modules:
            problems.append(f"{where}: {imp.source} imports {imp.target}, which does not exist")
        elif low is not None and high is not None and high > low:
            problems.append(f"{where}: {imp.source} (layer {low:g}) imports {imp.target} (layer {high:g})")
        elif imp.source in FRONT_DOOR and imp.module_level and imp.target.startswith(LAZY_FOR_FRONT_DOOR):
            problems.append(f"{where}: {imp.source} imports {imp.target} at module level; import it where it is used")
    return problems


def import_cycles(root: Path, lazy: bool = False) -> list[list[str]]:
    """The cycles of the module-level import graph: each strongly connected component of more than one module
    (or a module importing itself), as one cycle through it.

    ``lazy``: the imports inside functions count too, and so does the package ``__init__`` that importing a
    module of a subpackage runs (``ggp.match.tournament.runner`` runs ``ggp/match/tournament/__init__``;
    the front door ``ggp`` and the importer's own packages aside): no cycle at all, however late it closes."""
    modules, edges = all_imports(root)
    graph: dict[str, set[str]] = {}
    for imp in edges:
        if (imp.module_level or lazy) and imp.source != imp.target:
            graph.setdefault(imp.source, set()).add(imp.target)
            if lazy:
                parts = imp.target.split(".")
                for i in range(2, len(parts)):
                    package = ".".join(parts[:i])
                    if package in modules and not (imp.source + ".").startswith(package + "."):
                        graph[imp.source].add(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the package is small enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_through(sorted(c), graph) for c in components]


def _cycle_through(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle inside a strongly connected component, from its first module back to it."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:  # breadth first: the shortest way back to start
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, set()) & members):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {component}")


# --- the package ---------------------------------------------------------------------------------------------
def test_every_import_points_to_the_same_layer_or_a_lower_one() -> None:
    problems = layer_breaches(SRC)
    assert not problems, "imports against the layers:\n" + "\n".join(problems)


def test_module_level_imports_have_no_cycle() -> None:
    cycles = import_cycles(SRC)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_import_cycle_at_all_counting_imports_in_functions_and_package_inits() -> None:
    cycles = import_cycles(SRC, lazy=True)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_transitional_breaches_are_still_there() -> None:
    """Each tolerated breach still exists; once fixed, its entry goes (so the list cannot hide new ones)."""
    _, edges = all_imports(SRC)
    present = {(imp.source, imp.target) for imp in edges}
    gone = [edge for edge in TRANSITIONAL if edge not in present]
    assert not gone, f"fixed, so remove from TRANSITIONAL: {gone}"


def test_the_games_package_and_the_list_of_names_are_two_things() -> None:
    """``ggp.games`` is the package of game modules; the list of names is ``ggp.game_names()``, whatever was
    imported first."""
    import types

    import ggp
    import ggp.games.wallmaze

    assert isinstance(ggp.games, types.ModuleType) and ggp.games.__name__ == "ggp.games"
    assert ggp.game_names() == ["amazons_10x10", "amazons_8x8", "bomberman", "bomberman2p", "wallmaze"]
    assert not callable(ggp.games)


def test_import_ggp_imports_no_game() -> None:
    """The front door lists the games without importing them: ``import ggp`` stays light."""
    code = "import sys, ggp; print(sorted(m for m in sys.modules if m.startswith(('ggp.games', 'ggp.gdl', 'numba'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


# --- the checker itself, on small made-up packages ---------------------------------------------------------------
def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "ggp" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_checker_finds_an_upward_import_also_inside_a_function_and_relative(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            "core/game.py": "def f():\n    from ..agents import base\n",
            "games/__init__.py": "from ggp.match import referee\n",
            "agents/__init__.py": "",
            "agents/base.py": "from ..core import game\n",
            "match/__init__.py": "",
            "match/referee.py": "import ggp.agents.base\n",
        },
    )
    problems = layer_breaches(root)
    assert len(problems) == 2, problems
    assert "ggp.core.game (layer 0) imports ggp.agents.base (layer 2)" in problems[0]
    assert problems[0].endswith("core/game.py:2: ggp.core.game (layer 0) imports ggp.agents.base (layer 2)")
    assert "ggp.games (layer 1) imports ggp.match.referee (layer 3)" in problems[1]


def test_checker_requires_the_front_door_to_load_games_lazily(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "from .registry import load\n",
            "registry.py": "from .games import chess\n\ndef load():\n    from .gdl import sheet\n",
            "games/__init__.py": "",
            "games/chess.py": "",
            "gdl/__init__.py": "",
            "gdl/sheet.py": "",
        },
    )
    problems = layer_breaches(root)
    assert len(problems) == 1 and "ggp.registry imports ggp.games.chess at module level" in problems[0], problems


def test_checker_finds_a_module_level_cycle_but_not_a_lazy_one(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "match/__init__.py": "from .referee import Referee\n",
            "match/referee.py": "from .record import Record\nclass Referee: ...\n",
            "match/record.py": "from ggp.match import Referee\nclass Record: ...\n",
            "match/series.py": "from .stats import x\n",
            "match/stats.py": "def f():\n    from .series import y\n",
        },
    )
    assert import_cycles(root) == [["ggp.match", "ggp.match.referee", "ggp.match.record", "ggp.match"]]
    lazy = import_cycles(root, lazy=True)
    assert ["ggp.match.series", "ggp.match.stats", "ggp.match.series"] in lazy and len(lazy) == 2, lazy


def test_checker_counts_the_package_init_a_lazy_import_runs(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "match/__init__.py": "",
            "match/selfplay.py": "def run():\n    from .tournament.pool import Pool\n",
            "match/tournament/__init__.py": "from .pool import Pool\n",
            "match/tournament/pool.py": "def play():\n    from ..selfplay import run\n",
        },
    )
    assert import_cycles(root) == []
    (cycle,) = import_cycles(root, lazy=True)
    assert cycle[0] == cycle[-1] and {"ggp.match.selfplay", "ggp.match.tournament.pool"} <= set(cycle), cycle


def test_checker_names_a_module_of_no_layer(tmp_path: Path) -> None:
    root = _package(tmp_path, {"__init__.py": "", "stray.py": "", "core/__init__.py": ""})
    problems = layer_breaches(root)
    assert len(problems) == 1 and "module ggp.stray is in no layer" in problems[0], problems


@pytest.mark.parametrize(
    ("name", "layer"),
    [
        ("ggp.core.kif", 0),
        ("ggp.games.amazons.rules", 1),
        ("ggp.games.amazons.player", 2),
        ("ggp.registry", 1.5),
        ("ggp.cli.play", 4),
        ("ggp", 1.5),
    ],
)
def test_layer_of_uses_the_longest_prefix(name: str, layer: float) -> None:
    assert layer_of(name) == layer
    assert layer_of("ggp.stray") is None
