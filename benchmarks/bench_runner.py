"""Runner benchmarks: distinct items vs pool slots, cached re-run, scoring 1,000 x 1,000, minilm items/s.

    python benchmarks/bench_runner.py [--data DIR] [--limit N] [--skip-minilm-run]

--data: a TRIAD folder (default: demo_output/triad if built, else the mini edition built into a temp folder, else
the tiny test folder). Each figure is printed with the alternative it is compared against, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def find_data(arg: str | None, tmp: str) -> tuple[str, str]:
    if arg:
        return arg, "given folder"
    demo = Path(__file__).resolve().parents[1] / "demo_output" / "triad"
    if (demo / "audit.json").exists():
        return str(demo), "mini edition (demo_output/triad)"
    try:
        import contextlib
        import io

        from triad_dataset.editions.mini import build_mini

        out = Path(tmp) / "triad"
        with contextlib.redirect_stdout(io.StringIO()):
            build_mini(out)
        return str(out), "mini edition (built now)"
    except ImportError:
        from tests.doubles.folders import write_tiny_triad

        return str(write_tiny_triad(Path(tmp) / "tiny")), "tiny test folder (mini edition not available)"


def bench_distinct(data: str, limit: int | None) -> str:
    from model_adapters.planning.configs import select_configs
    from model_adapters.planning.plan import plan_triad

    configs = select_configs(data, "triad", "all")
    rows = []
    for sees_images, family in ((True, "image+text models"), (False, "text-only (minilm)")):
        plan = plan_triad(data, configs, variant="full", limit=limit, sees_images=sees_images)
        for cp in plan.configs:
            slots = cp.pool_slots + len(cp.rows)
            rows.append(
                [
                    family,
                    cp.config,
                    str(len(cp.rows)),
                    str(slots),
                    str(len(cp.distinct_keys)),
                    f"{slots / len(cp.distinct_keys):.1f}x",
                ]
            )
        slots = sum(cp.pool_slots + len(cp.rows) for cp in plan.configs)
        rows.append(
            [
                family,
                "**all configs together**",
                str(sum(len(cp.rows) for cp in plan.configs)),
                str(slots),
                str(len(plan.items)),
                f"{slots / len(plan.items):.1f}x",
            ]
        )
    return table(
        [
            "inputs",
            "config",
            "queries",
            "pool slots (queries + candidates)",
            "distinct items = encoder inputs",
            "slots / distinct",
        ],
        rows,
    )


def bench_cached_rerun(data: str, limit: int | None, tmp: str) -> str:
    from model_adapters.runner import RunConfig, run

    cfg = dict(
        model="minilm",
        data=data,
        configs="all",
        cache_dir=os.path.join(tmp, "cache"),
        quiet=True,
        limit=limit,
        validate=False,
    )
    t0 = time.perf_counter()
    first = run(RunConfig(out=os.path.join(tmp, "run1"), **cfg))
    t1 = time.perf_counter()
    second = run(RunConfig(out=os.path.join(tmp, "run2"), **cfg))
    t2 = time.perf_counter()
    same = all(
        first["configs"][c]["metrics"]["map"] == second["configs"][c]["metrics"]["map"] for c in first["configs"]
    )
    rows = [
        ["first run (cold cache)", f"{t1 - t0:.1f}", str(first["run"]["encoded"]), "1.00"],
        ["cached re-run", f"{t2 - t1:.1f}", str(second["run"]["encoded"]), f"{(t2 - t1) / (t1 - t0):.2f}"],
    ]
    return table(["minilm run", "wall s", "encoder inputs", "time vs first run"], rows) + (
        f"\n\nidentical mAP in both runs: {same}; phases of the first run (s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in first["run"]["timings_s"].items())
    )


def bench_scoring(n_q: int = 1000, pool: int = 1000, dim: int = 384) -> str:
    from model_adapters.ranks.ranking import normalize, rank_pools

    rng = np.random.default_rng(0)
    rows = []
    for corpus in (1000, 20000):
        items = normalize(rng.standard_normal((corpus, dim)).astype(np.float32))
        queries = normalize(rng.standard_normal((n_q, dim)).astype(np.float32))
        pools = np.stack([rng.choice(corpus, size=pool, replace=False) for _ in range(n_q)])
        rank_pools(queries[:10], items, pools[:10])  # warm-up
        t0 = time.perf_counter()
        order, scores = rank_pools(queries, items, pools)
        t_batched = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in range(n_q):  # the alternative: one small product and one sort per query in a Python loop
            s = items[pools[q]] @ queries[q]
            o = np.argsort(-s, kind="stable")
            # same ranking up to float32 rounding (a matrix-vector product sums in another order)
            np.testing.assert_allclose(s[o], scores[q], atol=1e-5)
        t_loop = time.perf_counter() - t0
        rows.append(
            [
                f"{n_q:,} x {pool:,} (corpus {corpus:,}, d={dim})",
                f"{t_batched:.3f}",
                f"{t_loop:.3f}",
                f"{t_loop / t_batched:.1f}x",
            ]
        )
    return table(["scoring from cached vectors", "batched s", "per-query loop s", "speed-up"], rows)


def bench_minilm(n: int = 1024) -> str:
    from model_adapters.models.registry import get_entry, load_encoder
    from model_adapters.protocol import ModelInput

    enc = load_encoder(get_entry("minilm"))
    brands = ("Audi", "BMW", "Fiat", "Kia", "Nike", "Zara")
    texts = [
        f"Product info: gender: Women, brand: {brands[i % 6]}, year: {2000 + i % 20}, season: Summer item {i}"
        for i in range(n)
    ]
    batch = [ModelInput(t) for t in texts]
    enc.encode_candidates(batch[:8])
    rows = []
    for bs in (64, 1):
        m = n if bs > 1 else n // 8
        t0 = time.perf_counter()
        for i in range(0, m, bs):
            enc.encode_candidates(batch[i : i + bs])
        dt = time.perf_counter() - t0
        rows.append([str(bs), str(m), f"{dt:.2f}", f"{m / dt:.0f}"])
    rows[1].append(f"{float(rows[0][3]) / float(rows[1][3]):.1f}x slower")
    rows[0].append("")
    return table(["batch size", "texts", "s", "items/s", "vs batch 64"], rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--skip-minilm-run", action="store_true")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at start)\n")
    with tempfile.TemporaryDirectory() as tmp:
        data, what = find_data(args.data, tmp)
        print(f"## Distinct items vs pool slots — {what}\n")
        print(bench_distinct(data, args.limit), "\n")
        print("## Scoring from cached vectors\n")
        print(bench_scoring(), "\n")
        print("## minilm throughput (text inputs, CPU)\n")
        print(bench_minilm(), "\n")
        if not args.skip_minilm_run:
            print(f"## Cached re-run — minilm on {what}\n")
            print(bench_cached_rerun(data, args.limit, tmp), "\n")


if __name__ == "__main__":
    main()
