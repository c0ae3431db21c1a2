"""The reference product's category per constraints / state query, for the paper's C.3 standardized comparisons.

Paper C.3 forms strata "by product category and explicit attribute-name combination". The category is a hidden label
(never a query column), so scoring reads it from the corpus: `with_reference_categories(folder, gold)` adds
``reference_category`` (the value of the schema's `category_attribute`, schema.py) to copies of the gold rows of the
product configs; other rows are returned unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from triad_dataset.contract import names as n
from triad_dataset.contract.schema import schemas_from_audit
from triad_dataset.folder import io as folder

REFERENCE_CATEGORY = n.REFERENCE_CATEGORY


def reference_categories(directory: str | os.PathLike, domain: str) -> dict[str, str]:
    """item_id -> category label of every item of the domain's corpus ("" when the item has none)."""
    category = schemas_from_audit(folder.read_audit(directory))[domain].category_attribute
    table = folder.read_table(directory, n.DOMAIN_CORPUS[domain], columns=["item_id", "attributes"])
    out = {}
    for item, attributes in zip(
        table.column("item_id").to_pylist(), table.column("attributes").to_pylist(), strict=True
    ):
        out[item] = str(json.loads(attributes or "{}").get(category) or "")
    return out


def with_reference_categories(
    directory: str | os.PathLike, gold: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, list[Mapping[str, Any]]]:
    """Gold rows with ``reference_category`` added to the constraints / state rows (copies; others as they are)."""
    out: dict[str, list[Mapping[str, Any]]] = {c: list(rows) for c, rows in gold.items()}
    present = set(folder.list_configs(directory))
    for domain, configs in zip(n.DOMAINS, zip(n.CONSTRAINTS_CONFIGS, n.STATE_CONFIGS, strict=True), strict=True):
        wanted = [c for c in configs if c in out]
        if not wanted or n.DOMAIN_CORPUS[domain] not in present:
            continue
        categories = reference_categories(directory, domain)
        for c in wanted:
            out[c] = [
                {**row, REFERENCE_CATEGORY: categories.get(row.get("query_image_id") or "", "")} for row in out[c]
            ]
    return out
