"""Small Pillow helpers shared by the generators: fonts and deterministic PNG encoding."""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

from PIL import Image, ImageFont

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@functools.lru_cache(maxsize=16)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans when installed (it has the ≥ and ¬ glyphs), else Pillow's bundled default font."""
    if _DEJAVU.exists():
        return ImageFont.truetype(str(_DEJAVU), size)
    return ImageFont.load_default(size=size)


def png_bytes(image: Image.Image) -> bytes:
    """Encode as PNG with fixed settings so the same picture always gives the same bytes."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def image_value(data: bytes, name: str | None = None) -> dict[str, Any]:
    """A datasets `Image()` cell: `{"bytes": ..., "path": ...}` (CONTRACTS §1)."""
    return {"bytes": data, "path": name}


def decode(value: dict[str, Any] | bytes) -> Image.Image:
    """Open an `Image()` cell (or raw bytes) as an RGB Pillow image."""
    data = value["bytes"] if isinstance(value, dict) else value
    return Image.open(io.BytesIO(data)).convert("RGB")
