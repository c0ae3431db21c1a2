"""One schema holds every attribute role (paper A.2): changing a role there changes the gate, the typed roles, the
audit and the validator together; `--schema FILE` files round-trip and bad ones are one-line errors."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from metrics.core import average_precision, rank_scores
from triad_dataset.contract import names as n
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.rule import Condition, RuleChecker, typed_role
from triad_dataset.contract.schema import (
    HARD,
    MODIFIABLE,
    DomainSchema,
    load_schema_file,
    schema_for,
    schema_to_json,
    schemas_from_audit,
)
from triad_dataset.folder.audit import format_audit, random_ap, summarize
from triad_dataset.folder.validate import Corpus
from triad_dataset.folder.validate_rules import check_rule
from triad_dataset.sources.catalog import Catalog, Item
from triad_dataset.tracks.constraints_gate import statuses

DRESS = {
    "category": "Dresses",
    "gender": "Women",
    "brand": "Aurora",
    "neckline": "round",
    "colour": "Red",
    "pattern": "solid",
    "sleeve_length": "long",
    "length": "midi",
    "usage": "Casual",
    "year": "2012",
    "season": "Summer",
}
ITEMS = {
    "ref": {},
    "green": {"colour": "Green"},
    "green_winter": {"colour": "Green", "season": "Winter"},
    "blue": {"colour": "Blue"},
}
QUERY = (Condition("colour", "P", "Green"),)


def with_role(schema: DomainSchema, name: str, role: str) -> DomainSchema:
    attributes = tuple(dataclasses.replace(a, role=role) if a.name == name else a for a in schema.attributes)
    return dataclasses.replace(schema, attributes=attributes)


def catalog(schema: DomainSchema) -> Catalog:
    items = [Item(i, i, {**DRESS, **change}) for i, change in ITEMS.items()]
    return Catalog("fashion", items, source="hand", attribute_schema=schema)


def roles_under(schema: DomainSchema) -> dict[str, str | None]:
    """item -> positive / typed role, from the vectorised gate."""
    c = catalog(schema)
    status = statuses(c, c.index["ref"], QUERY)
    out: dict[str, str | None] = {i.item_id: None for i in c.items}
    for role, mask in status.typed().items():
        out.update({c.items[k].item_id: role for k in np.flatnonzero(mask)})
    out.update({c.items[k].item_id: n.POSITIVE for k in np.flatnonzero(status.positive)})
    return out


def validator_lines(schema: DomainSchema, roles: dict[str, str]) -> list[str]:
    corpus = Corpus()
    for item, change in ITEMS.items():
        attrs = {**DRESS, **change}
        visible = {f: attrs[f] for f in n.VISIBLE_PRODUCT_FIELDS["fashion"]}
        corpus.rows[item] = {"item_id": item, **visible}
        corpus.attributes[item] = {k: v for k, v in attrs.items() if k not in visible}
    pool = [i for i in ITEMS if i != "ref"]
    row = {
        "query_id": "q",
        "query_image_id": "ref",
        "candidate_ids": pool,
        "candidate_roles": [roles[i] for i in pool],
        "conditions": [c.to_row() for c in QUERY],
    }
    out: list[str] = []
    check_rule("constraints_fashion", row, schema, corpus, out)
    return out


def test_changing_a_role_in_the_schema_changes_gate_roles_audit_and_validator() -> None:
    default = schema_for("fashion")
    assert default.attribute("season").role == MODIFIABLE and default.modifiable_budget == 1
    strict = with_role(default, "season", HARD)  # season preserved instead of modifiable
    # gate + typed roles (vectorised)
    before, after = roles_under(default), roles_under(strict)
    assert before == {"ref": n.P_VIOLATION, "green": n.POSITIVE, "green_winter": n.POSITIVE, "blue": n.P_VIOLATION}
    assert after == {**before, "green_winter": n.IMPLICIT_VIOLATION}
    # typed roles (pure-Python evaluator) agree
    ref = {**DRESS}
    for schema, expected in ((default, before), (strict, after)):
        check = RuleChecker(schema, ref, QUERY)
        for item, change in ITEMS.items():
            parts = check.parts({**DRESS, **change})
            got = n.POSITIVE if max(parts) == 0 else typed_role(*parts)
            assert got == expected[item], (schema is strict, item)
    # validator: labels made under the default schema are accepted by it and rejected under the strict one
    labels = {i: r or n.RANDOM for i, r in before.items()}
    assert validator_lines(default, labels) == []
    lines = validator_lines(strict, labels)
    assert lines == [
        "constraints_fashion / q: positive candidates 'green_winter' do not satisfy the complete "
        "positive rule under the folder's schema (paper A.2)"
    ]
    # audit: prints the role the recorded schema gives
    rows = [
        {
            "query_id": "q",
            "candidate_roles": [n.POSITIVE, n.RANDOM],
            "candidate_trap": [False, False],
            "positive_ids": ["green"],
            "profile": "D1",
            "session_type": None,
            "num_turns": None,
            "conditions": [c.to_row() for c in QUERY],
        }
    ]
    summary = summarize({"constraints_fashion": rows})
    for schema, role in ((default, "modifiable"), (strict, "preserved")):
        text = format_audit({"schema": {"fashion": schema_to_json(schema)}}, summary)
        assert any(line.split()[:2] == ["season", role] for line in text.splitlines())


def test_a_condition_on_a_preserved_attribute_is_a_validation_error() -> None:
    strict = with_role(schema_for("fashion"), "colour", HARD)
    lines = validator_lines(strict, {"green": n.POSITIVE, "green_winter": n.POSITIVE, "blue": n.P_VIOLATION})
    assert lines == [
        "constraints_fashion / q: condition on 'colour' (non_constraint_hard); only constraint "
        "attributes are requested (schema, paper A.2)"
    ]


def test_schema_file_round_trip_and_errors(tmp_path: Path) -> None:
    strict = with_role(schema_for("cars"), "view", HARD)
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"cars": schema_to_json(strict)}), encoding="utf-8")
    assert load_schema_file(path) == {"cars": strict}
    assert schemas_from_audit({"schema": {"cars": schema_to_json(strict)}}) == {
        "fashion": schema_for("fashion"),
        "cars": strict,
    }
    path.write_text(json.dumps({"boats": {}}), encoding="utf-8")
    with pytest.raises(TriadError, match=r"schema\.json: unknown domain 'boats'"):
        load_schema_file(path)
    bad = schema_to_json(strict)
    bad["attributes"][0]["role"] = "sometimes"
    path.write_text(json.dumps({"cars": bad}), encoding="utf-8")
    with pytest.raises(TriadError, match=r"schema\.json: attribute 'body_type': role 'sometimes'"):
        load_schema_file(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(TriadError, match=r"schema\.json: cannot read the schema file"):
        load_schema_file(path)


@pytest.mark.parametrize(("pool", "positives"), [(1000, 1), (1000, 5), (37, 4), (2, 1)])
def test_random_ap_is_the_expected_ap_of_an_all_tied_ranking(pool: int, positives: int) -> None:
    """Independent check: the metric core's exact tie expectation (paper eq. 2) with every score tied."""
    labels = np.zeros((1, pool), dtype=np.int8)
    labels[0, :positives] = 1
    expected = average_precision(rank_scores(np.zeros((1, pool)), labels, ties="expected"))[0]
    assert random_ap(pool, positives) == pytest.approx(float(expected), abs=1e-12)


def test_build_full_schema_flag_reads_the_file_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import triad_cli.main as cli

    bad = tmp_path / "roles.json"
    bad.write_text(json.dumps({"cars": {"attributes": [{"name": "colour"}]}}), encoding="utf-8")
    code = cli.main(
        [
            "build",
            "full",
            "--cars-table",
            str(tmp_path / "cars.csv"),
            "--schema",
            str(bad),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "roles.json: cars: every attribute needs at least 'name' and 'role'" in err
    assert not (tmp_path / "out").exists()
