"""Mini-edition generators: each hard negative violates exactly the intended fact, checked by independent programs.

Each check recomputes the facts without the generator's own helpers where it can (datetime for calendars, a numpy
grid rotation for cognitive maps, Python evaluation of the expression text for circuits and plots, re-rendering and
pixel comparison for drawings), and also checks that the positive is the only gallery item satisfying the query.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import re

import numpy as np
import pytest
from PIL import Image

from ark_dataset.generators import calendar_pages, code_drawing, electronics, mathematics, spatial_cogmap
from ark_dataset.generators.base import assemble
from ark_dataset.mini import MINI_SUBTYPES
from ark_dataset.names import COGNITIVE_DEMANDS, REASONING_SKILLS, SUBTYPE_DOMAIN
from ark_dataset.validate import validate_tables
from tests.datasets.test_ark_support import mini_build


@pytest.fixture(scope="module")
def builds():
    return {s: mini_build(s) for s in MINI_SUBTYPES}


def pixels(cell) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(cell["bytes"])).convert("RGB"))


def each_query(build):
    gallery = {row["item_id"]: row for row in build.gallery}
    for query in build.queries:
        yield query, gallery


# ---------------------------------------------------------------- shared shape


@pytest.mark.slow
def test_subtypes_and_sizes(builds):
    assert MINI_SUBTYPES == ("spatial_cogmap", "mathematics", "code_drawing", "calendar", "electronics")
    assert [m.SUBTYPE for m in (spatial_cogmap, mathematics, code_drawing, calendar_pages, electronics)] == list(
        MINI_SUBTYPES
    )
    for subtype, build in builds.items():
        assert len(build.queries) >= 100 and len(build.gallery) >= 500, subtype
        assert validate_tables({subtype: build.queries, f"{subtype}_gallery": build.gallery}) == []
        assert all(q["domain"] == SUBTYPE_DOMAIN[subtype] for q in build.queries)
        assert all(len(q["hard_negative_ids"]) == 4 for q in build.queries)


# ARK Appendix B: the reasoning labels the paper gives each generated subtype.
PAPER_LABELS = {
    "spatial_cogmap": ("reasoning_intensive", ["spatial"]),
    "mathematics": ("both", ["knowledge", "symbolic"]),
    "code_drawing": ("reasoning_intensive", ["symbolic"]),
    "calendar": ("both", ["knowledge", "logical"]),
    "electronics": ("reasoning_intensive", ["logical", "symbolic"]),
}


def test_labels_follow_the_paper(builds):
    for subtype, build in builds.items():
        demand, skills = PAPER_LABELS[subtype]
        assert demand in COGNITIVE_DEMANDS and set(skills) <= set(REASONING_SKILLS)
        assert {(q["cognitive_demand"], tuple(q["reasoning_skills"])) for q in build.queries} == {
            (demand, tuple(skills))
        }


def test_gallery_ids_are_opaque(builds):
    """Positives are spread over the gallery, not the first ids."""
    build = builds["calendar"]
    order = [int(q["positive_id"].rsplit("g", 1)[1]) for q in build.queries]
    assert order != sorted(order) and max(order) > len(build.queries)


def test_determinism():
    for module in (calendar_pages, spatial_cogmap, mathematics, code_drawing, electronics):
        first, second = assemble(module.generate(0, 8, 40), 0), assemble(module.generate(0, 8, 40), 0)
        assert first.queries == second.queries and first.gallery == second.gallery  # rows and image bytes
        other = module.generate(1, 8, 40)
        assert [q.facts for q in other.queries] != list(first.query_facts.values())


# ---------------------------------------------------------------- calendar


def calendar_facts(year: int, month: int) -> dict:
    """Independent of the calendar module: datetime arithmetic and the Gregorian leap rule."""
    first = datetime.date(year, month, 1)
    following = datetime.date(year + month // 12, month % 12 + 1, 1)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return {
        "year": year,
        "decade": year - year % 10,
        "month": month,
        "half": 1 if month < 7 else 2,
        "n_days": (following - first).days,
        "first_weekday": first.weekday(),
        "leap_year": leap,
    }


def broken(query_facts, page) -> set[str]:
    facts = calendar_facts(page.year, page.month)
    return {name for name, value in query_facts if facts[name] != value}


def test_calendar_hard_negatives(builds):
    build = builds["calendar"]
    for query, gallery in each_query(build):
        facts = build.query_facts[query["query_id"]]
        assert broken(facts, build.item_facts[query["positive_id"]]) == set()
        for negative in query["hard_negative_ids"]:
            assert broken(facts, build.item_facts[negative]) == {build.intended[query["query_id"]][negative]}
        satisfying = [i for i in gallery if not broken(facts, build.item_facts[i])]
        assert satisfying == [query["positive_id"]]


def test_calendar_text_and_page():
    facts = (("year", 2024), ("half", 1), ("n_days", 29), ("first_weekday", 3))
    assert calendar_pages.describe(facts) == (
        "A calendar showing a month page from 2024, in the first half of the year, with 29 days, "
        "whose 1st falls on a Thursday."
    )
    assert calendar_facts(2024, 2)["first_weekday"] == 3  # 1 February 2024 was a Thursday
    image = Image.open(io.BytesIO(calendar_pages.render(calendar_pages.Page(2024, 2))))
    assert image.size == (280, 240)


def test_calendar_images_match_pages(builds):
    build = builds["calendar"]
    for row in build.gallery[:25]:
        assert row["image"]["bytes"] == calendar_pages.render(build.item_facts[row["item_id"]])


# ---------------------------------------------------------------- spatial_cogmap


def seen_by_rotation(view: str, layout) -> dict[str, tuple[int, int]]:
    """Rotate the map with numpy so the viewer's edge is at the bottom, then read (rows ahead, column)."""
    grid = np.full((10, 10), "", dtype=object)
    for category, (row, col) in layout.cells:
        grid[row, col] = category
    turns = {"south": 0, "west": 1, "north": 2, "east": 3}[view]  # counter-clockwise quarter turns
    rotated = np.rot90(grid, turns)
    return {rotated[r, c]: (9 - r, c) for r in range(10) for c in range(10) if rotated[r, c]}


