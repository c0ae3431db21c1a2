"""Scaling of `triad run` and of the Space's rescoring with the number of pool slots.

Builds synthetic TRIAD folders (every task config, 1,000-candidate pools, random image bytes) at 1x, 3x and 10x the
mini edition's 1,121,120 pool slots and at the paper's 9,009,000, runs the runner's phases with a model-free hashed
encoder (`tests.doubles.folders.HashedEncoder`, so the model is not what is measured) and the Space-style
rescoring of the six main subsets through `metrics.scoring` (gold loaded once, not timed; then each submitted
rankings parquet read with pyarrow, turned into pool positions and scored). Each size runs in a fresh process;
memory is the peak resident size during each phase minus the resident size after importing the stack.

The named alternative, measured in the same run: earlier code (`--baseline DIR`, a checkout of an earlier commit:
c849dac, before the columnar plan; 54cf1a6, before image columns were hashed one row group at a time) doing the
whole `run()` in a fresh process (peak: the process's own VmHWM over its imports), and `metrics.scoring.score_triad`
on row dicts.

    python benchmarks/bench_scaling.py [--sizes 1,3,paper,10] [--image-kb 2] [--baseline /tmp/scale_base]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MINI_QUERIES = 112  # x 10 configs x 1,001 = 1,121,120 slots, the mini edition's
PAPER_QUERIES = 900  # x 10 configs x 1,001 = 9,009,000 slots, the paper's
POOL = 1000
CORPUS = {"abstraction_concepts": 2253, "abstraction_instances": 14502, "fashion_items": 1800, "cars_items": 1400}
PAPER_CORPUS = {
    "abstraction_concepts": 2253,
    "abstraction_instances": 16000,
    "fashion_items": 13000,
    "cars_items": 8000,
}


# --- synthetic folder ---------------------------------------------------------------------------------------
def build_folder(out: Path, n_queries: int, image_kb: float, seed: int = 0, image_pool: Sequence[bytes] = ()) -> int:
    """A TRIAD folder readable by the runner (card + parquet shards; not a valid benchmark). Returns pool slots.

    Images are random bytes of `image_kb` KB, or, with `image_pool`, encoded images drawn from it at random.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from triad_dataset.contract import names as n

    rng = np.random.default_rng(seed)
    scale = n_queries / MINI_QUERIES
    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    card = ["---", "configs:"]

    def images(count: int) -> pa.Array:
        if image_pool:
            picks = rng.integers(0, len(image_pool), size=count)
            values = pa.array([image_pool[i] for i in picks], pa.binary())
            return pa.StructArray.from_arrays([values, pa.nulls(count, pa.string())], fields=list(image_type))
        size = max(1, int(image_kb * 1024))
        blob = rng.integers(0, 256, size=count * size, dtype=np.uint8).tobytes()
        values = pa.array([blob[i * size : (i + 1) * size] for i in range(count)], pa.binary())
        return pa.StructArray.from_arrays([values, pa.nulls(count, pa.string())], fields=list(image_type))

    def write(config: str, table: pa.Table) -> None:
        folder = out / "data" / config
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / "test-000000000000-00000-of-00001.parquet", row_group_size=100)
        card.extend(
            [f"- config_name: {config}", "  data_files:", "  - split: test", f"    path: data/{config}/test-*.parquet"]
        )

    corpus_ids: dict[str, pa.Array] = {}
    for corpus, mini in CORPUS.items():
        size = min(max(mini, int(mini * scale)), max(mini, PAPER_CORPUS[corpus]))
        ids = pa.array([f"{corpus[:4]}{i:06d}" for i in range(size)])
        corpus_ids[corpus] = ids
        texts = pa.array([f"Product info: item {i}, colour {i % 17}, kind {i % 101}" for i in range(size)])
        attributes = pa.array([json.dumps({"category": f"cat{i % 7}"}) for i in range(size)])  # C.3 strata
        write(corpus, pa.table({"item_id": ids, "text": texts, "attributes": attributes, "image": images(size)}))
    slots = 0
    negatives = [r for r in n.ROLES if r != n.POSITIVE]
    for config in n.TASK_CONFIGS:
        ids = corpus_ids[n.CANDIDATE_CORPUS[config]]
        picks = np.stack([rng.permutation(len(ids))[:POOL] for _ in range(n_queries)])
        n_pos = rng.integers(1, 6, size=n_queries)
        offsets = pa.array(np.arange(n_queries + 1, dtype=np.int32) * POOL)
        pool_ids = pa.ListArray.from_arrays(offsets, ids.take(pa.array(picks.ravel())))
        is_pos = np.arange(POOL)[None, :] < n_pos[:, None]
        roles = np.where(is_pos, n.POSITIVE, np.asarray(negatives)[rng.integers(0, len(negatives), (n_queries, POOL))])
        pos_offsets = pa.array(np.concatenate([[0], np.cumsum(n_pos)]).astype(np.int32))
        columns = {
            "query_id": pa.array([f"{config[:6]}-q{q}" for q in range(n_queries)]),
            "query_text": pa.array([f"find item {q} in {config}" for q in range(n_queries)]),
            "query_image": images(n_queries),
            "candidate_ids": pool_ids,
            "candidate_roles": pa.ListArray.from_arrays(offsets, pa.array(roles.ravel())),
            "candidate_trap": pa.ListArray.from_arrays(
                offsets, pa.array(rng.random(n_queries * POOL) < (0.002 if config in n.STATE_CONFIGS else 0))
            ),
            "positive_ids": pa.ListArray.from_arrays(pos_offsets, ids.take(pa.array(picks[is_pos]))),
        }
        if config == "abstraction_i2c":
            columns["positive_hops"] = pa.ListArray.from_arrays(
                pos_offsets, pa.array(rng.integers(1, 3, size=int(n_pos.sum())).astype(np.int64))
            )
            columns["depth"] = pa.array(rng.integers(4, 9, size=n_queries))
        if config in n.CONSTRAINTS_CONFIGS:
            columns["profile"] = pa.array(np.asarray(list(n.PROFILES))[rng.integers(0, len(n.PROFILES), n_queries)])
        if config in n.STATE_CONFIGS:
            columns["session_type"] = pa.array(np.asarray(n.SESSION_TYPES)[rng.integers(0, 2, n_queries)])
            columns["num_turns"] = pa.array(rng.integers(2, 5, size=n_queries))
        write(config, pa.table(columns))
        slots += n_queries * (POOL + 1)
    (out / "README.md").write_text("\n".join(card + ["---", "# synthetic scaling folder", ""]), encoding="utf-8")
    (out / "audit.json").write_text(json.dumps({"benchmark": "triad", "pool_size": POOL}), encoding="utf-8")
    return slots


