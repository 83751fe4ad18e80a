"""The host: ggp.match's referee running a match in which some roles are GGP players reached over HTTP.

Each remote role is played by a :class:`RemotePlayer`, an
:class:`~ggp.agents.Agent` that speaks GGP: its ``start`` sends START with
the rule sheet, ``select_move`` sends PLAY with the previous joint move
(``NIL`` first) and ``stop`` sends STOP with the last one. The remote players
of a match share a :class:`RemoteMatch`, which sends each message to all of
them at once (as a GGP game manager does: every player thinks during the same
play clock) and ABORT if the match is abandoned.

The referee (:class:`~ggp.match.Referee`) enforces the clocks and replaces a
failed move by a random legal one. What the adapter does with a reply:

* a legal move: returned;
* a move term that is not a legal move (or no move of the game): returned as
  a :class:`~ggp.Move`, so the referee records it as ``illegal``;
* a reply that is not one S-expression (or ``nil``): returned as text, so the
  referee records ``not_a_move`` with the text;
* no reply by the clock plus most of the grace: :class:`RemoteTimeout` (the
  record says ``timeout``);
* an unreachable player, an HTTP error status, ``busy``: :class:`RemoteError`
  (the record says ``exception`` with the reason).

:func:`host_match` is what ``ggp host`` runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..agents import Agent, make_agent
from ..agents.hidden import hidden_agent
from ..core.errors import GGPError, MoveSyntaxError
from ..core.game import Game, Move, State
from ..core.kif import Term, parse_terms, term_text
from ..match.record import MatchRecord
from ..match.referee import Referee, StepHook
from ..match.series import agent_seed
from ..registry import game_names, load
from .messages import (
    BUSY,
    DONE,
    NIL,
    READY,
    Abort,
    Info,
    Message,
    Play,
    PlayerView,
    ProtocolError,
    Start,
    Stop,
    parse_info_reply,
    read_term,
    render_message,
)
from .wire import HttpError, read_response

#: The largest reply a host reads from a player.
MAX_REPLY = 1024 * 1024
#: The longest reply read as a move (a GDL move is a short term; Amazons' longest is 16 characters).
MAX_MOVE_TEXT = 4096
#: Seconds allowed for INFO and ABORT, which have no clock.
QUICK = 3.0


class HostError(GGPError):
    """A match cannot be hosted as asked (an unknown role, an unreachable player, ...)."""


class RemoteError(RuntimeError):
    """A remote player failed: unreachable, an HTTP error status, or a reply that makes no sense here."""

    #: How the referee records it (see :func:`ggp.match.calls.exception_fault`).
    fault_kind = "exception"


class _Busy(HostError):
    """A player answered INFO with busy (``warming``: still warming up)."""

    def __init__(self, message: str, warming: bool = False) -> None:
        super().__init__(message)
        self.warming = warming


#: Seconds :func:`host_match` waits at most for a player that answers INFO busy while warming up: a first
#: start compiles for minutes on a loaded machine.
WARM_UP_WAIT = 3600.0


class RemoteTimeout(RemoteError):
    """A remote player did not answer in time."""

    fault_kind = "timeout"


def is_url(text: str) -> bool:
    """Whether a player is given as a URL (``http://host:port``) rather than an agent spec."""
    return text.strip().lower().startswith(("http://", "https://"))


@dataclasses.dataclass
class _Pending:
    """One message to one player, sent in its own thread; ``done`` is set when the reply (or failure) is in."""

    url: str
    text: str
    limit: float
    sent: float = 0.0
    status: int | None = None
    body: str = ""
    error: RemoteError | None = None
    done: threading.Event = dataclasses.field(default_factory=threading.Event)

    def result(self) -> tuple[int, str]:
        """The status and body, waiting until the limit; raises :class:`RemoteError` or :class:`RemoteTimeout`."""
        if not self.done.wait(max(0.0, self.sent + self.limit - time.monotonic())):
            raise RemoteTimeout(f"no reply from {self.url} within {self.limit:.2f} s")
        if self.error is not None:
            raise self.error
        assert self.status is not None
        return self.status, self.body


class Transport:
    """Sends GGP messages over HTTP/1.0: ``POST`` with ggp-base's headers, one connection per message.

    Whatever a player does (never answer, answer a byte at a time, answer
    without end, close the connection, redirect), an exchange ends by its time
    limit with at most :data:`MAX_REPLY` bytes read, so no thread of the host
    outlives its clock. Redirects are not followed.
    """

    def post(self, url: str, text: str, limit: float, receiver: str) -> tuple[int, str]:
        """The status and body of the reply to ``text``; raises :class:`RemoteError` (:class:`RemoteTimeout`)."""
        deadline = time.monotonic() + limit
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError as exc:
            raise RemoteError(f"cannot talk to {url}: not a URL: {exc}") from None
        secure = parts.scheme.lower() == "https"
        if not host or parts.scheme.lower() not in ("http", "https"):
            raise RemoteError(f"cannot talk to {url}: not a URL like http://127.0.0.1:9147")
        port = port or (443 if secure else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        data = text.encode("utf-8")
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        head = (
            f"POST {path} HTTP/1.0\r\n"
            f"Host: {authority}\r\n"
            "Accept: text/delim\r\n"
            "Sender: GAMESERVER\r\n"
            f"Receiver: {receiver}\r\n"
            "Content-Type: text/acl\r\n"
            f"Content-Length: {len(data)}\r\n"
            "Connection: close\r\n"
            "\r\n"
        )
        target = self.address(url, host, port)
        try:
            sock = socket.create_connection((target, port), timeout=max(0.001, deadline - time.monotonic()))
        except TimeoutError:
            raise RemoteTimeout(f"no reply from {url} within {limit:.2f} s (no connection)") from None
        except OSError as exc:
            raise RemoteError(f"cannot talk to {url}: {exc.strerror or exc}") from None
        try:
            if secure:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock.sendall(head.encode("latin-1", errors="replace") + data)
            response = read_response(sock, deadline, MAX_REPLY)
        except TimeoutError:
            raise RemoteTimeout(f"no reply from {url} within {limit:.2f} s") from None
        except HttpError as exc:
            raise RemoteError(f"{url} sent a bad reply: {exc.message}") from None
        except OSError as exc:
            raise RemoteError(f"cannot talk to {url}: {exc.strerror or exc}") from None
        finally:
            sock.close()
        return response.status, response.body.decode("utf-8", errors="replace")

    def address(self, url: str, host: str, port: int) -> str:
        """Where to connect to reach ``host`` of ``url``: the name itself (the system resolves it).

        A subclass may resolve and check the name, and return the address it checked (raising
        :class:`RemoteError` to refuse); ``Host`` and TLS's server name still say ``host``.
        """
        return host

    def close(self) -> None:
        """Nothing to release: every exchange has its own connection."""


class RemoteMatch:
    """The remote players of one match and the messages sent to them.

    ``players`` maps each remote role to its URL. Messages go to every
    remote player at once, each in its own thread; each is waited for until
    its clock plus ``0.8 * grace`` (so the referee, which waits the clock plus
    the whole grace, always hears the adapter's verdict first).
    """

    def __init__(
        self,
        game: Game,
        rules: tuple[Term, ...],
        players: Mapping[str, str],
        *,
        match_id: str,
        start_clock: float,
        play_clock: float,
        grace: float,
        transport: Transport | None = None,
    ) -> None:
        self.game = game
        self.rules = rules
        self.urls = dict(players)
        self.match_id = match_id
        self.start_clock = start_clock
        self.play_clock = play_clock
        self.grace = grace
        self.transport = transport or Transport()
        self.names = {role: _receiver(url) for role, url in self.urls.items()}
        self.last_joint: tuple[str, ...] | None = None
        #: The true state, kept in a GDL-II match to tell each player its percepts (and nothing else).
        self.state: State | None = game.initial_state() if game.hidden_information else None
        self.steps = 0
        self.aborted = False
        self.exchanges: list[tuple[str, str, str]] = []  # (role, message, reply or error), for logs and tests
        self._lock = threading.Lock()
        self._sent: dict[tuple[Any, ...], dict[str, _Pending]] = {}

    def agent(self, role: str) -> RemotePlayer:
        """The adapter that plays ``role`` through its remote player."""
        return RemotePlayer(self, role)

    # --- referee hooks ---------------------------------------------------------------------------
    def on_step(self, step: int, joint: tuple[str, ...]) -> None:
        """The referee's step hook: remember the joint move that the next PLAY (or STOP) carries."""
        with self._lock:
            self.steps = step
            self.last_joint = tuple(joint)
            if self.state is not None:
                self.state = self.game.next_state(self.state, list(joint))

    # --- sending ---------------------------------------------------------------------------------------
    def check(self, wait: float | None = None) -> dict[str, dict[str, str]]:
        """Ask every remote player INFO; raises :class:`HostError` if one is unreachable, or busy for longer
        than ``wait`` seconds. A player still warming up (``ggp serve`` on a first start) answers busy, with
        how far it is, until it is ready: ``wait`` None waits up to :data:`WARM_UP_WAIT` for such a player and
        not at all for one busy with another match. A busy player is asked again every second."""
        end = time.monotonic() + (wait if wait is not None else 0.0)
        warm_end = time.monotonic() + (wait if wait is not None else WARM_UP_WAIT)
        while True:
            try:
                return self._check()
            except _Busy as exc:
                if time.monotonic() + 1.0 > (warm_end if exc.warming else end):
                    raise HostError(str(exc)) from None
                time.sleep(1.0)  # a remote player's readiness: nothing here to wait on but its answer

    def _check(self) -> dict[str, dict[str, str]]:
        pending = {
            role: self._send(url, render_message(Info()), QUICK, self.names[role]) for role, url in self.urls.items()
        }
        found: dict[str, dict[str, str]] = {}
        for role, p in pending.items():
            url = self.urls[role]
            try:
                status, body = p.result()
            except RemoteError as exc:
                raise HostError(f"the player of {role} at {url} does not answer INFO: {exc}") from None
            try:
                fields = parse_info_reply(body) if status == 200 else {}
            except ProtocolError:
                fields = {}
            if fields.get("status", "").lower() == BUSY:
                if "warming" in fields:
                    raise _Busy(f"the player of {role} at {url} is still warming up ({fields['warming']})", True)
                raise _Busy(f"the player of {role} at {url} is busy with another match")
            if "name" in fields:
                self.names[role] = fields["name"]
            found[role] = fields
        return found

    def message(self, key: tuple[Any, ...], role: str) -> _Pending:
        """The exchange ``key`` (``("start",)``, ``("play", step)``, ``("stop",)``) with ``role``, sent to all if new."""
        with self._lock:
            batch = self._sent.get(key)
            if batch is None:
                batch = {}
                for other, url in self.urls.items():
                    text, clock = self._text(key, other)
                    batch[other] = self._send(url, text, clock + 0.8 * self.grace, self.names[other])
                self._sent = {key: batch}  # earlier exchanges are over
            return batch[role]

    def _text(self, key: tuple[Any, ...], role: str) -> tuple[str, float]:
        kind = key[0]
        message: Message
        if kind == "start":
            message = Start(self.match_id, role, self.rules, self.start_clock, self.play_clock)
            return render_message(message), self.start_clock
        joint = None if self.last_joint is None else tuple(_term(t) for t in self.last_joint)
        if self.state is not None:  # GDL-II: the player's own last move and its percepts, never the joint move
            last = None if joint is None else joint[self.game.role_index(role)]
            percepts = tuple(_term(p) for p in self.game.percepts(self.state, role))
            view = PlayerView(self.steps, last, percepts)
            message = Play(self.match_id, None, view) if kind == "play" else Stop(self.match_id, None, view)
            return render_message(message), self.play_clock
        if kind == "play":
            return render_message(Play(self.match_id, joint)), self.play_clock
        return render_message(Stop(self.match_id, joint)), self.play_clock

    def _send(self, url: str, text: str, limit: float, receiver: str) -> _Pending:
        pending = _Pending(url=url, text=text, limit=limit, sent=time.monotonic())

        def run() -> None:
            try:
                pending.status, pending.body = self.transport.post(url, text, limit + 0.5, receiver)
            except RemoteError as exc:
                pending.error = exc
            except Exception as exc:  # a bug must not hang the referee: report it as the player's failure
                pending.error = RemoteError(f"{type(exc).__name__}: {exc}")
            finally:
                pending.done.set()

        threading.Thread(target=run, name="ggp-host-send", daemon=True).start()
        return pending

    def abort(self) -> None:
        """Send ABORT to every remote player (best effort, a few seconds at most)."""
        if self.aborted:
            return
        self.aborted = True
        text = render_message(Abort(self.match_id))
        pending = [self._send(url, text, QUICK, self.names[role]) for role, url in self.urls.items()]
        for p in pending:
            with contextlib.suppress(RemoteError):
                p.result()

    def close(self) -> None:
        self.transport.close()

    def note(self, role: str, message: str, reply: str) -> None:
        with self._lock:
            self.exchanges.append((role, message, reply))


class RemotePlayer(Agent):
    """An agent whose moves come from a GGP player over HTTP (see the module documentation)."""

    name = "remote"
    reads_state = False  # it sends its player the messages of the game's protocol (a GDL-II view, if hidden)

    def __init__(self, remote: RemoteMatch, role: str) -> None:
        super().__init__()
        self.remote = remote
        self.remote_role = role
        self.url = remote.urls[role]

    def start(self, game: Game, role: str, start_clock: float | None = None, play_clock: float | None = None) -> None:
        super().start(game, role, start_clock, play_clock)
        body = self._exchange(("start",))
        if body.lower() == BUSY:
            raise RemoteError(f"{self.url} answered busy to START: it is playing another match")
        if body.lower() != READY:
            raise RemoteError(f"{self.url} answered {_clip(body)!r} to START, not ready")

    def select_move(self, state: State, time_limit: float | None = None) -> Move:
        body = self._exchange(("play", self.remote.steps + 1))
        if body.lower() == BUSY:
            raise RemoteError(f"{self.url} answered busy to PLAY: it is not playing this match")
        return self._read_move(body)  # type: ignore[return-value]  # text that is no move goes to the referee as such

    def stop(self, state: State, goals: Any) -> None:
        body = self._exchange(("stop",))
        if body.lower() != DONE:
            raise RemoteError(f"{self.url} answered {_clip(body)!r} to STOP, not done")

    def _exchange(self, key: tuple[Any, ...]) -> str:
        pending = self.remote.message(key, self.remote_role)
        try:
            status, body = pending.result()
        except RemoteError as exc:
            self.remote.note(self.remote_role, pending.text, f"{type(exc).__name__}: {exc}")
            raise
        body = body.strip()
        self.remote.note(self.remote_role, pending.text, body if status == 200 else f"HTTP {status} {body}")
        if status != 200:
            raise RemoteError(f"{self.url} answered HTTP {status}: {_clip(body)}")
        return body

    def _read_move(self, body: str) -> Move | str:
        """A Move for a reply that is a term (legal or not: the referee judges), the text itself otherwise."""
        if len(body) > MAX_MOVE_TEXT:  # no game has moves this long: a fault, told by a clipped copy
            return body
        try:
            term = read_term(body, "reply")
        except ProtocolError:
            return body
        text = term_text(term)
        if text.lower() == NIL:
            return body
        try:
            return self.game.parse_move(text)
        except MoveSyntaxError:
            return Move(text)

    def __repr__(self) -> str:
        return f"RemotePlayer({self.url!r})"


def _term(text: str) -> Term:
    terms = parse_terms(text)
    return terms[0] if len(terms) == 1 else text


def _receiver(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return rest.split("/", 1)[0]


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- running a match -----------------------------------------------------------------------------------
def rules_of(game_ref: str) -> tuple[Game, str, str]:
    """The game, its rule sheet text and the name the record gives it, for a built-in name or a .kif path."""
    key = str(game_ref).strip()
    game = load(key)
    if key.lower() in game_names():
        from ..gdl import rules_text

        return game, rules_text(key.lower()), game.name
    path = Path(key)
    return game, path.read_text(encoding="utf-8"), str(path.resolve())


def new_match_id(game: Game) -> str:
    """A fresh match id: ``ggp.GAME.TIME.RANDOM``."""
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in game.name)
    return f"ggp.{name}.{time.strftime('%Y%m%dT%H%M%S')}.{secrets.token_hex(3)}"


def host_match(
    game_ref: str,
    players: Mapping[str, str],
    *,
    start_clock: float = 10.0,
    play_clock: float = 5.0,
    grace: float = 0.5,
    seed: int | None = None,
    match_id: str | None = None,
    on_step: StepHook | None = None,
    check_players: bool = True,
    on_remote: Callable[[RemoteMatch], None] | None = None,
    wait_ready: float | None = None,
) -> MatchRecord:
    """Host one match of ``game_ref`` (a built-in game or a .kif path); returns its record.

    ``players`` maps roles (any letter case) to a player: a URL
    (``http://127.0.0.1:9147``) for a remote GGP player, or an agent spec
    (``mcts:time=1``) for an agent in this process; roles left out are played
    by ``random``. Remote players are first asked INFO (``check_players``)
    and the match is not started if one is unreachable, or busy for longer than
    ``wait_ready`` seconds (default: not at all for a player busy with another
    match, up to :data:`WARM_UP_WAIT` for one still warming up). Faults are
    recorded as by the referee. If the match cannot finish (the game's rules
    fail), the remote players get ABORT and the error is raised.
    """
    game, text, record_name = rules_of(game_ref)
    by_lower = {r.lower(): r for r in game.roles}
    chosen: dict[str, str] = {}
    for role, who in players.items():
        real = by_lower.get(role.strip().lower())
        if real is None:
            raise HostError(f"{game.name} has no role {role!r}; its roles are {', '.join(game.roles)}")
        if real in chosen:
            raise HostError(f"role {real} is given twice")
        chosen[real] = who.strip()
    if game.chance_role is not None and game.chance_role in chosen:
        raise HostError(f"{game.chance_role} is chance in {game.name}: the host plays it, no player takes its seat")
    specs = [chosen.get(role, "random") for role in game.players]
    remote = {role: spec for role, spec in zip(game.players, specs, strict=True) if is_url(spec)}
    if len(set(remote.values())) != len(remote):
        raise HostError("each remote role needs a player of its own: a GGP player plays one match at a time")
    try:
        rules = tuple(parse_terms(text))
    except GGPError as exc:
        raise HostError(f"the rule sheet of {game.name} does not parse: {exc}") from None
    match_id = match_id or new_match_id(game)
    session = RemoteMatch(
        game, rules, remote, match_id=match_id, start_clock=start_clock, play_clock=play_clock, grace=grace
    )
    try:
        base_seed = seed if seed is not None else secrets.randbelow(2**31)
        agents: list[Agent] = []
        for i, (role, spec) in enumerate(zip(game.players, specs, strict=True)):
            if is_url(spec):
                agents.append(session.agent(role))
                continue
            if game.hidden_information:  # an agent in this process decides on what its role may know
                agents.append(hidden_agent(spec, seed=agent_seed(base_seed, i), seconds=0.5 * play_clock))
                continue
            try:
                agents.append(make_agent(spec, seed=agent_seed(base_seed, i)))
            except ValueError as exc:
                raise HostError(f"{role}={spec}: {exc}") from None
        if check_players and remote:
            session.check(wait_ready)
        if on_remote is not None:
            on_remote(session)

        def step_hook(step: int, joint: tuple[str, ...]) -> None:
            session.on_step(step, joint)
            if on_step is not None:
                on_step(step, joint)

        referee = Referee(
            game, start_clock=start_clock, play_clock=play_clock, grace=grace, seed=base_seed, on_step=step_hook
        )
        try:
            record = referee.run(agents, specs=specs)
        except BaseException:
            session.abort()
            raise
    finally:
        session.close()
    record.game = record_name
    return record


__all__ = [
    "HostError",
    "RemoteError",
    "RemoteMatch",
    "RemotePlayer",
    "RemoteTimeout",
    "Transport",
    "host_match",
    "is_url",
    "new_match_id",
    "rules_of",
]
