"""`spatial_cogmap`: bird's-eye cognitive maps on a 10x10 grid; the query describes the layout from a viewpoint.

ARK B.1 (Spatial-Cogmap): maps on a standardized 10x10 grid (top-left [0,0], bottom-right [9,9]) with a unified set
of icons; hard negatives swap the coordinates of adjacent objects, keeping object categories and counts unchanged.
The paper's queries are perspective views; the mini edition's query states, from a viewpoint on one edge of the
room, where each object lies in the viewer's own frame, so the retriever must rotate the layout into the top-down map.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw

from ark_dataset.generators.base import Gallery, Generated, GenItem, GenQuery, Labels, subtype_of
from ark_dataset.render import png_bytes, stamp_text

SUBTYPE = subtype_of(__name__)
DESCRIPTION = (
    "bird's-eye maps of five objects on a 10x10 grid (unified icon set); the text query gives every "
    "object's position as seen from one edge of the room; hard negatives swap the coordinates of "
    "two adjacent objects (ARK B.1)."
)
# ARK B.1 (Spatial-Cogmap) "targets the spatial reasoning ability": reasoning-intensive, spatial skill.
LABELS = Labels("reasoning_intensive", ("spatial",))
GRID = 10
N_OBJECTS = 5
N_NEGATIVES = 4
# Object category -> (icon shape, colour): the unified icon set drawn on every map.
ICONS: dict[str, tuple[str, tuple[int, int, int]]] = {
    "sofa": ("rectangle", (52, 101, 164)),
    "table": ("square", (143, 89, 2)),
    "chair": ("triangle", (204, 0, 0)),
    "lamp": ("circle", (237, 212, 0)),
    "plant": ("diamond", (78, 154, 6)),
    "bed": ("wide", (117, 80, 123)),
    "tv": ("hexagon", (46, 52, 54)),
    "shelf": ("bar", (193, 125, 17)),
    "piano": ("cross", (85, 87, 83)),
    "fridge": ("ring", (32, 74, 135)),
}
CATEGORIES = tuple(ICONS)
# Viewpoints: the viewer stands outside one edge of the map and faces its opposite edge (north is the top row).
VIEWS = ("south", "north", "west", "east")
FACING = {"south": "north", "north": "south", "west": "east", "east": "west"}

Cell = tuple[int, int]  # (row, column) on the map, row 0 at the top (north)


@dataclass(frozen=True)
class Layout:
    """Object category -> map cell; categories are distinct within a map."""

    cells: tuple[tuple[str, Cell], ...]

    def as_dict(self) -> dict[str, Cell]:
        return dict(self.cells)


@dataclass(frozen=True)
class ViewQuery:
    """The layout seen from `view`: category -> (distance ahead, position from the viewer's left), both 0..9."""

    view: str
    seen: tuple[tuple[str, Cell], ...]


def to_view(view: str, cell: Cell) -> Cell:
    """Map cell -> (rows ahead counted from the nearest, columns counted from the viewer's left)."""
    row, col = cell
    last = GRID - 1
    if view == "south":  # facing north: nearest row is the bottom one, left is west
        return last - row, col
    if view == "north":  # facing south: nearest row is the top one, left is east
        return row, last - col
    if view == "west":  # facing east: nearest column is the left one, left is north
        return col, row
    if view == "east":  # facing west: nearest column is the right one, left is south
        return last - col, last - row
    raise ValueError(f"unknown viewpoint {view!r}")


def violations(query: ViewQuery, layout: Layout) -> frozenset[str]:
    """Categories whose seen position the map contradicts (a missing category counts as contradicted)."""
    cells = layout.as_dict()
    return frozenset(
        category
        for category, seen in query.seen
        if category not in cells or to_view(query.view, cells[category]) != seen
    )


def adjacent_pairs(layout: Layout) -> list[tuple[str, str]]:
    """Object pairs ordered by Manhattan distance (nearest first), ties by name — the 'adjacent objects' of B.1."""
    cells = layout.as_dict()
    pairs = itertools.combinations(sorted(cells), 2)
    return sorted(pairs, key=lambda p: (abs(cells[p[0]][0] - cells[p[1]][0]) + abs(cells[p[0]][1] - cells[p[1]][1]), p))


def swap(layout: Layout, a: str, b: str) -> Layout:
    """The same objects with the coordinates of `a` and `b` exchanged (ARK B.1 hard negative)."""
    cells = layout.as_dict()
    cells[a], cells[b] = cells[b], cells[a]
    return Layout(tuple(sorted(cells.items())))


def describe(query: ViewQuery) -> str:
    """Query text: the viewpoint, then every object in the viewer's frame."""
    parts = [
        f"the {category} is {ahead} rows ahead and {left} columns from the left"
        for category, (ahead, left) in query.seen
    ]
    return (
        f"A bird's-eye map of a room on a 10x10 grid. You stand outside its {query.view} edge, facing {FACING[query.view]}. "
        "Counting rows from 0 at the row nearest to you and columns from 0 at your far left: " + "; ".join(parts) + "."
    )


def _icon(draw: ImageDraw.ImageDraw, category: str, x0: int, y0: int, size: int) -> None:
    shape, color = ICONS[category]
    m = size // 6
    box = (x0 + m, y0 + m, x0 + size - m, y0 + size - m)
    cx, cy = x0 + size // 2, y0 + size // 2
    if shape in ("square", "rectangle", "wide", "bar"):
        shrink = {"square": (0, 0), "rectangle": (0, size // 6), "wide": (0, size // 4), "bar": (size // 4, 0)}[shape]
        draw.rectangle((box[0] + shrink[0], box[1] + shrink[1], box[2] - shrink[0], box[3] - shrink[1]), fill=color)
    elif shape == "circle":
        draw.ellipse(box, fill=color)
    elif shape == "ring":
        draw.ellipse(box, outline=color, width=max(2, size // 8))
    elif shape == "triangle":
        draw.polygon([(cx, box[1]), (box[2], box[3]), (box[0], box[3])], fill=color)
    elif shape == "diamond":
        draw.polygon([(cx, box[1]), (box[2], cy), (cx, box[3]), (box[0], cy)], fill=color)
    elif shape == "hexagon":
        draw.regular_polygon((cx, cy, size // 2 - m), 6, fill=color)
    elif shape == "cross":
        w = size // 6
        draw.rectangle((cx - w, box[1], cx + w, box[3]), fill=color)
        draw.rectangle((box[0], cy - w, box[2], cy + w), fill=color)


def render(layout: Layout) -> bytes:
    """The top-down map: grid with [row, col] labels, one icon per object and a legend."""
    cell, margin = 24, 22
    side = margin + GRID * cell
    image = Image.new("RGB", (side + 110, side + 8), "white")
    draw = ImageDraw.Draw(image)
    for i in range(GRID + 1):
        draw.line((margin, margin + i * cell, side, margin + i * cell), fill=(200, 200, 200))
        draw.line((margin + i * cell, margin, margin + i * cell, side), fill=(200, 200, 200))
    for i in range(GRID):
        stamp_text(image, (margin + i * cell + cell // 2, margin // 2), str(i), size=10)
        stamp_text(image, (margin // 2, margin + i * cell + cell // 2), str(i), size=10)
    for category, (row, col) in layout.cells:
        _icon(draw, category, margin + col * cell, margin + row * cell, cell)
    stamp_text(image, (side + 8, side - 12), "\u2191 north", size=10, anchor="lm")
    for i, (category, _) in enumerate(layout.cells):  # legend: icon -> category name
        _icon(draw, category, side + 8, margin + i * 22, 20)
        stamp_text(image, (side + 32, margin + i * 22 + 10), category, size=10, anchor="lm")
    return png_bytes(image)


def _random_layout(rng: random.Random) -> Layout:
    categories = rng.sample(CATEGORIES, N_OBJECTS)
    cells = rng.sample([(r, c) for r in range(GRID) for c in range(GRID)], N_OBJECTS)
    return Layout(tuple(sorted(zip(categories, cells, strict=True))))


def _item(layout: Layout) -> GenItem:
    return GenItem(layout, lambda: (None, render(layout)))


def generate(seed: int = 0, n_queries: int = 100, gallery_size: int = 520) -> Generated:
    """Each query: a random map seen from a random edge; negatives swap its N_NEGATIVES nearest object pairs."""
    rng = random.Random(f"{SUBTYPE}-{seed}")
    gallery = Gallery()
    queries: list[GenQuery] = []
    while len(queries) < n_queries:
        layout = _random_layout(rng)
        pairs = adjacent_pairs(layout)[:N_NEGATIVES]
        negatives = [swap(layout, a, b) for a, b in pairs]
        if layout in gallery or any(n in gallery for n in negatives):
            continue
        view = rng.choice(VIEWS)
        query = ViewQuery(view, tuple((c, to_view(view, cell)) for c, cell in layout.cells))
        positive = gallery.add(layout, _item(layout))
        queries.append(
            GenQuery(
                facts=query,
                text=describe(query),
                positive=positive,
                labels=LABELS,
                negatives=[(gallery.add(n, _item(n)), pair) for n, pair in zip(negatives, pairs, strict=True)],
            )
        )
    while len(gallery) < gallery_size:  # plain distractor maps
        layout = _random_layout(rng)
        gallery.add(layout, _item(layout))
    return Generated(SUBTYPE, queries, gallery.items)
