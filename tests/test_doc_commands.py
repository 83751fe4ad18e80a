"""Every `ggp` command line shown in the README and the documentation is one the command accepts: each is
parsed by the ``ggp`` argument parser, so a renamed option or command cannot leave the docs behind."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from ggp.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def shell_lines(text: str) -> list[str]:
    """The lines of the ```sh blocks of a Markdown text, continuations joined, comments and prompts dropped."""
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip().removeprefix("$ ")
            if line:
                lines.append(line)
    return lines


def commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for line in shell_lines(page.read_text(encoding="utf-8")):
            if line.startswith("ggp ") and "[" not in line:  # [--option] marks an optional part in prose
                found.append((page.relative_to(ROOT).as_posix(), line))
    return found


COMMANDS = commands()


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) >= 20
    assert {"README.md", "docs/getting-started.md"} <= {page for page, _ in COMMANDS}


@pytest.mark.parametrize(("page", "line"), COMMANDS, ids=[f"{p}:{line[:50]}" for p, line in COMMANDS])
def test_a_documented_command_parses(page: str, line: str) -> None:
    argv = shlex.split(line)[1:]
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{page}: `{line}` is refused by the ggp command (exit {exc.code})")
