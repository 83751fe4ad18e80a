"""Playing as a new user would, through the API and the pages (TestClient, no browser): one-click games at a
level, a friend by link, watching, rematches, the move list, explanations; any rule sheet from the server's
directory or uploaded, with the generic grid view."""

from __future__ import annotations

import random
import re
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import ggp
from ggp.web import ui
from ggp.web.app import create_app
from ggp.web.limits import Limits
from ggp.web.opening import play_opening

BASE = "http://127.0.0.1"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "kif"
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason="the GDL corpus (../shared/corpus) is not beside the repo"
)
#: Agents think briefly here, whatever the level says; their start may compile code (a fresh clone's cold numba
#: cache on a loaded machine takes minutes), which the tests wait for.
FAST = Limits(max_agent_time=0.2, arena_agents=(), agent_start_time=900.0)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    sheets = CORPUS if CORPUS.is_dir() else None
    with TestClient(create_app(tmp_path / "web.sqlite3", limits=FAST, sheets=sheets, arena=False), base_url=BASE) as c:
        yield c


def play(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/play", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())


def wait(client: TestClient, gid: str) -> dict[str, Any]:
    return dict(client.get(f"/api/games/{gid}", params={"wait": 30}).json())


def move(client: TestClient, gid: str, role: str, text: str, step: int) -> dict[str, Any]:
    r = client.post(f"/api/games/{gid}/moves", params={"wait": 30}, json={"role": role, "move": text, "step": step})
    assert r.status_code == 200, r.text
    return dict(r.json())


# --- the home page and one-click games ------------------------------------------------------------------
def test_home_names_the_games_and_offers_one_click_play(client: TestClient) -> None:
    page = client.get("/").text
    for title in ["Amazons", "Amazons 8x8", "Bomberman (turns)", "Bomberman (simultaneous)", "Wall maze"]:
        assert f">{title}</h2>" in page
    assert page.count("Play the computer") == len(ggp.game_names())
    assert page.count("Watch the computer play itself") == len(ggp.game_names())
    assert page.count("Play a friend (by link)") == len(ggp.game_names())
    assert page.count('<details class="advanced">') == len(ggp.game_names())  # free-text options stay there
    assert 'value="easy"' in page and 'value="hard"' in page and ">amazons_10x10</h2>" not in page
    # the inputs of the forms have labels pointing at them (the options box has an aria-label instead)
    for ident in ["side-wallmaze", "wallmaze-white", "wallmaze-agent-time", "wallmaze-pace"]:
        assert f'for="{ident}"' in page and f'id="{ident}"' in page
    assert 'id="wallmaze-opts-white" name="options_white" placeholder="options"' in page
    assert 'aria-label="agent options for white"' in page


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_play_the_computer_at_a_level(client: TestClient, level: str) -> None:
    spec, seconds = ui.levels(ggp.load("wallmaze"))[level]
    view = play(client, game="wallmaze", mode="computer", level=level, side="black")
    assert view["players"] == {"white": spec, "black": "human"}
    assert view["mine"] == ["black"] and view["settings"]["agent_time"] == min(seconds, FAST.max_agent_time)
    assert view["title"] == "Wall maze"


def test_levels_differ_and_bad_choices_are_refused(client: TestClient) -> None:
    for name in ggp.game_names():
        table = ui.levels(ggp.load(name))
        assert list(table) == ["easy", "medium", "hard"], name
        assert table["easy"] != table["hard"], name
    assert client.post("/api/play", json={"game": "wallmaze", "level": "expert"}).status_code == 400
    r = client.post("/api/play", json={"game": "wallmaze", "side": "red"})
    assert r.status_code == 400 and "no role 'red'" in r.json()["detail"]
    r = client.post("/api/play", json={"game": "chess"})
    assert r.status_code == 400 and "unknown game" in r.json()["detail"]


def test_the_form_starts_a_game_and_gives_the_seat_to_its_browser(client: TestClient) -> None:
    r = client.post("/play", data={"game": "bomberman2p", "mode": "computer", "level": "easy"}, follow_redirects=False)
    assert r.status_code == 303
    gid = r.headers["location"].rsplit("/", 1)[1]
    view = client.get(f"/api/games/{gid}").json()
    assert view["mine"] == ["bomberman"] and view["players"]["bomberwoman"] == "random"
    assert "Bomberman (simultaneous)" in client.get(f"/games/{gid}").text


def test_a_friend_joins_by_link_and_both_play(client: TestClient, tmp_path: Path) -> None:
    view = play(client, game="wallmaze", mode="friend")
    gid = view["id"]
    assert view["players"] == {"white": "human", "black": "human"} and view["mine"] == ["white"]
    assert view["seats"] == {"white": "taken", "black": "open"}
    friend = TestClient(client.app, base_url=BASE)
    assert friend.post(f"/api/games/{gid}/seats/black").status_code == 201
    assert friend.get(f"/api/games/{gid}").json()["mine"] == ["black"]
    client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": "(move 2 5 3 5)", "step": 0})
    after = move(friend, gid, "black", "(move 12 5 11 5)", 0)
    assert after["step"] == 1
    assert after["moves"] == [
        {
            "step": 1,
            "joint": {"white": "(move 2 5 3 5)", "black": "(move 12 5 11 5)"},
            "readable": {"white": "east", "black": "west"},
            "forced": [],
        }
    ]


def test_watch_the_computer_play_itself_to_the_end(client: TestClient) -> None:
    view = play(client, game="bomberman", mode="watch", level="easy")
    assert "mine" in view and view["mine"] == [] and set(view["players"].values()) == {"random"}
    final = wait(client, view["id"])
    assert final["terminal"] and len(final["moves"]) == final["step"]


# --- in a game ----------------------------------------------------------------------------------------------
def test_resign_then_rematch_with_the_seats_swapped(client: TestClient) -> None:
    view = play(client, game="amazons_8x8", mode="computer", level="easy", side="white")
    gid = view["id"]
    assert client.post(f"/api/games/{gid}/resign", json={"role": "white"}).json()["result"] == "white resigned"
    r = client.post(f"/api/games/{gid}/rematch")
    assert r.status_code == 201, r.text
    again = r.json()
    assert again["id"] != gid and again["game"] == "amazons_8x8"
    assert again["players"] == {"white": view["players"]["black"], "black": "human"} and again["mine"] == ["black"]
    assert client.get(f"/api/games/{gid}").json()["rematch"] == again["id"]
    stranger = TestClient(client.app, base_url=BASE)
    assert stranger.post(f"/api/games/{gid}/rematch").status_code == 403  # not a player of it


def test_a_rematch_between_friends_seats_each_on_the_other_side(client: TestClient) -> None:
    gid = play(client, game="wallmaze", mode="friend")["id"]
    friend = TestClient(client.app, base_url=BASE)
    friend.post(f"/api/games/{gid}/seats/black")
    client.post(f"/api/games/{gid}/abort")
    assert client.get(f"/api/games/{gid}").json()["ended"] == "aborted"
    first = client.post(f"/api/games/{gid}/rematch").json()
    assert first["mine"] == ["black"] and first["seats"] == {"white": "open", "black": "taken"}
    second = friend.post(f"/api/games/{gid}/rematch").json()
    assert second["id"] == first["id"] and second["mine"] == ["white"]  # joins the rematch, on the other side
    assert client.get(f"/api/games/{first['id']}").json()["seats"] == {"white": "taken", "black": "taken"}


def test_amazons_moves_read_as_squares_and_a_forced_arrow_is_announced(client: TestClient) -> None:
    game = ggp.load("amazons_8x8")
    view = play(client, game="amazons_8x8", mode="friend")
    gid = view["id"]
    after = move(client, gid, "white", "(move 3 1 3 5)", 0)
    after = move(client, gid, "white", "(fire 5 7)", 1)
    assert [m["readable"]["white"] for m in after["moves"]] == ["c1-c5", "arrow e7"]
    assert ui.readable(game, "(fire 5 7)") == "arrow e7"
    # a position where the amazon that moves can shoot one square only: the arrow is played and said
    gid = play(client, game="amazons_8x8", mode="friend")["id"]
    match = client.app.state.manager.matches[gid]  # type: ignore[attr-defined]
    doc = game.state_to_dict(match.state)
    board = ["." * 8 for _ in range(8)]
    rows = [list(r) for r in board]

    def put(x: int, y: int, c: str) -> None:
        rows[8 - y][x - 1] = c

    for x in range(1, 9):
        for y in range(1, 9):
            put(x, y, "x")
    for x, y in [(1, 1), (5, 5), (5, 2), (2, 5)]:
        put(x, y, "W")
    for x, y in [(8, 8), (7, 6), (6, 3), (3, 7)]:
        put(x, y, "B")
    put(2, 1, ".")  # white's one way out: a1-b1, and then the only square to shoot at is a1
    put(7, 8, ".")  # black has a choice, so its move is its own
    put(6, 8, ".")
    state = game.state_from_dict({**doc, "board": "/".join("".join(r) for r in rows), "to_act": "white"})
    match.states[-1] = state
    match.new_turn()  # the step in progress begins from the position set
    forced = move(client, gid, "white", "(move 1 1 2 1)", match.step)
    assert forced["explain"] == ["white had one legal move, arrow a1: it was played for white"]
    assert forced["moves"][-1]["forced"] == ["white"] and forced["moves"][-1]["readable"]["white"] == "arrow a1"


def test_wall_maze_explains_a_blocked_step(client: TestClient) -> None:
    view = play(client, game="wallmaze", mode="friend")
    gid = view["id"]
    game = ggp.load("wallmaze")
    match = client.app.state.manager.matches[gid]  # type: ignore[attr-defined]
    doc = game.state_to_dict(match.state)
    match.states[-1] = game.state_from_dict({**doc, "white": [6, 5], "black": [8, 5]})
    match.new_turn()
    friend = TestClient(client.app, base_url=BASE)
    friend.post(f"/api/games/{gid}/seats/black")
    client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": "(move 6 5 7 5)", "step": 0})
    after = move(friend, gid, "black", "(move 8 5 7 5)", 0)
    assert after["explain"] == ["white and black both stepped onto (7, 5), so neither moved"]
    assert after["state"]["white"] == [6, 5] and after["state"]["black"] == [8, 5]


def test_a_bomb_under_a_player_shows_its_countdown(client: TestClient) -> None:
    game = ggp.load("bomberman2p")
    state = game.next_state(game.initial_state(), ["dropBomb", "dropBomb"])
    svg = ui.board_svg(game, state)
    assert svg.count('class="bomb-timer bomb-under">3<') == 2  # both players stand on their bombs
    maze = ggp.load("wallmaze")
    assert ui.board_svg(maze, maze.initial_state()).count('class="target target-') == 2


# --- any game ------------------------------------------------------------------------------------------------
@needs_corpus
def test_the_catalog_lists_the_sheet_directory_with_the_manifest_names(client: TestClient) -> None:
    data = client.get("/api/catalog").json()
    sheets = {s["name"]: s for s in data["sheets"]}
    assert len(sheets) == len(list(CORPUS.glob("*.kif")))
    assert sheets["sheet:connectFour"]["title"] == "Connect Four"
    assert sheets["sheet:tictactoe2"]["title"] == "tictactoe2"  # the manifest has no name for it
    page = client.get("/sheets").text
    assert "Connect Four" in page and 'action="/sheets"' in page
    info = client.get("/api/sheets/sheet:connectFour").json()
    assert info["roles"] == ["red", "black"] and info["title"] == "Connect Four"
    assert client.get("/api/sheets/sheet:nosuch").status_code == 404
    assert client.get("/api/sheets/sheet:..%2F..%2Fetc%2Fpasswd").status_code == 404


@needs_corpus
def test_a_corpus_sheet_is_played_to_the_end_on_its_grid(client: TestClient) -> None:
    view = play(client, game="sheet:connectFour", mode="computer", level="easy")
    gid = view["id"]
    assert view["family"] == "grid" and view["title"] == "Connect Four"
    page = client.get(f"/games/{gid}").text
    assert 'data-gcell="7 5"' in page and "family-grid" in page
    for _ in range(30):
        if view["terminal"]:
            break
        if not view["legal"].get("red"):
            view = wait(client, gid)
            continue
        choice = view["legal"]["red"][0]
        assert choice["cells"] and all(c.split(" ")[0] == choice["cells"][0].split(" ")[0] for c in choice["cells"])
        view = move(client, gid, "red", choice["move"], view["step"])
    assert view["terminal"] and view["goals"] is not None
    assert client.get(f"/api/games/{gid}/record").json()["game"] == "sheet:connectFour"


def test_an_upload_is_checked_by_the_reasoner(client: TestClient) -> None:
    bad = client.post("/api/sheets", json={"name": "broken", "rules": "(role x) (<= (legal x y)"})
    assert bad.status_code == 400 and "never closed" in bad.json()["detail"]
    no_roles = client.post("/api/sheets", json={"name": "empty", "rules": "(init (cell 1))"})
    assert no_roles.status_code == 400 and no_roles.json()["detail"].startswith("the rule sheet does not load")
    assert all(s["source"] != "upload" for s in client.get("/api/catalog").json()["sheets"])
    rules = ggp.gdl.rules_text("wallmaze") if not CORPUS.is_dir() else (CORPUS / "tictactoe2.kif").read_text()
    r = client.post("/api/sheets", json={"name": "My game", "rules": rules})
    assert r.status_code == 201, r.text
    key = r.json()["name"]
    assert key.startswith("upload:") and r.json()["title"] == "My game"
    assert client.post("/api/sheets", json={"name": "My game", "rules": rules}).json()["name"] == key  # same text
    view = play(client, game=key, mode="watch", level="easy")
    final = wait(client, view["id"])
    assert final["terminal"] and final["title"] == "My game"


#: Reachability over a cycle (tests/test_gdl_prover.py's sheet), tagged so that no other test's cached game is met.
REACH = """
; web upload, played on the prover
(role p)
(init (at a))
(edge a b) (edge b c) (edge c d) (edge d b) (edge e a)
(<= (path ?x ?y) (path ?x ?z) (edge ?z ?y))
(<= (path ?x ?y) (edge ?x ?y))
(<= (legal p (go ?y)) (true (at ?x)) (path ?x ?y))
(<= (next (at ?y)) (does p (go ?y)))
(<= terminal (true (at d)))
(<= (goal p 100) (true (at d)))
(<= (goal p 0) (not (true (at d))))
"""


def test_an_upload_too_large_to_ground_is_played_on_the_prover(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ggp.gdl import grounder, load_text

    monkeypatch.setattr(grounder, "MAX_ATOMS", 20)  # REACH's paths are over 20 atoms: grounding gives up
    load_text.cache_clear()
    try:
        r = client.post("/api/sheets", json={"name": "reach", "rules": REACH})
        assert r.status_code == 201, r.text
        key = r.json()["name"]
        assert client.get(f"/api/sheets/{key}").json()["engine"] == "prover"
        view = play(client, game=key, mode="computer", level="easy")
        assert view["family"] == "facts" and view["facts"] == ["(at a)"]
        assert [m["move"] for m in view["legal"]["p"]] == ["(go b)", "(go c)", "(go d)"]
        view = move(client, view["id"], "p", "(go c)", 0)
        assert not view["terminal"] and view["facts"] == ["(at c)"]
        done = move(client, view["id"], "p", "(go d)", 1)
        assert done["terminal"] and done["goals"] == {"p": 100}
    finally:
        load_text.cache_clear()


def test_a_sheet_without_a_board_shows_its_facts(client: TestClient) -> None:
    rules = """
    (role a) (init (count 0))
    (<= (legal a (add ?n)) (true (count ?c)) (num ?n))
    (num 1) (num 2)
    (<= (next (count 3)) (does a (add ?n)))
    (<= terminal (true (count 3)))
    (goal a 100)
    """
    key = client.post("/api/sheets", json={"name": "counter", "rules": rules}).json()["name"]
    view = play(client, game=key, mode="computer")
    assert view["family"] == "facts" and view["facts"] == ["(count 0)"]
    assert [m["move"] for m in view["legal"]["a"]] == ["(add 1)", "(add 2)"]
    done = move(client, view["id"], "a", "(add 2)", 0)
    assert done["terminal"] and done["goals"] == {"a": 100}


def test_friends_agree_a_draw_and_an_agent_takes_no_offer(client: TestClient) -> None:
    gid = play(client, game="wallmaze", mode="friend")["id"]
    friend = TestClient(client.app, base_url=BASE)
    friend.post(f"/api/games/{gid}/seats/black")
    assert friend.post(f"/api/games/{gid}/draw", json={"role": "white"}).status_code == 403  # not its seat
    offered = client.post(f"/api/games/{gid}/draw", json={"role": "white"}).json()
    assert offered["draw_offers"] == ["white"] and not offered["terminal"]
    # the offer lasts until the next step: a move clears it
    client.post(f"/api/games/{gid}/moves", json={"role": "white", "move": "(move 2 5 3 5)", "step": 0})
    assert move(friend, gid, "black", "(move 12 5 11 5)", 0)["draw_offers"] == []
    client.post(f"/api/games/{gid}/draw", json={"role": "white"})
    drawn = friend.post(f"/api/games/{gid}/draw", json={"role": "black"}).json()
    assert drawn["terminal"] and drawn["ended"] == "drawn" and drawn["goals"] == {"white": 50, "black": 50}
    assert drawn["result"] == "draw agreed"
    assert client.get(f"/api/games/{gid}/record").json()["web"]["goals"] == [50, 50]
    against = play(client, game="wallmaze", mode="computer")["id"]
    r = client.post(f"/api/games/{against}/draw", json={"role": "white"})
    assert r.status_code == 400 and "agents take no draw offers" in r.json()["detail"]


# --- clocks for people --------------------------------------------------------------------------------------
def next_step(client: TestClient, gid: str, step: int) -> dict[str, Any]:
    """The view once the match is past ``step`` (waiting on the match's own change notification)."""
    manager = client.app.state.manager  # type: ignore[attr-defined]
    assert client.portal is not None
    match = client.portal.call(manager.get, gid)
    for _ in range(100):
        if match.step > step:
            break
        client.portal.call(match.wait_change, match.version, 30.0)
    return dict(client.get(f"/api/games/{gid}").json())


@pytest.mark.timing
def test_a_person_whose_clock_runs_out_gets_a_random_legal_move(client: TestClient) -> None:
    untimed = play(client, game="wallmaze", mode="computer", level="easy")
    assert untimed["clock"] is None
    view = play(client, game="wallmaze", mode="computer", level="easy", human_time=1)
    assert view["clock"]["seconds"] == 1 and view["clock"]["left"] <= 1
    # nobody moves white: the clock does, step after step (each view may come a step late on a busy machine)
    after = next_step(client, view["id"], 1)
    assert after["step"] >= 2 and after["clock"]["seconds"] == 1 and after["clock"]["left"] <= 1
    assert (
        after["notes"][:2]
        == [  # in words, the move as the page writes it (east, not its rule text)
            f"Step {m['step']}, white: time out: a random move was played ({m['readable']['white']})"
            for m in after["moves"][:2]
        ]
    )
    moves = client.get(f"/api/games/{view['id']}/record").json()["moves"]
    for step in (1, 2):  # the clock of the step after one that ran out runs too
        faults = moves[step - 1]["faults"]
        assert [(f["role"], f["kind"], f["step"]) for f in faults] == [("white", "timeout", step)]
    too_long = client.post("/api/play", json={"game": "wallmaze", "human_time": 10**6})
    assert too_long.status_code == 400 and "human_time must be 0 (no clock) or at most 3600" in too_long.text


@pytest.mark.timing
def test_a_move_in_time_is_the_persons_own_and_the_clock_starts_again(client: TestClient) -> None:
    # a clock far longer than any request takes: a move in time is made in time on any machine
    view = play(client, game="wallmaze", mode="computer", level="easy", human_time=600)
    assert view["clock"]["seconds"] == 600 and 0 < view["clock"]["left"] <= 600 and view["awaiting"] == ["white"]
    manager = client.app.state.manager  # type: ignore[attr-defined]
    assert client.portal is not None
    match = client.portal.call(manager.get, view["id"])
    started = match.clock_start
    mine = view["legal"]["white"][0]["move"]
    moved = move(client, view["id"], "white", mine, 0)
    assert moved["step"] == 1 and moved["moves"][0]["joint"]["white"] == mine
    assert len(moved["notes"]) == len(view["notes"])  # no "time out"
    assert client.get(f"/api/games/{view['id']}/record").json()["moves"][0]["faults"] == []
    # the clock starts again for the next step: from the moment that step began
    assert match.clock_start > started and match.clock_start == match.times[-1]
    assert 0 < moved["clock"]["left"] <= 600


@pytest.mark.timing
def test_the_clock_waits_for_a_friend_to_take_the_open_seat(client: TestClient) -> None:
    view = play(client, game="wallmaze", mode="friend", human_time=30)
    assert view["clock"] is None  # black's seat is open: nobody's time runs yet
    manager = client.app.state.manager  # type: ignore[attr-defined]
    assert client.portal is not None
    match = client.portal.call(manager.get, view["id"])
    friend = TestClient(client.app, base_url=BASE)
    before = time.time()
    assert friend.post(f"/api/games/{view['id']}/seats/black").status_code == 201
    joined = client.get(f"/api/games/{view['id']}").json()
    assert 0 < joined["clock"]["left"] <= 30
    assert match.clock_start >= before  # it started when the seat was taken, not when the match was made


# --- results in words, names of players, abandoned games ------------------------------------------------
def test_results_are_told_in_words_and_the_computer_is_named_by_its_level(client: TestClient) -> None:
    view = play(client, game="amazons_8x8", mode="computer", level="easy", side="white")
    gid = view["id"]
    assert view["names"] == {"white": "Human", "black": "Computer (easy)"} and view["outcome"] is None
    over = client.post(f"/api/games/{gid}/resign", json={"role": "white"}).json()
    assert over["outcome"] == "White resigned: black won"
    row = next(g for g in client.get("/api/games").json()["games"] if g["id"] == gid)
    assert row["outcome"] == "White resigned: black won"
    assert "White resigned: black won" in client.get("/games").text  # the history says it too
    assert "White resigned: black won" in client.get(f"/games/{gid}/replay").text
    watched = wait(client, play(client, game="wallmaze", mode="watch")["id"])
    goals = watched["goals"]
    best = max(goals.values())
    winners = [r.capitalize() for r, g in goals.items() if g == best]
    scores = f"{goals['white']}-{goals['black']}"
    assert watched["outcome"] == (f"Draw ({scores})" if len(winners) == 2 else f"{winners[0]} won ({scores})")
    last = client.get(f"/api/games/{watched['id']}/steps/{watched['step']}").json()
    assert last["outcome"] == watched["outcome"]  # the replay's last step says the same


def test_a_game_nobody_moves_in_for_days_is_ended_as_abandoned(tmp_path: Path) -> None:
    # Days are a second's millionth here.
    limits = Limits(max_agent_time=0.2, arena_agents=(), abandon_seconds=1e-6)
    db = tmp_path / "web.sqlite3"
    with TestClient(create_app(db, limits=limits, arena=False), base_url=BASE) as client:
        manager = client.app.state.manager  # type: ignore[attr-defined]
        left = play(client, game="wallmaze", mode="friend")["id"]
        assert manager.store.abandon_stale(before=0.0) == []  # moved in since: not stale
        assert manager.expire_abandoned() == []  # in memory: someone may be playing it
        assert not client.get(f"/api/games/{left}").json()["terminal"]
        cookies = client.cookies  # the seat's token
    with TestClient(create_app(db, limits=limits, arena=False), base_url=BASE, cookies=cookies) as client:  # again
        manager = client.app.state.manager  # type: ignore[attr-defined]
        manager.expire_abandoned()  # (the server's own round may have ended it first)
        assert manager.expire_abandoned() == []  # once
        ended = client.get(f"/api/games/{left}").json()
        assert ended["terminal"] and ended["ended"] == "abandoned" and ended["outcome"] == "Abandoned"
        assert ended["goals"] is None and ended["result"] == "no move in 1.15741e-11 days"
        assert "Abandoned" in client.get("/games").text
        r = client.post(f"/api/games/{left}/moves", json={"role": "white", "move": "(move 2 5 3 5)", "step": 0})
        assert r.status_code == 409  # over: no more moves


def first_amazons_turn(client: TestClient) -> tuple[str, dict[str, Any]]:
    """A friends' Amazons 8x8 game after one turn (white a3-a4/b5, black a6-a5/a6): its id and view."""
    gid = play(client, game="amazons_8x8", mode="friend")["id"]
    friend = TestClient(client.app, base_url=BASE)
    friend.post(f"/api/games/{gid}/seats/black")
    move(client, gid, "white", "(move 1 3 1 4)", 0)
    move(client, gid, "white", "(fire 2 5)", 1)
    move(friend, gid, "black", "(move 1 6 1 5)", 2)
    return gid, move(friend, gid, "black", "(fire 1 6)", 3)


def test_the_move_list_is_numbered_turns_in_each_games_notation(client: TestClient) -> None:
    gid, view = first_amazons_turn(client)
    # Amazons' move and arrow are one ply, white's and black's one turn
    assert view["turns"] == [
        {
            "number": 1,
            "plies": [
                {
                    "role": "white",
                    "text": "a3-a4/b5",
                    "moves": ["(move 1 3 1 4)", "(fire 2 5)"],
                    "steps": [1, 2],
                    "forced": False,
                },
                {
                    "role": "black",
                    "text": "a6-a5/a6",
                    "moves": ["(move 1 6 1 5)", "(fire 1 6)"],
                    "steps": [3, 4],
                    "forced": False,
                },
            ],
        }
    ]
    view = move(client, gid, "white", "(move 1 4 1 3)", 4)
    assert [t["number"] for t in view["turns"]] == [1, 2] and view["turns"][1]["plies"][0]["text"] == "a4-a3"
    # where roles move together (the wall maze: each may also stay), a turn is a step with every role's move
    watched = wait(client, play(client, game="wallmaze", mode="watch")["id"])
    assert len(watched["turns"]) == watched["step"]
    first = watched["turns"][0]["plies"]
    assert [p["role"] for p in first] == ["white", "black"]
    game = ggp.load("wallmaze")
    assert [p["text"] for p in first] == [ui.readable(game, m) for m in watched["moves"][0]["joint"].values()]
    # Bomberman's players take turns: one ply each, numbered in pairs
    turns = wait(client, play(client, game="bomberman", mode="watch")["id"])["turns"]
    assert all([p["role"] for p in t["plies"]] == ["bomberman", "bomberwoman"] for t in turns[:-1])


def test_a_refused_upload_keeps_the_form_and_points_at_the_line(client: TestClient) -> None:
    rules = "(role a)\n(init p)\n(<= (legal a x) (true q) (not (foo ?y)))\n(<= terminal (true p))\n(<= (goal a 100))"
    r = client.post("/sheets", data={"name": "Mine", "rules": rules}, follow_redirects=False)
    assert r.status_code == 400
    page = r.text
    assert "That rule sheet does not load" in page and "line 3: unsafe rule" in page
    assert 'value="Mine"' in page and "(&lt;= (goal a 100))</textarea>" in page  # nothing typed is lost
    marked = page[page.index('class="here"') :].split("</span>")[0]
    assert 'data-line="3"' in marked and "3  (&lt;= (legal a x) (true q) (not (foo ?y)))" in marked
    # a sheet that loads goes to its page, as before
    good = rules.replace("(true q) (not (foo ?y))", "").replace("(init p)", "(init s) (<= (next p) (true s))")
    ok = client.post("/sheets", data={"name": "Mine", "rules": good}, follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"].startswith("/sheets/upload")


@needs_corpus
def test_a_catalog_board_marks_the_cells_the_last_step_changed(client: TestClient) -> None:
    gid = play(client, game="sheet:connectFour", mode="friend")["id"]
    first = client.get(f"/api/games/{gid}", params={"svg": True}).json()
    assert 'class="last"' not in first["svg"]  # nothing moved yet
    move(client, gid, "red", "(drop 3)", 0)
    view = client.get(f"/api/games/{gid}", params={"svg": True}).json()
    marked = re.findall(r'data-gcell="(\d+) (\d+)" class="last"', view["svg"])
    assert len(marked) == 1  # the one cell the red disc fell to, in column 3, and it holds the disc
    assert re.search(r'class="last"[^>]*><title>c\d+: red', view["svg"])  # column 3 is c on the board
    assert view["svg"].count('<g class="arrived">') == 1 and '<g class="arrived">' not in first["svg"]  # it drops in
    replayed = client.get(f"/api/games/{gid}/steps/1").json()["svg"]
    assert re.findall(r'data-gcell="(\d+) (\d+)" class="last"', replayed) == marked  # the replay marks it too


def test_a_bomb_about_to_go_off_shows_the_cells_it_will_burn() -> None:
    from ggp.games.bomberman.view import blast

    seed, swept = ggp.load("bomberman"), ggp.load("bomberman2p")
    assert sorted(blast(seed, 1, 1)) == [(1, 1), (1, 2), (2, 1)]  # its cell, north and east: no wall between
    assert len(blast(swept, 1, 1)) == 15  # bomberman2p's sweeps its row and column
    state = seed.state_from_dict({**seed.state_to_dict(seed.initial_state()), "bombs": [[1, 1, 1]]})
    svg = ui.board_svg(seed, state)
    assert svg.count('class="blast"') == 3
    later = seed.state_from_dict({**seed.state_to_dict(seed.initial_state()), "bombs": [[1, 1, 3]]})
    assert 'class="blast"' not in ui.board_svg(seed, later)  # countdown 3: not yet


@needs_corpus
def test_easy_on_a_catalog_game_is_no_random_mover(client: TestClient) -> None:
    view = play(client, game="sheet:connectFour", mode="computer", level="easy", side="red")
    assert view["players"]["black"].startswith("mcts")
    gid = view["id"]
    for _ in range(4):  # four red discs down one column win against a random mover
        view = wait(client, gid)
        if view["terminal"] or "(drop 1)" not in {m["move"] for m in view["legal"].get("red", [])}:
            break
        view = move(client, gid, "red", "(drop 1)", view["step"])
    assert not (view["terminal"] and view["goals"]["red"] == 100)  # the computer blocked the column


@needs_corpus
def test_the_catalog_puts_the_best_games_first_and_hides_test_sheets(client: TestClient) -> None:
    from ggp.web.curation import FEATURED, HIDDEN

    games = client.app.state.manager.games  # type: ignore[attr-defined]
    sheets = games.sheets()
    assert [e.key[6:] for e in sheets[: len(FEATURED)]] == [s for s in FEATURED if (CORPUS / f"{s}.kif").is_file()]
    by_stem = {e.key[6:]: e for e in sheets}
    assert by_stem["stateSpaceLarge"].hidden and not by_stem["connectFour"].hidden
    for stem in ("connectFour", "3pConnectFour", "buttons", "connectFourSimultaneous"):  # read cheaply
        game = games.load(f"sheet:{stem}")
        assert by_stem[stem].players == len(game.roles), stem
    assert by_stem["connectFour"].moves == "turns" and by_stem["connectFourSimultaneous"].moves == "together"
    page = client.get("/sheets").text
    assert page.count("data-hidden") == len([s for s in HIDDEN if (CORPUS / f"{s}.kif").is_file()])
    assert 'id="catalog-search"' in page and 'data-players="2" data-moves="turns"' in page
    # the home page lists the featured games, with their boards once drawn aside
    assert "More two-player games" in client.get("/").text
    from ggp.web.pages import featured_picture

    games.draw_featured(featured_picture, count=2)
    home = client.get("/").text
    assert home.count('class="thumb"') == 2 and 'href="/sheets/sheet%3AconnectFour"' in home


def test_take_back_a_move_against_the_computer(client: TestClient) -> None:
    view = play(client, game="amazons_8x8", mode="computer", level="easy", side="white")
    gid = view["id"]
    r = client.post(f"/api/games/{gid}/takeback", json={"role": "white"})
    assert r.status_code == 409 and "no move to take back" in r.json()["detail"]
    first = view["state"]
    move(client, gid, "white", "(move 1 3 1 4)", 0)
    after = move(client, gid, "white", "(fire 2 5)", 1)
    after = wait(client, gid)  # the computer's move and arrow
    assert after["step"] == 4 and after["awaiting"] == ["white"]
    back = client.post(f"/api/games/{gid}/takeback", json={"role": "white"})
    assert back.status_code == 200, back.text
    view = back.json()
    # both halves of the turn are gone: white's move and arrow, and the computer's reply
    assert view["step"] == 0 and view["state"] == first and view["moves"] == [] and view["awaiting"] == ["white"]
    assert client.get(f"/api/games/{gid}/record").json()["steps"] == 0  # and so is the stored history
    again = move(client, gid, "white", "(move 1 3 1 5)", 0)
    assert again["step"] == 1 and again["turns"][0]["plies"][0]["text"] == "a3-a5"
    stranger = TestClient(client.app, base_url=BASE)
    assert stranger.post(f"/api/games/{gid}/takeback", json={"role": "white"}).status_code == 403
    friends = play(client, game="wallmaze", mode="friend")["id"]
    refused = client.post(f"/api/games/{friends}/takeback", json={"role": "white"})
    assert refused.status_code == 400 and "against the computer" in refused.json()["detail"]


def test_a_game_reads_as_text_beside_its_json(client: TestClient) -> None:
    gid, _ = first_amazons_turn(client)
    client.post(f"/api/games/{gid}/resign", json={"role": "white"})
    r = client.get(f"/games/{gid}/record.txt")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    lines = r.text.splitlines()
    assert lines[0] == f"Amazons 8x8 · game {gid}" and lines[1] == "white: Human · black: Human"
    assert "Result: White resigned: black won" in lines
    assert lines[-1] == "1. white a3-a4/b5  black a6-a5/a6"
    assert client.get("/games/nosuchgame/record.txt").status_code == 404


def test_a_finished_game_is_reviewed_by_the_engine(client: TestClient) -> None:
    gid = play(client, game="wallmaze", mode="watch")["id"]
    r = client.get(f"/api/games/{gid}/review")
    final = wait(client, gid)
    if not final["terminal"]:
        assert r.status_code == 409  # not over yet: nothing to review
    r = client.get(f"/api/games/{gid}/review")
    assert r.status_code == 200, r.text
    rev = r.json()
    values = rev["values"]
    assert rev["role"] == "white" and len(values) == final["step"] + 1 and all(0 <= v <= 100 for v in values)
    assert values[-1] == final["goals"]["white"]  # the last position is the result itself
    for k in rev["swings"]:  # the largest moves of the estimate, each at least 10 points
        assert abs(values[k] - values[k - 1]) >= 10
        assert f'data-step="{k}"' in rev["svg"]
    assert client.get(f"/api/games/{gid}/review").json() == rev  # the same review again
    assert "the engine is reviewing" in client.get(f"/games/{gid}/replay").text


def test_continue_a_game_from_any_position_against_the_computer(client: TestClient) -> None:
    gid, view = first_amazons_turn(client)
    early = client.post("/api/play", json={"game": "amazons_8x8", "from_game": gid, "from_step": 2})
    assert early.status_code == 400 and "is still being played: continue from it once it is over" in early.text
    assert 'id="continue"' not in client.get(f"/games/{gid}/replay").text  # no form on a game being played
    assert client.post(f"/api/games/{gid}/resign", json={"role": "white"}).status_code == 200
    source = client.get(f"/api/games/{gid}/record").json()
    # from step 2 (white's move and arrow made), as black: the computer plays white from there on
    r = client.post(
        "/api/play",
        json={
            "game": "amazons_8x8",
            "mode": "computer",
            "level": "easy",
            "side": "black",
            "from_game": gid,
            "from_step": 2,
        },
    )
    assert r.status_code == 201, r.text
    new = r.json()
    assert new["id"] != gid and new["step"] == 2 and new["mine"] == ["black"] and new["awaiting"] == ["black"]
    assert [m["joint"] for m in new["moves"]] == [m["joint"] for m in view["moves"][:2]]
    assert new["turns"][0]["plies"][0]["text"] == "a3-a4/b5"
    assert new["opened_from"] == {"id": gid, "steps": 2}
    record = client.get(f"/api/games/{new['id']}/record").json()
    assert record["steps"] == 2 and record["web"]["opened_from"] == {"id": gid, "steps": 2}
    assert (
        f'Continued from <a href="/games/{gid}/replay">game #{gid}</a> after its step 2'
        in client.get(f"/games/{new['id']}").text
    )
    # black plays on in the new game; the game it came from is as it was
    moved = move(client, new["id"], "black", "(move 1 6 1 5)", 2)
    assert moved["step"] == 3
    # black takes its move back, but not the moves the game opened with: they are not black's
    back = client.post(f"/api/games/{new['id']}/takeback", json={"role": "black"})
    assert back.status_code == 200 and back.json()["step"] == 2
    again = client.post(f"/api/games/{new['id']}/takeback", json={"role": "black"})
    assert again.status_code == 409 and "no move to take back" in again.text
    assert client.get(f"/api/games/{gid}/record").json() == source
    # from the start (step 0) is a new game; the form on the replay page does the same
    assert play(client, game="amazons_8x8", from_game=gid, from_step=0)["step"] == 0
    page = client.get(f"/games/{gid}/replay").text
    assert 'name="from_game" value="' + gid + '"' in page and "Continue from step" in page
    form = client.post(
        "/play",
        data={
            "game": "amazons_8x8",
            "mode": "computer",
            "level": "easy",
            "side": "white",
            "from_game": gid,
            "from_step": "4",
        },
        follow_redirects=False,
    )
    assert form.status_code == 303
    assert client.get(form.headers["location"].replace("/games/", "/api/games/")).json()["step"] == 4


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"from_game": "ffffffffffff"}, "no match 'ffffffffffff' to continue from"),
        ({"from_game": "not an id"}, "no match 'not an id' to continue from"),
        ({"game": "amazons_10x10"}, "is a game of amazons_8x8, not of amazons_10x10"),
        ({"from_step": 9}, "has 4 steps: continue from step 0 to 4"),
        ({"from_step": -1}, "greater than or equal to 0"),
    ],
)
def test_a_position_that_cannot_be_continued_is_refused_in_words(
    client: TestClient, change: dict[str, Any], said: str
) -> None:
    gid, _ = first_amazons_turn(client)
    assert client.post(f"/api/games/{gid}/resign", json={"role": "white"}).status_code == 200
    before = client.get("/api/games").json()
    body = {"game": "amazons_8x8", "mode": "computer", "from_game": gid, "from_step": 2} | change
    r = client.post("/api/play", json=body)
    assert r.status_code == 400 and said in r.text
    assert client.get("/api/games").json() == before  # no game was made


