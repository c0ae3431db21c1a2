"""Per-query retrieval kernels over a `Ranked` value (paper B.1). Each returns one value per query.

Averaging is kept separate (`numpy.mean`, or the pooled rates of `pooled_rate`). With ``ties="expected"`` every
kernel returns the exact expectation over uniformly random orderings inside tied groups of equal scores.

>>> from metrics.core.ranking import rank_scores
>>> r = rank_scores([[0.9, 0.8, 0.7, 0.6]], [[0, 1, 0, 1]])
>>> average_precision(r).tolist()  # (1/2 + 2/4) / 2
[0.5]
>>> reciprocal_rank(r).tolist(), top1_hit(r).tolist(), recall_at_k(r, 2).tolist()
([0.5], [0.0], [0.5])
>>> t = rank_scores([[0.5, 0.5]], [[0, 1]], ties="expected")
>>> average_precision(t).tolist(), top1_hit(t).tolist()  # half the orderings put the positive first
([0.75], [0.5])
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from metrics.core.ranking import Ranked


def _positions(shape: tuple[int, int]) -> np.ndarray:
    """1-based rank of every column."""
    return np.arange(1, shape[1] + 1, dtype=np.float64)


def check_k(k: int) -> int:
    """The cut-off ``k`` as an int; ValueError unless it is a positive integer (a bool is not).

    >>> check_k(np.int64(10)), check_k(1)
    (10, 1)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"cut-off k must be a positive integer, got {k!r}")
    return int(k)


def ap_from_ranked_labels(rel: np.ndarray, n_pos: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """AP_q = (1/|P_q|) sum_k Precision@k * rel_k over ranked 0/1 labels (paper B.1 eq. 1), no ties.

    ``keep`` (bool, ranked order) drops positions from the ranking and compresses the ranks of later ones
    (the C.6 sensitivity variant). The divisor is the complete positive count ``n_pos``, never the hits.

    >>> ap_from_ranked_labels(np.array([[0, 1, 0, 1]]), np.array([2])).tolist()  # (1/2 + 2/4) / 2
    [0.5]
    >>> ap_from_ranked_labels(np.array([[0, 1, 0, 1]]), np.array([4])).tolist()  # two positives never ranked
    [0.25]
    """
    rel = np.asarray(rel, dtype=np.float64)
    if keep is None:
        ranks = _positions(rel.shape)
    else:
        rel = np.where(keep, rel, 0.0)
        ranks = np.maximum(np.cumsum(keep, axis=1), 1).astype(np.float64)
    hits = np.cumsum(rel, axis=1)
    return np.sum(rel * hits / ranks, axis=1) / n_pos


def average_precision(r: Ranked) -> np.ndarray:
    """AP per query; with ``ties="expected"`` the exact expected AP of paper eq. 2."""
    if r.stable:  # the j-th positive at rank R_j contributes Precision@R_j = j / R_j (paper B.1 eq. 1)
        ranks = r.positive_ranks
        return np.sum(np.arange(1, ranks.shape[1] + 1) / ranks, axis=1) / r.n_pos
    # paper E.2 eq. 2: group g with n_g candidates, m_g positives, N_g candidates and M_g positives ranked above;
    # position j (1-based) inside g contributes (m_g/n_g) * (M_g + 1 + (j-1)(m_g-1)/(n_g-1)) / (N_g + j).
    y = r.labels.astype(np.float64)
    p = r.soft(y)  # m_g / n_g at every position of g
    n = r.group_size.astype(np.float64)
    m = p * n
    before = np.concatenate([np.zeros((y.shape[0], 1)), np.cumsum(y, axis=1)], axis=1)
    big_m = np.take_along_axis(before, r.group_start, axis=1)
    j = np.arange(y.shape[1])[None, :] - r.group_start + 1.0
    corr = np.where(n > 1, (j - 1.0) * (m - 1.0) / np.maximum(n - 1.0, 1.0), 0.0)
    terms = p * (big_m + 1.0 + corr) / _positions(y.shape)
    return terms.sum(axis=1) / r.n_pos


def _prob_any_in_topk(r: Ranked, ranked_ind: np.ndarray, k: int) -> np.ndarray:
    """P(at least one flagged candidate among the first k), exact under random orderings within tie groups."""
    ind = np.asarray(ranked_ind, dtype=np.float64)
    n_q, n_c = ind.shape
    k = min(k, n_c)
    if r.stable:
        return (ind[:, :k].sum(axis=1) > 0).astype(np.float64)
    start = r.group_start[:, k - 1]
    size = r.group_size[:, k - 1]
    end = start + size
    cums = np.concatenate([np.zeros((n_q, 1)), np.cumsum(ind, axis=1)], axis=1)
    rows = np.arange(n_q)
    above = cums[rows, start]  # flagged candidates in groups fully above the straddling group
    t = cums[rows, end] - above  # flagged candidates in the straddling group
    draws = (k - start).astype(np.float64)  # slots of the straddling group inside the top k
    n = size.astype(np.float64)
    # P(no flagged among `draws` drawn without replacement) = C(n - t, draws) / C(n, draws)
    feasible = n - t >= draws
    log_none = (
        gammaln(np.maximum(n - t, 0) + 1)
        - gammaln(np.maximum(n - t - draws, 0) + 1)
        - gammaln(n + 1)
        + gammaln(n - draws + 1)
    )
    p_none = np.where(feasible, np.exp(log_none), 0.0)
    return np.where(above > 0, 1.0, 1.0 - p_none)


def top1_hit(r: Ranked) -> np.ndarray:
    """1 if the top-ranked candidate is a positive (expected: share of positives in the top tie group)."""
    if r.stable:
        return (r.positive_ranks[:, 0] == 1).astype(np.float64)
    return r.soft(r.labels)[:, 0].copy()


def hit_at_k(r: Ranked, k: int) -> np.ndarray:
    """1 if any positive is ranked within the first k (expected mode: its exact probability)."""
    k = check_k(k)
    if r.stable:
        return (r.positive_ranks[:, 0] <= k).astype(np.float64)
    return _prob_any_in_topk(r, r.labels, k)


def reciprocal_rank(r: Ranked) -> np.ndarray:
    """1 / rank of the first positive (expected mode: exact expectation over orderings of its tie group)."""
    if r.stable:
        return 1.0 / r.positive_ranks[:, 0]
    y = r.labels
    first = np.argmax(y > 0, axis=1)
    rows = np.arange(y.shape[0])
    rr = 1.0 / (first + 1.0)
    start = r.group_start[rows, first]
    size = r.group_size[rows, first]
    for q in np.flatnonzero(size > 1):  # only queries whose first positive is tied
        n, s = int(size[q]), int(start[q])
        m = int(y[q, s : s + n].sum())
        j = np.arange(1, n - m + 2, dtype=np.float64)
        # P(first positive at slot j) = C(n - j, m - 1) / C(n, m)
        log_p = (gammaln(n - j + 1) - gammaln(m) - gammaln(n - j - m + 2)) - (
            gammaln(n + 1) - gammaln(m + 1) - gammaln(n - m + 1)
        )
        rr[q] = float(np.sum(np.exp(log_p) / (s + j)))
    return rr


def recall_at_k(r: Ranked, k: int) -> np.ndarray:
    """Positives ranked within the first k divided by all positives of the query."""
    k = check_k(k)
    if r.stable:
        return (r.positive_ranks <= k).sum(axis=1) / r.n_pos
    return r.soft(r.labels)[:, :k].sum(axis=1) / r.n_pos


def precision_at_k(r: Ranked, k: int) -> np.ndarray:
    """Positives within the first k divided by k (trec_eval/ranx convention, also when k exceeds the pool)."""
    k = check_k(k)
    if r.stable:
        return (r.positive_ranks <= k).sum(axis=1) / k
    return r.soft(r.labels)[:, :k].sum(axis=1) / k


def ndcg_at_k(r: Ranked, k: int) -> np.ndarray:
    """nDCG@k with binary gains: sum_{i<=k} rel_i / log2(i+1), divided by the ideal DCG of min(k, |P_q|) hits."""
    k = check_k(k)
    if r.stable:
        ranks = r.positive_ranks
        dcg = np.where(ranks <= k, 1.0 / np.log2(np.minimum(ranks, k) + 1.0), 0.0).sum(axis=1)
    else:
        soft = r.soft(r.labels)[:, :k]
        dcg = soft @ (1.0 / np.log2(np.arange(2, soft.shape[1] + 2, dtype=np.float64)))
    ideal_cum = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64)))])
    return dcg / ideal_cum[np.minimum(r.n_pos, k)]


