"""State track (paper A.3): session mix, dialogues, superseded values, traps and pairing — hand-made catalogs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.datasets.test_constraints import fashion
from triad_dataset.contract import names as n
from triad_dataset.contract.rule import Condition
from triad_dataset.contract.serialize import phrase
from triad_dataset.editions.domain import build_domain
from triad_dataset.sources.synthetic import synthetic_catalog
from triad_dataset.tracks.shared import QueryPlan
from triad_dataset.tracks.state import Session, assign_sessions, trap_pool

TEES = {
    f"tee{i}": {"category": "Tshirts", "gender": "Men", "length": "", "pattern": "solid", "colour": "Black"}
    for i in range(5)
}
CATALOG = {
    "ref": {},
    "mate": {},
    "target": {"colour": "Green"},
    "blue": {"colour": "Blue"},  # only colour differs: a trap for an earlier "in blue"
    "blue_floral": {"colour": "Blue", "pattern": "floral"},  # breaks the preserved pattern: never a trap
    **TEES,
}


@pytest.fixture(scope="module")
def catalog():
    return fashion(CATALOG, product={"mate": "ref"})


def plan(catalog, conditions, pool_ids, roles, profile="D1") -> QueryPlan:
    at = catalog.index
    return QueryPlan(
        "q0",
        profile,
        at["ref"],
        at["target"],
        tuple(conditions),
        pool=np.array([at[i] for i in pool_ids]),
        roles=list(roles),
    )


def test_session_mix_follows_the_paper() -> None:
    plans = []
    for profile, count in n.PROFILE_MIX_PER_1000.items():
        k = sum(n.PROFILES[profile])
        plans += [QueryPlan(f"q{len(plans)}", profile, 0, 0, (Condition("colour", "P", "Red"),) * k)] * count
    sessions = assign_sessions(plans, np.random.default_rng(n.STATE_SEED))
    mix: dict[tuple, int] = {}
    for p, (kind, turns) in zip(plans, sessions, strict=True):
        key = (kind, turns, len(p.conditions))
        mix[key] = mix.get(key, 0) + 1
    assert mix == n.SESSION_MIX_PER_1000
    # every 8th plan: D1..D7 = 22, 16, 22, 15, 19, 16, 15 -> 38 one-, 56 two-, 31 three-condition sources
    few = assign_sessions(plans[::8], np.random.default_rng(0))
    assert sorted((s, few.count(s)) for s in set(few)) == [
        (("conflict", 2), 38),
        (("conflict", 3), 28),
        (("natural", 2), 28),
        (("natural", 3), 31),
    ]


def test_conflict_session_states_then_revises_a_value(catalog) -> None:
    p = plan(catalog, [Condition("colour", "P", "Green")], ["target", "tee0"], [n.POSITIVE, n.RANDOM])
    session = Session(catalog, p, ("conflict", 2), np.random.default_rng(0))
    # the only earlier colour that some catalog item carries, outside the reference's (red) and the target's
    # (green) families, is blue
    assert session.superseded == Condition("colour", "P", "Blue")
    assert session.conditions == [Condition("colour", "P", "Green", old_value="Blue")]
    assert {catalog.items[i].item_id for i in np.flatnonzero(session.traps)} == {"blue"}
    first, revise = session.turns
    assert "blue" in first and "green" in revise and "colour" in revise
    assert all("red" not in t.lower() for t in session.turns)  # never the reference's own value


def test_negative_revision_traps_and_overlay(catalog) -> None:
    p = plan(
        catalog,
        [Condition("colour", "N", "Red")],
        ["target", "mate", "tee0", "tee1"],
        [n.POSITIVE, n.N_VIOLATION, n.RANDOM, n.RANDOM],
        profile="D2",
    )
    session = Session(catalog, p, ("conflict", 2), np.random.default_rng(5))
    old = session.superseded
    schema = catalog.schema.attribute("colour")
    assert old.polarity == "N" and schema.family(old.value) not in {"red", "green"}
    # a trap satisfies "not <old>", violates "not red" and keeps everything else: the reference's other image
    assert {catalog.items[i].item_id for i in np.flatnonzero(session.traps)} == {"mate"}
    pool, roles, flags = trap_pool(session, "fashion", np.random.default_rng(0))
    by_id = {catalog.items[i].item_id: (r, f) for i, r, f in zip(pool, roles, flags, strict=True)}
    assert by_id["mate"] == (n.N_VIOLATION, True)  # the trap flag overlays the typed role (paper Table 7)
    assert sum(flags) == 1


def test_traps_outside_the_pool_replace_random_fillers(catalog) -> None:
    p = plan(
        catalog,
        [Condition("colour", "P", "Green")],
        ["target", "tee0", "tee1", "tee2"],
        [n.POSITIVE, n.VISUAL, n.RANDOM, n.RANDOM],
    )
    session = Session(catalog, p, ("conflict", 2), np.random.default_rng(0))
    pool, roles, flags = trap_pool(session, "fashion", np.random.default_rng(0))
    ids = [catalog.items[i].item_id for i in pool]
    assert len(ids) == 4 and ids[0] == "target" and ids[1] == "tee0"  # positives and other roles stay in place
    assert roles.count(n.CONFLICT_TRAP) == 1 and roles.count(n.RANDOM) == 1
    assert ids[roles.index(n.CONFLICT_TRAP)] == "blue" and flags == [r == n.CONFLICT_TRAP for r in roles]


def test_natural_session_adds_one_condition_per_turn(catalog) -> None:
    conditions = [
        Condition("colour", "P", "Green"),
        Condition("pattern", "P", "floral"),
        Condition("sleeve_length", "N", "long"),
    ]
    p = plan(catalog, conditions, ["target"], [n.POSITIVE], profile="D6")
    session = Session(catalog, p, ("natural", 3), np.random.default_rng(2))
    assert len(session.turns) == 3 and not session.traps.any() and session.superseded is None
    for c in conditions:
        text = phrase("fashion", c.attribute, c.polarity, c.value)
        assert sum(text in t for t in session.turns) == 1
    assert session.conditions == conditions


@pytest.fixture(scope="module")
def cars_build():
    catalog = synthetic_catalog("cars", 600, seed=2)
    return build_domain("cars", catalog, n_queries=24, same_queries=6, pool_size=150, seed=2)


def test_state_queries_pair_with_their_constraints_source(cars_build) -> None:
    constraints = {r["query_id"]: r for r in cars_build.tables["constraints_cars"]}
    state = cars_build.tables["state_cars"]
    assert [r["query_id"] for r in state] == list(constraints)
    for row in state:
        source = constraints[row["query_id"]]
        assert row["source_query_id"] == row["query_id"]
        assert row["query_image_id"] == source["query_image_id"] and row["query_image"] == source["query_image"]
        assert set(row["positive_ids"]) == set(source["positive_ids"])
        final = [(c["attribute"], c["polarity"], c["value"]) for c in row["conditions"]]
        assert final == [(c["attribute"], c["polarity"], c["value"]) for c in source["conditions"]]
        revised = [c for c in row["conditions"] if c["old_value"] is not None]
        assert len(revised) == (row["session_type"] == "conflict")
        assert row["num_turns"] == len(row["turns"]) == len(source["conditions"]) + len(revised)
        assert row["query_text"].endswith(" ".join(f"[Round {i}] User: {t}" for i, t in enumerate(row["turns"], 1)))
        assert not any(row["candidate_trap"]) or row["session_type"] == "conflict"
        kept = set(source["candidate_ids"]) & set(row["candidate_ids"])
        assert len(kept) >= len(source["candidate_ids"]) - 6  # at most TRAP_ADD["cars"] replacements


def test_state_audit(cars_build) -> None:
    audit = cars_build.audit["state_cars"]
    assert audit["queries"] == 24 and audit["pairing_mismatches"] == 0
    assert audit["gate_violations"] == 0 and audit["trap_violations"] == 0
    # 24 queries: D1 4, D2 3, D3 4, D4 3, D5 4, D6 3, D7 3 -> 7 one-, 11 two-, 6 three-condition sources
    assert audit["session_mix"] == {"conflict-2": 7, "conflict-3": 6, "natural-2": 5, "natural-3": 6}
    rows = cars_build.tables["state_cars"]
    assert audit["traps"] == sum(sum(r["candidate_trap"]) for r in rows)
    covered = sum(any(r["candidate_trap"]) for r in rows if r["session_type"] == "conflict")
    assert audit["trap_coverage"] == {"conflict_queries": 13, "with_trap": covered, "share": round(covered / 13, 4)}


def test_comparative_revision_uses_the_opposite_direction() -> None:
    catalog = fashion(
        {
            "ref": {"length": "knee"},
            "target": {"length": "maxi"},
            "short": {"length": "mini"},
            "longer_green": {"length": "midi", "colour": "Green"},
            **TEES,
        }
    )
    p = QueryPlan(
        "q0", "D1", 0, 1, (Condition("length", "P", "longer"),), pool=np.array([1, 5]), roles=[n.POSITIVE, n.RANDOM]
    )
    session = Session(catalog, p, ("conflict", 2), np.random.default_rng(0))
    assert session.superseded == Condition("length", "P", "shorter")
    assert {catalog.items[i].item_id for i in np.flatnonzero(session.traps)} == {"short"}
    assert "shorter" in session.turns[0] and "longer" in session.turns[1] and "knee" not in " ".join(session.turns)
