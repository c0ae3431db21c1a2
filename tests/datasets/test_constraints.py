"""Constraints track (paper A.2): positive rule, gate, typed roles, planning, pools, rows — on hand-made catalogs."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from triad_dataset.contract import names as n
from triad_dataset.contract.features import features_for
from triad_dataset.contract.rule import AMB, SAT, VIOL, Condition, rule_status
from triad_dataset.contract.schema import schema_for
from triad_dataset.contract.serialize import mentions, phrase
from triad_dataset.editions.domain import build_domain
from triad_dataset.sources.catalog import Catalog, Item
from triad_dataset.sources.render import render_item
from triad_dataset.sources.synthetic import synthetic_catalog
from triad_dataset.tracks.constraints import Planner, assemble_pool, constraints_audit
from triad_dataset.tracks.constraints_gate import condition_status, statuses
from triad_dataset.tracks.shared import scaled_counts

DRESS = {
    "category": "Dresses",
    "gender": "Women",
    "colour": "Red",
    "pattern": "striped",
    "sleeve_length": "long",
    "length": "midi",
    "usage": "Casual",
    "brand": "Aurora",
    "year": "2012",
    "season": "Summer",
}


def fashion(items: dict[str, dict[str, str]], product: dict[str, str] | None = None) -> Catalog:
    """A fashion catalog from {item_id: changes to DRESS}; product ids default to the item id."""
    product = product or {}
    rows = [Item(i, product.get(i, i), {**DRESS, **changes}) for i, changes in items.items()]
    return Catalog("fashion", rows, source="hand", renderer=render_item)


def ids(catalog: Catalog, mask: np.ndarray) -> set[str]:
    return {catalog.items[i].item_id for i in np.flatnonzero(mask)}


# The reference "ref" is a red striped long-sleeve midi dress; the query asks "in green, but not striped" (D5).
TYPED = {
    "ref": {},
    "mate": {},  # another image of the reference product: red and striped -> violates P and N
    "pos1": {"colour": "Green", "pattern": "floral"},
    "pos2": {"colour": "Green", "pattern": "polka dot", "season": "Winter"},  # one modifiable change: within budget
    "amb_pattern": {"colour": "Green", "pattern": "pinstriped"},  # stripes family: near-synonym of the excluded value
    "amb_colour": {"colour": "Olive", "pattern": "floral"},  # green family: near-synonym of the target
    "nv": {"colour": "Green"},  # still striped
    "pv": {"colour": "Blue", "pattern": "floral"},
    "pnv": {"colour": "Blue"},
    "imp_sleeve": {"colour": "Green", "pattern": "floral", "sleeve_length": "short"},
    "imp_gender": {"colour": "Green", "pattern": "floral", "gender": "Girls"},
    "imp_category": {"colour": "Green", "pattern": "floral", "category": "Skirts", "sleeve_length": ""},
    "imp_brand": {"colour": "Green", "pattern": "floral", "brand": "Birch"},  # brand is preserved (paper D.4)
    "imp_budget": {"colour": "Green", "pattern": "floral", "season": "Winter", "year": "2015"},  # 2 > budget 1
    "other": {"colour": "Blue", "pattern": "floral", "sleeve_length": "short"},  # P and preserved violated
    **{
        f"fill{i}": {"category": "Tshirts", "gender": "Men", "length": "", "colour": c, "pattern": "solid"}
        for i, c in enumerate(["Black", "White", "Grey", "Yellow", "Brown", "Beige"])
    },
}
D5 = (Condition("colour", "P", "Green"), Condition("pattern", "N", "striped"))


@pytest.fixture(scope="module")
def typed_catalog() -> Catalog:
    return fashion(TYPED, product={"mate": "ref"})


def test_condition_status_uses_families(typed_catalog: Catalog) -> None:
    ref = typed_catalog.index["ref"]
    colour = condition_status(typed_catalog, ref, D5[0])
    pattern = condition_status(typed_catalog, ref, D5[1])
    at = typed_catalog.index
    assert [colour[at[i]] for i in ("pos1", "amb_colour", "pv", "ref")] == [SAT, AMB, VIOL, VIOL]
    assert [pattern[at[i]] for i in ("pos1", "amb_pattern", "nv", "fill0")] == [SAT, AMB, VIOL, SAT]


def test_ordered_comparatives() -> None:
    catalog = fashion(
        {
            "ref": {"length": "knee"},
            "mini": {"length": "mini"},
            "midi": {"length": "midi"},
            "maxi": {"length": "maxi"},
            "skirt": {"category": "Skirts", "length": "maxi"},
        }
    )
    status = condition_status(catalog, 0, Condition("length", "P", "longer"))
    assert ids(catalog, status == SAT) == {"midi", "maxi", "skirt"}
    status = condition_status(catalog, 0, Condition("length", "P", "shorter"))
    assert ids(catalog, status == SAT) == {"mini"}


def test_positive_rule_gate_and_typed_roles(typed_catalog: Catalog) -> None:
    status = statuses(typed_catalog, typed_catalog.index["ref"], D5)
    assert ids(typed_catalog, status.positive) == {"pos1", "pos2"}
    excluded = ~status.positive & ~status.gate
    assert ids(typed_catalog, excluded) == {"amb_pattern", "amb_colour"}  # potential positives never negatives
    typed = {role: ids(typed_catalog, mask) for role, mask in status.typed().items()}
    assert typed == {
        n.P_VIOLATION: {"pv"},
        n.N_VIOLATION: {"nv"},
        n.PN_VIOLATION: {"pnv", "ref", "mate"},
        n.IMPLICIT_VIOLATION: {"imp_sleeve", "imp_gender", "imp_category", "imp_brand", "imp_budget"},
    }


def test_python_evaluator_agrees_with_the_vectorised_gate(typed_catalog: Catalog) -> None:
    reference = typed_catalog.items[typed_catalog.index["ref"]].attributes
    status = statuses(typed_catalog, typed_catalog.index["ref"], D5)
    python = [rule_status(typed_catalog.schema, reference, item.attributes, D5) for item in typed_catalog.items]
    assert python == status.worst.tolist()


def test_assemble_pool_quotas_order_and_gate(typed_catalog: Catalog) -> None:
    ref = typed_catalog.index["ref"]
    status = statuses(typed_catalog, ref, D5)
    quotas = {n.P_VIOLATION: 1, n.N_VIOLATION: 1, n.PN_VIOLATION: 1, n.IMPLICIT_VIOLATION: 2}
    pool, roles = assemble_pool(typed_catalog, ref, status, quotas, 12, np.random.default_rng(0), visual_quota=2)
    got = {typed_catalog.items[p].item_id: r for p, r in zip(pool, roles, strict=True)}
    assert len(pool) == 12 == len(set(pool.tolist()))
    assert "ref" not in got and "amb_pattern" not in got and "amb_colour" not in got
    assert {i for i, r in got.items() if r == n.POSITIVE} == {"pos1", "pos2"}
    assert got["pv"] == n.P_VIOLATION and got["nv"] == n.N_VIOLATION
    counts = {r: roles.count(r) for r in set(roles)}
    assert counts[n.PN_VIOLATION] == 1 and counts[n.IMPLICIT_VIOLATION] == 2 and counts[n.VISUAL] == 2
    assert counts[n.RANDOM] == 12 - 2 - 1 - 1 - 1 - 2 - 2
    # the two visual negatives share the most visual attributes with the reference among what is left:
    # "mate" (identical picture attributes) and "other" (a blue floral dress) beat the T-shirts
    visual = {i for i, r in got.items() if r == n.VISUAL}
    assert "mate" in visual or got.get("mate") == n.PN_VIOLATION
    assert all(status.gate[p] for p, r in zip(pool, roles, strict=True) if r != n.POSITIVE)


def test_assemble_pool_refuses_a_pool_it_cannot_fill(typed_catalog: Catalog) -> None:
    status = statuses(typed_catalog, 0, D5)
    with pytest.raises(ValueError, match="eligible candidates for a pool of 50"):
        assemble_pool(typed_catalog, 0, status, {}, 50, np.random.default_rng(0))


def _fill(k: int) -> dict[str, dict[str, str]]:
    return {f"tee{i}": {"category": "Tshirts", "gender": "Men", "length": "", "colour": "Black"} for i in range(k)}


@pytest.mark.parametrize(
    ("changes", "profile", "expected"),
    [
        ({"colour": "Green"}, "D1", [("colour", "P", "Green")]),
        ({"length": "maxi"}, "D1", [("length", "P", "longer")]),
        ({"colour": "Green"}, "D2", [("colour", "N", "Red")]),
        ({"colour": "Green", "pattern": "floral"}, "D5", None),  # either attribute may carry the N condition
    ],
)
def test_planner_derives_conditions_from_the_target(changes, profile, expected) -> None:
    catalog = fashion({"ref": {}, "target": changes, **_fill(6)})
    planner = Planner(catalog, pool_size=4, rng=np.random.default_rng(1))
    plan, status = planner.plan("q0", profile)
    reference, target = catalog.items[plan.reference], catalog.items[plan.target]
    assert {reference.item_id, target.item_id} == {"ref", "target"}
    got = [(c.attribute, c.polarity, c.value) for c in plan.conditions]
    if expected is not None and reference.item_id == "ref":
        assert got == expected
    assert ids(catalog, status.positive) == {target.item_id}
    for c in plan.conditions:  # paper A.2: a positive names the target, a negative the reference's own value
        own = reference.attributes[c.attribute]
        assert c.value != own if c.polarity == "P" else c.value == own
    positives = [c for c in plan.conditions if c.polarity == "P" and not c.value.endswith("er")]
    assert all(reference.attributes[c.attribute].lower() not in plan.request.lower() for c in positives)


def test_planner_gives_up_with_a_clear_error() -> None:
    catalog = fashion({"ref": {}, **_fill(3)})
    with pytest.raises(ValueError, match="no reference/target pair left for profile D3"):
        Planner(catalog, pool_size=2, rng=np.random.default_rng(0)).plan("q0", "D3")


def test_profile_mix_is_scaled_by_largest_remainder() -> None:
    assert scaled_counts(n.PROFILE_MIX_PER_1000, 1000) == n.PROFILE_MIX_PER_1000
    # 20 x mix = 3.5, 2.5, 3.5, 2.5, 3.0, 2.5, 2.5: three +1s for the tied halves, in mix order
    assert scaled_counts(n.PROFILE_MIX_PER_1000, 20) == {"D1": 4, "D2": 3, "D3": 4, "D4": 2, "D5": 3, "D6": 2, "D7": 2}
    assert sum(scaled_counts(n.PROFILE_MIX_PER_1000, 37).values()) == 37


@pytest.fixture(scope="module")
def small_build():
    catalog = synthetic_catalog("fashion", 700, seed=3)
    return catalog, build_domain("fashion", catalog, n_queries=20, same_queries=8, pool_size=200, seed=3)


def test_build_domain_rows_have_exactly_the_spec_columns(small_build) -> None:
    _, result = small_build
    assert set(result.tables) == {"constraints_fashion", "state_fashion", "same_fashion", n.DOMAIN_CORPUS["fashion"]}
    for config, rows in result.tables.items():
        assert all(set(row) == set(features_for(config)) for row in rows), config
    row = result.tables["constraints_fashion"][0]
    assert row["query_image"]["bytes"][:4] == b"\x89PNG" and row["instruction"] is None
    assert row["query_text"].startswith("Reference product info: gender: ")
    assert row["query_image_id"] not in row["candidate_ids"]


def test_build_domain_audit_figures(small_build) -> None:
    catalog, result = small_build
    rows = result.tables["constraints_fashion"]
    audit = result.audit["constraints_fashion"]
    assert audit["queries"] == 20 and audit["gate_violations"] == 0 and audit["pool_sizes"] == [200]
    assert audit["profile_mix"] == scaled_counts(n.PROFILE_MIX_PER_1000, 20)
    # D1 4, D2 3, D3 4, D4 2, D5 3, D6 2, D7 2 (1P, 1N, 2P, 2N, 1P1N, 2P1N, 1P2N)
    assert audit["conditions"] == {"P": 4 + 2 * 4 + 3 + 2 * 2 + 2, "N": 3 + 2 * 2 + 3 + 2 + 2 * 2}
    for row in rows:  # complete positive set: every catalog item satisfying the rule is labelled positive
        conditions = [Condition.from_row(c) for c in row["conditions"]]
        status = statuses(catalog, catalog.index[row["query_image_id"]], conditions)
        assert set(row["positive_ids"]) == ids(catalog, status.positive)
        assert len(row["positive_ids"]) >= 1
    assert constraints_audit(catalog, rows) == audit


def test_build_domain_is_deterministic(small_build) -> None:
    catalog, result = small_build
    again = build_domain("fashion", catalog, n_queries=20, same_queries=8, pool_size=200, seed=3)
    assert again.tables == result.tables and again.audit == result.audit
    other = build_domain("fashion", catalog, n_queries=20, same_queries=8, pool_size=200, seed=4)
    assert other.tables["constraints_fashion"] != result.tables["constraints_fashion"]


def test_gate_violation_counter_catches_a_mislabelled_candidate(small_build) -> None:
    catalog, result = small_build
    row = dict(result.tables["constraints_fashion"][0])
    roles = list(row["candidate_roles"])
    roles[roles.index(n.POSITIVE)] = n.RANDOM  # a positive relabelled as a negative
    row["candidate_roles"] = roles
    assert constraints_audit(catalog, [row])["gate_violations"] == 1


def test_vectorised_gate_matches_the_python_evaluator_on_built_queries(small_build) -> None:
    catalog, result = small_build
    for row in result.tables["constraints_fashion"]:
        conditions = [Condition.from_row(c) for c in row["conditions"]]
        reference = catalog.index[row["query_image_id"]]
        vector = statuses(catalog, reference, conditions).worst.tolist()
        ref_attrs = catalog.items[reference].attributes
        assert vector == [rule_status(catalog.schema, ref_attrs, i.attributes, conditions) for i in catalog.items]


CAR = {
    "body_type": "SUV",
    "colour": "red",
    "view": "rear",
    "setting": "street",
    "brand": "Ford",
    "year": "2010",
    "model": "Explorer",
}


def cars(items: dict[str, dict[str, str]]) -> Catalog:
    rows = [Item(i, i, {**CAR, **changes}) for i, changes in items.items()]
    return Catalog("cars", rows, source="hand", renderer=render_item)


def test_planner_never_discloses_the_reference_value() -> None:
    fillers = {f"sedan{i}": {"body_type": "Sedan", "colour": c} for i, c in enumerate(["black", "white", "grey"])}
    # the only one-attribute change of "rear" is "rear three-quarter", whose request would name "rear" (paper A.2)
    only = cars({"ref": {}, "target": {"view": "rear three-quarter"}, **fillers})
    planner = Planner(only, pool_size=2, rng=np.random.default_rng(0))
    planner.references = np.array([0])  # plan from "ref" only
    with pytest.raises(ValueError, match="no reference/target pair"):
        planner.plan("q0", "D1")
    both = cars({"ref": {}, "target": {"view": "rear three-quarter"}, "front": {"view": "front"}, **fillers})
    planner = Planner(both, pool_size=2, rng=np.random.default_rng(0))
    planner.references = np.array([0])
    plan, _ = planner.plan("q0", "D1")
    assert plan.conditions == (Condition("view", "P", "front"),) and "rear" not in plan.request


def test_cars_year_is_never_a_negative_condition() -> None:
    # fillers differ in two constraint attributes (body type is requestable too, paper A.4.1), so no 1-change target
    catalog = cars(
        {"ref": {}, "newer": {"year": "2012"}, **{f"x{i}": {"body_type": "Van", "colour": "blue"} for i in range(3)}}
    )
    planner = Planner(catalog, pool_size=2, rng=np.random.default_rng(0))
    planner.references = np.array([0, 1])
    with pytest.raises(ValueError, match="no reference/target pair"):
        planner.plan("q0", "D2")  # the only difference is the year, which has no negative conditions
    plan, _ = planner.plan("q1", "D1")
    assert plan.conditions == (Condition("year", "P", "newer"),) and "newer model year" in plan.request


def test_every_condition_phrase_reads_fluently_and_names_its_value() -> None:
    # paper A.2: a request names its value (or comparative) and keeps negations; "not with sleeveless sleeves"
    # repeated the noun and did not read as English
    assert phrase("fashion", "sleeve_length", "N", "sleeveless") == "not sleeveless"
    for domain in n.DOMAINS:
        schema = schema_for(domain)
        for attribute in schema.attributes:
            if attribute.role != "constraint":
                continue
            values = attribute.values or ("Ford",)
            for polarity in n.POLARITIES:
                named = attribute.comparatives if polarity == "P" and attribute.ordered else values
                for value in named:
                    text = phrase(domain, attribute.name, polarity, value)
                    assert mentions(text, _spoken(value)), (domain, attribute.name, polarity, text)
                    assert "sleeveless sleeves" not in text, text
                    assert text.startswith(("not ", "without ")) == (polarity == "N"), text


def _spoken(value: str) -> str:
    return "multicolour" if value == "Multi" else value


def _garment_widths(attributes: dict[str, str]) -> list[int]:
    """Per image row, how many pixels carry the (solid red) garment colour."""
    pixels = np.asarray(Image.open(io.BytesIO(render_item("fashion", attributes, 0))).convert("RGB"))
    return (pixels == (215, 25, 30)).all(axis=-1).sum(axis=1).tolist()


def test_a_mini_dress_is_drawn_with_a_skirt_not_as_a_tshirt() -> None:
    # paper A.2: length and article type are visual attributes; the mini dress used to end at its waist, so it
    # rendered as a T-shirt with a 2-pixel line under it
    dress = {
        "category": "Dresses",
        "colour": "Red",
        "pattern": "solid",
        "sleeve_length": "sleeveless",
        "length": "mini",
    }
    tee = max(_garment_widths({**dress, "category": "Tshirts", "length": ""}))
    flared = [w for w in _garment_widths(dress) if w > tee]  # rows of the A-line skirt, wider than any tee row
    assert len(flared) >= 10
    lengths = [sum(w > 0 for w in _garment_widths({**dress, "length": v})) for v in ("mini", "knee", "midi", "maxi")]
    assert lengths == sorted(lengths) and len(set(lengths)) == 4
