"""Placeholder pictures for the mini edition's abstraction track: one small Pillow drawing per leaf class.

These are **not photographs**: the mini edition has no ImageNet-21K images, so each leaf class gets a 64x64 PNG
whose look follows the taxonomy, so the image path is exercised and a model can find some signal in it:
the background colour comes from the class's grandparent (cousins share it), the shape from its parent (siblings
share it), and the shape's colour, size and stripe count from the class itself (every class differs).
Everything derives from SHA-256 of wnids, so the bytes are identical on every run.

>>> from triad_dataset.sources.wordnet import NounGraph
>>> g = NounGraph.from_edges({"n00000002": ["n00000001"], "n00000003": ["n00000002"], "n00000004": ["n00000002"]})
>>> a, b = (render_placeholder(g, g.index_of(w)) for w in ("n00000003", "n00000004"))
>>> a[:8] == b"\\x89PNG\\r\\n\\x1a\\n", a != b, render_placeholder(g, g.index_of("n00000003")) == a
(True, True, True)
"""

from __future__ import annotations

import colorsys
import hashlib
from collections.abc import Iterable

from PIL import Image, ImageDraw

from triad_dataset.sources.imagefolder import ImageCollection, InstanceImage
from triad_dataset.sources.render import png_bytes
from triad_dataset.sources.wordnet import NounGraph

SIZE = 64
_SHAPES = ("ellipse", "square", "triangle", "diamond", "hexagon", "cross", "ring", "star")


def _bytes(wnid: str) -> bytes:
    return hashlib.sha256(wnid.encode("ascii")).digest()


def _colour(h: int, s: float, v: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(h / 256.0, s, v)
    return round(r * 255), round(g * 255), round(b * 255)


def _polygon(kind: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    if kind == "triangle":
        return [(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
    if kind == "diamond":
        return [(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)]
    if kind == "hexagon":
        return [
            (cx - r, cy),
            (cx - r / 2, cy - r),
            (cx + r / 2, cy - r),
            (cx + r, cy),
            (cx + r / 2, cy + r),
            (cx - r / 2, cy + r),
        ]
    # star: 8 points alternating radius
    pts = []
    for k in range(8):
        rad = r if k % 2 == 0 else r / 2.2
        dx, dy = [(0, -1), (0.7, -0.7), (1, 0), (0.7, 0.7), (0, 1), (-0.7, 0.7), (-1, 0), (-0.7, -0.7)][k]
        pts.append((cx + dx * rad, cy + dy * rad))
    return pts


def _first_parent(graph: NounGraph, node: int) -> int:
    parents = graph.parents(node)
    return int(min(parents, key=lambda p: (graph.depth[p], p))) if len(parents) else node


def render_placeholder(graph: NounGraph, node: int, size: int = SIZE) -> bytes:
    """PNG bytes of the placeholder picture of synset `node` (deterministic)."""
    parent = _first_parent(graph, node)
    grandparent = _first_parent(graph, parent)
    own, par, grand = _bytes(graph.wnids[node]), _bytes(graph.wnids[parent]), _bytes(graph.wnids[grandparent])
    img = Image.new("RGB", (size, size), _colour(grand[0], 0.25, 0.95))
    draw = ImageDraw.Draw(img)
    stripe = _colour(grand[0], 0.45, 0.8)
    for k in range(1 + own[3] % 4):  # stripes: per class
        y = (k + 1) * size // (2 + own[3] % 4)
        draw.line([(0, y), (size, y)], fill=stripe, width=max(1, size // 32))
    kind = _SHAPES[par[0] % len(_SHAPES)]  # shape: per parent
    fill = _colour(own[0], 0.55 + (own[1] % 40) / 100, 0.45 + (own[2] % 50) / 100)  # colour: per class
    c, r = size / 2, size * (0.22 + (own[4] % 12) / 100)
    box = [c - r, c - r, c + r, c + r]
    if kind == "ellipse":
        draw.ellipse(box, fill=fill)
    elif kind == "square":
        draw.rectangle(box, fill=fill)
    elif kind == "ring":
        draw.ellipse(box, outline=fill, width=max(2, size // 10))
    elif kind == "cross":
        w = r / 2.5
        draw.rectangle([c - r, c - w, c + r, c + w], fill=fill)
        draw.rectangle([c - w, c - r, c + w, c + r], fill=fill)
    else:
        draw.polygon(_polygon(kind, c, c, r), fill=fill)
    return png_bytes(img)


def subtree_classes(graph: NounGraph, root_wnids: Iterable[str]) -> list[int]:
    """Every synset below the given roots (internal and leaf classes, as ImageNet-21K has images for both),
    excluding instance synsets (proper names such as a particular ship), sorted."""
    nodes: set[int] = set()
    for wnid in root_wnids:
        for node in graph.descendant_distances(graph.index_of(wnid)):
            if not graph.parent_instance[graph.parent_ptr[node] : graph.parent_ptr[node + 1]].any():
                nodes.add(node)
    return sorted(nodes)


def placeholder_images(graph: NounGraph, nodes: Iterable[int], size: int = SIZE) -> ImageCollection:
    """One rendered placeholder per class, as an ImageCollection (file name ``<wnid>_placeholder.png``)."""
    images = []
    for node in nodes:
        wnid = graph.wnids[node]
        data = render_placeholder(graph, node, size)
        images.append(InstanceImage.from_bytes(wnid, f"{wnid}_placeholder.png", data, size, size))
    return ImageCollection.from_images(images, placeholders=True, size=size)
