"""How often would an oracle pass the Space's reproduction check while claiming a given model?

    python benchmarks/oracle_false_pass.py RUN_DIR --data GOLD_DIR

RUN_DIR is an honest `triad run` of the model (its rankings carry the model's scores); GOLD_DIR the dataset folder
it ran on. The strongest oracle claiming that model takes the model's own ranking and moves every query's
positives to the top (mAP 1.0 / R@1 1.0): it disagrees with the model exactly on the negatives the model scores
above one of the positives by more than the tolerance (`b_q` per query; for ARK the items above the positive). It
keeps those out of the always-checked top 10 (TRIAD) or leaves them out of its listed top 100 (ARK), so it passes
a sampled query when none of them is drawn: `spaces_app.verify.query_pass_probability`; a subset passes when all
its sampled queries do (`oracle_pass_probability`, exact over the draw of queries); the check passes when every
subset does (independent draws). docs/space.md states the derivation and the figures this prints.

For ARK queries whose positive is below the listed top 100 the model's full scores are unknown: b_q is then
counted as the listed items scoring above the 100th by more than the tolerance, a lower bound (so the printed
pass probability is an upper bound for those subtypes).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ark_dataset import names as ark_names  # noqa: E402
from spaces_app import verify  # noqa: E402
from triad_dataset.contract import names as triad_names  # noqa: E402
from triad_dataset.folder import io  # noqa: E402


def beaten_counts(run: Path, gold: Path, config: str, benchmark: str) -> tuple[list[int], list[int]]:
    """(b_q, ids ranked per query) for one config."""
    table = pq.read_table(run / "rankings" / f"{config}.parquet").to_pylist()
    rows = {r["query_id"]: r for r in io.read_rows(gold, config, columns=[
        "query_id", "positive_ids" if benchmark == "triad" else "positive_id"])}
    out, lengths = [], []
    for r in table:
        scores = np.asarray(r["scores"], dtype=np.float64)
        if benchmark == "triad":
            positive = np.isin(r["candidate_ids"], rows[r["query_id"]]["positive_ids"])
            floor = scores[positive].min()
            out.append(int((scores[~positive] > floor + verify.TOLERANCE).sum()))
        else:
            pos = rows[r["query_id"]]["positive_id"]
            if pos in r["candidate_ids"]:
                floor = scores[r["candidate_ids"].index(pos)]
                out.append(int((scores > floor + verify.TOLERANCE).sum()))
            else:  # below the listed top: at least the listed items clearly above the last listed one
                out.append(int((scores > scores[-1] + verify.TOLERANCE).sum()))
        lengths.append(len(r["candidate_ids"]))
    return out, lengths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--data", required=True)
    args = parser.parse_args(argv)
    run, gold = Path(args.run), Path(args.data)
    results = json.loads((run / "results.json").read_text())
    benchmark = results["benchmark"]
    configs = triad_names.MAIN_CONFIGS if benchmark == "triad" else [
        s for s in ark_names.SUBTYPES if (run / "rankings" / f"{s}.parquet").exists()]
    print(f"model {results['model']['name']} on {gold.name} ({benchmark}); tolerance {verify.TOLERANCE:g}, "
          f"{verify.QUERIES} queries per subset, top {verify.TOP} + {verify.RANDOM_RANKS} drawn ranks\n")
    print("| subset | queries | pool / listed | queries with b_q = 0 | median b_q | P(subset passes) |")
    print("|---|---:|---:|---:|---:|---:|")
    total = 1.0
    for config in configs:
        beaten, lengths = beaten_counts(run, gold, config, benchmark)
        if benchmark == "triad":
            per_query = [verify.query_pass_probability(b, n) for b, n in zip(beaten, lengths, strict=True)]
        else:  # ARK: the drawn items are among the gallery items the ranking leaves out
            gallery = len(io.read_table(gold, config + ark_names.GALLERY_SUFFIX, columns=["item_id"]))
            per_query = [verify.query_pass_probability(b, gallery - n + verify.TOP, top=verify.TOP)
                         for b, n in zip(beaten, lengths, strict=True)]
        p = verify.oracle_pass_probability(per_query)
        total *= p
        print(f"| {triad_names.DISPLAY_NAMES.get(config, config)} | {len(beaten)} | {max(lengths)} | "
              f"{sum(b == 0 for b in beaten)} | {float(np.median(beaten)):g} | {p:.3g} |")
    exponent = math.log10(total) if total > 0 else float("-inf")
    print(f"\nP(an oracle claiming this model passes every subset) = {total:.3g} (10^{exponent:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
