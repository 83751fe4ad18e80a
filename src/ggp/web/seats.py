"""Which seats a request speaks for: the seat tokens in its cookie or its ``X-Seat-Token`` header.

Every human seat of a match belongs to the browser (or API client) that took
it, by a secret token the server hands out when the match is created or the
seat is joined. A browser keeps its tokens in one cookie per match,
``ggp_seats``, scoped to that match's paths (``/games/{id}`` and
``/api/games/{id}``) so that its requests for other matches do not carry it;
it is ``HttpOnly`` (no script reads it) and ``SameSite=Strict`` (no other
site's page sends it). Its value is ``role=token&role=token``. An API client
sends the token of the seat it plays in ``X-Seat-Token`` instead.

>>> parse_cookie("white=abc&black=def")
{'white': 'abc', 'black': 'def'}
>>> cookie_value({"white": "abc"})
'white=abc'
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

COOKIE = "ggp_seats"
HEADER = "X-Seat-Token"
#: How long a browser keeps its seats (seconds): a year, so that a game can be picked up later.
MAX_AGE = 365 * 24 * 3600
#: More than any game has roles; a longer cookie is not ours.
_MAX_SEATS = 16


def parse_cookie(value: str | None) -> dict[str, str]:
    """``{role: token}`` from a cookie value; anything malformed is left out."""
    if not value or len(value) > 4096:
        return {}
    pairs = urllib.parse.parse_qsl(value, keep_blank_values=False, max_num_fields=_MAX_SEATS)
    return {role: token for role, token in pairs if role and token}


def cookie_value(tokens: dict[str, str]) -> str:
    return urllib.parse.urlencode(sorted(tokens.items()))


def paths(match_id: str) -> tuple[str, str]:
    """The paths a match's seat cookie is sent to: its page and its API."""
    return f"/games/{match_id}", f"/api/games/{match_id}"


class Seats:
    """The tokens one request holds for one match: by role from its cookie, and the one of its header."""

    def __init__(self, request: Request) -> None:
        self.cookie = parse_cookie(request.cookies.get(COOKIE))
        header = request.headers.get(HEADER)
        self.header = header.strip() if header and header.strip() else None

    def token(self, role: str) -> str | None:
        """The token to act for ``role`` with: the header's if given, else the cookie's for that role."""
        return self.header if self.header is not None else self.cookie.get(role)

    def tokens(self) -> list[str]:
        """Every token the request holds (for acts of any seat owner, such as abort and delete)."""
        return [self.header] if self.header is not None else list(dict.fromkeys(self.cookie.values()))

    def owned(self, manager: Any, match: Any, roles: Iterable[str]) -> list[str]:
        """The roles among ``roles`` this request owns."""
        return [r for r in roles if self.token(r) is not None and manager.owns(match, r, self.token(r))]


def remember(response: Response, request: Request, match_id: str, new: dict[str, str]) -> None:
    """Add the seats ``new`` (role -> token) to the browser's cookie for the match ``match_id``."""
    tokens = {**parse_cookie(request.cookies.get(COOKIE)), **new}
    secure = request.url.scheme == "https"
    for path in paths(match_id):
        response.set_cookie(
            COOKIE,
            cookie_value(tokens),
            max_age=MAX_AGE,
            path=path,
            httponly=True,
            samesite="strict",
            secure=secure,
        )
