"""The game site in a real browser (headless Chromium), as a new user meets it: one-click games against the
computer at each level, resign and rematch, a corpus rule sheet uploaded and played on the generic grid, the
arena with two registered ``ggp serve`` players, a phone-sized screen, and contrast.

Set up as tests/test_web_browser.py (Debian's chromium; skipped without it, except under CI). Agents think
at most 0.1 s a move here, whatever the level says, so that whole games fit in a test.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until_available, watch_page

pytest.importorskip("fastapi")
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
# A page waits for the server's work (a computer's move: its think time, more on a loaded machine): the
# assertions wait as long as the pages' actions do, a bound that holds at load 8, not playwright's 5 s.
expect.set_options(timeout=30_000)

from ggp.web.limits import Limits  # noqa: E402
from ggp.web.server import BackgroundServer  # noqa: E402

SHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"
#: Milliseconds a new game may take to open: its agent starts, which on a cold cache compiles code (minutes at
#: load 8 for a rule sheet's first game: its network and its search).
CREATE_MS = 240_000
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "kif"
LIMITS = Limits(
    max_agent_time=0.1,
    arena_allow=("127.0.0.0/8",),
    arena_games=("wallmaze",),
    arena_agents=(),
    arena_play_clock=1.0,
    arena_interval=1.0,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    sheets = CORPUS if CORPUS.is_dir() else None
    with BackgroundServer(tmp_path_factory.mktemp("web") / "web.sqlite3", limits=LIMITS, sheets=sheets) as running:
        yield running


def new_page(browser: Any, width: int = 1280, height: int = 900) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(30_000)
    page = context.new_page()
    return context, page, watch_page(page)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context, pg, errors = new_page(browser)
    yield pg
    context.close()
    assert not errors, f"errors on the pages visited: {errors}"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def view_of(page: Any, server: BackgroundServer) -> dict[str, Any]:
    """The game on ``page`` as its browser's seats see it (the request carries the page's cookie)."""
    gid = page.url.rstrip("/").rsplit("/", 1)[1]
    return dict(page.context.request.get(f"{server.url}/api/games/{gid}").json())


# --- playing the computer ---------------------------------------------------------------------------------
GAMES = ["wallmaze", "bomberman", "bomberman2p", "amazons_8x8", "amazons_10x10"]
#: Catalog sheets played as a person would, beside the built-in games: a line game, a race, a chess-like one.
SHEETS = ["sheet:connectFour", "sheet:breakthroughSmall", "sheet:speedChess"]


def last_marks(page: Any, view: dict[str, Any]) -> int:
    """How many cells the board marks as the last step's (the mark drawn from the view: the play page's own
    overlay on a family's board, the picture's own squares on a rule sheet's grid)."""
    if view["family"] == "grid":
        return int(page.locator("#board svg rect.last").count())
    return int(page.locator("#board svg .hl.last").count())


@pytest.mark.parametrize("game", GAMES + (SHEETS if CORPUS.is_dir() else []))
def test_a_person_plays_the_computer_to_the_end_as_the_second_player(
    server: BackgroundServer, page: Any, game: str
) -> None:
    play_as_a_person(server, page, game)


@pytest.mark.parametrize("game", ["amazons_8x8", *(["sheet:connectFour"] if CORPUS.is_dir() else [])])
def test_a_person_plays_a_whole_game_on_a_phone(server: BackgroundServer, browser: Any, game: str) -> None:
    context, page, errors = new_page(browser, 390, 844)
    try:
        play_as_a_person(server, page, game)
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390  # the replay fits the phone too
    finally:
        context.close()
    assert not errors, errors


