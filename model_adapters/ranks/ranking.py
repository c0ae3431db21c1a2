"""Scoring from cached vectors: fixed TRIAD pools, whole ARK galleries, and the rerank splice.

All scores are cosines of L2-normalized float32 vectors (docs/protocol.md §3), computed with batched matrix products.
Exact ties are broken by position — pool position for TRIAD (docs/protocol.md §4 default), gallery position for ARK, and
first-stage rank inside a reranked top-k (paper D.2) — by stable sorts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# Memory budget (float32 elements) for one block of query × item scores.
BLOCK_ELEMENTS = 1 << 24


def unique_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the distinct rows, inverse): `matrix[first][inverse]` equals `matrix` bit for bit.

    Rows are compared by their bytes, so only bit-identical rows are merged.

    >>> first, inverse = unique_rows(np.array([[1, 2], [3, 4], [1, 2]], dtype=np.float32))
    >>> first.tolist(), inverse.tolist()
    ([0, 1], [0, 1, 0])
    """
    matrix = np.ascontiguousarray(matrix)
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    found = _hashed_unique(matrix)
    if found is None:  # rows not a whole number of 8-byte words, or two different rows share a hash
        rows = matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).ravel()
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    else:
        first, inverse = found
    order = np.argsort(first, kind="stable")  # distinct rows in first-seen order
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order].astype(np.int64), rank[inverse.ravel()].astype(np.int64)


