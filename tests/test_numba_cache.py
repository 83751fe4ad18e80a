"""numba's cache folder is named for the sources of ggp's compiled code: an edit to a module that another's
kernels call can never leave those kernels running their old machine code (numba checks only the file a
function is written in)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ggp.core import numba_cache


def package(tmp_path: Path) -> Path:
    root = tmp_path / "ggp"
    (root / "gdl").mkdir(parents=True)
    (root / "gdl" / "evaluate.py").write_text("import numba\n\ndef step(): return 1\n")
    (root / "gdl" / "kernel.py").write_text("import numba\nfrom .evaluate import step\n")
    (root / "gdl" / "parser.py").write_text("def parse(): return 'no compiled code here'\n")
    return root


def test_an_edit_to_a_called_module_names_a_new_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = package(tmp_path)
    monkeypatch.setattr(numba_cache, "_PACKAGE", root)
    before = numba_cache.sources_key()
    assert before.startswith("ggp-") and numba_cache.sources_key() == before  # the same sources, the same folder
    (root / "gdl" / "parser.py").write_text("def parse(): return 'edited, and still no compiled code'\n")
    assert numba_cache.sources_key() == before  # a module without compiled code leaves the cache alone
    (root / "gdl" / "evaluate.py").write_text("import numba\n\ndef step(): return 2\n")
    assert numba_cache.sources_key() != before  # kernel.py did not change, but what it calls did


def test_the_folder_is_under_numba_cache_dir_and_children_keep_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)  # this process's, restored after
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    folder = numba_cache.configure()
    assert str(folder) == numba.config.CACHE_DIR  # numba was imported already: told directly
    assert folder == tmp_path / "numba" / numba_cache.sources_key()
    assert os.environ["NUMBA_CACHE_DIR"] == str(folder)
    assert numba_cache.configure() == folder  # a process that inherits the folder keeps it, not one inside it
    code = "import ggp, numba, os; print(numba.config.CACHE_DIR); print(os.environ['NUMBA_CACHE_DIR'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == [str(folder), str(folder)]


def test_without_numba_cache_dir_the_folder_is_in_ggps_cache(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["GGP_CACHE"] = str(tmp_path / "ggp-cache")
    code = "import ggp, numba; print(numba.config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env)
    assert Path(out.stdout.strip()) == tmp_path / "ggp-cache" / "numba" / numba_cache.sources_key()


def test_a_first_matchs_caches_are_kept_beside_what_is_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``first_match(keep=True)`` adds what the served player compiled to this process's caches: an index it
    lacks comes with its own data files; an index or file it has stays as it is."""
    from ggp.bench.startup import _merge_caches

    here = tmp_path / "numba" / numba_cache.sources_key()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(here))
    monkeypatch.setenv("GGP_CACHE", str(tmp_path / "ggp"))
    scratch = tmp_path / "scratch"
    served = scratch / "numba" / here.name / "src_ggp_core"
    served.mkdir(parents=True)
    for name, text in [("kernels.perft-9.py311.nbi", "new index"), ("kernels.perft-9.py311.1.nbc", "new data")]:
        (served / name).write_text(text)
    for name, text in [("uct.run-4.py311.nbi", "their index"), ("uct.run-4.py311.1.nbc", "their data")]:
        (served / name).write_text(text)
    (scratch / "ggp" / "networks").mkdir(parents=True)
    (scratch / "ggp" / "networks" / "abc.pickle").write_text("a network")
    (scratch / "ggp" / "gdl-mode3-abc").write_text("2")
    mine = here / "src_ggp_core"
    mine.mkdir(parents=True)
    (mine / "uct.run-4.py311.nbi").write_text("my index")
    (mine / "uct.run-4.py311.1.nbc").write_text("my data")
    (tmp_path / "ggp").mkdir()
    (tmp_path / "ggp" / "gdl-mode3-abc").write_text("1")

    _merge_caches(scratch)

    assert (mine / "kernels.perft-9.py311.nbi").read_text() == "new index"
    assert (mine / "kernels.perft-9.py311.1.nbc").read_text() == "new data"
    assert (mine / "uct.run-4.py311.nbi").read_text() == "my index"  # an index held stays with its own data
    assert (mine / "uct.run-4.py311.1.nbc").read_text() == "my data"
    assert (tmp_path / "ggp" / "networks" / "abc.pickle").read_text() == "a network"
    assert (tmp_path / "ggp" / "gdl-mode3-abc").read_text() == "1"