# --- measuring ----------------------------------------------------------------------------------------------
def _rss() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Peak:
    """Samples the resident size every 5 ms; `phase()` returns the peak since the previous call."""

    def __init__(self) -> None:
        self.peak = _rss()
        self._stop = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, _rss())
            time.sleep(0.005)

    def phase(self) -> int:
        peak, self.peak = max(self.peak, _rss()), _rss()
        return peak


def measure(data: str, out: str) -> dict:
    """The runner's phases and the Space-style rescoring on one folder, in this (fresh) process."""
    import gc

    import numpy as np  # noqa: F401
    import pyarrow.compute  # noqa: F401  (the stack the phases use, imported before the baseline)
    import pyarrow.parquet as pq
    import scipy.stats  # noqa: F401  (imported by the scoring's Wilcoxon tests: part of the stack)
    import tqdm.auto  # noqa: F401

    from metrics import columnar, scoring
    from model_adapters.models.selection import resolve_model
    from model_adapters.planning.plan import plan_triad, release_arrow_memory
    from model_adapters.ranks import rank_plan
    from model_adapters.run.config import RunConfig
    from model_adapters.run.encoder import RunEncoder
    from model_adapters.vectors import distributed
    from model_adapters.vectors.plan_vectors import EncodeSettings, encode_plan
    from tests.doubles.folders import HashedEncoder
    from triad_dataset.contract import names as n

    cfg = RunConfig(
        model=None,
        name="hashed",
        revision="test",
        data=data,
        out=out,
        encoder=HashedEncoder(),
        no_cache=True,
        quiet=True,
        validate=False,
    )
    # warm-up on 2 queries per config: the first call of each code path loads library pages and allocator arenas
    # (~130 MiB, once per process); the baseline is taken after it, so the figures are what the data costs
    warm = plan_triad(data, list(n.TASK_CONFIGS), variant="full", limit=2, sees_images=True)
    model, ctx = resolve_model(cfg), distributed.Context()
    settings = EncodeSettings(label=model.identity.label, batch_size=model.max_batch, quiet=True)

    def encode_all(plan: Any) -> Any:  # the runner's encode phase without a cache (--no-cache)
        return encode_plan(plan, RunEncoder(model, cfg, ctx), ctx, None, settings)[0]

    warm_vectors = encode_all(warm)
    rankings = Path(out, "rankings")
    rankings.mkdir(parents=True, exist_ok=True)

    def write(cp: Any, result: Any, first: Any) -> None:  # what the runner's `emit` does, without the staging
        pq.write_table(rank_plan.rankings_table(cp, result, ark=False), rankings / f"{cp.config}.parquet")

    warm_final, _ = rank_plan.triad_rankings(warm, warm_vectors, None, 30, 8, False, emit=write)
    rank_plan.score(warm, warm_final, 0)
    del warm, warm_vectors, warm_final
    gc.collect()
    release_arrow_memory()  # the baseline without freed Arrow buffers (their release is timing-dependent otherwise)
    base = _rss()
    peak = Peak()
    phases: dict[str, dict] = {}

    def done(name: str, t0: float) -> None:
        phases[name] = {"s": time.perf_counter() - t0, "peak_over_base": peak.phase() - base}

    peak.phase()
    t0 = time.perf_counter()
    plan = plan_triad(data, list(n.TASK_CONFIGS), variant="full", limit=None, sees_images=True)
    done("plan", t0)
    slots = sum(cp.pool_slots + len(cp.rows) for cp in plan.configs)
    t0 = time.perf_counter()
    vectors = encode_all(plan)
    done("encode", t0)
    t0 = time.perf_counter()
    # as the runner: each config's rankings written as soon as it is ranked, only the orders kept for scoring
    final, _ = rank_plan.triad_rankings(plan, vectors, None, 30, 8, False, emit=write)
    done("rank+write", t0)
    t0 = time.perf_counter()
    rank_plan.score(plan, final, 0)
    done("score", t0)
    run_peak = max(p["peak_over_base"] for p in phases.values())
    distinct = len(plan.items)
    del plan, vectors, final
    gc.collect()

    # Space-style rescoring of the six main subsets: gold once (not timed), then per submission
    from triad_dataset.folder.io import read_table, shard_paths

    t0 = time.perf_counter()

    def gold_columns(config: str) -> list[str]:
        return [c for c in pq.read_schema(shard_paths(data, config)[0]).names if c not in ("query_image", "image")]

    gold = {c: columnar.gold_from_table(c, read_table(data, c, gold_columns(c))) for c in n.MAIN_CONFIGS}
    gold_load = time.perf_counter() - t0

    def rescore() -> None:
        orders = {}
        for c in n.MAIN_CONFIGS:
            table = pq.read_table(Path(out, "rankings", f"{c}.parquet"), columns=["query_id", "candidate_ids"])
            orders[c] = columnar.order_from_ids(gold[c], table.column("query_id"), table.column("candidate_ids"))
        scoring.score_triad_arrays(gold, orders)

    rescore()  # a server's first submission warms the code paths; the figure is a submission after it
    gc.collect()
    space_base = _rss()
    peak.phase()
    t0 = time.perf_counter()
    rescore()
    space = {"s": time.perf_counter() - t0, "peak_over_base": peak.phase() - space_base, "gold_load_s": gold_load}
    return {
        "slots": slots,
        "distinct": distinct,
        "base_rss": base,
        "phases": phases,
        "run_peak": run_peak,
        "space": space,
    }


