"""On-disk caption cache: the embedding cache's design (model_adapters/vectors/cache.py) for strings.

    <root>/<captioner_key>/meta.json             the captioner identity (registry.identity)
    <root>/<captioner_key>/shards/<sha256>.json  {"captioner_key", "captions": {image sha256: caption}}; the file
                                                 name is the sha256 of the file's bytes

`captioner_key` = `cache.model_key(identity)`, so a changed captioner, prompt, setting or package version never
reads another's captions. Shards are written atomically after every batch (an interrupted run resumes); a shard
whose bytes do not match its name is deleted, counted, and its images are captioned again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from model_adapters.vectors.cache import _atomic_write, model_key
from triad_dataset.contract.errors import TriadError

META: Final = "meta.json"
SHARDS: Final = "shards"
COMPACT_ABOVE: Final = 32


def image_key(data: bytes) -> str:
    """sha256 hex of the image bytes: the cache key of one image (within one captioner's folder)."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class CaptionCacheStats:
    loaded: int = 0
    hits: int = 0
    written: int = 0
    corrupted_shards: list[str] = field(default_factory=list)


class CaptionCache:
    def __init__(self, root: str | os.PathLike[str], identity: Mapping[str, Any]) -> None:
        self.identity = dict(identity)
        self.key = model_key(self.identity)
        self.dir = Path(root) / self.key
        self.stats = CaptionCacheStats()
        self.captions: dict[str, str] = {}
        self._mine: set[Path] = set()  # shards whose captions this object holds (the only ones compact removes)
        meta = self.dir / META
        if meta.exists():
            try:
                stored = json.loads(meta.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise TriadError(f"{meta}: unreadable caption cache metadata ({exc}); delete the folder") from exc
            if stored.get("identity") != self.identity:
                raise TriadError(f"{self.dir}: caption cache written by another captioner "
                                 f"({stored.get('identity', {}).get('name')}); use another --cache-dir")

    @staticmethod
    def key_of(identity: Mapping[str, Any]) -> str:
        return model_key(dict(identity))

    def _shards(self) -> list[Path]:
        folder = self.dir / SHARDS
        return sorted(folder.glob("*.json")) if folder.exists() else []

    def load(self) -> int:
        """Read every shard (checksums verified; corrupted ones deleted and counted). Returns #captions."""
        for path in self._shards():
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # merged away by a concurrent compaction
                continue
            try:
                obj = json.loads(data) if hashlib.sha256(data).hexdigest() == path.stem else None
            except (json.JSONDecodeError, UnicodeDecodeError):
                obj = None
            if not isinstance(obj, dict) or not isinstance(obj.get("captions"), dict):
                self.stats.corrupted_shards.append(path.name)
                path.unlink(missing_ok=True)
                continue
            if obj.get("captioner_key") != self.key:
                raise TriadError(f"{path}: caption shard of another captioner; use another --cache-dir")
            self.captions.update(obj["captions"])
            self._mine.add(path)
        self.stats.loaded = len(self.captions)
        return len(self.captions)

    def put(self, captions: Mapping[str, str]) -> None:
        """Store one batch atomically as a new shard."""
        if not captions:
            return
        if not (self.dir / META).exists():
            (self.dir / SHARDS).mkdir(parents=True, exist_ok=True)
            meta = {"captioner_key": self.key, "identity": self.identity}
            _atomic_write(self.dir / META, json.dumps(meta, indent=2).encode("utf-8"))
        self._mine.add(self._write_shard(dict(captions)))
        self.captions.update(captions)
        self.stats.written += len(captions)

    def _write_shard(self, captions: dict[str, str]) -> Path:
        data = json.dumps({"captioner_key": self.key, "captions": captions}, ensure_ascii=False,
                          sort_keys=True).encode("utf-8")
        path = self.dir / SHARDS / f"{hashlib.sha256(data).hexdigest()}.json"
        _atomic_write(path, data)
        return path

    def compact(self) -> None:
        """Merge many small shards into one (the new shard is written before the old ones are removed). Only
        shards this object read or wrote are removed: a concurrent run's new shards stay."""
        if len(self._shards()) <= COMPACT_ABOVE:
            return
        merged = self._write_shard(dict(self.captions))
        for path in self._mine - {merged}:
            path.unlink(missing_ok=True)
        self._mine = {merged}
