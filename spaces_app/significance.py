"""The Compare tab's wording of the one decision rule for "is A different from B on this subset?".

The rule itself, its statistics and its verdicts live in `metrics.core.paired` (the same code prints
`triad results --compare`); this module names the column and says the rule in the tab's words.
"""

from __future__ import annotations

from typing import Final

from metrics.core.paired import ALPHA, VERDICT_COLUMN, is_significant, verdict

__all__ = ["ALPHA", "COLUMN", "RULE", "is_significant", "verdict"]

COLUMN: Final = VERDICT_COLUMN
RULE: Final = (
    "**Significant?** is decided by the paper's test — two-sided Wilcoxon signed-rank on the per-query AP "
    'differences, Holm-adjusted over the subsets shown, α = 0.05 — and is "yes" only when the 95% paired '
    "bootstrap interval of ΔmAP also excludes 0 on the same side; when the two disagree the cell says so "
    "(spaces_app/significance.py)."
)
