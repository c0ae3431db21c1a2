"""Pool scaling (paper A.5): nested pools that keep every original candidate and add only rule-failing items."""

from __future__ import annotations

from pathlib import Path

import pytest

from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.features import features_for
from triad_dataset.contract.rule import VIOL, Condition, rule_status
from triad_dataset.editions.domain import build_domain
from triad_dataset.editions.pool_scaling import catalog_from_corpus, scale_folder, scale_rows
from triad_dataset.folder import io as folder
from triad_dataset.sources.synthetic import synthetic_catalog


@pytest.fixture(scope="module")
def built():
    catalog = synthetic_catalog("fashion", 500, seed=5)
    result = build_domain("fashion", catalog, n_queries=10, same_queries=4, pool_size=120, seed=5)
    return catalog, result


def test_scaled_pools_are_nested_and_keep_the_original(built) -> None:
    catalog, result = built
    rows = result.tables["constraints_fashion"]
    small, large, full = (scale_rows(rows, catalog, s) for s in (200, 300, None))
    for row, a, b, c in zip(rows, small, large, full, strict=True):
        assert len(a["candidate_ids"]) == 200 and len(b["candidate_ids"]) == 300
        assert a["candidate_ids"][:120] == row["candidate_ids"]  # original pool first, unchanged
        assert a["candidate_roles"][:120] == row["candidate_roles"] and a["positive_ids"] == row["positive_ids"]
        assert b["candidate_ids"][:200] == a["candidate_ids"] and c["candidate_ids"][:300] == b["candidate_ids"]
        assert set(a["candidate_roles"][120:]) == {n.RANDOM} and not any(a["candidate_trap"][120:])
        assert len(set(c["candidate_ids"])) == len(c["candidate_ids"])
        # eligible-full: every item that fails the complete positive rule, except the query image
        reference = catalog.items[catalog.index[row["query_image_id"]]].attributes
        conditions = [Condition.from_row(x) for x in row["conditions"]]
        failing = {
            item.item_id
            for item in catalog.items
            if rule_status(catalog.schema, reference, item.attributes, conditions) == VIOL
        }
        assert set(c["candidate_ids"][120:]) == failing - set(row["candidate_ids"]) - {row["query_image_id"]}
        assert row["query_image_id"] not in c["candidate_ids"]
    assert scale_rows(rows, catalog, 200) == small  # deterministic (seed 2027)
    assert scale_rows(rows, catalog, 200, seed=1) != small


def test_scaling_refuses_impossible_sizes(built) -> None:
    catalog, result = built
    rows = result.tables["constraints_fashion"][:1]
    with pytest.raises(ValueError, match="below the original pool of 120"):
        scale_rows(rows, catalog, 100)
    with pytest.raises(ValueError, match="eligible candidates, pool size 5000 requested"):
        scale_rows(rows, catalog, 5000)


def test_scale_folder_round_trip(built, tmp_path: Path) -> None:
    catalog, result = built
    tables = {c: result.tables[c] for c in ("constraints_fashion", "state_fashion", n.DOMAIN_CORPUS["fashion"])}
    src = folder.write_folder(
        tmp_path / "src",
        tables,
        features={c: features_for(c) for c in tables},
        card="# t",
        audit={"benchmark": "triad", "pool_size": 120, **result.audit},
    )
    out = scale_folder(src, tmp_path / "big", 250)
    assert set(folder.list_configs(out)) == set(tables)
    audit = folder.read_audit(out)
    assert audit["pool_size"] == 250 and audit["pool_scaling"]["seed"] == 2027
    assert "same_fashion" not in audit  # figures of configs not written are dropped
    got = folder.read_rows(out, "constraints_fashion", ["query_id", "candidate_ids"])
    corpus = folder.read_rows(src, n.DOMAIN_CORPUS["fashion"])
    expected = scale_rows(result.tables["constraints_fashion"], catalog_from_corpus("fashion", corpus), 250)
    assert [r["candidate_ids"] for r in got] == [r["candidate_ids"] for r in expected]
    from triad_dataset.folder.validate import validate_folder

    assert validate_folder(out) == []
    with pytest.raises(TriadError, match="output folder exists"):
        scale_folder(src, out, 250)


def test_corpus_round_trip_rebuilds_the_same_labels(built) -> None:
    catalog, result = built
    again = catalog_from_corpus("fashion", result.tables[n.DOMAIN_CORPUS["fashion"]])
    assert [i.attributes for i in again.items] == [i.attributes for i in catalog.items]
