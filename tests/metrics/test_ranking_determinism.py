"""Identical candidate vectors get bit-identical scores wherever they sit.

BLAS kernels compute the edge tiles of a matrix product with other code than the inner tiles, so on some CPUs
(seen on AMD EPYC) two identical columns of `queries @ items.T` differ in the last bit depending on their position.
`_adversarial_product` makes that happen on every machine: it perturbs the last bit of each output column by the
column's position. The ranking must not care: ties keep pool (gallery) order and duplicates share one score.
"""

from __future__ import annotations

import numpy as np
import pytest

from model_adapters.ranks import ranking


def _adversarial_product(queries: np.ndarray, items: np.ndarray) -> np.ndarray:
    """queries @ items.T with the last bit of column j moved up when j is odd (a position-dependent kernel)."""
    out = (queries.astype(np.float64) @ items.T.astype(np.float64)).astype(np.float32)
    odd = np.arange(out.shape[1]) % 2 == 1
    out[:, odd] = np.nextafter(out[:, odd], np.float32(np.inf))
    return out


@pytest.fixture(params=["blas", "adversarial"])
def product(request, monkeypatch):
    if request.param == "adversarial":
        monkeypatch.setattr(ranking, "_product", _adversarial_product)
    return request.param


def _duplicated_corpus(
    rng: np.random.Generator, n_items: int, n_distinct: int, dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """Raw (unnormalized) item vectors: `n_distinct` vectors, each copied to random positions; and which."""
    base = rng.standard_normal((n_distinct, dim)).astype(np.float32) * 3
    which = rng.permutation(np.arange(n_items) % n_distinct)
    return base[which], which


def _assert_duplicates_tie(scores: np.ndarray, which: np.ndarray) -> None:
    """Per query row, all slots holding the same source vector carry bit-identical scores."""
    bits = scores.view(np.uint32)
    for q in range(scores.shape[0]):
        for v in np.unique(which[q]):
            assert np.unique(bits[q, which[q] == v]).size == 1, f"query {q}: copies of vector {v} differ"


def test_identical_vectors_tie_exactly_in_wide_pools_of_a_large_corpus(product):
    rng = np.random.default_rng(7)
    raw, which = _duplicated_corpus(rng, n_items=6007, n_distinct=13, dim=67)  # odd sizes: edge tiles everywhere
    items = ranking.normalize(raw)
    queries = ranking.normalize(rng.standard_normal((41, 67)))
    pools = np.stack([rng.permutation(6007)[:1000] for _ in range(41)])
    scores = ranking.pool_scores(queries, items, pools)
    _assert_duplicates_tie(scores, which[pools])
    order, sorted_scores = ranking.rank_pools(queries, items, pools)
    for q in range(41):  # among equal scores, pool order is kept
        same = sorted_scores[q][1:] == sorted_scores[q][:-1]
        assert (order[q][1:][same] > order[q][:-1][same]).all()


def test_identical_vectors_tie_when_the_corpus_dwarfs_the_pools(product):
    rng = np.random.default_rng(8)
    raw, which = _duplicated_corpus(rng, n_items=4001, n_distinct=600, dim=9)
    items = ranking.normalize(raw)
    queries = ranking.normalize(rng.standard_normal((30, 9)))
    pools = np.stack([rng.permutation(4001)[:5] for _ in range(30)])  # 600 distinct > 64 x 5: per-block products
    pools = np.concatenate([pools, pools[:, ::-1]], axis=1)  # every vector at two positions of the same pool
    _assert_duplicates_tie(ranking.pool_scores(queries, items, pools), which[pools])


def test_constant_vectors_keep_pool_order(product):
    items = ranking.normalize(np.ones((2500, 33), dtype=np.float32))
    queries = ranking.normalize(np.random.default_rng(0).standard_normal((17, 33)))
    pools = np.stack([np.random.default_rng(q).permutation(2500)[:1000] for q in range(17)])
    order, _ = ranking.rank_pools(queries, items, pools)
    assert (order == np.arange(1000)).all()


def test_normalize_gives_copies_the_same_bits():
    rng = np.random.default_rng(1)
    raw, which = _duplicated_corpus(rng, n_items=999, n_distinct=5, dim=31)  # rows at every memory alignment
    normed = ranking.normalize(raw)
    for v in range(5):
        assert np.unique(normed[which == v].view(np.uint32), axis=0).shape[0] == 1


def test_gallery_duplicates_tie_and_rank_by_gallery_position(product):
    rng = np.random.default_rng(2)
    raw, which = _duplicated_corpus(rng, n_items=5003, n_distinct=11, dim=67)
    gallery = ranking.normalize(raw)
    queries = ranking.normalize(rng.standard_normal((23, 67)))
    positives = rng.integers(0, 5003, size=23)
    idx, scores, ranks = ranking.rank_gallery(queries, gallery, positives, top=100)
    full = ranking._product(queries, gallery[ranking.unique_rows(gallery)[0]])  # one score per distinct vector
    for q in range(23):
        group = which[idx[q]]
        for v in np.unique(group):  # copies in the top 100 share one score and appear in gallery order
            assert np.unique(scores[q][group == v]).size == 1
            assert (np.diff(idx[q][group == v]) > 0).all()
        # the positive's rank: every vector scoring higher, and its own copies before it in the gallery
        per_item = full[q][ranking.unique_rows(gallery)[1]]
        p = positives[q]
        expected = 1 + int((per_item > per_item[p]).sum()) + int((which[:p] == which[p]).sum())
        assert ranks[q] == expected
