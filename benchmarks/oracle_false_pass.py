"""How often does a doctored ranking pass the Space's reproduction check while claiming a given model?

    python benchmarks/oracle_false_pass.py RUN_DIR --data GOLD_DIR [--seeds 300]

RUN_DIR is an honest `triad run` of the model on a TRIAD folder (its rankings list every query's whole pool with
the model's scores); GOLD_DIR the folder it ran on. Each attack of `benchmarks/attacks.py` re-orders the run's
rankings; for each of ``--seeds`` server draws the project's own sampler (`spaces_app.verify.draw_sample`) picks
the queries and ranks, and `spaces_app.verify.judge` decides against the model's scores, which are the honest run's
own (a re-encoding on the server agrees with them to the last bits). Printed: passes per attack with a 95 %
upper bound, and the same for honest runs (unchanged, and perturbed as a bf16 run would be), which must pass.
docs/space.md quotes the figures.
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
from spaces_app import verify  # noqa: E402
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--data", required=True)
    parser.add_argument("--seeds", type=int, default=300)
    args = parser.parse_args(argv)
    configs = triad_names.MAIN_CONFIGS
    rows, gold_rows = read_run(Path(args.run), configs), read_gold(Path(args.data), configs)
    positives = {c: {g["query_id"]: set(g["positive_ids"]) for g in gs} for c, gs in gold_rows.items()}
    pools = model_pools(rows, gold_rows)
    seeds = list(range(args.seeds))
    print(
        f"{Path(args.run).name} on {Path(args.data).name}: {verify.QUERIES} queries per subset, tolerance "
        f"{verify.TOLERANCE:g}, alpha {verify.ALPHA:g}, {len(seeds)} server draws each\n"
    )
    print(
        "| submission | verified | 95 % upper bound | mean mAP gain on the sampled queries | fewest queries "
        "outside the tie range | largest favourable-end p |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    cases = {
        "honest run, unchanged": lambda ids, s, p, rng: list(ids),
        "honest run, bf16-size noise (within the tolerance)": attacks.perturbed(),
        **attacks.ATTACKS,
    }
    for name, attack in tqdm(cases.items(), desc="attacks", leave=False):
        out = passes(attacks.apply(attack, rows, positives, seed=1), gold_rows, pools, seeds)
        k = sum(status == verify.VERIFIED for status, _ in out)
        gain = float(np.mean([r["ap"]["submitted"] - r["ap"]["own"] for _, r in out]))
        fewest = min(r["outside_tie_range"] for _, r in out)
        largest = max(r["favourable"]["p"] for _, r in out)
        print(f"| {name} | {k} / {len(out)} | {upper95(k, len(out)):.3g} | {gain:+.3f} | {fewest} | {largest:.2g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
