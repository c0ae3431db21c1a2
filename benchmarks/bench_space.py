"""Leaderboard Space benchmark: server rescoring of a six-subset TRIAD submission, and page load with 50 models.

Rescoring (the whole `submit_files` path: read uploads, parquet parsing and checks, permutation checks against the
gold pools, `metrics.scoring.score_triad` with 3,000-resample bootstrap intervals, results.json comparison, SQLite
insert) is compared with `metrics.scoring.score_triad` alone on the same rankings — the irreducible cost of the
numbers; the ratio is the Space's overhead. Sizes: mini (120 queries x 1,000 candidates per subset, the mini
edition's shape) and paper (1,000 x 1,000 per subset), synthetic gold.

Page load: a leaderboard with 50 submissions, timed (a) server side, the `refresh` handler that builds every table,
and (b) in Debian's Chromium, from navigation until the main table shows its 50 rows; the alternative is the same
page with 1 submission.

    python3 benchmarks/bench_space.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from metrics import scoring  # noqa: E402
from spaces_app import testing as T  # noqa: E402
from spaces_app.db import Database  # noqa: E402
from spaces_app.gold import GoldStore  # noqa: E402
from spaces_app.submit import RateLimit, submit_files  # noqa: E402
from triad_dataset.contract import names as n  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def bench_rescoring(root: Path, label: str, n_queries: int, pool: int) -> dict:
    tables = T.triad_tables(n_queries, pool, seed=1, configs=n.MAIN_CONFIGS, corpus_size=3 * pool)
    gold_dir = T.write_triad_gold(root / f"gold-{label}", tables, pool)
    rankings = T.random_rankings(tables, seed=2)
    run = T.write_run(root / f"run-{label}", tables, rankings)
    files = sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]
    golds = GoldStore({"triad": gold_dir})
    t0 = time.perf_counter()
    golds.get("triad")
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    scoring.score_triad({c: tables[c] for c in rankings}, rankings)
    core = time.perf_counter() - t0
    db = Database(root / f"db-{label}.sqlite")
    t0 = time.perf_counter()
    out = submit_files(db, golds, files, model_name=label, submitter="bench", rate_limit=RateLimit(9, 9))
    full = time.perf_counter() - t0
    if not out.accepted:
        raise SystemExit(out.message)
    size = sum(f.stat().st_size for f in files)
    return {"label": label, "shape": f"6 x {n_queries:,} x {pool:,}", "upload_mb": size / 2**20, "gold_load": load,
            "core": core, "full": full}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_page(root: Path, n_models: int) -> dict:
    from spaces_app.app import CSS, build_app
    from spaces_app.settings import Settings

    tables = T.triad_tables(30, 100, seed=3)
    gold = T.write_triad_gold(root / f"page-gold-{n_models}", tables, 100)
    db_path = root / f"page-{n_models}.sqlite"
    db, golds = Database(db_path), GoldStore({"triad": gold})
    for i in range(n_models):
        run = T.write_run(root / f"page-run-{n_models}-{i}", tables, T.random_rankings(tables, seed=100 + i))
        files = sorted((run / "rankings").glob("*.parquet")) + [run / "results.json"]
        out = submit_files(db, golds, files, model_name=f"model-{i:02d}", family=("a", "b", "c")[i % 3],
                           params=str(10 ** (6 + i % 4)), submitter="bench", rate_limit=RateLimit(10**6, 1))
        if not out.accepted:
            raise SystemExit(out.message)
    settings = Settings(gold, root / "no-ark", db_path, None, _free_port(), "127.0.0.1")
    demo = build_app(settings)
    refresh = next(fn for fn in demo.fns.values() if getattr(fn.fn, "__name__", "") == "refresh").fn
    db.set_hidden(1, False)  # a database change (nothing visible changes): the next load reads everything again
    t0 = time.perf_counter()
    refresh("", "All families", "I2C")
    server = time.perf_counter() - t0
    t0 = time.perf_counter()
    refresh("", "All families", "I2C")  # unchanged database: submissions come from the revision-keyed cache
    warm = time.perf_counter() - t0
    demo.queue()
    demo.launch(server_name="127.0.0.1", server_port=settings.port, prevent_thread_lock=True, quiet=True, css=CSS)
    browser_s = float("nan")
    try:
        if Path(CHROMIUM).exists():
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1300, "height": 900})
                page.goto(f"http://127.0.0.1:{settings.port}/")  # warm-up (static assets into the cache)
                page.locator("#main-table").get_by_text("model-00", exact=True).filter(visible=True).first.wait_for()
                t0 = time.perf_counter()
                page.goto(f"http://127.0.0.1:{settings.port}/")
                page.locator("#main-table").get_by_text("model-00", exact=True).filter(visible=True).first.wait_for()
                browser_s = time.perf_counter() - t0
                browser.close()
    finally:
        demo.close()
    return {"models": n_models, "server": server, "warm": warm, "browser": browser_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="mini size only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sizes = [("mini", 120, 1000)] + ([] if args.quick else [("paper", 1000, 1000)])
        rows = [bench_rescoring(root, *s) for s in sizes]
        print("\nRescoring a six-subset TRIAD submission (seconds)")
        print("| size | queries x pool | upload MB | gold load (once) | score_triad alone | full submission | ratio |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['label']} | {r['shape']} | {r['upload_mb']:.1f} | {r['gold_load']:.2f} | {r['core']:.2f} | "
                  f"{r['full']:.2f} | {r['full'] / r['core']:.2f}x |")
        pages = [bench_page(root, 1), bench_page(root, 50)]
        print("\nPage load (seconds)")
        print("| models | server: every table, after a change | same, unchanged database | Chromium: navigation to table |")
        print("|---|---|---|---|")
        for p in pages:
            print(f"| {p['models']} | {p['server']:.3f} | {p['warm']:.3f} | {p['browser']:.2f} |")
        print(f"| ratio 50 / 1 | {pages[1]['server'] / pages[0]['server']:.1f}x | "
              f"{pages[1]['warm'] / pages[0]['warm']:.1f}x | {pages[1]['browser'] / pages[0]['browser']:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
