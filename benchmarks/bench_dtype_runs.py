"""Whole `triad run` processes of one model in float32 and in bfloat16 on one device, interleaved: the encode phase's
wall and CPU seconds (results.json `run.timings_s` / `run.cpu_s`, model load included), the batch sizes the runner
grew to (`run.encoding.batch_size`; it grows on CUDA when no --batch-size is given) and how far the bfloat16
rankings move (queries with the same candidate order; `compare_rankings.compare` for near-ties). Every run is
uncached (--no-cache), so each one encodes everything.

    python benchmarks/bench_dtype_runs.py --data DIR [--model minilm] [--device cuda:0] [--repeats 2] [--config all]

benchmarks/gpu_check.sh runs it on CUDA; on a CPU (`--device cpu --config state_cars`) it checks itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_rankings import compare  # noqa: E402

DTYPES = ("float32", "bfloat16")


def one_run(model: str, data: str, config: str, device: str, dtype: str, out: Path) -> dict[str, Any]:
    """One uncached `triad run` process; its results.json "run" part."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "triad_cli", "run", "--model", model, "--data", data, "--config", config]
    cmd += ["--out", str(out), "--device", device, "--dtype", dtype, "--no-cache", "--no-validate", "--quiet"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return dict(json.loads((out / "results.json").read_text(encoding="utf-8"))["run"])


def agreement(a: Path, b: Path) -> dict[str, Any]:
    """Queries whose candidate order is identical / differs only at near-ties (< 1e-2) / differs, over configs."""
    counts = {"identical": 0, "near-ties": 0, "different": 0}
    drift = 0.0
    for path in sorted((a / "rankings").glob("*.parquet")):
        rows_a = pq.read_table(path).to_pylist()
        rows_b = pq.read_table(b / "rankings" / path.name).to_pylist()
        for x, y in zip(rows_a, rows_b, strict=True):
            kind, _, most = compare(x, y, 1e-2)
            counts[kind] += 1
            drift = max(drift, most)
    return {**counts, "largest_score_difference": drift}


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key]["encode"] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="a TRIAD mini edition (triad build mini --out DIR)")
    ap.add_argument("--model", default="minilm")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--config", default="all")
    args = ap.parse_args()
    data = os.path.abspath(args.data)
    runs: dict[str, list[dict[str, Any]]] = {d: [] for d in DTYPES}
    with tempfile.TemporaryDirectory(prefix="bench-dtype-") as tmp:
        for i in range(args.repeats):  # interleaved: float32, bfloat16, float32, ...
            for dtype in DTYPES:
                runs[dtype].append(
                    one_run(args.model, data, args.config, args.device, dtype, Path(tmp) / f"{dtype}{i}")
                )
        moved = agreement(Path(tmp) / "float320", Path(tmp) / "bfloat160")
    print(
        f"{args.model} on {args.device}, --config {args.config}, uncached, {args.repeats} interleaved pairs "
        f"(1-min load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); encode phase = model load + encoding"
    )
    print("| dtype | encode wall s (median) | encode CPU s (median) | items | batch size (start, largest, grew) |")
    print("|---|---:|---:|---:|---|")
    for dtype in DTYPES:
        last = runs[dtype][-1]
        sizes = (last.get("encoding") or {}).get("batch_size", {})
        grown = f"{sizes.get('start')}, {sizes.get('largest')}, {sizes.get('grew')}"
        print(
            f"| {dtype} | {_median(runs[dtype], 'timings_s'):.2f} | {_median(runs[dtype], 'cpu_s'):.2f} | "
            f"{last['encoded']} | {grown} |"
        )
    wall = _median(runs["float32"], "timings_s") / _median(runs["bfloat16"], "timings_s")
    cpu = _median(runs["float32"], "cpu_s") / _median(runs["bfloat16"], "cpu_s")
    print(f"bfloat16 vs float32: encode wall {wall:.2f}x, encode CPU {cpu:.2f}x (> 1: bfloat16 faster)")
    print(
        f"bfloat16 rankings vs float32: {moved['identical']} queries identical, {moved['near-ties']} differ only at "
        f"near-ties (< 1e-2), {moved['different']} differ; largest score difference "
        f"{moved['largest_score_difference']:.2e}"
    )


if __name__ == "__main__":
    main()