def topk_counts(r: Ranked, pool_flags: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(flagged candidates ranked within the first k, flagged candidates in the pool) per query.

    ``pool_flags`` is a pool-aligned bool array (e.g. "candidate has role p_violation", or the trap flag).
    Pool these with `pooled_rate` for the paper's typed-negative entry rate@k (paper B.1).
    """
    k = check_k(k)
    flags = np.asarray(pool_flags, dtype=bool) & r.mask
    total = np.count_nonzero(flags, axis=1).astype(np.float64)
    if r.stable:  # only the top-k set is needed, not a full sort
        return np.count_nonzero(flags & r.in_top_k(k), axis=1).astype(np.float64), total
    return r.soft(r.take(flags))[:, :k].sum(axis=1), total


def any_in_topk(r: Ranked, pool_flags: np.ndarray, k: int) -> np.ndarray:
    """1 if any flagged candidate is ranked within the first k (expected mode: its probability)."""
    flags = np.asarray(pool_flags, dtype=bool) & r.mask
    k = check_k(k)
    if r.stable:
        return (flags & r.in_top_k(k)).any(axis=1).astype(np.float64)
    return _prob_any_in_topk(r, r.take(flags), k)


def pooled_rate(in_topk: np.ndarray, total: np.ndarray) -> float | None:
    """sum(in_topk) / sum(total) over queries; ``None`` when no query has a flagged candidate."""
    den = float(np.sum(total))
    return None if den == 0 else float(np.sum(in_topk)) / den
