"""One domain's constraints + state + same build (docs/CONTRACTS.md §2): the orchestration above the three tracks.

The three tracks (tracks/constraints.py, state.py, same.py) share what they share through tracks/shared.py and
never import each other; this module runs them on one catalog and adds the `<d>_items` corpus.
"""

from __future__ import annotations

from triad_dataset.contract import names
from triad_dataset.contract.records import BuildResult
from triad_dataset.contract.schema import schema_to_json
from triad_dataset.sources.catalog import Catalog
from triad_dataset.tracks.constraints import (
    MINI_QUERIES,
    MINI_SAME_QUERIES,
    constraints_audit,
    constraints_row,
    plan_constraints,
)
from triad_dataset.tracks.same import build_same
from triad_dataset.tracks.shared import ImageCache, corpus_rows
from triad_dataset.tracks.state import build_state


def build_domain(
    domain: str, catalog: Catalog, *, n_queries: int, same_queries: int, pool_size: int = names.POOL_SIZE, seed: int = 0
) -> BuildResult:
    """constraints_<d>, state_<d>, same_<d> and <d>_items from one catalog (docs/CONTRACTS.md §2)."""
    if catalog.domain != domain:
        raise ValueError(f"catalog {catalog.source} is a {catalog.domain} catalog, not {domain}")
    images = ImageCache(catalog)
    plans = plan_constraints(catalog, n_queries, pool_size=pool_size, seed=seed)
    constraints = [constraints_row(catalog, plan, images) for plan in plans]
    state, state_audit = build_state(catalog, plans, images, seed=seed)
    same, same_audit = build_same(catalog, same_queries, images, pool_size=pool_size, seed=seed)
    corpus = corpus_rows(catalog, images)
    c_config, corpus_config = f"constraints_{domain}", names.DOMAIN_CORPUS[domain]
    audit = {
        c_config: constraints_audit(catalog, constraints),
        f"state_{domain}": state_audit,
        f"same_{domain}": same_audit,
        corpus_config: {
            "items": len(catalog),
            "products": len({i.product_id for i in catalog.items}),
            "skipped_rows": catalog.skipped,
            "source": catalog.source,
            "schema": schema_to_json(catalog.schema),
        },
    }
    tables = {c_config: constraints, f"state_{domain}": state, f"same_{domain}": same, corpus_config: corpus}
    return BuildResult(tables, audit)


def build_mini_domain(domain: str, seed: int = 0) -> BuildResult:
    """The mini edition of one domain: synthetic catalog, 120 queries per config, full 1,000-candidate pools."""
    from triad_dataset.sources.synthetic import synthetic_catalog

    catalog = synthetic_catalog(domain, seed=seed)
    return build_domain(domain, catalog, n_queries=MINI_QUERIES, same_queries=MINI_SAME_QUERIES, seed=seed)
