"""Making a reference run: the named model over every query of the gold through `triad run`'s own phases.

    python -m spaces_app.reference_run --spec minilm --revision REV --variant full --data GOLD --out DIR \\
        --cache DIR [--recipe NAME] [--device cpu]

`make` runs `model_adapters.runner.Run` phase by phase, as `triad run` does — resolve, plan, encode (through the
embedding cache, so a run killed half-way resumes where it stopped), rank, score, write — with one addition: while
each config's rankings are written, the tie range of every query is computed from the model's own scores (TRIAD:
the whole pool's scores the runner ranked by; ARK: the whole gallery scored from the same vectors) and written
beside the run as `ties.json`. `ingest` then reads the run folder the way the Space reads a submission (parsed,
checked against the gold, scored by `metrics.scoring`) and keeps what comparisons need (`reference.Reference`).

The Space's queue makes its runs in a child process (`run_child`), so shutting down never waits on a model.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from spaces_app import reproduction
from spaces_app.reference import Reference, RefSpec
from triad_dataset.contract.errors import TriadError

TIES_FILE: Final = "ties.json"
TOLERANCE: Final = 2.0**-7  # as `spaces_app.verify.TOLERANCE`: two bf16 steps of a cosine near 1
ROOT: Final = Path(__file__).resolve().parents[1]


class Cancelled(Exception):
    """A reference run abandoned because its worker is shutting down (the cache keeps what was encoded)."""


def _triad_ties(cp: Any, final: Any) -> tuple[dict[str, list[float]], int]:
    """query id -> [low, high] AP over the query's whole pool from the runner's own scores; and how many queries
    the model scores all alike (within the tolerance)."""
    labels = cp.triad_gold().labels
    order, scores = final.order, final.live_scores()
    ties, alike = {}, 0
    for q, row in enumerate(cp.rows):
        n = int((cp.pool_items[q] >= 0).sum())
        pool = np.empty(order.shape[1], dtype=np.float64)
        pool[order[q]] = scores[q]
        s = pool[:n]
        low, high = reproduction.tie_range(s, labels[q, :n].astype(bool), TOLERANCE)
        ties[row["query_id"]] = [low, high]
        alike += bool(s.max() - s.min() <= TOLERANCE)
    return ties, alike


def _ark_ties(plan: Any, cp: Any, vectors: Mapping[str, np.ndarray]) -> tuple[dict[str, list[float]], int]:
    """The same for an ARK subtype: every query against the whole gallery, scored from the run's vectors."""
    from model_adapters.ranks.ranking import normalize

    keys = plan.items.key_list
    gallery = normalize(np.stack([vectors[keys[int(i)]] for i in cp.pool_items]).astype(np.float32))
    queries = normalize(np.stack([vectors[keys[int(i)]] for i in cp.query_items]).astype(np.float32))
    ties, alike = {}, 0
    for q, row in enumerate(cp.rows):
        s = (gallery @ queries[q]).astype(np.float64)
        positive = np.zeros(s.size, dtype=bool)
        positive[int(cp.positives[q])] = True
        low, high = reproduction.tie_range(s, positive, TOLERANCE)
        ties[row["query_id"]] = [low, high]
        alike += bool(s.max() - s.min() <= TOLERANCE)
    return ties, alike


def make(spec: RefSpec, folder: str | Path, out: str | Path, *, cache_dir: str | Path, device: str = "cpu") -> Path:
    """Run ``spec``'s model over every config of ``folder`` into ``out`` (rankings, results.json, ties.json)."""
    from model_adapters.ranks import output
    from model_adapters.ranks.rank_plan import RankingsWriter
    from model_adapters.run.config import RunConfig
    from model_adapters.run.runner import Run
    from model_adapters.vectors import distributed

    hub = "/" in spec.spec
    cfg = RunConfig(
        model=spec.spec,
        data=str(folder),
        out=str(out),
        variant=spec.variant,
        revision=spec.revision if hub else None,
        recipe=(spec.recipe or None) if hub else None,
        device=device,
        cache_dir=str(cache_dir),
        validate=False,
        quiet=True,
    )
    ties: dict[str, dict[str, list[float]]] = {}
    alike: dict[str, int] = {}

    class Tap(RankingsWriter):
        """Writes each config's rankings as `triad run` does, after keeping every query's tie range."""

        def __call__(self, cp: Any, final: Any, first: Any) -> None:
            found = _ark_ties(job.plan, cp, vectors) if self.ark else _triad_ties(cp, final)
            ties[cp.config], alike[cp.config] = found
            super().__call__(cp, final, first)

    tick, cpu = time.perf_counter(), time.process_time()
    ctx = distributed.init(cfg.device)
    try:
        job = Run.start(cfg, ctx)
        job.prepare()
        job.plan_inputs()
        vectors, report = job.encode()
        items = int(report.get("encoded", 0) or 0) if isinstance(report, Mapping) else 0
        staged = output.StagedOutput(cfg.out)
        tap = Tap(staged, job.benchmark == "ark", False)
        try:
            final, first = job.rank(vectors, tap)
            job.write(staged, job.score(final), first, report, tap)
        except BaseException:
            staged.discard()
            raise
    finally:
        ctx.close()
    meta = {
        "items": len(job.plan.items),
        "items_encoded": items,
        "seconds": round(time.perf_counter() - tick, 2),
        "cpu_seconds": round(time.process_time() - cpu, 2),
        "device": device,
        "alike": alike,
    }
    (Path(out) / TIES_FILE).write_text(json.dumps({"ties": ties, "meta": meta}))
    return Path(out)


