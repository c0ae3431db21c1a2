"""Two runs compared subset by subset on their shared queries: paired ΔmAP, its interval, the test and a verdict.

The paper's test decides (TRIAD App. C/D: two-sided Wilcoxon signed-rank on the per-query AP differences, Holm
correction over the compared subsets, α = 0.05); its 95 % paired bootstrap interval of ΔmAP (3,000 resamples) is
shown beside it. The two look at different things — Wilcoxon at the ranks of the per-query differences, the
interval at their mean — and can disagree. A difference is called significant only when both agree: Holm-adjusted
p < 0.05 *and* the interval, as shown (3 decimals), excludes 0 *and* both point the same way (the rank-biserial
effect's sign is the Wilcoxon direction). Otherwise the verdict says which of the two objects, so "yes" never
stands beside an interval that contains 0. The leaderboard's Compare tab and `triad results --compare` both print
what `compare` returns.

>>> a = {"s": {f"q{i}": 0.5 + 0.01 * i for i in range(30)}}
>>> b = {"s": {f"q{i}": 0.1 + 0.005 * i for i in range(30)}}
>>> row = compare(a, b, ["s"])[0]
>>> row.config, row.n_queries, round(row.delta, 4), row.verdict
('s', 30, 0.4725, 'yes: A better')
>>> shown = row.shown("S")
>>> shown["Subset"], shown["mAP A"], shown["Holm p"] == f"{row.p_holm:.3g}", shown["Significant?"]
('S', 0.645, True, 'yes: A better')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from metrics.core import stats

ALPHA: Final = 0.05  # paper D.3: α = 0.05 after Holm correction
SHOWN_DECIMALS: Final = 3  # the interval is judged as shown: paper Table 2 reports three decimals
VERDICT_COLUMN: Final = "Significant?"


@dataclass(frozen=True)
class PairedRow:
    """One subset of a paired comparison of run A with run B (unrounded; `verdict` reads the rounded interval)."""

    config: str
    n_queries: int
    map_a: float
    map_b: float
    delta: float
    ci_low: float
    ci_high: float
    p: float
    p_holm: float
    rank_biserial: float
    verdict: str

    def shown(self, label: str) -> dict[str, str | int | float]:
        """The row as the tables show it, under `label`: the Compare tab's columns, numbers to 3 decimals."""
        return {
            "Subset": label,
            "Queries": self.n_queries,
            "mAP A": shown(self.map_a),
            "mAP B": shown(self.map_b),
            "ΔmAP (A−B)": shown(self.delta),
            "95% CI low": shown(self.ci_low),
            "95% CI high": shown(self.ci_high),
            "Wilcoxon p": f"{self.p:.3g}",
            "rank-biserial": shown(self.rank_biserial),
            "Holm p": f"{self.p_holm:.3g}",
            VERDICT_COLUMN: self.verdict,
        }


def shown(x: float) -> float:
    """``x`` as the tables show it: rounded to `SHOWN_DECIMALS` places.

    >>> shown(0.12345)
    0.123
    """
    return round(float(x), SHOWN_DECIMALS)


def verdict(p_holm: float, lo: float | None, hi: float | None, rank_biserial: float | None) -> str:
    """ "yes: A better" / "yes: B better" / "no" / "no: ..." (the test and the interval disagree).

    >>> verdict(0.001, 0.02, 0.09, 0.4), verdict(0.001, -0.09, -0.02, -0.4), verdict(0.3, -0.01, 0.05, 0.1)
    ('yes: A better', 'yes: B better', 'no')
    >>> verdict(0.008, -0.097, 0.002, -0.2)
    'no: Wilcoxon p_Holm < 0.05, but the 95% interval includes 0'
    >>> verdict(0.2, 0.01, 0.05, 0.1)
    'no: the 95% interval excludes 0, but Wilcoxon p_Holm ≥ 0.05'
    >>> verdict(0.01, 0.01, 0.05, -0.3)
    'no: Wilcoxon and the interval point opposite ways'
    """
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) or not math.isfinite(p_holm):
        return "no: not enough data"
    excludes = lo > 0 or hi < 0
    if p_holm >= ALPHA:
        return "no: the 95% interval excludes 0, but Wilcoxon p_Holm ≥ 0.05" if excludes else "no"
    if not excludes:
        return "no: Wilcoxon p_Holm < 0.05, but the 95% interval includes 0"
    interval_sign = 1 if lo > 0 else -1
    if rank_biserial is not None and math.isfinite(rank_biserial) and rank_biserial * interval_sign < 0:
        return "no: Wilcoxon and the interval point opposite ways"
    return "yes: A better" if interval_sign > 0 else "yes: B better"


def is_significant(text: str) -> bool:
    """Whether a verdict of `verdict` calls the difference significant.

    >>> is_significant("yes: B better"), is_significant("no: not enough data")
    (True, False)
    """
    return text.startswith("yes")


def compare(
    a: Mapping[str, Mapping[str, float]],
    b: Mapping[str, Mapping[str, float]],
    configs: Sequence[str],
    *,
    seed: int = 0,
) -> list[PairedRow]:
    """Per config of `configs` both runs scored: the paired statistics on the queries both ranked.

    Args:
        a: run A's config -> query id -> AP (TRIAD) or any per-query score.
        b: run B's, the same way.
        configs: the configs to compare, in the order the rows come; one without a shared query is left out.
        seed: the bootstrap seed (paper D.3: 3,000 query-bootstrap resamples).

    Holm's correction runs over the configs that have rows (the compared family).
    """
    raw: list[tuple[str, np.ndarray, np.ndarray, tuple[float, float], float, float]] = []
    for config in configs:
        qa, qb = a.get(config) or {}, b.get(config) or {}
        shared = sorted(qa.keys() & qb.keys())
        if not shared:
            continue
        x = np.array([qa[q] for q in shared], dtype=np.float64)
        y = np.array([qb[q] for q in shared], dtype=np.float64)
        interval = stats.paired_bootstrap_ci(x, y, seed=seed)
        raw.append((config, x, y, interval, stats.wilcoxon(x, y), stats.rank_biserial(x, y)))
    adjusted = stats.holm([p for *_, p, _ in raw]) if raw else []
    rows = []
    for (config, x, y, (lo, hi), p, effect), p_holm in zip(raw, adjusted, strict=True):
        rows.append(
            PairedRow(
                config=config,
                n_queries=int(x.size),
                map_a=float(x.mean()),
                map_b=float(y.mean()),
                delta=float(x.mean() - y.mean()),
                ci_low=lo,
                ci_high=hi,
                p=p,
                p_holm=p_holm,
                rank_biserial=effect,
                verdict=verdict(p_holm, shown(lo), shown(hi), effect),
            )
        )
    return rows
