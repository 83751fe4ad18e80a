"""The web app in a real browser: headless Chromium driven by Playwright, as a person would use it.

The server runs in this process (uvicorn in a thread, on 127.0.0.1 and a free
port). Every test saves a screenshot under build/screenshots/. Needs Debian's
``chromium`` (/usr/bin/chromium); without it the tests are skipped, except
under CI (``CI`` set), where they fail.

A browser context is one browser (its own cookies, so its own seats). Games
are created through the context's own request API, so that the seats'
cookie lands in that browser, as when a person starts a game from the page.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
# A page waits for the server's work (a computer's move: its think time, more on a loaded machine): the
# assertions wait as long as the pages' actions do, a bound that holds at load 8, not playwright's 5 s.
expect.set_options(timeout=30_000)

from conftest import watch_page  # noqa: E402
from ggp.web.server import BackgroundServer  # noqa: E402

SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with BackgroundServer(tmp_path_factory.mktemp("web") / "web.sqlite3") as running:
        yield running


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    pg = context.new_page()
    errors = watch_page(pg)
    yield pg
    context.close()
    assert not errors, f"errors on the pages visited: {errors}"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def api(server: BackgroundServer, method: str, path: str, body: Any = None) -> Any:
    """A request from outside any browser (it holds no seat)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.load(reply)


def new_game(page: Any, server: BackgroundServer, game: str, players: dict[str, str], **settings: Any) -> str:
    """A new match whose human seats belong to ``page``'s browser (the answer's cookie lands in it)."""
    reply = page.context.request.post(
        server.url + "/api/games", data={"game": game, "players": players, **settings}, timeout=60_000
    )
    assert reply.status == 201, reply.text()
    return str(reply.json()["id"])


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
    card.locator("details.advanced > summary").click()  # free-text options live under "advanced"
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
    expect(page.locator("#result-title")).to_contain_text("White won (100-")
    expect(page.locator("#result-goals")).to_contain_text("white (Human): 100")
    expect(page.locator("#replay-link")).to_be_visible()
    shot(page, "wallmaze_keyboard_result")


def test_an_amazons_move_takes_three_clicks(server: BackgroundServer, page: Any) -> None:
    gid = new_game(page, server, "amazons_8x8", {"white": "human", "black": "random:seed=5"})
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator("#board .hl.from")).to_have_count(4)  # white's four amazons can move
    cell(page, 3, 1).click()  # the amazon on (3,1)
    expect(page.locator("#board .hl.sel")).to_have_count(1)
    expect(page.locator("#board .hl.target")).to_have_count(15)
    shot(page, "amazons_selected")
    cell(page, 3, 5).click()  # up the file to (3,5): not sent yet, the arrow's squares are shown
    expect(page.locator("#board .hl.arrow")).not_to_have_count(0)
    expect(page.locator("#controls")).to_contain_text("Moving c1 to c5")
    assert page.locator("#board").get_attribute("data-step") == "0"
    cell(page, 3, 5).click()  # taken back
    expect(page.locator("#board .hl.arrow")).to_have_count(0)
    expect(page.locator("#message")).to_contain_text("taken back")
    cell(page, 3, 5).click()  # and chosen again
    cell(page, 5, 7).click()  # the arrow, diagonally to (5,7): the move and the arrow are sent
    step_is(page, 4)  # black (random) answered: move and fire
    expect(page.locator("#controls")).to_contain_text("Click one of your amazons")
    state = api(server, "GET", f"/api/games/{gid}")["state"]
    rows = state["board"].split("/")  # y = 8 first
    assert rows[8 - 7][5 - 1] == "x" and rows[8 - 5][3 - 1] == "W" and rows[8 - 1][3 - 1] == "."
    shot(page, "amazons_three_clicks")


def test_bomberman_bomb_counts_down_and_burns(server: BackgroundServer, page: Any) -> None:
    gid = new_game(page, server, "bomberman2p", {"bomberman": "human", "bomberwoman": "random:seed=2"})
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator("#move-bomb")).to_be_enabled()
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
    gid = new_game(page, server, "amazons_8x8", {"white": "human", "black": "human"})
    other = page.context.new_page()
    page.goto(f"{server.url}/games/{gid}")
    other.goto(f"{server.url}/games/{gid}")
    page.bring_to_front()  # a background tab gets few animation frames, and clicks wait for them
    cell(page, 1, 3).click()
    cell(page, 1, 4).click()
    cell(page, 2, 5).click()  # the arrow: move and arrow are sent together
    step_is(other, 2)  # the other tab hears of them
    expect(other.locator("#turn")).to_contain_text("black to move an amazon")
    expect(other.locator("#move-list li")).to_have_count(1)  # one turn: white's move and arrow
    expect(other.locator("#move-list")).to_contain_text("white a3-a4/b5")
    other.bring_to_front()
    cell(other, 1, 6).click()  # and moves on from there: black a6-a5, arrow back to a6
    cell(other, 1, 5).click()
    cell(other, 1, 6).click()
    step_is(page, 4)
    expect(page.locator("#turn")).to_contain_text("white to move an amazon")
    shot(other, "two_tabs")
    other.close()