def test_viewpoint_rotation_independent():
    layout = spatial_cogmap.Layout((("lamp", (0, 9)), ("sofa", (2, 3))))  # lamp in the north-east corner
    assert seen_by_rotation("south", layout)["lamp"] == (9, 9)  # far right when facing north
    assert seen_by_rotation("north", layout)["lamp"] == (0, 0)  # near left when facing south
    assert seen_by_rotation("east", layout)["lamp"] == (0, 9)  # near, far right when facing west
    assert seen_by_rotation("west", layout)["lamp"] == (9, 0)  # far, far left when facing east
    for view in spatial_cogmap.VIEWS:
        assert seen_by_rotation(view, layout) == {c: spatial_cogmap.to_view(view, cell) for c, cell in layout.cells}


def test_cogmap_hard_negatives(builds):
    build = builds["spatial_cogmap"]
    for query, gallery in each_query(build):
        facts = build.query_facts[query["query_id"]]
        stated = dict(facts.seen)
        positive = build.item_facts[query["positive_id"]]
        assert seen_by_rotation(facts.view, positive) == stated
        pos_cells = positive.as_dict()
        nearest = spatial_cogmap.adjacent_pairs(positive)[:4]
        for negative in query["hard_negative_ids"]:
            neg_cells = build.item_facts[negative].as_dict()
            pair = build.intended[query["query_id"]][negative]
            assert sorted(neg_cells) == sorted(pos_cells)  # same categories and counts (B.1)
            moved = {c for c in pos_cells if pos_cells[c] != neg_cells[c]}
            assert moved == set(pair) and pair in nearest
            a, b = pair
            assert (neg_cells[a], neg_cells[b]) == (pos_cells[b], pos_cells[a])  # coordinates swapped
            seen = seen_by_rotation(facts.view, build.item_facts[negative])
            assert {c for c in stated if seen[c] != stated[c]} == set(pair)
        satisfying = [i for i in gallery if seen_by_rotation(facts.view, build.item_facts[i]) == stated]
        assert satisfying == [query["positive_id"]]


