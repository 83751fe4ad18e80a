"""Self-play on Ray: games of one agent against itself, on Ray actors (a local Ray instance here; give
--address to use a cluster), written to Parquet shards that read back as one table."""

import subprocess
import sys
import tempfile

from ggp.match.selfplay import read_selfplay


def main() -> int:
    out = tempfile.mkdtemp()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ggp",
            "selfplay",
            "wallmaze",
            "--agent",
            "mcts:sims=50",
            "--games",
            "4",
            "--workers",
            "2",
            "--out",
            out,
            "--backend",
            "ray",
        ],
        check=True,
    )
    table = read_selfplay(out)  # a pyarrow.Table: one row per state, with the moves, visit counts and goals
    print(table.num_rows, "rows over", len(set(table.column("game_index").to_pylist())), "games;", table.column_names)
    return table.num_rows


if __name__ == "__main__":
    main()