def test_a_finished_position_cannot_be_continued() -> None:
    game = ggp.load("amazons_8x8")
    state, opening = game.initial_state(), []
    rng = random.Random(5)
    while not game.is_terminal(state):
        joint = [rng.choice(list(game.legal_moves(state, r))).text for r in game.roles]
        opening.append(tuple(joint))
        state = game.next_state(state, joint)
    with pytest.raises(ValueError, match=f"the game is over after step {len(opening)}: continue from an earlier step"):
        play_opening(game, opening, None)
    assert len(play_opening(game, opening[:-1], "abc")) == len(opening) - 1
    with pytest.raises(ValueError, match=r"step 1: .*not a legal move"):
        play_opening(game, [("(move 1 1 8 8)", "noop")], None)


def test_the_last_step_is_marked_on_a_familys_own_board_and_its_legal_moves_read_as_words(
    client: TestClient,
) -> None:
    view = play(client, game="wallmaze", mode="friend")
    assert view["last_cells"] == []  # nothing played yet
    assert [m["readable"] for m in view["legal"]["white"]] == ["east", "wait"]  # the buttons' words, KIF on hover
    friend = TestClient(client.app, base_url=BASE)
    friend.post(f"/api/games/{view['id']}/seats/black")
    move(client, view["id"], "white", "(move 2 5 3 5)", 0)
    after = move(friend, view["id"], "black", "noop", 0)
    # white went from (2, 5) to (3, 5); black stayed where it was: only white's two squares are marked
    assert after["step"] == 1 and after["last_cells"] == [[2, 5], [3, 5]]
    # both had a choice, so the step is one turn of both moves, black's wait included
    assert [(p["role"], p["text"]) for p in after["turns"][0]["plies"]] == [("white", "east"), ("black", "wait")]


