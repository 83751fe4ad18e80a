"""Hostile input at the GGP doors: a real ``ggp serve`` on 127.0.0.1, and the host against hostile players.

Every case against the player ends with the player still answering INFO as
available; every match the host runs against hostile players finishes within
its clocks, with the faults recorded. Nothing here waits by sleeping: the
tests poll the player's log or the sockets with deadlines.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ggp.core.kif import parse_terms, term_text
from ggp.gdl import rules_text
from ggp.gdl.parser import parse_program
from ggp.gdl.sheet import GDLError, GDLLimitError, bounded
from ggp.match import MatchRecord
from ggp.protocol import GGPServer, Info, PlayerConfig, PlayerService, host_match
from ggp.protocol.messages import parse_message
from ggp.protocol.wire import MAX_BODY, read_request


# --- helpers ---------------------------------------------------------------------------------------------------
def post(port: int, body: bytes | str, *, timeout: float = 30.0) -> tuple[int, str]:
    """POST one message as a game manager does; returns the status and the body."""
    data = body.encode() if isinstance(body, str) else body
    head = f"POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: {len(data)}\r\n\r\n".encode()
    return split(exchange(port, head + data, timeout=timeout))


def exchange(port: int, data: bytes, *, half_close: bool = False, timeout: float = 30.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # the server may answer (and close) before reading everything
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def split(reply: bytes) -> tuple[int, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 "), reply[:200]
    return int(head.split(b" ", 2)[1]), body.decode()


def sheet(rules: str) -> str:
    """A rule sheet as START carries it: its sentences in one list."""
    return "(" + " ".join(term_text(t) for t in parse_terms(rules)) + ")"


def start(match_id: str, role: str, rules: str, start_clock: str = "5", play_clock: str = "2") -> str:
    return f"(START {match_id} {role} {rules} {start_clock} {play_clock})"


TICK = sheet("""
(role red) (role blue)
(init (count 0))
(succ 0 1) (succ 1 2)
(legal red tick) (legal blue tock)
(<= (next (count ?n)) (true (count ?m)) (succ ?m ?n))
(<= terminal (true (count 2)))
(goal red 100) (goal blue 0)
""")
WALLMAZE = sheet(rules_text("wallmaze"))


def joins_text(n: int = 100) -> str:
    """A sheet whose grounding tries n^5 rows and finds nothing: the grounder gives up at its 200 million join
    steps, 6 s on this project's idle machine (longer on a busy one), and the sheet goes to the prover. Each n
    is a sheet of its own (the ggp cache remembers that a sheet goes to the prover)."""
    facts = " ".join(f"(n {i})" for i in range(n))
    return (
        f"(role r) {facts} (<= (p ?a) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (distinct ?e ?e)) (init (s 0))"
        " (<= (legal r go) (true (s 0))) (<= (next (s 1)) (does r go) (p 1)) (<= terminal (true (s 1)))"
        " (goal r 100)"
    )


def joins_for_long(n: int = 100) -> str:
    return sheet(joins_text(n))


@dataclass
class Served:
    """A ``ggp serve`` subprocess: its port and its log."""

    proc: subprocess.Popen[str]
    port: int
    log: Path

    def available(self) -> None:
        """The player is alive, answers INFO and is free for a new match."""
        assert self.proc.poll() is None, f"ggp serve died: {self.log.read_text()[-2000:]}"
        assert post(self.port, "(INFO)") == (200, "((name abused) (status available))")

    def logged(self, pattern: str, within: float = 30.0, after: int = 0) -> str:
        """The first log line after offset ``after`` matching ``pattern``, waiting up to ``within`` seconds."""
        end = time.monotonic() + within
        while True:
            text = self.log.read_text()[after:]
            found = re.search(pattern, text)
            if found:
                return text[text.rfind("\n", 0, found.start()) + 1 : text.find("\n", found.end())]
            assert time.monotonic() < end, f"no log line matching {pattern!r} within {within} s:\n{text[-3000:]}"
            time.sleep(0.05)  # polling a file with a deadline

    def mark(self) -> int:
        return len(self.log.read_text())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ggp", "serve", "random", "--port", "0", "--name", "abused", "--seed", "1"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 120)  # a guard against a hang, not a wait
        assert ready, "ggp serve printed nothing in 120 s: " + log.read_text()
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
        assert found, log.read_text()
        player = Served(proc, int(found.group(1)), log)
        # the native engines load in the background: one built-in match, so later clocks are not spent on it
        assert post(player.port, start("warm", "white", WALLMAZE, "60", "5")) == (200, "ready")
        assert post(player.port, "(ABORT warm)") == (200, "aborted")
        # and its compiled code is warm: on a cold numba cache, compiling in the background holds numba's lock
        # for minutes, which would make the first PLAYs of these tests wait on it past their clocks
        warmed = time.monotonic() + 1800  # a guard against a hang (a cold cache beside a CPU hog takes many minutes)
        while "warm: the engines and the agent's compiled code are ready" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < warmed, log.read_text()[-3000:]
            time.sleep(0.2)
        yield player
        assert proc.poll() is None, "ggp serve died during the tests: " + log.read_text()[-3000:]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


# --- the player: START ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("start_clock", "play_clock", "says"),
    [
        ("nan", "5", "start clock must be a positive number"),
        ("-5", "5", "start clock must be a positive number"),
        ("0", "5", "start clock must be a positive number"),
        ("ten", "5", "start clock must be a number"),
        ("(1 2)", "5", "start clock must be a number"),
        ("10", "inf", "play clock must be a positive number"),
        ("1e300", "5", "at most 86400 seconds"),  # was: 500, and the player stayed busy for good
        ("10", "1e300", "at most 86400 seconds"),
        ("10", "86401", "at most 86400 seconds"),
        ("10", "1" * 5000, "play clock must be a positive number"),
    ],
)
def test_start_with_hostile_clocks_is_refused(served: Served, start_clock: str, play_clock: str, says: str) -> None:
    status, body = post(served.port, start("c1", "red", TICK, start_clock, play_clock))
    assert status == 400 and says in body, body
    served.available()


HOSTILE_SHEETS = [
    ("(" * 150 + ")" * 150, 400, "nests parentheses more than 100 deep"),
    ("((role r) (init (f " + "(g " * 120 + "x" + ")" * 120 + ")))", 400, "nests parentheses more than 100 deep"),
    ("((role r) (<= (legal r ?m) (true s)))", 400, "unsafe rule"),
    ("((init s))", 400, "declare no roles"),
    (  # 'not' of 24 'or's expands to 2^24 cases: refused before expanding them
        "((role r) (<= (legal r go) (not (or " + " ".join(f"(not (or (a{i}) (b{i})))" for i in range(24)) + "))))",
        400,
        "more than 4096 cases",
    ),
    ("((role r) (<= (legal r go) (does r go)))", 400, "must not depend on 'does'"),
]


@pytest.mark.timing
@pytest.mark.parametrize(("rules", "status", "says"), HOSTILE_SHEETS)
def test_start_with_hostile_rules_is_refused(served: Served, rules: str, status: int, says: str) -> None:
    began = time.monotonic()
    got, body = post(served.port, start("r1", "r", rules, "60", "5"))
    assert (got, says in body) == (status, True), body
    assert time.monotonic() - began < 30  # refused at once, not at the end of the start clock
    served.available()


def test_a_sheet_that_cannot_be_grounded_is_played_on_the_prover(served: Served) -> None:
    """A counter without end cannot be grounded; the top-down prover plays it (a step deeper each move)."""
    rules = "((role r) (init (c 0)) (<= (next (c (s ?n))) (true (c ?n))) (legal r go))"
    assert post(served.port, start("deep1", "r", rules, "20", "5")) == (200, "ready")
    assert post(served.port, "(PLAY deep1 NIL)") == (200, "go")
    assert post(served.port, "(PLAY deep1 (go))") == (200, "go")
    assert post(served.port, "(STOP deep1 (go))") == (200, "done")
    served.available()


def test_oversized_and_undecodable_bodies_are_refused(served: Served) -> None:
    huge = start("h1", "red", "((role red) " + "(f 1) " * (MAX_BODY // 6) + ")")
    status, body = post(served.port, huge)
    assert status == 413 and "larger than" in body
    status, body = post(served.port, b"(START m1 red ((role red)) 10 \xff\xfe)")
    assert status == 400 and "not UTF-8" in body
    served.available()


@pytest.mark.timing
def test_a_start_whose_grounding_runs_long_is_cut_off_by_its_clocks(served: Served) -> None:
    mark = served.mark()
    # a start clock of 1 s and a play clock of 1: ready at about 1 s, and preparing stops at 2 s, well before
    # the grounder's own limit would (6 s of work when idle)
    status, body = post(served.port, start("slow1", "r", joins_for_long(101), "1", "1"))
    assert (status, body) == (200, "ready")
    served.logged(r"START slow1: still preparing at the start clock; ready anyway", after=mark)
    try:
        # ...but only until the first move is due (start clock + play clock): then it gives up, freeing the CPU
        line = served.logged(r"START slow1: .*did not finish in the time allowed", after=mark, within=60)
        assert "GDLLimitError" in line
        status, body = post(served.port, "(PLAY slow1 NIL)")
        assert status == 400 and "cannot play these rules" in body
        assert post(served.port, "(STOP slow1 NIL)") == (200, "done")
    finally:
        post(served.port, "(ABORT slow1)")  # so that a failure here leaves the player free for the next tests
    served.available()


@pytest.mark.timing
def test_abort_cancels_a_grounding_in_progress(served: Served) -> None:
    mark = served.mark()
    replies: list[tuple[int, str]] = []
    # a long start clock: the player would keep grinding for many seconds unless the ABORT stops it
    starting = threading.Thread(
        target=lambda: replies.append(post(served.port, start("slow2", "r", joins_for_long(), "60", "5")))
    )
    starting.start()
    end = time.monotonic() + 20
    while post(served.port, "(INFO)") != (200, "((name abused) (status busy))"):
        assert time.monotonic() < end, "the START never made the player busy"
    began = time.monotonic()
    assert post(served.port, "(ABORT slow2)") == (200, "aborted")
    served.logged(r"START slow2: .*(grounding|reading the rule sheet) was cancelled", after=mark, within=60)
    assert time.monotonic() - began < 20  # stopped by the ABORT, not by its clocks (65 s)
    starting.join(30)
    assert replies and replies[0][0] == 400 and "cancelled" in replies[0][1], replies
    served.available()


# --- the player: PLAY and friends --------------------------------------------------------------------------------
def test_garbage_plays_are_refused_and_the_match_goes_on(served: Served) -> None:
    mark = served.mark()
    assert post(served.port, start("g1", "white", WALLMAZE, "30", "3")) == (200, "ready")
    for moves, says in [
        ("((move 2 5 3 5))", "a joint move has 2 moves"),
        ("((move 2 5 3 5) noop noop)", "a joint move has 2 moves"),
        ("((move 9 9 9 9) noop)", "cannot apply the joint move"),
        ("(fly (((x))))", "cannot apply the joint move"),
        ('("quoted" noop)', "cannot apply"),
    ]:
        status, body = post(served.port, f"(PLAY g1 {moves})")
        assert status == 400 and says in body, (moves, body)
    status, body = post(served.port, "(PLAY g1 NIL)")
    assert status == 200 and body in ("(move 2 5 3 5)", "noop")
    status, body = post(served.port, f"(PLAY g1 ({body} noop))")
    assert status == 200
    # the built-in engine stayed in charge: the sheet's reasoner refused the garbage too
    assert "goes on there" not in served.log.read_text()[mark:]
    assert "switching to the rule sheet" not in served.log.read_text()[mark:]
    assert post(served.port, "(ABORT g1)") == (200, "aborted")
    served.available()


@pytest.mark.timing
def test_unknown_ids_interleaved_matches_and_odd_letter_case(served: Served) -> None:
    assert post(served.port, f"( sTaRt M1 RED {TICK} 10 2 )") == (200, "ready")
    assert post(served.port, "( iNfO )") == (200, "((name abused) (status busy))")
    assert post(served.port, start("m2", "blue", TICK)) == (200, "busy")  # one match at a time
    # a busy player does not read the rules of a START it will not play (3 MiB take seconds to parse)
    began = time.monotonic()
    assert post(served.port, start("m3", "red", "((role red) " + "(f 1 2 3) " * 300_000 + ")")) == (200, "busy")
    assert time.monotonic() - began < 3
    assert post(served.port, "(PREVIEW ((role red)) 10)") == (200, "busy")
    for message in ("(PLAY m2 NIL)", "(STOP m2 NIL)", "(ABORT m2)", "(PLAY unknown NIL)"):
        assert post(served.port, message) == (200, "busy"), message
    assert post(served.port, "(pLaY m1 nIl)") == (200, "tick")  # ids compare without regard to case
    assert post(served.port, "(PLAY M1 (TICK TOCK))") == (200, "tick")
    assert post(served.port, "(StOp m1 (tick tock))") == (200, "done")
    assert post(served.port, "(PLAY m1 NIL)") == (200, "busy")  # over
    served.available()


def test_broken_http(served: Served) -> None:
    port = served.port
    # no Content-Length: the body is read to the end of the stream
    status, body = split(exchange(port, b"POST / HTTP/1.0\r\n\r\n(INFO)", half_close=True))
    assert status == 200 and "abused" in body
    assert (
        split(exchange(port, b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n(INFO)\r\n0\r\n\r\n"))[0]
        == 501
    )
    assert split(exchange(port, b"POST / HTTP/1.0\r\nContent-Length: -5\r\n\r\n(INFO)"))[0] == 400
    assert split(exchange(port, b"\x00\x01\x02 garbage\r\n\r\n"))[0] == 400
    assert split(exchange(port, b"GET /" + b"a" * 70_000 + b" HTTP/1.0\r\n\r\n"))[0] == 431
    # half a request, then silence: another client is served meanwhile
    with socket.create_connection(("127.0.0.1", port), timeout=30) as stalled:
        stalled.sendall(b"POST / HTTP/1.0\r\nContent-Length: 100\r\n\r\n(INF")
        assert post(port, "(INFO)")[0] == 200
    served.available()


@pytest.mark.timing
def test_200_connections_at_once(served: Served) -> None:
    port = served.port
    # 200 connections that say nothing hold every place a while (the read deadline is 10 s) ...
    idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(200)]
    try:
        # ... yet a game manager is served: it takes the place of a connection silent for over a second
        began = time.monotonic()
        assert post(port, "(INFO)") == (200, "((name abused) (status available))")
        assert time.monotonic() - began < 5
        # and 200 requests at once are each answered, served or told to come back
        replies: list[int] = []
        lock = threading.Lock()

        def ask() -> None:
            status, _ = post(port, "(INFO)")
            with lock:
                replies.append(status)

        threads = [threading.Thread(target=ask) for _ in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(replies) == 200 and set(replies) <= {200, 503} and replies.count(200) >= 64
    finally:
        for sock in idle:
            sock.close()
    served.available()


# --- bounds of reading and grounding, in-process -----------------------------------------------------------------
@pytest.mark.timing
def test_a_long_chain_of_rules_is_checked_in_linear_time() -> None:
    # relations found dependent on the state one per pass made checking quadratic: 20,000 rules took minutes
    n = 20_000
    chain = " ".join(f"(<= (r{i}) (r{i + 1}))" for i in range(n))
    text = (
        f"(role p) (init s) {chain} (<= (r{n}) (true s)) (<= (legal p go) (true s))"
        " (<= (next s) (does p go)) (<= terminal (r0)) (goal p 100)"
    )
    began = time.monotonic()
    program = parse_program(text, "chain")
    assert len(program.rules) == n + 7 and time.monotonic() - began < 60  # quadratic took minutes


@pytest.mark.timing
def test_reading_and_grounding_stop_at_a_deadline_or_when_cancelled() -> None:
    from ggp.gdl import from_text

    rules = joins_text()
    with bounded(deadline=time.monotonic() + 0.3), pytest.raises(GDLLimitError, match="time allowed"):
        from_text(rules, "slow")
    cancel = threading.Event()
    cancel.set()
    with bounded(cancel=cancel), pytest.raises(GDLLimitError, match="cancelled"):
        from_text(rules, "slow")
    with pytest.raises(GDLError, match="nest"):
        parse_program("(role p) (init " + "(f " * 5000 + "x" + ")" * 5000 + ")")


def test_garbage_plays_leave_a_native_match_on_its_native_engine() -> None:
    service = PlayerService(PlayerConfig(spec="random", name="p", seed=1))
    assert service.handle(start("n1", "white", WALLMAZE, "30", "3")).body == "ready"
    for garbage in ("(PLAY n1 ((move 9 9 9 9) noop))", "(PLAY n1 (a b c))", "(PLAY n1 (noop))"):
        assert service.handle(garbage).status == 400
        match = service.match
        assert match is not None and match.native == "wallmaze" and match.history == [], garbage
    assert service.handle("(PLAY n1 NIL)").status == 200


# --- the host against hostile players ----------------------------------------------------------------------------
Behaviour = Callable[[socket.socket, threading.Event], None]


def _reply(sock: socket.socket, body: bytes, status: str = "200 OK", extra: str = "") -> None:
    head = f"HTTP/1.0 {status}\r\nContent-Type: text/acl\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    sock.sendall(head.encode() + body)


def _drip(sock: socket.socket, stop: threading.Event, data: bytes) -> None:
    for i in range(len(data)):
        if stop.wait(0.05):  # the player's slowness, not synchronisation
            return
        sock.sendall(data[i : i + 1])


BEHAVIOURS: dict[str, tuple[Behaviour, set[str], str]] = {
    # name: (what the player does after reading a message, the fault kinds of its moves, a word of their messages)
    "garbage": (lambda s, e: _reply(s, b"\xff\xfe (((garbage"), {"not_a_move"}, "select_move returned"),
    "nested": (lambda s, e: _reply(s, b"(" * 5000), {"not_a_move"}, "select_move returned"),
    "huge_move": (lambda s, e: _reply(s, b"(" + b"x " * 400_000 + b")"), {"not_a_move"}, "select_move returned"),
    "huge_body": (
        lambda s, e: (s.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 50000000\r\n\r\n"), _flood(s, e)),
        {"exception"},
        "larger than",
    ),
    "endless_body": (lambda s, e: (s.sendall(b"HTTP/1.0 200 OK\r\n\r\n"), _flood(s, e)), {"exception"}, "larger"),
    "silent": (lambda s, e: e.wait(60), {"timeout"}, "no reply"),
    "drip_body": (
        lambda s, e: (s.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n"), _drip(s, e, b"n" * 1000)),
        {"timeout"},
        "no reply",
    ),
    "drip_head": (lambda s, e: _drip(s, e, b"HTTP/1.0 200 OK\r\nX-Slow: " + b"z" * 1000), {"timeout"}, "no reply"),
    "close": (lambda s, e: None, {"exception"}, "closed"),
    "reset": (lambda s, e: s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0"), {"exception"}, ""),
    "redirect": (
        lambda s, e: _reply(s, b"", "302 Found", "Location: http://127.0.0.1:1/\r\n"),
        {"exception"},
        "HTTP 302",
    ),
    "not_http": (lambda s, e: s.sendall(b"hello there\r\n\r\n"), {"exception"}, "not an HTTP reply"),
    "busy": (lambda s, e: _reply(s, b"busy"), {"exception"}, "busy"),
}


def _flood(sock: socket.socket, stop: threading.Event) -> None:
    block = b"x" * 65536
    with contextlib.suppress(OSError):
        while not stop.is_set():
            sock.sendall(block)


class HostilePlayer(socketserver.ThreadingTCPServer):
    """Answers INFO properly and every other message with its behaviour."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.stop = threading.Event()
        super().__init__(("127.0.0.1", 0), _HostileHandler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def close(self) -> None:
        self.stop.set()
        self.shutdown()
        self.server_close()


class _HostileHandler(socketserver.BaseRequestHandler):
    server: HostilePlayer

    def handle(self) -> None:
        sock: socket.socket = self.request
        with contextlib.suppress(Exception):
            request = read_request(sock, time.monotonic() + 10)
            if isinstance(parse_message(request.body.decode()), Info):
                _reply(sock, b"((name hostile) (status available))")
                return
            self.server.behaviour(sock, self.server.stop)


def many_roles_sheet(roles: list[str]) -> str:
    """A three-step game where every role picks a or b each step; everybody scores 50."""
    decl = " ".join(f"(role {r})" for r in roles)
    return (
        f"{decl} (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3)\n"
        "(<= (legal ?r (pick a)) (role ?r)) (<= (legal ?r (pick b)) (role ?r))\n"
        "(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))\n"
        "(<= terminal (true (step 3)))\n" + " ".join(f"(goal {r} 50)" for r in roles) + "\n"
    )


@pytest.mark.timing
def test_the_host_plays_on_against_hostile_players(tmp_path: Path) -> None:
    names = list(BEHAVIOURS)
    roles = ["good", *names]
    kif = tmp_path / "many.kif"
    kif.write_text(many_roles_sheet(roles))
    good = PlayerService(PlayerConfig(spec="random", name="good", seed=1))
    good.warm()  # its engines load now, not on the match's start clock
    good_server = GGPServer("127.0.0.1", 0, good.handle).start()
    hostile = {name: HostilePlayer(BEHAVIOURS[name][0]) for name in names}
    players = {"good": good_server.url, **{name: server.url for name, server in hostile.items()}}
    # clocks the good player always answers within, even on a loaded machine; the hostile ones run them out
    start_clock, play_clock, grace = 3.0, 2.0, 0.5
    try:
        began = time.monotonic()
        record = host_match(str(kif), players, start_clock=start_clock, play_clock=play_clock, grace=grace, seed=3)
        elapsed = time.monotonic() - began
    finally:
        for server in hostile.values():
            server.close()
        good_server.close()
    record = MatchRecord.from_json(record.to_json(), verify=True)
    assert record.terminal and record.steps == 3 and record.goals == (50,) * len(roles)
    # within its clocks: START, three moves and STOP, each a clock plus the grace at most
    # (a silent player would hold each for 60 s, a dripping one for 50 s)
    assert elapsed < start_clock + 4 * (play_clock + grace) + 10, elapsed
    faults = list(record.all_faults())
    assert not [f for f in faults if f.role == "good"]
    for name in names:
        _, kinds, word = BEHAVIOURS[name]
        mine = [f for f in faults if f.role == name]
        assert {f.phase for f in mine} == {"start", "play", "stop"}, (name, mine)
        plays = [f for f in mine if f.phase == "play"]
        assert [f.step for f in plays] == [1, 2, 3], name
        assert {f.kind for f in plays} == kinds, (name, plays)
        assert all(word in f.message for f in plays), (name, plays[0].message)
        assert all(len(f.message) <= 1000 and len(f.returned or "") <= 200 for f in mine), name
    assert len(record.to_json()) < 200_000  # a megabyte-long move is kept as a clipped copy
    # no exchange outlives its clock: the host's sending threads are gone, whatever the players still do
    end = time.monotonic() + 30
    while any(t.name == "ggp-host-send" and t.is_alive() for t in threading.enumerate()):
        assert time.monotonic() < end, "a host thread is still talking to a hostile player"
        time.sleep(0.05)  # polling with a deadline
