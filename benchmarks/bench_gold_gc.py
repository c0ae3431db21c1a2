"""A full garbage collection in a Space process after the gold load, unfrozen and frozen (what `launch` does).

A paper-size TRIAD folder (`bench_scaling.build_folder`: every task config, 1,000-candidate pools, `--queries`
queries per config, no images) is read by a `Leaderboard` as at start-up; then `gc.collect()` is timed three times,
`gc.freeze()` is called, and it is timed three times more. The unfrozen times are the pauses a request would take
whenever the collector makes a full pass over the gold. docs/benchmarks.md quotes it.

    python benchmarks/bench_gold_gc.py [--queries 900]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def full_collection() -> float:
    """Seconds of one `gc.collect()`."""
    start = time.perf_counter()
    gc.collect()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=900, help="queries per task config (the papers: 900)")
    args = ap.parse_args()
    from bench_scaling import build_folder

    from spaces_app.board import Leaderboard
    from spaces_app.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build_folder(root / "triad", args.queries, 0)
        start = time.perf_counter()
        board = Leaderboard(Settings(root / "triad", root / "no-ark", root / "db.sqlite", None, 0, "127.0.0.1"))
        loaded = time.perf_counter() - start
        tracked = len(gc.get_objects())
        unfrozen = [full_collection() for _ in range(3)]
        gc.freeze()
        frozen = [full_collection() for _ in range(3)]
        gc.unfreeze()
        del board
    print(
        f"gold of {args.queries} queries per config read in {loaded:.1f} s; {tracked:,} objects tracked; load "
        f"{os.getloadavg()[0]:.2f}"
    )
    print(
        f"full collection: unfrozen {', '.join(f'{t:.3f}' for t in unfrozen)} s; "
        f"frozen {', '.join(f'{t:.4f}' for t in frozen)} s"
    )


if __name__ == "__main__":
    main()
