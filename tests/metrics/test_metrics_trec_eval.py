"""trec_eval as the referee of `metrics.core`: AP, reciprocal rank, nDCG@k and Recall@k per query.

The referee is `pytrec-eval-terrier` (the trec_eval C code that mteb uses; `dev` extra). trec_eval sorts a run by
score descending and breaks exact ties by document id descending (strcmp), so the documents get ids that make that
order equal to the pool order: pool position i is named ``d{n-1-i:05d}``. Under that naming, our ``ties="stable"``
(earlier pool position first) and trec_eval rank every candidate identically, and every per-query value must agree
to 1e-12, on random scores and on heavily tied scores.
"""

from __future__ import annotations

import numpy as np
import pytest

from metrics.core import compute, rank_scores

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-12
CUTS = (1, 5, 10, 20)
TREC = {
    "map": "map",
    "mrr": "recip_rank",
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in CUTS},
    **{f"recall@{k}": f"recall_{k}" for k in CUTS},
}


def _docno(i: int, n: int) -> str:
    return f"d{n - 1 - i:05d}"  # descending id = ascending pool position (trec_eval's tie order)


def trec_values(scores: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    n_q, n_c = scores.shape
    qrel = {f"q{q}": {_docno(i, n_c): 1 for i in np.flatnonzero(labels[q])} for q in range(n_q)}
    run = {f"q{q}": {_docno(i, n_c): float(scores[q, i]) for i in range(n_c)} for q in range(n_q)}
    measures = {"map", "recip_rank", "ndcg_cut." + ",".join(map(str, CUTS)), "recall." + ",".join(map(str, CUTS))}
    result = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)
    return {ours: np.array([result[f"q{q}"][theirs] for q in range(n_q)]) for ours, theirs in TREC.items()}


def ours(scores: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    return compute(rank_scores(scores, labels, ties="stable"), list(TREC))


def _labels(rng: np.random.Generator, n_q: int, n_c: int) -> np.ndarray:
    labels = np.zeros((n_q, n_c), dtype=np.int8)
    for q in range(n_q):
        labels[q, rng.choice(n_c, size=int(rng.integers(1, 8)), replace=False)] = 1
    return labels


@pytest.mark.parametrize("seed", [0, 1])
def test_random_scores_agree_with_trec_eval(seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.random((40, 300))
    labels = _labels(rng, 40, 300)
    expected, got = trec_values(scores, labels), ours(scores, labels)
    for name in TREC:
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=TOL, err_msg=name)


@pytest.mark.parametrize("levels", [2, 5])
def test_tied_scores_agree_with_trec_eval_under_its_tie_order(levels: int) -> None:
    rng = np.random.default_rng(levels)
    scores = rng.integers(0, levels, size=(40, 200)).astype(np.float64) / levels  # many exact ties
    labels = _labels(rng, 40, 200)
    expected, got = trec_values(scores, labels), ours(scores, labels)
    for name in TREC:
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=TOL, err_msg=name)


def test_the_tie_order_matters() -> None:
    """All scores tied: the positive's rank is its pool position for us and its id order for trec_eval."""
    scores = np.full((1, 4), 0.5)
    labels = np.array([[0, 0, 1, 0]], dtype=np.int8)
    assert trec_values(scores, labels)["mrr"].tolist() == [1 / 3]
    assert ours(scores, labels)["mrr"].tolist() == [1 / 3]
    qrel = {"q": {"a": 1}}
    flipped = pytrec_eval.RelevanceEvaluator(qrel, {"recip_rank"}).evaluate({"q": {"a": 0.5, "b": 0.5}})
    assert flipped["q"]["recip_rank"] == 0.5  # "b" > "a": b first
