"""Rule sheets written to hurt, through every door that takes a sheet: ``ggp.load_text``, ``ggp info``, a
``ggp serve`` START, the web upload and the arena's games.

Each sheet gets a clear error (a :class:`~ggp.gdl.GDLError` whose message says what is wrong) or a game that
plays, in bounded time and memory (every process that loads one runs under a 4 GB address-space limit), and
the process that took it (the player, the web server) goes on serving.
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import select
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: Address space of every process that loads a hostile sheet (the interpreter and numba take ~1.5 GB of it).
MEMORY = 4 * 1024**3
#: Seconds any one door may take over any one sheet.
SECONDS = 60.0

GOOD_TAIL = "(init s) (<= (legal p go) (true s)) (<= (next t) (does p go)) (<= terminal (true t)) (goal p 100)"


def exponential() -> str:
    """A move per 6-tuple of 40 numbers: 4 billion moves (and a relation doubling at each of 30 levels)."""
    nums = " ".join(f"(n {i})" for i in range(40))
    return (
        f"(role p) {nums} (init s) (<= (legal p (m ?a ?b ?c ?d ?e ?f)) (true s) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e)"
        " (n ?f)) (<= (next t) (does p (m 1 2 3 4 5 6))) (<= terminal (true t)) (goal p 100)"
    )


def deep_nesting() -> str:
    return "(role p) " + GOOD_TAIL + " (f " + "(g " * 100_000 + "x" + ")" * 100_001


def huge_arity() -> str:
    args = " ".join(f"a{i}" for i in range(1000))
    pattern = " ".join(f"?v{i}" for i in range(1000))
    return f"(role p) (wide {args}) (<= (legal p (go ?v7)) (true s) (wide {pattern})) " + GOOD_TAIL.replace(
        "(<= (legal p go) (true s))", ""
    ).replace("(does p go)", "(does p (go a7))")


def enormous_numbers() -> str:
    big = "1" + "0" * 100
    return (
        f"(role p) (init s) (<= (legal p go) (true s)) (<= (next t) (does p go)) (<= terminal (true t)) (goal p {big})"
    )


def enormous_numbers_as_symbols() -> str:
    big = "9" * 100_000
    return f"(role p) (score {big}) " + GOOD_TAIL


def cyclic_definitions() -> str:
    """Relations defined by each other only, and a function term recursion without end."""
    return (
        "(role p) (<= (a ?x) (b ?x)) (<= (b ?x) (a ?x)) (seed z) (<= (c z) (seed z)) (<= (c (f ?x)) (c ?x))"
        " (init s) (<= (legal p (go ?x)) (true s) (c ?x)) (<= (next t) (does p (go z))) (<= terminal (true t))"
        " (goal p 100)"
    )


def unstratified() -> str:
    return "(role p) (<= (win p) (not (lose p))) (<= (lose p) (not (win p))) " + GOOD_TAIL


def goalless_terminal() -> str:
    return "(role p) (role q) (init s) (<= (legal ?r go) (role ?r) (true s)) (<= (next t) (does p go)) (<= terminal (true t)) (goal p 100)"


def duplicate_roles() -> str:
    return "(role p) (role p) " + GOOD_TAIL


def whitespace() -> str:
    return "(role p) " + " \n\t" * (10 * 1024 * 1024 // 3) + GOOD_TAIL


def non_utf8() -> bytes:
    return b"(role p) (init (s \xff\xfe\xc3\x28)) " + GOOD_TAIL.encode()


def surrogates() -> str:
    return "(role p) (init (s \udcff)) " + GOOD_TAIL


def nul_bytes() -> str:
    return "(role p) (init (s\x00)) " + GOOD_TAIL


def slow_propnet(n: int = 220) -> str:
    """A relation composed with itself: about n^3/6 rule instances over n^2/2 atoms (a propnet of a million
    gates and more), though each state holds n facts and a move's next state takes n lookups."""
    chain = " ".join(f"(init (c {i} {i + 1}))" for i in range(n))
    return (
        f"(role p) {chain} (legal p go) (<= (next (c ?a ?b)) (true (c ?a ?x)) (true (c ?x ?b)))"
        f" (<= terminal (true (c 0 8))) (goal p 100)"
    )


