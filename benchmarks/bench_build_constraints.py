"""Paper-size constraints + state build: time and peak memory per stage.

Builds 1,000 constraints queries and their 1,000 state dialogues with 1,000-candidate pools (plus the 500 Same
queries and the corpus) from a synthetic 13,000-item catalog, stage by stage, then compares the vectorised
potential-positive gate with the per-candidate pure-Python evaluator on the same queries.

    python3 benchmarks/bench_build_constraints.py [--domain fashion] [--items 13000] [--queries 1000] [--write]

Target: each paper-size subset in under 5 minutes and 4 GiB on 2 cores.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triad_dataset.contract import names  # noqa: E402
from triad_dataset.contract.rule import RuleChecker  # noqa: E402
from triad_dataset.sources.synthetic import synthetic_catalog  # noqa: E402
from triad_dataset.tracks.constraints import constraints_audit, constraints_row, plan_constraints  # noqa: E402
from triad_dataset.tracks.constraints_gate import statuses  # noqa: E402
from triad_dataset.tracks.same import build_same  # noqa: E402
from triad_dataset.tracks.shared import ImageCache, corpus_rows  # noqa: E402
from triad_dataset.tracks.state import build_state  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="fashion", choices=names.DOMAINS)
    parser.add_argument("--items", type=int, default=13000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--same", type=int, default=names.SAME_QUERIES)
    parser.add_argument("--gate-sample", type=int, default=10, help="queries timed with the Python gate")
    parser.add_argument("--write", action="store_true", help="also write the dataset folder (parquet)")
    args = parser.parse_args()

    stages: list[tuple[str, float, float]] = []

    def stage(name: str, fn):
        gc.collect()
        start = time.perf_counter()
        out = fn()
        stages.append((name, time.perf_counter() - start, peak_rss_mib()))
        return out

    catalog = stage(
        f"synthetic {args.domain} catalog ({args.items:,} items)",
        lambda: synthetic_catalog(args.domain, args.items, seed=0),
    )
    stage("attribute-code matrix", lambda: catalog.codes)
    images = ImageCache(catalog)
    plans = stage(
        f"constraints: plan + pools ({args.queries:,} queries)", lambda: plan_constraints(catalog, args.queries, seed=0)
    )
    c_rows = stage(
        "constraints: rows (serialize, reference images)", lambda: [constraints_row(catalog, p, images) for p in plans]
    )
    c_audit = stage("constraints: audit (pure-Python gate re-check)", lambda: constraints_audit(catalog, c_rows))
    s_rows, s_audit = stage("state: sessions, traps, rows, audit", lambda: build_state(catalog, plans, images))
    same_rows, same_audit = stage(f"same: {args.same} queries", lambda: build_same(catalog, args.same, images))
    corpus = stage("corpus rows (render every image)", lambda: corpus_rows(catalog, images))
    if args.write:
        from triad_dataset.contract.features import features_for
        from triad_dataset.folder import io as folder

        tables = {
            f"constraints_{args.domain}": c_rows,
            f"state_{args.domain}": s_rows,
            f"same_{args.domain}": same_rows,
            names.DOMAIN_CORPUS[args.domain]: corpus,
        }
        with tempfile.TemporaryDirectory() as tmp:
            stage(
                "write folder (parquet)",
                lambda: folder.write_folder(
                    Path(tmp) / "triad",
                    tables,
                    features={c: features_for(c) for c in tables},
                    card="# bench",
                    audit={"benchmark": "triad", "pool_size": names.POOL_SIZE},
                ),
            )

    # named alternative: the per-candidate Python loop over the whole catalog, on the first queries
    sample = plans[: args.gate_sample]
    start = time.perf_counter()
    for p in sample:
        statuses(catalog, p.reference, p.conditions)
    vectorised = (time.perf_counter() - start) / len(sample)
    start = time.perf_counter()
    for p in sample:
        check = RuleChecker(catalog.schema, catalog.items[p.reference].attributes, p.conditions)
        [check(item.attributes) for item in catalog.items]
    python = (time.perf_counter() - start) / len(sample)

    total = sum(s[1] for s in stages)
    print(
        f"\nbench_build_constraints: {args.domain}, {args.items:,} items, {args.queries:,} queries, "
        f"pools of {names.POOL_SIZE:,} ({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end)\n"
    )
    print("| stage | seconds | peak RSS (MiB) |\n|---|---:|---:|")
    for name, seconds, rss in stages:
        print(f"| {name} | {seconds:.2f} | {rss:,.0f} |")
    print(f"| **total** | **{total:.2f}** | **{peak_rss_mib():,.0f}** |")
    print("\n| gate per query over the whole catalog | ms | ratio |\n|---|---:|---:|")
    print(f"| vectorised numpy (constraints_gate.statuses) | {vectorised * 1e3:.2f} | 1.0 |")
    print(f"| per-candidate Python loop (RuleChecker) | {python * 1e3:.1f} | {python / vectorised:.0f}x |")
    from triad_dataset.folder.audit import summarize_config

    chance = {
        c: summarize_config(c, r)["random_map"]
        for c, r in ((f"constraints_{args.domain}", c_rows), (f"state_{args.domain}", s_rows))
    }
    print(f"\nrandom-ranking mAP (exact): {chance}")
    print(
        f"\naudit: constraints mean positives {c_audit['mean_positives']}, gate violations "
        f"{c_audit['gate_violations']}; state gate violations {s_audit['gate_violations']}, trap violations "
        f"{s_audit['trap_violations']}, traps {s_audit['traps']}, coverage {s_audit['trap_coverage']['share']}, "
        f"retention {s_audit['mean_retention']}; same mean positives {same_audit['mean_positives']}"
    )
    ok = total < 300 and peak_rss_mib() < 4096 and c_audit["gate_violations"] == 0 == s_audit["gate_violations"]
    print(f"target (< 300 s, < 4 GiB, 0 gate violations): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
