"""GDL-II sheets in the web app: each seat sees only its own view while a match is on, chance takes no seat and
is played by the referee, and everything is shown once the match is over (through FastAPI's TestClient)."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's TestClient prefers httpx2; httpx works the same
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ggp.agents.hidden import HiddenAgent
from ggp.gdl.examples import example_text
from ggp.web.app import create_app
from ggp.web.limits import Limits

BASE = "http://127.0.0.1"
#: Short agent clocks; a long start clock, since grounding a sheet on a loaded machine may take a while.
FAST = Limits(max_agent_time=0.2, agent_start_time=900.0)
CARDS = ("jack", "queen", "king")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(tmp_path / "web.sqlite3", limits=FAST, arena=False), base_url=BASE) as c:
        yield c


def upload(client: TestClient, name: str = "kuhn_poker", title: str = "Kuhn poker") -> str:
    r = client.post("/api/sheets", json={"name": title, "rules": example_text(name)})
    assert r.status_code == 201, r.text
    return str(r.json()["name"])


def get(client: TestClient, gid: str) -> dict[str, Any]:
    r = client.get(f"/api/games/{gid}", params={"wait": 30, "svg": True})
    assert r.status_code == 200, r.text
    return dict(r.json())


def text_of(view: Any) -> str:
    return json.dumps(view).lower()


def test_a_person_plays_kuhn_poker_against_an_agent_and_sees_only_its_own_card(client: TestClient) -> None:
    key = upload(client)
    info = client.get(f"/api/sheets/{key}").json()
    assert info["roles"] == ["first", "second"] and info["hidden_information"] is True  # chance takes no seat

    # chance is no seat: it cannot be given a player, taken, or moved for
    refused = client.post("/api/games", json={"game": key, "players": {"random": "human"}})
    assert refused.status_code == 400 and "chance" in refused.json()["detail"]

    r = client.post(
        "/api/games", json={"game": key, "players": {"first": "human", "second": "random"}, "agent_time": 0.2}
    )
    assert r.status_code == 201, r.text
    created = r.json()
    gid = created["id"]
    assert created["mine"] == ["first"] and list(created["tokens"]) == ["first"]
    assert created["roles"] == ["first", "second"] and set(created["seats"]) == {"first", "second"}
    assert "random" not in created["players"] and "random" not in created["names"]
    assert client.post(f"/api/games/{gid}/seats/random").status_code == 400

    api = client.app.state.api  # type: ignore[attr-defined]
    match = api.manager.matches[gid]
    assert isinstance(match.agents["second"], HiddenAgent)  # decides on its information, not on the state
    assert set(match.agents) == {"second"}

    watcher = TestClient(client.app, base_url=BASE)  # no seat: sees what is public only
    mine: list[dict[str, Any]] = [created]
    public: list[Any] = []
    pages: list[str] = []
    illegal_tried = False
    view = get(client, gid)
    for _ in range(10):  # a hand of Kuhn poker is at most 5 steps
        mine.append(view)
        public.append(get(watcher, gid))
        public.append(api.streams._show(match, svg=True))  # what the event streams send everyone
        if view["terminal"]:
            break
        # nor who has a choice now: that too can follow from a seat's percepts
        assert public[-2]["to_act"] == public[-2]["awaiting"] == [] and public[-2]["thinking"] == {}
        # every other way to the state or the moves is shut to the watcher while the match is on
        for path in (f"/api/games/{gid}/steps/{view['step']}", f"/api/games/{gid}/record", f"/games/{gid}/record.json"):
            assert watcher.get(path).status_code == 403, path
            assert client.get(path).status_code == 403, path  # and to a seat too: the record holds every card
        assert watcher.get(f"/api/games/{gid}/legal", params={"role": "first"}).status_code == 403
        assert client.get(f"/api/games/{gid}/legal", params={"role": "second"}).status_code == 403
        own = client.get(f"/api/games/{gid}/legal", params={"role": "first"})
        assert own.status_code == 200
        pages += [watcher.get(f"/games/{gid}").text, watcher.get(f"/games/{gid}/replay").text]
        pages += [watcher.get(f"/games/{gid}/record.txt").text, client.get(f"/games/{gid}/record.txt").text]
        own_page = client.get(f"/games/{gid}").text
        assert "your_card" in own_page  # the seat's own page shows its own card
        mine.append(json.loads(re.search(r'id="initial-view">(.*?)</script>', own_page, re.S)[1]))  # type: ignore[index]
        assert view["awaiting"] == ["first"], view
        legal = [m["move"] for m in view["legal"]["first"]]
        assert sorted(legal) == ["bet", "pass"] and [m["move"] for m in own.json()["moves"]] == legal
        assert "second" not in view["legal"]
        if not illegal_tried:  # a move that is not legal is refused as in any game, naming the legal ones
            bad = client.post(
                f"/api/games/{gid}/moves", json={"role": "first", "move": "(deal king)", "step": view["step"]}
            )
            assert bad.status_code == 400 and sorted(bad.json()["legal"]) == ["bet", "pass"]
            other = client.post(f"/api/games/{gid}/moves", json={"role": "second", "move": "bet", "step": view["step"]})
            assert other.status_code == 400
            chance = client.post(
                f"/api/games/{gid}/moves", json={"role": "random", "move": "noop", "step": view["step"]}
            )
            assert chance.status_code == 400 and "chance" in chance.json()["detail"]
            illegal_tried = True
        r = client.post(
            f"/api/games/{gid}/moves",
            params={"wait": 30, "svg": True},
            json={"role": "first", "move": "bet", "step": view["step"]},
        )
        assert r.status_code == 200, r.text
        view = r.json()
    assert illegal_tried and view["terminal"]

    final = get(watcher, gid)  # once over, everyone sees everything
    holds = {f: f for f in final["facts"] if f.startswith("(holds ")}
    first_card = next(c for c in CARDS if f"(holds first {c})" in holds)
    second_card = next(c for c in CARDS if f"(holds second {c})" in holds)
    assert final["state"] and final["svg"] and final["moves"] and set(final["information"]) == {"first", "second"}
    assert any(f"(your_card {second_card})" in line for line in final["information"]["second"])
    assert "random" in final["moves"][0]["joint"]  # the true history, chance's deals too
    assert watcher.get(f"/api/games/{gid}/steps/1").status_code == 200
    assert watcher.get(f"/api/games/{gid}/record").status_code == 200
    assert set(final["goals"]) == {"first", "second"} and "random" not in final["result"]

    # while the match was on: the seat saw its own card and never the other's; the watcher saw no card at all
    assert any(f"(your_card {first_card})" in text_of(v) for v in mine)
    for v in mine:
        if v["terminal"]:
            continue
        said = text_of(v)
        assert "holds" not in said and f"(your_card {second_card})" not in said, v
        assert v["state"] == {} and v["moves"] == [] and v["last_joint"] is None and v["turns"] == []
        assert set(v.get("information", {})) <= {"first"}
    for v in public:
        if v["terminal"]:
            continue
        said = text_of(v)
        assert not re.search(r"\b(jack|queen|king)\b", said), v
        assert "your_card" not in said and "holds" not in said and "(did " not in said
        assert v["legal"] == {} and v["information"] == {} and v.get("mine", []) == []
        assert v["state"] == {} and v["moves"] == [] and v["last_joint"] is None and v["notes"] == []
    for page in pages:
        assert "holds" not in page and f"(your_card {second_card})" not in page


def test_the_facts_show_the_seats_percepts_step_by_step(client: TestClient) -> None:
    key = upload(client, "montyhall", "Monty Hall")
    r = client.post("/api/games", json={"game": key, "players": {"candidate": "human"}, "agent_time": 0.2})
    assert r.status_code == 201, r.text
    view = r.json()
    gid = view["id"]
    assert view["family"] == "facts" and view["controls"] == "list" and view["hidden"] is True
    doors = sorted(m["move"] for m in view["legal"]["candidate"])
    assert doors == ["(choose 1)", "(choose 2)", "(choose 3)"]
    view = client.post(
        f"/api/games/{gid}/moves", params={"wait": 30}, json={"role": "candidate", "move": "(choose 1)", "step": 0}
    ).json()
    assert view["facts"][0] == "step 1: you played (choose 1)"
    assert re.fullmatch(r"step 2: you saw \(open_door [23]\)", view["facts"][1]), view["facts"]
    assert not any("car" in f for f in view["facts"])  # the state (where the car is) is not shown


def test_two_agents_play_a_gdl_ii_sheet_to_the_end_without_a_fault(client: TestClient) -> None:
    key = upload(client)
    r = client.post(
        "/api/games", json={"game": key, "players": {"first": "mcts", "second": "random"}, "agent_time": 0.2}
    )
    assert r.status_code == 201, r.text
    gid = r.json()["id"]
    view = get(client, gid)
    for _ in range(10):
        if view["terminal"]:
            break
        view = get(client, gid)
    record = client.get(f"/api/games/{gid}/record").json()
    assert record["terminal"] and [f for m in record["moves"] for f in m["faults"]] == []
    assert view["notes"] == [] and view["ended"] == "terminal"
    assert view["roles"] == ["first", "second"] and set(view["goals"]) == {"first", "second"}
    listed = next(g for g in client.get("/api/games").json()["games"] if g["id"] == gid)
    assert listed["players"] == {"first": "mcts", "second": "random"} and set(listed["goals"]) == {"first", "second"}


def test_a_match_reopened_after_a_restart_goes_on_with_each_seats_view(tmp_path: Path) -> None:
    db = tmp_path / "web.sqlite3"
    with TestClient(create_app(db, limits=FAST, arena=False), base_url=BASE) as before:
        key = upload(before)
        r = before.post(
            "/api/games", json={"game": key, "players": {"first": "human", "second": "mcts"}, "agent_time": 0.2}
        )
        assert r.status_code == 201, r.text
        gid = r.json()["id"]
        view = get(before, gid)
        assert view["step"] == 2 and view["awaiting"] == ["first"]  # the cards are dealt: first to act
        seen = view["information"]["first"]
        seats = before.cookies
    with TestClient(create_app(db, limits=FAST, arena=False), base_url=BASE, cookies=seats) as after:
        view = get(after, gid)
        assert view["mine"] == ["first"] and view["information"]["first"] == seen and view["state"] == {}
        for _ in range(5):  # the reopened agent decides on its role's information from the history
            if view["terminal"]:
                break
            r = after.post(
                f"/api/games/{gid}/moves",
                params={"wait": 30},
                json={"role": "first", "move": "pass", "step": view["step"]},
            )
            assert r.status_code == 200, r.text
            view = r.json() if r.json()["terminal"] or r.json()["awaiting"] else get(after, gid)
        assert view["terminal"]
        record = after.get(f"/api/games/{gid}/record").json()
        assert [f for m in record["moves"] for f in m["faults"]] == []
        assert [line for line in view["information"]["first"] if "your_card" in line] == seen[:1]


# --- in a browser: the play page lists what the seat did and saw ------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ggp.web.server import BackgroundServer

    with BackgroundServer(tmp_path_factory.mktemp("web") / "web.sqlite3", limits=FAST) as running:
        yield running


def test_the_play_page_lists_the_seats_percepts_and_the_state_once_over(server: Any, browser: Any) -> None:
    from conftest import watch_page

    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    expect.set_options(timeout=30_000)  # a page waits for the server's work, slower on a loaded machine
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors = watch_page(page)
    try:
        upload = context.request.post(
            f"{server.url}/api/sheets", data={"name": "Monty Hall", "rules": example_text("montyhall")}
        )
        assert upload.status == 201, upload.text()
        created = context.request.post(
            f"{server.url}/api/games",
            data={"game": upload.json()["name"], "players": {"candidate": "human"}, "agent_time": 0.2},
        )
        assert created.status == 201, created.text()
        page.goto(f"{server.url}/games/{created.json()['id']}")
        expect(page.locator("#facts-box h2")).to_have_text("What you know")
        expect(page.locator("#board svg.hidden-view")).to_have_count(1)
        page.get_by_role("button", name="(choose 1)").click()
        expect(page.locator("#facts li").first).to_have_text("step 1: you played (choose 1)")
        expect(page.locator("#facts")).to_contain_text("step 2: you saw (open_door")
        expect(page.locator("#facts")).not_to_contain_text("(car ")  # where the car is: not while on
        page.locator("#legal-moves button.move").first.click()
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#facts")).to_contain_text("(car ")  # over: the state is shown
        expect(page.locator("#facts")).to_contain_text("candidate: step 2: you saw (open_door")
    finally:
        context.close()
    assert not errors, f"errors on the pages visited: {errors}"


def test_two_people_in_browsers_each_see_their_own_card_as_the_other_moves(server: Any, browser: Any) -> None:
    from conftest import watch_page

    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    expect.set_options(timeout=30_000)  # a page waits for the server's work, slower on a loaded machine
    contexts, pages, errors = [], [], []
    for _ in range(2):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(60_000)
        contexts.append(context)
        pages.append(context.new_page())
        errors.append(watch_page(pages[-1]))
    first, second = pages
    try:
        request = contexts[0].request
        upload = request.post(
            f"{server.url}/api/sheets", data={"name": "Kuhn poker", "rules": example_text("kuhn_poker")}
        )
        assert upload.status == 201, upload.text()
        created = request.post(
            f"{server.url}/api/games",
            data={
                "game": upload.json()["name"],
                "players": {"first": "human", "second": "human"},
                "seats": ["first"],
                "agent_time": 0.2,
            },
        )
        assert created.status == 201, created.text()
        gid = created.json()["id"]
        assert contexts[1].request.post(f"{server.url}/api/games/{gid}/seats/second").status == 201
        first.goto(f"{server.url}/games/{gid}")
        second.goto(f"{server.url}/games/{gid}")
        expect(first.locator("#facts")).to_contain_text("step 1: you saw (your_card ")
        expect(second.locator("#facts")).to_contain_text("step 2: you saw (your_card ")
        expect(second.locator("#legal-moves button.move")).to_have_count(0)  # first's turn: second waits
        first.get_by_role("button", name="bet").click()
        # second learns of the bet through the event stream, which carries no card: its page asks for its view
        expect(second.locator("#facts")).to_contain_text("step 3: you saw (did first bet)")
        for page in pages:
            expect(page.locator("#facts")).not_to_contain_text("(holds ")
        second.get_by_role("button", name="pass").click()
        for page in pages:
            expect(page.locator("#result")).to_be_visible()
            expect(page.locator("#facts")).to_contain_text("(holds first ")
            expect(page.locator("#facts")).to_contain_text("(holds second ")
    finally:
        for context in contexts:
            context.close()
    assert not any(errors), f"errors on the pages visited: {errors}"
