"""Product catalogs of the constraints track: items, their hidden attributes, images, and readers (paper A.2).

A catalog is a list of items (one image each) grouped into products (several images of one product share a
`product_id`; the Same task's positives). Three readers build one:

- `read_attribute_table(csv, domain)` — the documented attribute-table format (docs/constraints.md): columns
  `item_id, product_id, image` plus one column per schema attribute (`schema.schema_for(domain).names`);
- `read_fashion_styles(styles_csv, images_dir, annotations=None)` — Fashion Product Images' own `styles.csv`
  (id, gender, masterCategory, subCategory, articleType, baseColour, season, year, usage, productDisplayName),
  plus an optional visual-attribute table (`id, pattern, sleeve_length, length`);
- `read_stanford_cars(csv, images_dir)` — Stanford Cars images with their class names ("AM General Hummer SUV
  2000" gives make, model, body type, year) plus colour / view / setting annotations.

Every bad input raises `TriadError` naming the file and the 1-based data row (the header is row 1).

>>> parse_car_class("AM General Hummer SUV 2000")
('AM General', 'Hummer', 'SUV', '2000')
>>> parse_car_class("Chevrolet Silverado 1500 Extended Cab 2012")
('Chevrolet', 'Silverado 1500', 'Cab', '2012')
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.schema import CARS, FASHION, NOT_APPLICABLE, DomainSchema, schema_for


@dataclass
class Item:
    """One product image with its hidden attributes (every schema attribute, "" where not applicable)."""

    item_id: str
    product_id: str
    attributes: dict[str, str]
    image_path: Path | None = None
    image_bytes: bytes | None = None
    variant: int = 0  # which rendering of a synthetic product (pose/background jitter)


@dataclass
class Catalog:
    """The items of one domain and their attribute-code matrix (rows = items, columns = schema attributes)."""

    domain: str
    items: list[Item]
    source: str = "<memory>"
    skipped: int = 0  # rows a reader skipped on request (counted in the audit)
    renderer: Callable[[str, Mapping[str, str], int], bytes] | None = field(default=None, repr=False)
    attribute_schema: DomainSchema | None = field(default=None, repr=False)  # None: the default schema_for(domain)

    def __post_init__(self) -> None:
        if self.attribute_schema is not None and self.attribute_schema.domain != self.domain:
            raise ValueError(f"{self.source}: a {self.attribute_schema.domain} schema for a {self.domain} catalog")
        validate_items(self.schema, self.items, self.source)

    @property
    def schema(self) -> DomainSchema:
        """The attribute schema every rule of this catalog's build reads (schema.py)."""
        return self.attribute_schema if self.attribute_schema is not None else schema_for(self.domain)

    def __len__(self) -> int:
        return len(self.items)

    @cached_property
    def index(self) -> dict[str, int]:
        return {item.item_id: i for i, item in enumerate(self.items)}

    @cached_property
    def codes(self) -> CodeMatrix:
        return CodeMatrix.build(self.schema, self.items)

    @cached_property
    def product_codes(self) -> np.ndarray:
        """Integer product id per item (same integer = same product)."""
        lookup: dict[str, int] = {}
        return np.array([lookup.setdefault(item.product_id, len(lookup)) for item in self.items], dtype=np.int64)

    def image_bytes(self, position: int) -> bytes:
        """The item's encoded image: given bytes, the file, or a rendering from its attributes."""
        item = self.items[position]
        if item.image_bytes is not None:
            return item.image_bytes
        if item.image_path is not None:
            try:
                return Path(item.image_path).read_bytes()
            except OSError as exc:
                raise TriadError(f"{item.image_path}: cannot read image of item {item.item_id} ({exc})") from exc
        if self.renderer is None:
            raise TriadError(f"{self.source}: item {item.item_id} has no image")
        return self.renderer(self.domain, item.attributes, item.variant)

    def image_value(self, position: int) -> dict[str, object]:
        """A datasets `Image()` value {"bytes", "path"} for the item."""
        item = self.items[position]
        name = Path(item.image_path).name if item.image_path is not None else f"{item.item_id}.png"
        return {"bytes": self.image_bytes(position), "path": name}