def play_as_a_person(server: BackgroundServer, page: Any, game: str) -> None:
    """A whole game as a person plays it, seated second: the board turned (a board game of two), the computer's
    every move marked on the board, a move taken back, the numbered move list, the result in words, the review."""
    roles = page.context.request.get(f"{server.url}/api/sheets/{game}").json()["roles"] if ":" in game else None
    roles = roles or view_of_game(page, server, game)
    # a sheet's first game grounds it and compiles its network and the agent's search: minutes on a loaded
    # machine with a cold cache, as uploading one (below) may take
    made = page.context.request.post(
        f"{server.url}/api/play",
        data={"game": game, "mode": "computer", "level": "easy", "side": roles[1]},
        timeout=CREATE_MS,
    )
    assert made.status == 201, made.text()
    gid = made.json()["id"]
    page.goto(f"{server.url}/games/{gid}")
    view = view_of(page, server)
    me = roles[1]
    assert view["mine"] == [me] and view["players"][roles[0]] != "human"
    board_game = view["controls"] in ("move-and-shoot", "grid") and len(roles) == 2
    expect(page.locator("#board")).to_have_class(re.compile(r"\bflipped\b" if board_game else r"^(?!.*flipped)"))
    took_back, moved = False, False
    page.locator("#legal-list").evaluate("d => { d.open = true; }")  # the legal moves, in the game's notation
    for _ in range(400):
        expect(page.locator("#result:not([hidden]), #legal-moves button.move").first).to_be_visible()
        view = view_of(page, server)
        if view["terminal"]:
            break
        if view["step"] > 0:  # the computer has moved since my last move (or first): its move is marked
            last = view["last_joint"] or {}
            computer_moved = any(last.get(r) not in (None, "noop") for r in roles if r != me)
            if computer_moved and (view["controls"] != "directions" or view["last_cells"]):
                expect(page.locator("#board svg .last").first).to_be_attached()
                assert last_marks(page, view) >= 1, view["last_joint"]
                assert page.locator("#board svg .arrived").count() >= 1  # the piece that came grows into place
        if moved and not took_back and me in view["awaiting"]:
            before = len(view["turns"])
            page.locator("#action-takeback").click()
            expect(page.locator("#board")).not_to_have_attribute("data-step", str(view["step"]))
            back = view_of(page, server)
            assert back["step"] < view["step"] and len(back["turns"]) <= before and me in back["awaiting"]
            took_back = True
            continue
        step = view["step"]
        button = page.locator("#legal-moves button.move").first
        assert ":" in game or not button.inner_text().startswith("("), button.inner_text()  # east, c1-c5, bomb
        button.click()
        moved = True
        expect(page.locator(f'#board:not([data-step="{step}"]), #result:not([hidden])').first).to_be_visible()
    final = view_of(page, server)
    assert final["terminal"], "no result after 400 moves"
    assert took_back or final["step"] <= 2  # (a game over in a step or two leaves nothing to take back)
    expect(page.locator("#result-title")).to_have_text(final["outcome"])  # White won (100-0), Draw (50-50)
    mine, other = final["goals"][me], final["goals"][roles[0]]
    expected = "You won!" if mine > other else "You lost." if mine < other else "A draw."
    expect(page.locator("#result-side")).to_have_text(expected)
    expect(page.locator("#move-list li")).to_have_count(len(final["turns"]))  # numbered turns
    steps = sorted({s for t in final["turns"] for p in t["plies"] for s in p["steps"]})
    assert steps == list(range(1, final["step"] + 1))  # every step in a turn, in the game's notation
    texts = [p["text"] for t in final["turns"] for p in t["plies"]]
    assert not any(t.startswith("(") and any(ch.isdigit() for ch in t) for t in texts if ":" not in game), texts
    shot(page, f"played_{game.replace(':', '_')}")
    page.locator("#replay-link").click()
    expect(page.locator("#review-graph svg.review-graph")).to_be_visible()  # the engine's review of the game


def view_of_game(page: Any, server: BackgroundServer, game: str) -> list[str]:
    """A built-in game's roles, from the catalog."""
    catalog = page.context.request.get(f"{server.url}/api/catalog").json()
    return next(list(g["roles"]) for g in catalog["games"] if g["name"] == game)


@pytest.mark.parametrize("game", GAMES)
def test_each_level_of_the_computer_answers(server: BackgroundServer, page: Any, game: str) -> None:
    for level in ["easy", "medium", "hard"]:
        page.goto(server.url + "/")
        card = page.locator(f"#game-{game}")
        card.locator(f'input[name=level][value="{level}"]').check()
        card.get_by_role("button", name="Play the computer").click(timeout=CREATE_MS)  # (its agent starts)
        expect(page).to_have_url(re.compile(r"/games/[0-9a-f]+$"), timeout=CREATE_MS)
        view = view_of(page, server)
        assert view["players"][view["roles"][1]] != "human" and view["mine"] == [view["roles"][0]]
        step = view["step"]
        page.locator("#legal-list").evaluate("d => { d.open = true; }")
        page.locator("#legal-moves button.move").first.click()
        # my move, then the computer's answer at this level: the board comes back to me (or the game ends)
        expect(page.locator(f'#board:not([data-step="{step}"]), #result:not([hidden])').first).to_be_visible()
        expect(page.locator("#result:not([hidden]), #legal-moves button.move").first).to_be_visible()
        assert view_of(page, server)["step"] > step


