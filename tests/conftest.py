"""Shared fixtures: where the shared specification files live."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# ../shared beside the repository, or GGP_SHARED when it lives elsewhere.
SHARED = Path(os.environ.get("GGP_SHARED", Path(__file__).resolve().parents[2] / "shared"))
TRACES = SHARED / "traces"
GAME_NAMES = ["amazons_10x10", "amazons_8x8", "bomberman", "bomberman2p", "wallmaze"]


def read_traces(name: str) -> Iterator[dict[str, Any]]:
    path = TRACES / f"{name}.jsonl"
    if not path.is_file():
        pytest.fail(f"trace file {path} is missing: ../shared/ must sit beside the repository (or set GGP_SHARED)")
    with path.open() as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


# --- helpers shared by the rule and property tests ---------------------------------------------


def play(game: Any, state: Any, *joint_moves: Any) -> Any:
    """The state after playing ``joint_moves`` (each a sequence of move texts, in role order) from ``state``."""
    for joint in joint_moves:
        state = game.next_state(state, list(joint))
    return state


def legal_texts(game: Any, state: Any, role: str) -> set[str]:
    """The legal moves of ``role`` in ``state``, as a set of KIF texts."""
    return {str(m) for m in game.legal_moves(state, role)}


def snapshot(game: Any, state: Any) -> tuple[str, bytes, int]:
    """Everything that identifies a state's value: its JSON, its raw array and its hash."""
    return game.state_to_json(state), state.array.tobytes(), hash(state)
