"""Paired statistics for query-level scores (paper C.5, D.2, D.3).

95% query-bootstrap percentile intervals (3,000 resamples, seeded), two-sided Wilcoxon signed-rank tests with Holm
correction over a family, rank-biserial effect size, Kendall tau-b and Spearman rho between model rankings.

>>> lo, hi = bootstrap_ci([0.1, 0.2, 0.3, 0.4], seed=0)
>>> 0.1 <= lo <= 0.25 <= hi <= 0.4
True
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
>>> rank_biserial([1.0, 2.0, -0.5], [0.0, 0.0, 0.0])  # ranks of |d|: 2, 3, 1 -> (5 - 1) / 6
0.6666666666666666
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import numpy as np

N_RESAMPLES = 3000  # paper D.3: 3,000 query-bootstrap resamples
CONFIDENCE = 0.95
DRAW_LIMIT = 4_000_000  # drawn indices held at a time (bounds memory)
MEAN_BLOCK = 256  # resamples gathered and averaged at a time: the block stays in cache; each row's mean is its own


class ResampleCache:
    """Drawn resample indices kept per key (kind, seed, sizes) up to ``max_bytes``, least recently used out first.

    The draws depend only on the seed and the sizes, never on the values, so a long-lived scorer (the Space, which
    scores every submission against the same gold with the same seed) draws each size once. Off (0 bytes) unless
    such a caller sets ``max_bytes``; cached arrays are read-only. Thread-safe.
    """

    def __init__(self, max_bytes: int = 0) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._items.values())

    def get(self, key: Hashable, draw: Callable[[], np.ndarray]) -> np.ndarray:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        arr = draw()
        arr.flags.writeable = False
        with self._lock:
            if arr.nbytes <= self.max_bytes:
                self._items[key] = arr
                while self.nbytes > self.max_bytes:
                    self._items.popitem(last=False)
        return arr


RESAMPLES = ResampleCache()


def resample_means(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index].mean(axis=1)``, bit for bit, in blocks of `MEAN_BLOCK` rows (faster: the block stays in
    cache; numpy reduces each row of a C-contiguous block on its own, so blocking never changes a mean)."""
    out = np.empty(index.shape[0], dtype=np.float64)
    for lo in range(0, index.shape[0], MEAN_BLOCK):
        out[lo : lo + MEAN_BLOCK] = np.take(values, index[lo : lo + MEAN_BLOCK]).mean(axis=1)
    return out


def _vector(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name}: query {int(np.flatnonzero(bad)[0])} is {arr[bad][0]} (values must be finite)")
    return arr


def _pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = _vector(a, "a"), _vector(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired values differ in length: {x.size} vs {y.size} queries")
    return x, y


def bootstrap_means(
    values: Sequence[float] | np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """Means of ``n_resamples`` query-bootstrap resamples (vectorised; seeded numpy Generator)."""
    x = _vector(values, "values")
    rng = np.random.default_rng(seed)
    index_type = np.int16 if x.size <= np.iinfo(np.int16).max else np.int64  # smaller draws are faster
    chunk = max(1, DRAW_LIMIT // x.size)  # bound memory: at most ~4M drawn indices at a time
    if chunk >= n_resamples:  # one draw: kept by RESAMPLES when a long-lived caller turned it on
        index = RESAMPLES.get(
            ("bootstrap", seed, x.size, n_resamples),
            lambda: rng.integers(0, x.size, size=(n_resamples, x.size), dtype=index_type),
        )
        return resample_means(x, index)
    out = np.empty(n_resamples, dtype=np.float64)
    for lo in range(0, n_resamples, chunk):
        hi = min(n_resamples, lo + chunk)
        out[lo:hi] = resample_means(x, rng.integers(0, x.size, size=(hi - lo, x.size), dtype=index_type))
    return out


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean over queries (paper: 95%, 3,000 resamples)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    means = bootstrap_means(values, n_resamples=n_resamples, seed=seed)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def paired_bootstrap_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of mean(a - b), resampling queries jointly (the pairs stay together)."""
    x, y = _pair(a, b)
    return bootstrap_ci(x - y, n_resamples=n_resamples, confidence=confidence, seed=seed)


def wilcoxon(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of the paired differences a - b (scipy; zero differences dropped).

    Returns 1.0 when every difference is zero (no evidence of a difference) instead of scipy's NaN/error.
    """
    from scipy import stats as _st  # imported when used: scipy.stats takes seconds to import

    x, y = _pair(a, b)
    if np.all(x == y):
        return 1.0
    return float(_st.wilcoxon(x, y, alternative="two-sided", zero_method="wilcox").pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values over one family, in the input order (capped at 1, monotone)."""
    p = _vector(p_values, "p_values")
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return [float(v) for v in out]


def rank_biserial(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Matched-pairs rank-biserial correlation (R+ - R-) / (R+ + R-) over nonzero differences; 0.0 if none."""
    from scipy import stats as _st  # imported when used: scipy.stats takes seconds to import

    x, y = _pair(a, b)
    d = x - y
    d = d[d != 0]
    if d.size == 0:
        return 0.0
    ranks = _st.rankdata(np.abs(d))  # average ranks for tied |d|
    r_plus, r_minus = ranks[d > 0].sum(), ranks[d < 0].sum()
    return float((r_plus - r_minus) / (r_plus + r_minus))


def _correlation_inputs(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = _pair(a, b)
    if x.size < 2:
        raise ValueError("a rank correlation needs at least two models")
    if np.all(x == x[0]) or np.all(y == y[0]):
        raise ValueError("a rank correlation is undefined when every model has the same score")
    return x, y


def kendall_tau_b(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Kendall tau-b (ties handled) between two subsets' model scores, with its two-sided p-value."""
    from scipy import stats as _st  # imported when used: scipy.stats takes seconds to import

    x, y = _correlation_inputs(a, b)
    res = _st.kendalltau(x, y, variant="b")
    return float(res.statistic), float(res.pvalue)


def spearman(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Spearman rho (average ranks for ties) between two subsets' model scores, with its two-sided p-value."""
    from scipy import stats as _st  # imported when used: scipy.stats takes seconds to import

    x, y = _correlation_inputs(a, b)
    res = _st.spearmanr(x, y)
    return float(res.statistic), float(res.pvalue)
