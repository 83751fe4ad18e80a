"""The GGP protocol's messages and wire: parsing (fuzzed), byte-level transcripts, and robustness over real sockets.

Every server here listens on a free port of 127.0.0.1. Nothing waits by
sleeping: a server's socket listens as soon as it is made, so clients connect
at once; where a test needs a request to be in progress it waits on an event
the request sets.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ggp
from ggp.agents import AGENTS, Agent
from ggp.core.game import Game, Move, State
from ggp.core.kif import parse_terms, term_text
from ggp.gdl import rules_text
from ggp.match.clock import ManualClock
from ggp.match.referee import MAX_CLOCK
from ggp.protocol import (
    Abort,
    GGPServer,
    Info,
    Play,
    PlayerConfig,
    PlayerService,
    Preview,
    ProtocolError,
    Reply,
    Start,
    Stop,
    parse_message,
    render_message,
    warmup,
)
from ggp.protocol.messages import error_reply, parse_info_reply
from ggp.protocol.player_match import PlayerMatch
from ggp.protocol.warmup import READY_STEP
from ggp.protocol.wire import MAX_BODY

# --- helpers -------------------------------------------------------------------------------------------------
HEADERS = (
    "Content-type: text/acl\r\n"
    "Content-length: {length}\r\n"
    "Access-Control-Allow-Origin: *\r\n"
    "Access-Control-Allow-Methods: POST, GET, OPTIONS\r\n"
    "Access-Control-Allow-Headers: Content-Type\r\n"
    "Access-Control-Allow-Age: 86400\r\n"
    "\r\n"
)


def expected(status: str, body: str) -> bytes:
    """The exact bytes ggp-base's player writes for a reply."""
    data = body.encode()
    return f"HTTP/1.0 {status}\r\n".encode() + HEADERS.format(length=len(data)).encode() + data


def ggp_base_post(port: int, body: str, receiver: str = "tester") -> bytes:
    """The exact bytes ggp-base's game server sends (HttpWriter.writeAsClient)."""
    data = body.encode()
    head = (
        "POST / HTTP/1.0\r\n"
        "Accept: text/delim\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Sender: GAMESERVER\r\n"
        f"Receiver: {receiver}\r\n"
        "Content-Type: text/acl\r\n"
        f"Content-Length: {len(data)}\r\n"
        "\r\n"
    )
    return head.encode() + data


def raw(port: int, data: bytes, *, half_close: bool = False, timeout: float = 15.0) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def send(port: int, message: str) -> tuple[int, str]:
    """POST a message as ggp-base does; returns the status and body."""
    reply = raw(port, ggp_base_post(port, message))
    return split(reply)


def split(reply: bytes) -> tuple[int, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, body.decode()


def sheet(rules: str) -> str:
    """A rule sheet as START carries it: its sentences in one list."""
    return "(" + " ".join(term_text(t) for t in parse_terms(rules)) + ")"


# A two-role game with one legal move per role and per state: replies are known exactly.
TICK_TOCK = """
(role red) (role blue)
(init (count 0))
(succ 0 1) (succ 1 2)
(legal red tick) (legal blue tock)
(<= (next (count ?n)) (true (count ?m)) (succ ?m ?n))
(<= terminal (true (count 2)))
(goal red 100) (goal blue 0)
"""

WALLMAZE_START = f"(START m1 white {sheet(rules_text('wallmaze'))} 10 2)"


@pytest.fixture(scope="module")
def warmed() -> None:
    """Load the engines once, so that START in the tests below is quick."""
    PlayerService(PlayerConfig()).warm()


@pytest.fixture
def player(warmed: None) -> Iterator[tuple[PlayerService, GGPServer]]:
    service = PlayerService(PlayerConfig(spec="random", name="tester", seed=7))
    server = GGPServer("127.0.0.1", 0, service.handle, read_timeout=2.0).start()
    yield service, server
    server.close()


class _Gate:
    """Agents that wait on this event stay busy until the test ends."""

    release = threading.Event()
    #: Set when a SleepyAgent is asked for a move.
    asked = threading.Event()


class SleepyAgent(Agent):
    """Never answers within any clock (it waits for the test's gate)."""

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        _Gate.asked.set()
        _Gate.release.wait(30)
        return self.game.legal_moves(state, self.role)[0]


class CrashAgent(Agent):
    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        raise RuntimeError("boom")


class IllegalAgent(Agent):
    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        return Move("(move 99 99 99 99)")


@pytest.fixture
def test_agents(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _Gate.release.clear()
    _Gate.asked.clear()
    monkeypatch.setitem(AGENTS, "sleepy", SleepyAgent)
    monkeypatch.setitem(AGENTS, "crash", CrashAgent)
    monkeypatch.setitem(AGENTS, "illegal", IllegalAgent)
    yield
    _Gate.release.set()


# --- messages ------------------------------------------------------------------------------------------------
def test_messages_parse_in_any_letter_case() -> None:
    assert parse_message("( INFO )") == Info()
    assert parse_message("(info)") == Info()
    start = parse_message("(Start M.1 White ((role white) (init (at 1))) 10 5)")
    assert start == Start("M.1", "White", (("role", "white"), ("init", ("at", "1"))), 10.0, 5.0)
    assert parse_message("(PLAY m1 nil)") == Play("m1", None)
    assert parse_message("(play m1 NIL)") == Play("m1", None)
    assert parse_message("( PLAY m1 ((move 1 2 1 3) noop ) )") == Play("m1", (("move", "1", "2", "1", "3"), "noop"))
    assert parse_message("(STOP m1 (noop noop))") == Stop("m1", ("noop", "noop"))
    assert parse_message("(abort m1)") == Abort("m1")
    assert parse_message("(PREVIEW ((role a)) 30)") == Preview((("role", "a"),), 30.0)
    # later protocol versions may add START arguments after the play clock
    assert parse_message("(START m r ((role r)) 10 5 extra)") == Start("m", "r", (("role", "r"),), 10.0, 5.0)
    # comments and line breaks are whitespace
    assert parse_message("(PLAY m1 ; the first\n NIL)") == Play("m1", None)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "not one S-expression"),
        ("(PLAY m1", "never closed"),
        ("PLAY m1 NIL", "not one S-expression"),
        ("ready", "list starting with its type"),
        ("()", "list starting with its type"),
        ("((play) m1 nil)", "list starting with its type"),
        ("(FOO m1)", "unknown message type"),
        ("(INFO extra)", "0 arguments"),
        ("(PLAY m1)", "2 arguments"),
        ("(PLAY m1 noop)", "NIL or a list"),
        ("(PLAY (m 1) NIL)", "match id must be a symbol"),
        ("(START m1 white ((role white)) 10)", "5 arguments"),
        ("(START m1 white role 10 5)", "rules must be a list"),
        ("(START m1 (white) ((role white)) 10 5)", "role must be a symbol"),
        ("(START m1 white ((role white)) ten 5)", "start clock must be a number"),
        ("(START m1 white ((role white)) 10 0)", "positive number"),
        ("(START m1 white ((role white)) 10 -5)", "positive number"),
        ("(START m1 white ((role white)) 10 nan)", "positive number"),
        ("(START m1 white ((role white)) 10 inf)", "positive number"),
        ("(START m1 white ((role white)) 1e300 5)", "at most 86400 seconds"),
        ("(START m1 white ((role white)) 10 86401)", "at most 86400 seconds"),
        ("(PREVIEW ((role white)) 1e12)", "at most 86400 seconds"),
        ("(ABORT)", "1 argument"),
        ("(PREVIEW x 10)", "rules must be a list"),
        ("(PLAY m1 NIL) (PLAY m1 NIL)", "2 terms"),
        ("(PLAY m1 " + "(" * 200 + ")" * 200 + ")", "nests parentheses"),
    ],
)
def test_malformed_messages_say_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ProtocolError, match=says):
        parse_message(text)


