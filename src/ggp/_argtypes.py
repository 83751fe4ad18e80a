"""Argument types shared by the ``ggp`` subcommands (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse


def non_negative_int(text: str) -> int:
    """A whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def positive_int(text: str) -> int:
    """A whole number, 1 or more."""
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _seconds(text: str, zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value >= 0 if zero else value > 0) or value == float("inf"):
        what = "0 or a positive number" if zero else "a positive number"
        raise argparse.ArgumentTypeError(f"{text} must be {what} of seconds")
    return value


def positive_float(text: str) -> float:
    """A number of seconds above 0."""
    return _seconds(text, zero=False)


def non_negative_float(text: str) -> float:
    """A number of seconds, 0 or more."""
    return _seconds(text, zero=True)
