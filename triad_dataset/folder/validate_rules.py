"""The validator's re-check of the constraints and state labels against the folder's attribute schema (paper A.2).

For every constraints / state query, with the schema recorded in audit.json ("schema", schema.py) and each item's
attributes read back from its corpus row (hidden `attributes` JSON + the visible product fields):

* every condition names a `constraint` attribute of the schema, and a negative one only where the attribute allows
  negatives (paper A.4.1: Cars year has none);
* every positive satisfies the complete positive rule (conditions, preserved attributes, modifiable budget);
* every typed negative (`p_violation`, `n_violation`, `pn_violation`, `implicit_violation`) has exactly the statuses
  its role names.

The rule is the independent pure-Python evaluator `contract.rule.RuleChecker` (not the builders' vectorised gate),
so changing a role in the schema changes what the validator accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from triad_dataset.contract import names as n
from triad_dataset.contract.rule import SAT, Condition, RuleChecker, typed_role
from triad_dataset.contract.schema import CONSTRAINT, NEG, NOT_APPLICABLE, DomainSchema

TYPED_ROLES = (n.P_VIOLATION, n.N_VIOLATION, n.PN_VIOLATION, n.IMPLICIT_VIOLATION)
MAX_LISTED = 3


def item_attributes(schema: DomainSchema, row: Mapping[str, Any], hidden: Mapping[str, Any]) -> dict[str, str]:
    """Every schema attribute of a corpus item: hidden labels plus the visible columns ("" = not applicable)."""
    out = {a: str(hidden.get(a) or NOT_APPLICABLE) for a in schema.names}
    for field in schema.visible_fields:
        out[field] = str(row.get(field) or NOT_APPLICABLE)
    return out


def check_rule(config: str, row: Mapping[str, Any], schema: DomainSchema, corpus: Any, out: list[str]) -> None:
    """Append one line per violation of the schema's rules by this query's conditions and labels."""
    qid = row["query_id"]
    conditions = []
    for c in row.get("conditions") or []:
        attribute = schema.attribute(c["attribute"]) if c.get("attribute") in schema.names else None
        if attribute is None or attribute.role != CONSTRAINT:
            role = attribute.role if attribute is not None else "not in the schema"
            out.append(
                f"{config} / {qid}: condition on {c.get('attribute')!r} ({role}); only constraint attributes "
                f"are requested (schema, paper A.2)"
            )
            return
        if c.get("polarity") == NEG and not attribute.allow_negative:
            out.append(f"{config} / {qid}: negative condition on {attribute.name!r}, which allows none (schema)")
        conditions.append(Condition.from_row(c))
    if corpus is None or row.get("query_image_id") not in corpus.rows:
        return
    attrs = {
        i: item_attributes(schema, corpus.rows[i], corpus.attributes.get(i, {}))
        for i in [row["query_image_id"], *(row["candidate_ids"] or [])]
        if i in corpus.rows
    }
    checker = RuleChecker(schema, attrs[row["query_image_id"]], conditions)
    wrong: dict[str, list[str]] = {}
    for item, role in zip(row["candidate_ids"] or [], row["candidate_roles"] or [], strict=False):
        if item not in attrs or (role != n.POSITIVE and role not in TYPED_ROLES):
            continue
        parts = checker.parts(attrs[item])
        ok = max(parts) == SAT if role == n.POSITIVE else typed_role(*parts) == role
        if not ok:
            wrong.setdefault(role, []).append(item)
    for role, items in wrong.items():
        shown = ", ".join(repr(i) for i in items[:MAX_LISTED]) + (
            f" (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
        )
        rule = "do not satisfy the complete positive rule" if role == n.POSITIVE else f"are not {role}s"
        out.append(f"{config} / {qid}: {role} candidates {shown} {rule} under the folder's schema (paper A.2)")
