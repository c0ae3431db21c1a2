"""Small Pillow helpers shared by the generators: fonts and deterministic PNG encoding."""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from triad_dataset.sources.render import png_bytes as png_bytes  # one copy for both benchmarks

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@functools.lru_cache(maxsize=16)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans when installed (it has the ≥ and ¬ glyphs), else Pillow's bundled default font."""
    if _DEJAVU.exists():
        return ImageFont.truetype(str(_DEJAVU), size)
    return ImageFont.load_default(size=size)


def image_value(data: bytes, name: str | None = None) -> dict[str, Any]:
    """A datasets `Image()` cell: `{"bytes": ..., "path": ...}` (CONTRACTS §1)."""
    return {"bytes": data, "path": name}


def decode(value: dict[str, Any] | bytes) -> Image.Image:
    """Open an `Image()` cell (or raw bytes) as an RGB Pillow image."""
    data = value["bytes"] if isinstance(value, dict) else value
    return Image.open(io.BytesIO(data)).convert("RGB")


@functools.lru_cache(maxsize=4096)
def _text_mask(text: str, size: int, anchor: str) -> tuple[Image.Image, tuple[int, int]]:
    face = font(size)
    left, top, right, bottom = face.getbbox(text, anchor=anchor)
    mask = Image.new("L", (int(max(1, right - left)), int(max(1, bottom - top))), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=face, anchor=anchor)
    return mask, (int(left), int(top))


def stamp_text(
    image: Image.Image, xy: tuple[float, float], text: str, *, size: int, fill: Any = "black", anchor: str = "mm"
) -> None:
    """Draw text like `ImageDraw.text`, reusing the rendered glyph mask of repeated strings (much faster)."""
    mask, (left, top) = _text_mask(text, size, anchor)
    image.paste(fill, (round(xy[0]) + left, round(xy[1]) + top), mask)
