"""Dataset folder I/O: writing, reading and validating a paper-size constraints pair.

A synthetic paper-size pair is written (a 13,000-product corpus with 60 KB pictures, and two 1,000-query configs with
1,000-candidate pools) and compared with the alternatives measured in the same run:

* write: `triad_dataset.folder.io.write_folder` (row-group streaming) vs `datasets.Dataset.from_list(rows,
  features).to_parquet(...)` per config (what one would write by hand);
* read a query config: `folder.read_table` (pyarrow, no cache) vs `datasets.load_dataset(dir, config)` (first load,
  which builds the Arrow cache);
* `validate_folder` on the whole folder.

Each measurement runs in a fresh subprocess so its peak RSS is its own.

    python benchmarks/bench_folder.py [--items 13000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

IMAGE_BYTES = 60_000


def make_tables(n_items: int) -> dict[str, list[dict]]:
    """A deterministic synthetic corpus and one constraints/state pair (random-looking picture bytes)."""
    from triad_dataset.contract import names as n

    rng = random.Random(0)
    domain = n.DOMAINS[1]
    corpus = [
        {
            "item_id": f"c{k:05d}",
            "image": {"bytes": rng.randbytes(IMAGE_BYTES), "path": f"c{k:05d}.jpg"},
            "text": "Product info: brand: Audi, year: 2012",
            "attributes": {"colour": "red", "view": "front"},
            "product_id": f"p{k // 3:05d}",
            "brand": "Audi",
            "year": "2012",
        }
        for k in range(n_items)
    ]
    roles = [n.POSITIVE] * 4 + [n.P_VIOLATION] * 5 + [n.N_VIOLATION] * 5 + [n.RANDOM] * 986
    tables = {n.DOMAIN_CORPUS[domain]: corpus}
    pools = [[f"c{k:05d}" for k in rng.sample(range(1, n_items), 1000)] for _ in range(1000)]
    turns = ["I would like it in green.", "Actually, make it blue."]
    for config in (f"constraints_{domain}", f"state_{domain}"):
        state = config.startswith("state")
        prefix = (n.STATE_QUERY_PREFIX if state else n.CONSTRAINTS_QUERY_TEMPLATE).format(
            reference_attributes="brand: Audi, year: 2012", query_text=""
        )
        tables[config] = [
            {
                "query_id": f"q{q:04d}",
                "task": config,
                "query_image": corpus[0]["image"],
                "query_image_id": "c00000",
                "query_text": prefix
                + (
                    " ".join(n.STATE_TURN_TEMPLATE.format(index=i + 1, turn=t) for i, t in enumerate(turns))
                    if state
                    else "I want it in blue."
                ),
                "candidate_ids": ids,
                "candidate_roles": roles,
                "candidate_trap": [False] * 1000,
                "positive_ids": ids[:4],
                "profile": "D1",
                "conditions": [{"attribute": "colour", "polarity": "P", "value": "blue", "old_value": "red"}],
                **({"turns": turns, "session_type": n.SESSION_TYPES[1], "num_turns": 2} if state else {}),
            }
            for q, ids in enumerate(pools)
        ]
    return tables


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(task: str, directory: str, n_items: int) -> dict:
    """One measurement in this (fresh) process: seconds and peak RSS added by the measured step."""
    from triad_dataset.contract import names as n

    config = f"constraints_{n.DOMAINS[1]}"
    tables = make_tables(n_items) if task.startswith("write") else None
    base = _peak_mib()
    start = time.perf_counter()
    if task == "write_folder":
        from triad_dataset.contract.features import features_for
        from triad_dataset.folder.io import write_folder

        write_folder(
            Path(directory) / "ours",
            tables,
            features={c: features_for(c) for c in tables},
            card="",
            audit={"benchmark": "triad", "pool_size": 1000},
        )
    elif task == "write_datasets":
        from datasets import Dataset

        from triad_dataset.contract.features import features_for

        for name, rows in tables.items():
            features = features_for(name)
            full = [{c: json.dumps(r[c]) if c == "attributes" else r.get(c) for c in features} for r in rows]
            Dataset.from_list(full, features=features).to_parquet(str(Path(directory) / f"{name}.parquet"))
    elif task == "read_table":
        from triad_dataset.folder.io import read_table

        read_table(Path(directory) / "ours", config).to_pylist()
    elif task == "load_dataset":
        import datasets

        ds = datasets.load_dataset(
            str(Path(directory) / "ours"), config, split="test", cache_dir=str(Path(directory) / "cache")
        )
        ds.with_format("arrow")[:].to_pylist()
    elif task == "validate":
        from triad_dataset.folder.validate import validate_folder

        assert validate_folder(Path(directory) / "ours") == []
    return {"seconds": time.perf_counter() - start, "peak_added_mib": _peak_mib() - base, "peak_mib": _peak_mib()}


def measure(task: str, directory: str, n_items: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", task, "--dir", directory, "--items", str(n_items)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=13000)
    parser.add_argument("--child", default=None)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.dir, args.items)))
        return
    with tempfile.TemporaryDirectory() as directory:
        results = {
            t: measure(t, directory, args.items)
            for t in ("write_folder", "write_datasets", "read_table", "load_dataset", "validate")
        }
    size = f"{args.items:,} products x {IMAGE_BYTES // 1000} KB + 2 x 1,000 queries x 1,000 candidates"
    print(f"Dataset folder I/O ({size}); load average {os.getloadavg()[0]:.1f} at start\n")
    print("| step | ours s | ours +MiB | alternative | alt s | alt +MiB | time ratio | memory ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for ours, alt, label in (
        ("write_folder", "write_datasets", "Dataset.from_list().to_parquet()"),
        ("read_table", "load_dataset", "datasets.load_dataset (first load)"),
    ):
        a, b = results[ours], results[alt]
        print(
            f"| {ours} | {a['seconds']:.1f} | {a['peak_added_mib']:.0f} | {label} | {b['seconds']:.1f} | "
            f"{b['peak_added_mib']:.0f} | {b['seconds'] / a['seconds']:.1f}x | "
            f"{b['peak_added_mib'] / max(a['peak_added_mib'], 1):.1f}x |"
        )
    v = results["validate"]
    print(f"| validate_folder | {v['seconds']:.1f} | {v['peak_added_mib']:.0f} | - | - | - | - | - |")


if __name__ == "__main__":
    main()
