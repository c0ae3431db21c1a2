"""Two runs' rankings, query by query: identical, different only where candidates' scores differ by < `--tol`
(float noise of another batching reorders near-ties), or different (the check that token bucketing changes nothing).

A query's rankings agree up to near-ties when, walking run B's order, no candidate is followed by one that run A
scores more than `tol` higher. Also printed: the largest score difference of one candidate between the two runs,
and how many of run A's rankings hold adjacent candidates whose scores differ by more than 0 and at most `--gap`
(the near-ties whose order the last bits of the arithmetic decide; pairs in parentheses).

    python benchmarks/compare_rankings.py RUN_A RUN_B [--tol 1e-6] [--gap 3e-7]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq


def compare(a: dict, b: dict, tol: float) -> tuple[str, int, float]:
    """('identical' | 'near-ties' | 'different', positions that differ, largest score difference) of one query."""
    score_a = dict(zip(a["candidate_ids"], a["scores"], strict=True))
    score_b = dict(zip(b["candidate_ids"], b["scores"], strict=True))
    if set(score_a) != set(score_b):
        return "different", len(set(score_a) ^ set(score_b)), float("inf")
    drift = max((abs(score_a[c] - score_b[c]) for c in score_a), default=0.0)
    if a["candidate_ids"] == b["candidate_ids"]:
        return "identical", 0, drift
    moved = sum(x != y for x, y in zip(a["candidate_ids"], b["candidate_ids"], strict=True))
    along_b = np.array([score_a[c] for c in b["candidate_ids"]])
    later_max = np.maximum.accumulate(along_b[::-1])[::-1]
    worst = float(np.max(later_max[1:] - along_b[:-1])) if len(along_b) > 1 else 0.0
    return ("near-ties" if worst < tol else "different"), moved, drift


def near_ties(row: dict, gap: float) -> int:
    """Adjacent candidates of one ranking whose scores differ by more than 0 and at most `gap`."""
    scores = np.asarray(row["scores"], dtype=np.float64)
    steps = np.abs(np.diff(scores))
    return int(((steps > 0) & (steps <= gap)).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--gap", type=float, default=3e-7, help="a near-tie of run A: adjacent scores this close or closer")
    args = ap.parse_args()
    files = sorted(p.name for p in (Path(args.run_a) / "rankings").glob("*.parquet"))
    if not files:
        sys.exit(f"{args.run_a}/rankings: no ranking files")
    totals = {"identical": 0, "near-ties": 0, "different": 0}
    totals_tied = [0, 0]
    print(
        "| config | queries | identical | near-tie swaps (positions) | different | largest score drift | "
        "A's rankings with a near-tie (pairs) |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    for name in files:
        rows_a = {r["query_id"]: r for r in pq.read_table(Path(args.run_a) / "rankings" / name).to_pylist()}
        rows_b = {r["query_id"]: r for r in pq.read_table(Path(args.run_b) / "rankings" / name).to_pylist()}
        if set(rows_a) != set(rows_b):
            sys.exit(f"{name}: the two runs rank different queries")
        counts = {"identical": 0, "near-ties": 0, "different": 0}
        moved, drift, tied, pairs = 0, 0.0, 0, 0
        for qid, row in rows_a.items():
            verdict, n, d = compare(row, rows_b[qid], args.tol)
            counts[verdict] += 1
            moved += n if verdict == "near-ties" else 0
            drift = max(drift, d)
            close = near_ties(row, args.gap)
            tied, pairs = tied + bool(close), pairs + close
        for k, v in counts.items():
            totals[k] += v
        print(
            f"| {name[:-8]} | {len(rows_a)} | {counts['identical']} | {counts['near-ties']} ({moved}) | "
            f"{counts['different']} | {drift:.1e} | {tied} ({pairs}) |"
        )
        totals_tied[0] += tied
        totals_tied[1] += pairs
    print(
        f"\ntotal: {totals} (tolerance {args.tol:g}); run A's rankings with a near-tie within {args.gap:g}: "
        f"{totals_tied[0]} ({totals_tied[1]} pairs)"
    )
    sys.exit(1 if totals["different"] else 0)


if __name__ == "__main__":
    main()
