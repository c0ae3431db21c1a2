"""Benchmark: TRIAD metrics on 1,000 queries x 1,000 candidates, core vs evaluate.compute vs ranx vs trec_eval vs a Python loop.

Every contender computes map, top1_hit, mrr (and, where it can, the typed-negative entry rates@10) on the same
input, including its own input conversion; the values are cross-checked. Ratios come from this one run. Then the
whole six-subset scoring: six 1,000 x 1,000 score matrices through the core, and six subsets of ranked id lists
through `metrics.scoring.score_triad` (validation, diagnostics and bootstrap intervals included).

    python benchmarks/bench_metrics.py            # prints a markdown table
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics import scoring  # noqa: E402
from metrics.core import compute, pooled_rate, rank_scores, topk_counts  # noqa: E402
from triad_dataset.contract import names  # noqa: E402

K = 10


def make_input(n_q: int, n_c: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    """Random scores; 1-5 positives and TRIAD-like typed negatives (siblings, violations, random fill)."""
    rng = np.random.default_rng(seed)
    scores = rng.random((n_q, n_c))
    labels = np.zeros((n_q, n_c), dtype=np.int8)
    roles: list[list[str]] = []
    typed = [names.SIBLING] * 9 + [names.P_VIOLATION] * 8 + [names.N_VIOLATION] * 8 + [names.VISUAL] * 5
    for q in range(n_q):
        n_pos = int(rng.integers(1, 6))
        labels[q, :n_pos] = 1
        roles.append([names.POSITIVE] * n_pos + typed + [names.RANDOM] * (n_c - n_pos - len(typed)))
    return scores, labels, roles


def core_arrays(scores: np.ndarray, labels: np.ndarray, role_codes: np.ndarray) -> dict:
    ranked = rank_scores(scores, labels)
    out = {m: float(v.mean()) for m, v in compute(ranked, ["map", "top1_hit", "mrr"]).items()}
    out["entry_rate@10"] = {
        r: pooled_rate(*topk_counts(ranked, role_codes == i, K))
        for i, r in enumerate(names.ROLES)
        if r != names.POSITIVE and (role_codes == i).any()
    }
    return out


def naive_loop(scores: np.ndarray, labels: np.ndarray, roles: list[list[str]]) -> dict:
    """A per-query Python loop: what a hand-written evaluation script would do."""
    aps, top1, rr = [], [], []
    hit_counts: dict[str, int] = {}
    role_counts: dict[str, int] = {}
    for s, y, role in zip(scores.tolist(), labels.tolist(), roles, strict=True):
        order = sorted(range(len(s)), key=lambda i, s=s: -s[i])
        hits, total, first = 0, 0.0, 0.0
        for rank, i in enumerate(order, start=1):
            if y[i]:
                hits += 1
                total += hits / rank
                first = first or 1.0 / rank
            if rank <= K:
                hit_counts[role[i]] = hit_counts.get(role[i], 0) + 1
        for r in role:
            role_counts[r] = role_counts.get(r, 0) + 1
        aps.append(total / sum(y))
        top1.append(float(y[order[0]]))
        rr.append(first)
    rates = {r: hit_counts.get(r, 0) / c for r, c in role_counts.items() if r != names.POSITIVE}
    return {
        "map": sum(aps) / len(aps),
        "top1_hit": sum(top1) / len(top1),
        "mrr": sum(rr) / len(rr),
        "entry_rate@10": rates,
    }


def ranx_eval(scores: np.ndarray, labels: np.ndarray) -> dict:
    import ranx

    qrels = ranx.Qrels({f"q{q}": {f"d{c}": 1 for c in np.flatnonzero(labels[q])} for q in range(len(labels))})
    run = ranx.Run(
        {
            f"q{q}": dict(zip([f"d{c}" for c in range(scores.shape[1])], scores[q].tolist(), strict=True))
            for q in range(len(scores))
        }
    )
    out = ranx.evaluate(qrels, run, ["map", "precision@1", "mrr"], make_comparable=True)
    return {"map": out["map"], "top1_hit": out["precision@1"], "mrr": out["mrr"]}


def trec_eval(scores: np.ndarray, labels: np.ndarray) -> dict:
    """pytrec_eval (the trec_eval C code), including building its qrel/run dicts; ids chosen so its tie order
    (score desc, docno desc) equals the core's (pool position)."""
    import pytrec_eval

    n_c = scores.shape[1]
    docs = [f"d{n_c - 1 - i:05d}" for i in range(n_c)]
    qrel = {f"q{q}": {docs[c]: 1 for c in np.flatnonzero(labels[q])} for q in range(len(labels))}
    run = {f"q{q}": dict(zip(docs, scores[q].tolist(), strict=True)) for q in range(len(scores))}
    out = pytrec_eval.RelevanceEvaluator(qrel, {"map", "P.1", "recip_rank"}).evaluate(run)
    return {
        "map": float(np.mean([v["map"] for v in out.values()])),
        "top1_hit": float(np.mean([v["P_1"] for v in out.values()])),
        "mrr": float(np.mean([v["recip_rank"] for v in out.values()])),
    }


