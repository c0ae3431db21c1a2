"""Chance level of multi-positive AP: the exact expected AP of a uniformly random ranking (TRIAD eq. 2, one tie group).

>>> random_ap(3, 1), random_ap(2, 2)  # (1 + 1/2 + 1/3) / 3; every ordering is perfect
(0.611111111111111, 1.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


def random_ap(n_candidates: int, n_positives: int) -> float:
    """Exact expected AP of a uniformly random ranking of `n_candidates` with `n_positives` (paper eq. 2 with one
    tie group): (1/n) * sum_j (1 + (j-1)(m-1)/(n-1)) / j = (H_n + (m-1)(n-H_n)/(n-1)) / n."""
    n_c, m = int(n_candidates), int(n_positives)
    if m < 1 or n_c < m:
        raise ValueError(f"random_ap needs 1 <= positives <= candidates, got {m} of {n_c}")
    if n_c == 1:
        return 1.0
    harmonic = float(sum(1.0 / j for j in range(1, n_c + 1)))
    return (harmonic + (m - 1) * (n_c - harmonic) / (n_c - 1)) / n_c


def random_map(shapes: Iterable[tuple[int, int]]) -> float:
    """Chance mAP: the mean `random_ap` over queries given as (pool size, positives); a query without a positive
    counts 0, as in AP. Each distinct shape is computed once (pools repeat a few shapes).

    >>> round(random_map([(3, 1), (3, 1), (4, 0)]), 4)
    0.4074
    """
    counts = Counter((int(c), int(p)) for c, p in shapes)
    total = sum(k * random_ap(c, p) for (c, p), k in counts.items() if p > 0)
    n = sum(counts.values())
    return total / n if n else 0.0


def shapes_with_mean(queries: int, pool: int, total_positives: int) -> list[tuple[int, int]]:
    """(pool, positives) per query for `queries` queries holding `total_positives` in all, spread as evenly as
    whole numbers allow. AP's chance is linear in the positive count, so `random_map` of these shapes is the chance
    of any edition with the same queries, pool and total, whatever its spread.

    >>> shapes_with_mean(4, 10, 6)
    [(10, 2), (10, 2), (10, 1), (10, 1)]
    """
    if queries < 1 or not queries <= total_positives <= queries * pool:
        raise ValueError(f"{total_positives} positives cannot fill {queries} queries of pools of {pool}")
    base, extra = divmod(total_positives, queries)
    return [(pool, base + 1)] * extra + [(pool, base)] * (queries - extra)
