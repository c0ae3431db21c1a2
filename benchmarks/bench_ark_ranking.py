"""ARK gallery-wide ranking: a 5,000-item gallery x 100 queries from cached vectors, and encoder calls
equal distinct items on the ARK mini edition.

    python benchmarks/bench_ark_ranking.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def bench_gallery(n_gallery: int = 5000, n_q: int = 100) -> str:
    from model_adapters.ranks.ranking import normalize, rank_gallery

    rng = np.random.default_rng(0)
    rows = []
    for dim in (384, 1024, 4096):
        gallery = normalize(rng.standard_normal((n_gallery, dim)).astype(np.float32))
        queries = normalize(rng.standard_normal((n_q, dim)).astype(np.float32))
        positives = rng.integers(0, n_gallery, size=n_q)
        rank_gallery(queries[:2], gallery, positives[:2])
        t0 = time.perf_counter()
        idx, _, ranks = rank_gallery(queries, gallery, positives, top=100)
        t_batched = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in range(n_q):  # alternative: per query, a product and a Python sort of (−score, position) pairs
            s = gallery @ queries[q]
            order = sorted(range(n_gallery), key=lambda i, s=s: (-s[i], i))
            # same ranking up to float32 rounding (a matrix-vector product sums in another order)
            assert abs(order.index(int(positives[q])) + 1 - int(ranks[q])) <= 3
        t_loop = time.perf_counter() - t0
        rows.append(
            [f"{n_q} x {n_gallery:,} (d={dim})", f"{t_batched:.3f}", f"{t_loop:.3f}", f"{t_loop / t_batched:.0f}x"]
        )
    return table(["ARK ranking from cached vectors", "batched s", "per-query Python sort s", "speed-up"], rows)


class CountingEncoder:
    dim = 16

    def __init__(self) -> None:
        self.calls = 0

    def _encode(self, batch):
        self.calls += len(batch)
        return np.random.default_rng(self.calls).standard_normal((len(batch), self.dim)).astype(np.float32)

    encode_queries = _encode
    encode_candidates = _encode


def bench_distinct(tmp: str) -> str:
    from model_adapters.runner import RunConfig, run

    try:
        from ark_dataset.mini import build_ark_mini

        data = str(build_ark_mini(Path(tmp) / "ark"))
        what = "ARK mini edition"
    except ImportError:
        from tests.doubles.folders import write_tiny_ark

        data, what = str(write_tiny_ark(Path(tmp) / "ark")), "tiny ARK test folder"
    enc = CountingEncoder()
    res = run(
        RunConfig(
            model=None,
            name="counting-encoder",
            data=data,
            out=os.path.join(tmp, "out"),
            encoder=enc,
            no_cache=True,
            quiet=True,
            validate=False,
        )
    )
    rows = [
        [c, str(v["queries"]), str(v["pool_slots"]), str(v["distinct_items"])]
        for c, v in res["run"]["per_config"].items()
    ]
    rows.append(["**all**", "", str(res["run"]["pool_slots"]), str(res["run"]["distinct_items"])])
    return (
        f"{what}, image+text model: encoder inputs {enc.calls} = distinct items {res['run']['distinct_items']}\n\n"
        + table(["subtype", "queries", "query x gallery slots", "distinct items"], rows)
    )


def main() -> None:
    print(f"machine: {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at start)\n")
    print("## Gallery-wide ranking\n")
    print(bench_gallery(), "\n")
    with tempfile.TemporaryDirectory() as tmp:
        print("## Encoder calls = distinct items\n")
        print(bench_distinct(tmp), "\n")


if __name__ == "__main__":
    main()