def test_cogmap_query_text():
    query = spatial_cogmap.ViewQuery("west", (("bed", (9, 3)),))
    assert spatial_cogmap.describe(query) == (
        "A bird's-eye map of a room on a 10x10 grid. You stand outside its west edge, facing east. Counting rows "
        "from 0 at the row nearest to you and columns from 0 at your far left: the bed is 9 rows ahead and 3 "
        "columns from the left."
    )


# ---------------------------------------------------------------- code_drawing


def test_code_drawing_hard_negatives(builds):
    build = builds["code_drawing"]
    images = {row["item_id"]: row["image"] for row in build.gallery}
    for query, _ in each_query(build):
        program = code_drawing.parse(query["query_text"])
        assert program == build.query_facts[query["query_id"]]
        lines = query["query_text"].splitlines()
        positive = pixels(images[query["positive_id"]])
        assert np.array_equal(positive, np.asarray(code_drawing.render_array(program)))
        for negative in query["hard_negative_ids"]:
            negative_lines = code_drawing.to_tikz(build.item_facts[negative]).splitlines()
            changed = [i for i, (a, b) in enumerate(zip(lines, negative_lines, strict=True)) if a != b]
            assert changed == [build.intended[query["query_id"]][negative] + 1]  # +1: the \begin line
            picture = pixels(images[negative])
            assert np.any(picture != positive, axis=2).sum() >= code_drawing.MIN_CHANGED_PIXELS
    digests = [hashlib.sha256(pixels(cell).tobytes()).hexdigest() for cell in images.values()]
    assert len(set(digests)) == len(digests)  # the positive is the only rendering of its program


def test_code_drawing_gallery_renders_its_programs(builds):
    build = builds["code_drawing"]
    for row in build.gallery[::40]:
        program = code_drawing.parse(code_drawing.to_tikz(build.item_facts[row["item_id"]]))
        assert np.array_equal(pixels(row["image"]), np.asarray(code_drawing.render_array(program)))


def test_code_drawing_parse_rejects_outside_subset():
    with pytest.raises(ValueError, match="line 2"):
        code_drawing.parse("\\begin{tikzpicture}\n\\node at (1,1) {x};\n\\end{tikzpicture}")


# ---------------------------------------------------------------- electronics


def eval_expression(text: str) -> tuple[int, ...]:
    """Truth table of `Y = ...` by Python evaluation over the 16 rows (A most significant)."""
    body = text.removeprefix("Y = ")
    body = re.sub(r"NOT ([A-D])", r"(1-\1)", body).replace("NOT (", "1-(")
    body = body.replace(" AND ", " & ").replace(" XOR ", " ^ ").replace(" OR ", " | ")
    table = []
    for row in range(16):
        env = {name: (row >> (3 - i)) & 1 for i, name in enumerate("ABCD")}
        table.append(int(eval(body, {"__builtins__": {}}, env)))  # noqa: S307 - our own generated text
    return tuple(table)


def minterms(text: str) -> tuple[int, ...]:
    listed = {int(m) for m in re.search(r"m\(([\d, ]*)\)", text).group(1).split(",") if m.strip()}
    return tuple(int(row in listed) for row in range(16))


GATE = {
    "AND": lambda x, y: x & y,
    "OR": lambda x, y: x | y,
    "XOR": lambda x, y: x ^ y,
    "NAND": lambda x, y: 1 - (x & y),
    "NOR": lambda x, y: 1 - (x | y),
}


