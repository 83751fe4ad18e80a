"""The errors ggp raises for user mistakes.

Every error a caller can cause (an unknown game, a malformed move, an illegal
move, a broken state document) is a subclass of :class:`GGPError` and of the
matching built-in (``ValueError`` or ``LookupError``), so ``except ValueError``
keeps working for code that does not know ggp.
"""

from __future__ import annotations


class GGPError(Exception):
    """Base class of every error ggp raises on purpose."""


class UnknownGameError(GGPError, LookupError):
    """``ggp.load`` was given a name that is neither a built-in game nor a file."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else ""


class MoveSyntaxError(GGPError, ValueError):
    """A move's text is not a term this game's moves can take."""


class IllegalMoveError(GGPError, ValueError):
    """A joint move is not legal in the state it was applied to.

    ``role`` and ``move`` name the offender when one role is to blame;
    ``legal`` holds a few of that role's legal moves as text.
    """

    def __init__(
        self,
        message: str,
        *,
        role: str | None = None,
        move: str | None = None,
        legal: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.role = role
        self.move = move
        self.legal = legal


class GameOverError(IllegalMoveError):
    """A move was applied to a terminal state."""


class StateFormatError(GGPError, ValueError):
    """A serialised state could not be read back."""
