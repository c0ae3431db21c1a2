"""The positive rule of contract/rule.py vectorised over a whole catalog: statuses, gate, typed masks (paper A.2).

For one query (reference + conditions) every catalog item gets a status per requirement, SAT / AMB / VIOL as the
rule defines them (contract/rule.py, with `RuleChecker` the same rule item by item): `condition_status` per
condition, `preserved_status` over the preserved attributes and the modifiable budget, combined in `Statuses`
(positive = everything SAT; `gate` = fails the complete positive rule, may enter a pool as a negative; `typed()` =
the four typed-negative roles). `visual_similarity` ranks the `visual` negatives. Every role and budget comes from
the catalog's schema (contract/schema.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from triad_dataset.contract import names
from triad_dataset.contract.rule import AMB, SAT, VIOL, Condition, preserved_columns
from triad_dataset.contract.schema import NEG, POS
from triad_dataset.sources.catalog import Catalog


def condition_status(catalog: Catalog, reference: int, condition: Condition) -> np.ndarray:
    """SAT/AMB/VIOL (int8) of every catalog item for one condition of a query whose reference is `reference`."""
    schema, codes = catalog.schema, catalog.codes
    j = schema.index(condition.attribute)
    attribute = schema.attributes[j]
    values, families = codes.values[:, j], codes.families[:, j]
    status = np.full(len(values), VIOL, dtype=np.int8)
    comparatives: tuple[str, ...] = attribute.comparatives or ()
    if condition.polarity == POS and attribute.ordered and condition.value in comparatives:
        ref = values[reference]
        higher = condition.value == comparatives[1]
        ok = (values >= 0) & ((values > ref) if higher else (values < ref)) & (ref >= 0)
        status[ok] = SAT
        return status
    code = codes.code(j, condition.value)
    family = codes.family_code(j, condition.value)
    same_family = (families == family) & (family >= 0)
    if condition.polarity == POS:
        status[same_family] = AMB
        status[(values == code) & (code >= 0)] = SAT
    elif condition.polarity == NEG:
        status[:] = SAT
        status[same_family] = AMB
        status[(values == code) & (code >= 0)] = VIOL
    else:
        raise ValueError(f"condition {condition}: polarity must be one of {names.POLARITIES}")
    return status


def budget_status(catalog: Catalog, reference: int, conditions: Sequence[Condition]) -> np.ndarray:
    """VIOL where an item changes more budgeted modifiable attributes than the schema's budget allows, else SAT."""
    columns = catalog.schema.budgeted(c.attribute for c in conditions)
    values = catalog.codes.values[:, columns]
    over = (values != values[reference]).sum(axis=1) > catalog.schema.modifiable_budget
    return np.where(over, VIOL, SAT).astype(np.int8)


def preserved_status(catalog: Catalog, reference: int, conditions: Sequence[Condition]) -> np.ndarray:
    """Worst status over the preserved attributes (SAT equal, AMB same family, VIOL otherwise) and the budget."""
    columns = preserved_columns(catalog.schema, conditions)
    codes = catalog.codes
    budget = budget_status(catalog, reference, conditions)
    if not columns:
        return budget
    values, families = codes.values[:, columns], codes.families[:, columns]
    equal = values == values[reference]
    same_family = families == families[reference]
    status = np.where(equal, SAT, np.where(same_family, AMB, VIOL)).astype(np.int8)
    return np.maximum(status.max(axis=1), budget)


@dataclass
class Statuses:
    """Worst status per item over the P conditions, the N conditions and the preserved attributes."""

    p: np.ndarray
    n: np.ndarray
    h: np.ndarray

    @property
    def worst(self) -> np.ndarray:
        return np.maximum(np.maximum(self.p, self.n), self.h)

    @property
    def positive(self) -> np.ndarray:
        return self.worst == SAT

    @property
    def gate(self) -> np.ndarray:
        """True where an item fails the complete positive rule, i.e. may enter a pool as a negative."""
        return self.worst == VIOL

    def typed(self) -> dict[str, np.ndarray]:
        """Masks of the four typed-negative roles (paper A.2), mutually exclusive."""
        p, n, h = self.p, self.n, self.h
        return {
            names.P_VIOLATION: (p == VIOL) & (n == SAT) & (h == SAT),
            names.N_VIOLATION: (p == SAT) & (n == VIOL) & (h == SAT),
            names.PN_VIOLATION: (p == VIOL) & (n == VIOL) & (h == SAT),
            names.IMPLICIT_VIOLATION: (p == SAT) & (n == SAT) & (h == VIOL),
        }


def statuses(catalog: Catalog, reference: int, conditions: Sequence[Condition]) -> Statuses:
    n_items = len(catalog)
    p = np.zeros(n_items, dtype=np.int8)
    n = np.zeros(n_items, dtype=np.int8)
    for condition in conditions:
        target = p if condition.polarity == POS else n
        np.maximum(target, condition_status(catalog, reference, condition), out=target)
    return Statuses(p, n, preserved_status(catalog, reference, conditions))


def visual_similarity(catalog: Catalog, reference: int) -> np.ndarray:
    """Documented similarity for `visual` negatives: over the schema's visual attributes, 2 points per shared
    coarse family plus 1 per identical value (Fashion: article type, colour, pattern, sleeves, length; Cars:
    body type, colour, view, setting)."""
    columns = [j for j, a in enumerate(catalog.schema.attributes) if a.visual]
    values, families = catalog.codes.values[:, columns], catalog.codes.families[:, columns]
    score = 2 * (families == families[reference]).sum(axis=1) + (values == values[reference]).sum(axis=1)
    return score.astype(np.int32)
