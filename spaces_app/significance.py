"""The Compare tab's one decision rule for "is A different from B on this subset?".

The paper's test decides (TRIAD App. C/D: two-sided Wilcoxon signed-rank on the per-query AP differences, Holm
correction over the compared subsets, α = 0.05); its 95 % paired bootstrap interval of ΔmAP (3,000 resamples) is
shown beside it. The two look at different things — Wilcoxon at the ranks of the per-query differences, the
interval at their mean — and can disagree. A difference is called significant only when both agree: Holm-adjusted
p < 0.05 *and* the interval, as shown (3 decimals), excludes 0 *and* both point the same way (the rank-biserial
effect's sign is the Wilcoxon direction). Otherwise the verdict says which of the two objects, so "yes" never
stands beside an interval that contains 0.
"""

from __future__ import annotations

import math
from typing import Final

ALPHA: Final = 0.05
COLUMN: Final = "Significant?"
RULE: Final = (
    "**Significant?** is decided by the paper's test — two-sided Wilcoxon signed-rank on the per-query AP "
    'differences, Holm-adjusted over the subsets shown, α = 0.05 — and is "yes" only when the 95% paired '
    "bootstrap interval of ΔmAP also excludes 0 on the same side; when the two disagree the cell says so "
    "(spaces_app/significance.py)."
)


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
    return text.startswith("yes")
