"""The attribute schema of each product domain: the ONE place that holds the paper's A.2 construction rules.

Each attribute has a construction role (`names.ATTRIBUTE_ROLES`, paper A.2):

- `constraint`: may be named in a request; when a query does not name it, it must keep the reference's value;
- `modifiable`: "may vary within a fixed budget" — a positive may differ from the reference in at most
  `DomainSchema.modifiable_budget` modifiable attributes (any values); one more change and the candidate breaks the
  preserved part of the rule (an `implicit_violation`). A modifiable attribute with `free_with` leaves the budget
  (may take any value) when the query names one of those attributes (a Cars model when the make changes);
- `non_constraint_hard`: never requested, always preserved (paper D.4: positives "retain brand, gender and
  neckline").

The rule and its typed roles (rule.py, tracks/constraints_gate.py), the planner (tracks/constraints.py), the audit
(folder/audit.py) and the validator (folder/validate_rules.py) all read the schema a catalog carries; a build records it in audit.json ("schema"), and
`triad build full --schema FILE` takes another one (the JSON written by `schema_to_json`, e.g. the authors' own
28-field schema when it is released). Choices where the paper is silent are written next to the rule.

Values are closed lists (None = free text, e.g. brand). Colours and patterns carry coarse families (paper A.2: "so
near-synonyms are not negatives"); ordered attributes list their values from low to high and have comparative
words ("shorter", "longer"). `applies_to` limits an attribute to some article types (sleeves only on tops);
elsewhere its value is the empty string, meaning "not applicable".

>>> s = schema_for("fashion")
>>> s.attribute("colour").family("Navy Blue") == s.attribute("colour").family("Blue")
True
>>> s.attribute("length").comparatives
('shorter', 'longer')
>>> [a.name for a in s.attributes if a.role == "non_constraint_hard"]
['category', 'gender', 'brand', 'neckline']
>>> [a.name for a in s.attributes if a.role == "modifiable"], s.modifiable_budget
(['usage', 'year', 'season'], 1)
>>> [a.name for a in schema_for("cars").attributes if a.role == "constraint"]
['body_type', 'colour', 'view', 'setting', 'brand', 'year']
>>> cars = schema_for("cars")
>>> [cars.names[j] for j in cars.budgeted(["colour"])], cars.budgeted(["brand"]), cars.modifiable_budget
(['model'], [], 0)
>>> schema_from_json(schema_to_json(s)) == s
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from triad_dataset.contract import names
from triad_dataset.contract.errors import TriadError

CONSTRAINT, MODIFIABLE, HARD = names.ATTRIBUTE_ROLES
FASHION, CARS = names.DOMAINS
POS, NEG = names.POLARITIES
NOT_APPLICABLE = ""


@dataclass(frozen=True)
class Attribute:
    """One attribute of a domain schema."""

    name: str
    role: str
    values: tuple[str, ...] | None  # None: free text
    families: Mapping[str, str] = field(default_factory=dict)  # value -> coarse family (identity when absent)
    ordered: bool = False  # values listed low -> high; requests use `comparatives`
    comparatives: tuple[str, str] | None = None  # (word for lower, word for higher)
    applies_to: frozenset[str] | None = None  # categories where the attribute is defined (None = all)
    allow_negative: bool = True  # paper A.4.1: Cars year has no negative conditions
    label: str = ""  # how a request names the attribute ("colour", "sleeves")
    visual: bool = False  # visible in the picture; used by the `visual` similarity
    free_with: tuple[str, ...] = ()  # modifiable only: outside the budget (free) when a query names one of these

    def __post_init__(self) -> None:
        if self.role not in names.ATTRIBUTE_ROLES:
            raise ValueError(f"attribute {self.name!r}: role {self.role!r} not in {names.ATTRIBUTE_ROLES}")
        if self.ordered and (self.values is None or self.comparatives is None):
            raise ValueError(f"attribute {self.name!r}: an ordered attribute needs values and comparatives")
        if self.free_with and self.role != MODIFIABLE:
            raise ValueError(f"attribute {self.name!r}: only a modifiable attribute can be free_with others")

    def family(self, value: str) -> str:
        """The coarse family of a value (the value itself when the attribute has no families)."""
        return self.families.get(value, value)

    def rank(self, value: str) -> int:
        """Position of a value in the attribute's order (ordered attributes only)."""
        if not self.ordered or self.values is None:
            raise ValueError(f"attribute {self.name!r} is not ordered")
        return self.values.index(value)

    def applies(self, category: str | None) -> bool:
        return self.applies_to is None or category in self.applies_to

    def accepts(self, value: str) -> bool:
        return self.values is None or value in self.values or value == NOT_APPLICABLE