def test_resign_and_rematch_with_the_sides_swapped(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/")
    card = page.locator("#game-amazons_8x8")
    card.get_by_role("button", name="Play the computer").click()
    expect(page.locator("#controls")).to_contain_text("Your move as white")
    expect(page.locator("#board")).not_to_have_class(re.compile(r"\bflipped\b"))  # white's side: as drawn
    first = page.url
    page.locator("#action-resign").click()
    page.locator("#action-resign").click()
    expect(page.locator("#result-side")).to_have_text("You resigned.")
    expect(page.locator("#result-title")).to_have_text("White resigned: black won")
    shot(page, "resigned")
    page.locator("#action-rematch").click()
    expect(page).not_to_have_url(first)
    expect(page.locator("#seats")).to_contain_text("you play black")
    expect(page.locator("#board")).to_have_class(re.compile(r"\bflipped\b"))  # seen from black's side
    expect(page.locator(".player.role-0")).to_contain_text("white: Computer (medium)")  # the computer took white
    expect(page.locator("#controls")).to_contain_text("Your move as black")  # white moved and shot first
    expect(page.locator("#move-list li")).to_have_count(1)  # white's first turn: its move and arrow
    expect(page.locator("#move-list li").first).to_contain_text(re.compile(r"white [a-h]\d-[a-h]\d/[a-h]\d"))
    expect(page.locator("#action-abort")).to_have_count(0)  # a move was made: only resign is offered


@pytest.mark.timing
def test_take_back_a_move_against_the_computer(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/")
    card = page.locator("#game-amazons_8x8")
    card.locator('input[name=level][value="easy"]').check()
    card.get_by_role("button", name="Play the computer").click()
    expect(page.locator("#controls")).to_contain_text("Your move as white")
    start = page.locator("#board").inner_html()
    for x, y in [(1, 3), (1, 4), (2, 5)]:  # a3-a4, arrow b5
        page.locator(f'#board [data-cell="{x} {y}"]').click()
    # the computer answered: its move and arrow are steps 3 and 4 (the controls' text alone may still be the
    # one from before the click on a busy machine, and a take-back sent while the computer moves is refused)
    expect(page.locator("#board")).to_have_attribute("data-step", "4")
    expect(page.locator("#controls")).to_contain_text("Your move as white")
    expect(page.locator("#move-list li")).to_have_count(1)
    page.locator("#action-takeback").click()
    expect(page.locator("#board")).to_have_attribute("data-step", "0")  # both halves of the turn taken back
    expect(page.locator("#move-list li")).to_have_count(0)
    assert page.locator("#board").inner_html().count("<circle") == start.count("<circle")
    expect(page.locator("#action-takeback")).to_have_count(0)  # nothing more to take back


def test_a_person_with_a_clock_sees_it_count_down(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/")
    card = page.locator("#game-wallmaze")
    card.locator("details.advanced > summary").click()
    card.locator("select[name=player_white]").select_option("human")
    card.locator("select[name=player_black]").select_option("random")
    card.get_by_label("agent time per move (s)").fill("0.1")  # this server's most (LIMITS)
    card.get_by_label("people's time per move (s, 0 = no clock)").fill("3")
    card.get_by_role("button", name="New wallmaze game").click()
    expect(page.locator("#controls")).to_contain_text("Your move as white")
    expect(page.locator("#clock")).to_be_visible()
    expect(page.locator("#clock-left")).to_have_text(re.compile(r"^0:0[0-3]$"))
    shot(page, "clock")
    # nobody moves: when the time is up a random move is played for white, and the next step's clock runs
    expect(page.locator("#notes")).to_contain_text("Step 1, white: time out: a random move was played")
    expect(page.locator("#board")).not_to_have_attribute("data-step", "0")
    expect(page.locator("#clock")).to_be_visible()


def test_amazons_by_keyboard(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/")
    page.locator("#game-amazons_8x8").get_by_role("button", name="Play a friend (by link)").click()
    expect(page.locator("#invite")).to_be_visible()
    expect(page.locator("#invite-link")).to_have_value(page.url)
    page.locator("#board").focus()
    page.keyboard.press("ArrowUp")  # the cursor starts on a1; up to a2, a3 (white's amazon)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    expect(page.locator("#controls")).to_contain_text("Amazon at a3 picked")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")  # a4: the destination, not sent yet
    expect(page.locator("#controls")).to_contain_text("Moving a3 to a4")
    page.keyboard.press("Escape")  # taken back
    expect(page.locator("#controls")).to_contain_text("Amazon at a3 picked")
    page.keyboard.press("Enter")  # a4 again
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # the arrow to b4
    expect(page.locator("#board")).to_have_attribute("data-step", "2")
    expect(page.locator("#move-list")).to_contain_text("white a3-a4/b4")
    expect(page.locator("#announce")).to_contain_text("arrow b4")
    expect(page.locator("#last")).to_contain_text("white arrow b4")  # the last step in the board's words
    expect(page.locator("#sound")).not_to_be_checked()  # move sounds are off until turned on
    page.locator("#sound").check()
    page.reload()
    expect(page.locator("#sound")).to_be_checked()  # and the choice is kept


# --- any game -------------------------------------------------------------------------------------------
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the GDL corpus (../shared/corpus) is not beside the repo")
def test_an_uploaded_corpus_sheet_is_played_to_the_end_on_the_grid(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/sheets")
    page.locator("#sheet-name").fill("Tic-tac-toe from the corpus")
    page.locator("#sheet-rules").fill((CORPUS / "tictactoe2.kif").read_text())
    # the reasoner grounds and compiles the sheet: on a loaded machine that takes a while
    page.get_by_role("button", name="Check and add this game").click(timeout=CREATE_MS)
    expect(page.locator("h1")).to_have_text("Tic-tac-toe from the corpus")
    expect(page.locator(".card-board svg [data-gcell]")).to_have_count(9)
    page.get_by_role("button", name="Play the computer").click()
    expect(page.locator("#board svg [data-gcell]")).to_have_count(9)
    for _ in range(9):
        if page.locator("#result").is_visible():
            break
        view = view_of(page, server)
        if not view["legal"].get("xPlayer"):
            expect(
                page.locator(f'#board:not([data-step="{view["step"]}"]), #result:not([hidden])').first
            ).to_be_visible()
            continue
        expect(page.locator("#board .hl.target")).to_have_count(len(view["legal"]["xPlayer"]))
        target = view["legal"]["xPlayer"][0]["cells"][0]
        page.locator(f'#board [data-gcell="{target}"]').click()  # a click on a square plays the move naming it
        moved = page.locator(f'#board:not([data-step="{view["step"]}"]), #result:not([hidden])').first
        expect(moved).to_be_visible(timeout=60_000)
    expect(page.locator("#result")).to_be_visible()
    final = view_of(page, server)
    assert final["terminal"] and final["title"] == "Tic-tac-toe from the corpus" and final["family"] == "grid"
    expect(page.locator("#result-side")).not_to_be_empty()
    expect(page.locator("#facts")).to_contain_text("(control")
    shot(page, "corpus_tictactoe")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the GDL corpus (../shared/corpus) is not beside the repo")
def test_a_pieces_moves_show_once_it_is_picked(server: BackgroundServer, page: Any) -> None:
    rules = (CORPUS / "breakthroughSmall.kif").read_text()
    upload = page.context.request.post(f"{server.url}/api/sheets", data={"name": "Breakthrough", "rules": rules})
    assert upload.status == 201, upload.text()
    gid = page.context.request.post(
        f"{server.url}/api/play", data={"game": upload.json()["name"], "mode": "computer", "level": "easy"}
    ).json()["id"]
    page.goto(f"{server.url}/games/{gid}")
    view = view_of(page, server)
    me = view["mine"][0]
    expect(page.locator("#controls")).to_contain_text(f"Your move as {me}")
    expect(page.locator("#board .hl")).to_have_count(0)  # no piece lit before one is picked
    start = view["legal"][me][0]["cells"][0]
    page.locator(f'#board [data-gcell="{start}"]').click()
    expect(page.locator("#board .hl.sel")).to_have_count(1)
    ends = {m["cells"][-1] for m in view["legal"][me] if m["cells"][0] == start and len(m["cells"]) > 1}
    expect(page.locator("#board .hl.target")).to_have_count(len(ends))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the GDL corpus (../shared/corpus) is not beside the repo")
def test_the_catalog_is_searched_and_filtered(server: BackgroundServer, page: Any) -> None:
    server.app.state.manager.games.learn_boards()  # (a started server does this aside)
    page.goto(server.url + "/sheets")
    item = lambda stem: page.locator(f'.sheet-list.catalog li[data-key="sheet:{stem}"]')  # noqa: E731
    expect(item("connectFour")).to_be_visible()
    expect(item("stateSpaceLarge")).to_be_hidden()  # a test sheet, until asked for
    page.locator("#catalog-board").select_option("0")  # games without a board
    expect(item("connectFour")).to_be_hidden()
    expect(item("nim1")).to_be_visible()
    page.locator("#catalog-board").select_option("1")
    page.locator("#catalog-players").select_option("2")
    page.locator("#catalog-search").fill("connect")
    expect(item("connectFour")).to_be_visible()
    expect(item("nim1")).to_be_hidden()
    expect(item("3pConnectFour")).to_be_hidden()  # three players
    shown = page.locator(".sheet-list.catalog li:not([hidden])").count()
    expect(page.locator("#catalog-count")).to_have_text(str(shown))
    page.locator("#catalog-all").check()
    page.locator("#catalog-search").fill("stateSpace")
    page.locator("#catalog-board").select_option("")
    page.locator("#catalog-players").select_option("")
    expect(item("stateSpaceLarge")).to_be_visible()


# --- the arena -----------------------------------------------------------------------------------------------
class Served:
    """``ggp serve SPEC`` on a free loopback port."""

    def __init__(self, log: Path, spec: str = "random") -> None:
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ggp", "serve", spec, "--port", "0"],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)  # a guard against a hang, not a wait
        assert ready, log.read_text()
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", self.proc.stdout.readline())
        assert found, log.read_text()
        self.url = found.group(1)
        wait_until_available(self.url, log)  # INFO says busy while the player compiles


def test_the_arena_shows_a_live_match_and_the_leaderboard(server: BackgroundServer, page: Any, tmp_path: Path) -> None:
    # players that take their time (0.3 s a move), so that the match is still being played when it is watched
    players = [Served(tmp_path / f"serve{i}.log", "mcts:time=0.3") for i in range(2)]
    try:
        for i, p in enumerate(players):
            page.goto(server.url + "/arena")
            page.locator("#reg-name").fill(f"player-{i}")
            page.locator("#reg-url").fill(p.url)
            page.get_by_role("button", name=re.compile("Register")).click()
            expect(page.locator("h1")).to_contain_text(f"player-{i}")
            expect(page.locator("#player-status")).to_contain_text("active")
        page.goto(server.url + "/arena")
        live = page.locator("#running").get_by_role("link", name="watch live")
        # the two players are matched at once (each plays one match at a time); the page hears of it
        expect(live).to_have_count(1, timeout=30_000)
        live.click()
        expect(page.locator(".players")).to_contain_text("player-0")
        expect(page.locator(".players")).to_contain_text("player-1")
        # steps arrive as they are played (after the players' START, which a loaded machine may make slow)
        expect(page.locator("#board")).not_to_have_attribute("data-step", "0", timeout=60_000)
        shot(page, "arena_live")
        expect(page.locator("#arena-status")).to_have_text("over", timeout=120_000)
        expect(page.locator("#downloads")).to_be_visible()
        href = page.locator("#downloads a").nth(1).get_attribute("href")
        record = json.loads(page.context.request.get(server.url + str(href)).text())
        assert set(record) >= {"moves", "states", "goalValues", "errors", "startClock", "playClock"}
        page.goto(server.url + "/arena")
        board = page.locator("#leaderboard table.ratings").first  # over all games (then per game)
        expect(board).to_contain_text("player-0")
        expect(board).to_contain_text("player-1")
        shot(page, "arena_leaderboard")
    finally:
        for p in players:
            p.proc.terminate()
            p.proc.communicate(timeout=10)


# --- phones and accessibility -------------------------------------------------------------------------------
CONTRAST = """
(sel) => {
  const lum = (c) => {
    const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map((v) => {
      v = Number(v) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = getComputedStyle(el).backgroundColor;
      if (c && !c.startsWith("rgba(0, 0, 0, 0)") && c !== "transparent") return c;
    }
    return "rgb(255, 255, 255)";
  };
  return [...document.querySelectorAll(sel)].filter((e) => e.offsetParent && e.textContent.trim()).map((e) => {
    const a = lum(getComputedStyle(e).color), b = lum(background(e));
    return [e.tagName + "." + e.className, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
  });
}
"""


def test_a_phone_sees_board_and_controls_on_one_screen(server: BackgroundServer, browser: Any) -> None:
    context, page, errors = new_page(browser, 390, 844)
    try:
        page.goto(server.url + "/")
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= 390, f"the home page is {width} px wide on a 390 px screen"
        page.locator("#game-wallmaze").get_by_role("button", name="Play the computer").click()
        expect(page.locator("#controls .dpad")).to_be_visible()
        assert page.evaluate("window.scrollY") == 0
        for what in ["#board", "#controls .dpad", "#status"]:  # all of each, without scrolling
            expect(page.locator(what)).to_be_in_viewport(ratio=1)
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
        shot(page, "phone_wallmaze")
        page.goto(server.url + "/games")
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390  # tables scroll inside themselves
    finally:
        context.close()
    assert not errors, errors


def test_labels_names_focus_and_contrast(server: BackgroundServer, page: Any) -> None:
    page.goto(server.url + "/")
    unlabeled = page.evaluate(
        """() => [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
              .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute("aria-label")).map((e) => e.name)"""
    )
    assert unlabeled == []
    low = [
        (s, round(r, 2)) for s, r in page.evaluate(CONTRAST, "p, li, label, legend, a, button, h1, h2, span") if r < 4.5
    ]
    assert low == [], low
    page.locator("#game-wallmaze").get_by_role("button", name="Play the computer").click()
    board = page.locator("#board")
    expect(board).to_have_attribute("aria-label", re.compile("Wall maze board"))
    expect(page.locator("#announce")).to_have_attribute("aria-live", "polite")
    for _ in range(60):  # move the focus by keyboard, as a keyboard user does, until it reaches the board
        if board.evaluate("e => e === document.activeElement"):
            break
        page.keyboard.press("Tab")
    assert board.evaluate("e => e === document.activeElement")
    assert board.evaluate("e => getComputedStyle(e).outlineStyle") != "none"  # the focus shows
    page.keyboard.press("ArrowRight")
    expect(page.locator("#announce")).to_contain_text("Step 1: white east")
    low = [
        (s, round(r, 2)) for s, r in page.evaluate(CONTRAST, "p, li, label, a, button, h1, h2, span, div") if r < 4.5
    ]
    assert low == [], low


def test_a_friend_by_link_and_a_draw_by_agreement(server: BackgroundServer, browser: Any, page: Any) -> None:
    page.goto(server.url + "/")
    page.locator("#game-wallmaze").get_by_role("button", name="Play a friend (by link)").click()
    link = page.locator("#invite-link").input_value()
    context, friend, errors = new_page(browser)
    try:
        friend.goto(link)
        friend.locator('button[data-seat="black"]').click()
        expect(friend.locator("#controls")).to_contain_text("Your move as black")
        expect(page.locator("#invite")).to_be_hidden()  # the seat is taken: no more invitation
        page.locator("#action-draw").click()
        expect(page.locator("#draw-offered")).to_be_visible()
        expect(friend.locator("#action-draw")).to_contain_text("accept the draw (white offers it)")
        friend.locator("#action-draw").click()
        expect(friend.locator("#result-side")).to_have_text("A draw.")
        expect(page.locator("#result-side")).to_have_text("A draw.")
        expect(page.locator("#result-title")).to_have_text("Draw by agreement")
    finally:
        context.close()
    assert not errors, errors
