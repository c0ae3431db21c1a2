"""How often does a doctored ranking pass the Space's checks while claiming a given model?

    python benchmarks/oracle_false_pass.py RUN_DIR --data GOLD_DIR [--seeds 300] [--tries 10]

RUN_DIR is an honest `triad run` of the model on a TRIAD folder (its rankings list every query's whole pool with
the model's scores); GOLD_DIR the folder it ran on. Each attack of `benchmarks/attacks.py` re-orders the run's
rankings, and two checks judge it against the model's scores, which are the honest run's own (the leaderboard's
run of the model on the same machine gives the same floats):

* the full check (`spaces_app.reference.full_check`): every query against the model's own tie range, and the
  favourable-end test per subset — the only check that verifies a row, deterministic;
* the sampled first look (`spaces_app.verify.draw_sample` + `judge`), for each of ``--seeds`` server draws: how
  often it alone would have let the attack through, per try and within ``--tries`` tries (one hour of the default
  rate limit), as before the full check existed.

Also printed: the sampled look's pass rate for k doctored queries of N per subset by the hypergeometric formula
C(N-k, 8) / C(N, 8) at paper size. docs/space.md quotes the figures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import attacks  # noqa: E402
from spaces_app import reference, reproduction, verify  # noqa: E402
from spaces_app.legend import header  # noqa: E402
from spaces_app.ranking_files import ParsedRanking, ParsedSubmission  # noqa: E402
from triad_dataset.contract import names as triad_names  # noqa: E402
from triad_dataset.folder import io  # noqa: E402


def read_run(run: Path, configs: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The run's rows per config: query id, ids best-first, scores."""
    return {c: pq.read_table(run / "rankings" / f"{c}.parquet").to_pylist() for c in configs}


