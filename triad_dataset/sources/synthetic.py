"""Deterministic synthetic Fashion and Cars catalogs for the mini edition and the benchmarks (placeholders).

The generators mimic the structure the constraints track relies on: products come in colourways of one design,
designs come in small clusters that differ in one to three visual attributes (pattern, sleeves, length), cars
come as model-years in several colours photographed from a shared set of views and settings. Every product has
several images (the Same task's positives). Pictures are rendered by `render.py` from the attributes when a
build asks for them. Same seed, same size -> the same catalog.

>>> c = synthetic_catalog("fashion", 200, seed=0)
>>> len(c), c.items[0].item_id, len({i.product_id for i in c.items}) < len(c)
(200, 'fashion-00000', True)
>>> synthetic_catalog("cars", 50, seed=1).items[3].attributes == synthetic_catalog("cars", 50, seed=1).items[3].attributes
True
"""

from __future__ import annotations

import numpy as np

from triad_dataset.contract import names
from triad_dataset.contract.schema import (
    CARS,
    FASHION,
    LENGTHED,
    LENGTHS,
    NECKLINES,
    NOT_APPLICABLE,
    SLEEVES,
    TOPS,
    schema_for,
)
from triad_dataset.sources.catalog import Catalog, Item
from triad_dataset.sources.render import render_item

MINI_SIZES = {FASHION: 1800, CARS: 1400}  # >= 1,500 / 1,000 items, large enough for 1,000-candidate pools
FASHION_COLOURS = (
    "Black",
    "Charcoal",
    "White",
    "Off White",
    "Grey",
    "Navy Blue",
    "Blue",
    "Teal",
    "Red",
    "Maroon",
    "Pink",
    "Purple",
    "Green",
    "Olive",
    "Yellow",
    "Mustard",
    "Orange",
    "Brown",
    "Beige",
    "Khaki",
)
FASHION_BRANDS = (
    "Aurora",
    "Birch",
    "Cobalt",
    "Dune",
    "Ember",
    "Fjord",
    "Gale",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
)
WOMEN_ONLY = frozenset({"Dresses", "Skirts"})
# article types with a distinct rendered silhouette (the schema also accepts Kurtas, Tunics, Leggings, ...)
SYNTHETIC_CATEGORIES = (
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
)
CAR_MODELS = (
    ("Audi", "A4", "Sedan"),
    ("Audi", "Q5", "SUV"),
    ("Audi", "TT", "Coupe"),
    ("BMW", "3 Series", "Sedan"),
    ("BMW", "X5", "SUV"),
    ("BMW", "M6", "Convertible"),
    ("Chevrolet", "Malibu", "Sedan"),
    ("Chevrolet", "Tahoe", "SUV"),
    ("Chevrolet", "Silverado", "Cab"),
    ("Chevrolet", "Express", "Van"),
    ("Dodge", "Caravan", "Minivan"),
    ("Dodge", "Ram", "Cab"),
    ("Ford", "Focus", "Hatchback"),
    ("Ford", "Mustang", "Convertible"),
    ("Ford", "F-150", "Cab"),
    ("Ford", "E-Series", "Van"),
    ("Honda", "Accord", "Sedan"),
    ("Honda", "Odyssey", "Minivan"),
    ("Hyundai", "Elantra", "Sedan"),
    ("Hyundai", "Veloster", "Hatchback"),
    ("Mercedes-Benz", "E-Class", "Wagon"),
    ("Mercedes-Benz", "C-Class", "Sedan"),
    ("Nissan", "Leaf", "Hatchback"),
    ("Nissan", "370Z", "Coupe"),
    ("Toyota", "Camry", "Sedan"),
    ("Toyota", "Sienna", "Minivan"),
    ("Volvo", "XC90", "SUV"),
    ("Volvo", "240", "Wagon"),
    ("Jeep", "Wrangler", "SUV"),
    ("Porsche", "911", "Coupe"),
)
CAR_COLOURS = ("black", "white", "silver", "grey", "red", "blue", "green", "yellow", "orange", "brown", "beige")


def _pick(rng: np.random.Generator, values: tuple[str, ...] | list[str], size: int | None = None):
    if size is None:
        return values[int(rng.integers(len(values)))]
    return [values[int(i)] for i in rng.choice(len(values), size=min(size, len(values)), replace=False)]


def _fashion_design(rng: np.random.Generator) -> dict[str, str]:
    schema = schema_for(FASHION)
    category = _pick(rng, SYNTHETIC_CATEGORIES)
    gender = _pick(rng, ("Women", "Girls") if category in WOMEN_ONLY else ("Men", "Women", "Boys", "Girls"))
    return {
        "category": category,
        "gender": gender,
        "pattern": _pick(rng, tuple(schema.attribute("pattern").values or ())),
        "sleeve_length": _pick(rng, SLEEVES) if category in TOPS else NOT_APPLICABLE,
        "length": _pick(rng, LENGTHS) if category in LENGTHED else NOT_APPLICABLE,
        "neckline": _pick(rng, NECKLINES) if category in TOPS else NOT_APPLICABLE,
    }


