"""State track: constraints queries rewritten as 2-3 turn dialogues with the same final intent (paper A.3).

Sessions per source condition count follow `names.SESSION_MIX_PER_1000` (1-condition -> two-turn conflict;
2-condition -> three-turn conflict or two-turn natural; 3-condition -> three-turn natural), assigned and worded
with seed `names.STATE_SEED`. Natural sessions add one condition per turn. Conflict sessions first state a
superseded value of one condition and later revise it (P: another value of a different family than both the
target and the reference, or the opposite comparative; N: excluding another value). Every state query keeps the
reference, the final active conditions (the revised one carries `old_value`), the complete positive set and the
source pool with its typed negatives; `conflict_trap` candidates satisfy the superseded value, violate the final
one and satisfy every other active condition and preserved attribute. In-pool traps are flagged
(`candidate_trap`, overlaying their role, paper Table 7); up to `TRAP_ADD[domain]` more replace random fillers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from triad_dataset.contract import names
from triad_dataset.contract.rule import SAT, VIOL, Condition, rule_status
from triad_dataset.contract.schema import CARS, FASHION, POS
from triad_dataset.contract.serialize import phrase, reveals_reference, state_query_text, turn_text
from triad_dataset.sources.catalog import Catalog
from triad_dataset.tracks.constraints_gate import condition_status, preserved_status
from triad_dataset.tracks.shared import (
    ImageCache,
    QueryPlan,
    base_query_row,
    gate_violations,
    mix_figures,
    role_means,
    scaled_counts,
)

NATURAL, CONFLICT = names.SESSION_TYPES
# Exclusive traps added per conflict query (paper A.3 retention 0.9986 / 0.9971 -> ~3 Fashion, ~6 Cars).
TRAP_ADD = {FASHION: 3, CARS: 6}


def assign_sessions(plans: Sequence[QueryPlan], rng: np.random.Generator) -> list[tuple[str, int]]:
    """(session type, turns) per plan, with the docs/protocol.md §2 mix scaled to the plans of each condition count."""
    out: list[tuple[str, int] | None] = [None] * len(plans)
    by_count: dict[int, list[int]] = {}
    for i, plan in enumerate(plans):
        by_count.setdefault(len(plan.conditions), []).append(i)
    for k, indexes in sorted(by_count.items()):
        mix = {(t, turns): w for (t, turns, src), w in names.SESSION_MIX_PER_1000.items() if src == k}
        if not mix:
            raise ValueError(f"no session type is built from {k}-condition queries (names.SESSION_MIX_PER_1000)")
        order = [indexes[i] for i in rng.permutation(len(indexes))]
        cursor = 0
        for session, count in scaled_counts(mix, len(indexes)).items():
            for i in order[cursor : cursor + count]:
                out[i] = session
            cursor += count
    return [s for s in out if s is not None]


class Session:
    """The dialogue, final conditions and trap mask of one state query."""

    def __init__(self, catalog: Catalog, plan: QueryPlan, session: tuple[str, int], rng: np.random.Generator):
        self.catalog, self.plan, self.rng = catalog, plan, rng
        self.session_type, self.num_turns = session
        self.conditions = list(plan.conditions)
        self.traps = np.zeros(len(catalog), dtype=bool)
        self.superseded: Condition | None = None
        self.turns = self._natural() if self.session_type == NATURAL else self._conflict()

    def _phrase(self, c: Condition, value: str | None = None) -> str:
        return phrase(self.catalog.domain, c.attribute, c.polarity, value if value is not None else c.value)

    def _natural(self) -> list[str]:
        order = [self.conditions[i] for i in self.rng.permutation(len(self.conditions))]
        return [
            turn_text("first" if i == 0 else "add", self._phrase(c), self.rng, polarity=c.polarity)
            for i, c in enumerate(order)
        ]

    def _superseded(self, index: int, base: np.ndarray) -> Condition:
        """An earlier value for condition `index`; prefers one that some catalog items (traps) carry."""
        catalog, c = self.catalog, self.conditions[index]
        schema, codes = catalog.schema, catalog.codes
        a = schema.attribute(c.attribute)
        if c.polarity == POS and a.ordered and a.comparatives and c.value in a.comparatives:
            return Condition(c.attribute, POS, a.comparatives[0] if c.value == a.comparatives[1] else a.comparatives[1])
        j = schema.index(c.attribute)
        reference = catalog.items[self.plan.reference].attributes[c.attribute]
        target = catalog.items[self.plan.target].attributes[c.attribute]
        forbidden = {a.family(reference), a.family(target), a.family(c.value)}
        vocab = codes.vocab[j]
        ref_attrs = catalog.items[self.plan.reference].attributes
        allowed = [
            v
            for v in range(len(vocab))
            if a.family(vocab[v]) not in forbidden
            and not reveals_reference(ref_attrs, self.conditions, self._phrase(c, vocab[v]))
        ]  # paper A.2: never disclose the reference value
        if not allowed:
            raise ValueError(f"{self.plan.query_id}: no superseded value available for {c.attribute}")
        if c.polarity == POS:
            carried = np.bincount(codes.values[base, j][codes.values[base, j] >= 0], minlength=len(vocab))
            with_traps = [v for v in allowed if carried[v] > 0]
            allowed = with_traps or allowed
        return Condition(c.attribute, c.polarity, vocab[int(self.rng.choice(allowed))])

    def _conflict(self) -> list[str]:
        catalog, plan = self.catalog, self.plan
        per_condition = [condition_status(catalog, plan.reference, c) for c in self.conditions]
        preserved_ok = preserved_status(catalog, plan.reference, self.conditions) == SAT
        options = []
        for i, status in enumerate(per_condition):
            others = (
                np.all([s == SAT for k, s in enumerate(per_condition) if k != i], axis=0)
                if len(per_condition) > 1
                else np.ones(len(catalog), dtype=bool)
            )
            base = preserved_ok & others & (status == VIOL)
            old = self._superseded(i, base)
            traps = base & (condition_status(catalog, plan.reference, old) == SAT)
            traps[plan.reference] = False
            options.append((i, old, traps))
        with_traps = [o for o in options if o[2].any()]
        index, old, traps = (with_traps or options)[int(self.rng.integers(len(with_traps or options)))]
        self.superseded, self.traps = old, traps
        c = self.conditions[index]
        self.conditions[index] = Condition(c.attribute, c.polarity, c.value, old_value=old.value)
        label = catalog.schema.attribute(c.attribute).label
        first = turn_text("first", self._phrase(old), self.rng, polarity=old.polarity)
        revise = turn_text("revise", self._phrase(c), self.rng, label=label)
        if len(self.conditions) == 1:  # two-turn conflict: state a value, then revise it
            return [first, revise]
        other = self.conditions[1 - index]
        layout = int(self.rng.integers(3))
        if layout == 0:
            return [first, turn_text("add", self._phrase(other), self.rng), revise]
        if layout == 1:
            return [
                turn_text("first", self._phrase(other), self.rng, polarity=other.polarity),
                turn_text("add", self._phrase(old), self.rng),
                revise,
            ]
        return [first, revise, turn_text("add", self._phrase(other), self.rng)]


def trap_pool(session: Session, domain: str, rng: np.random.Generator) -> tuple[list[int], list[str], list[bool]]:
    """The source pool with in-pool traps flagged and up to TRAP_ADD exclusive traps replacing random fillers."""
    pool = [int(p) for p in session.plan.pool]
    roles = list(session.plan.roles)
    flags = [bool(session.traps[p]) for p in pool]
    if session.session_type != CONFLICT:
        return pool, roles, flags
    outside = session.traps.copy()
    outside[np.asarray(pool, dtype=np.int64)] = False
    extra = np.flatnonzero(outside)
    extra = rng.choice(extra, size=min(TRAP_ADD[domain], len(extra)), replace=False)
    replaceable = [i for i, r in enumerate(roles) if r == names.RANDOM] or [
        i for i, r in enumerate(roles) if r == names.VISUAL
    ]
    slots = rng.choice(replaceable, size=min(len(extra), len(replaceable)), replace=False)
    for slot, item in zip(slots, extra, strict=False):
        pool[int(slot)], roles[int(slot)], flags[int(slot)] = int(item), names.CONFLICT_TRAP, True
    return pool, roles, flags


def build_state(
    catalog: Catalog, plans: Sequence[QueryPlan], images: ImageCache, *, seed: int = 0
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """state_<d> rows paired with the constraints plans (same query_id), and the state audit."""
    domain = catalog.domain
    rng = np.random.default_rng([names.STATE_SEED, seed, names.DOMAINS.index(domain)])  # paper A.3: seed 42
    sessions = assign_sessions(plans, rng)
    rows, built = [], []
    pairs = list(zip(plans, sessions, strict=True))
    for plan, session_kind in tqdm(pairs, desc=f"state_{domain}", unit="query", leave=False):
        session = Session(catalog, plan, session_kind, rng)
        pool, roles, flags = trap_pool(session, domain, rng)
        items = catalog.items
        ids = [items[p].item_id for p in pool]
        row = base_query_row(f"state_{domain}", plan.query_id)
        row.update(
            query_text=state_query_text(domain, items[plan.reference].attributes, session.turns),
            query_image=images(plan.reference),
            query_image_id=items[plan.reference].item_id,
            candidate_ids=ids,
            candidate_roles=roles,
            candidate_trap=flags,
            positive_ids=[i for i, r in zip(ids, roles, strict=True) if r == names.POSITIVE],
            profile=plan.profile,
            conditions=[c.to_row() for c in session.conditions],
            turns=session.turns,
            session_type=session.session_type,
            num_turns=len(session.turns),
            source_query_id=plan.query_id,
        )
        rows.append(row)
        built.append(session)
    return rows, state_audit(catalog, plans, rows, built)


def trap_violations(catalog: Catalog, rows: Sequence[dict[str, Any]], sessions: Sequence[Session]) -> int:
    """Flagged traps that do not satisfy the superseded request or do satisfy the final one (pure Python)."""
    schema, index, items = catalog.schema, catalog.index, catalog.items
    bad = 0
    for row, session in zip(rows, sessions, strict=True):
        final = [Condition.from_row(c) for c in row["conditions"]]
        if session.superseded is None:
            bad += sum(row["candidate_trap"])
            continue
        earlier = [session.superseded if c.old_value is not None else c for c in final]
        reference = items[index[row["query_image_id"]]].attributes
        for item_id, flag in zip(row["candidate_ids"], row["candidate_trap"], strict=True):
            if flag:
                attrs = items[index[item_id]].attributes
                ok = (
                    rule_status(schema, reference, attrs, earlier) == SAT
                    and rule_status(schema, reference, attrs, final) == VIOL
                )
                bad += not ok
    return bad


def state_audit(
    catalog: Catalog, plans: Sequence[QueryPlan], rows: Sequence[dict[str, Any]], sessions: Sequence[Session]
) -> dict[str, Any]:
    mix = {f"{t}-{turns}": 0 for (t, turns, _) in names.SESSION_MIX_PER_1000}
    conflict = covered = flags = exclusive = 0
    retention, mismatches = [], 0
    for plan, row in zip(plans, rows, strict=True):
        mix[f"{row['session_type']}-{row['num_turns']}"] += 1
        n_traps = sum(row["candidate_trap"])
        flags += n_traps
        exclusive += row["candidate_roles"].count(names.CONFLICT_TRAP)
        if row["session_type"] == CONFLICT:
            conflict += 1
            covered += n_traps > 0
        source = {catalog.items[p].item_id for p in plan.pool}
        retention.append(len(source & set(row["candidate_ids"])) / max(len(source), 1))
        final = [(c["attribute"], c["polarity"], c["value"]) for c in row["conditions"]]
        mismatches += final != [(c.attribute, c.polarity, c.value) for c in plan.conditions] or set(
            row["positive_ids"]
        ) != {catalog.items[p].item_id for p, r in zip(plan.pool, plan.roles, strict=True) if r == names.POSITIVE}
    n = max(len(rows), 1)
    return {
        "queries": len(rows),
        "mean_positives": round(sum(len(r["positive_ids"]) for r in rows) / n, 4),
        "mean_per_role": role_means(rows),
        **mix_figures(rows),
        "session_mix": mix,
        "traps": flags,
        "exclusive_traps": exclusive,
        "mean_traps_per_query": round(flags / n, 4),
        "trap_coverage": {
            "conflict_queries": conflict,
            "with_trap": covered,
            "share": round(covered / conflict, 4) if conflict else None,
        },
        "mean_retention": round(float(np.mean(retention)) if retention else 1.0, 6),
        "pairing_mismatches": mismatches,
        "gate_violations": gate_violations(catalog, rows),
        "trap_violations": trap_violations(catalog, rows, sessions),
    }