def test_messages_render_as_ggp_base_writes_them() -> None:
    rules = (("role", "white"), ("init", ("at", "1")))
    assert render_message(Info()) == "( INFO )"
    assert render_message(Start("m1", "white", rules, 10, 5)) == "( START m1 white ((role white) (init (at 1)) ) 10 5)"
    assert render_message(Start("m1", "white", rules, 2.5, 0.5)).endswith(") 2.5 0.5)")
    assert render_message(Play("m1", None)) == "( PLAY m1 NIL )"
    assert render_message(Play("m1", (("move", "1", "2"), "noop"))) == "( PLAY m1 ((move 1 2) noop ) )"
    assert render_message(Stop("m1", ("a", "b"))) == "( STOP m1 (a b ) )"
    assert render_message(Abort("m1")) == "( ABORT m1 )"
    assert render_message(Preview(rules, 30)) == "( PREVIEW ((role white) (init (at 1)) ) 30 )"


def test_info_and_error_replies() -> None:
    assert parse_info_reply("((name tester) (status available))") == {"name": "tester", "status": "available"}
    assert parse_info_reply("( ( name X ) ( status busy ) ( species alien ) )")["status"] == "busy"
    assert error_reply('a "quoted"\nback\\slash') == '(error "a \\"quoted\\" back\\\\slash")'


# The fuzzing strategies: symbols, terms and whole messages.
symbols = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.-+?", min_size=1, max_size=8)
terms = st.recursive(symbols, lambda inner: st.lists(inner, max_size=4).map(tuple), max_leaves=12)
clocks = st.one_of(
    st.integers(1, 10_000).map(float), st.floats(0.001, MAX_CLOCK, allow_nan=False, allow_infinity=False)
)
joint_moves = st.one_of(st.none(), st.lists(terms, min_size=1, max_size=4).map(tuple))
rule_lists = st.lists(terms, max_size=6).map(tuple)
messages = st.one_of(
    st.just(Info()),
    st.builds(Start, symbols, symbols, rule_lists, clocks, clocks),
    st.builds(Play, symbols, joint_moves),
    st.builds(Stop, symbols, joint_moves),
    st.builds(Abort, symbols),
    st.builds(Preview, rule_lists, clocks),
)


@settings(max_examples=300, deadline=None)
@given(messages)
def test_rendered_messages_parse_back(message: object) -> None:
    assert parse_message(render_message(message)) == message  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(messages, st.randoms(use_true_random=False))
def test_keywords_parse_in_any_case(message: object, rnd: object) -> None:
    text = render_message(message)  # type: ignore[arg-type]
    keyword = text.split()[1]
    flipped = "".join(c.upper() if rnd.random() < 0.5 else c.lower() for c in keyword)  # type: ignore[attr-defined]
    assert parse_message(text.replace(keyword, flipped, 1)) == message


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_or_raises_protocol_error(text: str) -> None:
    with contextlib.suppress(ProtocolError):
        parse_message(text)


sexp_tokens = st.sampled_from(["(", ")", " ", "\n", ";c\n", "PLAY", "start", "nil", "m1", "10", "-1", "(role r)"])


