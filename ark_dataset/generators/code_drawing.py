"""`code_drawing`: short TikZ-style drawing programs rendered to images; hard negatives change one line and re-render.

ARK B.3 (Code-Drawing) pairs raw TikZ snippets (queries) with their rendered graphics (gallery) and builds hard
negatives by a single-line perturbation that keeps the picture similar but changes a geometric relation (position,
connectivity or angle). The mini edition interprets a small TikZ subset with Pillow so every program is re-renderable:

    \\draw[<colour>(, thick)] (x,y) -- (x,y) -- ... (-- cycle);
    \\draw[...] / \\fill[<colour>] (x,y) rectangle (x,y);
    \\draw[...] / \\fill[<colour>] (x,y) circle (r);

Coordinates are on a 0..8 unit canvas with y pointing up, as in TikZ.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image, ImageDraw

from ark_dataset.generators.base import Gallery, Generated, GenItem, GenQuery, Labels, subtype_of
from ark_dataset.render import png_bytes

SUBTYPE = subtype_of(__name__)
DESCRIPTION = (
    "TikZ-style drawing programs (query) and their renderings (gallery); hard negatives edit one line "
    "of the program and re-render it (ARK B.3)."
)
# ARK B.3 (Code-Drawing) "targets symbolic reasoning over code-conditioned visual generation": reasoning-intensive.
LABELS = Labels("reasoning_intensive", ("symbolic",))
N_NEGATIVES = 4
EXTENT = 8  # canvas units
UNIT, MARGIN = 28, 16
MIN_CHANGED_PIXELS = 60  # a perturbation must change at least this many pixels, or it is redrawn
COLOURS: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0),
    "red": (220, 30, 30),
    "blue": (30, 60, 220),
    "green": (20, 150, 40),
    "orange": (245, 140, 0),
    "violet": (140, 40, 180),
}
Point = tuple[float, float]


@dataclass(frozen=True)
class Statement:
    """One line of a program: `\\<command>[colour(, thick)] <geometry>;`."""

    command: str  # "draw" | "fill"
    colour: str
    shape: str  # "path" | "cycle" | "rectangle" | "circle"
    points: tuple[Point, ...]
    radius: float = 0.0
    thick: bool = False

    def to_tikz(self) -> str:
        options = self.colour + (", thick" if self.thick else "")
        coords = [f"({_num(x)},{_num(y)})" for x, y in self.points]
        if self.shape == "circle":
            geometry = f"{coords[0]} circle ({_num(self.radius)})"
        elif self.shape == "rectangle":
            geometry = f"{coords[0]} rectangle {coords[1]}"
        else:
            geometry = " -- ".join(coords) + (" -- cycle" if self.shape == "cycle" else "")
        return f"\\{self.command}[{options}] {geometry};"


Program = tuple[Statement, ...]
BEGIN, END = "\\begin{tikzpicture}", "\\end{tikzpicture}"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def to_tikz(program: Program) -> str:
    """The program text used as the query."""
    return "\n".join([BEGIN, *(s.to_tikz() for s in program), END])


_LINE = re.compile(r"^\\(draw|fill)\[(\w+)(, thick)?\] (.+);$")
_COORD = re.compile(r"\(([-\d.]+),([-\d.]+)\)")


def parse(text: str) -> Program:
    """Inverse of `to_tikz` (ValueError naming the line on anything outside the subset).

    >>> parse(to_tikz((Statement("fill", "red", "circle", ((1, 2),), radius=1.5),)))[0].radius
    1.5
    """
    lines = text.strip().splitlines()
    if not lines or lines[0] != BEGIN or lines[-1] != END:
        raise ValueError("program must start with \\begin{tikzpicture} and end with \\end{tikzpicture}")
    program = []
    for number, line in enumerate(lines[1:-1], start=2):
        match = _LINE.match(line.strip())
        if not match:
            raise ValueError(f"line {number}: not in the drawing subset: {line!r}")
        command, colour, thick, geometry = match.groups()
        points = tuple((float(x), float(y)) for x, y in _COORD.findall(geometry.split(" circle ")[0]))
        if " circle " in geometry:
            radius = float(geometry.rsplit("(", 1)[1].rstrip(")"))
            program.append(Statement(command, colour, "circle", points[:1], radius, bool(thick)))
        elif " rectangle " in geometry:
            program.append(Statement(command, colour, "rectangle", points, 0.0, bool(thick)))
        else:
            shape = "cycle" if geometry.endswith("-- cycle") else "path"
            program.append(Statement(command, colour, shape, points, 0.0, bool(thick)))
    return tuple(program)


def _px(point: Point) -> tuple[float, float]:
    x, y = point
    return MARGIN + x * UNIT, MARGIN + (EXTENT - y) * UNIT


def render_array(program: Program) -> Image.Image:
    """Interpret the program with Pillow (statements drawn in order, later ones on top)."""
    side = 2 * MARGIN + EXTENT * UNIT
    image = Image.new("RGB", (side, side), "white")
    draw = ImageDraw.Draw(image)
    for s in program:
        colour = COLOURS[s.colour]
        width = 5 if s.thick else 2
        fill = colour if s.command == "fill" else None
        outline = None if s.command == "fill" else colour
        if s.shape == "circle":
            (cx, cy), r = _px(s.points[0]), s.radius * UNIT
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=outline, width=width)
        elif s.shape == "rectangle":
            (x0, y0), (x1, y1) = _px(s.points[0]), _px(s.points[1])
            box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
            draw.rectangle(box, fill=fill, outline=outline, width=width)
        elif s.shape == "cycle":
            points = [_px(p) for p in s.points]
            if fill:
                draw.polygon(points, fill=fill)
            else:
                draw.line(points + points[:1], fill=colour, width=width, joint="curve")
        else:
            draw.line([_px(p) for p in s.points], fill=colour, width=width, joint="curve")
    return image


def render(program: Program) -> bytes:
    return png_bytes(render_array(program))


def violations(query: Program, item: Program) -> frozenset[int | str]:
    """Indices of the program lines that differ ("length" when the line counts differ)."""
    if len(query) != len(item):
        return frozenset({"length"})
    return frozenset(i for i, (a, b) in enumerate(zip(query, item, strict=True)) if a != b)


def _coord(rng: random.Random) -> int:
    return rng.randint(1, EXTENT - 1)


def _statement(rng: random.Random) -> Statement:
    shape = rng.choice(("path", "cycle", "rectangle", "circle"))
    colour = rng.choice(tuple(COLOURS))
    command = "draw" if shape == "path" else rng.choice(("draw", "fill"))
    thick = command == "draw" and rng.random() < 0.3  # line width only matters for outlines
    if shape == "circle":
        return Statement(command, colour, shape, ((_coord(rng), _coord(rng)),), rng.choice((0.5, 1, 1.5, 2)), thick)
    if shape == "rectangle":
        x0, y0 = rng.randint(0, 5), rng.randint(0, 5)
        corner = (x0 + rng.randint(1, 3), y0 + rng.randint(1, 3))
        return Statement(command, colour, shape, ((x0, y0), corner), 0.0, thick)
    points = tuple(
        (_coord(rng), _coord(rng)) for _ in range(rng.randint(3, 4) if shape == "cycle" else rng.randint(2, 3))
    )
    return Statement(command, colour, shape, points, 0.0, thick)


def _program(rng: random.Random) -> Program:
    return tuple(_statement(rng) for _ in range(rng.randint(3, 5)))


def perturb(statement: Statement, rng: random.Random) -> Statement:
    """One geometric edit of one line (B.3): move a vertex or corner, resize a circle, or open/close a path."""
    kind = rng.choice(("move", "move", "radius" if statement.shape == "circle" else "connect"))
    if kind == "radius":
        return replace(statement, radius=rng.choice([r for r in (0.5, 1, 1.5, 2, 2.5) if r != statement.radius]))
    if kind == "connect" and statement.shape in ("path", "cycle") and statement.command == "draw":
        return replace(statement, shape="cycle" if statement.shape == "path" else "path")
    points = list(statement.points)
    k = rng.randrange(len(points))
    x, y = points[k]
    dx, dy = rng.choice([(d, 0) for d in (-2, -1, 1, 2)] + [(0, d) for d in (-2, -1, 1, 2)])
    points[k] = (min(EXTENT, max(0, x + dx)), min(EXTENT, max(0, y + dy)))
    return replace(statement, points=tuple(points))


def _changed_pixels(a: Image.Image, b: Image.Image) -> int:
    return int(np.any(np.asarray(a) != np.asarray(b), axis=2).sum())


def generate(seed: int = 0, n_queries: int = 100, gallery_size: int = 520) -> Generated:
    """Each query: a random program; negatives edit one line each and must visibly change the picture."""
    rng = random.Random(f"{SUBTYPE}-{seed}")
    gallery = Gallery()
    seen_images: set[str] = set()
    queries: list[GenQuery] = []

    def add(program: Program, image: Image.Image) -> int:
        data = png_bytes(image)
        seen_images.add(hashlib.sha256(np.asarray(image).tobytes()).hexdigest())
        return gallery.add(program, GenItem(program, lambda: (None, data)))

    def fresh(image: Image.Image) -> bool:
        return hashlib.sha256(np.asarray(image).tobytes()).hexdigest() not in seen_images

    while len(queries) < n_queries:
        program = _program(rng)
        picture = render_array(program)
        if program in gallery or not fresh(picture):
            continue
        negatives: list[tuple[Program, Image.Image, int]] = []
        for _ in range(40):
            if len(negatives) == N_NEGATIVES:
                break
            line = rng.randrange(len(program))
            edited = program[:line] + (perturb(program[line], rng),) + program[line + 1 :]
            if edited == program or edited in gallery or any(edited == n for n, _, _ in negatives):
                continue
            edited_picture = render_array(edited)
            if _changed_pixels(picture, edited_picture) < MIN_CHANGED_PIXELS or not fresh(edited_picture):
                continue
            if any(not _changed_pixels(edited_picture, other) for _, other, _ in negatives):
                continue
            negatives.append((edited, edited_picture, line))
        if len(negatives) < N_NEGATIVES:
            continue
        positive = add(program, picture)
        queries.append(
            GenQuery(
                facts=program,
                text=to_tikz(program),
                positive=positive,
                labels=LABELS,
                negatives=[(add(n, image), line) for n, image, line in negatives],
            )
        )
    while len(gallery) < gallery_size:  # plain distractor drawings
        program = _program(rng)
        picture = render_array(program)
        if program not in gallery and fresh(picture):
            add(program, picture)
    return Generated(SUBTYPE, queries, gallery.items)
