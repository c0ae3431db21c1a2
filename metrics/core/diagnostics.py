"""TRIAD diagnostic kernels (paper B.1, C.6): per-hop I2C AP, the compressed-rank variant, grouped means.

>>> from metrics.core.ranking import rank_scores
>>> hops = np.array([[2, 0, 1, 0]])  # pool-aligned: 0 = not a positive, else the positive's hop
>>> r = rank_scores([[0.9, 0.8, 0.7, 0.6]], hops > 0)
>>> hop_ap(r, hops, 1).tolist()  # hop-2 positive at rank 1 stays in place as a non-relevant: 1/3
[0.3333333333333333]
>>> hop_ap(r, hops, 1, compress=True).tolist()  # it is removed and ranks compress: 1/2
[0.5]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import numpy as np

from metrics.core.kernels import ap_from_ranked_labels
from metrics.core.ranking import Ranked

K = TypeVar("K", bound=Hashable)


def hop_ap(r: Ranked, hops: np.ndarray, hop: int, *, compress: bool = False) -> np.ndarray:
    """Per-query AP counting only positives of ``hop`` (pool-aligned int array ``hops``; 0 = not positive).

    Paper B.1: the full ranking is kept and other-hop positives stay in place as non-relevant. ``compress=True`` is
    the C.6 sensitivity variant: other-hop positives are removed and later ranks compressed. Queries without a
    positive of this hop get NaN here — select them with `has_hop` before averaging (never averaged silently).
    """
    if r.ties != "stable":
        raise ValueError("per-hop AP is defined on the stable ranking (ties='stable')")
    ranked_hops = r.take(np.asarray(hops))
    rel = (ranked_hops == hop) & r.valid
    n_pos = rel.sum(axis=1)
    keep = r.valid & ~((ranked_hops > 0) & (ranked_hops != hop)) if compress else None
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = ap_from_ranked_labels(rel, n_pos, keep)
    return np.where(n_pos > 0, ap, np.nan)


def has_hop(hops: np.ndarray, hop: int) -> np.ndarray:
    """Bool per query: the query has at least one positive of ``hop``."""
    return (np.asarray(hops) == hop).any(axis=1)


def group_indices(keys: Sequence[K]) -> dict[K, np.ndarray]:
    """Query indices per distinct key, in first-seen key order.

    >>> {k: v.tolist() for k, v in group_indices(["D1", "D2", "D1"]).items()}
    {'D1': [0, 2], 'D2': [1]}
    """
    groups: dict[K, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return {key: np.asarray(idx, dtype=np.int64) for key, idx in groups.items()}
