"""Pillow pictures of synthetic products, drawn from their attributes (mini edition; placeholders, not photos).

Every attribute a condition can name is visible: Fashion colour (fill), pattern (stripes, checks, dots, flowers,
print), sleeve length and garment length (silhouette), article type (silhouette details); Cars colour, body type
(profile / proportions), view (side, front, rear, three-quarter) and setting (background). `variant` encodes
the product's small style details (`variant // 8`: logo, rims) and the photo's pose jitter (`variant % 8`), so
images of one product differ slightly and different products with equal attributes are not pixel-identical.

>>> from io import BytesIO
>>> from PIL import Image
>>> png = render_item("cars", {"body_type": "SUV", "colour": "red", "view": "side", "setting": "street"}, 3)
>>> Image.open(BytesIO(png)).size
(128, 128)
"""

from __future__ import annotations

import io
from collections.abc import Mapping

from PIL import Image, ImageDraw

from triad_dataset.contract.schema import BOTTOMS, CARS, FASHION

SIZE = 128
FASHION_RGB: dict[str, tuple[int, int, int]] = {
    "Black": (20, 20, 20),
    "Charcoal": (54, 54, 60),
    "White": (250, 250, 250),
    "Off White": (240, 236, 222),
    "Cream": (245, 235, 200),
    "Grey": (128, 128, 128),
    "Grey Melange": (160, 160, 165),
    "Silver": (192, 192, 200),
    "Steel": (110, 125, 140),
    "Blue": (30, 90, 220),
    "Navy Blue": (20, 30, 90),
    "Turquoise Blue": (40, 190, 210),
    "Teal": (0, 120, 120),
    "Red": (215, 25, 30),
    "Maroon": (120, 10, 30),
    "Burgundy": (128, 0, 50),
    "Rust": (180, 65, 15),
    "Pink": (245, 140, 180),
    "Magenta": (220, 0, 150),
    "Rose": (230, 100, 130),
    "Peach": (255, 190, 150),
    "Purple": (110, 40, 150),
    "Lavender": (190, 160, 230),
    "Mauve": (170, 110, 150),
    "Green": (30, 150, 50),
    "Olive": (110, 120, 40),
    "Sea Green": (46, 139, 87),
    "Lime Green": (150, 220, 40),
    "Fluorescent Green": (90, 255, 60),
    "Yellow": (250, 220, 30),
    "Mustard": (210, 170, 30),
    "Gold": (212, 175, 55),
    "Orange": (250, 130, 20),
    "Copper": (184, 115, 51),
    "Brown": (110, 65, 30),
    "Coffee Brown": (90, 60, 40),
    "Tan": (200, 160, 110),
    "Mushroom Brown": (150, 130, 110),
    "Bronze": (160, 110, 50),
    "Beige": (225, 205, 165),
    "Khaki": (190, 175, 120),
    "Nude": (230, 190, 170),
    "Skin": (240, 200, 175),
    "Taupe": (140, 125, 110),
    "Metallic": (170, 172, 182),
}
CAR_RGB: dict[str, tuple[int, int, int]] = {
    "black": (25, 25, 28),
    "white": (245, 245, 245),
    "silver": (190, 192, 198),
    "grey": (110, 112, 118),
    "red": (200, 20, 25),
    "blue": (30, 70, 190),
    "green": (30, 120, 50),
    "yellow": (245, 210, 20),
    "orange": (240, 120, 20),
    "brown": (110, 70, 35),
    "beige": (215, 195, 150),
}
SLEEVE_SPAN = {"sleeveless": 0, "short": 16, "three-quarter": 36, "long": 52}
HEM_Y = {"mini": 80, "knee": 96, "midi": 110, "maxi": 124}
DRESS_WAIST = 44  # dress bodice height (tops: 66): its waist, y = 14 + 44, lies above the mini hem (y = 80)