def timed(fn: Callable[[], dict], repeats: int) -> tuple[float, dict]:
    best, result = float("inf"), {}
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def six_subset_rankings(seed: int = 1) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    gold, rankings = {}, {}
    typed = [names.SIBLING] * 9 + [names.P_VIOLATION] * 8 + [names.N_VIOLATION] * 8
    for cfg in names.MAIN_CONFIGS:
        rows, ranked = [], {}
        for q in range(1000):
            pool = [f"{cfg}-{q}-{i}" for i in range(1000)]
            n_pos = int(rng.integers(1, 6))
            row = {
                "query_id": f"q{q}",
                "candidate_ids": pool,
                "positive_ids": pool[:n_pos],
                "candidate_roles": [names.POSITIVE] * n_pos + typed + [names.RANDOM] * (975 - n_pos),
                "candidate_trap": [False] * 1000,
                "depth": 5 + q % 4,
                "profile": "D1",
                "conditions": [{}],
                "session_type": names.SESSION_TYPES[q % 2],
                "num_turns": 2 + q % 2,
            }
            if cfg == names.ABSTRACTION_CONFIGS[0]:
                row["positive_hops"] = [1 + (i % 2) for i in range(n_pos)]
            rows.append(row)
            ranked[f"q{q}"] = [pool[i] for i in rng.permutation(1000)]
        gold[cfg], rankings[cfg] = rows, ranked
    return gold, rankings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="best of N for the sub-second contenders")
    args = parser.parse_args()
    scores, labels, roles = make_input(args.queries, args.candidates)
    code = {r: i for i, r in enumerate(names.ROLES)}
    role_codes = np.asarray([[code[r] for r in row] for row in roles], dtype=np.int16)

    rows: list[tuple[str, float, dict, str]] = []
    t, ref = timed(lambda: core_arrays(scores, labels, role_codes), args.repeats)
    rows.append(("metrics.core (numpy arrays in)", t, ref, "map, top1_hit, mrr, entry rates"))
    preds, refs = scores.tolist(), labels.tolist()
    from metrics.core.api import triad_scores

    t, res = timed(lambda: triad_scores(preds, refs, candidate_roles=roles), args.repeats)
    rows.append(("metrics.core.api.triad_scores (Python lists in)", t, res, "same, incl. list -> array"))
    try:
        import evaluate

        metric = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "triad_map"))
        t, res = timed(lambda: metric.compute(predictions=preds, references=refs, candidate_roles=roles), 1)
        rows.append(("evaluate.load('metrics/triad_map').compute", t, res, "same, incl. Arrow conversion"))
    except ImportError:
        rows.append(("evaluate", float("nan"), {}, "not installed"))
    try:
        import ranx

        ranx.evaluate(ranx.Qrels({"q": {"a": 1}}), ranx.Run({"q": {"a": 0.5, "b": 0.1}}), ["map", "precision@1", "mrr"])
        t, res = timed(lambda: ranx_eval(scores, labels), 1)
        rows.append(
            ("ranx (dict -> Qrels/Run, evaluate)", t, res, "map, precision@1, mrr (no entry rates); JIT warmed")
        )
    except ImportError:
        rows.append(("ranx", float("nan"), {}, "not installed"))
    try:
        import pytrec_eval  # noqa: F401

        t, res = timed(lambda: trec_eval(scores, labels), 1)
        rows.append(("pytrec_eval (trec_eval C code; incl. dict building)", t, res, "map, P_1, recip_rank"))
    except ImportError:
        rows.append(("pytrec_eval", float("nan"), {}, "not installed (pip install pytrec-eval-terrier)"))
    t, res = timed(lambda: naive_loop(scores, labels, roles), 1)
    rows.append(("naive per-query Python loop", t, res, "map, top1_hit, mrr, entry rates"))

    for name, _, res, _ in rows:
        for key in ("map", "top1_hit", "mrr"):
            if key in res and abs(res[key] - ref[key]) > 1e-9:
                raise SystemExit(f"{name}: {key} {res[key]} differs from the core's {ref[key]}")

    core_t = rows[0][1]
    print(
        f"# metrics benchmark: {args.queries} queries x {args.candidates} candidates "
        f"(python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs)\n"
    )
    print("| implementation | time (s) | × core time | notes |")
    print("|---|---:|---:|---|")
    for name, t, _, note in rows:
        shown = "n/a" if np.isnan(t) else f"{t:.3f}"
        ratio = "n/a" if np.isnan(t) else f"{t / core_t:.1f}×"
        print(f"| {name} | {shown} | {ratio} | {note} |")

    mats = [make_input(args.queries, args.candidates, seed=s) for s in range(6)]
    codes = [np.asarray([[code[r] for r in row] for row in m[2]], dtype=np.int16) for m in mats]
    t_six, _ = timed(lambda: [core_arrays(s, y, c) for (s, y, _), c in zip(mats, codes, strict=True)], args.repeats)
    gold, rankings = six_subset_rankings()
    t_glue, scored = timed(lambda: scoring.score_triad(gold, rankings), 1)
    from metrics.paper_scoring import paper_diagnostics

    t_paper, _ = timed(lambda: paper_diagnostics(gold, rankings, {c: scored[c] for c in rankings}), 1)
    print("\n| six-subset TRIAD scoring (6 × 10⁶ scores) | time (s) |")
    print("|---|---:|")
    print(f"| metrics.core on six score matrices (map, top1_hit, mrr, entry rates) | {t_six:.3f} |")
    print(
        f"| metrics.scoring.score_triad on six subsets of ranked id lists (all metrics, diagnostics, "
        f"intervals, dialogue cost, paper diagnostics) | {t_glue:.3f} |"
    )
    print(f"| of which the paper's C.3 / C.4 / Fig. 9 / D.3 diagnostics (metrics.paper_scoring) | {t_paper:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