@dataclass(frozen=True)
class DomainSchema:
    """The attributes of one product domain, in a fixed order (the columns of the attribute-code matrix)."""

    domain: str
    attributes: tuple[Attribute, ...]
    category_attribute: str  # the attribute `applies_to` refers to
    modifiable_budget: int = 0  # paper A.2: how many modifiable attributes a positive may change

    def __post_init__(self) -> None:
        if self.category_attribute not in self.names:
            raise ValueError(f"{self.domain}: category attribute {self.category_attribute!r} is not an attribute")
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"{self.domain}: attribute names repeat")
        if not isinstance(self.modifiable_budget, int) or self.modifiable_budget < 0:
            raise ValueError(f"{self.domain}: modifiable_budget must be a non-negative integer")
        missing = [f for f in self.visible_fields if f not in self.names]
        if missing:
            raise ValueError(
                f"{self.domain}: visible product fields {missing} are not attributes (docs/protocol.md §3)"
            )
        for a in self.attributes:
            if a.applies_to is not None and self.category_attribute == a.name:
                raise ValueError(f"{self.domain}: the category attribute {a.name!r} cannot depend on the category")
            unknown = [f for f in a.free_with if f not in self.names]
            if unknown:
                raise ValueError(f"{self.domain}: {a.name}.free_with names unknown attributes {unknown}")

    def columns(self, role: str) -> list[int]:
        """Attribute-matrix columns of the attributes with this role."""
        return [j for j, a in enumerate(self.attributes) if a.role == role]

    def budgeted(self, named: Iterable[str]) -> list[int]:
        """Modifiable columns that count towards the budget when a query names the attributes `named`."""
        named = set(named)
        return [j for j in self.columns(MODIFIABLE) if not named & set(self.attributes[j].free_with)]

    def attribute(self, name: str) -> Attribute:
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute
        raise ValueError(f"{self.domain}: unknown attribute {name!r}; known: {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    @property
    def visible_fields(self) -> tuple[str, ...]:
        return names.VISIBLE_PRODUCT_FIELDS[self.domain]

    def index(self, name: str) -> int:
        return self.names.index(name)


# --- Fashion (Fashion Product Images spellings: articleType, baseColour, gender, season, usage) ---------------
FASHION_CATEGORIES = (
    "Tshirts",
    "Shirts",
    "Tops",
    "Dresses",
    "Skirts",
    "Trousers",
    "Jeans",
    "Shorts",
    "Jackets",
    "Sweaters",
    "Sweatshirts",
    "Kurtas",
    "Tunics",
    "Blazers",
    "Track Pants",
    "Leggings",
    "Capris",
)
TOPS = frozenset(
    {"Tshirts", "Shirts", "Tops", "Dresses", "Jackets", "Sweaters", "Sweatshirts", "Kurtas", "Tunics", "Blazers"}
)
BOTTOMS = frozenset({"Trousers", "Jeans", "Shorts", "Track Pants", "Leggings", "Capris"})
LENGTHED = frozenset({"Dresses", "Skirts"})
# Fashion Product Images baseColour values grouped into coarse families (paper A.2).
FASHION_COLOUR_FAMILIES: dict[str, str] = {
    "Black": "black",
    "Charcoal": "black",
    "White": "white",
    "Off White": "white",
    "Cream": "white",
    "Grey": "grey",
    "Grey Melange": "grey",
    "Silver": "grey",
    "Steel": "grey",
    "Blue": "blue",
    "Navy Blue": "blue",
    "Turquoise Blue": "blue",
    "Teal": "blue",
    "Red": "red",
    "Maroon": "red",
    "Burgundy": "red",
    "Rust": "red",
    "Pink": "pink",
    "Magenta": "pink",
    "Rose": "pink",
    "Peach": "pink",
    "Purple": "purple",
    "Lavender": "purple",
    "Mauve": "purple",
    "Green": "green",
    "Olive": "green",
    "Sea Green": "green",
    "Lime Green": "green",
    "Fluorescent Green": "green",
    "Yellow": "yellow",
    "Mustard": "yellow",
    "Gold": "yellow",
    "Orange": "orange",
    "Copper": "orange",
    "Brown": "brown",
    "Coffee Brown": "brown",
    "Tan": "brown",
    "Mushroom Brown": "brown",
    "Bronze": "brown",
    "Beige": "beige",
    "Khaki": "beige",
    "Nude": "beige",
    "Skin": "beige",
    "Taupe": "beige",
    "Metallic": "metallic",
    "Multi": "multi",
}
FASHION_PATTERN_FAMILIES: dict[str, str] = {
    "solid": "solid",
    "striped": "stripes",
    "pinstriped": "stripes",
    "checked": "checks",
    "plaid": "checks",
    "polka dot": "dots",
    "floral": "floral",
    "graphic print": "print",
}
SLEEVES = ("sleeveless", "short", "three-quarter", "long")
LENGTHS = ("mini", "knee", "midi", "maxi")
NECKLINES = ("round", "v-neck", "collar", "hooded", "high", "square")
# Paper A.2 "a modifiable attribute may vary within a fixed budget"; the paper gives no number. Our choice: a positive
# may differ from the reference in at most ONE of year / season / usage (the catalogue metadata that a shopper's
# request does not fix), two or more changes make it an implicit violation.
FASHION_MODIFIABLE_BUDGET = 1


def _fashion() -> DomainSchema:
    return DomainSchema(
        domain=FASHION,
        category_attribute="category",
        modifiable_budget=FASHION_MODIFIABLE_BUDGET,
        attributes=(
            Attribute("category", HARD, FASHION_CATEGORIES, label="article type", visual=True),
            Attribute("gender", HARD, ("Men", "Women", "Boys", "Girls", "Unisex"), label="gender"),
            # paper D.4: the constraints example's positive and negative "both retain brand, gender, and neckline"
            Attribute("brand", HARD, None, label="brand"),
            # a category-specific style field (tops only), preserved like the paper's neckline
            Attribute("neckline", HARD, NECKLINES, applies_to=TOPS, label="neckline", visual=True),
            Attribute(
                "colour",
                CONSTRAINT,
                tuple(FASHION_COLOUR_FAMILIES),
                FASHION_COLOUR_FAMILIES,
                label="colour",
                visual=True,
            ),
            Attribute(
                "pattern",
                CONSTRAINT,
                tuple(FASHION_PATTERN_FAMILIES),
                FASHION_PATTERN_FAMILIES,
                label="pattern",
                visual=True,
            ),
            Attribute(
                "sleeve_length",
                CONSTRAINT,
                SLEEVES,
                ordered=True,
                comparatives=("shorter", "longer"),
                applies_to=TOPS,
                label="sleeves",
                visual=True,
            ),
            Attribute(
                "length",
                CONSTRAINT,
                LENGTHS,
                ordered=True,
                comparatives=("shorter", "longer"),
                applies_to=LENGTHED,
                label="length",
                visual=True,
            ),
            Attribute(
                "usage",
                MODIFIABLE,
                ("Casual", "Formal", "Sports", "Ethnic", "Smart Casual", "Party", "Travel", "Home"),
                label="occasion",
            ),
            Attribute("year", MODIFIABLE, None, label="year"),
            Attribute("season", MODIFIABLE, ("Summer", "Winter", "Spring", "Fall"), label="season"),
        ),
    )


# --- Cars (Stanford Cars class names give make, model, year, body type; colour/view/setting are annotations) -----
CAR_BODY_TYPES = ("Sedan", "SUV", "Coupe", "Convertible", "Hatchback", "Wagon", "Minivan", "Van", "Cab")
CAR_COLOURS = ("black", "white", "silver", "grey", "red", "blue", "green", "yellow", "orange", "brown", "beige")
CAR_VIEWS = ("front", "rear", "side", "front three-quarter", "rear three-quarter")
CAR_SETTINGS = ("street", "showroom", "nature", "parking lot")
CAR_YEARS = tuple(str(y) for y in range(1990, 2013))


def _cars() -> DomainSchema:
    return DomainSchema(
        domain=CARS,
        category_attribute="body_type",
        # Paper A.4.1 names six Cars attributes; the model is not one of them. Our choice: the model is preserved
        # (budget 0: "this car in red" keeps the model) and free only when the query changes the make or body type,
        # which no model can keep.
        modifiable_budget=0,
        attributes=(
            # paper A.4.1: "all six attributes of the Cars items appear in queries" — body type included
            Attribute("body_type", CONSTRAINT, CAR_BODY_TYPES, label="body type", visual=True),
            Attribute("colour", CONSTRAINT, CAR_COLOURS, label="colour", visual=True),
            Attribute("view", CONSTRAINT, CAR_VIEWS, label="view", visual=True),
            Attribute("setting", CONSTRAINT, CAR_SETTINGS, label="setting", visual=True),
            Attribute("brand", CONSTRAINT, None, label="make"),
            # paper A.4.1: Cars year has no negative conditions; requests use "newer"/"older"
            Attribute(
                "year",
                CONSTRAINT,
                CAR_YEARS,
                ordered=True,
                comparatives=("older", "newer"),
                allow_negative=False,
                label="model year",
            ),
            Attribute("model", MODIFIABLE, None, label="model", free_with=("brand", "body_type")),
        ),
    )


@cache
def schema_for(domain: str) -> DomainSchema:
    """The schema of a domain in `names.DOMAINS`; ValueError for another name."""
    if domain == FASHION:
        return _fashion()
    if domain == CARS:
        return _cars()
    raise ValueError(f"unknown domain {domain!r}; known: {', '.join(names.DOMAINS)}")


# --- schema files (`triad build full --schema FILE`) ------------------------------------------------------------
def schema_to_json(schema: DomainSchema) -> dict[str, Any]:
    """A JSON-ready dict of one domain schema (the format `--schema` files use, one entry per domain)."""
    out: dict[str, Any] = {
        "category_attribute": schema.category_attribute,
        "modifiable_budget": schema.modifiable_budget,
        "attributes": [],
    }
    for a in schema.attributes:
        entry: dict[str, Any] = {"name": a.name, "role": a.role, "values": list(a.values) if a.values else None}
        if a.families:
            entry["families"] = dict(a.families)
        if a.ordered:
            entry["ordered"], entry["comparatives"] = True, list(a.comparatives or ())
        if a.applies_to is not None:
            entry["applies_to"] = sorted(a.applies_to)
        if a.free_with:
            entry["free_with"] = list(a.free_with)
        entry.update(allow_negative=a.allow_negative, label=a.label, visual=a.visual)
        out["attributes"].append(entry)
    return out


def _attribute(domain: str, entry: Any) -> Attribute:
    allowed = {f.name for f in fields(Attribute)}
    if not isinstance(entry, Mapping) or "name" not in entry or "role" not in entry:
        raise ValueError(f"{domain}: every attribute needs at least 'name' and 'role'")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ValueError(f"{domain}.{entry['name']}: unknown key(s) {unknown}; allowed: {', '.join(sorted(allowed))}")
    kw = dict(entry)
    for key in ("values", "comparatives", "free_with"):
        if kw.get(key) is not None:
            kw[key] = tuple(str(v) for v in kw[key])
    if kw.get("applies_to") is not None:
        kw["applies_to"] = frozenset(kw["applies_to"])
    return Attribute(**kw)


def schema_from_json(data: Mapping[str, Any], domain: str = FASHION) -> DomainSchema:
    """A DomainSchema from `schema_to_json`'s dict; ValueError naming what is wrong."""
    unknown = sorted(set(data) - {"category_attribute", "modifiable_budget", "attributes"})
    if unknown:
        raise ValueError(f"{domain}: unknown key(s) {unknown}")
    attributes = tuple(_attribute(domain, e) for e in data.get("attributes") or [])
    return DomainSchema(
        domain, attributes, str(data.get("category_attribute", "")), int(data.get("modifiable_budget", 0))
    )


def load_schema_file(path: str | os.PathLike) -> dict[str, DomainSchema]:
    """Domain -> schema from a JSON file `{"fashion": {...}, "cars": {...}}` (a domain left out keeps the default).

    Any problem is a TriadError naming the file and what is wrong.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TriadError(f"{path}: cannot read the schema file ({exc})") from exc
    if not isinstance(data, Mapping) or not data:
        raise TriadError(f"{path}: a schema file is a JSON object with a 'fashion' and/or 'cars' entry")
    out = {}
    for domain, entry in data.items():
        if domain not in names.DOMAINS:
            raise TriadError(f"{path}: unknown domain {domain!r}; known: {', '.join(names.DOMAINS)}")
        try:
            out[domain] = schema_from_json(entry, domain)
        except (ValueError, TypeError) as exc:
            raise TriadError(f"{path}: {exc}") from exc
    return out


def schemas_from_audit(audit: Mapping[str, Any], *, defaults: bool = True) -> dict[str, DomainSchema]:
    """The schemas a folder was built with (audit.json "schema"); for a domain without one, the default schema
    (`defaults=True`) or nothing."""
    recorded = audit.get("schema") or {}
    return {
        d: schema_from_json(recorded[d], d) if d in recorded else schema_for(d)
        for d in names.DOMAINS
        if d in recorded or defaults
    }


if __name__ == "__main__":  # print the default schemas in the `--schema` file format
    print(json.dumps({d: schema_to_json(schema_for(d)) for d in names.DOMAINS}, indent=2, ensure_ascii=False))
