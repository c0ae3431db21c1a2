"""On-disk caption cache: captions keyed by captioner identity + sha256 of the image bytes (the one record cache,
`model_adapters.generation.records`, with the caption files' field names).

    <root>/<captioner_key>/meta.json             the captioner identity (registry.identity)
    <root>/<captioner_key>/shards/<sha256>.json  {"captioner_key", "captions": {image sha256: caption}}; the file
                                                 name is the sha256 of the file's bytes

`captioner_key` = `cache.model_key(identity)`, so a changed captioner, prompt, setting or package version never
reads another's captions. Shards are written atomically after every batch (an interrupted run resumes); a shard
whose bytes do not match its name is deleted, counted, and its images are captioned again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any, Final

from model_adapters.generation.records import RecordCache, RecordFormat

CAPTIONS: Final = RecordFormat(
    "captioner_key", "captions", "caption cache", "captioner", valid=lambda value: isinstance(value, str)
)


def image_key(data: bytes) -> str:
    """sha256 hex of the image bytes: the cache key of one image (within one captioner's folder)."""
    return hashlib.sha256(data).hexdigest()


class CaptionCache(RecordCache):
    """Captions of one captioner identity under `root` (`captions`: image sha256 -> caption)."""

    def __init__(self, root: str | os.PathLike[str], identity: Mapping[str, Any]) -> None:
        super().__init__(root, identity, CAPTIONS)

    @property
    def captions(self) -> dict[str, str]:
        return self.records
