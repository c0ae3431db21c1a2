"""The one implementation of every TRIAD/ARK metric: pure, vectorised numpy over per-query arrays.

Typical use (the evaluate modules, the runner and the Space all go through these functions)::

    ranked = rank_scores(scores, labels, mask, ties="stable")   # validate + sort once
    per_query = compute(ranked, ["map", "top1_hit", "mrr", "ndcg@10"])
    mean_ap = float(per_query["map"].mean())

>>> r = rank_scores([[0.2, 0.9, 0.4], [0.1, 0.3, 0.2]], [[1, 0, 1], [0, 0, 1]])
>>> {name: v.tolist() for name, v in compute(r, ["map", "mrr"]).items()}
{'map': [0.5833333333333333, 0.5], 'mrr': [0.5, 0.5]}
"""

from __future__ import annotations

from metrics.core.ark import mrr_at_rank, ndcg_at_rank, recall_at_rank, validate_ranks
from metrics.core.diagnostics import group_indices, has_hop, hop_ap
from metrics.core.kernels import (
    any_in_topk,
    ap_from_ranked_labels,
    average_precision,
    hit_at_k,
    ndcg_at_k,
    pooled_rate,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    top1_hit,
    topk_counts,
)
from metrics.core.ranking import TIE_MODES, Ranked, pad_ragged, rank_from_order, rank_scores, validate
from metrics.core.registry import ARK_METRICS, METRICS, MetricSpec, compute, compute_ark, resolve
from metrics.core.two_stage import coverage_at_k, oracle_ap_at_k, reranked_ap, splice_rerank

__all__ = [
    "ARK_METRICS",
    "METRICS",
    "TIE_MODES",
    "MetricSpec",
    "Ranked",
    "any_in_topk",
    "ap_from_ranked_labels",
    "average_precision",
    "compute",
    "compute_ark",
    "coverage_at_k",
    "group_indices",
    "has_hop",
    "hit_at_k",
    "hop_ap",
    "mrr_at_rank",
    "ndcg_at_k",
    "ndcg_at_rank",
    "oracle_ap_at_k",
    "pad_ragged",
    "pooled_rate",
    "precision_at_k",
    "rank_from_order",
    "rank_scores",
    "recall_at_k",
    "recall_at_rank",
    "reciprocal_rank",
    "reranked_ap",
    "resolve",
    "splice_rerank",
    "top1_hit",
    "topk_counts",
    "validate",
    "validate_ranks",
]
