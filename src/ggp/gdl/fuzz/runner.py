"""The fuzzing run: generated sheets and corpus mutants through :func:`~ggp.gdl.fuzz.compare.compare`, every
disagreement shrunk and saved."""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO

from .compare import ENGINES, Outcome, compare, stressed
from .generate import generate
from .mutate import mutate
from .shrink import shrink


@dataclass
class Counts:
    """What a run tried and found."""

    tried: int = 0
    valid: int = 0
    agreed: int = 0
    disagreed: int = 0
    skipped: int = 0
    #: generated sheets the parser rejected (a generator bug: each is one)
    invalid_generated: int = 0
    mutants: int = 0
    #: mutants that no longer validate (skipped)
    invalid_mutants: int = 0
    states: int = 0
    seconds: float = 0.0
    #: disagreements by "engine question"
    found: Counter[str] = field(default_factory=Counter)
    #: why sheets were skipped (the first words of each reason)
    skip_reasons: Counter[str] = field(default_factory=Counter)
    saved: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.tried / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        return (
            f"tried {self.tried}, valid {self.valid}, agreed {self.agreed}, disagreements {self.disagreed}, "
            f"skipped {self.skipped} (mutants {self.mutants}: {self.invalid_mutants} invalid; generated invalid: "
            f"{self.invalid_generated}); {self.states} states; {self.seconds:.0f} s, {self.rate:.2f} sheets/s"
        )

    def as_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["found"], d["skip_reasons"] = dict(self.found), dict(self.skip_reasons)
        d["rate"] = round(self.rate, 3)
        return d


def corpus_sheets(folder: Path, max_bytes: int = 12_000) -> list[tuple[str, str]]:
    """The corpus's sheets (name, text), those up to ``max_bytes`` (larger ones are slow to prove)."""
    out = []
    for path in sorted(folder.glob("*.kif")):
        if path.stat().st_size <= max_bytes:
            out.append((path.stem, path.read_text(encoding="utf-8", errors="replace")))
    return out


def run(
    count: int,
    seed: int = 0,
    *,
    corpus: Path | None = None,
    mutant_share: float = 0.1,
    out: Path | None = None,
    compiled_every: int = 10,
    shrink_seconds: float = 120.0,
    walks: int = 3,
    max_steps: int = 12,
    seconds: float = 20.0,
    log: TextIO | None = None,
    progress_every: float = 60.0,
    compare_fn: Callable[..., Outcome] = compare,
    stress_every: int = 0,
) -> Counts:
    """Compare the engines on ``count`` sheets: generated from seeds ``seed``, ``seed + 1``, ..., and (a
    ``mutant_share`` of them, when ``corpus`` is given) mutants of the corpus's sheets; every
    ``stress_every``-th sheet (0: none) with the thresholds of :data:`~ggp.gdl.fuzz.compare.STRESS` lowered."""
    counts = Counts()
    began = time.monotonic()
    last = began
    sheets = corpus_sheets(corpus) if corpus is not None else []
    pick = random.Random(seed ^ 0x5EED)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        sheet_seed = seed + i
        engines = (
            ENGINES if compiled_every > 0 and i % compiled_every == 0 else tuple(e for e in ENGINES if e != "compiled")
        )
        mutant = bool(sheets) and pick.random() < mutant_share
        if mutant:
            name, text = pick.choice(sheets)
            text, how = mutate(text, random.Random(sheet_seed))
            origin = f"mutant of {name} ({how})"
            opts = {"walks": 1, "max_steps": 8}
        else:
            text = generate(sheet_seed)
            origin = f"generated from seed {sheet_seed}"
            opts = {"walks": walks, "max_steps": max_steps}
        stress = stress_every > 0 and i % stress_every == stress_every - 1
        if stress:
            origin += ", under STRESS thresholds"

        def compare_one(
            candidate: str, s: int = sheet_seed, e: tuple[str, ...] = engines, o: Any = opts, x: bool = stress
        ) -> Outcome:
            with stressed(x):
                return compare_fn(candidate, seed=s, engines=e, seconds=seconds, **o)

        outcome = compare_one(text)
        counts.tried += 1
        counts.mutants += mutant
        counts.states += outcome.states
        if outcome.status == "invalid":
            if mutant:
                counts.invalid_mutants += 1
            else:
                counts.invalid_generated += 1
                counts.found["generator invalid"] += 1
                _save(out, counts, f"invalid-{sheet_seed}", text, f"{origin}: the parser rejects it: {outcome.reason}")
            counts.skipped += mutant
            continue
        counts.valid += 1
        if outcome.status == "skipped":
            counts.skipped += 1
            counts.skip_reasons[" ".join(outcome.reason.split()[:6])] += 1
        elif outcome.status == "agreed":
            counts.agreed += 1
        else:
            counts.disagreed += 1
            for d in outcome.disagreements:
                counts.found[f"{d.engine} {d.question}"] += 1
            what = "\n".join(str(d) for d in outcome.disagreements)
            _say(log, f"DISAGREEMENT on sheet {i} ({origin}):\n{what}")
            path = _save(out, counts, f"sheet-{sheet_seed}", text, f"{origin}\n{what}")
            if shrink_seconds > 0:
                keys = outcome.keys

                def still(candidate: str, keys: set[tuple[str, str]] = keys) -> bool:
                    got = compare_one(candidate)
                    return got.status == "disagreed" and bool(got.keys & keys)

                small = shrink(text, still, shrink_seconds)
                again = compare_one(small)
                what = "\n".join(str(d) for d in again.disagreements)
                _save(out, counts, f"sheet-{sheet_seed}-shrunk", small, f"{origin}, shrunk\n{what}")
                _say(log, f"shrunk to {len(small.splitlines())} sentences ({path}):\n{small}{what}")
        now = time.monotonic()
        if now - last >= progress_every:
            last = now
            counts.seconds = now - began
            _say(log, counts.line())
            _summary(out, counts)
    counts.seconds = time.monotonic() - began
    _summary(out, counts)
    return counts