def circuit_table(circuit) -> tuple[int, ...]:
    out = []
    for row in range(16):
        env = {name: (row >> (3 - i)) & 1 for i, name in enumerate("ABCD")}
        x = [env[n] ^ inv for n, inv in zip(circuit.order, circuit.inverted, strict=True)]
        out.append(GATE[circuit.out](GATE[circuit.left](x[0], x[1]), GATE[circuit.right](x[2], x[3])))
    return tuple(out)


def item_table(item) -> tuple[int, ...]:
    return item.bits if isinstance(item, electronics.TableItem) else circuit_table(item.circuit)


def test_electronics_hard_negatives(builds):
    build = builds["electronics"]
    kinds = set()
    for query, gallery in each_query(build):
        text = query["query_text"]
        truth = eval_expression(text) if text.startswith("Y = ") else minterms(text)
        positive = build.item_facts[query["positive_id"]]
        assert item_table(positive) == truth
        kinds.add(type(positive).__name__)
        for negative in query["hard_negative_ids"]:
            item = build.item_facts[negative]
            kind, where = build.intended[query["query_id"]][negative]
            differing = {r for r in range(16) if item_table(item)[r] != truth[r]}
            if kind == "row":  # expression -> truth table: exactly one output row flipped
                assert isinstance(item, electronics.TableItem) and differing == {where}
            else:  # truth table -> diagram: exactly one gate type swapped, same wiring, different function
                assert isinstance(item, electronics.DiagramItem) and differing
                a, b = positive.circuit, item.circuit
                assert (a.order, a.inverted) == (b.order, b.inverted)
                assert [i for i in range(3) if a.gates()[i] != b.gates()[i]] == [where]
        assert [i for i in gallery if item_table(build.item_facts[i]) == truth] == [query["positive_id"]]
    assert kinds == {"TableItem", "DiagramItem"}


def test_electronics_expression_text():
    circuit = electronics.Circuit("AND", "XOR", "OR", ("A", "B", "C", "D"), (True, False, False, False))
    assert circuit.expression() == "Y = (NOT A AND B) OR (C XOR D)"
    assert eval_expression(circuit.expression()) == circuit_table(circuit) == circuit.truth_table()
    nor = electronics.Circuit("NAND", "OR", "NOR", ("A", "B", "C", "D"), (False,) * 4)
    assert nor.expression() == "Y = NOT (NOT (A AND B) OR (C OR D))"
    assert eval_expression(nor.expression()) == circuit_table(nor)


# ---------------------------------------------------------------- mathematics


def eval_formula(text: str, x: np.ndarray) -> np.ndarray:
    """Evaluate `f(x) = ...` text with numpy (independent of Expression.__call__)."""
    body = text.removeprefix("f(x) = ").replace("−", "-").replace("x²", "x**2").replace("|x|", "abs(x)")
    body = re.sub(r"(\d)\s*([a-z(])", r"\1*\2", body)
    return eval(body, {"__builtins__": {}}, {"x": x, "sin": np.sin, "cos": np.cos, "abs": np.abs})  # noqa: S307


def test_mathematics_formula_text():
    expression = mathematics.Expression(2.0, "sin", 0.5, "-", 0.2, "x²", "+", 1.0)
    assert expression.text() == "f(x) = 2 sin(0.5x) − 0.2x² + 1"
    x = np.linspace(-6, 6, 7)
    np.testing.assert_allclose(eval_formula(expression.text(), x), 2 * np.sin(0.5 * x) - 0.2 * x**2 + 1)


def test_mathematics_hard_negatives(builds):
    build = builds["mathematics"]
    x = mathematics.CHECK_SAMPLES
    curves = {i: np.clip(eval_formula(build.item_facts[i].text(), x), -8, 8) for i in build.item_facts}
    for query, gallery in each_query(build):
        truth = np.clip(eval_formula(query["query_text"], x), -8, 8)
        assert build.query_facts[query["query_id"]] == build.item_facts[query["positive_id"]]
        np.testing.assert_allclose(curves[query["positive_id"]], truth)
        for negative in query["hard_negative_ids"]:
            slot = build.intended[query["query_id"]][negative]
            assert mathematics.violations(build.query_facts[query["query_id"]], build.item_facts[negative]) == {slot}
            assert np.max(np.abs(curves[negative] - truth)) >= mathematics.MIN_DIFFERENCE
        close = [i for i in gallery if np.max(np.abs(curves[i] - truth)) < mathematics.MIN_DIFFERENCE]
        assert close == [query["positive_id"]]


