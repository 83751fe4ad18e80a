"""The web app in a real browser: headless Chromium driven by Playwright, as a person would use it.

The server runs in this process (uvicorn in a thread, on 127.0.0.1 and a free
port). Every test saves a screenshot under build/screenshots/. Needs Debian's
``chromium`` (/usr/bin/chromium); without it the tests are skipped, except
under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

from ggp.web.server import BackgroundServer  # noqa: E402

CHROMIUM = os.environ.get("GGP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with BackgroundServer(tmp_path_factory.mktemp("web") / "web.sqlite3") as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing: apt-get install -y chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def api(server: BackgroundServer, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.load(reply)


def new_game(server: BackgroundServer, game: str, players: dict[str, str], **settings: Any) -> str:
    return str(api(server, "POST", "/api/games", {"game": game, "players": players, **settings})["id"])


def cell(page: Any, x: int, y: int) -> Any:
    return page.locator(f'#board [data-cell="{x} {y}"]')


def step_is(page: Any, n: int) -> None:
    """Wait for step ``n`` on the board and for the page to take moves again (no move in flight)."""
    expect(page.locator("#board")).to_have_attribute("data-step", str(n))
    expect(page.locator("body")).not_to_have_attribute("data-sending", "true")


# --- the tests ---------------------------------------------------------------------------------------
def test_a_person_plays_wallmaze_by_keyboard_to_the_result(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/")
    card = page.locator("#game-wallmaze")
    card.locator("select[name=player_white]").select_option("human")
    card.locator("select[name=player_black]").select_option("random")
    card.locator("input[name=options_black]").fill("seed=1")
    card.get_by_role("button", name="New wallmaze game").click()
    expect(page).to_have_url(re.compile(r"/games/[0-9a-f]+$"))
    expect(page.locator("#controls")).to_contain_text("white")
    expect(page.locator("#board .hl.target")).to_have_count(1)  # (3,5), east of white
    board = page.locator("#board")
    our_turn_or_over = page.locator("#controls .dpad, #result:not([hidden])").first
    for _ in range(40):
        expect(our_turn_or_over).to_be_visible()
        if page.locator("#result").is_visible():
            break
        step = board.get_attribute("data-step")
        key = "ArrowRight" if page.locator('button[data-dir="east"]').is_enabled() else "."
        page.keyboard.press(key)
        expect(page.locator(f'#board:not([data-step="{step}"]), #result:not([hidden])').first).to_be_visible()
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#result-title")).to_contain_text("white wins")
    expect(page.locator("#result-goals")).to_contain_text("white (human): 100")
    expect(page.locator("#replay-link")).to_be_visible()
    shot(page, "wallmaze_keyboard_result")


def test_an_amazons_move_takes_three_clicks(server: BackgroundServer, page: Any) -> None:
    gid = new_game(server, "amazons_8x8", {"white": "human", "black": "random:seed=5"})
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator("#board .hl.from")).to_have_count(4)  # white's four amazons can move
    cell(page, 3, 1).click()  # the amazon on (3,1)
    expect(page.locator("#board .hl.sel")).to_have_count(1)
    expect(page.locator("#board .hl.target")).to_have_count(15)
    shot(page, "amazons_selected")
    cell(page, 3, 5).click()  # up the file to (3,5)
    step_is(page, 1)
    expect(page.locator("#turn")).to_contain_text("fire an arrow from (3, 5)")
    cell(page, 5, 7).click()  # the arrow, diagonally to (5,7)
    step_is(page, 4)  # black (random) answered: move and fire
    expect(page.locator("#controls")).to_contain_text("Click one of your amazons")
    state = api(server, "GET", f"/api/games/{gid}")["state"]
    rows = state["board"].split("/")  # y = 8 first
    assert rows[8 - 7][5 - 1] == "x" and rows[8 - 5][3 - 1] == "W" and rows[8 - 1][3 - 1] == "."
    shot(page, "amazons_three_clicks")


def test_bomberman_bomb_counts_down_and_burns(server: BackgroundServer, page: Any) -> None:
    gid = new_game(server, "bomberman2p", {"bomberman": "human", "bomberwoman": "random:seed=2"})
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator("#drop-bomb")).to_be_enabled()
    page.keyboard.press(" ")  # drop a bomb on (1,1)
    step_is(page, 1)
    timers = page.locator("#board text.bomb-timer")
    expect(timers.filter(has_text="3")).not_to_have_count(0)
    page.keyboard.press("ArrowUp")
    step_is(page, 2)
    expect(timers.filter(has_text="2")).not_to_have_count(0)
    page.keyboard.press("ArrowUp")
    step_is(page, 3)
    expect(timers.filter(has_text="1")).not_to_have_count(0)
    shot(page, "bomberman_countdown")
    page.locator('button[data-dir="east"]').click()  # the on-screen buttons work too
    step_is(page, 4)
    expect(timers.filter(has_text="0")).not_to_have_count(0)
    page.keyboard.press(".")
    step_is(page, 5)
    expect(cell(page, 1, 1)).to_have_attribute("fill", "#ff8a3d")  # the fire, in the state it burns
    expect(cell(page, 5, 1)).to_have_attribute("fill", "#ff8a3d")  # bomberman2p: the whole row
    state = api(server, "GET", f"/api/games/{gid}")["state"]
    assert state["bomberman"] == [2, 3] and [1, 1] in state["fire"]
    shot(page, "bomberman_fire")


def test_two_tabs_on_one_game_stay_in_step(server: BackgroundServer, browser: Any, page: Any) -> None:
    gid = new_game(server, "amazons_8x8", {"white": "human", "black": "human"})
    other = page.context.new_page()
    page.goto(f"{server.url}/games/{gid}")
    other.goto(f"{server.url}/games/{gid}")
    page.bring_to_front()  # a background tab gets few animation frames, and clicks wait for them
    cell(page, 1, 3).click()
    cell(page, 1, 4).click()
    step_is(other, 1)  # the other tab hears of the move
    expect(other.locator("#turn")).to_contain_text("white to fire an arrow from (1, 4)")
    other.bring_to_front()
    cell(other, 2, 5).click()  # and moves on from there
    step_is(page, 2)
    expect(page.locator("#turn")).to_contain_text("black to move an amazon")
    shot(other, "two_tabs")
    other.close()


def test_watch_two_agents_live(server: BackgroundServer, page: Any) -> None:
    gid = new_game(server, "wallmaze", {"white": "random:seed=1", "black": "random:seed=2"}, pace=0.05)
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator(".tag")).to_contain_text("watching")
    expect(page.locator("#result")).to_be_visible()  # the page followed the match to its end
    final = api(server, "GET", f"/api/games/{gid}")
    step_is(page, final["step"])
    expect(page.locator("#step")).to_have_text(str(final["step"]))
    shot(page, "watch_wallmaze")


def test_replay_a_finished_game(server: BackgroundServer, page: Any) -> None:
    gid = new_game(server, "bomberman", {"bomberman": "random:seed=1", "bomberwoman": "random:seed=2"})
    final = api(server, "GET", f"/api/games/{gid}?wait=30")
    assert final["terminal"]
    n = final["step"]
    page.goto(f"{server.url}/games")
    page.locator(f'a[href="/games/{gid}/replay"]').click()
    expect(page.locator("#replay-total")).to_have_text(str(n))
    step_is(page, 0)
    expect(page.locator("#replay-joint")).to_have_text("initial state")
    page.keyboard.press("End")
    step_is(page, n)
    expect(page.locator("#replay-result")).to_contain_text("game over")
    page.keyboard.press("Home")
    step_is(page, 0)
    page.keyboard.press("ArrowRight")
    step_is(page, 1)
    expect(page.locator("#replay-joint")).to_contain_text("bomberman")
    page.locator("#slider").fill(str(n // 2))
    step_is(page, n // 2)
    expect(page.locator("#move-list li.current")).to_have_count(1)
    page.locator("#move-list li").nth(2).click()
    step_is(page, 3)
    shot(page, "replay_bomberman")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the record (JSON)").click()
    record = json.loads(Path(download.value.path()).read_text())
    assert record["format"] == "ggp-match" and record["steps"] == n
