"""Leaderboard Space benchmark: server rescoring of a six-subset TRIAD submission, and page load with 50 models.

Rescoring (the whole `submit_files` path: read uploads, parquet parsing and checks, permutation checks against the
gold pools, `metrics.scoring` with 3,000-resample bootstrap intervals and the paper diagnostics, results.json
comparison, SQLite insert) of three different submissions, each timed and its peak resident memory over the idle
server sampled every 2 ms, in a fresh process with the gold loaded once beforehand (timed apart: "gold load"). The
named alternatives, measured in the same run: `metrics.scoring.score_triad` alone on the same rankings (the
irreducible cost of the numbers; the ratio is the Space's overhead), and with `--baseline DIR` (a checkout of an
earlier commit, e.g. `git archive 54cf1a6 | tar -x -C DIR`) the same submissions through that code. Sizes: mini
(120 queries x 1,000 candidates per subset, the mini edition's shape) and paper (1,000 x 1,000 per subset),
synthetic gold.

Page load: a leaderboard with 50 submissions, timed (a) server side, the `refresh` handler that builds every table,
and (b) in Debian's Chromium, from navigation until the main table shows its 50 rows; the alternative is the same
page with 1 submission.

    python3 benchmarks/bench_space.py [--quick] [--no-page] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("BENCH_SPACE_CODE", str(ROOT)))  # --baseline: the earlier code
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _memory import Peak  # noqa: E402  (benchmarks/_memory.py, next to this script)

from metrics import scoring  # noqa: E402
from spaces_app.db import Database  # noqa: E402
from spaces_app.gold import GoldStore  # noqa: E402
from spaces_app.submit import RateLimit, submit_files  # noqa: E402
from tests.doubles import space_runs as T  # noqa: E402
from triad_dataset.contract import names as n  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


SUBMISSIONS = 3


def submissions_child(gold_dir: str, runs: list[str]) -> dict:
    """In this (fresh) process: load the gold once, then submit each run folder; seconds and peak RSS over idle."""
    golds = GoldStore({"triad": gold_dir})
    t0 = time.perf_counter()
    golds.get("triad")
    load = time.perf_counter() - t0
    db = Database(Path(runs[0]).parent / f"db-{os.getpid()}.sqlite")
    seconds, cpu, peaks = [], [], []
    for i, run in enumerate(runs):
        files = sorted((Path(run) / "rankings").glob("*.parquet")) + [Path(run) / "results.json"]
        with Peak() as peak:
            t0, c0 = time.perf_counter(), time.process_time()
            out = submit_files(db, golds, files, model_name=f"m{i}", submitter="bench", rate_limit=RateLimit(99, 9))
            seconds.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        peaks.append(peak.over_idle_mib)
        if not out.accepted:
            raise SystemExit(out.message)
    return {"gold_load": load, "seconds": seconds, "cpu": cpu, "peak_mib": peaks}


def _child(code: Path, gold_dir: Path, runs: list[Path]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "BENCH_SPACE_CODE": str(code), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--submissions-child", str(gold_dir), *map(str, runs)],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(code),
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_rescoring(root: Path, label: str, n_queries: int, pool: int, baseline: Path | None) -> dict:
    tables = T.triad_tables(n_queries, pool, seed=1, configs=n.MAIN_CONFIGS, corpus_size=3 * pool)
    gold_dir = T.write_triad_gold(root / f"gold-{label}", tables, pool)
    runs = []
    for i in range(SUBMISSIONS):
        rankings = T.random_rankings(tables, seed=2 + i)
        runs.append(T.write_run(root / f"run-{label}-{i}", tables, rankings))
    t0 = time.perf_counter()
    scoring.score_triad({c: tables[c] for c in rankings}, rankings)
    core = time.perf_counter() - t0
    new = _child(ROOT, gold_dir, runs)
    old = _child(baseline, gold_dir, runs) if baseline else None
    size = sum(f.stat().st_size for f in (runs[0] / "rankings").glob("*.parquet"))
    return {
        "label": label,
        "shape": f"6 x {n_queries:,} x {pool:,}",
        "upload_mb": size / 2**20,
        "core": core,
        "new": new,
        "old": old,
    }


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
        out = submit_files(
            db,
            golds,
            files,
            model_name=f"model-{i:02d}",
            family=("a", "b", "c")[i % 3],
            params=str(10 ** (6 + i % 4)),
            submitter="bench",
            rate_limit=RateLimit(10**6, 1),
        )
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


def _span(values: list[float], fmt: str) -> str:
    return f"{min(values):{fmt}}–{max(values):{fmt}}" if len(values) > 1 else f"{values[0]:{fmt}}"


def report_rescoring(rows: list[dict]) -> None:
    print(f"\nRescoring a six-subset TRIAD submission ({SUBMISSIONS} different submissions; seconds, MiB over idle)")
    print(
        "| size | queries x pool | upload MB | gold load (once) | score_triad alone | full submission wall (CPU) "
        "| peak memory | full / score_triad | baseline: full submission wall (CPU), peak | baseline / this (wall, CPU) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        new, old = r["new"], r["old"]
        cells = [
            r["label"],
            r["shape"],
            f"{r['upload_mb']:.1f}",
            f"{new['gold_load']:.2f}",
            f"{r['core']:.2f}",
            f"{_span(new['seconds'], '.2f')} ({_span(new['cpu'], '.2f')})",
            _span(new["peak_mib"], ".0f"),
            f"{statistics.median(new['seconds']) / r['core']:.2f}x",
        ]
        if old:
            cells += [
                f"{_span(old['seconds'], '.2f')} ({_span(old['cpu'], '.2f')}) s, "
                f"{_span(old['peak_mib'], '.0f')} MiB (gold load {old['gold_load']:.2f})",
                f"{statistics.median(old['seconds']) / statistics.median(new['seconds']):.2f}x, "
                f"{statistics.median(old['cpu']) / statistics.median(new['cpu']):.2f}x",
            ]
        else:
            cells += ["–", "–"]
        print("| " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="mini size only")
    parser.add_argument("--no-page", action="store_true", help="skip the page-load part")
    parser.add_argument("--baseline", type=Path, help="a checkout of earlier code: the same submissions through it")
    parser.add_argument("--submissions-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.submissions_child:
        print(json.dumps(submissions_child(args.submissions_child[0], args.submissions_child[1:])))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sizes = [("mini", 120, 1000)] + ([] if args.quick else [("paper", 1000, 1000)])
        report_rescoring([bench_rescoring(root, *s, args.baseline) for s in sizes])
        if args.no_page:
            return 0
        pages = [bench_page(root, 1), bench_page(root, 50)]
        print("\nPage load (seconds)")
        print(
            "| models | server: every table, after a change | same, unchanged database | Chromium: navigation to table |"
        )
        print("|---|---|---|---|")
        for p in pages:
            print(f"| {p['models']} | {p['server']:.3f} | {p['warm']:.3f} | {p['browser']:.2f} |")
        print(
            f"| ratio 50 / 1 | {pages[1]['server'] / pages[0]['server']:.1f}x | "
            f"{pages[1]['warm'] / pages[0]['warm']:.1f}x | {pages[1]['browser'] / pages[0]['browser']:.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