def png_bytes(image: Image.Image) -> bytes:
    """Encode as PNG with fixed settings so the same picture always gives the same bytes."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _contrast(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (245, 245, 245) if sum(rgb) < 380 else (25, 25, 25)


# ------------------------------------------------------------------------------------------------------ Fashion


def _garment_mask(category: str, sleeve: str, length: str, dx: int, dy: int) -> Image.Image:
    mask = Image.new("L", (SIZE, SIZE), 0)
    d = ImageDraw.Draw(mask)
    top = 14 + dy
    if category in BOTTOMS:
        bottom = {"Shorts": 70, "Capris": 100}.get(category, 122)
        d.rectangle([40 + dx, top + 4, 88 + dx, top + 22], fill=255)
        d.polygon([(40 + dx, top + 20), (63 + dx, top + 20), (60 + dx, bottom), (38 + dx, bottom)], fill=255)
        d.polygon([(65 + dx, top + 20), (88 + dx, top + 20), (90 + dx, bottom), (68 + dx, bottom)], fill=255)
        return mask
    if category == "Skirts":
        hem = HEM_Y.get(length, 96) + dy
        d.polygon([(46 + dx, top + 20), (82 + dx, top + 20), (96 + dx, hem), (32 + dx, hem)], fill=255)
        return mask
    narrow = 4 if category == "Tops" else 0
    # a dress's bodice ends above the shortest (mini) hem, so every length shows a skirt and a mini dress
    # never draws as a T-shirt (paper A.2: length and article type are visual attributes of conditions)
    waist = top + (DRESS_WAIST if category == "Dresses" else 66)
    d.polygon(
        [(42 + narrow + dx, top), (86 - narrow + dx, top), (88 - narrow + dx, waist), (40 + narrow + dx, waist)],
        fill=255,
    )
    span = SLEEVE_SPAN.get(sleeve, 0)
    if span:  # sleeves hang from the shoulders; their length is the sleeve_length attribute
        d.polygon(
            [
                (42 + dx, top),
                (30 + dx, top + 4),
                (22 + dx, top + 8 + span),
                (34 + dx, top + 10 + span),
                (42 + dx, top + 22),
            ],
            fill=255,
        )
        d.polygon(
            [
                (86 + dx, top),
                (98 + dx, top + 4),
                (106 + dx, top + 8 + span),
                (94 + dx, top + 10 + span),
                (86 + dx, top + 22),
            ],
            fill=255,
        )
    if category == "Dresses":  # the skirt part; its hem is the length attribute
        hem = HEM_Y.get(length, 96) + dy
        d.polygon([(40 + dx, waist - 2), (88 + dx, waist - 2), (100 + dx, hem), (28 + dx, hem)], fill=255)
    d.ellipse([54 + dx, top - 6, 74 + dx, top + 8], fill=0)  # neckline
    return mask


def _draw_checks(d: ImageDraw.ImageDraw, pattern: str, ink: tuple[int, int, int]) -> None:
    step = 12 if pattern == "checked" else 16
    for k in range(0, SIZE, step):
        d.line([(k, 0), (k, SIZE)], fill=ink, width=2)
        d.line([(0, k), (SIZE, k)], fill=ink, width=2)
    if pattern == "plaid":
        for k in range(6, SIZE, step):
            d.line([(0, k), (SIZE, k)], fill=(200, 40, 40), width=1)


def _draw_flowers(d: ImageDraw.ImageDraw) -> None:
    for y in range(6, SIZE, 18):
        for x in range(6 + (y // 18 % 2) * 9, SIZE, 18):
            for ox, oy in ((0, -3), (3, 0), (0, 3), (-3, 0)):
                d.ellipse([x + ox - 2, y + oy - 2, x + ox + 2, y + oy + 2], fill=(235, 90, 140))
            d.ellipse([x - 1, y - 1, x + 1, y + 1], fill=(250, 220, 40))


def _draw_pattern(d: ImageDraw.ImageDraw, pattern: str, ink: tuple[int, int, int], style: int) -> None:
    """Draw the garment's print over its base colour; "solid" and unknown patterns draw nothing."""
    if pattern in ("striped", "pinstriped"):
        width, step = (3, 10) if pattern == "striped" else (1, 6)
        for y in range(0, SIZE, step):
            d.line([(0, y), (SIZE, y)], fill=ink, width=width)
    elif pattern in ("checked", "plaid"):
        _draw_checks(d, pattern, ink)
    elif pattern == "polka dot":
        for y in range(4, SIZE, 12):
            for x in range(4 + (y // 12 % 2) * 6, SIZE, 12):
                d.ellipse([x, y, x + 5, y + 5], fill=ink)
    elif pattern == "floral":
        _draw_flowers(d)
    elif pattern == "graphic print":
        d.regular_polygon((64, 56, 16), 3 + style % 4, fill=ink)


def _pattern_fill(colour: str, pattern: str, style: int) -> Image.Image:
    base = FASHION_RGB.get(colour, (150, 150, 150))
    fill = Image.new("RGB", (SIZE, SIZE), base)
    d = ImageDraw.Draw(fill)
    if colour == "Multi":
        for i, rgb in enumerate([(220, 40, 40), (250, 210, 40), (40, 90, 220), (40, 160, 60)]):
            d.rectangle([0, i * 32, SIZE, i * 32 + 32], fill=rgb)
    _draw_pattern(d, pattern, _contrast(base), style)
    return fill


def render_fashion(attributes: Mapping[str, str], variant: int = 0) -> bytes:
    style, pose = divmod(variant, 8)
    dx, dy = pose % 3 - 1, pose // 3 - 1
    shade = 232 + (pose * 3) % 12
    canvas = Image.new("RGB", (SIZE, SIZE), (shade, shade, shade - 4))
    category = attributes.get("category", "Tshirts")
    mask = _garment_mask(category, attributes.get("sleeve_length", ""), attributes.get("length", ""), dx, dy)
    canvas.paste(_pattern_fill(attributes.get("colour", "Grey"), attributes.get("pattern", "solid"), style), mask=mask)
    d = ImageDraw.Draw(canvas)
    base = FASHION_RGB.get(attributes.get("colour", "Grey"), (150, 150, 150))
    edge = _contrast(base)
    top = 14 + dy
    if category == "Shirts":  # collar and buttons
        d.polygon([(54 + dx, top), (64 + dx, top + 10), (58 + dx, top + 12)], fill=(250, 250, 250), outline=edge)
        d.polygon([(74 + dx, top), (64 + dx, top + 10), (70 + dx, top + 12)], fill=(250, 250, 250), outline=edge)
        for y in range(top + 16, top + 62, 10):
            d.ellipse([62 + dx, y, 66 + dx, y + 4], fill=edge)
    elif category in ("Jackets", "Blazers"):  # open front and pockets
        d.line([(64 + dx, top + 6), (64 + dx, top + 66)], fill=edge, width=3)
        d.rectangle([46 + dx, top + 46, 56 + dx, top + 54], outline=edge)
        d.rectangle([72 + dx, top + 46, 82 + dx, top + 54], outline=edge)
    elif category in ("Sweaters", "Sweatshirts"):  # ribbed hem
        for x in range(42 + dx, 88 + dx, 4):
            d.line([(x, top + 58), (x, top + 66)], fill=edge)
    elif category == "Jeans":  # stitching
        d.line([(50 + dx, top + 30), (56 + dx, top + 40)], fill=(230, 190, 60), width=1)
        d.line([(78 + dx, top + 30), (72 + dx, top + 40)], fill=(230, 190, 60), width=1)
    # a small product-specific logo (style detail), identical on every image of the product
    lx, ly = 70 + dx + style % 5, top + 24 + (style // 5) % 5
    d.rectangle([lx, ly, lx + 4, ly + 3], fill=((style * 53) % 256, (style * 97) % 256, (style * 31) % 256))
    return _png(canvas)


# --------------------------------------------------------------------------------------------------------- Cars

# side profiles (x, y) on a 100 x 40 box: body outline including the roof/cabin; None roof = convertible
_PROFILES: dict[str, list[tuple[int, int]]] = {
    "Sedan": [(0, 30), (2, 20), (22, 18), (34, 6), (66, 6), (78, 18), (100, 20), (100, 32)],
    "Coupe": [(0, 30), (2, 21), (26, 19), (40, 8), (62, 8), (84, 20), (100, 22), (100, 32)],
    "Convertible": [(0, 30), (2, 20), (30, 19), (36, 12), (38, 19), (100, 20), (100, 32)],
    "Hatchback": [(6, 30), (8, 20), (26, 18), (38, 6), (80, 6), (92, 16), (92, 32)],
    "Wagon": [(0, 30), (2, 20), (22, 18), (34, 6), (96, 6), (100, 18), (100, 32)],
    "SUV": [(0, 32), (2, 16), (18, 14), (28, 0), (92, 0), (100, 12), (100, 34)],
    "Minivan": [(0, 32), (2, 18), (14, 6), (24, 0), (98, 0), (100, 10), (100, 34)],
    "Van": [(0, 34), (0, 14), (10, 0), (100, 0), (100, 34)],
    "Cab": [(0, 32), (2, 16), (20, 14), (28, 0), (56, 0), (58, 14), (100, 14), (100, 34)],
}
# front/rear face: (half width, roof height) of the body box; taller boxes for SUVs, vans and pickups
_FACE: dict[str, tuple[int, int]] = {
    "Sedan": (40, 34),
    "Coupe": (40, 30),
    "Convertible": (40, 22),
    "Hatchback": (36, 36),
    "Wagon": (40, 36),
    "SUV": (42, 48),
    "Minivan": (40, 50),
    "Van": (38, 58),
    "Cab": (42, 46),
}
_SKY = (175, 210, 240)


def _setting(d: ImageDraw.ImageDraw, setting: str, pose: int) -> None:
    horizon = 70 + pose % 3
    if setting == "showroom":
        d.rectangle([0, 0, SIZE, horizon], fill=(238, 238, 232))
        d.rectangle([0, horizon, SIZE, SIZE], fill=(205, 205, 210))
        d.ellipse([24, 2, 104, 22], fill=(255, 255, 240))
    elif setting == "nature":
        d.rectangle([0, 0, SIZE, horizon], fill=_SKY)
        d.rectangle([0, horizon, SIZE, SIZE], fill=(90, 160, 70))
        d.polygon([(100, horizon), (112, horizon - 40), (124, horizon)], fill=(30, 100, 40))
    elif setting == "parking lot":
        d.rectangle([0, 0, SIZE, SIZE], fill=(80, 80, 84))
        for x in range(4, SIZE, 30):
            d.line([(x, horizon - 10), (x + 8, SIZE)], fill=(240, 240, 240), width=2)
    else:  # street
        d.rectangle([0, 0, SIZE, horizon], fill=_SKY)
        d.rectangle([0, horizon - 24, 30, horizon], fill=(150, 120, 100))
        d.rectangle([0, horizon, SIZE, SIZE], fill=(120, 120, 125))
        for x in range(0, SIZE, 24):
            d.rectangle([x, 112, x + 12, 115], fill=(245, 215, 40))


def _side(
    d: ImageDraw.ImageDraw,
    body: str,
    rgb: tuple[int, int, int],
    x0: int,
    y0: int,
    scale: float,
    rim: tuple[int, int, int],
    flip: bool,
) -> None:
    def pt(x: int, y: int) -> tuple[float, float]:
        x = 100 - x if flip else x
        return x0 + x * scale, y0 + y

    d.polygon([pt(x, y) for x, y in _PROFILES[body]], fill=rgb, outline=(20, 20, 20))
    if body != "Convertible":  # windows
        window = {"Van": [(12, 3), (30, 3), (30, 12), (8, 12)], "Cab": [(30, 3), (54, 3), (54, 12), (24, 12)]}
        poly = window.get(
            body,
            [(36, 9), (64, 9), (70, 16), (28, 16)]
            if body in ("Sedan", "Coupe")
            else [
                (36, 9) if body in ("Hatchback", "Wagon") else (30, 4),
                (86, 9) if body in ("Hatchback", "Wagon") else (90, 4),
                (92, 15),
                (26, 15),
            ],
        )
        d.polygon([pt(x, y) for x, y in poly], fill=(140, 170, 190))
    for wx in (18, 80):
        cx, cy = pt(wx, 32)
        d.ellipse([cx - 9 * scale, cy - 9, cx + 9 * scale, cy + 9], fill=(15, 15, 15))
        d.ellipse([cx - 4 * scale, cy - 4, cx + 4 * scale, cy + 4], fill=rim)


def _face(
    d: ImageDraw.ImageDraw,
    body: str,
    rgb: tuple[int, int, int],
    cx: float,
    base: int,
    front: bool,
    squeeze: float = 1.0,
) -> None:
    half, height = _FACE[body]
    half = int(half * squeeze)
    top = base - height
    d.rectangle([cx - half, top + height // 3, cx + half, base], fill=rgb, outline=(20, 20, 20))
    if body != "Convertible":
        d.polygon(
            [
                (cx - half + 6, top + height // 3),
                (cx + half - 6, top + height // 3),
                (cx + half - 10, top),
                (cx - half + 10, top),
            ],
            fill=rgb,
            outline=(20, 20, 20),
        )
        d.polygon(
            [
                (cx - half + 9, top + height // 3 - 2),
                (cx + half - 9, top + height // 3 - 2),
                (cx + half - 12, top + 3),
                (cx - half + 12, top + 3),
            ],
            fill=(140, 170, 190),
        )
    light = (255, 250, 200) if front else (230, 20, 20)
    ly = base - height // 3
    d.ellipse([cx - half + 3, ly - 4, cx - half + 13, ly + 4], fill=light, outline=(20, 20, 20))
    d.ellipse([cx + half - 13, ly - 4, cx + half - 3, ly + 4], fill=light, outline=(20, 20, 20))
    if front:  # grille
        d.rectangle([cx - half // 3, ly - 4, cx + half // 3, ly + 5], fill=(40, 40, 40))
    else:  # plate
        d.rectangle([cx - 8, ly + 2, cx + 8, ly + 8], fill=(250, 250, 250))
    d.rectangle([cx - half + 2, base, cx - half + 12, base + 8], fill=(15, 15, 15))
    d.rectangle([cx + half - 12, base, cx + half - 2, base + 8], fill=(15, 15, 15))


def render_car(attributes: Mapping[str, str], variant: int = 0) -> bytes:
    style, pose = divmod(variant, 8)
    canvas = Image.new("RGB", (SIZE, SIZE), _SKY)
    d = ImageDraw.Draw(canvas)
    _setting(d, attributes.get("setting", "street"), pose)
    body = attributes.get("body_type", "Sedan")
    body = body if body in _PROFILES else "Sedan"
    rgb = CAR_RGB.get(attributes.get("colour", "grey"), (128, 128, 128))
    rim = ((style * 71) % 200 + 40, (style * 43) % 200 + 40, (style * 19) % 200 + 40)  # product-specific rims
    view = attributes.get("view", "side")
    jitter = pose % 4 - 2
    if view == "side":
        _side(d, body, rgb, 14 + jitter, 62, 1.0, rim, flip=False)
    elif view in ("front", "rear"):
        _face(d, body, rgb, 64 + jitter, 100, front=view == "front")
    else:  # three-quarter: a foreshortened profile plus the front (or rear) face
        front = view.startswith("front")
        if front:
            _side(d, body, rgb, 4 + jitter, 62, 0.72, rim, flip=False)
            _face(d, body, rgb, 100 + jitter, 96, front=True, squeeze=0.6)
        else:
            _side(d, body, rgb, 52 + jitter, 62, 0.72, rim, flip=True)
            _face(d, body, rgb, 28 + jitter, 96, front=False, squeeze=0.6)
    return _png(canvas)


def render_item(domain: str, attributes: Mapping[str, str], variant: int = 0) -> bytes:
    """PNG bytes of a synthetic product picture of `domain` ("fashion" or "cars")."""
    if domain == FASHION:
        return render_fashion(attributes, variant)
    if domain == CARS:
        return render_car(attributes, variant)
    raise ValueError(f"no renderer for domain {domain!r}")