def _summary(out: Path | None, counts: Counts) -> None:
    if out is not None:
        (out / "summary.json").write_text(json.dumps(counts.as_dict(), indent=1, default=dict) + "\n")


def _say(log: TextIO | None, text: str) -> None:
    if log is not None:
        print(text, file=log, flush=True)


def _save(out: Path | None, counts: Counts, stem: str, text: str, note: str) -> str:
    if out is None:
        return ""
    path = out / f"{stem}.kif"
    comment = "".join(f"; {line}\n" for line in note.splitlines())
    path.write_text(comment + text, encoding="utf-8")
    counts.saved.append(str(path))
    return str(path)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m ggp.gdl.fuzz",
        description="Differential fuzzing of ggp's GDL engines: random valid sheets (and corpus mutants) played "
        "along random walks by the prover and every propnet evaluator; disagreements shrunk and saved.",
    )
    parser.add_argument("--count", type=int, default=1000, help="sheets to try (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="the first sheet's seed (default 0)")
    parser.add_argument("--corpus", type=Path, help="a folder of .kif sheets to mutate")
    parser.add_argument("--mutants", type=float, default=0.1, help="share of sheets that are corpus mutants")
    parser.add_argument("--out", type=Path, help="where to save disagreeing sheets (and summary.json)")
    parser.add_argument("--compiled-every", type=int, default=10, help="compile every Nth sheet's network (0: never)")
    parser.add_argument(
        "--shrink-seconds", type=float, default=120.0, help="processor seconds to shrink a disagreement (0: none)"
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="most processor seconds per sheet (then skipped)")
    parser.add_argument(
        "--stress-every", type=int, default=2, help="every Nth sheet with the size thresholds lowered (0: none)"
    )
    parser.add_argument("--walks", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    args = parser.parse_args(argv)
    # a fuzzing run's compiled networks and evaluator choices are its own, not kept in the user's cache
    if "GGP_CACHE" not in os.environ:
        import tempfile

        os.environ["GGP_CACHE"] = tempfile.mkdtemp(prefix="ggp-fuzz-cache-")
    counts = run(
        args.count,
        args.seed,
        corpus=args.corpus,
        mutant_share=args.mutants,
        out=args.out,
        compiled_every=args.compiled_every,
        shrink_seconds=args.shrink_seconds,
        walks=args.walks,
        max_steps=args.max_steps,
        seconds=args.seconds,
        stress_every=args.stress_every,
        log=sys.stderr,
        progress_every=args.progress,
    )
    print(counts.line())
    if counts.found:
        print("found: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.found.items())))
    if counts.skip_reasons:
        print("skipped: " + ", ".join(f"{k} x{v}" for k, v in counts.skip_reasons.most_common(8)))
    return 1 if counts.disagreed or counts.invalid_generated else 0


__all__ = ["Counts", "corpus_sheets", "main", "run"]