@dataclass(frozen=True)
class Hostile:
    name: str
    make: Callable[[], str | bytes]
    #: A regular expression the error must match, or None: the sheet loads and plays (on either reasoner).
    error: str | None
    #: The error comes in play, not at load (a door that only loads the sheet takes it).
    in_play: bool = False


HOSTILE = [
    # goes to the prover, whose first question (4 billion legal moves) gives up at its bound
    Hostile("exponential grounding", exponential, r"gave up", in_play=True),
    Hostile("100k-deep nesting", deep_nesting, r"nests? (parentheses )?more than \d+ deep"),
    Hostile("1000-arity relation", huge_arity, None),
    Hostile("10^100 goal", enormous_numbers, r"goal value"),
    Hostile("100k-digit number", enormous_numbers_as_symbols, r"longer than"),
    Hostile("cyclic definitions", cyclic_definitions, r"ever larger terms", in_play=True),
    Hostile("unstratified negation", unstratified, r"unstratified negation"),
    Hostile("terminal state without goals", goalless_terminal, r"no 'goal' rule .*role q"),
    Hostile("duplicate roles", duplicate_roles, r"declared twice"),
    Hostile("10 MB whitespace", whitespace, None),
    Hostile("non-UTF-8 bytes", non_utf8, r"UTF-8"),
    Hostile("lone surrogates", surrogates, r"UTF-8|not text"),
    Hostile("NUL bytes", nul_bytes, r"NUL"),
    Hostile("propnet for minutes", slow_propnet, None),
]
IDS = [h.name for h in HOSTILE]


