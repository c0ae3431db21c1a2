"""Captioner robustness of text-space ARK runs (paper H.1): do model rankings survive a change of captioner?

`scores[captioner][model]` is one number per run (knowledge axis: macro R@1 over subtypes, paper Table 24;
reasoning axis: macro R@1 over the reasoning skills, Table 25).

- `rank_correlations`: Spearman rho of the models' scores between every two captioners (models common to both);
- `captioner_gain`: each model's score with the reference captioner minus its mean score with the others
  (paper: "Qwen-caption gain" = with Qwen captions minus the average with the two non-Qwen captioners);
- `group_gains`: the mean gain of the reference family's models and of the other models.

>>> s = {"q": {"a": 0.4, "b": 0.2, "c": 0.1}, "k": {"a": 0.3, "b": 0.1, "c": 0.2}}
>>> rank_correlations(s)[("q", "k")]
0.5
>>> {m: round(g, 6) for m, g in captioner_gain(s, "q").items()}
{'a': 0.1, 'b': 0.1, 'c': -0.1}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from metrics.core import stats

Scores = Mapping[str, Mapping[str, float]]


def _common_models(scores: Scores, captioners: Iterable[str]) -> list[str]:
    sets = [set(scores[c]) for c in captioners]
    return sorted(set.intersection(*sets)) if sets else []


def rank_correlations(scores: Scores) -> dict[tuple[str, str], float]:
    """Spearman rho (average ranks for ties) between every two captioners, over the models both ran.

    Pairs with fewer than 3 common models are left out (rho of two points is always ±1).
    """
    names = list(scores)
    out: dict[tuple[str, str], float] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            models = _common_models(scores, (a, b))
            if len(models) >= 3:
                rho, _ = stats.spearman([scores[a][m] for m in models], [scores[b][m] for m in models])
                out[(a, b)] = rho
    return out


def captioner_gain(scores: Scores, reference: str) -> dict[str, float]:
    """Per model (run under every captioner): score with `reference` minus the mean score with the others."""
    if reference not in scores:
        raise ValueError(f"reference captioner {reference!r} has no runs; captioners: {', '.join(scores)}")
    others = [c for c in scores if c != reference]
    if not others:
        raise ValueError("the captioner gain needs runs under at least two captioners")
    models = _common_models(scores, scores)
    return {m: float(scores[reference][m] - np.mean([scores[c][m] for c in others])) for m in models}


def group_gains(gains: Mapping[str, float], family: Iterable[str]) -> dict[str, float | None]:
    """Mean gain of the family's models and of the others (None for an empty group)."""
    members = set(family)
    inside = [g for m, g in gains.items() if m in members]
    outside = [g for m, g in gains.items() if m not in members]
    return {
        "family": float(np.mean(inside)) if inside else None,
        "others": float(np.mean(outside)) if outside else None,
    }
