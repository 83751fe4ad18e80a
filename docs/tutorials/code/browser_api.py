"""Play any sheet in the browser, or through the same JSON API the page uses: upload a rule sheet, start a
game against the computer, and play it to the end. Here the app runs in this process (FastAPI's test
client); `ggp web` serves the same app on http://127.0.0.1:8000, where /docs describes every route."""

import tempfile
import warnings
from importlib.resources import files
from pathlib import Path

with warnings.catch_warnings():  # the test client warns about an old import path inside starlette
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ggp.web.app import create_app


def main() -> dict:
    app = create_app(Path(tempfile.mkdtemp()) / "web.sqlite3", arena=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        sheet = (files("ggp.gdl") / "tictactoe.kif").read_text()
        game = client.post("/api/sheets", json={"name": "My tic-tac-toe", "rules": sheet}).json()
        print("uploaded:", game["name"], "roles", game["roles"], "engine", game["engine"])
        # You play xplayer; the computer (a random mover) plays oplayer. The seat's token comes back as a cookie.
        match = client.post(
            "/api/games", json={"game": game["name"], "players": {"xplayer": "human", "oplayer": "random"}}
        ).json()
        while True:
            view = client.get(f"/api/games/{match['id']}", params={"wait": 5}).json()
            if view["status"] != "playing":
                break
            legal = client.get(f"/api/games/{match['id']}/legal", params={"role": "xplayer"}).json()["moves"]
            if "xplayer" in view["awaiting"]:  # our turn: play the first legal move
                move = legal[0]["move"]
                client.post(
                    f"/api/games/{match['id']}/moves", json={"role": "xplayer", "move": move, "step": view["step"]}
                )
        print("result:", view["result"], "goals", view["goals"])
        return view


if __name__ == "__main__":
    main()
