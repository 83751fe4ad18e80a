"""Argument types shared by the ``ggp`` subcommands (argparse ``type=`` callables).

Each checks a value at the door, so that a bad one ends the command at once
with argparse's one-line error and exit code 2, before any game starts. Every
number has a maximum, stated in the option's help:

* counts: ``--games`` at most :data:`MAX_GAMES`, ``--workers`` at most
  :data:`MAX_WORKERS`, a perft depth at most :data:`MAX_PERFT_DEPTH`;
* seeds: 0 to :data:`MAX_SEED` (the compiled random games take 32 bits);
* clocks: finite seconds above 0, at most :data:`~ggp.match.calls.MAX_CLOCK`
  (a day); a grace at most :data:`~ggp.match.calls.MAX_GRACE`;
* ports: 0 to 65535.

Agent specs are checked by building the agent (:func:`ggp.agents.make_agent`
is the one judge of specs), paths by looking at the file system without
changing it.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from ..match.calls import MAX_CLOCK, MAX_GRACE

#: Most games ``ggp random`` and ``ggp match`` play in one run.
MAX_GAMES = 1_000_000
#: Most games per pair and seating in a tournament.
MAX_TOURNAMENT_GAMES = 10_000
#: Most worker processes of a tournament.
MAX_WORKERS = 64
#: Deepest perft (deeper counts would run for years on any game).
MAX_PERFT_DEPTH = 64
#: Largest seed.
MAX_SEED = 2**32 - 1
MAX_PORT = 65_535


def _whole(text: str, low: int, high: int) -> int:
    stripped = text.strip()
    # int() would take '1_000' and spend quadratic time on a million digits
    if not stripped.lstrip("+-").isdigit() or len(stripped) > 30:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a whole number")
    value = int(stripped)
    if value < low:
        raise argparse.ArgumentTypeError(f"{value} is negative" if value < 0 <= low else f"must be at least {low}")
    if value > high:
        raise argparse.ArgumentTypeError(f"{value} is too large: at most {high:,}")
    return value


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """A type for whole numbers from ``low`` to ``high``."""

    def parse(text: str) -> int:
        return _whole(text, low, high)

    return parse


def non_negative_int(text: str) -> int:
    """A whole number, 0 or more (up to 10^30: an option with a real maximum says so with its own type)."""
    return _whole(text, 0, 10**30)


def positive_int(text: str) -> int:
    """A whole number, 1 or more (up to 10^30)."""
    return _whole(text, 1, 10**30)


def seed(text: str) -> int:
    """A random seed: 0 to :data:`MAX_SEED`."""
    return _whole(text, 0, MAX_SEED)


def game_count(text: str) -> int:
    """How many games: 1 to :data:`MAX_GAMES`."""
    return _whole(text, 1, MAX_GAMES)


def tournament_games(text: str) -> int:
    """Games per pair and seating: 1 to :data:`MAX_TOURNAMENT_GAMES`."""
    return _whole(text, 1, MAX_TOURNAMENT_GAMES)


def worker_count(text: str) -> int:
    """Worker processes: 1 to :data:`MAX_WORKERS`."""
    return _whole(text, 1, MAX_WORKERS)


def perft_depth(text: str) -> int:
    """A perft depth: 0 to :data:`MAX_PERFT_DEPTH`."""
    return _whole(text, 0, MAX_PERFT_DEPTH)


def port(text: str) -> int:
    """A TCP port: 0 (any free port) to 65535."""
    return _whole(text, 0, MAX_PORT)


def _seconds(text: str, zero: bool, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a number") from None
    if not math.isfinite(value) or not (value >= 0 if zero else value > 0):
        what = "0 or a positive number" if zero else "a positive number"
        raise argparse.ArgumentTypeError(f"{_shown(text)} must be {what} of seconds")
    if value > high:
        raise argparse.ArgumentTypeError(f"{_shown(text)} seconds is too long: at most {high:g}")
    return value


def positive_float(text: str) -> float:
    """A number of seconds above 0, at most :data:`~ggp.match.calls.MAX_CLOCK` (a clock)."""
    return _seconds(text, zero=False, high=MAX_CLOCK)


def non_negative_float(text: str) -> float:
    """A number of seconds, 0 or more, at most :data:`~ggp.match.calls.MAX_CLOCK`."""
    return _seconds(text, zero=True, high=MAX_CLOCK)


def grace(text: str) -> float:
    """Slack past a clock: 0 or more seconds, at most :data:`~ggp.match.calls.MAX_GRACE`."""
    return _seconds(text, zero=True, high=MAX_GRACE)


# --- games, agents, names ------------------------------------------------------------------------------
def game_ref(text: str) -> str:
    """A built-in game's name or a rule sheet's path, as :func:`ggp.load` takes it (which says if it is unknown)."""
    if not text.strip() or "\x00" in text or len(text) > 4096:
        raise argparse.ArgumentTypeError(
            f"{_shown(text)} is neither a game nor a rule sheet's path; `ggp games` lists the games"
        )
    return text


# --- agents, names -------------------------------------------------------------------------------------
def agent_spec(text: str) -> str:
    """An agent spec that :func:`ggp.agents.make_agent` builds; returns it stripped."""
    from ..agents import make_agent

    spec = text.strip()
    try:
        make_agent(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(one_line(f"{_clip(spec)}: {exc}")) from None
    except Exception as exc:  # a plugged-in agent's own bug: still one line, naming it
        raise argparse.ArgumentTypeError(
            one_line(f"{_clip(spec)}: the agent cannot be built: {type(exc).__name__}: {exc}")
        ) from None
    return spec


def player_spec(text: str) -> str:
    """``human`` or an agent spec (see :func:`agent_spec`)."""
    return "human" if text.strip().lower() == "human" else agent_spec(text)


def role_player(text: str) -> str:
    """``ROLE=URL`` (a GGP player at ``http://host:port/...``) or ``ROLE=SPEC`` (an agent spec); returns it stripped."""
    role, eq, who = text.partition("=")
    role, who = role.strip(), who.strip()
    if not eq or not role or not who:
        raise argparse.ArgumentTypeError(
            f"{_shown(text)}: expected ROLE=URL or ROLE=SPEC, e.g. white=http://127.0.0.1:9147 or black=random"
        )
    if who.lower().startswith(("http://", "https://")):
        problem = url_problem(who)
        if problem:
            raise argparse.ArgumentTypeError(f"{_shown(text)}: {problem}")
        return f"{role}={who}"
    return f"{role}={agent_spec(who)}"


def url_problem(url: str) -> str | None:
    """What is wrong with a GGP player's URL (``http://host:port/``), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it checks it
    except ValueError as exc:
        return f"{_shown(url)} is not a URL: {exc}"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return f"{_shown(url)} is not a URL like http://127.0.0.1:9147"
    if any(c.isspace() or not c.isprintable() for c in url):
        return f"{_shown(url)} holds spaces or control characters"
    return None


def symbol(text: str) -> str:
    """One KIF symbol (a GGP player's name or a match id): no spaces, parentheses, ``;`` or quotes."""
    if not text or any(c.isspace() or c in '();"' or not c.isprintable() for c in text) or len(text) > 200:
        raise argparse.ArgumentTypeError(
            f"{_shown(text)} is not one word: use up to 200 characters without spaces, parentheses or quotes"
        )
    return text


# --- paths ---------------------------------------------------------------------------------------------
def _writable_folder(folder: Path, what: str) -> None:
    """Raise unless files can be created in ``folder`` or, if it does not exist yet, in the folder it would be made in.

    Creating and removing a temporary file is the one test that also holds for
    root and for read-only file systems.
    """
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{what}: {str(existing)!r} is not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".ggp-probe-")
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{what}: cannot write in {str(existing)!r}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def output_file(text: str) -> str:
    """A file to write (a match record, a database): not a folder, in a folder we may write (or create)."""
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file name")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular file")
    if path.is_file() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable")
    _writable_folder(path.parent, repr(text))
    return text


def output_folder(text: str) -> str:
    """A folder to write files into: an existing writable folder, or one that can be created."""
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a folder")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder; give a folder for the records")
    _writable_folder(path, repr(text))
    return text


def _shown(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str) -> str:
    """``text`` on one line: control characters (newlines included) written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
