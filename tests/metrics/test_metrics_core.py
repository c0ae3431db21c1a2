"""metrics.core: hand-computed values, brute-force tie expectations, properties, and independent implementations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.core import (
    any_in_topk,
    average_precision,
    compute,
    coverage_at_k,
    hit_at_k,
    hop_ap,
    ndcg_at_k,
    oracle_ap_at_k,
    pad_ragged,
    pooled_rate,
    precision_at_k,
    rank_from_order,
    rank_scores,
    recall_at_k,
    reciprocal_rank,
    reranked_ap,
    resolve,
    splice_rerank,
    top1_hit,
    topk_counts,
)
from metrics.core.api import ark_scores
from metrics.core.ark import ndcg_at_rank, recall_at_rank, validate_ranks


def _one(scores, labels, ties="stable"):
    return rank_scores([scores], [labels], ties=ties)


# --- hand-computed cases ------------------------------------------------------------------------------------
def test_ap_several_positives() -> None:
    r = _one([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 0, 0])
    assert average_precision(r)[0] == pytest.approx((1 / 1 + 2 / 3) / 2, abs=1e-15)
    assert reciprocal_rank(r)[0] == 1.0 and top1_hit(r)[0] == 1.0
    assert recall_at_k(r, 1)[0] == 0.5 and recall_at_k(r, 3)[0] == 1.0
    assert precision_at_k(r, 3)[0] == pytest.approx(2 / 3, abs=1e-15)


def test_positives_at_the_very_end() -> None:
    r = _one([5.0, 4.0, 3.0, 2.0, 1.0], [0, 0, 0, 1, 1])
    assert average_precision(r)[0] == pytest.approx((1 / 4 + 2 / 5) / 2, abs=1e-15)
    assert reciprocal_rank(r)[0] == 0.25 and top1_hit(r)[0] == 0.0
    assert ndcg_at_k(r, 3)[0] == 0.0 and recall_at_k(r, 4)[0] == 0.5
    dcg = 1 / math.log2(5) + 1 / math.log2(6)
    assert ndcg_at_k(r, 5)[0] == pytest.approx(dcg / (1 + 1 / math.log2(3)), abs=1e-15)


def test_every_candidate_positive() -> None:
    r = _one([0.3, 0.1, 0.2], [1, 1, 1])
    assert average_precision(r)[0] == 1.0 and reciprocal_rank(r)[0] == 1.0 and ndcg_at_k(r, 2)[0] == 1.0
    assert recall_at_k(r, 2)[0] == pytest.approx(2 / 3, abs=1e-15) and recall_at_k(r, 10)[0] == 1.0


def test_k_larger_than_pool() -> None:
    r = _one([0.1, 0.3, 0.2], [0, 1, 1])  # ranked labels: 1, 1, 0
    assert recall_at_k(r, 50)[0] == 1.0 and hit_at_k(r, 50)[0] == 1.0
    assert ndcg_at_k(r, 50)[0] == pytest.approx(1.0, abs=1e-15)
    assert precision_at_k(r, 10)[0] == pytest.approx(0.2, abs=1e-15)  # trec_eval/ranx: divided by k
    r2 = _one([0.3, 0.2, 0.1], [0, 1, 1])  # ranked labels: 0, 1, 1
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(r2, 10)[0] == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal, abs=1e-15)


def test_ties_stable_and_expected_by_hand() -> None:
    stable = _one([0.5, 0.5, 0.5], [0, 1, 0])
    assert average_precision(stable)[0] == 0.5  # tie broken by position: the positive is second
    expected = _one([0.5, 0.5, 0.5], [0, 1, 0], ties="expected")
    assert average_precision(expected)[0] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3, abs=1e-15)
    assert top1_hit(expected)[0] == pytest.approx(1 / 3, abs=1e-15)
    assert reciprocal_rank(expected)[0] == pytest.approx(11 / 18, abs=1e-15)
    # two positives tied with one negative behind a leading negative: orderings of {+,+,-} at ranks 2..4
    exp2 = _one([0.9, 0.4, 0.4, 0.4], [0, 1, 1, 0], ties="expected")
    aps = [(1 / 2 + 2 / 3) / 2, (1 / 2 + 2 / 4) / 2, (1 / 3 + 2 / 4) / 2]  # -++ gaps: ++-, +-+, -++
    assert average_precision(exp2)[0] == pytest.approx(sum(aps) / 3, abs=1e-15)


def test_all_tied_expected_ap_matches_closed_form() -> None:
    """Random-ranking expectation E[AP] = H_N/N + (P-1)(N-H_N)/(N(N-1)) (derived from eq. 1 by linearity)."""
    n = 1000
    h = sum(1 / i for i in range(1, n + 1))
    labels = np.zeros((5, n), dtype=np.int8)
    for p in range(1, 6):
        labels[p - 1, :p] = 1
    r = rank_scores(np.zeros((5, n)), labels, ties="expected")
    want = [h / n + (p - 1) * (n - h) / (n * (n - 1)) for p in range(1, 6)]
    np.testing.assert_allclose(average_precision(r), want, rtol=0, atol=1e-12)


def test_entry_rates_and_traps_pooled_over_queries() -> None:
    scores = [[0.9, 0.8, 0.7, 0.6], [0.1, 0.4, 0.3, 0.2]]
    labels = [[1, 0, 0, 0], [0, 1, 0, 0]]
    r = rank_scores(scores, labels)
    sibling = np.array([[False, True, True, False], [False, False, False, True]])
    num, den = topk_counts(r, sibling, 2)  # q0: sibling at ranks 2, 3; q1: at rank 3
    assert num.tolist() == [1.0, 0.0] and den.tolist() == [2.0, 1.0]
    assert pooled_rate(num, den) == pytest.approx(1 / 3, abs=1e-15)
    assert pooled_rate(np.zeros(2), np.zeros(2)) is None
    trap = np.array([[False, False, False, True], [False, False, True, False]])
    assert any_in_topk(r, trap, 2).tolist() == [0.0, 1.0]


def test_two_stage_by_hand() -> None:
    first = _one([9, 8, 7, 6, 5, 4], [0, 0, 1, 0, 0, 1])
    assert coverage_at_k(first, 3)[0] == 0.5
    assert oracle_ap_at_k(first, 3)[0] == pytest.approx((1 + 2 / 6) / 2, abs=1e-15)
    rer = [[0.2, 0.1, 0.2]]  # ties keep first-stage order: ranks 1 and 3 tie -> 1 first
    assert splice_rerank(first, rer).tolist() == [[0, 2, 1, 3, 4, 5]]
    assert reranked_ap(first, rer)[0] == pytest.approx((1 / 2 + 2 / 6) / 2, abs=1e-15)
    with pytest.raises(ValueError, match="rerank_scores must have shape"):
        reranked_ap(first, [[0.1] * 7])


def test_per_hop_keeps_or_compresses_other_hop_positives() -> None:
    hops = np.array([[0, 2, 1, 0, 2], [1, 0, 0, 0, 0]])
    r = rank_scores([[5, 4, 3, 2, 1], [5, 4, 3, 2, 1]], hops > 0)
    hop1 = hop_ap(r, hops, 1)
    assert hop1.tolist() == [1 / 3, 1.0]
    assert hop_ap(r, hops, 1, compress=True).tolist() == [0.5, 1.0]
    hop2 = hop_ap(r, hops, 2)
    assert hop2[0] == pytest.approx((1 / 2 + 2 / 5) / 2, abs=1e-15) and math.isnan(hop2[1])
    assert hop_ap(r, hops, 2, compress=True)[0] == pytest.approx(
        (1 / 2 + 2 / 4) / 2, abs=1e-15
    )  # hop-1 at rank 3 removed


def test_ark_rank_kernels() -> None:
    ranks = validate_ranks([1, 2, 5, 11, 30])
    assert recall_at_rank(ranks, 10).tolist() == [1, 1, 1, 0, 0]
    np.testing.assert_allclose(ndcg_at_rank(ranks, 20), [1, 1 / math.log2(3), 1 / math.log2(6), 1 / math.log2(12), 0])
    for bad in ([0], [1.5], [-3], [float("nan")]):
        with pytest.raises(ValueError, match="query 0"):
            validate_ranks(bad)


def test_ark_scores_agree_with_rank_kernels() -> None:
    rng = np.random.default_rng(3)
    scores = rng.random((40, 60))
    labels = np.zeros((40, 60), dtype=int)
    labels[np.arange(40), rng.integers(0, 60, 40)] = 1
    ranks = 1 + (scores > scores[labels == 1][:, None]).sum(axis=1)
    out = ark_scores(scores.tolist(), labels.tolist())
    for k in (1, 5, 10):
        assert out[f"recall@{k}"] == pytest.approx(recall_at_rank(ranks, k).mean(), abs=1e-12)
    for k in (5, 10, 20):
        assert out[f"ndcg@{k}"] == pytest.approx(ndcg_at_rank(ranks, k).mean(), abs=1e-12)


# --- brute force: expected mode == mean over all orderings ---------------------------------------------------
def _all_orderings(scores: np.ndarray) -> np.ndarray:
    """Every ordering by descending score, each tie-break permutation once (uniform within tied groups)."""
    n = scores.size
    orders = [sorted(range(n), key=lambda i, key=key: (-scores[i], key[i])) for key in itertools.permutations(range(n))]
    return np.asarray(orders)


@pytest.mark.parametrize("seed", range(12))
def test_expected_ties_equal_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    scores = rng.integers(0, 3, n).astype(float)  # many ties
    labels = rng.integers(0, 2, n)
    labels[rng.integers(0, n)] = 1
    flags = rng.integers(0, 2, n).astype(bool)
    orders = _all_orderings(scores)
    every = rank_from_order(orders, np.tile(labels, (len(orders), 1)))
    exp = rank_scores([scores], [labels], ties="expected")
    k = int(rng.integers(1, n + 1))
    pairs = [
        (average_precision(exp), average_precision(every)),
        (reciprocal_rank(exp), reciprocal_rank(every)),
        (top1_hit(exp), top1_hit(every)),
        (recall_at_k(exp, k), recall_at_k(every, k)),
        (ndcg_at_k(exp, k), ndcg_at_k(every, k)),
        (hit_at_k(exp, k), hit_at_k(every, k)),
        (topk_counts(exp, flags[None], k)[0], topk_counts(every, np.tile(flags, (len(orders), 1)), k)[0]),
        (any_in_topk(exp, flags[None], k), any_in_topk(every, np.tile(flags, (len(orders), 1)), k)),
    ]
    for got, brute in pairs:
        assert got[0] == pytest.approx(brute.mean(), abs=1e-12)


# --- properties ----------------------------------------------------------------------------------------------
@st.composite
def _query(draw, max_n: int = 12):
    n = draw(st.integers(1, max_n))
    scores = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    labels[draw(st.integers(0, n - 1))] = 1
    return np.asarray(scores, dtype=float), np.asarray(labels)


def _reference_ap(scores: np.ndarray, labels: np.ndarray) -> float:
    """Plain-Python AP over a stable sort (Python's sort is stable: ties keep pool order)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    hits, total = 0, 0.0
    for rank, i in enumerate(order, start=1):
        if labels[i]:
            hits += 1
            total += hits / rank
    return total / int(labels.sum())


@settings(max_examples=150, deadline=None)
@given(_query(), st.sampled_from(["stable", "expected"]), st.integers(-1000, 1000))
def test_ap_properties(query, ties: str, shift: int) -> None:
    scores, labels = query
    ap = average_precision(_one(scores, labels, ties))[0]
    assert 0.0 <= ap <= 1.0 + 1e-12
    assert average_precision(_one(scores + shift, labels, ties))[0] == pytest.approx(ap, abs=1e-12)
    perfect = average_precision(_one(labels.astype(float), labels, ties))[0]
    assert perfect == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(_query(), st.sampled_from(["stable", "expected"]))
def test_single_positive_ap_is_reciprocal_rank(query, ties: str) -> None:
    scores, labels = query
    labels = np.zeros_like(labels)
    labels[int(np.argmin(scores))] = 1
    r = _one(scores, labels, ties)
    assert average_precision(r)[0] == pytest.approx(reciprocal_rank(r)[0], abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(_query())
def test_stable_mode_equals_python_stable_sort(query) -> None:
    scores, labels = query
    assert average_precision(_one(scores, labels))[0] == pytest.approx(_reference_ap(scores, labels), abs=1e-12)


# --- independent implementations -----------------------------------------------------------------------------
def test_agrees_with_sklearn_average_precision() -> None:
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(2, 300))
        scores = rng.random(n)  # continuous: no ties
        labels = (rng.random(n) < rng.uniform(0.01, 0.9)).astype(int)
        labels[rng.integers(0, n)] = 1
        ours = average_precision(_one(scores, labels))[0]
        assert ours == pytest.approx(average_precision_score(labels, scores), abs=1e-9)


@pytest.mark.slow
def test_agrees_with_ranx() -> None:
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(11)
    n_q, n_c = 25, 80
    scores = rng.random((n_q, n_c))
    labels = (rng.random((n_q, n_c)) < 0.08).astype(int)
    labels[np.arange(n_q), rng.integers(0, n_c, n_q)] = 1
    qrels = ranx.Qrels({f"q{q}": {f"d{c}": 1 for c in np.flatnonzero(labels[q])} for q in range(n_q)})
    run = ranx.Run({f"q{q}": {f"d{c}": float(scores[q, c]) for c in range(n_c)} for q in range(n_q)})
    names = ["map", "mrr", "ndcg@10", "recall@5"]  # each ranx metric is a numba JIT compile: keep the list short
    theirs = ranx.evaluate(qrels, run, names, make_comparable=True)
    ours = compute(rank_scores(scores, labels), names)
    for ranx_name, (name, values) in zip(names, ours.items(), strict=True):
        assert float(values.mean()) == pytest.approx(theirs[ranx_name], abs=1e-9), name


@pytest.mark.parametrize(
    ("positives", "probabilities"),
    [((1, 2, 3, 4, 5), (0.50, 0.30, 0.15, 0.03, 0.02)), ((5,), (1.0,))],  # I2C-like mean 1.77; C2I: 5 positives
)
def test_random_scores_give_the_papers_random_map(positives, probabilities) -> None:
    rng = np.random.default_rng(2027)
    n_q, n_c = 1000, 1000
    counts = rng.choice(positives, size=n_q, p=probabilities)
    labels = (np.arange(n_c)[None, :] < counts[:, None]).astype(np.int8)
    per_query = average_precision(rank_scores(rng.random((n_q, n_c)), labels))
    # the exact random-ranking expectation: every candidate tied, expected-ties mode (paper eq. 2)
    exact = float(average_precision(rank_scores(np.zeros((n_q, n_c)), labels, ties="expected")).mean())
    assert 0.008 <= round(exact, 3) <= 0.011  # paper B.1: random-ranking mAP 0.008-0.011 (three decimals)
    standard_error = per_query.std() / math.sqrt(n_q)
    assert abs(float(per_query.mean()) - exact) < 4 * standard_error


# --- bad input ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([[0.1, 0.2], [0.3, float("nan")]], [[1, 0], [0, 1]], "query 1: score at candidate 1 is nan"),
        ([[0.1, float("inf")]], [[1, 0]], "query 0: score at candidate 1 is inf"),
        ([[0.1, 0.2], [0.3, 0.4]], [[1, 0], [0, 0]], "query 1: has no positive"),
        ([[0.1, 0.2]], [[1, 2]], "query 0: label at candidate 1 is 2"),
        ([[0.1, 0.2]], [[1, 0.5]], "query 0: label at candidate 1 is 0.5"),
        ([[0.1, 0.2]], [[1, 0, 1]], "labels shape"),
        ([0.1, 0.2], [1, 0], "2-D"),
    ],
)
def test_bad_input_names_the_query(scores, labels, message) -> None:
    with pytest.raises(ValueError, match=message):
        rank_scores(scores, labels)


