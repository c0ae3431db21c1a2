"""The positive rule of a constraints / state query and its typed-negative labels (paper A.2), item by item.

Each requirement of a query gives every item a status: SAT (0, satisfied), AMB (1, a near-synonym: same coarse
colour/pattern family but a different fine value — neither a positive nor allowed as a negative) or VIOL (2).

- P condition, unordered value v: SAT if the item has v, AMB if another value of v's family, else VIOL;
- P condition, ordered comparative ("longer"): SAT if the item's rank is above the reference's ("shorter": below);
- N condition excluding x: VIOL if the item has x, AMB if another value of x's family, else SAT;
- preserved attributes (every `non_constraint_hard` attribute and every `constraint` attribute the query does not
  name): SAT if equal to the reference, AMB if same family, else VIOL;
- `modifiable` attributes (paper A.2 "may vary within a fixed budget"): VIOL when the item differs from the reference
  in more than the schema's `modifiable_budget` of them (those the query's named attributes do not free,
  `DomainSchema.budgeted`), else SAT. The budget counts towards the preserved part.

Every role and budget comes from the domain's schema (schema.py), the one place that declares them.

Positive: everything SAT. Potential positive: nothing VIOL (excluded from pools). Every negative therefore fails
the complete positive rule (the gate). Typed roles: `p_violation` (only P conditions VIOL, the rest SAT),
`n_violation` (only N), `pn_violation` (P and N, preserved SAT), `implicit_violation` (conditions SAT, a preserved
attribute VIOL).

This module is the rule as a pure-Python evaluator over one item's attribute dict (`RuleChecker`, `rule_status`,
`typed_role`): the validator re-checks a built folder with it (folder/validate_rules.py) and the builders' audit
re-checks every pool with it. tracks/constraints_gate.py evaluates the same rule vectorised over a whole catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from triad_dataset.contract import names
from triad_dataset.contract.schema import CONSTRAINT, HARD, NEG, NOT_APPLICABLE, POS, Attribute, DomainSchema

SAT, AMB, VIOL = 0, 1, 2


@dataclass(frozen=True)
class Condition:
    """One requested change: attribute, polarity P/N, value (target, comparative or excluded value)."""

    attribute: str
    polarity: str
    value: str
    old_value: str | None = None  # state track: the superseded value of a revised condition

    def to_row(self) -> dict[str, str | None]:
        return {
            "attribute": self.attribute,
            "polarity": self.polarity,
            "value": self.value,
            "old_value": self.old_value,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, str | None]) -> Condition:
        return cls(str(row["attribute"]), str(row["polarity"]), str(row["value"]), row.get("old_value"))


def preserved_columns(schema: DomainSchema, conditions: Sequence[Condition]) -> list[int]:
    """Columns that must keep the reference's value: hard attributes + constraint attributes not named."""
    named = {c.attribute for c in conditions}
    return [
        j for j, a in enumerate(schema.attributes) if a.role == HARD or (a.role == CONSTRAINT and a.name not in named)
    ]


def _value_status(a: Attribute, polarity: str, value: str, item_value: str, reference_value: str) -> int:
    if polarity == POS and a.ordered and a.comparatives and value in a.comparatives:
        if item_value == NOT_APPLICABLE or reference_value == NOT_APPLICABLE:
            return VIOL
        up = value == a.comparatives[1]
        delta = a.rank(item_value) - a.rank(reference_value)
        return SAT if (delta > 0 if up else delta < 0) else VIOL
    same = item_value == value and item_value != NOT_APPLICABLE
    near = not same and item_value != NOT_APPLICABLE and a.family(item_value) == a.family(value)
    if polarity == POS:
        return SAT if same else AMB if near else VIOL
    return VIOL if same else AMB if near else SAT