@dataclass
class CodeMatrix:
    """Integer codes of every item's attributes: `values` (value index, -1 = not applicable) and `families`.

    For an ordered attribute the value index is its rank. Free-text attributes get a sorted vocabulary.
    """

    vocab: list[tuple[str, ...]]
    values: np.ndarray  # int32 (n_items, n_attributes)
    families: np.ndarray  # int32 (n_items, n_attributes)
    family_of: list[np.ndarray]  # per attribute: value code -> family code

    @classmethod
    def build(cls, schema: DomainSchema, items: Sequence[Item]) -> CodeMatrix:
        n, k = len(items), len(schema.attributes)
        values = np.full((n, k), -1, dtype=np.int32)
        families = np.full((n, k), -1, dtype=np.int32)
        vocab, family_of = [], []
        for j, attribute in enumerate(schema.attributes):
            column = [item.attributes.get(attribute.name, NOT_APPLICABLE) for item in items]
            words = attribute.values if attribute.values is not None else tuple(sorted(set(column) - {NOT_APPLICABLE}))
            lookup = {v: i for i, v in enumerate(words)}
            fam_names = sorted({attribute.family(v) for v in words})
            fam_lookup = {f: i for i, f in enumerate(fam_names)}
            fam = np.array([fam_lookup[attribute.family(v)] for v in words], dtype=np.int32)
            codes = np.array([lookup.get(v, -1) for v in column], dtype=np.int32)
            values[:, j] = codes
            families[:, j] = np.where(codes >= 0, fam[np.maximum(codes, 0)] if len(fam) else -1, -1)
            vocab.append(tuple(words))
            family_of.append(fam)
        return cls(vocab, values, families, family_of)

    def code(self, j: int, value: str) -> int:
        """The code of a value of attribute column j (-1 when absent or not applicable)."""
        try:
            return self.vocab[j].index(value)
        except ValueError:
            return -1

    def family_code(self, j: int, value: str) -> int:
        code = self.code(j, value)
        return int(self.family_of[j][code]) if code >= 0 else -1


def validate_items(schema: DomainSchema, items: Sequence[Item], source: str) -> None:
    """Unique ids and every value inside the schema; TriadError naming the source and item otherwise."""
    seen: set[str] = set()
    for item in items:
        if item.item_id in seen:
            raise TriadError(f"{source}: duplicate item_id {item.item_id!r}")
        seen.add(item.item_id)
        for name, value in item.attributes.items():
            attribute = schema.attribute(name) if name in schema.names else None
            if attribute is None:
                raise TriadError(f"{source}: item {item.item_id}: unknown attribute {name!r}")
            if not attribute.accepts(value):
                raise TriadError(f"{source}: item {item.item_id}: {name} value {value!r} is not in the schema")


# ------------------------------------------------------------------------------------------------ CSV helpers


