"""ARK text-space submissions: the captioner a run's results.json names is part of the row's identity (the same
model over two captioners is two rows, shown next to each other), and the H.1 robustness view over them.

The captioner is the submitter's claim (the server cannot re-caption); it is kept as a short plain-text label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pandas as pd

SUMMARY_KEY: Final = "captioner"  # where submit.py stores the label in a submission's summary
MAX_LABEL: Final = 64
_ALLOWED: Final = re.compile(r"[^A-Za-z0-9._:/+ -]")


def label_from_results(results: Mapping[str, Any] | None) -> str:
    """The captioner name of a results.json (`triad run --captions`), cleaned; "" for a run without captions.

    >>> label_from_results({"captioner": {"identity": {"name": "ocr"}}})
    'ocr'
    >>> label_from_results({}), label_from_results({"captioner": "x<b>"})
    ('', '')
    """
    cap = (results or {}).get("captioner")
    ident = cap.get("identity") if isinstance(cap, Mapping) else None
    name = ident.get("name") if isinstance(ident, Mapping) else None
    if not isinstance(name, str):
        return ""
    return _ALLOWED.sub("", name).strip()[:MAX_LABEL]


def label(sub: Mapping[str, Any]) -> str:
    """A stored submission's captioner label ("" when its images were seen directly)."""
    return str((sub.get("summary") or {}).get(SUMMARY_KEY) or "")


def group_rows(df: pd.DataFrame, model_col: str, score_col: str) -> pd.DataFrame:
    """Rows of one model next to each other (groups ordered by their best score, rows inside by score)."""
    if not len(df):
        return df
    best = df.groupby(model_col)[score_col].transform("max")
    order = pd.DataFrame({"best": best.fillna(-1.0), "model": df[model_col], "score": df[score_col].fillna(-1.0)})
    idx = order.sort_values(["best", "model", "score"], ascending=[False, True, False], kind="stable").index
    return df.loc[idx].reset_index(drop=True)


def robustness_table(subs: Sequence[Mapping[str, Any]], macro: Any, skills: Any) -> pd.DataFrame:
    """Spearman rho of model rankings between every two captioners (paper H.1) on the knowledge axis (`macro(sub)`)
    and the reasoning-skill axis (mean of `skills(sub)`); empty until 3 models ran under 2 captioners."""
    import numpy as np

    from metrics.core.robustness import rank_correlations

    axes: dict[str, dict[str, dict[str, float]]] = {"knowledge": {}, "reasoning": {}}
    for s in subs:
        cap = label(s)
        if not cap:
            continue
        value, per_skill = macro(s), list(skills(s).values())
        if value is not None:
            axes["knowledge"].setdefault(cap, {})[str(s["model_name"])] = float(value)
        if per_skill:
            axes["reasoning"].setdefault(cap, {})[str(s["model_name"])] = float(np.mean(per_skill))
    rows = [
        {"Axis": axis, "Captioner A": a, "Captioner B": b, "Spearman ρ": round(rho, 3)}
        for axis, scores in axes.items()
        for (a, b), rho in rank_correlations(scores).items()
    ]
    return pd.DataFrame(rows, columns=["Axis", "Captioner A", "Captioner B", "Spearman ρ"])
