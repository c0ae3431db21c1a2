"""metrics.core.stats: hand-computed statistics and agreement with scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from metrics.core import stats


def test_bootstrap_is_seeded_and_matches_scipy_percentile() -> None:
    values = np.random.default_rng(0).random(300)
    ours = stats.bootstrap_ci(values, seed=5)
    assert ours == stats.bootstrap_ci(values, seed=5) and ours != stats.bootstrap_ci(values, seed=6)
    ref = st.bootstrap((values,), np.mean, n_resamples=3000, method="percentile", random_state=1).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.006) and ours[1] == pytest.approx(ref.high, abs=0.006)
    assert stats.bootstrap_ci([0.4] * 10) == (0.4, 0.4)


def test_paired_interval_resamples_pairs_together() -> None:
    a = np.linspace(0, 1, 50)
    lo, hi = stats.paired_bootstrap_ci(a + 0.1, a)  # constant difference: a degenerate interval
    assert lo == pytest.approx(0.1, abs=1e-12) and hi == pytest.approx(0.1, abs=1e-12)


def test_wilcoxon_exact_by_hand() -> None:
    assert stats.wilcoxon([1, 2, 3, 4, 5, 6], [0] * 6) == pytest.approx(2 / 64, abs=1e-12)  # all 6 signs positive
    assert stats.wilcoxon([1, 2, 3], [1, 2, 3]) == 1.0


def test_holm_by_hand() -> None:
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
    assert stats.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002], abs=1e-15)
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0]


def test_rank_biserial_by_hand() -> None:
    assert stats.rank_biserial([3, 1, 2], [0, 2, 0]) == pytest.approx((3 + 2 - 1) / 6)  # |d| ranks 3, 1, 2
    assert stats.rank_biserial([1, 1], [1, 1]) == 0.0
    assert stats.rank_biserial([2, 3], [1, 1]) == 1.0


def test_rank_correlations_by_hand() -> None:
    tau, _ = stats.kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
    assert tau == pytest.approx(4 / 6)  # 5 concordant, 1 discordant pair
    tau_b, _ = stats.kendall_tau_b([1, 1, 2, 3], [1, 2, 3, 4])
    assert tau_b == pytest.approx(5 / np.sqrt(5 * 6))  # one pair tied in x
    rho, _ = stats.spearman([1, 2, 3, 4], [1, 3, 2, 4])
    assert rho == pytest.approx(1 - 6 * 2 / (4 * 15))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.bootstrap_ci([0.1, float("nan")]), "values: query 1 is nan"),
        (lambda: stats.bootstrap_ci([]), "non-empty"),
        (lambda: stats.wilcoxon([1, 2], [1]), "differ in length"),
        (lambda: stats.holm([0.2, 1.5]), "must lie in"),
        (lambda: stats.kendall_tau_b([1, 1], [1, 2]), "same score"),
        (lambda: stats.spearman([1], [1]), "at least two"),
    ],
)
def test_bad_input(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()
