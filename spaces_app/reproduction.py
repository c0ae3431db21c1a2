"""The judgement of the reproduction check, as plain functions of re-computed scores (no model, no I/O).

For one sampled query the server has the model's own scores over the query's whole pool (TRIAD: its 1,000
candidates; ARK: the whole gallery) and the ranks at which the submission put the query's positives. Two pairs of
candidates whose scores differ by at most the tolerance may be listed either way (a bf16 GPU run and a CPU
re-encoding disagree that much); every other pair must keep the model's order. So:

* the submitted AP must lie in the model's **tie range** (`tie_range`): from the AP with every positive as low as
  those constraints allow to the AP with every positive as high as they allow;
* across the sampled queries the submission must not sit at the favourable end more than chance allows
  (`favourable_p`): an honest run's order differs from the re-encoding only by noise, which moves a positive up or
  down alike, while a doctored order moves positives only up. The statistic is the sum of the per-query
  differences submitted AP - the model's own AP; its null distribution flips each difference's sign at random.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

GRID: Final = 1e-3  # AP differences are counted in these steps (smaller ones are noise, counted as none)
AP_SLACK: Final = 1e-9  # float rounding allowed at the ends of a tie range
# An honest run fails one favourable-end test with at most this chance (each subset's, and a sample's pooled one).
ALPHA: Final = 1e-4
MAX_STEPS: Final = 20_000  # grid steps of one favourable-end test at most (a subset of 1,000 queries stays fast)


def average_precision(ranks: Sequence[int] | np.ndarray, n_pos: int) -> float:
    """AP of positives at the given 1-based ranks (paper B.1 eq. 1): the j-th positive at rank R_j adds j / R_j.

    >>> average_precision([2, 4], 2)  # (1/2 + 2/4) / 2
    0.5
    """
    r = np.sort(np.asarray(ranks, dtype=np.float64))
    if n_pos <= 0:
        return 0.0
    return float(np.sum(np.arange(1, r.size + 1) / r) / n_pos)


def own_ranks(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """1-based ranks of the positives in the model's own ranking: score descending, exact ties by pool position
    (as `triad run` ranks, `model_adapters.ranks.ranking`).

    >>> own_ranks(np.array([0.1, 0.5, 0.5]), np.array([True, False, True])).tolist()
    [3, 2]
    """
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(1, order.size + 1)
    return rank[np.asarray(positive, dtype=bool)]


def tie_range(scores: np.ndarray, positive: np.ndarray, tolerance: float) -> tuple[float, float]:
    """(lowest, highest) AP over the orders that keep every pair farther apart than ``tolerance`` as the model
    scores it.

    The k-th best-scored positive ranks at best k + (negatives scored above it by more than the tolerance), at worst
    k + (negatives not scored below it by more than the tolerance); both sequences are achievable at once, and no
    order does better or worse.

    >>> tie_range(np.array([0.50, 0.505, 0.40]), np.array([True, False, False]), 0.01)  # tied with one negative
    (0.5, 1.0)
    """
    s = np.asarray(scores, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    p = np.sort(s[pos])[::-1]
    neg = np.sort(s[~pos])
    if p.size == 0:
        return 0.0, 0.0
    k = np.arange(1, p.size + 1)
    gap = neg[None, :] - p[:, None]  # gap[i, j] = negative j's score minus the i-th positive's, as `verify.compare`
    forced = (gap > tolerance).sum(axis=1)  # must stay above the positive
    allowed = (-gap <= tolerance).sum(axis=1)  # may be listed above it
    return average_precision(k + allowed, p.size), average_precision(k + forced, p.size)


@dataclass(frozen=True)
class QueryJudgement:
    """One sampled query: the submitted AP, the model's own AP and its tie range."""

    config: str
    query_id: str
    submitted: float
    own: float
    low: float
    high: float

    @property
    def in_range(self) -> bool:
        return self.low - AP_SLACK <= self.submitted <= self.high + AP_SLACK


def judge_query(
    config: str,
    query_id: str,
    scores: np.ndarray,
    positive: np.ndarray,
    submitted_ranks: Sequence[int],
    tolerance: float,
) -> QueryJudgement:
    """The submitted AP (from the positives' submitted ranks) against the model's own over the whole pool."""
    n_pos = int(np.asarray(positive, dtype=bool).sum())
    low, high = tie_range(scores, positive, tolerance)
    return QueryJudgement(
        config,
        query_id,
        average_precision(submitted_ranks, n_pos),
        average_precision(own_ranks(scores, positive), n_pos),
        low,
        high,
    )


def favourable_p(differences: Sequence[float], grid: float = GRID) -> float:
    """One-sided p-value of the sum of ``differences`` (submitted - own AP) under random signs: the chance that
    noise moving positives up or down alike gives a sum this large.

    Differences that round to no ``grid`` step count as none; the others are counted in steps of ``grid``, or
    of a coarser step when a whole subset's differences would need more than `MAX_STEPS` of them. The sign-flip
    distribution is exact for the counted steps, so the test keeps its level whatever the step.

    >>> favourable_p([0.3] * 10) == 2.0**-10  # every difference favours the submission
    True
    >>> favourable_p([0.3, -0.3]), favourable_p([])
    (0.75, 1.0)
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.rint(np.abs(d) / grid) > 0]
    if d.size == 0:
        return 1.0
    step = max(grid, float(np.abs(d).sum()) / MAX_STEPS)
    steps = np.maximum(np.rint(np.abs(d) / step), 1).astype(np.int64)
    signs = np.sign(d)
    total = int(steps.sum())
    observed = int((steps * signs).sum())
    dist = np.zeros(total + 1)  # distribution of the sum of the steps given a + sign
    dist[0] = 1.0
    for w in steps:
        shifted = np.zeros_like(dist)
        shifted[w:] = dist[:-w]
        dist = 0.5 * dist + 0.5 * shifted
    need = math.ceil((observed + total) / 2)  # sum(+) - sum(-) >= observed  <=>  sum(+) >= (observed + total) / 2
    return float(dist[need:].sum())