def legacy_space(data: str, out: str) -> dict:
    """The alternative: `metrics.scoring.score_triad` on row dicts (gold rows loaded once, not timed)."""
    import gc

    import pyarrow.parquet as pq

    from metrics import scoring
    from triad_dataset.contract import names as n
    from triad_dataset.folder.io import read_rows, shard_paths

    names = {
        c: [x for x in pq.read_schema(shard_paths(data, c)[0]).names if x not in ("query_image", "image")]
        for c in n.MAIN_CONFIGS
    }
    gold = {c: read_rows(data, c, names[c]) for c in n.MAIN_CONFIGS}
    gc.collect()
    base = _rss()
    peak = Peak()
    peak.phase()
    t0 = time.perf_counter()
    rankings = {}
    for c in n.MAIN_CONFIGS:
        rows = pq.read_table(Path(out, "rankings", f"{c}.parquet"), columns=["query_id", "candidate_ids"]).to_pylist()
        rankings[c] = {r["query_id"]: r["candidate_ids"] for r in rows}
    scoring.score_triad(gold, rankings)
    return {"s": time.perf_counter() - t0, "peak_over_base": peak.phase() - base}


WHOLE_RUN = """
import hashlib, json, resource, sys, time
import numpy as np
class Enc:
    dim = 16
    def _v(self, role, b):
        h = hashlib.blake2b(digest_size=64)
        for part in (role.encode(), (b.text or "").encode(), b.image or b"-", (b.instruction or "").encode()):
            h.update(part)
        return (np.frombuffer(h.digest(), dtype=np.uint32) / 2**32 - 0.5).astype(np.float32)
    def encode_queries(self, batch): return np.stack([self._v("q", b) for b in batch])
    def encode_candidates(self, batch): return np.stack([self._v("c", b) for b in batch])
from model_adapters.runner import RunConfig, run
import metrics.scoring, scipy.stats, pyarrow.compute, pyarrow.parquet, tqdm.auto
def hwm():  # this process's own peak RSS (ru_maxrss also counts the parent's peak from before the exec)
    try:
        return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
base = hwm()
t0 = time.perf_counter()
res = run(RunConfig(model=None, name="hashed", revision="test", data=sys.argv[1], out=sys.argv[2], encoder=Enc(), no_cache=True,
                    quiet=True, validate=False))
print(json.dumps({"s": time.perf_counter() - t0, "maxrss": hwm(),
                  "import_rss": base, "timings": res["run"]["timings_s"]}))
"""


