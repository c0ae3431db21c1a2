"""Constraints track construction (paper A.2): planning, pools and rows of `constraints_<d>` (docs/CONTRACTS.md §2).

A constraints query is planned from a (reference, target) pair: the target shares the reference's hard attributes
and differs from it in exactly the attributes the profile's conditions name, so at least one positive exists;
positives are then every catalog item satisfying the complete rule (constraints_gate.py). Pools: all positives,
typed negatives up to `names.NEGATIVE_QUOTAS`, `VISUAL_QUOTA` visual negatives (highest `visual_similarity`,
seeded tie-break), then random gate-passing items to `pool_size`; the pool order is a seeded shuffle (so position
never hints at relevance). Same seed and catalog -> identical rows. The pieces state.py and same.py reuse live in
shared.py; editions/domain.py builds the three tracks of a domain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from triad_dataset.contract import names
from triad_dataset.contract.rule import Condition
from triad_dataset.contract.schema import CONSTRAINT, HARD, MODIFIABLE, NEG, POS
from triad_dataset.contract.serialize import constraints_query_text, phrase, request_text, reveals_reference
from triad_dataset.sources.catalog import Catalog
from triad_dataset.tracks.constraints_gate import Statuses, statuses, visual_similarity
from triad_dataset.tracks.shared import (
    VISUAL_QUOTA,
    ImageCache,
    QueryPlan,
    base_query_row,
    gate_violations,
    mix_figures,
    role_means,
    scaled_counts,
)

MAX_POSITIVES = 20  # a planned query with more positives is redrawn (keeps pools informative; paper silent)
TARGETS_PER_REFERENCE = 8  # targets tried per reference before moving to the next reference
MINI_QUERIES = 120  # mini edition: >= 100 queries per config
MINI_SAME_QUERIES = 120


# ---------------------------------------------------------------------------------------------- planning


class Planner:
    """Finds (reference, target, conditions) triples for the profiles of one domain."""

    def __init__(self, catalog: Catalog, pool_size: int, rng: np.random.Generator) -> None:
        self.catalog, self.pool_size, self.rng = catalog, pool_size, rng
        schema = catalog.schema
        self.hard = [j for j, a in enumerate(schema.attributes) if a.role == HARD]
        self.constraint = np.array(schema.columns(CONSTRAINT))
        self.modifiable = np.array(schema.columns(MODIFIABLE), dtype=np.int64)
        values = catalog.codes.values
        hard = values[:, self.hard] if self.hard else np.zeros((len(catalog), 1), dtype=np.int32)
        _, group = np.unique(hard, axis=0, return_inverse=True)
        self.group = group.reshape(-1)
        order = np.argsort(self.group, kind="stable")
        bounds = np.flatnonzero(np.diff(self.group[order])) + 1
        self.members = {int(self.group[m[0]]): m for m in np.split(order, bounds)}
        self.used: set[int] = set()
        self.references = rng.permutation(len(catalog))
        self.cursor = 0

    def _targets(self, reference: int, k: int) -> np.ndarray:
        """Items of the reference's hard group differing from it in exactly k constraint attributes, each change
        a clear one (different family, both applicable), every other constraint attribute identical and the
        modifiable changes within the schema's budget."""
        codes = self.catalog.codes
        members = self.members[int(self.group[reference])]
        cols = self.constraint
        values, families = codes.values[np.ix_(members, cols)], codes.families[np.ix_(members, cols)]
        ref_values, ref_families = codes.values[reference, cols], codes.families[reference, cols]
        diff = values != ref_values
        clear = diff & (families != ref_families) & (values >= 0) & (ref_values >= 0)
        ok = (diff.sum(axis=1) == k) & (diff == clear).all(axis=1)
        schema = self.catalog.schema
        changed = codes.values[np.ix_(members, self.modifiable)] != codes.values[reference, self.modifiable]
        for m, j in enumerate(self.modifiable):  # free_with: a named (changed) attribute frees this one
            frees = [k for k, c in enumerate(cols) if schema.names[c] in schema.attributes[j].free_with]
            if frees:
                changed[:, m] &= ~diff[:, frees].any(axis=1)
        ok &= changed.sum(axis=1) <= schema.modifiable_budget  # the target itself is a positive
        return members[ok]

    def _conditions(self, reference: int, target: int, n_pos: int, n_neg: int) -> tuple[Condition, ...] | None:
        schema, codes = self.catalog.schema, self.catalog.codes
        cols = [int(j) for j in self.constraint if codes.values[target, j] != codes.values[reference, j]]
        negable = [j for j in cols if schema.attributes[j].allow_negative]
        if len(negable) < n_neg:
            return None
        negative = sorted(int(j) for j in self.rng.choice(negable, size=n_neg, replace=False)) if n_neg else []
        positive = [j for j in cols if j not in negative]
        ref_attrs = self.catalog.items[reference].attributes
        tgt_attrs = self.catalog.items[target].attributes
        out = []
        for j in positive:  # paper A.2: a positive condition names only the target value (or a comparative)
            a = schema.attributes[j]
            if a.ordered and a.comparatives:
                up = a.rank(tgt_attrs[a.name]) > a.rank(ref_attrs[a.name])
                out.append(Condition(a.name, POS, a.comparatives[1] if up else a.comparatives[0]))
            else:
                out.append(Condition(a.name, POS, tgt_attrs[a.name]))
        for j in negative:  # a negative condition excludes the reference's own value and may name it
            a = schema.attributes[j]
            out.append(Condition(a.name, NEG, ref_attrs[a.name]))
        return tuple(out)

    def plan(self, query_id: str, profile: str) -> tuple[QueryPlan, Statuses]:
        n_pos, n_neg = names.PROFILES[profile]
        n_refs = len(self.references)
        for _ in range(n_refs):
            reference = int(self.references[self.cursor % n_refs])
            self.cursor += 1
            if reference in self.used:
                continue
            targets = self._targets(reference, n_pos + n_neg)
            for target in self.rng.permutation(targets)[:TARGETS_PER_REFERENCE]:
                conditions = self._conditions(reference, int(target), n_pos, n_neg)
                if conditions is None:
                    continue
                pos, neg = condition_phrases(self.catalog.domain, conditions)
                request = request_text(pos, neg, self.rng)
                if reveals_reference(self.catalog.items[reference].attributes, conditions, request):
                    continue  # paper A.2: the request must not disclose the reference's value
                status = statuses(self.catalog, reference, conditions)
                n_positive = int(status.positive.sum())
                eligible = int(status.gate.sum()) - 1  # the reference itself fails the rule but never enters
                if 1 <= n_positive <= MAX_POSITIVES and eligible >= self.pool_size - n_positive:
                    self.used.add(reference)
                    return QueryPlan(query_id, profile, reference, int(target), conditions, request), status
        raise ValueError(
            f"{self.catalog.source}: no reference/target pair left for profile {profile} "
            f"(query {query_id}): a query needs 1-{MAX_POSITIVES} positives and at least "
            f"{self.pool_size} items failing its positive rule; the catalog is too small or too uniform"
        )