def read_gold(gold: Path, configs: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    return {c: io.read_rows(gold, c, columns=["query_id", "candidate_ids", "positive_ids"]) for c in configs}


def model_pools(
    rows: Mapping[str, Sequence[Mapping[str, Any]]], gold_rows: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, dict[str, verify.Pool]]:
    """The model's scores over each query's whole pool, in pool order, from the honest run."""
    out: dict[str, dict[str, verify.Pool]] = {}
    for config, ranked in rows.items():
        score = {r["query_id"]: dict(zip(r["candidate_ids"], r["scores"], strict=True)) for r in ranked}
        out[config] = {}
        for g in gold_rows[config]:
            ids = list(g["candidate_ids"])
            out[config][g["query_id"]] = verify.Pool(
                ids,
                np.array([score[g["query_id"]][c] for c in ids], dtype=np.float32),
                np.isin(np.array(ids, dtype=object), list(g["positive_ids"])),
            )
    return out


class _Gold:
    """What `verify.draw_sample` reads of a gold: its query rows (positives)."""

    def __init__(self, rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        self.rows = rows


def parsed(rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> ParsedSubmission:
    """A submission of these rankings as the server parses it (only what the sampler reads)."""
    rankings = {
        c: ParsedRanking([r["query_id"] for r in rs], [list(r["candidate_ids"]) for r in rs]) for c, rs in rows.items()
    }
    return ParsedSubmission(rankings=rankings, results={})


def passes(
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
    gold_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    pools: Mapping[str, Mapping[str, verify.Pool]],
    seeds: Sequence[int],
) -> list[tuple[str, dict]]:
    """(status, result) of the check for each server seed."""
    sub, gold = parsed(rows), _Gold(gold_rows)
    return [verify.judge(verify.draw_sample("triad", sub, gold, seed), pools) for seed in seeds]


def upper95(k: int, n: int) -> float:
    """One-sided 95 % Clopper-Pearson upper bound of a pass rate k / n."""
    from scipy.stats import beta

    return 1.0 if k >= n else float(beta.ppf(0.95, k + 1, n - k))


def model_reference(pools: Mapping[str, Mapping[str, verify.Pool]]) -> reference.Reference:
    """The leaderboard's reference run as the honest run's scores give it: per query the model's own AP and its
    tie range over the whole pool."""
    queries: dict[str, dict[str, tuple[float, float, float]]] = {}
    for config, per in pools.items():
        queries[config] = {}
        for qid, pool in per.items():
            n_pos = int(pool.positive.sum())
            own = reproduction.average_precision(reproduction.own_ranks(pool.scores, pool.positive), n_pos)
            queries[config][qid] = (own, *reproduction.tie_range(pool.scores, pool.positive, verify.TOLERANCE))
    spec = reference.RefSpec("triad", "gold", "model", "revision")
    return reference.Reference(spec, {}, queries, {"alike": {}})


def submitted_ap(
    rows: Mapping[str, Sequence[Mapping[str, Any]]], positives: Mapping[str, Mapping[str, set[str]]]
) -> dict[str, dict[str, float]]:
    """Per config and query, the AP of a submitted order (as the server scores it: list order)."""
    out: dict[str, dict[str, float]] = {}
    for config, ranked in rows.items():
        out[config] = {}
        for r in ranked:
            pos = positives[config][r["query_id"]]
            ranks = [i + 1 for i, c in enumerate(r["candidate_ids"]) if c in pos]
            out[config][r["query_id"]] = reproduction.average_precision(ranks, len(pos))
    return out


def sparse_targets(
    ref: reference.Reference, positives: Mapping[str, Mapping[str, set[str]]], config: str, k: int, copies: int
) -> list[dict[str, set[str]]]:
    """``copies`` disjoint sets of ``k`` queries of ``config`` an oracle would gain on beyond the model's tie
    range (where the model already ranks every positive first there is nothing to gain)."""
    gainful = sorted(q for q, (_, _, high) in ref.queries[config].items() if high < 1.0 - 1e-9 and positives[config][q])
    if len(gainful) < k * copies:
        raise ValueError(f"{config}: only {len(gainful)} queries to doctor, {k * copies} wanted")
    return [{config: set(gainful[i * k : (i + 1) * k])} for i in range(copies)]


def cases(
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
    positives: Mapping[str, Mapping[str, set[str]]],
    ref: reference.Reference,
    boosted: str = triad_names.STATE_CONFIGS[1],
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every submission the table judges: honest ones, last round's attacks, a compensated blend and three sparse
    oracles (10 queries of ``boosted`` each)."""
    out = {
        "honest run, unchanged": attacks.apply(attacks.honest, rows, positives, seed=1),
        "honest run, bf16-size noise (within the tolerance)": attacks.apply(
            attacks.perturbed(), rows, positives, seed=1
        ),
    }
    out.update({name: attacks.apply(a, rows, positives, seed=1) for name, a in attacks.ATTACKS.items()})
    label = header(boosted)
    out[f"compensated: {label} up within the tolerance, the other subsets down"] = attacks.apply(
        attacks.compensated(boosted, list(rows)), rows, positives, seed=1
    )
    for i, only in enumerate(sparse_targets(ref, positives, boosted, 10, 3)):
        out[f"sparse oracle {i + 1}: 10 {label} queries"] = attacks.apply(attacks.oracle, rows, positives, only=only)
    return out


def judged(
    doctored: Mapping[str, Sequence[Mapping[str, Any]]],
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
    gold_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    pools: Mapping[str, Mapping[str, verify.Pool]],
    ref: reference.Reference,
    seeds: Sequence[int],
) -> dict[str, Any]:
    """One submission's row of the table: its gain, the full check's verdict, the sampled look's passes."""
    positives = {c: {g["query_id"]: set(g["positive_ids"]) for g in gs} for c, gs in gold_rows.items()}
    theirs, own = submitted_ap(doctored, positives), submitted_ap(rows, positives)
    gain = float(np.mean([theirs[c][q] - own[c][q] for c in theirs for q in theirs[c]]))
    status, result = reference.full_check(ref, theirs)
    sampled = passes(doctored, gold_rows, pools, seeds)
    return {
        "gain": gain,
        "full": status,
        "why": "; ".join(disclosure_text(result)) if status == verify.FAILED else "",
        "sampled": sum(s == verify.VERIFIED for s, _ in sampled),
        "draws": len(sampled),
    }


def disclosure_text(result: Mapping[str, Any]) -> list[str]:
    from spaces_app import disclosure

    return disclosure.public_failures(result)


def within(p: float, tries: int) -> float:
    """The chance that at least one of ``tries`` independent tries passes, each with chance ``p``."""
    return 1.0 - (1.0 - p) ** tries


def sample_misses(n: int, k: int, drawn: int = verify.QUERIES) -> float:
    """The chance that ``drawn`` queries sampled from ``n`` miss all ``k`` doctored ones: C(n-k, drawn)/C(n, drawn)."""
    from math import comb

    return comb(n - k, drawn) / comb(n, drawn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--data", required=True)
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--tries", type=int, default=10, help="tries within the rate limit's window (default 10)")
    args = parser.parse_args(argv)
    configs = triad_names.MAIN_CONFIGS
    rows, gold_rows = read_run(Path(args.run), configs), read_gold(Path(args.data), configs)
    positives = {c: {g["query_id"]: set(g["positive_ids"]) for g in gs} for c, gs in gold_rows.items()}
    pools = model_pools(rows, gold_rows)
    ref = model_reference(pools)
    seeds = list(range(args.seeds))
    n_queries = sum(len(q) for q in ref.queries.values())
    print(
        f"{Path(args.run).name} on {Path(args.data).name}: full check of {n_queries} queries, the favourable-end test "
        f"per subset at alpha {reference.ALPHA:g} ({len(configs)} tests); sampled look: {verify.QUERIES} queries per "
        f"subset, {len(seeds)} server draws, {args.tries} tries; tolerance {verify.TOLERANCE:g}\n"
    )
    print(
        "| submission | mAP gain, all queries | full check (verifies) | sampled look alone: passes per try | "
        f"95 % upper bound | within {args.tries} tries | why the full check fails it |"
    )
    print("|---|---:|---|---:|---:|---:|---|")
    for name, doctored in tqdm(cases(rows, positives, ref).items(), desc="cases", leave=False):
        row = judged(doctored, rows, gold_rows, pools, ref, seeds)
        rate = row["sampled"] / row["draws"]
        print(
            f"| {name} | {row['gain']:+.3f} | {row['full']} | {row['sampled']} / {row['draws']} | "
            f"{upper95(row['sampled'], row['draws']):.3g} | {within(rate, args.tries):.3g} | {row['why']} |"
        )
    print("\nThe sampled look alone at paper size (1,000 queries per subset, k doctored in one subset):\n")
    print(f"| doctored queries k | passes per try | within {args.tries} tries |")
    print("|---:|---:|---:|")
    for k in (10, 50, 200):
        p = sample_misses(1000, k)
        print(f"| {k} | {p:.3f} | {within(p, args.tries):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
