"""The TRIAD paper's remaining diagnostics as plain per-query-array functions (paper C.3, C.4, Fig. 9, D.3).

* `matched_comparison` (C.3, Table 12): mAP difference right minus left between two constraint profiles (D1/D2,
  D3/D4, D3/D5), over the complete groups and standardized over shared category x attribute-name strata, each
  stratum weighted by the smaller of its two group counts.
* `trap_stratified_delta` (C.4, Fig. 9): mean paired AP change (multi- minus single-turn) of trap-constructed
  conflict sessions, split by whether a trap enters the top 10.
* `restricted_ap` (C.4 shared-pool rescoring): AP of a ranking restricted to a subset of its candidates (the ones
  both the single- and the multi-turn pool contain), later ranks compressed.
* `resolution_curve` (D.3 "Statistical Resolution", Fig. 12a): 95% query-bootstrap half-width of mAP when only n
  of the queries are kept, for several n; `minimum_detectable_effect` (Fig. 12b) for a pair of runs.

>>> out = matched_comparison(np.array([0.5, 0.25, 0.125, 0.375]), ["D1", "D1", "D2", "D2"], ["a", "b", "a", "b"],
...                          "D1", "D2")
>>> out["difference"], out["standardized"], out["n_strata"]
(-0.125, -0.125, 2)
>>> trap_stratified_delta(np.array([-0.5, -0.1, 0.2]), np.array([True, False, False]), np.array([True, True, False]))
{'trap_in_top10': {'mean': -0.5, 'n_queries': 1}, 'trap_free': {'mean': -0.1, 'n_queries': 1}}
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from scipy import stats as _st

from metrics.core.kernels import ap_from_ranked_labels
from metrics.core.stats import N_RESAMPLES, RESAMPLES, resample_means

# paper C.3: the three count-matched polarity comparisons (left, right); differences are right minus left
MATCHED_PAIRS: tuple[tuple[str, str], ...] = (("D1", "D2"), ("D3", "D4"), ("D3", "D5"))
# paper D.3: the query counts at which the resolution is measured
RESOLUTION_SIZES: tuple[int, ...] = (100, 200, 300, 500, 700, 1000)


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def matched_comparison(
    ap: np.ndarray, groups: Sequence[Hashable], strata: Sequence[Hashable], left: Hashable, right: Hashable
) -> dict[str, Any]:
    """mAP(right) - mAP(left) over the complete groups and standardized over shared strata (paper C.3).

    ``standardized`` = sum_s w_s (mean_right_s - mean_left_s) / sum_s w_s over strata present in both groups,
    w_s = min(n_left_s, n_right_s); None when the groups share no stratum (or a group is empty).
    """
    ap = np.asarray(ap, dtype=np.float64)
    group_of, stratum_of = np.asarray(groups, dtype=object), np.asarray(strata, dtype=object)
    if not (ap.shape[0] == group_of.shape[0] == stratum_of.shape[0]):
        raise ValueError(
            f"ap, groups and strata differ in length: {ap.shape[0]}, {group_of.shape[0]}, {stratum_of.shape[0]}"
        )
    is_left: np.ndarray = group_of == left
    is_right: np.ndarray = group_of == right
    l_mean, r_mean = _mean(ap[is_left]), _mean(ap[is_right])
    num = weight = 0.0
    shared = 0
    for s in dict.fromkeys(stratum_of[is_left | is_right].tolist()):
        sl, sr = is_left & (stratum_of == s), is_right & (stratum_of == s)
        w = min(int(sl.sum()), int(sr.sum()))
        if w:
            num += w * (ap[sr].mean() - ap[sl].mean())
            weight += w
            shared += 1
    return {
        "left": left,
        "right": right,
        "n_left": int(is_left.sum()),
        "n_right": int(is_right.sum()),
        "difference": None if l_mean is None or r_mean is None else r_mean - l_mean,
        "standardized": float(num / weight) if weight else None,
        "n_strata": shared,
        "weight": int(weight),
    }


def trap_stratified_delta(delta: np.ndarray, trap_in_top: np.ndarray, eligible: np.ndarray) -> dict[str, Any]:
    """Mean paired AP change of the eligible (trap-constructed conflict) queries with / without a trap in the top
    k (paper Fig. 9; descriptive strata, not a randomized comparison). Means are None for an empty stratum."""
    delta, top, ok = np.asarray(delta, dtype=np.float64), np.asarray(trap_in_top, bool), np.asarray(eligible, bool)
    if not (delta.shape == top.shape == ok.shape):
        raise ValueError(f"delta, trap_in_top and eligible differ in shape: {delta.shape}, {top.shape}, {ok.shape}")
    inside, free = delta[ok & top], delta[ok & ~top]
    return {
        "trap_in_top10": {"mean": _mean(inside), "n_queries": int(inside.size)},
        "trap_free": {"mean": _mean(free), "n_queries": int(free.size)},
    }


def restricted_ap(ranked_labels: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per-query AP of each ranking restricted to the ``keep`` candidates (ranked order, bool), ranks compressed;
    the divisor is the number of kept positives (paper C.4 shared-pool rescoring).

    >>> restricted_ap(np.array([[0, 1, 0, 1]]), np.array([[True, True, False, True]])).tolist()  # (1/2 + 2/3) / 2
    [0.5833333333333333]
    """
    rel = np.asarray(ranked_labels, dtype=bool) & np.asarray(keep, dtype=bool)
    n_pos = rel.sum(axis=1)
    if (n_pos == 0).any():
        raise ValueError(f"query {int(np.flatnonzero(n_pos == 0)[0])}: no positive among the kept candidates")
    return ap_from_ranked_labels(rel, n_pos, np.asarray(keep, dtype=bool))


