"""Run a tournament with ratings: a round robin in worker processes, stored in SQLite as each match ends
(run the same command again and it resumes), then Bradley-Terry ratings with 95% intervals."""

import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> str:
    db = Path(tempfile.mkdtemp()) / "wallmaze.sqlite"
    ggp = [sys.executable, "-m", "ggp"]
    subprocess.run(
        [
            *ggp,
            "tournament",
            "wallmaze",
            "random",
            "wallmaze:time=0.05",
            "--games",
            "2",
            "--workers",
            "2",
            "--playclock",
            "1",
            "--startclock",
            "5",
            "--seed",
            "1",
            "--db",
            str(db),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    # The report: each agent's rating, interval, mean goal and record.
    report = subprocess.run(
        [*ggp, "tournament", "--db", str(db), "--report"], check=True, capture_output=True, text=True
    )
    print(report.stdout)
    return report.stdout


if __name__ == "__main__":
    main()