def whole_run(code_dir: Path, data: str, out: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code_dir), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", WHOLE_RUN, data, out], env=env, capture_output=True, text=True, cwd=str(code_dir)
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _child(kind: str, data: str, out: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, __file__, f"--{kind}", data, out], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _exp(a: float, b: float, sa: int, sb: int) -> str:
    return f"{math.log(b / a) / math.log(sb / sa):.2f}" if a > 0 and b > 0 else "—"


MIB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,3,paper,10", help="multiples of the mini edition, or 'paper'")
    parser.add_argument("--image-kb", type=float, default=2.0)
    parser.add_argument("--baseline", help="a checkout of the code before the columnar plan (the alternative)")
    parser.add_argument("--no-legacy", action="store_true", help="skip score_triad on row dicts (slow)")
    parser.add_argument("--measure", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--legacy-space", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    if args.legacy_space:
        print(json.dumps(legacy_space(*args.legacy_space)))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        for size in args.sizes.split(","):
            queries = PAPER_QUERIES if size == "paper" else int(float(size) * MINI_QUERIES)
            data = Path(tmp) / f"triad-{size}"
            t0 = time.perf_counter()
            slots = build_folder(data, queries, args.image_kb)
            print(f"[{size}] folder: {slots:,} slots, built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            result = _child("measure", str(data), str(Path(tmp) / f"out-{size}"))
            result["size"] = size
            if not args.no_legacy:
                result["legacy_space"] = _child("legacy-space", str(data), str(Path(tmp) / f"out-{size}"))
            result["whole_new"] = whole_run(ROOT, str(data), str(Path(tmp) / f"whole-new-{size}"))
            if args.baseline:
                result["whole_old"] = whole_run(Path(args.baseline), str(data), str(Path(tmp) / f"whole-old-{size}"))
            print(json.dumps(result), file=sys.stderr)
            rows.append(result)
            import shutil

            shutil.rmtree(data, ignore_errors=True)
    report(rows)


def report(rows: list[dict]) -> None:
    phases = list(rows[0]["phases"])
    print(
        "| size | pool slots | distinct items | "
        + " | ".join(f"{p} s / MiB" for p in phases)
        + " | runner peak MiB (B/slot) | Space rescoring s / MiB (legacy rows) |"
    )
    print("|---" * (len(phases) + 5) + "|")
    for r in rows:
        cells = [f"{r['phases'][p]['s']:.2f} / {r['phases'][p]['peak_over_base'] / MIB:.0f}" for p in phases]
        sp, lg = r["space"], r.get("legacy_space", {"s": float("nan"), "peak_over_base": float("nan")})
        print(
            f"| {r['size']}x | {r['slots']:,} | {r['distinct']:,} | "
            + " | ".join(cells)
            + f" | {r['run_peak'] / MIB:.0f} ({r['run_peak'] / r['slots']:.1f}) | {sp['s']:.2f} / "
            f"{sp['peak_over_base'] / MIB:.0f} ({lg['s']:.2f} / {lg['peak_over_base'] / MIB:.0f}) |"
        )
    print()
    print("growth exponents (time, peak memory) between consecutive sizes:")
    for a, b in zip(rows, rows[1:], strict=False):
        parts = [
            f"{p} {_exp(a['phases'][p]['s'], b['phases'][p]['s'], a['slots'], b['slots'])}, "
            f"{_exp(a['phases'][p]['peak_over_base'], b['phases'][p]['peak_over_base'], a['slots'], b['slots'])}"
            for p in phases
        ]
        parts.append(f"space {_exp(a['space']['s'], b['space']['s'], a['slots'], b['slots'])}")
        print(f"  {a['size']}x -> {b['size']}x: " + "; ".join(parts))
    print()
    print("whole run() in a fresh process (wall s, peak RSS MiB over the imported stack):")
    for r in rows:
        new = r["whole_new"]
        line = f"  {r['size']}x: columnar {new['s']:.1f} s, {(new['maxrss'] - new['import_rss']) / MIB:.0f} MiB"
        if "whole_old" in r:
            old = r["whole_old"]
            line += (
                f"; --baseline code {old['s']:.1f} s, {(old['maxrss'] - old['import_rss']) / MIB:.0f} MiB"
                f" -> {old['s'] / new['s']:.1f}x faster, "
                f"{(old['maxrss'] - old['import_rss']) / max(1, new['maxrss'] - new['import_rss']):.1f}x less memory"
            )
        print(line)


if __name__ == "__main__":
    main()