def test_bad_ragged_input_names_the_query() -> None:
    with pytest.raises(ValueError, match="query 1: 2 scores but 3 labels"):
        pad_ragged([[0.1], [0.2, 0.3]], [[1], [1, 0, 0]])
    with pytest.raises(ValueError, match="2 score lists but 1 label lists"):
        pad_ragged([[0.1], [0.2]], [[1]])
    with pytest.raises(ValueError, match="query 0: has no candidate"):
        pad_ragged([[]], [[]])
    with pytest.raises(ValueError, match="no queries"):
        pad_ragged([], [])
    with pytest.raises(ValueError, match="no queries"):
        rank_scores(np.zeros((0, 3)), np.zeros((0, 3)))


def test_ragged_pools_ignore_padding() -> None:
    s, y, m = pad_ragged([[0.2, 0.9, 0.1], [0.5]], [[1, 0, 0], [1]])
    r = rank_scores(s, y, m)
    assert average_precision(r).tolist() == [0.5, 1.0]
    assert recall_at_k(r, 5).tolist() == [1.0, 1.0]


def test_registry_names_and_errors() -> None:
    r = _one([0.9, 0.1], [0, 1])
    assert resolve("ndcg@1")(r)[0] == 0.0
    for bad in ("ndcg", "map@10", "nope", 3):
        with pytest.raises(ValueError, match="valid: map, top1_hit, mrr, recall@<k>, precision@<k>, ndcg@<k>, hit@<k>"):
            resolve(bad)
    for bad in ("ndcg@0", "ndcg@x"):
        with pytest.raises(ValueError, match="must be a positive integer"):
            resolve(bad)
    with pytest.raises(ValueError, match="ties='random'"):
        rank_scores([[0.1]], [[1]], ties="random")


def test_counted_ranks_and_top_k_equal_a_full_stable_sort() -> None:
    """The no-sort fast paths (counted positive ranks, partitioned top k) agree with an explicit stable sort."""
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 6, (50, 40)).astype(float)  # heavy ties
    labels = (rng.random((50, 40)) < 0.15).astype(int)
    labels[:, 7] = 1
    mask = np.ones((50, 40), dtype=bool)
    mask[::3, 30:] = False  # ragged pools
    labels[~mask] = 0
    fast = rank_scores(scores, labels, mask)
    keyed = np.where(mask, -scores, np.inf)
    slow = rank_from_order(np.argsort(keyed, axis=1, kind="stable"), labels, mask)
    np.testing.assert_array_equal(fast.positive_ranks, slow.positive_ranks)
    for k in (1, 5, 33, 40, 60):
        np.testing.assert_array_equal(fast.in_top_k(k), slow.in_top_k(k))
    np.testing.assert_array_equal(fast.order, slow.order)
