"""Where the benchmarks find an existing ggp-base build, and how they compile their own Java programs against it.

ggp-base is another project's code: it is not built from here. Build it by its own project's instructions
(its README), then pass the checkout's folder as ``--ggp-base`` (or ``$GGP_BASE``). Its compiled classes
are looked for where its builds leave them (``build/classes/java/main``, ``build/classes``, ``bin``) and its
jars under ``lib/``. Our own small programs in ``bench/ggp_base/*.java`` use it as a library; they are
compiled into this repository's ``build/ggp_base_bench`` (ignored by git), never into ggp-base's tree.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Our own Java programs that use ggp-base as a library.
SOURCES = ROOT / "bench" / "ggp_base"
#: Where they are compiled to.
OURS = ROOT / "build" / "ggp_base_bench"
#: The folders, relative to a ggp-base checkout, where its builds leave the compiled classes.
CLASS_FOLDERS = ("build/classes/java/main", "build/classes", "bin")
_MARKER = Path("org/ggp/base/util/match/Match.class")
HELP = (
    "needs an existing ggp-base build: build ggp-base by its own instructions (its README), "
    "then pass its folder as --ggp-base or $GGP_BASE"
)


def default_dir() -> str:
    """``$GGP_BASE``, else ``/work/ggp-base``."""
    return os.environ.get("GGP_BASE", "/work/ggp-base")


def classes_of(base: Path) -> Path:
    """The folder of ggp-base's compiled classes in the checkout ``base``; SystemExit saying what to do if none."""
    for folder in CLASS_FOLDERS:
        if (base / folder / _MARKER).is_file():
            return base / folder
    raise SystemExit(f"no ggp-base build in {base}: {HELP}")


def classpath(base: Path) -> str:
    """ggp-base's classes, our compiled programs and ggp-base's jars, as one Java class path."""
    jars = sorted(str(p) for p in (base / "lib").rglob("*.jar") if "sources" not in p.name)
    return os.pathsep.join([str(classes_of(base)), str(OURS), *jars])


def compile_ours(base: Path, *names: str) -> str:
    """Compile our programs ``names`` (``KifMatch``, ...; all when none) against ``base``; return the class path."""
    cp = classpath(base)
    files = [SOURCES / f"{n}.java" for n in names] if names else sorted(SOURCES.glob("*.java"))
    compile_java(files, cp, OURS)
    return cp


def compile_java(files: list[Path], cp: str, out: Path) -> None:
    """Compile our own Java programs ``files`` against the class path ``cp`` of an existing build into ``out``
    (never the peer's code: that is built by its own instructions)."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-d", str(out), "-cp", cp, *map(str, files)], check=True)