# ------------------------------------------------------------------------------------------------ pools


def assemble_pool(
    catalog: Catalog,
    reference: int,
    status: Statuses,
    quotas: Mapping[str, int],
    pool_size: int,
    rng: np.random.Generator,
    visual_quota: int = VISUAL_QUOTA,
) -> tuple[np.ndarray, list[str]]:
    """Positives, typed negatives (quota each), visual, then random fill; shuffled. Never the reference."""
    positive = np.flatnonzero(status.positive)
    available = status.gate.copy()
    available[reference] = False
    parts, roles = [positive], [names.POSITIVE] * len(positive)
    for role, mask in status.typed().items():  # paper A.2: typed quotas 8/8/8/4 (Fashion), 5/5/3/3 (Cars)
        candidates = np.flatnonzero(mask & available)
        pick = rng.choice(candidates, size=min(quotas.get(role, 0), len(candidates)), replace=False)
        available[pick] = False
        parts.append(pick)
        roles += [role] * len(pick)
    room = pool_size - len(roles)
    if room < 0:
        raise ValueError(f"{catalog.items[reference].item_id}: positives and typed negatives exceed pool {pool_size}")
    candidates = np.flatnonzero(available)
    similarity = visual_similarity(catalog, reference)[candidates]
    order = np.lexsort((rng.random(len(candidates)), -similarity))
    visual = candidates[order[: min(visual_quota, room)]]
    available[visual] = False
    parts.append(visual)
    roles += [names.VISUAL] * len(visual)
    candidates = np.flatnonzero(available)
    fill = pool_size - len(roles)
    if fill > len(candidates):
        raise ValueError(
            f"{catalog.items[reference].item_id}: only {len(roles) + len(candidates)} eligible "
            f"candidates for a pool of {pool_size}"
        )
    pick = rng.choice(candidates, size=fill, replace=False)
    parts.append(pick)
    roles += [names.RANDOM] * len(pick)
    pool = np.concatenate(parts).astype(np.int64)
    shuffle = rng.permutation(len(pool))
    return pool[shuffle], [roles[i] for i in shuffle]