def text_of(h: Hostile) -> str:
    """The sheet as text (a door that takes bytes decodes them as a server would: invalid bytes kept as
    surrogates)."""
    made = h.make()
    return made.decode("utf-8", "surrogateescape") if isinstance(made, bytes) else made


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_capped(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    began = time.monotonic()
    done = subprocess.run(
        args, input=stdin, capture_output=True, timeout=SECONDS + 30, preexec_fn=limit_memory, check=False
    )
    assert time.monotonic() - began < SECONDS + 30
    return done


# --- ggp.load_text ----------------------------------------------------------------------------------------------
LOAD = r"""
import json, resource, sys, time
from ggp.gdl import GDLError, load_text
data = sys.stdin.buffer.read()
text = data.decode("utf-8", "surrogateescape")
began = time.monotonic()
out = {}
try:
    game = load_text(text, "hostile")
    out["engine"] = game.engine
    state = game.initial_state()
    steps = 0
    while not game.is_terminal(state) and steps < 3:
        state = game.next_state(state, [game.legal_moves(state, r)[0] for r in game.roles])
        steps += 1
    out["steps"] = steps
except GDLError as exc:
    out["error"] = str(exc)[:2000]
    out["type"] = type(exc).__name__
out["seconds"] = time.monotonic() - began
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


@pytest.mark.parametrize("h", HOSTILE, ids=IDS)
def test_load_text(h: Hostile) -> None:
    made = h.make()
    data = made if isinstance(made, bytes) else made.encode("utf-8", "surrogatepass")
    done = run_capped([sys.executable, "-c", LOAD], data)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    out = json.loads(done.stdout.decode().strip().splitlines()[-1])
    check(h, out.get("error"), out)
    assert out["seconds"] < SECONDS and out["peak_mb"] < MEMORY / 1024**2


def check(h: Hostile, error: str | None, context: Any) -> None:
    if h.error is None:
        assert error is None, (h.name, context)
    else:
        assert error is not None and re.search(h.error, error), (h.name, context)


# --- ggp info ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("h", HOSTILE, ids=IDS)
def test_ggp_info(h: Hostile, tmp_path: Path) -> None:
    made = h.make()
    sheet = tmp_path / "hostile.kif"
    sheet.write_bytes(made if isinstance(made, bytes) else made.encode("utf-8", "surrogatepass"))
    done = run_capped([sys.executable, "-m", "ggp", "info", str(sheet)])
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err[-3000:]
    if h.error is None or h.in_play:
        assert done.returncode == 0, err[-3000:]
    else:
        assert done.returncode != 0 and re.search(h.error, err), err[-3000:]


# --- ggp serve: START -------------------------------------------------------------------------------------------
def post(port: int, body: bytes, timeout: float = SECONDS) -> tuple[int, str]:
    head = f"POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # answered (and closed) before reading everything
            sock.sendall(head + body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    reply = b"".join(chunks)
    top, _, rest = reply.partition(b"\r\n\r\n")
    return int(top.split(b" ", 2)[1]), rest.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], int, Path]]:
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ggp", "serve", "random", "--port", "0", "--name", "target", "--seed", "1"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            preexec_fn=limit_memory,
        )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 120)  # a guard against a hang, not a wait
        assert ready, log.read_text()
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
        assert found, log.read_text()
        port = int(found.group(1))
        # as a game manager does, wait for the warm-up to end (INFO busy while it compiles) before any START
        began = time.monotonic()
        while post(port, b"(INFO)")[1] != "((name target) (status available))":
            assert proc.poll() is None and time.monotonic() - began < 900, log.read_text()  # a guard, not a wait
            time.sleep(0.2)
        yield proc, port, log
        assert proc.poll() is None, "ggp serve died: " + log.read_text()[-3000:]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.mark.parametrize("h", HOSTILE, ids=IDS)
def test_ggp_serve_start(h: Hostile, player: tuple[subprocess.Popen[str], int, Path]) -> None:
    proc, port, log = player
    made = h.make()
    rules = made if isinstance(made, bytes) else made.encode("utf-8", "surrogatepass")
    match = f"h{abs(hash(h.name)) % 10**8}"
    began = time.monotonic()
    status, body = post(port, b"(START " + match.encode() + b" p (" + rules + b") 30 5)")
    if status == 200:
        assert body.lower() == "ready"
        # the preparation (parse, ground, build) goes on until the first move is due: PLAY says how it ended
        try:
            status, body = post(port, f"(PLAY {match} NIL)".encode())
            if h.error is None:
                assert status == 200, body
            elif h.in_play and body.lower() == "nil":
                # what gives up in play may first outlast the play clock: no move, said within it, and why
                assert status == 200 and "could not be listed within the clock" in log.read_text(), body
            else:
                assert (status == 400 and re.search(h.error, body)) or "cannot play" in body, body
        finally:
            assert post(port, f"(ABORT {match})".encode())[0] == 200  # the player is free for the next sheet
    else:
        # refused at the door: too large (413) or not a message / not GDL (400), saying why
        assert status in (400, 413), (status, body)
        assert (h.error is None and re.search(r"larger than|at most", body)) or (
            h.error is not None and (re.search(h.error, body) or re.search(r"UTF-8|larger than", body))
        ), body
    assert time.monotonic() - began < SECONDS + 40
    assert proc.poll() is None
    assert post(port, b"(INFO)") == (200, "((name target) (status available))")


# --- the web upload and the arena -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from ggp.web.app import create_app
    from ggp.web.limits import Limits

    limits = Limits(max_agent_time=0.2, arena_agents=(), arena_games=(), arena_uploads=len(HOSTILE))
    db = tmp_path_factory.mktemp("web") / "web.sqlite3"
    with TestClient(create_app(db, limits=limits, arena=False), base_url="http://127.0.0.1") as client:
        yield client


@pytest.mark.parametrize("h", HOSTILE, ids=IDS)
def test_web_upload_and_arena(h: Hostile, web: Any) -> None:
    began = time.monotonic()
    made = h.make()
    if isinstance(made, bytes) or (not text_of(h).isprintable() and "\udcff" in text_of(h)):
        # JSON cannot carry these: the bytes go as they are, as a hostile client sends them
        raw = made if isinstance(made, bytes) else made.encode("utf-8", "surrogatepass")
        body = b'{"name": "x", "rules": "' + raw.replace(b'"', b"'") + b'"}'
        r = web.post("/api/sheets", content=body, headers={"content-type": "application/json"})
    else:
        r = web.post("/api/sheets", json={"name": h.name, "rules": made})
    if (h.error is None or h.in_play) and r.status_code == 201:
        key = r.json()["name"]
        added = web.post("/api/arena/games", json={"game": key})
        assert added.status_code == 201, added.text
    else:
        assert r.status_code in (400, 413, 422), r.text
        detail = r.text
        assert (h.error is None and re.search(r"larger than|at most|too large|over the limit", detail)) or (
            h.error is not None
            and re.search(h.error + r"|UTF-8|larger than|at most|over the limit|error parsing the body", detail)
        ), detail
    assert time.monotonic() - began < SECONDS
    assert web.get("/api/games", params={"limit": 1}).status_code == 200
