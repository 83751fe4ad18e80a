"""Which games the web app offers: the built-in ones, a directory of rule sheets, and sheets people upload.

A game is named by a key: a built-in name (``wallmaze``), ``sheet:STEM`` for
``STEM.kif`` in the directory the server was given (``ggp web --sheets DIR``),
or ``upload:HASH`` for an uploaded sheet (kept in the app's SQLite file, named
by the first 16 hex digits of its text's SHA-256, so uploading it again gives
the same game). Keys are what matches store, so a match of any game reopens
after a restart.

A sheet directory may hold a ``MANIFEST.json`` (or its parent may, as the GDL
corpus does): ``{"stem": {"name": ..., "description": ...}}``, which gives the
sheets human names and one-line descriptions.

>>> c = Catalog()
>>> c.title("bomberman2p")
'Bomberman (simultaneous)'
>>> c.load("nosuchgame")
Traceback (most recent call last):
...
ValueError: unknown game 'nosuchgame'; the games are amazons_10x10, amazons_8x8, bomberman, bomberman2p, wallmaze
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import GGPError
from ..core.game import Game
from ..gdl import load_file, load_text
from ..registry import families, game_names, load
from . import curation
from .store import Store


def game_titles() -> dict[str, tuple[str, str]]:
    """The registered games' human names and one-line descriptions, as their families give them."""
    return {name: title for family in families().values() for name, title in family.titles.items()}


#: The most sheets a directory catalog lists.
MAX_SHEETS = 2000
#: The largest rule sheet accepted by upload.
MAX_UPLOAD_BYTES = 512 * 1024
_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_HASH = re.compile(r"[0-9a-f]{16}")

_SHEETS_SCHEMA = """
CREATE TABLE IF NOT EXISTS sheets (
    hash    TEXT PRIMARY KEY,            -- first 16 hex digits of the text's SHA-256
    name    TEXT NOT NULL,
    text    TEXT NOT NULL,
    created REAL NOT NULL
)
"""


@dataclass(frozen=True)
class Entry:
    """One game of the catalog: its key, human name, description and where it comes from; for a directory's
    sheet, what it is like (``players``, ``moves``: ``turns`` or ``together``), whether it is ``featured`` or
    ``hidden`` by default (see :mod:`ggp.web.curation`)."""

    key: str
    title: str
    description: str
    source: str  # builtin | sheet | upload
    players: int | None = None
    moves: str | None = None
    featured: bool = False
    hidden: bool = False
    #: Whether its states lay out a board (None until :meth:`Catalog.learn_boards` has looked).
    board: bool | None = None


