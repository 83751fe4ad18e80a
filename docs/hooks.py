"""MkDocs hook: the reference of the ``ggp`` command, written from its argparse definitions at build time.

A page holding the line ``<!-- ggp-cli-reference -->`` gets, in its place, the help of ``ggp`` and of every
command, as ``ggp COMMAND -h`` prints it, so the page cannot drift from the parser.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

MARKER = "<!-- ggp-cli-reference -->"


def cli_reference() -> str:
    """Markdown: ``ggp -h``, then a section per command with its help text."""
    os.environ.setdefault("COLUMNS", "100")  # argparse wraps help to the terminal's width: fix it
    from ggp.cli import build_parser

    parser = build_parser()
    parts = ["## ggp", "", "```text", parser.format_help().rstrip(), "```", ""]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        parts += [f"## ggp {name}", "", "```text", command.format_help().rstrip(), "```", ""]
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown
