"""Instance images from an ImageNet-21K-style folder, ``<root>/<wnid>/<file>`` (paper Appendix A.1).

The paper keeps one image per WordNet class, with a short side of at least 224 pixels, deduplicated. It picks each
class's image by image-class-text similarity with Qwen3-VL-Embedding among ten candidates; without a model this
reader keeps, per class, the **first file in name order** that decodes, is large enough and is not a byte-identical
copy (same SHA-256) of an image already kept. Put the image you want first (or alone) in a class folder to choose it.

Unreadable files (not an image, truncated), too-small images and duplicates are skipped and counted in the audit;
a missing root folder is a TriadError.

>>> from triad_dataset.sources.imagefolder import InstanceImage, ImageCollection
>>> c = ImageCollection.from_images([InstanceImage.from_bytes("n02084071", "a.png", b"...", 224, 300)])
>>> c.images[0].item_id, c.audit["retained"]
('n02084071/a.png', 1)
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError
from tqdm.auto import tqdm

from triad_dataset.contract.errors import TriadError

MIN_SHORT_SIDE = 224  # paper A.1: minimum short side of a retained image
WNID_RE = re.compile(r"^n\d{8}$")
_MAX_EXAMPLES = 20  # skipped files listed by name in the audit


@dataclass(frozen=True)
class InstanceImage:
    """One retained instance image: corpus id ``<wnid>/<file name>``, its class and its encoded bytes."""

    item_id: str
    wnid: str
    file_name: str
    data: bytes = field(repr=False)
    width: int
    height: int
    sha256: str

    @classmethod
    def from_bytes(cls, wnid: str, file_name: str, data: bytes, width: int, height: int) -> InstanceImage:
        return cls(f"{wnid}/{file_name}", wnid, file_name, data, width, height, hashlib.sha256(data).hexdigest())

    def feature(self) -> dict[str, Any]:
        """The datasets ``Image()`` value of this picture."""
        return {"bytes": self.data, "path": self.file_name}


@dataclass
class ImageCollection:
    """Retained images (at most one per class, sorted by wnid) and the audit of how they were selected."""

    images: list[InstanceImage]
    audit: dict[str, Any]

    @classmethod
    def from_images(cls, images: Iterable[InstanceImage], **audit: Any) -> ImageCollection:
        """Wrap in-memory images (stand-ins, rendered placeholders); duplicates of a class are a ValueError."""
        kept = sorted(images, key=lambda im: im.wnid)
        for a, b in zip(kept, kept[1:], strict=False):
            if a.wnid == b.wnid:
                raise ValueError(f"two images for class {a.wnid}: {a.item_id}, {b.item_id} (one per class)")
        return cls(kept, {"source": "in-memory images", **audit, "retained": len(kept)})


def _probe(data: bytes) -> tuple[int, int]:
    """(width, height) of an encoded image after fully decoding it; raises on unreadable data."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        with Image.open(io.BytesIO(data)) as img:
            size = img.size
            if img.format == "JPEG":
                img.draft(
                    "RGB", (max(1, size[0] // 8), max(1, size[1] // 8))
                )  # decode at 1/8 scale: fast, still complete
            img.load()
    return size


def read_image_folder(
    root: str | os.PathLike[str],
    *,
    known_wnids: Iterable[str] | None = None,
    min_short_side: int = MIN_SHORT_SIDE,
    progress: bool = True,
) -> ImageCollection:
    """Scan ``root/<wnid>/<file>`` and keep one qualifying image per class (see the module docstring).

    `known_wnids` (e.g. a NounGraph) restricts classes to WordNet nouns; other class folders are counted and skipped.
    """
    base = Path(root)
    if not base.is_dir():
        raise TriadError(f"{base}: image folder not found (expected <root>/<wnid>/<image files>)")
    known = set(known_wnids) if known_wnids is not None else None
    counts = dict.fromkeys(
        (
            "class_dirs",
            "files_scanned",
            "unreadable",
            "too_small",
            "duplicates",
            "non_wnid_dirs",
            "not_in_wordnet",
            "classes_without_image",
        ),
        0,
    )
    examples: dict[str, list[str]] = {"unreadable": [], "too_small": [], "duplicates": []}
    seen: set[str] = set()
    kept: list[InstanceImage] = []

    def skip(kind: str, rel: str) -> None:
        counts[kind] += 1
        if len(examples[kind]) < _MAX_EXAMPLES:
            examples[kind].append(rel)

    class_dirs = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    for class_dir in tqdm(class_dirs, desc="image folder", unit="class", disable=not progress):
        wnid = class_dir.name
        if not WNID_RE.match(wnid):
            counts["non_wnid_dirs"] += 1
            continue
        if known is not None and wnid not in known:
            counts["not_in_wordnet"] += 1
            continue
        counts["class_dirs"] += 1
        chosen = None
        for path in sorted(p for p in class_dir.iterdir() if p.is_file() and not p.name.startswith(".")):
            counts["files_scanned"] += 1
            rel = f"{wnid}/{path.name}"
            try:
                data = path.read_bytes()
            except OSError:
                skip("unreadable", rel)
                continue
            digest = hashlib.sha256(data).hexdigest()
            if digest in seen:  # paper A.1: deduplication
                skip("duplicates", rel)
                continue
            try:
                width, height = _probe(data)
            except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
                skip("unreadable", rel)
                continue
            if min(width, height) < min_short_side:  # paper A.1: short side >= 224
                skip("too_small", rel)
                continue
            chosen = InstanceImage(rel, wnid, path.name, data, width, height, digest)
            break
        if chosen is None:
            counts["classes_without_image"] += 1
            continue
        seen.add(chosen.sha256)
        kept.append(chosen)
    if not kept:
        raise TriadError(f"{base}: no usable image (need <wnid>/<file> with a short side >= {min_short_side} px)")
    audit = {
        "source": str(base),
        "min_short_side": min_short_side,
        **counts,
        "retained": len(kept),
        "skipped_examples": {k: v for k, v in examples.items() if v},
    }
    return ImageCollection(kept, audit)