class Catalog:
    """The games of one server (see the module docstring); loading a sheet grounds it once and keeps it."""

    def __init__(self, sheets_dir: str | Path | None = None, store: Store | None = None) -> None:
        self.sheets_dir = Path(sheets_dir).expanduser() if sheets_dir is not None else None
        if self.sheets_dir is not None and not self.sheets_dir.is_dir():
            raise ValueError(f"--sheets must be a directory of .kif rule sheets; {self.sheets_dir} is not one")
        self.store = store
        self._lock = threading.Lock()
        self._games: dict[str, Game] = {}
        self._facts: dict[str, tuple[int | None, str | None]] = {}
        self._pictures: dict[str, str] = {}
        self._boards: dict[str, bool | None] = {}
        self._manifest = self._read_manifest()
        if store is not None:
            store.execute_script(_SHEETS_SCHEMA)

    # --- listing -------------------------------------------------------------------------------------
    def builtins(self) -> list[Entry]:
        """The built-in games, in the registry's order."""
        return [self.entry(n) for n in game_names()]

    def sheets(self) -> list[Entry]:
        """The directory's sheets: the featured games first (:data:`~ggp.web.curation.FEATURED`), then by name."""
        if self.sheets_dir is None:
            return []
        out = []
        for path in sorted(self.sheets_dir.glob("*.kif"))[:MAX_SHEETS]:
            if _STEM.fullmatch(path.stem):
                out.append(self.entry(f"sheet:{path.stem}"))
        return sorted(out, key=lambda e: (*curation.order(e.key[6:])[:1], e.title.lower()))

    def featured(self, count: int = 6) -> list[tuple[Entry, str | None]]:
        """The directory's first ``count`` featured sheets, each with its first board's picture once
        :meth:`draw_featured` has drawn it (None before: drawing grounds the sheet, seconds each)."""
        if self.sheets_dir is None:
            return []
        entries = [self.entry(f"sheet:{s}") for s in curation.FEATURED if self._sheet_path(s) is not None][:count]
        with self._lock:
            return [(e, self._pictures.get(e.key)) for e in entries]

    def draw_featured(self, draw: Callable[[Game], str], count: int = 6) -> None:
        """Load the featured sheets and keep ``draw`` of each (a server's background thread calls it at start)."""
        for entry, picture in self.featured(count):
            if picture is None:
                try:
                    drawn = draw(self.load(entry.key))
                except ValueError:
                    continue  # a sheet that does not load is listed without a picture
                with self._lock:
                    self._pictures[entry.key] = drawn

    def learn_boards(self) -> None:
        """Tell which sheets have a board, for the catalog's filter (:func:`~ggp.web.curation.board_of`: a few
        prover steps each, not grounding; a server's background thread calls it at start)."""
        for entry in self.sheets():
            stem = entry.key[6:]
            path = self._sheet_path(stem)
            if path is None or self.sheets_dir is None:
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            board = curation.board_of(text, self.sheets_dir.parent / "traces" / f"{stem}.jsonl")
            with self._lock:
                self._boards[stem] = board

    def uploads(self, limit: int = 50) -> list[Entry]:
        """The uploaded sheets, newest first."""
        if self.store is None:
            return []
        rows = self.store.query("SELECT hash, name FROM sheets ORDER BY created DESC LIMIT ?", (limit,))
        return [Entry(f"upload:{r['hash']}", r["name"], "an uploaded rule sheet", "upload") for r in rows]

    def entry(self, key: str) -> Entry:
        """The catalog entry of ``key`` (its title is the key itself when nothing better is known)."""
        titles = game_titles()
        if key in titles:
            title, description = titles[key]
            return Entry(key, title, description, "builtin")
        if key.startswith("sheet:"):
            stem = key[6:]
            info = self._manifest.get(stem, {})
            title = str(info.get("name") or stem)
            description = str(info.get("description") or "a game from a GDL rule sheet")
            players, moves = self._sheet_facts(stem)
            featured, hidden = stem in curation.FEATURED, curation.hidden(stem)
            with self._lock:
                board = self._boards.get(stem)
            return Entry(key, title, description, "sheet", players, moves, featured, hidden, board)
        if key.startswith("upload:") and self.store is not None:
            rows = self.store.query("SELECT name FROM sheets WHERE hash = ?", (key[7:],))
            if rows:
                return Entry(key, rows[0]["name"], "an uploaded rule sheet", "upload")
        return Entry(key, key, "", "builtin")

    def title(self, key: str) -> str:
        """The human name of ``key``."""
        return self.entry(key).title

    # --- loading -------------------------------------------------------------------------------------
    def known(self, key: str) -> bool:
        """Whether ``key`` names a game of this catalog (without loading it)."""
        if key in game_names():
            return True
        if key.startswith("sheet:"):
            return self._sheet_path(key[6:]) is not None
        if key.startswith("upload:") and self.store is not None and _HASH.fullmatch(key[7:]):
            return bool(self.store.query("SELECT 1 FROM sheets WHERE hash = ?", (key[7:],)))
        return False

    def load(self, key: str) -> Game:
        """The game named ``key``; ``ValueError`` saying what the keys are, or why the sheet does not load.

        A sheet is parsed and grounded on first use, which may take seconds: call it from a thread.
        """
        if not isinstance(key, str):
            raise ValueError("a game is named by a text key such as 'wallmaze' or 'sheet:ticTacToe'")
        if key in game_names():
            return load(key)
        with self._lock:
            game = self._games.get(key)
        if game is not None:
            return game
        if key.startswith("sheet:"):
            path = self._sheet_path(key[6:])
            if path is None:
                raise ValueError(f"no rule sheet {key[6:]!r} in this server's sheet directory")
            try:
                game = load_file(path)
            except GGPError as exc:
                raise ValueError(f"the rule sheet {path.name} does not load: {exc}") from None
        elif key.startswith("upload:"):
            text = self._upload_text(key[7:])
            if text is None:
                raise ValueError(f"no uploaded rule sheet {key[7:]!r}")
            game = _load_text(text, _slug(self.entry(key).title))
        else:
            shown = key if len(key) <= 80 else key[:80] + "…"
            raise ValueError(f"unknown game {shown!r}; the games are {', '.join(game_names())}")
        game.description = self.entry(key).description or game.description
        with self._lock:
            self._games[key] = game
        return game

    def rules_path(self, key: str) -> Path | None:
        """The rule sheet file of a ``sheet:`` key (for the GGP host, which sends the text), else None."""
        return self._sheet_path(key[6:]) if key.startswith("sheet:") else None

    def upload(self, name: str, text: str) -> Entry:
        """Validate a rule sheet with the reasoner and keep it; ``ValueError`` with the reasoner's message.

        Slow for big sheets (they are grounded): call it from a thread.
        """
        if self.store is None:
            raise ValueError("this server keeps no uploads")
        name = " ".join(str(name).split())[:80] or "uploaded sheet"
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the rule sheet is empty: paste or choose a .kif file with the game's rules")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_UPLOAD_BYTES:
            raise ValueError(f"a rule sheet is at most {MAX_UPLOAD_BYTES // 1024} KiB")
        if "\x00" in text:
            raise ValueError("a rule sheet is text, but this one holds NUL bytes")
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        game = _load_text(text, _slug(name))  # raises ValueError with the reasoner's message
        if game.is_terminal(game.initial_state()):
            raise ValueError("this rule sheet's initial state is already terminal: there is nothing to play")
        self.store.execute(
            "INSERT OR IGNORE INTO sheets (hash, name, text, created) VALUES (?, ?, ?, strftime('%s','now'))",
            (digest, name, text),
        )
        key = f"upload:{digest}"
        game.description = "an uploaded rule sheet"
        with self._lock:
            self._games[key] = game
        return self.entry(key)

    def upload_text(self, key: str) -> str | None:
        """The text of an uploaded sheet's key, else None."""
        return self._upload_text(key[7:]) if key.startswith("upload:") else None

    # --- helpers ---------------------------------------------------------------------------------------
    def _sheet_path(self, stem: str) -> Path | None:
        if self.sheets_dir is None or not _STEM.fullmatch(stem):
            return None
        path = self.sheets_dir / f"{stem}.kif"
        return path if path.is_file() else None

    def _sheet_facts(self, stem: str) -> tuple[int | None, str | None]:
        """How many play ``stem`` and whether in turns, read once from its text and its trace (if any)."""
        with self._lock:
            known = self._facts.get(stem)
        if known is None:
            path = self._sheet_path(stem)
            if path is None or self.sheets_dir is None:
                return None, None
            try:
                players = curation.facts_of_text(path.read_text(encoding="utf-8", errors="replace"))["players"]
            except OSError:
                players = None
            known = players, curation.moves_of_trace(self.sheets_dir.parent / "traces" / f"{stem}.jsonl")
            with self._lock:
                self._facts[stem] = known
        return known

    def _upload_text(self, digest: str) -> str | None:
        if self.store is None or not _HASH.fullmatch(digest):
            return None
        rows = self.store.query("SELECT text FROM sheets WHERE hash = ?", (digest,))
        return str(rows[0]["text"]) if rows else None

    def _read_manifest(self) -> dict[str, dict[str, Any]]:
        if self.sheets_dir is None:
            return {}
        for where in (self.sheets_dir / "MANIFEST.json", self.sheets_dir.parent / "MANIFEST.json"):
            if where.is_file():
                try:
                    data = json.loads(where.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    return {}
                if isinstance(data, dict):
                    return {str(k): v for k, v in data.items() if isinstance(v, dict)}
        return {}


def _slug(name: str) -> str:
    """A game name from a person's title: ``Tic-tac-toe 2`` -> ``tic-tac-toe_2``."""
    return re.sub(r"[^a-z0-9_-]+", "_", name.lower()).strip("_") or "sheet"


def _load_text(text: str, name: str) -> Game:
    """The game of an uploaded sheet's text: on the propnet, or on the top-down prover when the sheet is too
    large to ground (as ``ggp.load`` does for a file)."""
    try:
        return load_text(text, name)
    except GGPError as exc:
        raise ValueError(f"the rule sheet does not load: {exc}") from None
    except RecursionError:
        raise ValueError("the rule sheet does not load: it nests too deeply") from None
