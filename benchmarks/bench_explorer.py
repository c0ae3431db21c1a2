"""Explorer benchmark: one query's view time in the Explorer tab, mini editions or paper size.

Builds the mini TRIAD and ARK editions into a temporary folder, submits a random-ranking run of each through the
Space's own path (`submit_run_dir`, which stores the top 20 per query), then times `explorer_tab.render` — the
whole handler: read the stored top ids, pick the query, build the view (roles, the positive rule's reasons),
thumbnails as data URIs, HTML — for every query of a subset chosen "by query id". The first query of a subset is
reported apart ("cold": corpus rows read); the rest are "warm" (their candidates' thumbnails made on first sight),
then rendered again ("again": every thumbnail cached). The alternative measured in the same run: `explorer.triad_view` / `ark_view` alone on the same query (no thumbnails, no HTML).

`--paper` does the same on a paper-size TRIAD folder instead (`bench_scaling.build_folder`: every task config,
1,000-candidate pools, `--paper-queries` queries per config, photo-sized JPEG images), with each query given a
`query_image_id` so its reference product and query image are shown; the synthetic folder has no `conditions` or
dialogue `turns`, so those lines of a view are empty. It then writes `triad report` for that run with the default
worst queries per subset twice (thumbnails made, then cached), then at the bound (`report.MAX_WORST`), and prints
each file's size.

    python3 benchmarks/bench_explorer.py [--queries 40] [--paper [--paper-queries 900]]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from bench_scaling import PAPER_QUERIES, build_folder  # noqa: E402  (benchmarks/, next to this script)
from PIL import Image  # noqa: E402

from ark_dataset.mini import build_ark_mini  # noqa: E402
from spaces_app import explore_store, explorer_tab  # noqa: E402
from spaces_app import explorer as ex  # noqa: E402
from spaces_app.board import Leaderboard  # noqa: E402
from spaces_app.gold import load_gold  # noqa: E402
from spaces_app.report import MAX_WORST, WORST, write_report  # noqa: E402
from spaces_app.settings import Settings  # noqa: E402
from spaces_app.submit import submit_run_dir  # noqa: E402
from tests.doubles import space_runs as T  # noqa: E402
from triad_dataset.contract import names as n  # noqa: E402
from triad_dataset.editions.mini import build_mini  # noqa: E402
from triad_dataset.folder import io as folder  # noqa: E402

TRIAD_SUBSETS = ("constraints_cars", "state_fashion", "abstraction_i2c")


def _seconds(fn: object, *args: object) -> float:
    start = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return time.perf_counter() - start


def _timed(label: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    print(f"{label}: {time.perf_counter() - start:.1f} s", flush=True)
    return out


def _stored(outcome: Any) -> int:
    if outcome.submission_id is None:
        raise SystemExit(f"bench_explorer: the run was not stored: {outcome.message}")
    return int(outcome.submission_id)


def _setup(root: Path) -> tuple[Leaderboard, dict[str, int]]:
    triad = root / "triad"
    build_mini(triad, seed=0, quiet=True)
    ark = build_ark_mini(root / "ark")
    db = root / "space.sqlite"
    golds = {"triad": Path(triad), "ark": Path(ark)}
    ids = {}
    gold = load_gold(triad)
    run = T.write_run(root / "run", gold.rows, T.random_rankings(gold.rows, seed=1), fingerprint=gold.fingerprint)
    ids["triad"] = _stored(submit_run_dir(db, golds, run, model_name="random"))
    agold = load_gold(ark)
    tables = {**agold.rows, **{s + "_gallery": folder.read_rows(ark, s + "_gallery", ["item_id"]) for s in agold.rows}}
    arun = T.write_run(
        root / "ark-run", tables, T.ark_random_rankings(tables, seed=1), benchmark="ark", fingerprint=agold.fingerprint
    )
    ids["ark"] = _stored(submit_run_dir(db, golds, arun, model_name="random"))
    return Leaderboard(Settings(Path(triad), Path(ark), db, None, 0, "127.0.0.1")), ids


def _subset(lb: Leaderboard, benchmark: str, sid: int, config: str, queries: int) -> None:
    gold = lb.golds.get(benchmark)
    rows = gold.rows[config][:queries]
    cold = _seconds(explorer_tab.render, lb, benchmark, sid, "", config, explorer_tab.MODES[3], rows[0]["query_id"])
    warm = [
        _seconds(explorer_tab.render, lb, benchmark, sid, "", config, explorer_tab.MODES[3], r["query_id"])
        for r in rows[1:]
    ]
    again = [
        _seconds(explorer_tab.render, lb, benchmark, sid, "", config, explorer_tab.MODES[3], r["query_id"])
        for r in rows[1:]
    ]
    tops, ranks = explore_store.load(lb.settings.db_path, sid, config)
    corpus = ex.Corpus(gold.path)
    view = [
        _seconds(ex.query_view, benchmark, corpus, config, r, tops[r["query_id"]], ex.TOP_K, ranks.get(r["query_id"]))
        for r in rows
    ]
    print(
        f"{benchmark} {config}: render cold {cold:.3f} s; warm median {statistics.median(warm):.3f} s, "
        f"max {max(warm):.3f} s over {len(warm)} queries; the same queries again (thumbnails cached) median "
        f"{statistics.median(again):.3f} s, max {max(again):.3f} s; view alone median {statistics.median(view[1:]):.4f} s"
    )


def _jpegs(count: int, side: int, seed: int = 0) -> list[bytes]:
    """`count` distinct JPEG pictures of side x side pixels (smooth colour fields with grain), photo-sized."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        field = np.asarray(Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).resize((side, side)))
        grain = rng.integers(-12, 13, (side, side, 3))
        buffer = io.BytesIO()
        Image.fromarray(np.clip(field + grain, 0, 255).astype(np.uint8)).save(buffer, format="JPEG", quality=90)
        out.append(buffer.getvalue())
    return out


