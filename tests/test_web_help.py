"""The web app serves the documentation site at /help when one is built, and says how to build it otherwise."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ggp.web.app import create_app


def test_a_built_site_is_served_at_help(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "tutorials").mkdir(parents=True)
    (site / "index.html").write_text("<h1>ggp manual</h1>")
    (site / "tutorials" / "index.html").write_text("<h1>first agent</h1>")
    monkeypatch.setenv("GGP_WEB_HELP", str(site))
    with TestClient(create_app(":memory:", arena=False), base_url="http://127.0.0.1") as client:
        assert "ggp manual" in client.get("/help/").text
        assert "first agent" in client.get("/help/tutorials/").text
        assert client.get("/help/../pyproject.toml").status_code == 404  # nothing outside the site


def test_without_a_site_help_says_how_to_build_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGP_WEB_HELP", str(tmp_path / "nothing-here"))
    with TestClient(create_app(":memory:", arena=False), base_url="http://127.0.0.1") as client:
        page = client.get("/help")
        assert page.status_code == 200
        assert "make docs" in page.text


def test_every_page_has_an_icon_and_favicon_ico_answers() -> None:
    with TestClient(create_app(":memory:", arena=False), base_url="http://127.0.0.1") as client:
        assert 'rel="icon" href="/static/favicon.svg"' in client.get("/").text
        icon = client.get("/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
        assert client.get("/static/favicon.svg").content == icon.content
