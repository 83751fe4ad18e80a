"""How a match is set up: its players (``human`` or an agent spec), its clocks within the server's limits,
the registered agents to choose from, and how a seat's secret token is kept."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import math
from dataclasses import dataclass
from typing import Any

from ..agents import AGENTS, make_agent
from .limits import Limits

HUMAN = "human"
#: The player of a GDL-II game's chance role (``random``): the referee itself, uniformly; it takes no seat.
CHANCE = "chance"


@dataclass
class Settings:
    """How a match is run."""

    #: Seconds an agent may think per move (its play clock).
    agent_time: float = 1.0
    #: Seconds at least between two steps of a match without people (so that it can be watched).
    pace: float = 0.0
    #: Seconds a person has for each move (0: no clock). The clock runs once every human seat is taken; a
    #: person whose time runs out gets a random legal move, as an agent that overruns does (GGP's rule).
    human_time: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Settings as stored; values that are not numbers fall back to the defaults."""
        out = cls()
        for key in ("agent_time", "pace", "human_time"):
            with contextlib.suppress(TypeError, ValueError):
                value = float(data.get(key, getattr(out, key)))
                if math.isfinite(value):
                    setattr(out, key, value)
        return out


def normalise_player(spec: str) -> str:
    """``spec`` normalised (``human`` or an agent spec); ``ValueError`` saying what is wrong otherwise."""
    spec = spec.strip()
    if spec.lower() == HUMAN:
        return HUMAN
    make_agent(spec)  # raises ValueError naming the known agents or options
    return spec


def check_settings(settings: Settings, limits: Limits) -> None:
    """``ValueError`` naming the bound if ``settings`` are outside ``limits``."""
    t, pace, human = settings.agent_time, settings.pace, settings.human_time
    if isinstance(human, bool) or not isinstance(human, int | float) or not 0 <= human <= limits.max_human_time:
        raise ValueError(
            f"human_time must be 0 (no clock) or at most {limits.max_human_time:g} seconds (this server's maximum), "
            f"not {human!r}"
        )
    if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= limits.max_agent_time:
        raise ValueError(
            f"agent_time must be more than 0 and at most {limits.max_agent_time:g} seconds (this server's maximum), "
            f"not {t!r}"
        )
    if isinstance(pace, bool) or not isinstance(pace, int | float) or not 0 <= pace <= limits.max_pace:
        raise ValueError(
            f"pace must be between 0 and {limits.max_pace:g} seconds (this server's maximum), not {pace!r}"
        )


def hash_token(token: str) -> str:
    """How a seat token is kept: its SHA-256 in hex (tokens are random, so no salt is needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_matches(token: object, digest: str) -> bool:
    """Whether ``token`` (as a request sent it: maybe missing, maybe not text) is the one kept as ``digest``.

    The comparison takes the same time however much of the digest matches, so that timing tells nothing."""
    if not isinstance(token, str) or not token:
        return False
    return hmac.compare_digest(hash_token(token), digest)


def agent_catalog() -> list[dict[str, Any]]:
    """The registered agents and their options: ``[{"name": "random", "options": ["seed"]}, ...]``."""
    from ..agents import agent_options

    out = []
    for name in sorted(AGENTS):
        try:
            options = list(agent_options(name))
        except Exception:  # a factory whose signature cannot be read: offer it without options
            options = []
        out.append({"name": name, "options": options})
    return out
