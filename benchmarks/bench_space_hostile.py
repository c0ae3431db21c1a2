"""Leaderboard Space under hostile input: peak memory of a submission in progress, asserted as bounds.

Each case runs `spaces_app.submit.submit_files` in a fresh process with the gold already loaded; a sampler thread
reads the process's resident memory (/proc/self/statm) every 2 ms, and the figure is the peak minus the resident
memory just before the call ("over idle").

- hostile: two ~2 KB dictionary-encoded parquet files, each declaring 10^7 candidate ids in one ranking (the
  hostile-submitter attack), inside an otherwise valid six-subset submission; bound: +200 MiB over idle;
- valid, paper size: a correct six-subset submission of 6 x 1,000 queries x 1,000 candidates, scored with every
  diagnostic and interval; bound: 500 MiB over idle per submission in progress;
- the named alternative, measured in the same run: materializing one hostile file the way the Space used to
  (`ParquetFile.read` + `to_pylist`).

    python3 benchmarks/bench_space_hostile.py [--quick]     (--quick: mini size 6 x 120 x 1,000 for the valid case)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _memory import Peak  # noqa: E402  (benchmarks/_memory.py, next to this script)

HOSTILE_IDS = 10**7
HOSTILE_BOUND_MIB = 200
VALID_BOUND_MIB = 500


def hostile_parquet(n_ids: int) -> bytes:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    cand = pa.ListArray.from_arrays(pa.array([0, n_ids], pa.int32()), pa.array(["c"] * n_ids, pa.string()))
    scores = pa.ListArray.from_arrays(pa.array([0, n_ids], pa.int32()), pa.array(np.zeros(n_ids)))
    sink = io.BytesIO()
    pq.write_table(pa.table({"query_id": ["q0"], "candidate_ids": cand, "scores": scores}), sink, compression="zstd")
    return sink.getvalue()


# --- children: one case per fresh process ---------------------------------------------------------------------
def child_submit(gold: str, files: list[str]) -> dict:
    import gc

    from spaces_app.db import Database
    from spaces_app.gold import GoldStore
    from spaces_app.submit import RateLimit, submit_files

    golds = GoldStore({"triad": gold})
    golds.get("triad")
    db = Database(Path(tempfile.mkdtemp()) / "space.sqlite")
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    with Peak() as peak:
        out = submit_files(db, golds, files, model_name="bench", submitter="bench", rate_limit=RateLimit(9, 9))
    return {
        "peak_mib": peak.over_idle_mib,
        "seconds": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "accepted": out.accepted,
        "message": out.message.splitlines()[0][:200],
    }


def child_naive(path: str) -> dict:
    import pyarrow.parquet as pq

    t0, c0 = time.perf_counter(), time.process_time()
    with Peak() as peak:
        ids = pq.ParquetFile(path).read().column("candidate_ids").to_pylist()
        del ids
    return {"peak_mib": peak.over_idle_mib, "seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def run_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- setup ------------------------------------------------------------------------------------------------------
def make_case(root: Path, n_queries: int, pool: int) -> tuple[Path, list[Path]]:
    from tests.doubles import space_runs as T
    from triad_dataset.contract import names as n

    tables = T.triad_tables(n_queries, pool, seed=1, configs=n.MAIN_CONFIGS, corpus_size=3 * pool)
    gold = T.write_triad_gold(root / f"gold-{n_queries}", tables, pool)
    run = T.write_run(root / f"run-{n_queries}", tables, T.random_rankings(tables, seed=2))
    return gold, sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="valid case at mini size only")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = child_submit(rest[0], rest[1:]) if kind == "submit" else child_naive(rest[0])
        print(json.dumps(result))
        return 0
    from triad_dataset.contract import names as n

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gold, files = make_case(root, 120, 1000)
        bomb = hostile_parquet(HOSTILE_IDS)
        hostile_files = list(files)
        for config in n.MAIN_CONFIGS[:2]:  # two of the six files replaced by ~2 KB bombs
            target = root / "hostile" / "rankings" / f"{config}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bomb)
            hostile_files = [target if f.name == target.name else f for f in hostile_files]
        hostile = run_child("submit", str(gold), *map(str, hostile_files))
        naive = run_child("naive", str(root / "hostile" / "rankings" / f"{n.MAIN_CONFIGS[0]}.parquet"))
        mini = run_child("submit", str(gold), *map(str, files))
        rows = [
            (f"hostile: 2 bomb files of {len(bomb)} bytes, 10^7 ids each", hostile, HOSTILE_BOUND_MIB),
            ("alternative: one bomb file read + to_pylist (as before)", naive, None),
            ("valid, mini size (6 x 120 x 1,000)", mini, VALID_BOUND_MIB),
        ]
        if not args.quick:
            gold_p, files_p = make_case(root, 1000, 1000)
            rows.append(
                (
                    "valid, paper size (6 x 1,000 x 1,000)",
                    run_child("submit", str(gold_p), *map(str, files_p)),
                    VALID_BOUND_MIB,
                )
            )
    print("\nPeak memory of one submission in progress, over idle (gold loaded)")
    print("| case | peak over idle (MiB) | wall s | CPU s | bound (MiB) | outcome |")
    print("|---|---:|---:|---:|---:|---|")
    for label, r, bound in rows:
        outcome = r.get("message", "materialized")
        print(f"| {label} | {r['peak_mib']:.0f} | {r['seconds']:.2f} | {r['cpu']:.2f} | {bound or '–'} | {outcome} |")
    print(f"\nhostile vs the alternative: {naive['peak_mib'] / max(hostile['peak_mib'], 1):.0f}x less memory")
    failures = [
        f"{label}: {r['peak_mib']:.0f} MiB > {bound} MiB"
        for label, r, bound in rows
        if bound is not None and r["peak_mib"] > bound
    ]
    if hostile.get("accepted") or "declares" not in hostile["message"]:
        failures.append(f"the hostile submission was not refused from the footer: {hostile['message']}")
    if not all(r.get("accepted", True) for label, r, _ in rows if label.startswith("valid")):
        failures.append("a valid submission was refused")
    if failures:
        print("\nBOUND VIOLATED:\n" + "\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
