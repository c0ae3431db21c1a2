"""Pieces the constraints, state and same builders share (paper A.2-A.4): one module below all three.

The constraints plan (`QueryPlan`, which state reuses turn by turn), the empty query row of a product config, the
per-build image cache, the `<d>_items` corpus rows, the audit figures (role means, profile mix, gate re-check) and
the largest-remainder scaling of a per-1,000 mix. constraints.py, state.py and same.py import this module and none
imports another track's builder; editions/domain.py runs the three.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from triad_dataset.contract import names
from triad_dataset.contract.rule import VIOL, Condition, RuleChecker
from triad_dataset.contract.serialize import candidate_text
from triad_dataset.sources.catalog import Catalog

VISUAL_QUOTA = 50  # visually similar negatives per pool (paper A.2 fills "visually similar, then random")


def scaled_counts(mix: Mapping[Any, int], total: int) -> dict[Any, int]:
    """Scale a per-1,000 mix to `total` by largest remainder (ties: mix order).

    >>> scaled_counts(names.PROFILE_MIX_PER_1000, 120)
    {'D1': 21, 'D2': 15, 'D3': 21, 'D4': 15, 'D5': 18, 'D6': 15, 'D7': 15}
    """
    weight = sum(mix.values())
    exact = {k: total * v / weight for k, v in mix.items()}
    counts = {k: int(np.floor(x)) for k, x in exact.items()}
    order = sorted(mix, key=lambda k: (-(exact[k] - counts[k]), list(mix).index(k)))
    for k in order[: total - sum(counts.values())]:
        counts[k] += 1
    return counts


@dataclass
class QueryPlan:
    """One constraints query: reference, conditions and its labelled pool (positions into the catalog)."""

    query_id: str
    profile: str
    reference: int
    target: int
    conditions: tuple[Condition, ...]
    request: str = ""
    pool: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    roles: list[str] = field(default_factory=list)


def base_query_row(task: str, query_id: str) -> dict[str, Any]:
    """Every docs/protocol.md §1 query column of a product config, null where it does not apply."""
    return {
        "query_id": query_id,
        "task": task,
        "query_text": None,
        "query_image": None,
        "query_image_id": None,
        "instruction": None,
        "candidate_ids": [],
        "candidate_roles": [],
        "candidate_trap": [],
        "positive_ids": [],
        "positive_hops": None,
        "depth": None,
        "profile": None,
        "conditions": None,
        "turns": None,
        "session_type": None,
        "num_turns": None,
        "source_query_id": None,
    }


class ImageCache:
    """Encoded images by catalog position, so a picture is rendered or read once per build."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.cache: dict[int, dict[str, Any]] = {}

    def __call__(self, position: int) -> dict[str, Any]:
        if position not in self.cache:
            self.cache[position] = self.catalog.image_value(position)
        return self.cache[position]


def hidden_attributes(catalog: Catalog, position: int) -> str:
    """The hidden labels of an item as sorted-key JSON (visible fields live in their own columns)."""
    visible = set(catalog.schema.visible_fields)
    attrs = catalog.items[position].attributes
    return json.dumps({k: v for k, v in sorted(attrs.items()) if k not in visible}, sort_keys=True, ensure_ascii=False)


def corpus_rows(catalog: Catalog, images: ImageCache) -> list[dict[str, Any]]:
    """`<d>_items`: item_id, image, text, attributes (hidden, JSON), product_id, visible fields."""
    rows = []
    for position, item in enumerate(tqdm(catalog.items, desc=f"{catalog.domain} corpus", unit="item", leave=False)):
        row = {
            "item_id": item.item_id,
            "image": images(position),
            "text": candidate_text(catalog.domain, item.attributes),
            "attributes": hidden_attributes(catalog, position),
            "product_id": item.product_id,
        }
        row.update({f: item.attributes.get(f) or None for f in catalog.schema.visible_fields})
        rows.append(row)
    return rows


def role_means(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Mean count per role per query (a role absent from a query counts 0; paper Table 7)."""
    totals = dict.fromkeys(names.ROLES, 0)
    for row in rows:
        for role in row["candidate_roles"]:
            totals[role] += 1
    n = max(len(rows), 1)
    return {role: round(total / n, 4) for role, total in totals.items() if total}


def attribute_classes(catalog: Catalog) -> tuple[list[int], list[dict[str, str]]]:
    """Items grouped by identical attributes: class id per item and one attribute dict per class."""
    lookup: dict[tuple, int] = {}
    members: list[dict[str, str]] = []
    classes = []
    for item in catalog.items:
        key = tuple(sorted(item.attributes.items()))
        if key not in lookup:
            lookup[key] = len(members)
            members.append(item.attributes)
        classes.append(lookup[key])
    return classes, members


def gate_violations(catalog: Catalog, rows: Sequence[Mapping[str, Any]]) -> int:
    """Negatives that do not fail the complete positive rule, re-checked with the pure-Python evaluator, plus
    positives that do not satisfy it and query images inside their own pool (must all be 0)."""
    schema, index, items = catalog.schema, catalog.index, catalog.items
    classes, members = attribute_classes(catalog)
    bad = 0
    for row in rows:
        conditions = [Condition.from_row(c) for c in row["conditions"]]
        check = RuleChecker(schema, items[index[row["query_image_id"]]].attributes, conditions)
        memo: dict[int, int] = {}  # items with identical attributes share one evaluation
        for item_id, role in zip(row["candidate_ids"], row["candidate_roles"], strict=True):
            key = classes[index[item_id]]
            if key not in memo:
                memo[key] = check(members[key])
            if (role == names.POSITIVE) != (memo[key] == 0) or (role != names.POSITIVE and memo[key] != VIOL):
                bad += 1
        bad += row["query_image_id"] in row["candidate_ids"]
    return bad


def mix_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Profile mix (paper A.2) and P/N condition counts of product query rows."""
    profiles = dict.fromkeys(names.PROFILES, 0)
    polarity = dict.fromkeys(names.POLARITIES, 0)
    for row in rows:
        profiles[row["profile"]] += 1
        for c in row["conditions"]:
            polarity[c["polarity"]] += 1
    return {"profile_mix": profiles, "conditions": polarity}
