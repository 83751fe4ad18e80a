"""The documentation's tutorials run as written: each script under docs/tutorials/code is imported and its
``main`` run, and what it returns is checked (the pages include these files, so the site shows tested code)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

CODE = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "code"


def tutorial(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"tutorial_{name}", CODE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_tutorial_script_is_tested_here() -> None:
    tested = {"first_agent", "host_a_match", "tournament", "pettingzoo_loop", "ray_selfplay", "browser_api"}
    assert {p.stem for p in CODE.glob("*.py")} == tested


def test_first_agent_beats_random_at_tic_tac_toe() -> None:
    module = tutorial("first_agent")
    try:
        mean = module.main(games=20)
    finally:
        from ggp.agents import AGENTS

        AGENTS.pop("win-in-one", None)
    assert mean > 50  # a player that never misses a win in one scores above an even share against random


def test_host_a_match_over_http() -> None:
    record = tutorial("host_a_match").main()
    assert record["game"] == "wallmaze"
    assert record["agents"]["white"].startswith("http://127.0.0.1:")
    assert record["steps"] >= 1 and len(record["goals"]) == 2


def test_tournament_reports_ratings() -> None:
    report = tutorial("tournament").main()
    assert "4 of 4 matches done" in report
    assert "wallmaze:time=0.05" in report and "random" in report


def test_pettingzoo_and_gymnasium_loops() -> None:
    module = tutorial("pettingzoo_loop")
    returns = module.play_aec("amazons_8x8")
    assert set(returns) == {"white", "black"}
    assert sorted(returns.values()) == [-1.0, 1.0]  # Amazons has no draw: one wins, one loses
    assert -1.0 <= module.play_gym() <= 1.0


@pytest.mark.slow
def test_selfplay_on_ray() -> None:
    assert tutorial("ray_selfplay").main() > 0


def test_browser_api_plays_an_uploaded_sheet_to_the_end() -> None:
    view = tutorial("browser_api").main()
    assert view["status"] != "playing"
    assert sorted(view["goals"].values()) in ([0, 100], [50, 50])


DOCS = CODE.parents[1]
ROOT = DOCS.parent


def test_every_snippet_a_page_includes_exists() -> None:
    """The pages include tested files by snippet markers (``--8<-- "path[:section]"``); each must name a file
    (under docs/ or the repository) and section that exist, or the site would show the marker, not the code."""
    import re

    markers = []
    for page in DOCS.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert "--8 <" not in text, f"{page}: a snippet marker was mangled"
        markers += re.findall(r'^--8<-- "([^"]+)"$', text, flags=re.M)
    assert len(markers) >= 10
    for marker in markers:
        path, _, section = marker.partition(":")
        found = [p for p in (DOCS / path, ROOT / path) if p.is_file()]
        assert found, f"{marker}: no such file"
        if section:
            assert f"--8<-- [start:{section}]" in found[0].read_text(encoding="utf-8"), f"{marker}: no such section"


PAGES_WITH_CODE = ["README.md", "docs/index.md", "docs/getting-started.md", "docs/api.md", "docs/gdl.md"]
PAGES_WITH_CODE += ["docs/concepts/kernels.md"]


@pytest.mark.parametrize("page", PAGES_WITH_CODE)
def test_the_python_blocks_of_a_page_run(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page's ```python blocks run in order, as a reader would paste them, from the repository's root
    (where ../shared/corpus is the corpus the examples name)."""
    import re

    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), flags=re.S)
    assert blocks, f"{page} shows no Python"
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)
