"""Tie sensitivity of a submitted TRIAD ranking (paper D.2): mAP with the positives first, and last, inside every
group of candidates whose submitted scores are exactly equal.

The leaderboard's mAP takes the submitted order as it is (ties broken by list position); a model whose scores tie
can move its mAP anywhere between these two bounds by how it lists tied candidates, so both are shown beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def average_precision(ranked_labels: np.ndarray) -> np.ndarray:
    """AP per row of 0/1 labels in ranked order (paper B.1 eq. 1): mean of precision@k over the positives' ranks.

    >>> average_precision(np.array([[1, 0, 1], [0, 1, 0]])).round(4).tolist()
    [0.8333, 0.5]
    """
    labels = ranked_labels.astype(np.float64)
    hits = np.cumsum(labels, axis=1)
    precision = hits / np.arange(1, labels.shape[1] + 1)
    n_pos = labels.sum(axis=1)
    return np.divide((precision * labels).sum(axis=1), n_pos, out=np.zeros(len(labels)), where=n_pos > 0)


def _reordered(labels: np.ndarray, ties: np.ndarray, positives_first: bool) -> np.ndarray:
    """Labels with each tie group's positives moved to its front (or back); groups stay where they are."""
    group = np.cumsum(~ties, axis=1)
    key = group * 2 + (1 - labels if positives_first else labels)
    return np.take_along_axis(labels, np.argsort(key, axis=1, kind="stable"), axis=1)


def tie_sensitivity(labels: np.ndarray, mask: np.ndarray, positions: np.ndarray, ties: np.ndarray) -> dict[str, Any]:
    """mAP of the submitted order and its two tie bounds for one config.

    ``labels`` / ``mask``: the gold's pool-order 0/1 labels and validity (`metrics.columnar.TriadGold`);
    ``positions[q, r]``: pool position ranked r+1 for gold query q; ``ties[q, r]``: rank r+1's score equals rank r's.
    """
    ranked = np.take_along_axis(np.where(mask, labels, 0).astype(np.int8), positions, axis=1)
    tied = ties.any(axis=1)
    out: dict[str, float] = {"tied_queries": int(tied.sum()), "queries": int(len(ranked))}
    for key, first in (("positives_first", True), ("positives_last", False)):
        ap = average_precision(ranked)
        if tied.any():
            ap[tied] = average_precision(_reordered(ranked[tied], ties[tied], first))
        out[key] = float(ap.mean()) if len(ap) else 0.0
    return out


def config_ties(ranking: Any, positions: np.ndarray, qindex: Mapping[str, int]) -> np.ndarray | None:
    """The file's flat tie flags as a (queries, pool) array in gold query order, or None when nothing ties."""
    if ranking.ties is None:
        return None
    ties = np.asarray(ranking.ties, dtype=bool).reshape(positions.shape)
    rows = np.fromiter((qindex[q] for q in ranking.query_ids), dtype=np.int64, count=len(ranking.query_ids))
    out = np.empty_like(ties)
    out[rows] = ties
    return out
