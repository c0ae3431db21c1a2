"""Same reference task (paper A.2, B.3): positives are the other images of the reference product."""

from __future__ import annotations

import numpy as np
import pytest

from tests.datasets.test_constraints import fashion
from triad_dataset.contract import names as n
from triad_dataset.tracks.same import build_same, same_references
from triad_dataset.tracks.shared import ImageCache

# products: A has 3 images, B has 2, C..H one each (never a Same reference)
ITEMS = {
    "a1": {},
    "a2": {},
    "a3": {},
    "b1": {"colour": "Blue"},
    "b2": {"colour": "Blue"},
    **{
        f"{p}1": {"colour": c}
        for p, c in zip("cdefgh", ["Green", "Black", "White", "Grey", "Pink", "Teal"], strict=True)
    },
}
PRODUCTS = {i: i[0] for i in ITEMS}


@pytest.fixture(scope="module")
def catalog():
    return fashion(ITEMS, product=PRODUCTS)


def test_references_cover_distinct_products_first(catalog) -> None:
    refs = [catalog.items[i].item_id for i in same_references(catalog, 2, np.random.default_rng(0))]
    assert sorted(r[0] for r in refs) == ["a", "b"]
    more = [catalog.items[i].item_id for i in same_references(catalog, 5, np.random.default_rng(0))]
    assert len(set(more)) == 5 and set(more) == {"a1", "a2", "a3", "b1", "b2"}
    with pytest.raises(ValueError, match="only 5 Same references"):
        same_references(catalog, 6, np.random.default_rng(0))


def test_same_rows_positives_templates_and_pools(catalog) -> None:
    rows, audit = build_same(catalog, 5, ImageCache(catalog), pool_size=9, seed=0)
    for i, row in enumerate(rows):
        ref = row["query_image_id"]
        product = PRODUCTS[ref]
        assert set(row["positive_ids"]) == {x for x, p in PRODUCTS.items() if p == product and x != ref}
        assert ref not in row["candidate_ids"] and len(row["candidate_ids"]) == len(set(row["candidate_ids"])) == 9
        template = n.SAME_TEMPLATES["fashion"][i % 6]  # cycled in construction order (paper B.3)
        assert row["query_text"].endswith(f"User query: {template}")
        assert set(row["candidate_roles"]) <= {n.POSITIVE, n.VISUAL, n.RANDOM}
        assert row["task"] == "same_fashion" and row["profile"] is None and row["conditions"] is None
    assert audit["queries"] == 5 and audit["query_image_in_pool"] == 0
    assert audit["mean_positives"] == round((2 + 2 + 2 + 1 + 1) / 5, 4)


def test_same_refuses_a_catalog_without_multi_image_products() -> None:
    single = fashion({"x": {}, "y": {"colour": "Blue"}})
    with pytest.raises(ValueError, match="no product has two images"):
        build_same(single, 1, ImageCache(single), pool_size=1)