# ---------------------------------------------------------------- pixels agree with the facts


def test_cogmap_icons_sit_in_their_cells(builds):
    """Each icon's colour (distinct per category) is found inside exactly the cell the map's facts give it."""
    build = builds["spatial_cogmap"]
    colours = {colour: category for category, (_, colour) in spatial_cogmap.ICONS.items()}
    cell, margin = 24, 22  # the renderer's grid geometry
    for row in build.gallery[::25]:
        picture = pixels(row["image"])
        found = {}
        for r in range(10):
            for c in range(10):
                box = picture[
                    margin + r * cell + 1 : margin + (r + 1) * cell, margin + c * cell + 1 : margin + (c + 1) * cell
                ]
                present, counts = np.unique(box.reshape(-1, 3), axis=0, return_counts=True)
                for colour, count in zip(map(tuple, present.tolist()), counts, strict=True):
                    if colour in colours and count >= 5:
                        found.setdefault(colours[colour], []).append((r, c))
        assert found == {category: [where] for category, where in build.item_facts[row["item_id"]].cells}


def test_mathematics_curve_passes_through_its_points(builds):
    """At sampled x, the plotted curve colour is within 2 px of the formula's value (window mapping of the renderer)."""
    build = builds["mathematics"]
    width = height = 288
    pad = 24
    for row in build.gallery[::25]:
        picture = pixels(row["image"])
        formula = build.item_facts[row["item_id"]].text()
        for x in np.linspace(-5.5, 5.5, 12):
            y = float(eval_formula(formula, np.array([x]))[0])
            if not -7.5 < y < 7.5:
                continue
            px = round(pad + (x + 6) * (width - 2 * pad) / 12)
            py = round(height - pad - (y + 8) * (height - 2 * pad) / 16)
            patch = picture[py - 2 : py + 3, px - 2 : px + 3].reshape(-1, 3).tolist()
            assert [30, 80, 200] in patch, (formula, x)


def _ink(picture: np.ndarray, x: int, y: int, half: int = 7) -> np.ndarray:
    return picture[y - half : y + half + 1, x - half : x + half + 1]


def test_calendar_pages_show_their_facts(builds):
    """Non-blank day cells: the first row starts at the 1st's weekday and the count is the number of days."""
    build = builds["calendar"]
    for row in build.gallery[::20]:
        page = build.item_facts[row["item_id"]]
        facts = calendar_facts(page.year, page.month)
        picture = pixels(row["image"])
        filled = [[bool((_ink(picture, 20 + 40 * c, 76 + 30 * r) != 255).any()) for c in range(7)] for r in range(6)]
        assert filled[0].index(True) == facts["first_weekday"]
        assert sum(map(sum, filled)) == facts["n_days"]


def test_truth_table_images_show_their_outputs(builds):
    """Each Y cell shows the same glyph as the A column's cell holding the same digit (rows 0 and 8)."""
    build = builds["electronics"]
    checked = 0
    for row in build.gallery:
        item = build.item_facts[row["item_id"]]
        if not isinstance(item, electronics.TableItem):
            continue
        picture = pixels(row["image"])
        glyph = {0: _ink(picture, 20, 38), 1: _ink(picture, 20, 38 + 16 * 8)}  # column A: 0 in row 0, 1 in row 8
        assert not np.array_equal(glyph[0], glyph[1])
        for r, bit in enumerate(item.bits):
            assert np.array_equal(_ink(picture, 20 + 32 * 4 + 12, 38 + 16 * r), glyph[bit])
        checked += 1
    assert checked >= 250
