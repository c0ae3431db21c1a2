"""`electronics`: Boolean functions of four inputs as expressions, truth tables and gate diagrams.

ARK B.5 (Electronics) retrieves circuit diagrams and truth tables from gate-level descriptions or Boolean relations;
hard negatives keep the layout but perturb the logic (swap a gate type, modify a truth-table entry, change an
operator). The mini edition has two query kinds, alternating:

- expression query (text) -> rendered truth table; hard negatives flip one output row;
- truth-table query (text, minterms) -> gate diagram (IEC rectangular symbols); hard negatives swap one gate's type.

Every gallery item computes a different function, so the positive is the only item whose truth table matches.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image, ImageDraw

from ark_dataset.generators.base import Gallery, Generated, GenItem, GenQuery, Labels, subtype_of
from ark_dataset.render import png_bytes, stamp_text

SUBTYPE = subtype_of(__name__)
DESCRIPTION = (
    "4-input Boolean functions: expression queries retrieve rendered truth tables (negatives flip one "
    "output row); truth-table queries retrieve IEC gate diagrams (negatives swap one gate type) "
    "(ARK B.5)."
)
# ARK B.5 (Electronics) "targets logical reasoning and symbolic reasoning": reasoning-intensive.
LABELS = Labels("reasoning_intensive", ("logical", "symbolic"))
INPUTS = ("A", "B", "C", "D")
N_ROWS = 2 ** len(INPUTS)
N_NEGATIVES = 4
GATES: dict[str, tuple[str, bool]] = {  # gate -> (IEC 60617 symbol, output inverted)
    "AND": ("&", False),
    "OR": ("\u22651", False),
    "XOR": ("=1", False),
    "NAND": ("&", True),
    "NOR": ("\u22651", True),
}
Bits = tuple[int, ...]  # output for rows 0..15; row index = ABCD in binary, A most significant


def apply_gate(gate: str, x: int, y: int) -> int:
    """Output of a two-input gate."""
    value = {"AND": x & y, "OR": x | y, "XOR": x ^ y, "NAND": x & y, "NOR": x | y}[gate]
    return 1 - value if GATES[gate][1] else value


@dataclass(frozen=True)
class Circuit:
    """Y = out(left(i0, i1), right(i2, i3)); `order` assigns the inputs, `inverted` puts NOT on an input."""

    left: str
    right: str
    out: str
    order: tuple[str, str, str, str]
    inverted: tuple[bool, bool, bool, bool]

    def gates(self) -> tuple[str, str, str]:
        return self.left, self.right, self.out

    def truth_table(self) -> Bits:
        rows = []
        for row in range(N_ROWS):
            value = {name: (row >> (len(INPUTS) - 1 - i)) & 1 for i, name in enumerate(INPUTS)}
            x = [value[name] ^ int(inv) for name, inv in zip(self.order, self.inverted, strict=True)]
            rows.append(apply_gate(self.out, apply_gate(self.left, x[0], x[1]), apply_gate(self.right, x[2], x[3])))
        return tuple(rows)

    def expression(self) -> str:
        """Boolean expression text, e.g. `Y = (NOT A AND B) OR (C XOR D)`."""
        terms = [f"NOT {n}" if inv else n for n, inv in zip(self.order, self.inverted, strict=True)]

        def gate(name: str, x: str, y: str) -> str:
            base = {"NAND": "AND", "NOR": "OR"}.get(name, name)
            return f"NOT ({x} {base} {y})" if GATES[name][1] else f"({x} {base} {y})"

        inner = gate(self.left, terms[0], terms[1]), gate(self.right, terms[2], terms[3])
        text = gate(self.out, *inner)
        return "Y = " + (text[1:-1] if text.startswith("(") else text)


@dataclass(frozen=True)
class TableItem:
    """A rendered truth table."""

    bits: Bits


@dataclass(frozen=True)
class DiagramItem:
    """A rendered gate diagram of `circuit`."""

    circuit: Circuit


def bits_of(item: TableItem | DiagramItem) -> Bits:
    return item.bits if isinstance(item, TableItem) else item.circuit.truth_table()


def violations(query_bits: Bits, item: TableItem | DiagramItem) -> frozenset[int]:
    """Rows of the truth table where the item's function differs from the query's."""
    return frozenset(row for row, (a, b) in enumerate(zip(query_bits, bits_of(item), strict=True)) if a != b)


def table_query_text(bits: Bits) -> str:
    minterms = ", ".join(str(row) for row, bit in enumerate(bits) if bit)
    grouped = " ".join("".join(map(str, bits[i : i + 4])) for i in range(0, N_ROWS, 4))
    return (
        "A logic circuit with inputs A, B, C, D and output Y, given by its truth table "
        f"(rows 0000 to 1111, A the most significant bit): Y = {grouped}, i.e. Y = 1 exactly on minterms m({minterms})."
    )


def render_table(bits: Bits) -> bytes:
    image = Image.new("RGB", (190, 300), "white")
    draw = ImageDraw.Draw(image)
    columns = (*INPUTS, "Y")
    for c, name in enumerate(columns):
        stamp_text(image, (20 + 32 * c + (12 if c == 4 else 0), 14), name, size=13)
    draw.line((6, 26, 184, 26), fill="black", width=2)
    draw.line((140, 4, 140, 296), fill="black", width=2)
    for row in range(N_ROWS):
        values = [(row >> (3 - i)) & 1 for i in range(4)] + [bits[row]]
        y = 38 + 16 * row
        for c, value in enumerate(values):
            stamp_text(image, (20 + 32 * c + (12 if c == 4 else 0), y), str(value), size=13)
    return png_bytes(image)


def _gate_box(image: Image.Image, draw: ImageDraw.ImageDraw, gate: str, x: int, y: int) -> tuple[int, int]:
    """Draw an IEC rectangular gate with its top-left at (x, y); returns the output point."""
    symbol, inverted = GATES[gate]
    draw.rectangle((x, y, x + 40, y + 50), outline="black", width=2)
    stamp_text(image, (x + 20, y + 14), symbol, size=14)
    end = x + 40
    if inverted:
        draw.ellipse((end, y + 20, end + 10, y + 30), outline="black", width=2)
        end += 10
    return end, y + 25


def render_diagram(circuit: Circuit) -> bytes:
    image = Image.new("RGB", (330, 200), "white")
    draw = ImageDraw.Draw(image)
    ports = [(90, 40), (90, 70), (90, 130), (90, 160)]
    for (px, py), name, inv in zip(ports, circuit.order, circuit.inverted, strict=True):
        stamp_text(image, (14, py), name, size=14)
        end = px - 10 if inv else px
        draw.line((26, py, end, py), fill="black", width=2)
        if inv:  # inversion bubble at the gate input
            draw.ellipse((px - 10, py - 5, px, py + 5), outline="black", width=2)
    outputs = [_gate_box(image, draw, circuit.left, 90, 30), _gate_box(image, draw, circuit.right, 90, 120)]
    for (ox, oy), target in zip(outputs, (85, 115), strict=True):
        draw.line((ox, oy, 170, oy), fill="black", width=2)
        draw.line((170, oy, 170, target), fill="black", width=2)
        draw.line((170, target, 210, target), fill="black", width=2)
    ox, oy = _gate_box(image, draw, circuit.out, 210, 75)
    draw.line((ox, oy, 300, oy), fill="black", width=2)
    stamp_text(image, (314, oy), "Y", size=14)
    return png_bytes(image)


def _circuit(rng: random.Random) -> Circuit:
    order = tuple(rng.sample(INPUTS, len(INPUTS)))
    inverted = tuple(rng.random() < 0.25 for _ in INPUTS)
    return Circuit(rng.choice(tuple(GATES)), rng.choice(tuple(GATES)), rng.choice(tuple(GATES)), order, inverted)  # type: ignore[arg-type]


def _table_item(bits: Bits) -> GenItem:
    return GenItem(TableItem(bits), lambda: (None, render_table(bits)))


def _diagram_item(circuit: Circuit) -> GenItem:
    return GenItem(DiagramItem(circuit), lambda: (None, render_diagram(circuit)))


def generate(seed: int = 0, n_queries: int = 100, gallery_size: int = 520) -> Generated:
    """Alternate expression->table and table->diagram queries; every gallery function is distinct."""
    rng = random.Random(f"{SUBTYPE}-{seed}")
    gallery = Gallery()  # keyed by truth table: one item per function
    queries: list[GenQuery] = []
    while len(queries) < n_queries:
        circuit = _circuit(rng)
        bits = circuit.truth_table()
        if bits in gallery or len(set(bits)) == 1:  # constant functions make poor queries
            continue
        if len(queries) % 2 == 0:  # expression -> truth table; negatives flip one row (B.5)
            rows = rng.sample(range(N_ROWS), N_NEGATIVES)
            flipped = [tuple(1 - b if r == row else b for r, b in enumerate(bits)) for row in rows]
            if any(f in gallery for f in flipped):
                continue
            positive = gallery.add(bits, _table_item(bits))
            negatives = [(gallery.add(f, _table_item(f)), ("row", row)) for f, row in zip(flipped, rows, strict=True)]
            queries.append(GenQuery(bits, circuit.expression(), positive, negatives, LABELS))
            continue
        swaps = [
            (k, g) for k in range(3) for g in GATES if g != circuit.gates()[k]
        ]  # truth table -> diagram; swap a gate
        rng.shuffle(swaps)
        first: dict[int, tuple[int, str]] = {}
        for kg in swaps:
            first.setdefault(kg[0], kg)
        swaps = list(first.values()) + [kg for kg in swaps if kg not in first.values()]  # one swap per gate first
        chosen: dict[Bits, tuple[Circuit, int]] = {}
        for k, gate in swaps:
            swap: dict[str, Any] = {("left", "right", "out")[k]: gate}
            other = replace(circuit, **swap)
            other_bits = other.truth_table()
            if (
                other_bits != bits
                and other_bits not in gallery
                and other_bits not in chosen
                and len(chosen) < N_NEGATIVES
            ):
                chosen[other_bits] = (other, k)
        if len(chosen) < N_NEGATIVES:
            continue
        positive = gallery.add(bits, _diagram_item(circuit))
        negatives = [(gallery.add(b, _diagram_item(c)), ("gate", k)) for b, (c, k) in chosen.items()]
        queries.append(GenQuery(bits, table_query_text(bits), positive, negatives, LABELS))
    while len(gallery) < gallery_size:  # plain distractors: half tables, half diagrams
        circuit = _circuit(rng)
        bits = circuit.truth_table()
        if bits not in gallery:
            gallery.add(bits, _table_item(bits) if len(gallery) % 2 else _diagram_item(circuit))
    return Generated(SUBTYPE, queries, gallery.items)
