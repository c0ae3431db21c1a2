"""Same reference task: "find this exact item" (paper A.2 "Same reference", B.3).

Queries use reference images of products that have at least two images (distinct products first, in a seeded
order); positives are the product's other images; the pool adds `VISUAL_QUOTA` visually similar images of other
products and random images of other products up to `pool_size`, shuffled. The request cycles through the six
`names.SAME_TEMPLATES` of the domain in construction order and is serialized like a constraints query.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from triad_dataset.contract import names
from triad_dataset.contract.serialize import constraints_query_text
from triad_dataset.sources.catalog import Catalog
from triad_dataset.tracks.constraints_gate import visual_similarity
from triad_dataset.tracks.shared import VISUAL_QUOTA, ImageCache, base_query_row, role_means


def same_references(catalog: Catalog, n_queries: int, rng: np.random.Generator) -> list[int]:
    """One reference per product with >= 2 images (seeded order); more queries reuse products with other images."""
    products = catalog.product_codes
    counts = np.bincount(products)
    eligible = np.flatnonzero(counts[products] >= 2)
    if len(eligible) == 0:
        raise ValueError(f"{catalog.source}: no product has two images; the Same task needs several per product")
    order = eligible[rng.permutation(len(eligible))]
    chosen: list[int] = []
    used: set[int] = set()
    per_product: Counter[int] = Counter()
    for round_ in range(int(counts.max())):  # round r uses each product at most r + 1 times
        for position in order:
            if len(chosen) == n_queries:
                return chosen
            product = int(products[position])
            if int(position) in used or per_product[product] > round_:
                continue
            chosen.append(int(position))
            used.add(int(position))
            per_product[product] += 1
    if len(chosen) < n_queries:
        raise ValueError(f"{catalog.source}: only {len(chosen)} Same references available, {n_queries} requested")
    return chosen


def build_same(
    catalog: Catalog, n_queries: int, images: ImageCache, *, pool_size: int = names.POOL_SIZE, seed: int = 0
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """same_<d> rows and their audit."""
    domain = catalog.domain
    rng = np.random.default_rng([seed, names.DOMAINS.index(domain), 3])
    products = catalog.product_codes
    templates = names.SAME_TEMPLATES[domain]
    rows = []
    references = same_references(catalog, n_queries, rng)
    for i, reference in enumerate(tqdm(references, desc=f"same_{domain}", unit="query", leave=False)):
        own = products == products[reference]
        positive = np.flatnonzero(own & (np.arange(len(catalog)) != reference))
        others = np.flatnonzero(~own)
        if len(positive) + len(others) < pool_size:
            raise ValueError(f"{catalog.source}: {len(others)} other-product items, too few for pools of {pool_size}")
        similarity = visual_similarity(catalog, reference)[others]
        order = np.lexsort((rng.random(len(others)), -similarity))
        n_visual = min(VISUAL_QUOTA, pool_size - len(positive))
        visual = others[order[:n_visual]]
        rest = others[order[n_visual:]]
        fill = rng.choice(rest, size=pool_size - len(positive) - n_visual, replace=False)
        pool = np.concatenate([positive, visual, fill])
        roles = [names.POSITIVE] * len(positive) + [names.VISUAL] * n_visual + [names.RANDOM] * len(fill)
        shuffle = rng.permutation(len(pool))
        ids = [catalog.items[int(pool[k])].item_id for k in shuffle]
        roles = [roles[k] for k in shuffle]
        request = templates[i % len(templates)]  # paper B.3: six fixed templates, cycled in construction order
        row = base_query_row(f"same_{domain}", f"same-{domain}-{i:04d}")
        row.update(
            query_text=constraints_query_text(domain, catalog.items[reference].attributes, request),
            query_image=images(reference),
            query_image_id=catalog.items[reference].item_id,
            candidate_ids=ids,
            candidate_roles=roles,
            candidate_trap=[False] * len(ids),
            positive_ids=[c for c, r in zip(ids, roles, strict=True) if r == names.POSITIVE],
        )
        rows.append(row)
    n = max(len(rows), 1)
    audit = {
        "queries": len(rows),
        "mean_positives": round(sum(len(r["positive_ids"]) for r in rows) / n, 4),
        "mean_per_role": role_means(rows),
        "query_image_in_pool": sum(r["query_image_id"] in r["candidate_ids"] for r in rows),
    }
    return rows, audit