def resolution_curve(
    ap: np.ndarray, sizes: Sequence[int] = RESOLUTION_SIZES, *, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> dict[str, float]:
    """{n: half-width of the 95% percentile interval of the mean of n queries drawn with replacement} for each n in
    ``sizes`` up to the number of queries (paper D.3, Fig. 12a: 3,000 resamples of the frozen per-query AP)."""
    ap = np.asarray(ap, dtype=np.float64)
    out = {}
    for n in (s for s in sizes if 0 < s <= ap.size):
        draws = functools.partial(_resolution_draws, seed, n, ap.size, n_resamples)
        index = RESAMPLES.get(("resolution", seed, n, ap.size, n_resamples), draws)
        lo, hi = np.quantile(resample_means(ap, index), [0.025, 0.975])
        out[str(n)] = float((hi - lo) / 2)
    return out


def _resolution_draws(seed: int, n: int, size: int, n_resamples: int) -> np.ndarray:
    """The D.3 resample indices of n queries out of ``size`` (drawn as int64; kept as int16 when they fit)."""
    index = np.random.default_rng([seed, n]).integers(0, size, size=(n_resamples, n))
    return index.astype(np.int16) if size <= np.iinfo(np.int16).max else index


def _power(diff: np.ndarray, n: int, effect: float, threshold: float, n_mc: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, diff.size, size=(n_mc, n))
    hits = 0
    for row in idx:
        d = diff[row] + effect
        if np.any(d != 0) and _st.wilcoxon(d, alternative="two-sided", zero_method="wilcox").pvalue < threshold:
            hits += 1
    return hits / n_mc


def minimum_detectable_effect(
    ap_a: np.ndarray,
    ap_b: np.ndarray,
    n: int,
    *,
    family: int = 6,
    alpha: float = 0.05,
    power: float = 0.8,
    n_mc: int = 1000,
    seed: int = 0,
    tolerance: float = 5e-4,
) -> float:
    """Smallest constant paired improvement added to ``ap_a - ap_b`` that a two-sided Wilcoxon test detects in
    ``power`` of ``n_mc`` Monte Carlo resamples of n queries (paper D.3, Fig. 12b), at the strictest Holm level of a
    ``family`` of tests (alpha / family; the paper's family is the six subsets). Bisection to ``tolerance``."""
    a, b = np.asarray(ap_a, dtype=np.float64), np.asarray(ap_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"paired per-query AP arrays must be 1-D and equally long, got {a.shape} and {b.shape}")
    threshold = alpha / family  # the first (strictest) Holm step over the family
    centred = (a - b) - float(np.median(a - b))  # our choice (paper silent): the observed pair's differences, centred
    lo, hi = 0.0, 1.0
    if _power(centred, n, hi, threshold, n_mc, seed) < power:
        return float("inf")
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _power(centred, n, mid, threshold, n_mc, seed) >= power else (mid, hi)
    return hi