def _rows(path: Path, allowed: Sequence[str], required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(row number, row) of a CSV file; unknown or missing columns are a TriadError naming the file."""
    if not path.is_file():
        raise TriadError(f"{path}: file not found")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise TriadError(f"{path}: empty file (expected a header row)")
        header = [h.strip() for h in header]
        unknown = [h for h in header if h not in allowed]
        if unknown:
            raise TriadError(f"{path}: unknown column(s) {unknown}; allowed: {', '.join(allowed)}")
        missing = [c for c in required if c not in header]
        if missing:
            raise TriadError(f"{path}: missing column(s) {missing}")
        for number, cells in enumerate(reader, start=2):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise TriadError(f"{path}, row {number}: {len(cells)} cells but the header has {len(header)}")
            yield number, {h: c.strip() for h, c in zip(header, cells, strict=True)}


def _check_value(schema: DomainSchema, name: str, value: str, where: str) -> str:
    attribute = schema.attribute(name)
    if not attribute.accepts(value):
        allowed = ", ".join(attribute.values or ())
        raise TriadError(f"{where}: {name} value {value!r} is not in the {schema.domain} schema (allowed: {allowed})")
    return value


def _image(root: Path, relative: str, where: str) -> Path:
    path = root / relative
    if not path.is_file():
        raise TriadError(f"{where}: image file {path} not found")
    return path


def _year(value: str) -> str:
    """'2012.0' -> '2012' (styles.csv stores years as floats in some exports); '' stays ''."""
    try:
        return str(int(float(value))) if value else NOT_APPLICABLE
    except ValueError:
        return value


def _applicable(schema: DomainSchema, attributes: dict[str, str]) -> dict[str, str]:
    """Blank out attributes that do not apply to the item's category (sleeves of a skirt)."""
    category = attributes.get(schema.category_attribute)
    return {k: (v if schema.attribute(k).applies(category) else NOT_APPLICABLE) for k, v in attributes.items()}


# ------------------------------------------------------------------------------------------ attribute table

TABLE_ID_COLUMNS = ("item_id", "product_id", "image")


def read_attribute_table(
    path: str | os.PathLike,
    domain: str,
    *,
    images_dir: str | os.PathLike | None = None,
    schema: DomainSchema | None = None,
) -> Catalog:
    """Read the documented attribute-table CSV (`item_id, product_id, image, <schema attributes>`).

    `image` is a path relative to `images_dir` (default: the CSV's folder). An empty cell means "not applicable".
    """
    path = Path(path)
    schema = schema if schema is not None else schema_for(domain)
    root = Path(images_dir) if images_dir is not None else path.parent
    allowed = TABLE_ID_COLUMNS + schema.names
    items = []
    for number, row in _rows(path, allowed, allowed):
        where = f"{path}, row {number}"
        attributes = {n: _check_value(schema, n, row[n], where) for n in schema.names}
        if not row["item_id"] or not row["product_id"]:
            raise TriadError(f"{where}: empty item_id or product_id")
        image = _image(root, row["image"], where)
        items.append(Item(row["item_id"], row["product_id"], _applicable(schema, attributes), image_path=image))
    return Catalog(domain, items, source=str(path), attribute_schema=schema)


# ------------------------------------------------------------------------------------ Fashion Product Images

STYLES_COLUMNS = (
    "id",
    "gender",
    "masterCategory",
    "subCategory",
    "articleType",
    "baseColour",
    "season",
    "year",
    "usage",
    "productDisplayName",
)
STYLES_ATTRIBUTES = ("category", "gender", "colour", "season", "year", "usage", "brand")  # read from styles.csv


def annotation_columns(schema: DomainSchema) -> tuple[str, ...]:
    """Columns of the visual-annotation CSV: `id` and every schema attribute styles.csv does not give.

    >>> annotation_columns(schema_for("fashion"))
    ('id', 'neckline', 'pattern', 'sleeve_length', 'length')
    """
    return ("id", *(a for a in schema.names if a not in STYLES_ATTRIBUTES))


def read_fashion_styles(
    styles_csv: str | os.PathLike,
    images_dir: str | os.PathLike,
    *,
    annotations: str | os.PathLike | None = None,
    skip_unsupported: bool = False,
    schema: DomainSchema | None = None,
) -> Catalog:
    """Fashion Product Images (`styles.csv` + `images/<id>.jpg`) plus optional visual annotations.

    Mapping: articleType -> category, baseColour -> colour, gender, season, year, usage; brand = first word of
    productDisplayName; product_id = lower-cased productDisplayName + baseColour (the source photographs one
    product under several ids). The annotations give every other schema attribute (`annotation_columns`: neckline,
    pattern, sleeve_length, length by default); without them those are "not applicable" and never become
    conditions. An articleType outside the schema is an error, or skipped (and counted) with
    `skip_unsupported=True`.
    """
    styles_csv, images_dir = Path(styles_csv), Path(images_dir)
    schema = schema if schema is not None else schema_for(FASHION)
    visual: dict[str, dict[str, str]] = {}
    if annotations is not None:
        ann_path = Path(annotations)
        for number, row in _rows(ann_path, annotation_columns(schema), ("id",)):
            where = f"{ann_path}, row {number}"
            visual[row["id"]] = {k: _check_value(schema, k, v, where) for k, v in row.items() if k != "id"}
    items, skipped = [], 0
    for number, row in _rows(styles_csv, STYLES_COLUMNS, STYLES_COLUMNS):
        where = f"{styles_csv}, row {number}"
        if skip_unsupported and row["articleType"] not in (schema.attribute("category").values or ()):
            skipped += 1
            continue
        attributes = {
            "category": _check_value(schema, "category", row["articleType"], where),
            "gender": _check_value(schema, "gender", row["gender"], where),
            "colour": _check_value(schema, "colour", row["baseColour"], where),
            "season": _check_value(schema, "season", row["season"], where),
            "year": _year(row["year"]),
            "usage": _check_value(schema, "usage", row["usage"], where),
            "brand": row["productDisplayName"].split(" ")[0] if row["productDisplayName"] else NOT_APPLICABLE,
            **dict.fromkeys(annotation_columns(schema)[1:], NOT_APPLICABLE),
        }
        attributes.update(visual.get(row["id"], {}))
        image = _image(images_dir, f"{row['id']}.jpg", where)
        product = f"{row['productDisplayName'].lower()}|{row['baseColour']}"
        items.append(Item(row["id"], product, _applicable(schema, attributes), image_path=image))
    return Catalog(FASHION, items, source=str(styles_csv), skipped=skipped, attribute_schema=schema)


# ------------------------------------------------------------------------------------------------ Stanford Cars

CAR_MULTIWORD_MAKES = ("AM General", "Aston Martin", "Land Rover")
# body-type words of Stanford Cars class names -> schema body types (all pickup cabs are "Cab")
CAR_BODY_WORDS = {
    "SUV": "SUV",
    "Sedan": "Sedan",
    "Coupe": "Coupe",
    "Convertible": "Convertible",
    "Hatchback": "Hatchback",
    "Wagon": "Wagon",
    "Minivan": "Minivan",
    "Van": "Van",
    "Cab": "Cab",
    "SuperCab": "Cab",
}
CARS_COLUMNS = ("image", "class_name", "colour", "view", "setting", "body_type", "product_id")


def parse_car_class(name: str) -> tuple[str, str, str | None, str]:
    """(make, model, body type or None, year) of a Stanford Cars class name; ValueError when it has no year."""
    words = name.split()
    if len(words) < 3 or not (words[-1].isdigit() and len(words[-1]) == 4):
        raise ValueError(f"car class name {name!r} does not end with a 4-digit year")
    year, words = words[-1], words[:-1]
    make_words = next((m.split() for m in CAR_MULTIWORD_MAKES if name.startswith(m + " ")), words[:1])
    rest = words[len(make_words) :]
    body = None
    for position in range(len(rest) - 1, 0, -1):  # the last body word; what follows it is trim (e.g. "Type-S")
        if rest[position] in CAR_BODY_WORDS:
            body = CAR_BODY_WORDS[rest[position]]
            cut = (
                position - 1
                if body == "Cab"
                and position >= 1
                and rest[position - 1] in ("Crew", "Regular", "Extended", "Club", "Quad", "Super")
                else position
            )
            rest = rest[:cut]
            break
    return " ".join(make_words), " ".join(rest), body, year


def read_stanford_cars(
    table: str | os.PathLike, images_dir: str | os.PathLike, *, schema: DomainSchema | None = None
) -> Catalog:
    """Stanford Cars images listed in a CSV `image, class_name, colour, view, setting[, body_type][, product_id]`.

    make, model, year and body type come from the class name; a `body_type` cell overrides it and is required
    where the class name names none ("Chevrolet Corvette ZR1 2012"). product_id defaults to class + colour.
    """
    table, images_dir = Path(table), Path(images_dir)
    schema = schema if schema is not None else schema_for(CARS)
    items = []
    for number, row in _rows(table, CARS_COLUMNS, ("image", "class_name", "colour", "view", "setting")):
        where = f"{table}, row {number}"
        try:
            make, model, body, year = parse_car_class(row["class_name"])
        except ValueError as exc:
            raise TriadError(f"{where}: {exc}") from exc
        body = row.get("body_type") or body
        if body is None:
            raise TriadError(f"{where}: class {row['class_name']!r} names no body type; add a body_type cell")
        attributes = {
            "body_type": _check_value(schema, "body_type", body, where),
            "colour": _check_value(schema, "colour", row["colour"], where),
            "view": _check_value(schema, "view", row["view"], where),
            "setting": _check_value(schema, "setting", row["setting"], where),
            "brand": make,
            "model": model,
            "year": _check_value(schema, "year", year, where),
        }
        image = _image(images_dir, row["image"], where)
        product = row.get("product_id") or f"{row['class_name']}|{row['colour']}"
        items.append(Item(Path(row["image"]).stem, product, attributes, image_path=image))
    return Catalog(CARS, items, source=str(table), attribute_schema=schema)