def test_watch_two_agents_live(server: BackgroundServer, page: Any) -> None:
    gid = new_game(page, server, "wallmaze", {"white": "random:seed=1", "black": "random:seed=2"}, pace=0.05)
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator(".tag")).to_contain_text("watching")
    expect(page.locator("#result")).to_be_visible()  # the page followed the match to its end
    final = api(server, "GET", f"/api/games/{gid}")
    step_is(page, final["step"])
    expect(page.locator("#step")).to_have_text(str(final["step"]))
    shot(page, "watch_wallmaze")


def test_replay_a_finished_game(server: BackgroundServer, page: Any) -> None:
    gid = new_game(page, server, "bomberman", {"bomberman": "random:seed=1", "bomberwoman": "random:seed=2"})
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
    expect(page.locator("#replay-result")).to_have_text(final["outcome"])  # the sentence of the match's end
    page.keyboard.press("Home")
    step_is(page, 0)
    page.keyboard.press("ArrowRight")
    step_is(page, 1)
    expect(page.locator("#replay-joint")).to_contain_text("bomberman")
    page.locator("#slider").fill(str(n // 2))
    step_is(page, n // 2)
    expect(page.locator("#move-list li.current")).to_have_count(1)
    page.locator("#move-list .mv").nth(2).click()  # turn 2's first ply: bomberman's move of step 3
    step_is(page, 3)
    expect(page.locator("#move-list .mv.current")).to_have_count(1)  # the ply of step 3 is marked
    expect(page.locator("#move-list .mv.current")).to_contain_text("bomberman")
    page.locator("#move-list li").nth(2).click()  # turn 3 (steps 5 and 6): to its end
    step_is(page, 6)
    expect(page.locator("#review-graph svg.review-graph")).to_be_visible()  # the engine's review of the game
    shot(page, "replay_bomberman")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the record (JSON)").click()
    record = json.loads(Path(download.value.path()).read_text())
    assert record["format"] == "ggp-match" and record["steps"] == n
    # at the last step the game is over: nothing to continue; from step 6, a new game against the computer
    page.keyboard.press("End")
    expect(page.locator("#continue-button")).to_be_disabled()
    page.locator("#move-list li").nth(2).click()
    step_is(page, 6)
    expect(page.locator("#continue-button")).to_have_text("Continue from step 6 against the computer")
    page.locator("#continue-button").click()
    expect(page.locator("#opened-from")).to_contain_text(f"Continued from game #{gid} after its step 6")
    expect(page.locator("#board")).to_have_attribute("data-step", re.compile(r"^([6-9]|\d\d+)$"))
    assert page.url != f"{server.url}/games/{gid}/replay"


def test_ten_tabs_share_one_event_stream_and_moves_still_work(server: BackgroundServer, page: Any) -> None:
    # a browser opens six connections per host: ten tabs with a stream each would hang from the seventh on
    games = [new_game(page, server, "bomberman", {"bomberman": "human", "bomberwoman": "random"}) for _ in range(10)]
    streams: list[str] = []
    page.context.on("request", lambda r: streams.append(r.url) if "/events" in r.url else None)
    tabs = [page]
    page.goto(f"{server.url}/games/{games[0]}")
    for gid in games[1:]:
        tab = page.context.new_page()
        tab.goto(f"{server.url}/games/{gid}")
        tabs.append(tab)
    last = tabs[-1]
    last.bring_to_front()
    expect(last.locator("#controls")).to_contain_text("Your move as bomberman")
    last.keyboard.press(".")  # bomberman stays; bomberwoman's answer comes over the shared stream
    step_is(last, 2)
    assert all("/api/events?games=" in url for url in streams)  # no stream per tab
    first = tabs[0]
    first.bring_to_front()
    first.keyboard.press(".")
    step_is(first, 2)
    first.close()  # the tab that held the stream: another one takes over
    last.bring_to_front()
    last.keyboard.press(".")
    step_is(last, 4)
    expect(last.locator("#message")).to_be_hidden()
    shot(last, "tenth_tab")
    for tab in tabs[1:-1]:
        tab.close()


def test_a_server_restart_while_a_tab_is_open(tmp_path: Path, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    db = tmp_path / "restart.sqlite3"
    first = BackgroundServer(db).start()
    try:
        gid = new_game(page, first, "wallmaze", {"white": "human", "black": "random:seed=3"})
        page.goto(f"{first.url}/games/{gid}")
        expect(page.locator('button[data-dir="east"]')).to_be_enabled()
    finally:
        first.stop()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#message")).to_contain_text("Cannot reach the server")
    expect(page.locator("body")).to_have_attribute("data-offline", "true")
    expect(page.locator("body")).not_to_have_attribute("data-sending", "true")  # keys are taken again
    shot(page, "server_unreachable")
    with BackgroundServer(db, port=first.port):
        step_is(page, 1)  # the page found the server again and sent the move it kept
        expect(page.locator("#message")).to_be_hidden()
        expect(page.locator("body")).not_to_have_attribute("data-offline", "true")
        page.keyboard.press("ArrowRight")  # and plays on
        step_is(page, 2)
    context.close()
    assert not errors, errors


def test_a_second_browser_watches_and_takes_only_an_open_seat(
    server: BackgroundServer, browser: Any, page: Any
) -> None:
    gid = new_game(page, server, "wallmaze", {"white": "human", "black": "human"}, seats=["white"])
    page.goto(f"{server.url}/games/{gid}")
    expect(page.locator("#controls")).to_contain_text("Your move as white")
    expect(page.locator("#watching")).to_be_hidden()
    expect(page.locator('button[data-seat="black"]')).to_have_count(0)  # the friend's seat is not the host's
    guest = browser.new_context(viewport={"width": 1280, "height": 900})
    guest.set_default_timeout(20_000)
    seen = guest.new_page()
    seen.goto(f"{server.url}/games/{gid}")
    expect(seen.locator("#watching")).to_be_visible()
    expect(seen.locator("#controls .dpad")).to_have_count(0)  # no controls for a seat it does not own
    expect(seen.locator('button[data-seat="white"]')).to_have_count(0)  # white is taken
    refused = guest.request.post(
        f"{server.url}/api/games/{gid}/moves", data={"role": "white", "move": "(move 2 5 3 5)", "step": 0}
    )
    assert refused.status == 403
    seen.locator('button[data-seat="black"]').click()  # black is open: take it
    expect(seen.locator("#controls")).to_contain_text("Your move as black")
    expect(seen.locator("#watching")).to_be_hidden()
    expect(page.locator('[data-open-seat="black"]')).to_be_hidden()  # the first browser hears black is taken
    seen.keyboard.press("ArrowLeft")  # black walks west
    page.bring_to_front()
    page.keyboard.press("ArrowRight")
    step_is(page, 1)
    step_is(seen, 1)
    state = api(server, "GET", f"/api/games/{gid}")["state"]
    assert state["white"] == [3, 5] and state["black"] != [12, 5]
    shot(seen, "second_browser_seat")
    guest.close()


def test_resign_takes_two_clicks_and_ends_the_game(server: BackgroundServer, page: Any) -> None:
    gid = new_game(page, server, "amazons_8x8", {"white": "human", "black": "random"})
    page.goto(f"{server.url}/games/{gid}")
    page.locator("#action-resign").click()
    expect(page.locator("#action-resign")).to_contain_text("really resign")
    page.locator("#action-resign").click()
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#result-title")).to_have_text("White resigned: black won")
    page.locator("#action-delete").click()
    page.locator("#action-delete").click()
    expect(page).to_have_url(re.compile(r"/games$"))
    assert urllib.request.urlopen(f"{server.url}/api/games?limit=500").status == 200
    assert gid not in {g["id"] for g in api(server, "GET", "/api/games?limit=500")["games"]}


def test_the_replay_of_a_game_in_progress_follows_it(server: BackgroundServer, page: Any) -> None:
    gid = new_game(page, server, "wallmaze", {"white": "human", "black": "random:seed=4"})
    page.goto(f"{server.url}/games/{gid}/replay")
    expect(page.locator("#replay-total")).to_have_text("0")
    for step, text in enumerate(["(move 2 5 3 5)", "(move 3 5 4 5)"]):
        reply = page.context.request.post(
            f"{server.url}/api/games/{gid}/moves", data={"role": "white", "move": text, "step": step}
        )
        assert reply.status == 200, reply.text()
        expect(page.locator("#replay-total")).to_have_text(str(step + 1))
        step_is(page, step + 1)  # the viewer was at the end, so it stays there
    expect(page.locator("#move-list li")).to_have_count(2)
