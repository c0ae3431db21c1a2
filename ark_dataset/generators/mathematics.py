"""`mathematics`: plots of symbolic functions; hard negatives perturb one coefficient or operator.

ARK B.3 (Mathematics) grounds symbolic expressions in diagrams and builds hard negatives that look alike but conflict
with a key mathematical constraint. The mini edition plots f(x) = a·F(k·x) ± b·G(x) ± c (F in sin/cos, G in x, x², |x|)
on a fixed window with Pillow; a hard negative changes exactly one slot (a coefficient, a sign or the function F) and
its curve must visibly differ from the positive's. Every gallery curve differs visibly from every other one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from ark_dataset.generators.base import Gallery, Generated, GenItem, GenQuery, Labels, subtype_of
from ark_dataset.render import png_bytes, stamp_text

SUBTYPE = subtype_of(__name__)
DESCRIPTION = (
    "plots of f(x) = a·F(k·x) ± b·G(x) ± c; the query is the formula; hard negatives change one "
    "coefficient, sign or function and visibly change the curve (ARK B.3)."
)
# ARK B.3 (Mathematics) "is designed to evaluate knowledge reasoning and symbolic reasoning": both.
LABELS = Labels("both", ("knowledge", "symbolic"))
N_NEGATIVES = 4
X_RANGE, Y_RANGE = (-6.0, 6.0), (-8.0, 8.0)
SAMPLES = np.linspace(*X_RANGE, 481)  # plotted points
CHECK_SAMPLES = np.linspace(*X_RANGE, 121)  # points where curves are compared (every 0.1 in x)
MIN_DIFFERENCE = 0.75  # y units (12 px): two curves closer than this everywhere count as the same picture
AMPLITUDES = (1.0, 2.0, 3.0)
FREQUENCIES = (0.5, 1.0, 2.0)
OFFSETS = (0.0, 1.0, 2.0, 3.0)
G_COEFFICIENTS = {"x": (0.5, 1.0, 1.5), "x²": (0.1, 0.2, 0.3), "|x|": (0.5, 1.0, 1.5)}


@dataclass(frozen=True)
class Expression:
    """f(x) = a·F(k·x) op1 b·G(x) op2 c."""

    a: float
    F: str
    k: float
    op1: str
    b: float
    G: str
    op2: str
    c: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        periodic = self.a * (np.sin if self.F == "sin" else np.cos)(self.k * x)
        g = {"x": x, "x²": x**2, "|x|": np.abs(x)}[self.G]
        sign1, sign2 = (1 if self.op1 == "+" else -1), (1 if self.op2 == "+" else -1)
        return periodic + sign1 * self.b * g + sign2 * self.c

    def text(self) -> str:
        """`f(x) = 2 sin(0.5x) − 0.2x² + 1`."""

        def num(v: float) -> str:
            return str(int(v)) if v.is_integer() else str(v)

        a = "" if self.a == 1 else f"{num(self.a)} "
        k = "" if self.k == 1 else num(self.k)
        b = "" if self.b == 1 else num(self.b)
        text = f"f(x) = {a}{self.F}({k}x) {self.op1.replace('-', '−')} {b}{self.G}"
        if self.c:
            text += f" {self.op2.replace('-', '−')} {num(self.c)}"
        return text


SLOTS = tuple(f.name for f in fields(Expression))


def violations(query: Expression, item: Expression) -> frozenset[str]:
    """The expression slots (coefficients, signs, functions) where the item differs from the query."""
    return frozenset(name for name in SLOTS if getattr(query, name) != getattr(item, name))


def curve_distance(a: Expression, b: Expression) -> float:
    """Largest vertical gap between the two curves inside the plotted window (clipped to the window)."""
    clip = np.clip
    return float(np.max(np.abs(clip(a(CHECK_SAMPLES), *Y_RANGE) - clip(b(CHECK_SAMPLES), *Y_RANGE))))


def render(expression: Expression) -> bytes:
    """Axes with integer ticks and the clipped curve; no formula is printed on the plot."""
    width, height, pad = 288, 288, 24
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    sx = (width - 2 * pad) / (X_RANGE[1] - X_RANGE[0])
    sy = (height - 2 * pad) / (Y_RANGE[1] - Y_RANGE[0])

    def px(x: float, y: float) -> tuple[float, float]:
        return pad + (x - X_RANGE[0]) * sx, height - pad - (y - Y_RANGE[0]) * sy

    for x in range(int(X_RANGE[0]), int(X_RANGE[1]) + 1):
        draw.line((*px(x, Y_RANGE[0]), *px(x, Y_RANGE[1])), fill=(232, 232, 232))
        if x % 2 == 0 and x:
            stamp_text(image, px(x, -0.5), str(x), size=9, fill=(90, 90, 90), anchor="mt")
    for y in range(int(Y_RANGE[0]), int(Y_RANGE[1]) + 1):
        draw.line((*px(X_RANGE[0], y), *px(X_RANGE[1], y)), fill=(232, 232, 232))
        if y % 2 == 0 and y:
            stamp_text(image, px(-0.2, y), str(y), size=9, fill=(90, 90, 90), anchor="rm")
    draw.line((*px(X_RANGE[0], 0), *px(X_RANGE[1], 0)), fill="black", width=1)
    draw.line((*px(0, Y_RANGE[0]), *px(0, Y_RANGE[1])), fill="black", width=1)
    values = expression(SAMPLES)
    inside = (values >= Y_RANGE[0]) & (values <= Y_RANGE[1])
    xs = pad + (SAMPLES - X_RANGE[0]) * sx
    ys = height - pad - (values - Y_RANGE[0]) * sy
    edges = np.flatnonzero(np.diff(np.concatenate(([0], inside.astype(np.int8), [0]))))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):  # one polyline per run of in-window samples
        draw.line(
            list(zip(xs[start:stop].tolist(), ys[start:stop].tolist(), strict=True)),
            fill=(30, 80, 200),
            width=2,
            joint="curve",
        )
    return png_bytes(image)


def _expression(rng: random.Random) -> Expression:
    g = rng.choice(tuple(G_COEFFICIENTS))
    return Expression(
        rng.choice(AMPLITUDES),
        rng.choice(("sin", "cos")),
        rng.choice(FREQUENCIES),
        rng.choice("+-"),
        rng.choice(G_COEFFICIENTS[g]),
        g,
        rng.choice("+-"),
        rng.choice(OFFSETS),
    )


def perturb(expression: Expression, slot: str, rng: random.Random) -> Expression:
    """Change one slot: a coefficient to another allowed value, a sign, or sin <-> cos."""
    choices = {
        "a": AMPLITUDES,
        "k": FREQUENCIES,
        "c": OFFSETS,
        "b": G_COEFFICIENTS[expression.G],
        "op1": ("+", "-"),
        "op2": ("+", "-"),
        "F": ("sin", "cos"),
    }[slot]
    change: dict[str, Any] = {slot: rng.choice([v for v in choices if v != getattr(expression, slot)])}
    return replace(expression, **change)


PERTURBABLE = ("a", "k", "c", "b", "op1", "op2", "F")


def _item(expression: Expression) -> GenItem:
    return GenItem(expression, lambda: (None, render(expression)))


def generate(seed: int = 0, n_queries: int = 100, gallery_size: int = 520) -> Generated:
    """Each query: an expression; negatives change one slot each; all gallery curves pairwise distinct."""
    rng = random.Random(f"{SUBTYPE}-{seed}")
    gallery = Gallery()
    curves = np.empty((gallery_size + n_queries * (N_NEGATIVES + 1), CHECK_SAMPLES.size))  # clipped curve per item

    def distinct(expression: Expression, extra: list[Expression]) -> bool:
        values = np.clip(expression(CHECK_SAMPLES), *Y_RANGE)
        if len(gallery) and float(np.abs(curves[: len(gallery)] - values).max(axis=1).min()) < MIN_DIFFERENCE:
            return False
        return all(curve_distance(expression, e) >= MIN_DIFFERENCE for e in extra)

    def add(expression: Expression) -> int:
        curves[len(gallery)] = np.clip(expression(CHECK_SAMPLES), *Y_RANGE)
        return gallery.add(expression, _item(expression))

    queries: list[GenQuery] = []
    while len(queries) < n_queries:
        expression = _expression(rng)
        if not distinct(expression, []):
            continue
        slots = rng.sample(PERTURBABLE, len(PERTURBABLE))
        negatives: list[tuple[Expression, str]] = []
        for slot in slots:
            other = perturb(expression, slot, rng)
            if len(negatives) < N_NEGATIVES and distinct(other, [expression] + [n for n, _ in negatives]):
                negatives.append((other, slot))
        if len(negatives) < N_NEGATIVES:
            continue
        positive = add(expression)
        queries.append(
            GenQuery(
                facts=expression,
                text=expression.text(),
                positive=positive,
                labels=LABELS,
                negatives=[(add(n), slot) for n, slot in negatives],
            )
        )
    while len(gallery) < gallery_size:  # plain distractor plots
        expression = _expression(rng)
        if distinct(expression, []):
            add(expression)
    return Generated(SUBTYPE, queries, gallery.items)