def ingest(golds: Any, spec: RefSpec, run_dir: str | Path) -> tuple[Reference, bytes]:
    """The `Reference` of a made run, read the way the Space reads a submission, and its explorer table.

    Raises TriadError when the run does not fit the served gold (another folder, an incomplete run)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spaces_app import ranking_files, submit, uploads

    run_dir = Path(run_dir)
    extra = json.loads((run_dir / TIES_FILE).read_text())
    limits = uploads.Limits()
    files = uploads.read_uploads(submit.run_files(run_dir), limits)
    parsed = ranking_files.parse_uploads(files, limits, golds.known_configs(), golds.bounds())
    done = submit.evaluate(golds, parsed)
    if done.gold.content != spec.gold_content:
        raise TriadError(
            f"{run_dir}: made on gold {done.gold.content[:12]}, the reference is for {spec.gold_content[:12]}"
        )
    queries = {
        c: {q: (v, *extra["ties"][c][q]) for q, v in done.per_query[c].items()}
        for c in done.per_query
        if c in extra["ties"]
    }
    scores = {
        r.config: {"metric": r.metric, "value": r.value, "lo": r.lo, "hi": r.hi, "n_queries": r.n_queries}
        for r in done.rows
    }
    model = (parsed.results or {}).get("model") or {}
    meta = {**extra["meta"], "model": {k: model.get(k) for k in ("name", "source", "revision", "dtype")}}
    table = done.explorer_table()
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return Reference(spec, scores, queries, meta, done.summary), sink.getvalue().to_pybytes()


def child_command(spec: RefSpec, folder: str | Path, out: str | Path, cache_dir: str | Path, device: str) -> list[str]:
    """The command line of `run_child`'s process."""
    args = [sys.executable, "-m", "spaces_app.reference_run", "--spec", spec.spec, "--variant", spec.variant]
    args += ["--data", str(folder), "--out", str(out), "--cache", str(cache_dir), "--device", device]
    if "/" in spec.spec:
        args += ["--revision", spec.revision] + (["--recipe", spec.recipe] if spec.recipe else [])
    return args


def run_child(
    spec: RefSpec,
    folder: str | Path,
    out: str | Path,
    *,
    cache_dir: str | Path,
    device: str = "cpu",
    cancel: Callable[[], bool] | None = None,
    poll_s: float = 0.5,
) -> Path:
    """`make` in a child process; `Cancelled` (the child stopped) once ``cancel()`` turns true."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen(
        child_command(spec, folder, out, cache_dir, device),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        while proc.poll() is None:
            if cancel is not None and cancel():
                raise Cancelled("the worker is shutting down")
            time.sleep(poll_s)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    err = proc.stderr.read() if proc.stderr is not None else ""
    if proc.returncode != 0:
        last = [line for line in err.strip().splitlines() if line.strip()][-1:] or [f"exit status {proc.returncode}"]
        raise TriadError(f"reference run of {spec.spec} failed: {last[0][:300]}")
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="make one reference run (used by the Space's queue)")
    parser.add_argument("--spec", required=True)
    parser.add_argument("--revision", default="")
    parser.add_argument("--recipe", default="")
    parser.add_argument("--variant", default="full")
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    spec = RefSpec("", "", args.spec, args.revision, args.variant, args.recipe)
    try:
        make(spec, args.data, args.out, cache_dir=args.cache, device=args.device)
    except TriadError as exc:
        print(f"reference run: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