@needs_corpus
def test_the_catalog_tells_sheets_with_a_board_from_the_others(client: TestClient) -> None:
    from ggp.web.curation import board_of

    games = client.app.state.manager.games  # type: ignore[attr-defined]
    traces = CORPUS.parent / "traces"
    # seen without grounding: a few prover steps of the sheet's first traced game (Connect Four starts empty)
    for stem, board in [("connectFour", True), ("speedChess", True), ("buttons", False), ("nim1", False)]:
        assert board_of((CORPUS / f"{stem}.kif").read_text(), traces / f"{stem}.jsonl") is board, stem
        assert (ui.grid_of(games.load(f"sheet:{stem}")) is not None) is board, stem  # as the grounded game says
    assert board_of("(role a) (init (p 1)) (<= (legal a go) (true (p ?x)) (q ?x))", traces / "none.jsonl") is False
    assert board_of("(role a) (init (p 1)", traces / "none.jsonl") is None  # not a sheet: nothing known
    page = client.get("/sheets").text
    assert 'id="catalog-board"' in page and 'data-board=""' in page  # not looked at yet: every filter keeps it
    games.learn_boards()
    page = client.get("/sheets").text
    assert re.search(r'data-key="sheet:connectFour"[^>]*data-board="1"', page)
    assert re.search(r'data-key="sheet:nim1"[^>]*data-board="0"', page)
