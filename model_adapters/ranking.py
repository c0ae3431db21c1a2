"""Scoring from cached vectors: fixed TRIAD pools, whole ARK galleries, and the rerank splice.

All scores are cosines of L2-normalized float32 vectors (docs/protocol.md §3), computed with batched matrix products.
Exact ties are broken by position — pool position for TRIAD (docs/protocol.md §4 default), gallery position for ARK, and
first-stage rank inside a reranked top-k (paper D.2) — by stable sorts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Memory budget (float32 elements) for one block of query × item scores.
BLOCK_ELEMENTS = 1 << 24


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalization in float32 (docs/protocol.md §3); zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, np.float32(1), norms)


def pool_scores(queries: np.ndarray, items: np.ndarray, pools: np.ndarray) -> np.ndarray:
    """Cosine of each query with each of its pool's items: (n_queries, pool_len), -inf where `pools` is -1.

    `queries` and `items` must be normalized; `pools[q, j]` is the row of `items` at pool position j.
    The path (one product with all items, then a gather; or a gather, then a batched product) depends only on the
    shapes, so the same inputs always give bit-identical scores.

    >>> q = np.array([[1.0, 0.0]], dtype=np.float32); c = np.array([[0, 1], [1, 0]], dtype=np.float32)
    >>> pool_scores(q, c, np.array([[0, 1, -1]])).tolist()
    [[0.0, 1.0, -inf]]
    """
    n_q, pool_len = pools.shape
    out = np.empty((n_q, pool_len), dtype=np.float32)
    safe = np.where(pools < 0, 0, pools)
    # One product with every item, then a gather, is far faster than gathering pool vectors (memory-bound) unless
    # the corpus dwarfs the pools (measured in benchmarks/bench_runner.py).
    full_product = items.shape[0] <= 64 * pool_len
    if full_product:
        step = max(1, BLOCK_ELEMENTS // max(1, items.shape[0]))
        for start in range(0, n_q, step):
            block = queries[start:start + step] @ items.T
            out[start:start + step] = np.take_along_axis(block, safe[start:start + step], axis=1)
    else:
        step = max(1, BLOCK_ELEMENTS // max(1, pool_len * items.shape[1]))
        for start in range(0, n_q, step):
            gathered = items[safe[start:start + step]]  # (b, pool_len, d)
            out[start:start + step] = np.einsum("bkd,bd->bk", gathered, queries[start:start + step])
    out[pools < 0] = -np.inf
    return out


def rank_pools(queries: np.ndarray, items: np.ndarray, pools: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query, pool positions best first and their scores (float64); ties keep pool order (docs/protocol.md §4).

    >>> q = np.array([[1.0, 0.0]], dtype=np.float32); c = np.array([[0, 1], [1, 0], [1, 0]], dtype=np.float32)
    >>> order, scores = rank_pools(q, c, np.array([[0, 2, 1]]))
    >>> order.tolist(), scores.tolist()
    ([[1, 2, 0]], [[1.0, 1.0, 0.0]])
    """
    scores = pool_scores(queries, items, pools)
    order = np.argsort(-scores, axis=1, kind="stable")
    return order, np.take_along_axis(scores, order, axis=1).astype(np.float64)


def rank_gallery(queries: np.ndarray, gallery: np.ndarray, positives: np.ndarray, *, top: int = 100
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank a whole gallery per query (ARK): top-`top` gallery rows and scores, and the 1-based rank of each
    query's positive row in the complete ranking (ties broken by gallery position).

    >>> g = np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32); q = np.array([[1, 0]], dtype=np.float32)
    >>> idx, s, r = rank_gallery(q, g, np.array([2]), top=2)
    >>> idx.tolist(), s.tolist(), r.tolist()
    ([[0, 2]], [[1.0, 1.0]], [2])
    """
    n_q, n_g = queries.shape[0], gallery.shape[0]
    top = min(top, n_g)
    top_idx = np.empty((n_q, top), dtype=np.int64)
    top_scores = np.empty((n_q, top), dtype=np.float64)
    ranks = np.empty(n_q, dtype=np.int64)
    step = max(1, BLOCK_ELEMENTS // max(1, n_g))
    positions = np.arange(n_g)
    for start in range(0, n_q, step):
        block = queries[start:start + step] @ gallery.T  # (b, n_g)
        order = np.argsort(-block, axis=1, kind="stable")[:, :top]
        top_idx[start:start + step] = order
        top_scores[start:start + step] = np.take_along_axis(block, order, axis=1)
        pos = positives[start:start + step]
        pos_score = block[np.arange(block.shape[0]), pos][:, None]
        ahead = (block > pos_score) | ((block == pos_score) & (positions[None, :] < pos[:, None]))
        ranks[start:start + step] = 1 + ahead.sum(axis=1)
    return top_idx, top_scores, ranks


def splice_order(rerank_scores: Sequence[float], total: int) -> np.ndarray:
    """New order of a first-stage ranking of length `total` after reranking its top-k (k = len(rerank_scores)):
    the top-k sorted by descending reranker score, ties in first-stage order, above the unchanged tail (docs/protocol.md §4).

    >>> splice_order([0.1, 0.9, 0.1], 5).tolist()
    [1, 0, 2, 3, 4]
    """
    k = len(rerank_scores)
    if k > total:
        raise ValueError(f"reranked {k} items but the ranking has only {total}")
    head = np.argsort(-np.asarray(rerank_scores, dtype=np.float64), kind="stable")
    return np.concatenate([head, np.arange(k, total)]).astype(np.int64)
