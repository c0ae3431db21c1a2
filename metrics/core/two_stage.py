"""Two-stage diagnostics (paper D.2): coverage@k, oracle@k and reranked AP spliced above the unchanged tail.

All functions take the first-stage `Ranked` value (stable ties: the ranking actually shown to the reranker).

>>> from metrics.core.ranking import rank_scores
>>> first = rank_scores([[0.9, 0.8, 0.7, 0.6, 0.5]], [[0, 1, 0, 0, 1]])
>>> coverage_at_k(first, 3).tolist()  # one of two positives in the top 3
[0.5]
>>> oracle_ap_at_k(first, 3).tolist()  # positive moved to rank 1, the other stays at rank 5: (1 + 2/5) / 2
[0.7]
>>> reranked_ap(first, [[0.1, 0.9, 0.2]]).tolist()  # reranker puts the positive first inside the top 3
[0.7]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metrics.core.kernels import ap_from_ranked_labels, check_k, recall_at_k
from metrics.core.ranking import Ranked, validate


def _stable_only(first: Ranked) -> None:
    if first.ties != "stable":
        raise ValueError("two-stage diagnostics need the first-stage ranking itself: rank it with ties='stable'")


def coverage_at_k(first: Ranked, k: int = 30) -> np.ndarray:
    """Share of the query's positives inside the first-stage top k (paper D.2 "positive coverage@30")."""
    _stable_only(first)
    return recall_at_k(first, k)


def oracle_ap_at_k(first: Ranked, k: int = 30) -> np.ndarray:
    """AP when positives are put first inside the first-stage top k and ranks k+1.. stay unchanged (oracle@30)."""
    _stable_only(first)
    k = min(check_k(k), first.labels.shape[1])
    head = -np.sort(-first.labels[:, :k], axis=1)  # positives first, negatives after, inside the retrieved set
    return ap_from_ranked_labels(np.concatenate([head, first.labels[:, k:]], axis=1), first.n_pos)


def _rerank_head(first: Ranked, rerank_scores: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Permutation of the first-stage top k by descending reranker score; exact ties keep first-stage order."""
    _stable_only(first)
    scores = np.asarray(rerank_scores, dtype=np.float64)
    k = scores.shape[1] if scores.ndim == 2 else -1
    if scores.ndim != 2 or scores.shape[0] != first.n_queries or not 1 <= k <= first.order.shape[1]:
        raise ValueError(
            f"rerank_scores must have shape [{first.n_queries}, k] with 1 <= k <= {first.order.shape[1]}, "
            f"got {scores.shape}"
        )
    validate(scores, np.zeros(scores.shape, dtype=np.int8), require_positive=False)  # finite scores, named query
    return np.argsort(-scores, axis=1, kind="stable")  # ties: first-stage order (paper D.2)


def splice_rerank(first: Ranked, rerank_scores: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Pool-index ordering after reranking the first-stage top k (k = columns of ``rerank_scores``).

    ``rerank_scores[q, i]`` scores the candidate at first-stage rank ``i + 1``. The top k are sorted by descending
    reranker score, exact ties keep first-stage order (paper D.2), and ranks k+1.. are kept unchanged.
    """
    head = _rerank_head(first, rerank_scores)
    k = head.shape[1]
    return np.concatenate([np.take_along_axis(first.order[:, :k], head, axis=1), first.order[:, k:]], axis=1)


def reranked_ap(first: Ranked, rerank_scores: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Full-pool AP of the spliced ranking: reranked top k above the unchanged tail (paper D.2)."""
    head = _rerank_head(first, rerank_scores)
    k = head.shape[1]
    labels = np.concatenate([np.take_along_axis(first.labels[:, :k], head, axis=1), first.labels[:, k:]], axis=1)
    return ap_from_ranked_labels(labels, first.n_pos)
