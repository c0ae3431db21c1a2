"""ARK kernels from the 1-based rank of each query's single positive (ARK paper §4: R@k, nDCG@k).

With one positive, Recall@k is 1 when the positive is within the first k, and nDCG@k with binary gains is
1 / log2(rank + 1) within the cut-off (the ideal DCG is 1).

>>> ranks = validate_ranks([1, 3, 12])
>>> recall_at_rank(ranks, 1).tolist(), recall_at_rank(ranks, 5).tolist()
([1.0, 0.0, 0.0], [1.0, 1.0, 0.0])
>>> ndcg_at_rank(ranks, 10).tolist()
[1.0, 0.5, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from metrics.core.kernels import check_k


def validate_ranks(ranks: Sequence[int] | np.ndarray) -> np.ndarray:
    """Check 1-based positive ranks (integers >= 1) and return them as int64; the error names the query index.

    >>> validate_ranks([1, 0])
    Traceback (most recent call last):
    ...
    ValueError: query 1: positive rank 0 is not a 1-based rank (must be an integer >= 1)
    """
    arr = np.asarray(ranks)
    if arr.ndim != 1:
        raise ValueError(f"positive ranks must be a 1-D array, got shape {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"positive ranks must be integers, got dtype {arr.dtype}")
    bad = ~np.isfinite(arr.astype(np.float64)) | (arr < 1) | (arr != np.floor(arr))
    if bad.any():
        q = int(np.flatnonzero(bad)[0])
        raise ValueError(f"query {q}: positive rank {arr[q]} is not a 1-based rank (must be an integer >= 1)")
    return arr.astype(np.int64)


def recall_at_rank(ranks: np.ndarray, k: int) -> np.ndarray:
    """1.0 when the single positive is ranked within the first k, else 0.0 (ARK's R@k)."""
    return (np.asarray(ranks) <= check_k(k)).astype(np.float64)


def ndcg_at_rank(ranks: np.ndarray, k: int) -> np.ndarray:
    """Binary-gain nDCG@k of a single positive at 1-based ``rank``: 1/log2(rank+1) if rank <= k else 0."""
    r = np.asarray(ranks, dtype=np.float64)
    return np.where(r <= check_k(k), 1.0 / np.log2(r + 1.0), 0.0)


def mrr_at_rank(ranks: np.ndarray) -> np.ndarray:
    """Reciprocal rank of the single positive."""
    return 1.0 / np.asarray(ranks, dtype=np.float64)


# ranx-style registry: metric family -> kernel(ranks, k); "recall@5" resolves through this dict.
ARK_METRICS: dict[str, Callable[..., np.ndarray]] = {
    "recall": recall_at_rank,
    "ndcg": ndcg_at_rank,
    "mrr": lambda ranks, k=None: mrr_at_rank(ranks),
}
ARK_DEFAULT_METRICS: tuple[str, ...] = ("recall@1", "recall@5", "recall@10", "ndcg@5", "ndcg@10", "ndcg@20")
