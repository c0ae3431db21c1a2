"""Per-domain attribute schemas of the constraints track (paper A.2).

Each attribute has a construction role (`names.ATTRIBUTE_ROLES`):

- `constraint`: may be named in a request; when a query does not name it, it must keep the reference's value;
- `modifiable`: free — it never decides relevance (visible text fields such as season or year in Fashion);
- `non_constraint_hard`: never requested, always preserved (article type and gender in Fashion, body type in Cars).

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
['category', 'gender']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from triad_dataset import names

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

    def __post_init__(self) -> None:
        if self.role not in names.ATTRIBUTE_ROLES:
            raise ValueError(f"attribute {self.name!r}: role {self.role!r} not in {names.ATTRIBUTE_ROLES}")
        if self.ordered and (self.values is None or self.comparatives is None):
            raise ValueError(f"attribute {self.name!r}: an ordered attribute needs values and comparatives")

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
    "Tshirts", "Shirts", "Tops", "Dresses", "Skirts", "Trousers", "Jeans", "Shorts", "Jackets", "Sweaters",
    "Sweatshirts", "Kurtas", "Tunics", "Blazers", "Track Pants", "Leggings", "Capris",
)
TOPS = frozenset({"Tshirts", "Shirts", "Tops", "Dresses", "Jackets", "Sweaters", "Sweatshirts", "Kurtas", "Tunics",
                  "Blazers"})
BOTTOMS = frozenset({"Trousers", "Jeans", "Shorts", "Track Pants", "Leggings", "Capris"})
LENGTHED = frozenset({"Dresses", "Skirts"})
# Fashion Product Images baseColour values grouped into coarse families (paper A.2).
FASHION_COLOUR_FAMILIES: dict[str, str] = {
    "Black": "black", "Charcoal": "black",
    "White": "white", "Off White": "white", "Cream": "white",
    "Grey": "grey", "Grey Melange": "grey", "Silver": "grey", "Steel": "grey",
    "Blue": "blue", "Navy Blue": "blue", "Turquoise Blue": "blue", "Teal": "blue",
    "Red": "red", "Maroon": "red", "Burgundy": "red", "Rust": "red",
    "Pink": "pink", "Magenta": "pink", "Rose": "pink", "Peach": "pink",
    "Purple": "purple", "Lavender": "purple", "Mauve": "purple",
    "Green": "green", "Olive": "green", "Sea Green": "green", "Lime Green": "green", "Fluorescent Green": "green",
    "Yellow": "yellow", "Mustard": "yellow", "Gold": "yellow",
    "Orange": "orange", "Copper": "orange",
    "Brown": "brown", "Coffee Brown": "brown", "Tan": "brown", "Mushroom Brown": "brown", "Bronze": "brown",
    "Beige": "beige", "Khaki": "beige", "Nude": "beige", "Skin": "beige", "Taupe": "beige",
    "Metallic": "metallic", "Multi": "multi",
}
FASHION_PATTERN_FAMILIES: dict[str, str] = {
    "solid": "solid", "striped": "stripes", "pinstriped": "stripes", "checked": "checks", "plaid": "checks",
    "polka dot": "dots", "floral": "floral", "graphic print": "print",
}
SLEEVES = ("sleeveless", "short", "three-quarter", "long")
LENGTHS = ("mini", "knee", "midi", "maxi")


def _fashion() -> DomainSchema:
    return DomainSchema(
        domain=FASHION,
        category_attribute="category",
        attributes=(
            Attribute("category", HARD, FASHION_CATEGORIES, label="article type", visual=True),
            Attribute("gender", HARD, ("Men", "Women", "Boys", "Girls", "Unisex"), label="gender"),
            Attribute("colour", CONSTRAINT, tuple(FASHION_COLOUR_FAMILIES), FASHION_COLOUR_FAMILIES,
                      label="colour", visual=True),
            Attribute("pattern", CONSTRAINT, tuple(FASHION_PATTERN_FAMILIES), FASHION_PATTERN_FAMILIES,
                      label="pattern", visual=True),
            Attribute("sleeve_length", CONSTRAINT, SLEEVES, ordered=True, comparatives=("shorter", "longer"),
                      applies_to=TOPS, label="sleeves", visual=True),
            Attribute("length", CONSTRAINT, LENGTHS, ordered=True, comparatives=("shorter", "longer"),
                      applies_to=LENGTHED, label="length", visual=True),
            Attribute("usage", MODIFIABLE, ("Casual", "Formal", "Sports", "Ethnic", "Smart Casual", "Party",
                                            "Travel", "Home"), label="occasion"),
            Attribute("brand", MODIFIABLE, None, label="brand"),
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
        attributes=(
            Attribute("body_type", HARD, CAR_BODY_TYPES, label="body type", visual=True),
            Attribute("colour", CONSTRAINT, CAR_COLOURS, label="colour", visual=True),
            Attribute("view", CONSTRAINT, CAR_VIEWS, label="view", visual=True),
            Attribute("setting", CONSTRAINT, CAR_SETTINGS, label="setting", visual=True),
            Attribute("brand", CONSTRAINT, None, label="make"),
            # paper A.4.1: Cars year has no negative conditions; requests use "newer"/"older"
            Attribute("year", CONSTRAINT, CAR_YEARS, ordered=True, comparatives=("older", "newer"),
                      allow_negative=False, label="model year"),
            Attribute("model", MODIFIABLE, None, label="model"),
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
