"""Thumbnails of a dataset folder's images, made once per dataset fingerprint and kept on disk and in memory."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Final

from PIL import Image

from spaces_app.explorer import Corpus, ImageKey

SIZE: Final = 160  # longest side in pixels
MEMORY_ITEMS: Final = 2048  # thumbnails kept in memory (each a few kB)
MAX_PIXELS: Final = 64 * 2**20  # an image decoding to more pixels than this gets no thumbnail


def default_root() -> Path:
    """Where thumbnails live unless told otherwise: TRIAD_THUMBS, else ~/.cache/triad/thumbnails."""
    return Path(os.environ.get("TRIAD_THUMBS") or Path.home() / ".cache" / "triad" / "thumbnails")


def thumbnail(data: bytes, size: int = SIZE) -> bytes | None:
    """JPEG bytes of the image scaled to fit `size`×`size`; None when the bytes are not an image or too large."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.width * img.height > MAX_PIXELS:
                return None
            img.draft("RGB", (size, size))
            small = img.convert("RGB")
            small.thumbnail((size, size))
            out = io.BytesIO()
            small.save(out, format="JPEG", quality=85)
            return out.getvalue()
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


class Thumbnails:
    """Thumbnails of one folder: memory first, then `root/<fingerprint>/`, else made from the folder's image."""

    def __init__(self, corpus: Corpus, fingerprint: str, root: Path | None = None) -> None:
        self.corpus = corpus
        self.directory = (root or default_root()) / fingerprint[:32]
        self._memory: OrderedDict[ImageKey, bytes | None] = OrderedDict()

    def get(self, key: ImageKey) -> bytes | None:
        """The thumbnail's JPEG bytes, None when the item has no image."""
        if key in self._memory:
            self._memory.move_to_end(key)
            return self._memory[key]
        path = self.directory / (hashlib.sha256(f"{key.config}/{key.column}/{key.key}".encode()).hexdigest()[:32])
        if path.with_suffix(".jpg").exists():
            made: bytes | None = path.with_suffix(".jpg").read_bytes()
        elif path.with_suffix(".none").exists():
            made = None
        else:
            data = self.corpus.image(key)
            made = thumbnail(data) if data else None
            _store(path.with_suffix(".jpg" if made else ".none"), made or b"")
        self._memory[key] = made
        if len(self._memory) > MEMORY_ITEMS:
            self._memory.popitem(last=False)
        return made

    def data_uri(self, key: ImageKey | None) -> str | None:
        """The thumbnail as a `data:image/jpeg;base64,…` URI (for a self-contained page), None without one."""
        made = self.get(key) if key is not None else None
        return "data:image/jpeg;base64," + base64.b64encode(made).decode("ascii") if made else None


def _store(path: Path, data: bytes) -> None:
    """Write atomically; a cache that cannot be written only costs a re-make next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        return
