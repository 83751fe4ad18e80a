"""Host a match against a GGP player over HTTP: start `ggp serve` (any GGP player works the same way,
ggp-base's included), wait until it says it is ready, and referee a match with `ggp host`."""

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from ggp.match import MatchRecord


def info(url: str) -> str:
    """The player's answer to the GGP INFO message, e.g. ``((name alice) (status available))``."""
    reply = httpx.post(url, content="(INFO)", headers={"Content-Type": "text/acl"}, timeout=5)
    return reply.text


def main() -> dict:
    ggp = [sys.executable, "-m", "ggp"]
    # --port 0 takes any free port; the player prints the address it listens on.
    player = subprocess.Popen(
        [*ggp, "serve", "random", "--port", "0", "--name", "alice"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = player.stdout.readline()
        url = re.search(r"http://\S+/", line).group(0)
        # A player answers INFO with `busy` while it is still compiling; a game manager waits for `available`.
        deadline = time.monotonic() + 600
        while "available" not in info(url):
            if time.monotonic() > deadline:
                raise SystemExit("the player did not become available within 10 minutes")
            time.sleep(0.5)
        out = Path(tempfile.mkdtemp()) / "wallmaze.json"
        subprocess.run(
            [
                *ggp,
                "host",
                "wallmaze",
                "--player",
                f"white={url}",
                "--player",
                "black=random",
                "--startclock",
                "10",
                "--playclock",
                "1",
                "--seed",
                "7",
                "--out",
                str(out),
                "--quiet",
            ],
            check=True,
        )
        record = json.loads(out.read_text())
        faults = list(MatchRecord.load(out).all_faults())  # the record as an object: moves, faults, goals
        print(f"goals {record['goals']} after {record['steps']} steps, {len(faults)} faults")
        return record
    finally:
        player.terminate()
        player.wait(timeout=30)


if __name__ == "__main__":
    main()
