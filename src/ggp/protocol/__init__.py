"""The GGP protocol: ggp's agents as GGP players over HTTP, and a host that referees remote players.

The wire format is ggp-base's: HTTP/1.0 ``POST /`` with ``Content-Type:
text/acl`` and one S-expression as the body (keywords in any letter case);
the reply is ``text/acl`` with CORS headers. Players listen on port 9147 by
default.

* :mod:`ggp.protocol.messages`: the messages (INFO, START, PLAY, STOP, ABORT,
  PREVIEW), parsed and rendered.
* :mod:`ggp.protocol.wire`: HTTP with limits (body size, deadlines,
  connections) and ggp-base's exact reply bytes; :class:`GGPServer`.
* :mod:`ggp.protocol.recognize`: which game a received rule sheet is; a
  built-in game is played on its native engine, any other on the GDL reasoner.
* :mod:`ggp.protocol.player`: :class:`PlayerService`, an agent behind the
  protocol that always answers in time with a legal move (``ggp serve``); beside it
  :mod:`~ggp.protocol.player_match` (one match's state), :mod:`~ggp.protocol.player_agent`
  (starting the agent, its move or a random legal one, pondering), :mod:`~ggp.protocol.early_moves`
  (the prover's moves while the rules compile), :mod:`~ggp.protocol.reasoner_switch` (a joint move the
  native engine refuses, taken by the sheet's reasoner) and :mod:`~ggp.protocol.warmup` (compiling
  before the first match).
* :mod:`ggp.protocol.host`: :func:`host_match`, ggp.match's referee with
  remote players (``ggp host``).

This package sits on top of the others (core, games, gdl, agents, match);
none of them imports it.
"""

from .host import HostError, RemoteError, RemoteMatch, RemotePlayer, RemoteTimeout, host_match
from .messages import (
    DEFAULT_PORT,
    Abort,
    Info,
    Message,
    Play,
    Preview,
    ProtocolError,
    Start,
    Stop,
    parse_message,
    render_message,
)
from .player import PlayerService, serve
from .player_match import PlayerConfig
from .recognize import Recognition, recognize
from .wire import GGPServer, Reply

__all__ = [
    "DEFAULT_PORT",
    "Abort",
    "GGPServer",
    "HostError",
    "Info",
    "Message",
    "Play",
    "PlayerConfig",
    "PlayerService",
    "Preview",
    "ProtocolError",
    "Recognition",
    "RemoteError",
    "RemoteMatch",
    "RemotePlayer",
    "RemoteTimeout",
    "Reply",
    "Start",
    "Stop",
    "host_match",
    "parse_message",
    "recognize",
    "render_message",
    "serve",
]