@settings(max_examples=500, deadline=None)
@given(st.lists(sexp_tokens, max_size=30).map("".join))
def test_token_soup_parses_or_raises_protocol_error(text: str) -> None:
    with contextlib.suppress(ProtocolError):
        parse_message(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=120), st.lists(sexp_tokens, max_size=30).map("".join)))
def test_the_player_answers_any_text(warmed: None, text: str) -> None:
    service = PlayerService(PlayerConfig(name="fuzz"))
    reply = service.handle(text)
    assert isinstance(reply, Reply)
    assert reply.status in (200, 400)
    if reply.status == 400:
        assert reply.body.startswith('(error "')
    assert service.match is None or reply.body == "ready"


# --- transcripts: exact bytes, as ggp-base sends and expects them -------------------------------------------------
def test_transcript_of_a_whole_match(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    port = server.port
    rules = sheet(TICK_TOCK)
    exchanges = [
        ("( INFO )", "200 OK", "((name tester) (status available))"),
        (f"( START match.7 red {rules} 10 2)", "200 OK", "ready"),
        ("( INFO )", "200 OK", "((name tester) (status busy))"),
        ("( PLAY match.7 NIL )", "200 OK", "tick"),
        ("( PLAY match.7 (tick tock ) )", "200 OK", "tick"),
        ("( STOP match.7 (tick tock ) )", "200 OK", "done"),
        ("( INFO )", "200 OK", "((name tester) (status available))"),
    ]
    for message, status, body in exchanges:
        assert raw(port, ggp_base_post(port, message)) == expected(status, body), message
    assert service.finished == ["match.7"]


def test_transcript_of_a_built_in_game_played_natively(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    port = server.port
    game = ggp.load("bomberman")
    assert [str(m) for m in game.legal_moves(game.initial_state(), "bomberwoman")] == ["noop"]
    message = f"( START m2 bomberwoman {sheet(rules_text('bomberman'))} 10 2)"
    assert raw(port, ggp_base_post(port, message)) == expected("200 OK", "ready")
    match = service.match
    assert match is not None and match.native == "bomberman" and match.game is game
    assert raw(port, ggp_base_post(port, "( PLAY m2 NIL )")) == expected("200 OK", "noop")
    assert raw(port, ggp_base_post(port, "( ABORT m2 )")) == expected("200 OK", "aborted")
    assert service.match is None


def test_transcript_of_errors_and_conventional_replies(player: tuple[PlayerService, GGPServer]) -> None:
    _, server = player
    port = server.port
    assert raw(port, ggp_base_post(port, "( PLAY nosuch NIL )")) == expected("200 OK", "busy")
    assert raw(port, ggp_base_post(port, "( STOP nosuch NIL )")) == expected("200 OK", "busy")
    assert raw(port, ggp_base_post(port, "( ABORT nosuch )")) == expected("200 OK", "busy")
    body = "(error \"the message is not one S-expression: line 1: '(' is never closed\")"
    assert raw(port, ggp_base_post(port, "( PLAY m1 NIL")) == expected("400 Bad Request", body)
    unknown = "(error \"unknown message type 'HELLO'; expected one of INFO, START, PLAY, STOP, ABORT, PREVIEW\")"
    assert raw(port, ggp_base_post(port, "( HELLO )")) == expected("400 Bad Request", unknown)


def test_options_preflight_and_get(player: tuple[PlayerService, GGPServer]) -> None:
    _, server = player
    port = server.port
    preflight = (
        "OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: http://example.org\r\n"
        "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r\n\r\n"
    )
    assert raw(port, preflight.encode()) == expected("200 OK", "")
    info = "((name tester) (status available))"
    # ggp-base's GET form: the message URL-encoded as the path, then a blank line and one more CRLF
    get = f"GET /{quote('( INFO )')} HTTP/1.0\r\nAccept: text/delim\r\nSender: GAMESERVER\r\n\r\n\r\n"
    assert raw(port, get.encode()) == expected("200 OK", info)
    assert raw(port, f"GET /?{quote('(info)')} HTTP/1.1\r\nHost: x\r\n\r\n".encode()) == expected("200 OK", info)
    assert raw(port, b"GET / HTTP/1.0\r\n\r\n") == expected("200 OK", info)  # a browser's look: INFO
    status, body = split(raw(port, b"DELETE / HTTP/1.0\r\n\r\n"))
    assert status == 405 and "POST a GGP message" in body


# --- the player's protocol ------------------------------------------------------------------------------------
def test_play_before_start_and_unknown_ids_get_busy(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    assert send(server.port, "(PLAY m1 NIL)") == (200, "busy")
    assert send(server.port, WALLMAZE_START) == (200, "ready")
    assert send(server.port, "(PLAY other NIL)") == (200, "busy")
    assert send(server.port, "(STOP other NIL)") == (200, "busy")
    assert service.match is not None  # the match is untouched
    status, move = send(server.port, "(PLAY M1 NIL)")  # match ids in any case
    assert status == 200 and move in {"noop", "(move 2 5 3 5)"}


def test_a_second_start_while_busy(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    port = server.port
    assert send(port, WALLMAZE_START) == (200, "ready")
    assert send(port, WALLMAZE_START) == (200, "ready")  # the same START again
    assert send(port, WALLMAZE_START.replace("m1", "m2")) == (200, "busy")
    assert send(port, "(PREVIEW ((role a)) 5)") == (200, "busy")
    assert send(port, "(INFO)") == (200, "((name tester) (status busy))")
    status, _ = send(port, "(PLAY m1 NIL)")
    assert status == 200
    assert send(port, "(ABORT m1)") == (200, "aborted")
    assert service.match is None
    assert send(port, WALLMAZE_START.replace("m1", "m2")) == (200, "ready")


def test_start_with_a_bad_role_or_bad_rules(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    status, body = send(server.port, WALLMAZE_START.replace("white", "purple", 1))
    assert status == 400 and "purple is not a role" in body
    status, body = send(server.port, "(START m1 a ((init x)) 10 2)")
    assert status == 400 and "declare no roles" in body
    unsafe = "(START m1 a ((role a) (<= (legal a ?x) (true q)) (<= terminal (true q)) (goal a 100)) 10 2)"
    status, body = send(server.port, unsafe)
    assert status == 400 and "cannot play these rules" in body
    assert service.match is None
    assert send(server.port, "(INFO)") == (200, "((name tester) (status available))")


def test_bad_joint_moves_are_refused_and_the_match_goes_on(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    port = server.port
    assert send(port, WALLMAZE_START) == (200, "ready")
    assert send(port, "(PLAY m1 NIL)")[0] == 200
    status, body = send(port, "(PLAY m1 ((move 9 9 9 9) noop))")
    assert status == 400 and "is not a legal move" in body
    status, body = send(port, "(PLAY m1 (noop))")
    assert status == 400 and "not 1" in body
    status, move = send(port, "(PLAY m1 (NOOP Noop))")  # moves in any letter case
    assert status == 200 and move in {"noop", "(move 2 5 3 5)"}
    match = service.match
    assert match is not None and match.history == [("noop", "noop")]


def test_play_after_the_end_and_stop(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    port = server.port
    assert send(port, f"(START t red {sheet(TICK_TOCK)} 10 2)") == (200, "ready")
    assert send(port, "(PLAY t NIL)") == (200, "tick")
    assert send(port, "(PLAY t (tick tock))") == (200, "tick")
    status, body = send(port, "(PLAY t (tick tock))")
    assert status == 400 and "the game is over" in body
    assert send(port, "(STOP t NIL)") == (200, "done")
    assert service.match is None and service.finished == ["t"]
    assert send(port, "(STOP t NIL)") == (200, "busy")


def test_preview(player: tuple[PlayerService, GGPServer]) -> None:
    service, server = player
    assert send(server.port, f"(PREVIEW {sheet(TICK_TOCK)} 5)") == (200, "done")
    assert service.match is None


def test_an_agent_that_never_answers_still_gets_a_legal_move_in_time(warmed: None, test_agents: None) -> None:
    # Over real sockets, on a player's clock that stands still until the test moves it (ManualClock): the
    # reply comes when the play clock less the margin has passed on it, however slow the machine.
    clock = ManualClock()
    overran = threading.Event()

    def log(line: str) -> None:
        if "previous search overran; waiting" in line:
            overran.set()

    service = PlayerService(PlayerConfig(spec="sleepy", name="slow", seed=1), log=log, clock=clock)
    with GGPServer("127.0.0.1", 0, lambda text, received: service.handle(text)).start() as server:
        assert send(server.port, WALLMAZE_START) == (200, "ready")  # play clock 2 s: answers by 1.75 s
        match = service.match
        assert match is not None
        legal = {"noop", "(move 2 5 3 5)"}
        replies: list[tuple[int, str]] = []
        began = clock.now()
        first = threading.Thread(target=lambda: replies.append(send(server.port, "(PLAY m1 NIL)")))
        first.start()
        assert _Gate.asked.wait(60)  # a guard against a hang: the agent is thinking now
        clock.advance(2.0 - match.margin)  # the play clock less the margin passes: the player answers
        first.join(60)
        assert not first.is_alive() and replies[0][0] == 200 and replies[0][1] in legal
        assert clock.now() - began < 2.0  # the play clock, on the player's clock

        def play_while_the_search_runs(meanwhile: Callable[[], object]) -> None:
            # the agent is still busy with the first search: the PLAY waits up to half its clock for it to end
            overran.clear()
            reply: list[tuple[int, str]] = []
            thread = threading.Thread(target=lambda: reply.append(send(server.port, "(PLAY m1 (noop noop))")))
            thread.start()
            assert overran.wait(60)  # a guard against a hang: the player is waiting for the search now
            meanwhile()
            thread.join(60)
            assert not thread.is_alive() and reply[0][0] == 200 and reply[0][1] in legal

        # the clock passes, the search goes on: a random move, after half the clock
        play_while_the_search_runs(lambda: clock.advance(2.0 - match.margin))
        assert match.random_moves == 2  # late, then still busy
        # the search ends while the PLAY waits: the agent is asked again, and its move is played
        play_while_the_search_runs(_Gate.release.set)
        assert match.random_moves == 2


@pytest.mark.parametrize("spec", ["crash", "illegal"])
def test_a_failing_agent_is_replaced_by_a_random_legal_move(warmed: None, test_agents: None, spec: str) -> None:
    service = PlayerService(PlayerConfig(spec=spec, name="bad", seed=1))
    assert service.handle(WALLMAZE_START).body == "ready"
    reply = service.handle("(PLAY m1 NIL)")
    assert reply == Reply(200, reply.body) and reply.body in {"noop", "(move 2 5 3 5)"}
    match = service.match
    assert match is not None and match.random_moves == 1


def test_an_agent_for_another_game_falls_back_to_mcts(warmed: None) -> None:
    # START waits for the agent on a clock that stands still: however long mcts takes to start on a loaded
    # machine, START answers once it has (a real clock would answer ready at 10 s without an agent).
    service = PlayerService(PlayerConfig(spec="amazons", name="specialist", seed=1), clock=ManualClock())
    assert service.handle(WALLMAZE_START).body == "ready"
    match = service.match
    assert match is not None and match.agent_spec == "mcts" and match.native == "wallmaze"
    assert service.handle("(ABORT m1)").body == "aborted"
    start = f"(START t red {sheet(TICK_TOCK)} 10 1)"
    assert service.handle(start).body == "ready"
    match = service.match
    assert match is not None and match.agent_spec == "mcts" and match.native is None
    assert service.handle("(PLAY t NIL)").body == "tick"


def test_a_silent_match_is_dropped(warmed: None) -> None:
    service = PlayerService(PlayerConfig(name="idle", idle_timeout=30.0))
    assert service.handle(WALLMAZE_START).body == "ready"
    assert service.handle("(INFO)").body.endswith("(status busy))")
    match = service.match
    assert match is not None
    match.last_seen -= 31.0  # as if the game manager had been silent for 31 s
    assert service.handle("(INFO)").body.endswith("(status available))")
    assert service.handle("(PLAY m1 NIL)").body == "busy"
    assert service.handle(WALLMAZE_START.replace("m1", "m2")).body == "ready"


def test_concurrent_plays_of_one_match(warmed: None, test_agents: None) -> None:
    service = PlayerService(PlayerConfig(spec="sleepy", name="slow", seed=1))
    with GGPServer("127.0.0.1", 0, service.handle).start() as server:
        assert send(server.port, WALLMAZE_START.replace(" 10 2)", " 10 1)")) == (200, "ready")
        results: list[tuple[int, str]] = []

        def play() -> None:
            results.append(send(server.port, "(PLAY m1 NIL)"))

        threads = [threading.Thread(target=play) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = sorted(status for status, _ in results)
        assert statuses in ([200, 200], [200, 409])  # one waits for the other, or is told it is still answered


# --- the wire: limits, slow and broken clients -------------------------------------------------------------------
def test_oversized_bodies_get_413(player: tuple[PlayerService, GGPServer]) -> None:
    _, server = player
    port = server.port
    body = b"(" + b"x " * (MAX_BODY // 2 + 1000) + b")"
    head = f"POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sender = threading.Thread(target=_send_quietly, args=(sock, head + body))
        sender.start()
        reply = read_all(sock)
        sender.join()
    status, text = split(reply)
    assert status == 413 and "larger than" in text
    # without a Content-Length, the body runs to the end of the stream: capped the same way
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sender = threading.Thread(target=_send_quietly, args=(sock, b"POST / HTTP/1.0\r\n\r\n" + body, True))
        sender.start()
        reply = read_all(sock)
        sender.join()
    assert split(reply)[0] == 413
    assert send(port, "(INFO)")[0] == 200


def _send_quietly(sock: socket.socket, data: bytes, half_close: bool = False) -> None:
    try:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def test_expect_100_continue(player: tuple[PlayerService, GGPServer]) -> None:
    """curl asks before sending a body over 1 KiB; the server says go on, then answers."""
    _, server = player
    body = b"( INFO ; " + b"x" * 2000 + b"\n)"
    head = f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head.encode())
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        assert read_all(sock) == expected("200 OK", "((name tester) (status available))")


def test_a_body_without_content_length_is_read_to_the_end(player: tuple[PlayerService, GGPServer]) -> None:
    _, server = player
    reply = raw(server.port, b"POST / HTTP/1.0\r\nContent-Type: text/acl\r\n\r\n( INFO )", half_close=True)
    assert reply == expected("200 OK", "((name tester) (status available))")


@pytest.mark.parametrize(
    ("request_bytes", "status", "says"),
    [
        (b"POST / HTTP/1.0\r\nContent-Length: abc\r\n\r\n(INFO)", 400, "not a number"),
        (b"POST / HTTP/1.0\r\nContent-Length: 6\r\n\r\n(\xff\xfe  )", 400, "not UTF-8"),
        (b"HELLO\r\n\r\n", 400, "malformed request line"),
        (b"POST / HTTP/1.0\r\nno colon here\r\n\r\n", 400, "malformed header"),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n(INFO)\r\n0\r\n\r\n", 501, "chunked"),
        (b"POST / HTTP/1.0\r\nX: " + b"y" * 70000 + b"\r\n\r\n", 431, "head is longer"),
    ],
)
def test_broken_http_is_refused_clearly(
    player: tuple[PlayerService, GGPServer], request_bytes: bytes, status: int, says: str
) -> None:
    _, server = player
    got_status, body = split(raw(server.port, request_bytes))
    assert got_status == status and says in body and body.startswith('(error "')


def test_slow_and_half_open_connections(warmed: None) -> None:
    service = PlayerService(PlayerConfig(name="tester"))
    with GGPServer("127.0.0.1", 0, service.handle, read_timeout=0.3).start() as server:
        port = server.port
        # connects and says nothing: answered 408 once the read deadline passes
        with socket.create_connection(("127.0.0.1", port), timeout=10) as idle:
            began = time.monotonic()
            assert split(read_all(idle))[0] == 408
            assert time.monotonic() - began < 3
        # sends part of the body, then stalls
        with socket.create_connection(("127.0.0.1", port), timeout=10) as stalled:
            stalled.sendall(b"POST / HTTP/1.0\r\nContent-Length: 10\r\n\r\n(IN")
            assert split(read_all(stalled))[0] == 408
        # sends part of the body, then closes its side
        status, body = split(raw(port, b"POST / HTTP/1.0\r\nContent-Length: 10\r\n\r\n(IN", half_close=True))
        assert status == 400 and "ended after 3 of 10 bytes" in body
        # connects and leaves without a word: nothing to answer
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
        # dribbles a byte at a time: the deadline is for the whole request, not per read
        with socket.create_connection(("127.0.0.1", port), timeout=10) as dribble:
            began = time.monotonic()
            reply = b""
            try:
                for byte in b"POST / HTTP/1.0\r\nContent-Length: 6\r\n\r\n(INFO)":
                    dribble.sendall(bytes([byte]))
                    time.sleep(0.05)  # the client's slowness, not synchronisation
            except OSError:
                pass
            reply = read_all(dribble)
            assert split(reply)[0] == 408 and time.monotonic() - began < 3
        assert send(port, "(INFO)") == (200, "((name tester) (status available))")


def test_too_many_connections_get_503() -> None:
    entered, release = threading.Event(), threading.Event()

    def app(text: str, received: float) -> Reply:
        entered.set()
        release.wait(10)
        return Reply(200, "done")

    with GGPServer("127.0.0.1", 0, app, max_connections=1).start() as server:
        port = server.port
        results: list[tuple[int, str]] = []
        holder = threading.Thread(target=lambda: results.append(send(port, "(INFO)")))
        holder.start()
        assert entered.wait(10)
        status, body = send(port, "(INFO)")
        assert status == 503 and "too many connections" in body
        release.set()
        holder.join()
        assert results == [(200, "done")]


def test_an_app_that_raises_gets_500() -> None:
    def app(text: str, received: float) -> Reply:
        raise KeyError("oops")

    with GGPServer("127.0.0.1", 0, app).start() as server:
        status, body = send(server.port, "(INFO)")
        assert status == 500 and "internal error: KeyError" in body


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_random_bytes_never_break_the_server(player: tuple[PlayerService, GGPServer], data: bytes) -> None:
    _, server = player
    reply = raw(server.port, data, half_close=True)
    if reply:  # a connection with no bytes at all is simply closed
        assert reply.startswith(b"HTTP/1.0 ") and b"\r\nContent-type: text/acl\r\n" in reply
    assert send(server.port, "(INFO)")[0] == 200


# --- a cold start: compiling out of the request path -----------------------------------------------------------
class SlowStarter(Agent):
    """Starts only when the test's gate opens (a new sheet's network compiling past the start clock)."""

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        _Gate.release.wait(30)
        super().start(game, role, start_clock, play_clock)

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        return self.game.legal_moves(state, self.role)[-1]


def _started_late(service: PlayerService, clock: ManualClock, start: str) -> PlayerMatch:
    """START ``start`` as if it had come when its start clock began, the clock now spent: ready at once."""
    head = start.rsplit(" ", 2)
    reply = service.handle(start, received=clock.now() - float(head[1]))
    assert reply.body == "ready"  # ready at the start clock, whatever is still being prepared
    match = service.match
    assert match is not None
    return match


def test_a_play_waits_part_of_its_clock_for_an_agent_still_starting(
    warmed: None, test_agents: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The player's clock stands still (ManualClock): the PLAY's wait for the agent ends when the agent is
    # ready, however long the machine takes to run its start, and never by time, which does not pass.
    monkeypatch.setitem(AGENTS, "slowstart", SlowStarter)
    waits: list[str] = []

    def log(line: str) -> None:
        if "still starting" in line:  # the PLAY waits for the agent now: let it be ready
            waits.append(line)
            _Gate.release.set()

    clock = ManualClock()
    service = PlayerService(PlayerConfig(spec="slowstart", name="late", seed=1), log=log, clock=clock)
    match = _started_late(service, clock, WALLMAZE_START.replace(" 10 2)", " 1 2)"))
    assert match.game_ready.wait(60)  # the rules are ready (a guard against a hang); the agent is still starting
    assert not match.agent_ready.is_set()
    reply = service.handle("(PLAY m1 NIL)")
    # half of what the play clock leaves (2 s less the margin kept for the reply's way back)
    assert waits == [f"PLAY m1: the agent is still starting; waiting up to {(2.0 - match.margin) / 2:.2f} s for it"]
    game = ggp.load("wallmaze")
    assert reply.status == 200 and reply.body == str(game.legal_moves(game.initial_state(), "white")[-1])
    assert match.random_moves == 0  # the agent's own move, not a random one


def test_a_play_for_an_agent_still_starting_after_half_its_clock_is_a_random_legal_move(
    warmed: None, test_agents: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(AGENTS, "slowstart", SlowStarter)
    waiting = threading.Event()

    def log(line: str) -> None:
        if "still starting" in line:
            waiting.set()

    clock = ManualClock()
    service = PlayerService(PlayerConfig(spec="slowstart", name="late", seed=1), log=log, clock=clock)
    match = _started_late(service, clock, WALLMAZE_START.replace(" 10 2)", " 1 2)"))
    assert match.game_ready.wait(60)  # the rules are ready (a guard against a hang); the agent is still starting
    replies: list[Reply] = []
    play = threading.Thread(target=lambda: replies.append(service.handle("(PLAY m1 NIL)")))
    play.start()
    assert waiting.wait(60)  # a guard against a hang, not a wait for time to pass
    clock.advance((2.0 - match.margin) / 2)  # half the play clock passes: the agent is still not ready
    play.join(60)
    assert not play.is_alive() and not match.agent_ready.is_set()
    game = ggp.load("wallmaze")
    legal = {str(m) for m in game.legal_moves(game.initial_state(), "white")}
    assert replies[0].status == 200 and replies[0].body in legal
    assert match.random_moves == 1


def test_plays_while_the_rules_compile_get_legal_moves_from_the_prover(
    warmed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ggp.protocol.player as player_module

    # Recognising and compiling the rules stands still until the test lets it go: a cold numba cache's minutes.
    # The player's clock stands still too, so the prover's moves come in its time however slow the machine.
    go, entered = threading.Event(), threading.Event()
    real = player_module.recognize

    def compiling(*args: object, **kwargs: object) -> object:
        entered.set()
        go.wait(120)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(player_module, "recognize", compiling)
    clock = ManualClock()
    service = PlayerService(PlayerConfig(spec="random", name="cold", seed=3), clock=clock)
    game = ggp.load("wallmaze")  # the moves are checked against the native engine
    try:
        match = _started_late(service, clock, WALLMAZE_START.replace(" 10 2)", " 1 2)"))
        assert entered.wait(60)  # a guard against a hang
        state, joints = game.initial_state(), list[list[str]]()
        for _ in range(2):
            joint = f"({' '.join(joints[-1])})" if joints else "NIL"
            reply = service.handle(f"(PLAY m1 {joint})")
            assert reply.status == 200 and reply.body in {str(m) for m in game.legal_moves(state, "white")}
            black = game.legal_moves(state, "black")[-1]
            joints.append([reply.body, str(black)])
            state = game.next_state(state, joints[-1])
        assert match.game is None and match.random_moves == 2
    finally:
        go.set()
    assert match.game_ready.wait(120)  # a guard against a hang, not a wait for time to pass
    reply = service.handle(f"(PLAY m1 ({' '.join(joints[-1])}))")
    assert reply.status == 200 and reply.body in {str(m) for m in game.legal_moves(state, "white")}
    assert match.history == [tuple(j) for j in joints]  # the moves kept while compiling, applied in order


class Warming:
    """Stands in for a warm-up child (:class:`ggp.protocol.warmup.WarmUp`) that has done the steps in ``done``."""

    def __init__(self) -> None:
        self.done: set[str] = set()
        self.progress = "0/14"
        self.finished = threading.Event()
        self.waited_for: list[set[str]] = []

    def has(self, keys: set[str]) -> bool:
        return keys <= self.done or self.finished.is_set()

    def missing(self, keys: set[str]) -> set[str]:
        return keys - self.done

    def wait_for(self, keys: set[str], seconds: float, cancel: threading.Event | None = None) -> bool:
        self.waited_for.append(set(keys))
        self.done |= keys  # as if the child had compiled them meanwhile
        return True


def test_info_answers_busy_until_the_warm_up_is_ready() -> None:
    service = PlayerService(PlayerConfig(name="warming"))
    warming = Warming()
    service.warmup = warming  # type: ignore[assignment]
    assert service.handle("(INFO)").body == "((name warming) (status busy) (warming 0/14))"
    warming.done |= {"reasoner", "roles2", "recognise", "roles1"}
    warming.progress = "4/14"
    assert service.handle("(INFO)").body == "((name warming) (status busy) (warming 4/14))"  # not all of it yet
    assert parse_info_reply(service.handle("(INFO)").body) == {"name": "warming", "status": "busy", "warming": "4/14"}
    warming.done.add(READY_STEP)
    assert service.handle("(INFO)").body == "((name warming) (status available))"
    # a child that failed is no reason to stay busy
    other = PlayerService(PlayerConfig(name="failed"))
    failed = Warming()
    other.warmup = failed  # type: ignore[assignment]
    failed.finished.set()
    assert other.handle("(INFO)").body == "((name failed) (status available))"


def test_a_start_while_warming_waits_for_the_steps_its_sheet_needs(warmed: None) -> None:
    # A game manager that does not ask INFO first: START of a sheet waits for what the child compiles for
    # every sheet of as many roles, rather than compiling it beside the child; a built-in game's own sheet
    # does not wait (the child may be busy with other games).
    clock = ManualClock()
    service = PlayerService(PlayerConfig(spec="random", name="eager", seed=1), clock=clock)
    warming = Warming()
    service.warmup = warming  # type: ignore[assignment]
    assert service.handle(f"(START t red {sheet(TICK_TOCK)} 10 1)").body == "ready"
    assert warming.waited_for == [{"reasoner", "roles2", "recognise"}]
    assert service.handle("(PLAY t NIL)").body == "tick"
    assert service.handle("(ABORT t)").body == "aborted"
    warming.done.clear()
    assert service.handle(WALLMAZE_START).body == "ready"
    assert warming.waited_for == [{"reasoner", "roles2", "recognise"}]  # no second wait


def test_the_warm_up_runs_in_a_child_process_that_ends_with_its_parent() -> None:
    import os

    logs: list[str] = []
    service = PlayerService(PlayerConfig(spec="random"), log=logs.append)
    child = service.warm_elsewhere()
    assert child.pid != os.getpid()
    assert child.wait(600) == 0 and service.warmed.wait(60)
    assert any("compiled in a child process" in line for line in logs), logs
    steps = warmup.warm_steps(["random"])
    assert service.warmup is not None and service.warmup.done == {key for key, _, _ in steps}
    # one count over both processes' steps (the child's and its helper's), each step once, ready after all
    # the steps before it
    counts = [line.split()[1] for line in logs if line.startswith("warm: ") and line.split()[1][0].isdigit()]
    assert counts == [f"{k}/{len(steps)}" for k in range(1, len(steps) + 1)], logs
    ready = next(i for i, line in enumerate(logs) if "ready for every built-in game" in line)
    before = [what for key, what, _ in steps[: [key for key, _, _ in steps].index(READY_STEP)]]
    assert all(any(what in line for line in logs[:ready]) for what in before), logs
    # The parent's end of the child's stdin closing (the parent gone) ends a warm-up at once, and its helper.
    orphan_logs: list[str] = []
    orphaned = PlayerService(PlayerConfig(spec="random"), log=orphan_logs.append)
    orphan = orphaned.warm_elsewhere()
    assert orphan.stdin is not None
    helper = None
    if warmup.warm_workers() > 1:
        assert orphaned.warmup is not None and orphaned.warmup.wait_for({"recognise"}, 600), orphan_logs  # the helper's
        (line,) = [line for line in orphan_logs if "two processes" in line]
        helper = int(line.split("pid ")[1].split(",")[0])
    orphan.stdin.close()
    assert orphan.wait(120) == 3
    if helper is not None:
        assert _ends(helper, 120), f"the helper {helper} outlived its parent"


def _ends(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` (not ours to wait for) is gone, or a zombie, within ``seconds``."""
    from pathlib import Path

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)  # polling another process's end: nothing to wait on but its /proc entry
    return False


@pytest.mark.parametrize("games_first", [False, True])
def test_the_warm_up_splits_its_steps_between_two_processes(games_first: bool) -> None:
    """Each step in one share, in the order the warm-up lists them; the games in one, the sheets in the other."""
    steps = warmup.warm_steps(["mcts"], games_first)
    keys = [key for key, _, _ in steps]
    sheets, games = warmup.split_steps(steps)
    assert sorted(sheets + games) == [i for i, key in enumerate(keys) if key != READY_STEP]
    assert sheets == sorted(sheets) and games == sorted(games)
    assert {keys[i] for i in games} == {"recognise", "roles1", "roles4"} | {k for k in keys if k.startswith("game:")}
    assert {keys[i] for i in sheets} == {"reasoner", "roles2", "roles3"}
    assert 1 <= warmup.warm_workers() <= warmup.MAX_WARM_WORKERS


@pytest.mark.parametrize("roles", [3, 4])
def test_the_warm_up_plays_games_of_turns_of_three_and_four_roles(roles: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first chineseCheckers3 against Sancho (a cold cache) played 5 moves at random while the solver and
    the decisive moves compiled for three roles: the warm-up's sheet of three roles had only moves at once."""
    from ggp.protocol.recognize import gdl_game

    played: list[ggp.Game] = []
    monkeypatch.setattr(warmup, "play_a_move", lambda agent, game: played.append(game))
    step = {key: run for key, _, run in warmup.warm_steps(["random"])}[f"roles{roles}"]
    step()
    assert {len(g.roles) for g in played} == {roles}
    assert f"roles{roles}" in warmup.sheet_steps(roles)
    turns = gdl_game(parse_terms(warmup._in_turn(roles)))
    state = turns.initial_state()
    for step_no in range(3):  # each role in turn has the choice, the others wait
        choosing = [r for r in turns.roles if len(turns.legal_moves(state, r)) > 1]
        assert choosing == [turns.roles[step_no % roles]]
        state = turns.next_state(state, [turns.legal_moves(state, r)[0] for r in turns.roles])
    assert turns.is_terminal(state)


def test_the_warm_up_plays_its_sheets_batched_and_not_and_runs_the_solver_on_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first match on a large sheet had compiled, in its start clock and first move, the search's batched code
    and the exhaustive solver's: the tiny sheets of the warm-up had never reached them. Which way a sheet's
    rollouts go is measured on the machine, the tiny sheets' too, so each is played both ways: a first
    quartoSuicide match (not batched) had compiled the other way and played its first moves at random."""
    from ggp.agents.uct import UCTSearch
    from ggp.gdl.lanes import LANES
    from ggp.protocol.recognize import gdl_game

    game = gdl_game(parse_terms(warmup._in_turn(2)))
    for batch in (1, LANES):
        twin = warmup.with_batch(game, batch)
        assert twin.kernel.rollout_batch() == batch
        assert UCTSearch(twin, capacity=1000, seed=1).batch == batch
    assert warmup.with_batch(game, 1).kernel is not game.kernel  # the game itself keeps its own measure

    done: list[tuple[str, int]] = []
    monkeypatch.setattr(warmup, "solving", lambda game: done.append(("solver", len(game.roles))))
    monkeypatch.setattr(warmup, "play_a_move", lambda agent, game: done.append(("batch", game.kernel.rollout_batch())))
    step = {key: run for key, _, run in warmup.warm_steps(["random"])}["roles2"]
    step()
    assert done.count(("solver", 2)) == 2  # each sheet of two roles
    assert done.count(("batch", LANES)) >= 2  # each played batched too
    assert done.count(("batch", 1)) >= 2  # and one rollout at a time


def test_the_warm_up_runs_the_solver_on_a_puzzle_that_gives_it_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The puzzle search runs the exhaustive solver too, compiled apart for one role: a first puzzle compiled
    it in its start clock (10 s and more) while the warm-up's puzzle had a single move, nothing to walk."""
    from ggp.agents.solver import SEARCHING, DFSolver
    from ggp.protocol.recognize import gdl_game

    puzzle = gdl_game(parse_terms(warmup._TINY))
    solver = DFSolver(puzzle)
    solver.reset(puzzle.initial_state())
    assert solver.status == SEARCHING  # something to walk, so running it compiles it
    done: list[int] = []
    monkeypatch.setattr(warmup, "solving", lambda game: done.append(len(game.roles)))
    monkeypatch.setattr(warmup, "play_a_move", lambda agent, game: None)
    {key: run for key, _, run in warmup.warm_steps(["random"])}["roles1"]()
    assert done == [1]
