"""Screenshots of the web app into docs/img/screens/: the home page, the play page of every game, two games
of the GDL corpus on the generic view (Connect Four, Speed Chess), and the arena.

    python docs/screenshots.py [--out DIR] [--chromium PATH] [--games ...] [--no-arena]

Runs the app in this process on 127.0.0.1 (a free port, a throw-away
database, the corpus's rule sheets from ../shared/corpus/kif when they are
there), plays a few moves of each game through the JSON API so that the
picture shows something (a selected amazon with its destinations, a bomb
counting down, fire, markers on their way), and photographs the page with
headless Chromium (Debian's ``chromium``; Playwright drives it). For the
arena, two ``ggp serve random`` players on loopback are registered and a few
of their matches played (``arena.png``, ``arena_match.png``). Needs
``pip install -e '.[dev,web]'`` and ``apt-get install chromium``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from ggp.web.limits import Limits
from ggp.web.pages import featured_picture
from ggp.web.server import BackgroundServer

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT.parent.parent / "shared" / "corpus" / "kif"
# The browser the tests drive, with the same flags: a picture and a test see the same page.
sys.path.insert(0, str(ROOT.parent / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, wait_until_available  # noqa: E402

# game -> (players, the people's moves: one dict per turn of theirs, role -> move; agents answer in between)
SCENES: dict[str, tuple[dict[str, str], list[dict[str, str]]]] = {
    "amazons_10x10": (
        {"white": "human", "black": "random:seed=7"},
        [{"white": "(move 4 1 4 6)"}, {"white": "(fire 7 3)"}],
    ),
    "amazons_8x8": (
        {"white": "human", "black": "random:seed=3"},
        [{"white": "(move 3 1 3 5)"}, {"white": "(fire 5 7)"}],
    ),
    "bomberman": (
        {"bomberman": "human", "bomberwoman": "random:seed=4"},
        [{"bomberman": "dropBomb"}, {"bomberman": "(move north)"}],
    ),
    "bomberman2p": (
        {"bomberman": "human", "bomberwoman": "random:seed=2"},
        [
            {"bomberman": "dropBomb"},
            {"bomberman": "(move north)"},
            {"bomberman": "dropBomb"},
            {"bomberman": "(move north)"},
            {"bomberman": "(move east)"},
        ],
    ),
    "wallmaze": (
        {"white": "human", "black": "random:seed=1"},
        [{"white": "(move 2 5 3 5)"}, {"white": "(move 3 5 4 5)"}, {"white": "(move 4 5 5 5)"}],
    ),
}


def api(context: BrowserContext, url: str, body: Any) -> Any:
    """POST ``body`` as JSON from the browser ``context`` (so that the seats' cookie lands in it)."""
    reply = context.request.post(url, data=body, timeout=60_000)
    if not reply.ok:
        raise RuntimeError(f"{url}: {reply.status} {reply.text()}")
    return reply.json()


def prepare(context: BrowserContext, base: str, game: str) -> str:
    """A match of ``game`` played to the scene's position, its seats held by ``context``; returns its id."""
    players, steps = SCENES[game]
    view = api(context, f"{base}/api/games", {"game": game, "players": players, "agent_time": 1.0})
    gid = view["id"]
    for joint in steps:
        for role, move in joint.items():
            body = {"role": role, "move": move, "step": view["step"]}
            view = api(context, f"{base}/api/games/{gid}/moves?wait=10", body)
    return str(gid)


def photograph(page: Page, base: str, game: str, gid: str, out: Path) -> Path:
    page.goto(f"{base}/games/{gid}")
    expect(page.locator("#controls")).to_contain_text("Your move")
    if game.startswith("amazons"):  # pick an amazon: its destinations light up
        amazon = page.locator("#board .hl.from").first
        expect(amazon).to_be_visible()
        origin = amazon.bounding_box()
        assert origin is not None
        page.mouse.click(origin["x"] + origin["width"] / 2, origin["y"] + origin["height"] / 2)
        expect(page.locator("#board .hl.sel")).to_have_count(1)
    target = out / f"{game}.png"
    page.screenshot(path=str(target), full_page=False)
    return target


def photograph_home(page: Page, base: str, out: Path) -> Path:
    page.goto(f"{base}/")
    target = out / "home.png"
    page.screenshot(path=str(target), full_page=False)
    return target


def photograph_corpus(context: BrowserContext, page: Page, base: str, out: Path) -> Path:
    """Connect Four from the corpus on the generic grid, after a few moves."""
    view = api(context, f"{base}/api/play", {"game": "sheet:connectFour", "mode": "computer", "level": "easy"})
    gid = view["id"]
    for column in ("4", "4", "5"):
        body = {"role": "red", "move": f"(drop {column})", "step": view["step"]}
        view = api(context, f"{base}/api/games/{gid}/moves?wait=10", body)
    page.goto(f"{base}/games/{gid}")
    expect(page.locator("#board [data-gcell]").first).to_be_visible()
    target = out / "corpus_connect_four.png"
    page.screenshot(path=str(target), full_page=False)
    return target


def photograph_chess(context: BrowserContext, page: Page, base: str, out: Path) -> Path:
    """A chess-like sheet of the corpus (Speed Chess) on the generic grid: pieces by colour and initial."""
    view = api(context, f"{base}/api/play", {"game": "sheet:speedChess", "mode": "computer", "level": "easy"})
    gid = view["id"]
    for _ in range(2):  # the first listed move of whoever's turn it is (the computer answers in between)
        mine = [r for r in view["legal"] if view["legal"][r]]
        if not mine:
            break
        role = mine[0]
        body = {"role": role, "move": view["legal"][role][0]["move"], "step": view["step"]}
        view = api(context, f"{base}/api/games/{gid}/moves?wait=10", body)
    page.goto(f"{base}/games/{gid}")
    expect(page.locator("#board [data-gcell]").first).to_be_visible()
    target = out / "corpus_speed_chess.png"
    page.screenshot(path=str(target), full_page=False)
    return target


def photograph_review(context: BrowserContext, page: Page, base: str, out: Path) -> Path:
    """A finished game's replay with the engine's review graph (the computer playing the wall maze itself)."""
    view = api(context, f"{base}/api/play", {"game": "wallmaze", "mode": "watch", "level": "easy"})
    context.request.get(f"{base}/api/games/{view['id']}?wait=60")
    page.goto(f"{base}/games/{view['id']}/replay")
    expect(page.locator("#review-graph svg")).to_be_visible(timeout=120_000)
    page.keyboard.press("End")
    target = out / "replay_review.png"
    page.screenshot(path=str(target), full_page=False)
    return target


def photograph_catalog(page: Page, base: str, out: Path) -> Path:
    """The catalog of rule sheets: the best two-player games first, search and filters."""
    page.goto(f"{base}/sheets")
    page.locator("#catalog-players").select_option("2")
    target = out / "catalog.png"
    page.locator("#catalog-filters").evaluate("f => f.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(target), full_page=False)
    return target


def photograph_phone(browser: Any, seats: BrowserContext, base: str, gid: str, out: Path) -> list[Path]:
    """The home page and a game's play page on a 390 px phone (with the seats of the ``seats`` browser)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, storage_state=seats.storage_state())
    page = context.new_page()
    shots = []
    page.goto(f"{base}/")
    shots.append(out / "phone_home.png")
    page.screenshot(path=str(shots[-1]), full_page=False)
    page.goto(f"{base}/games/{gid}")
    expect(page.locator("#board svg")).to_be_visible()
    shots.append(out / "phone_play.png")
    page.screenshot(path=str(shots[-1]), full_page=False)
    context.close()
    return shots


def photograph_arena(context: BrowserContext, page: Page, base: str, out: Path) -> list[Path]:
    """Two ``ggp serve random`` players registered and rated, and a match of theirs."""
    procs = []
    try:
        for name in ("ggp-random-a", "ggp-random-b"):
            proc = subprocess.Popen(
                [sys.executable, "-m", "ggp", "serve", "random", "--port", "0", "--name", name, "--quiet"],
                stdout=subprocess.PIPE,
                text=True,
            )
            procs.append(proc)
            assert proc.stdout is not None
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", proc.stdout.readline())
            if not found:
                raise RuntimeError("ggp serve did not start")
            wait_until_available(found.group(1), Path(os.devnull), within=900)  # busy while it compiles
            api(context, f"{base}/api/arena/players", {"name": name, "url": found.group(1), "contact": "docs"})
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # a script, not a test: poll until a few matches are over
            over = context.request.get(f"{base}/api/arena/matches?status=over").json()["matches"]
            if len(over) >= 4:
                break
            time.sleep(1)
        page.goto(f"{base}/arena")
        arena = out / "arena.png"
        page.screenshot(path=str(arena), full_page=False)
        running = context.request.get(f"{base}/api/arena/matches?status=running").json()["matches"]
        match = (running or over)[0]
        page.goto(f"{base}/arena/matches/{match['id']}")
        expect(page.locator("#board svg")).to_be_visible()
        live = out / "arena_match.png"
        page.screenshot(path=str(live), full_page=False)
        return [arena, live]
    finally:
        for proc in procs:
            proc.terminate()
            proc.communicate(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "img" / "screens", help="folder for the PNG files")
    parser.add_argument("--chromium", default=CHROMIUM, help="the Chromium binary")
    parser.add_argument("--games", nargs="*", default=list(SCENES), help="which games (default: all)")
    parser.add_argument("--no-arena", action="store_true", help="leave out the arena's pictures")
    args = parser.parse_args(argv)
    if not Path(args.chromium).exists():
        print(f"screenshots: {args.chromium} is missing (apt-get install -y chromium)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as tmp,
        BackgroundServer(
            Path(tmp) / "screens.sqlite3",
            limits=Limits.from_env(
                arena_allow=("127.0.0.0/8",),
                arena_games=("amazons_8x8", "wallmaze"),
                arena_agents=("random",),
                arena_interval=1.0,
            ),
            sheets=CORPUS if CORPUS.is_dir() else None,
        ) as server,
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        context.set_default_timeout(20_000)
        page = context.new_page()
        server.app.state.manager.games.draw_featured(featured_picture)  # as `ggp web` does aside at its start
        print(f"wrote {photograph_home(page, server.url, args.out)}")
        games = {}
        for game in args.games:
            games[game] = prepare(context, server.url, game)
            print(f"wrote {photograph(page, server.url, game, games[game], args.out)}")
        if CORPUS.is_dir():
            print(f"wrote {photograph_corpus(context, page, server.url, args.out)}")
            print(f"wrote {photograph_chess(context, page, server.url, args.out)}")
            print(f"wrote {photograph_catalog(page, server.url, args.out)}")
        print(f"wrote {photograph_review(context, page, server.url, args.out)}")
        if "amazons_8x8" in games:
            for path in photograph_phone(browser, context, server.url, games["amazons_8x8"], args.out):
                print(f"wrote {path}")
        if not args.no_arena:
            for path in photograph_arena(context, page, server.url, args.out):
                print(f"wrote {path}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