def _add_reference_ids(path: Path, seed: int = 1) -> None:
    """Give every query whose config has a query-image corpus a `query_image_id` drawn from that corpus."""
    rng = np.random.default_rng(seed)
    for config, corpus in n.QUERY_IMAGE_CORPUS.items():
        if corpus is None:
            continue
        shard = folder.shard_paths(path, config)[0]
        table = pq.read_table(shard)
        items = folder.read_table(path, corpus, columns=["item_id"]).column("item_id")
        picks = pa.array(rng.integers(0, len(items), table.num_rows))
        pq.write_table(table.append_column("query_image_id", items.take(picks)), shard, row_group_size=100)


def _paper(root: Path, n_queries: int, queries: int) -> None:
    triad = root / "triad"
    pool = _timed("photo-sized JPEGs (64 distinct, 512 px)", _jpegs, 64, 512)
    print(f"  mean JPEG size {statistics.mean(len(b) for b in pool) / 1024:.0f} KB")
    slots = _timed(f"paper-shaped folder, {n_queries} queries per config", build_folder, triad, n_queries, 0, 0, pool)
    _add_reference_ids(triad)
    print(f"  {slots:,} pool slots")
    gold = _timed("gold load", load_gold, triad)
    rankings = T.random_rankings(gold.rows, seed=1)
    run = _timed("random run written", T.write_run, root / "run", gold.rows, rankings, fingerprint=gold.fingerprint)
    db = root / "space.sqlite"
    sid = _stored(_timed("submit_run_dir", submit_run_dir, db, {"triad": triad}, run, model_name="random"))
    lb = Leaderboard(Settings(triad, root / "no-ark", db, None, 0, "127.0.0.1"))
    _timed("Leaderboard gold load", lb.golds.get, "triad")
    for config in TRIAD_SUBSETS:
        _subset(lb, "triad", sid, config, queries)
    for worst, attempt in ((WORST, "thumbnails made"), (WORST, "thumbnails cached"), (MAX_WORST, "the bound")):
        out = root / "report.html"
        label = f"triad report, worst {worst} per subset ({attempt})"
        _timed(label, write_report, [run], out, data=triad, worst_n=worst, thumbs_root=root / "thumbs")
        print(f"  {out.stat().st_size / 2**20:.2f} MiB, {len(rankings)} subsets")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=40, help="queries per subset (default 40)")
    ap.add_argument("--paper", action="store_true", help="a paper-size TRIAD folder instead of the mini editions")
    ap.add_argument("--paper-queries", type=int, default=PAPER_QUERIES, help="queries per config with --paper")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    if args.paper:
        with tempfile.TemporaryDirectory() as tmp:
            _paper(Path(tmp), args.paper_queries, args.queries)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        lb, ids = _setup(Path(tmp))
        for config in TRIAD_SUBSETS:
            _subset(lb, "triad", ids["triad"], config, args.queries)
        _subset(lb, "ark", ids["ark"], next(iter(lb.golds.get("ark").rows)), args.queries)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