# ------------------------------------------------------------------------------------------------ rows


def constraints_row(catalog: Catalog, plan: QueryPlan, images: ImageCache) -> dict[str, Any]:
    items = catalog.items
    ids = [items[p].item_id for p in plan.pool]
    row = base_query_row(f"constraints_{catalog.domain}", plan.query_id)
    row.update(
        query_text=constraints_query_text(catalog.domain, items[plan.reference].attributes, plan.request),
        query_image=images(plan.reference),
        query_image_id=items[plan.reference].item_id,
        candidate_ids=ids,
        candidate_roles=list(plan.roles),
        candidate_trap=[False] * len(ids),
        positive_ids=[i for i, r in zip(ids, plan.roles, strict=True) if r == names.POSITIVE],
        profile=plan.profile,
        conditions=[c.to_row() for c in plan.conditions],
    )
    return row


def condition_phrases(domain: str, conditions: Sequence[Condition]) -> tuple[list[str], list[str]]:
    pos = [phrase(domain, c.attribute, POS, c.value) for c in conditions if c.polarity == POS]
    neg = [phrase(domain, c.attribute, NEG, c.value) for c in conditions if c.polarity == NEG]
    return pos, neg


def plan_constraints(
    catalog: Catalog, n_queries: int, *, pool_size: int = names.POOL_SIZE, seed: int = 0
) -> list[QueryPlan]:
    """Plan and pool `n_queries` constraints queries with the paper's profile mix (paper A.2)."""
    domain = catalog.domain
    rng = np.random.default_rng([seed, names.DOMAINS.index(domain), 1])
    counts = scaled_counts(names.PROFILE_MIX_PER_1000, n_queries)  # paper A.2: fixed D1-D7 proportions
    profiles = [p for p, c in counts.items() for _ in range(c)]
    profiles = [profiles[i] for i in rng.permutation(len(profiles))]
    planner = Planner(catalog, pool_size, rng)
    plans = []
    for i, profile in enumerate(tqdm(profiles, desc=f"constraints_{domain}", unit="query", leave=False)):
        plan, status = planner.plan(f"{domain}-{i:04d}", profile)
        plan.pool, plan.roles = assemble_pool(
            catalog, plan.reference, status, names.NEGATIVE_QUOTAS[domain], pool_size, rng
        )
        plans.append(plan)
    return plans


# ------------------------------------------------------------------------------------------------ audit


def constraints_audit(catalog: Catalog, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    n = max(len(rows), 1)
    return {
        "queries": len(rows),
        "mean_positives": round(sum(len(r["positive_ids"]) for r in rows) / n, 4),
        "mean_per_role": role_means(rows),
        "pool_sizes": sorted({len(r["candidate_ids"]) for r in rows}),
        **mix_figures(rows),
        "gate_violations": gate_violations(catalog, rows),
    }
