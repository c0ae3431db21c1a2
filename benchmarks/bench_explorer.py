"""Explorer benchmark: the time to build one query's view in the Space's Explorer tab, on the mini editions.

Builds the mini TRIAD and ARK editions into a temporary folder, submits a random-ranking run of each through the
Space's own path (`submit_run_dir`, which stores the top 20 per query), then times `explorer_tab.render` — the
whole handler: read the stored top ids, pick the query, build the view (roles, the positive rule's reasons),
thumbnails as data URIs, HTML — for every query of a subset chosen "by query id". The first query of a subset is
reported apart ("cold": corpus rows read); the rest are "warm" (their candidates' thumbnails made on first sight),
then rendered again ("again": every thumbnail cached). The alternative measured in the same run: `explorer.triad_view` / `ark_view` alone on the same query (no thumbnails, no HTML).

    python3 benchmarks/bench_explorer.py [--queries 40]
"""

from __future__ import annotations

import argparse
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

from ark_dataset.mini import build_ark_mini  # noqa: E402
from spaces_app import explore_store, explorer_tab  # noqa: E402
from spaces_app import explorer as ex  # noqa: E402
from spaces_app import testing as T  # noqa: E402
from spaces_app.board import Leaderboard  # noqa: E402
from spaces_app.gold import load_gold  # noqa: E402
from spaces_app.settings import Settings  # noqa: E402
from spaces_app.submit import submit_run_dir  # noqa: E402
from triad_dataset.editions.mini import build_mini  # noqa: E402
from triad_dataset.folder import io as folder  # noqa: E402

TRIAD_SUBSETS = ("constraints_cars", "state_fashion", "abstraction_i2c")


def _seconds(fn: object, *args: object) -> float:
    start = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return time.perf_counter() - start


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=40, help="queries per subset (default 40)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        lb, ids = _setup(Path(tmp))
        for config in TRIAD_SUBSETS:
            _subset(lb, "triad", ids["triad"], config, args.queries)
        _subset(lb, "ark", ids["ark"], next(iter(lb.golds.get("ark").rows)), args.queries)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