def _hashed_unique(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`np.unique(rows, return_index=True, return_inverse=True)`'s index and inverse, through a 64-bit hash of each
    row (one integer product) instead of sorting the rows' bytes; every row merged with another is then compared
    with it word for word. None when the rows are not whole 8-byte words or two different rows share a hash."""
    n, width = matrix.shape[0], matrix.dtype.itemsize * matrix.shape[1]
    if width % 8:
        return None
    words = matrix.view(np.uint8).reshape(n, width).view(np.uint64)
    multipliers = np.random.default_rng(width).integers(0, 2**64, size=words.shape[1], dtype=np.uint64)
    hashes = words @ (multipliers | np.uint64(1))  # wraps modulo 2**64
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    same = first[inverse]
    merged = np.flatnonzero(same != np.arange(n))
    if not np.array_equal(words[merged], words[same[merged]]):
        return None
    return first, inverse


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalization in float32 (docs/protocol.md §3); zero rows stay zero.

    Each distinct row is normalized once and copied to its duplicates, so identical vectors stay bit-identical
    whatever their position (SIMD paths can depend on a row's memory alignment).
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] == 0:
        return vectors.copy()
    first, inverse = unique_rows(vectors)
    distinct = vectors[first]
    norms = np.linalg.norm(distinct, axis=1, keepdims=True)
    return (distinct / np.where(norms == 0, np.float32(1), norms))[inverse]


def _product(queries: np.ndarray, items: np.ndarray) -> np.ndarray:
    """queries @ items.T (float32): the one place the scores are computed (tests swap it for an adversarial
    product whose last bit depends on the column, as BLAS kernels' tiles do on some CPUs)."""
    return queries @ items.T


def pool_scores(queries: np.ndarray, items: np.ndarray, pools: np.ndarray) -> np.ndarray:
    """Cosine of each query with each of its pool's items: (n_queries, pool_len), -inf where `pools` is -1.

    `queries` and `items` must be normalized; `pools[q, j]` is the row of `items` at pool position j.
    Scores are computed once per (query, distinct item vector) and gathered into the pools, so bit-identical item
    vectors get bit-identical scores wherever they sit in the pools or the item matrix, on any CPU and BLAS kernel
    (ties must not depend on where a vector lands in a matrix product's tiles).

    >>> q = np.array([[1.0, 0.0]], dtype=np.float32); c = np.array([[0, 1], [1, 0]], dtype=np.float32)
    >>> pool_scores(q, c, np.array([[0, 1, -1]])).tolist()
    [[0.0, 1.0, -inf]]
    """
    n_q, pool_len = pools.shape
    out = np.empty((n_q, pool_len), dtype=np.float32)
    first, inverse = unique_rows(items)
    distinct = items[first]
    inverse = inverse.astype(np.int32 if first.size <= np.iinfo(np.int32).max else np.int64)
    slots = inverse[np.where(pools < 0, 0, pools)] if items.shape[0] else np.zeros_like(pools)
    # One product with every distinct item, then a gather, is far faster than per-pool work (memory-bound) unless
    # the corpus dwarfs the pools; then each block of queries multiplies only the distinct items its pools use.
    # The block size keeps (queries in the block) x (items multiplied) <= BLOCK_ELEMENTS.
    n_distinct = max(1, distinct.shape[0])
    step = max(1, BLOCK_ELEMENTS // n_distinct, math.isqrt(BLOCK_ELEMENTS // max(1, pool_len)))
    for start in range(0, n_q, step):
        block = slots[start : start + step]
        if n_distinct <= block.size:
            scores = _product(queries[start : start + step], distinct)
            out[start : start + step] = np.take_along_axis(scores, block, axis=1)
        else:
            used, local = np.unique(block, return_inverse=True)
            scores = _product(queries[start : start + step], distinct[used])
            out[start : start + step] = np.take_along_axis(scores, local.reshape(block.shape), axis=1)
    out[pools < 0] = -np.inf
    return out


def position_dtype(width: int) -> np.dtype:
    """The smallest signed integer type that holds a position in rows of `width` (int16 for 1,000-candidate
    pools): a run keeps every config's order until it is scored, 2 bytes per pool slot instead of 8.

    >>> position_dtype(1000), position_dtype(40000)
    (dtype('int16'), dtype('int32'))
    """
    return np.dtype(np.int16) if width <= np.iinfo(np.int16).max + 1 else np.dtype(np.int32)


def rank_pools(queries: np.ndarray, items: np.ndarray, pools: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query, pool positions best first (`position_dtype`) and their scores (float32, as computed: widening
    to float64 when written is exact); ties keep pool order (docs/protocol.md §4).

    >>> q = np.array([[1.0, 0.0]], dtype=np.float32); c = np.array([[0, 1], [1, 0], [1, 0]], dtype=np.float32)
    >>> order, scores = rank_pools(q, c, np.array([[0, 2, 1]]))
    >>> order.tolist(), scores.tolist()
    ([[1, 2, 0]], [[1.0, 1.0, 0.0]])
    """
    scores = pool_scores(queries, items, pools)
    order = np.argsort(-scores, axis=1, kind="stable").astype(position_dtype(pools.shape[1]))
    return order, np.take_along_axis(scores, order, axis=1)


def rank_gallery(
    queries: np.ndarray, gallery: np.ndarray, positives: np.ndarray, *, top: int = 100
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank a whole gallery per query (ARK): top-`top` gallery rows and scores, and the 1-based rank of each
    query's positive row in the complete ranking (ties broken by gallery position). Like `pool_scores`, each
    distinct gallery vector is scored once per query, so identical vectors tie exactly on any CPU.

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
    first, inverse = unique_rows(gallery)
    distinct = gallery[first]
    step = max(1, BLOCK_ELEMENTS // max(1, n_g))
    positions = np.arange(n_g)
    for start in range(0, n_q, step):
        block = _product(queries[start : start + step], distinct)[:, inverse]  # (b, n_g)
        order = np.argsort(-block, axis=1, kind="stable")[:, :top]
        top_idx[start : start + step] = order
        top_scores[start : start + step] = np.take_along_axis(block, order, axis=1)
        pos = positives[start : start + step]
        pos_score = block[np.arange(block.shape[0]), pos][:, None]
        ahead = (block > pos_score) | ((block == pos_score) & (positions[None, :] < pos[:, None]))
        ranks[start : start + step] = 1 + ahead.sum(axis=1)
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
