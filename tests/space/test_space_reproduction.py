"""The reproduction check's judgement (spaces_app/reproduction.py) against brute force: the tie range is the
lowest and highest AP over every order of a small pool that keeps each pair farther apart than the tolerance in
the model's order, and the favourable-end p-value is the share of all 2^n sign flips whose sum is as large."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spaces_app import reproduction, status, verify


def _brute_range(scores: np.ndarray, positive: np.ndarray, tol: float) -> tuple[float, float]:
    aps = []
    n = len(scores)
    for perm in itertools.permutations(range(n)):
        at = {c: k for k, c in enumerate(perm)}
        if any(scores[i] - scores[j] > tol and at[i] > at[j] for i in range(n) for j in range(n)):
            continue
        ranks = [at[i] + 1 for i in range(n) if positive[i]]
        aps.append(np.mean([(k + 1) / r for k, r in enumerate(sorted(ranks))]))
    return min(aps), max(aps)


@pytest.mark.parametrize("seed", range(12))
def test_tie_range_is_the_brute_force_range(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 7
    scores = np.round(rng.uniform(0, 0.05, n), 3)  # a tolerance of 0.01 ties some pairs, not others
    positive = rng.random(n) < 0.4
    positive[rng.integers(n)] = True
    low, high = reproduction.tie_range(scores, positive, 0.01)
    blow, bhigh = _brute_range(scores, positive, 0.01)
    assert low == pytest.approx(blow, abs=1e-12) and high == pytest.approx(bhigh, abs=1e-12)
    own = reproduction.average_precision(reproduction.own_ranks(scores, positive), int(positive.sum()))
    assert low - 1e-12 <= own <= high + 1e-12  # the model's own order is one of them


@pytest.mark.parametrize("seed", range(6))
def test_favourable_p_is_the_share_of_sign_flips(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.02, 0.05, 10), 3)
    steps = np.rint(np.abs(d) / reproduction.GRID)
    observed = float(np.sum(np.sign(d) * steps))
    flips = [float(np.sum(np.array(s) * steps)) for s in itertools.product((-1, 1), repeat=len(d))]
    assert reproduction.favourable_p(d) == pytest.approx(np.mean([f >= observed - 1e-9 for f in flips]), abs=1e-12)


def _pool(scores: list[float], positive: list[bool]) -> verify.Pool:
    return verify.Pool([f"c{i}" for i in range(len(scores))], np.array(scores, dtype=np.float32), np.array(positive))


def test_judge_names_the_query_outside_its_range() -> None:
    """A positive submitted first although a negative outscores it by more than the tolerance: outside the range,
    and the status cell says which query and both APs."""
    pool = _pool([0.9, 0.5, 0.1], [False, True, False])
    sample = {"queries": {"state_cars": [{"query_id": "q1", "ranked": [["c1", 1], ["c0", 2], ["c2", 3]]}]}}
    state, result = verify.judge(sample, {"state_cars": {"q1": pool}})
    assert state == verify.FAILED and result["outside_tie_range"] == 1
    assert result["outside_listed"][0] == {
        "config": "state_cars",
        "query_id": "q1",
        "ap": 1.0,
        "own": 0.5,
        "range": [0.5, 0.5],
    }
    assert "query q1: AP 1.00, the model's own 0.50" in status.failures(result)[1]


def test_judge_fails_positives_always_first_inside_the_tolerance() -> None:
    """Every query's positive listed first inside a near-tie: each query is in range, but all differ one way."""
    queries, pools = [], {}
    for q in range(20):
        pools[f"q{q}"] = _pool([0.504, 0.500, 0.1], [False, True, False])
        queries.append({"query_id": f"q{q}", "ranked": [["c1", 1], ["c0", 2], ["c2", 3]]})
    state, result = verify.judge({"queries": {"state_cars": queries}}, {"state_cars": pools})
    assert state == verify.FAILED and result["outside_tie_range"] == 0 and result["disagreeing"] == 0
    assert result["favourable"]["above"] == 20 and result["favourable"]["p"] == pytest.approx(2.0**-20, rel=1e-3)
    assert status.failures(result) == [
        "AP above the model's own on 20 of 20 queries that differ, p = 9.5e-07: not noise"
    ]
    # the same near-tie listed either way, half and half: noise, verified
    for q in queries[::2]:
        q["ranked"] = [["c0", 1], ["c1", 2], ["c2", 3]]
    assert verify.judge({"queries": {"state_cars": queries}}, {"state_cars": pools})[0] == verify.VERIFIED