def _mutate(rng: np.random.Generator, design: dict[str, str]) -> dict[str, str]:
    """A sibling design differing in one to three of pattern / sleeve_length / length / neckline (when applicable)."""
    schema = schema_for(FASHION)
    out = dict(design)
    options = ["pattern"] + [a for a in ("sleeve_length", "length", "neckline") if design[a] != NOT_APPLICABLE]
    count = min(len(options), int(rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1])))  # mostly one-attribute siblings
    for name in _pick(rng, options, count):
        values = [v for v in schema.attribute(name).values or () if v != design[name]]
        out[name] = _pick(rng, values)
    return out


FASHION_SEASONS = ("Summer", "Winter", "Spring", "Fall")
FASHION_USAGES = ("Casual", "Formal", "Sports", "Party")
# how many of year / season / usage a colourway changes from its collection (the schema's budget allows one)
COLLECTION_CHANGES = (0, 1, 2)
COLLECTION_CHANGE_P = (0.3, 0.4, 0.3)


def _collection(rng: np.random.Generator) -> dict[str, str]:
    return {
        "year": str(int(rng.integers(2010, 2019))),
        "season": _pick(rng, FASHION_SEASONS),
        "usage": _pick(rng, FASHION_USAGES),
    }


def _vary(rng: np.random.Generator, collection: dict[str, str]) -> dict[str, str]:
    """A colourway's year / season / usage: its collection's, with 0-2 of them changed."""
    out = dict(collection)
    fresh = _collection(rng)
    for name in _pick(rng, tuple(out), int(rng.choice(COLLECTION_CHANGES, p=COLLECTION_CHANGE_P))):
        while fresh[name] == out[name]:
            fresh = _collection(rng)
        out[name] = fresh[name]
    return out


def synthetic_fashion(n_items: int, seed: int = 0) -> Catalog:
    """At least `n_items` fashion images (trimmed to exactly n_items), 1-5 images per product.

    A cluster of sibling designs is one brand's collection (shared brand, mostly shared year / season / usage),
    so the schema's preserved brand and modifiable budget leave positives to find.
    """
    rng = np.random.default_rng([seed, 11])
    items: list[Item] = []
    product = 0
    while len(items) < n_items:
        base = _fashion_design(rng)
        palette = _pick(rng, FASHION_COLOURS, int(rng.integers(3, 6)))
        cluster = [base] + [_mutate(rng, base) for _ in range(int(rng.integers(2, 5)))]
        brand, collection = _pick(rng, FASHION_BRANDS), _collection(rng)
        for design in cluster:
            for colour in _pick(rng, palette, int(rng.integers(2, 5))):
                attributes = {**design, "colour": colour, "brand": brand, **_vary(rng, collection)}
                for image in range(int(rng.integers(1, 6))):
                    items.append(
                        Item(
                            f"fashion-{len(items):05d}",
                            f"fashion-p{product:05d}",
                            dict(attributes),
                            variant=product * 8 + image,
                        )
                    )
                product += 1
    return Catalog(FASHION, items[:n_items], source=f"synthetic fashion (seed {seed})", renderer=render_item)


def synthetic_cars(n_items: int, seed: int = 0) -> Catalog:
    """At least `n_items` car images (trimmed), each product (model, year, colour) photographed 4-7 times
    from its own six (view, setting) set-ups — 3 views x 2 settings or 2 views x 3 settings — with repeats
    allowed, as in a photo shoot (one shoot per product, so other products of the model rarely share a set-up)."""
    rng = np.random.default_rng([seed, 13])
    schema = schema_for(CARS)
    views, settings = schema.attribute("view").values or (), schema.attribute("setting").values or ()
    items: list[Item] = []
    product = 0
    while len(items) < n_items:
        make, model, body = CAR_MODELS[int(rng.integers(len(CAR_MODELS)))]
        first = int(rng.integers(1998, 2012))  # model years 1998-2012 (Stanford Cars spans 1991-2012)
        years = [str(y) for y in range(first, min(2012, first + int(rng.integers(1, 4))) + 1)]
        palette = _pick(rng, CAR_COLOURS, int(rng.integers(4, 7)))
        for year in years:
            for colour in _pick(rng, palette, int(rng.integers(3, 6))):
                n_views = int(rng.choice([2, 3]))
                shoot = [(v, s) for v in _pick(rng, views, n_views) for s in _pick(rng, settings, 6 // n_views)]
                for image, k in enumerate(rng.choice(len(shoot), size=int(rng.integers(4, 8)), replace=True)):
                    view, setting = shoot[int(k)]
                    attributes = {
                        "body_type": body,
                        "colour": colour,
                        "view": view,
                        "setting": setting,
                        "brand": make,
                        "model": model,
                        "year": year,
                    }
                    items.append(
                        Item(f"cars-{len(items):05d}", f"cars-p{product:05d}", attributes, variant=product * 8 + image)
                    )
                product += 1
    return Catalog(CARS, items[:n_items], source=f"synthetic cars (seed {seed})", renderer=render_item)


def synthetic_catalog(domain: str, n_items: int | None = None, seed: int = 0) -> Catalog:
    """The synthetic catalog of a domain (`n_items` defaults to the mini edition's size)."""
    if domain not in names.DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; known: {', '.join(names.DOMAINS)}")
    size = MINI_SIZES[domain] if n_items is None else n_items
    return synthetic_fashion(size, seed) if domain == FASHION else synthetic_cars(size, seed)