class RuleChecker:
    """The complete positive rule of one query as a pure-Python callable: item attributes -> worst status."""

    def __init__(self, schema: DomainSchema, reference: Mapping[str, str], conditions: Sequence[Condition]) -> None:
        self.conditions = [
            (schema.attribute(c.attribute), c.polarity, c.value, reference.get(c.attribute, NOT_APPLICABLE))
            for c in conditions
        ]
        self.preserved = [
            (schema.attributes[j], reference.get(schema.attributes[j].name, NOT_APPLICABLE))
            for j in preserved_columns(schema, conditions)
        ]
        budgeted = schema.budgeted(c.attribute for c in conditions)
        self.modifiable = [(schema.names[j], reference.get(schema.names[j], NOT_APPLICABLE)) for j in budgeted]
        self.budget = schema.modifiable_budget

    def parts(self, item: Mapping[str, str]) -> tuple[int, int, int]:
        """Worst status of the P conditions, the N conditions and the preserved part (attributes + budget)."""
        worst = {POS: SAT, NEG: SAT}
        for a, polarity, value, reference_value in self.conditions:
            status = _value_status(a, polarity, value, item.get(a.name, NOT_APPLICABLE), reference_value)
            worst[polarity] = max(worst[polarity], status)
        preserved = SAT
        for a, theirs in self.preserved:
            mine = item.get(a.name, NOT_APPLICABLE)
            if mine != theirs:
                near = NOT_APPLICABLE not in (mine, theirs) and a.family(mine) == a.family(theirs)
                preserved = max(preserved, AMB if near else VIOL)
        changed = sum(item.get(name, NOT_APPLICABLE) != theirs for name, theirs in self.modifiable)
        if changed > self.budget:
            preserved = VIOL
        return worst[POS], worst[NEG], preserved

    def __call__(self, item: Mapping[str, str]) -> int:
        return max(self.parts(item))

    def explain(self, item: Mapping[str, str]) -> list[str]:
        """One phrase per requirement the item fails (VIOL): a condition, a preserved attribute, the budget."""
        out = []
        for a, polarity, value, reference_value in self.conditions:
            mine = item.get(a.name, NOT_APPLICABLE)
            if _value_status(a, polarity, value, mine, reference_value) != VIOL:
                continue
            if polarity == POS and a.ordered and a.comparatives and value in a.comparatives:
                asked = f"{value} than {_shown(reference_value)}"
            else:
                asked = value if polarity == POS else f"not {value}"
            out.append(f"{a.name} {_shown(mine)}, asked {asked}")
        for a, theirs in self.preserved:
            mine = item.get(a.name, NOT_APPLICABLE)
            near = NOT_APPLICABLE not in (mine, theirs) and a.family(mine) == a.family(theirs)
            if mine != theirs and not near:
                out.append(f"{a.name} {_shown(mine)}, must stay {_shown(theirs)}")
        changed = [name for name, theirs in self.modifiable if item.get(name, NOT_APPLICABLE) != theirs]
        if len(changed) > self.budget:
            out.append(f"changes {', '.join(changed)}; at most {self.budget} of these may change")
        return out


def _shown(value: str) -> str:
    return value if value != NOT_APPLICABLE else "n/a"


def typed_role(p: int, n: int, h: int) -> str | None:
    """The typed-negative role of the statuses (P, N, preserved), None when none applies (mirrors `Statuses.typed`)."""
    roles = {
        (VIOL, SAT, SAT): names.P_VIOLATION,
        (SAT, VIOL, SAT): names.N_VIOLATION,
        (VIOL, VIOL, SAT): names.PN_VIOLATION,
        (SAT, SAT, VIOL): names.IMPLICIT_VIOLATION,
    }
    return roles.get((p, n, h))


def rule_status(
    schema: DomainSchema, reference: Mapping[str, str], item: Mapping[str, str], conditions: Sequence[Condition]
) -> int:
    """Worst status of one item under the complete positive rule (SAT = positive, VIOL = may be a negative)."""
    return RuleChecker(schema, reference, conditions)(item)
