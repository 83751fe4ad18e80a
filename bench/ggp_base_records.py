"""ggp-base reads the web app's match records: finished arena and web matches, exported in ggp-base's match
JSON, are read by ggp-base's own ``Match`` class and replayed on its prover.

    python bench/ggp_base_records.py                       # 2 arena matches per game, and one web match
    python bench/ggp_base_records.py --matches 3 --ggp-base /work/ggp-base

Needs an existing ggp-base build, made by ggp-base's own instructions (``--ggp-base`` or ``$GGP_BASE``,
default /work/ggp-base), and a JDK: the script compiles our bench/ggp_base/ReadMatch.java against it into
build/ggp_base_bench (bench/ggp_base_build.py). It starts the web app in this process
(its arena on loopback), registers two ``ggp serve``-like players (PlayerService, random moves, in this
process), and plays arena matches on a built-in game, two corpus sheets from the server's sheet directory and
an uploaded sheet added to the arena's games; plus one web match (agents against each other) converted the
same way. Each record is written under build/ggp_base_records/ with its rule sheet, read by ReadMatch (the
``Match(String json, Game, String)`` constructor, then ``toJSON()`` read back), replayed move by move on
``ProverStateMachine`` (each move legal, each state equal to the record's, the goals at the end), and one JSON
line per match is appended to bench/results/ggp_base_records.jsonl. A benchmark-like check, not a test: CI
machines have no Java.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from ggp_base_build import HELP, compile_ours, default_dir

import ggp
from ggp.gdl import rules_text
from ggp.match.record import MatchRecord
from ggp.protocol import GGPServer, PlayerConfig, PlayerService
from ggp.web.app import create_app
from ggp.web.arena import ggp_base_match
from ggp.web.limits import Limits

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "kif"
RESULTS = ROOT / "bench" / "results" / "ggp_base_records.jsonl"
OUT = ROOT / "build" / "ggp_base_records"
#: Arena games: a built-in game, corpus sheets of the server's directory; an upload is added to them.
GAMES = ("wallmaze", "sheet:connectFour", "sheet:breakthroughSmall")
UPLOAD = "tictactoe2"


def rules_of(key: str, upload_key: str, upload_text: str) -> str:
    """The rule sheet the host sent for a catalog key (what ggp-base must read the record against)."""
    if key == upload_key:
        return upload_text
    if key.startswith("sheet:"):
        return (CORPUS / f"{key[6:]}.kif").read_text()
    return rules_text(key)


def finished(client: TestClient, match_id: str) -> dict[str, Any]:
    view = client.get(f"/api/arena/matches/{match_id}").json()
    while view["status"] == "running":
        view = client.get(f"/api/arena/matches/{match_id}", params={"version": view["version"], "wait": 30}).json()
    return dict(view)


def play_matches(client: TestClient, per_game: int, keys: list[str]) -> list[str]:
    """Matchmaking rounds until each game has ``per_game`` finished matches; their ids."""
    done: dict[str, list[str]] = {k: [] for k in keys}
    for _ in range(8 * per_game * len(keys)):
        if all(len(v) >= per_game for v in done.values()):
            break
        for match_id in client.portal.call(client.app.state.arena.round):  # type: ignore[union-attr,attr-defined,call-arg]
            view = finished(client, match_id)
            if view["status"] == "over" and view["game"] in done:
                done[view["game"]].append(match_id)
            else:
                print(f"match {match_id} of {view['game']}: {view['status']} {view.get('error', '')}", flush=True)
    return [m for ids in done.values() for m in ids[:per_game]]


def web_match(client: TestClient) -> tuple[str, dict[str, Any], str]:
    """One web match between agents (watch mode) to its end, in ggp-base's JSON; its id, document and game."""
    view = client.post("/api/play", json={"game": "sheet:tictactoe2", "mode": "watch", "level": "easy"}).json()
    while not view["terminal"]:
        view = client.get(f"/api/games/{view['id']}", params={"version": view["version"], "wait": 30}).json()
    doc = client.get(f"/api/games/{view['id']}/record").json()
    record = MatchRecord.from_dict({k: v for k, v in doc.items() if k not in ("id", "web")})
    game = ggp.load(CORPUS / "tictactoe2.kif")
    started = time.time()
    names = [f"web {p}" for p in record.agents]
    return view["id"], ggp_base_match(game, record, view["id"], names, started), "sheet:tictactoe2"


def read_with_ggp_base(cp: str, kif: Path, doc: Path) -> dict[str, Any]:
    out = subprocess.run(["java", "-cp", cp, "ReadMatch", str(kif), str(doc)], capture_output=True, text=True)
    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    try:
        return dict(json.loads(line))
    except ValueError:
        return {"problems": [f"ReadMatch failed (exit {out.returncode}): {out.stderr.strip()[-600:]}"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ggp-base", default=default_dir(), help=f"a ggp-base checkout, built ({HELP})")
    ap.add_argument("--matches", type=int, default=2, help="finished arena matches per game")
    args = ap.parse_args()
    cp = compile_ours(Path(args.ggp_base), "ReadMatch")
    scratch = Path(tempfile.mkdtemp(prefix="ggp-base-records-"))
    OUT.mkdir(parents=True, exist_ok=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    limits = Limits(
        arena_allow=("127.0.0.0/8",),
        arena_games=GAMES,
        arena_agents=("random",),
        arena_matches=1,
        arena_start_clock=10.0,
        arena_play_clock=1.0,
        max_agent_time=0.2,
    )
    servers = [
        GGPServer("127.0.0.1", 0, PlayerService(PlayerConfig(spec="random", name=f"random{i}", seed=i)).handle).start()
        for i in range(2)
    ]
    upload_text = (CORPUS / f"{UPLOAD}.kif").read_text()
    exported: list[tuple[str, str, dict[str, Any]]] = []
    try:
        app = create_app(scratch / "web.sqlite3", limits=limits, sheets=CORPUS, arena=False)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            for i, s in enumerate(servers):
                r = client.post("/api/arena/players", json={"name": f"random{i}", "url": s.url, "contact": "bench"})
                assert r.status_code == 201, r.text
            upload_key = client.post("/api/sheets", json={"name": "Tic-tac-toe (uploaded)", "rules": upload_text})
            upload_key = upload_key.json()["name"]
            added = client.post("/api/arena/games", json={"game": upload_key})
            assert added.status_code == 201, added.text
            keys = [*GAMES, upload_key]
            for match_id in play_matches(client, args.matches, keys):
                doc = client.get(f"/api/arena/matches/{match_id}/ggp-base").json()
                game_key = client.get(f"/api/arena/matches/{match_id}").json()["game"]
                exported.append((match_id, rules_of(game_key, upload_key, upload_text), doc | {"_game": game_key}))
            web_id, doc, web_game = web_match(client)
            exported.append((web_id, rules_of(web_game, upload_key, upload_text), doc | {"_game": "web " + web_game}))
    finally:
        for s in servers:
            s.close()
    failures = 0
    for match_id, rules, doc in exported:
        game_key = doc.pop("_game")
        kif, path = OUT / f"{match_id}.kif", OUT / f"{match_id}.json"
        kif.write_text(rules)
        path.write_text(json.dumps(doc))
        said = read_with_ggp_base(cp, kif, path)
        row = {"game": game_key, "match": match_id, "when": time.strftime("%Y-%m-%dT%H:%M:%S"), **said}
        failures += bool(said.get("problems"))
        with RESULTS.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
    print(f"{len(exported)} records, {len(exported) - failures} read and replayed by ggp-base without a problem")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
