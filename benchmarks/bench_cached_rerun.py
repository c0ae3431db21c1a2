"""A cached re-run measured the way a user runs it — a whole `python -m triad_cli run` process — paired with the
import floor, `python -c "import datasets, numpy, pyarrow"` (what any Hugging Face dataset tool pays before its
first line of work).

The first run fills the embedding cache (and the validation / truncation / score records); then `--pairs` pairs
are timed, interleaved (floor, re-run, floor, re-run, ...): wall and CPU seconds (user + sys of the child) of each
process, the medians, and the ratios re-run / floor. CPU seconds are what a shared machine inflates least. With
`--baseline DIR` (a checkout of an older commit) its re-run is a third side of every round, on its own cache.
Also printed: the re-run's phases (results.json `run.timings_s`, `run.cpu_s`; wall minus phases = interpreter start,
imports and argument parsing) and the 1-minute load average before and after.

    python benchmarks/bench_cached_rerun.py --data demo_output/triad [--model minilm] [--pairs 3] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FLOOR = "import datasets, numpy, pyarrow"


def _env(code: Path) -> dict[str, str]:
    """The children's environment: offline, and bytecode written (an installed package has its .pyc files)."""
    return {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPATH": str(code),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process; exits with its stderr when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(cwd))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def floor(code: Path) -> dict[str, Any]:
    wall, cpu = timed([sys.executable, "-c", FLOOR], _env(code), code)
    return {"wall": wall, "cpu": cpu}


def rerun(code: Path, data: str, model: str, out: Path, cache: Path) -> dict[str, Any]:
    """One `triad run` process on `cache`; its wall and CPU seconds and results.json's run figures."""
    cmd = [sys.executable, "-m", "triad_cli", "run", "--model", model, "--data", data, "--config", "all"]
    cmd += ["--out", str(out), "--cache-dir", str(cache), "--quiet"]
    shutil.rmtree(out, ignore_errors=True)  # each run starts from an empty --out, whatever the code's --out rule
    wall, cpu = timed(cmd, _env(code), code)
    run = json.loads((out / "results.json").read_text())["run"]
    return {
        "wall": wall,
        "cpu": cpu,
        "phases": run["timings_s"],
        "phases_cpu": run.get("cpu_s"),
        "encoded": run["encoded"],
        "cache_hits": run["cache_hits"],
    }


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _phases(r: dict[str, Any]) -> str:
    wall = ", ".join(f"{k} {v:.2f}" for k, v in r["phases"].items())
    cpu = ", ".join(f"{k} {v:.2f}" for k, v in (r["phases_cpu"] or {}).items()) or "not recorded"
    return f"wall {wall}; start + imports {r['wall'] - sum(r['phases'].values()):.2f} | CPU {cpu}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--baseline", help="a checkout of an older commit: its re-run as a third side")
    parser.add_argument("--cache", help="an embedding cache to reuse (default: a fresh one, filled by a first run)")
    args = parser.parse_args()
    data = os.path.abspath(args.data)
    sides = {"this code": ROOT, **({"baseline": Path(args.baseline).resolve()} if args.baseline else {})}
    load_before = os.getloadavg()[0]
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], **{name: [] for name in sides}}
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp:
        caches = {name: Path(args.cache) if args.cache else Path(tmp) / name / "cache" for name in sides}
        first = {
            name: rerun(code, data, args.model, Path(tmp) / name / "first", caches[name])
            for name, code in sides.items()
        }
        for i in range(args.pairs):
            runs["floor"].append(floor(ROOT))
            for name, code in sides.items():
                runs[name].append(rerun(code, data, args.model, Path(tmp) / name / f"again{i}", caches[name]))
    load_after = os.getloadavg()[0]
    print(
        f"cached re-run, whole process: `triad run --model {args.model} --data {args.data} --config all --quiet`, "
        f'{args.pairs} interleaved rounds with the import floor `python -c "{FLOOR}"`; 1-min load average '
        f"{load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} cores"
    )
    print("| process | wall s (median; min–max) | CPU s (median; min–max) | wall / floor | CPU / floor |")
    print("|---|---:|---:|---:|---:|")
    base_wall, base_cpu = _median(runs["floor"], "wall"), _median(runs["floor"], "cpu")
    for name, rs in runs.items():
        wall, cpu = _median(rs, "wall"), _median(rs, "cpu")
        walls, cpus = [r["wall"] for r in rs], [r["cpu"] for r in rs]
        print(
            f"| {name} | {wall:.2f} ({min(walls):.2f}–{max(walls):.2f}) | {cpu:.2f} ({min(cpus):.2f}–{max(cpus):.2f}) "
            f"| {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |"
        )
    for name in sides:
        best = min(runs[name], key=lambda r: r["cpu"])
        print(
            f"\n{name}, phases of the re-run with the least CPU ({best['encoded']} encoded, "
            f"{best['cache_hits']} cache hits): {_phases(best)}"
        )
        print(f"{name}, first run: {first[name]['wall']:.1f} s wall ({first[name]['encoded']} encoded)")


if __name__ == "__main__":
    main()
