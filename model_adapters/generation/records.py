"""On-disk cache of JSON records (captions, generated texts, API responses of text): the embedding cache's design
(`model_adapters.vectors.cache`) for strings and small JSON values.

    <root>/<key>/meta.json               {<owner field>: key, "identity": the identity the records belong to}
    <root>/<key>/shards/<sha256>.json    {<owner field>: key, <values field>: {record key: value}}; the file name is
                                         the sha256 of the file's bytes

`key` = `vectors.cache.model_key(identity)`, so a changed model, prompt, setting or version never reads another's
records. Every `put` writes one new shard atomically (temporary file + rename), so an interrupted run resumes
where it stopped and several processes may write at once (each writes its own shards; none rewrites another's). A
shard whose bytes do not match its name, or that holds a value the owner's `valid` check refuses, is deleted,
counted, and its records are made again. `compact` merges many shards into one, removing only the shards this
object read or wrote, so a concurrent run's new shards stay.

The field names are the owner's (`CaptionCache`: "captioner_key" / "captions", the generation stage:
"generator_key" / "generations"), so each cache's files say what they hold.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from model_adapters.atomic import atomic_write
from model_adapters.vectors.cache import model_key
from triad_dataset.contract.errors import TriadError

META: Final = "meta.json"
SHARDS: Final = "shards"
COMPACT_ABOVE: Final = 32


@dataclass
class RecordStats:
    loaded: int = 0
    written: int = 0
    corrupted_shards: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RecordFormat:
    """How one owner names its files' fields and describes itself in messages ("caption cache", "captioner")."""

    owner_field: str
    values_field: str
    what: str  # e.g. "caption cache"
    owner: str  # e.g. "captioner"
    valid: Callable[[Any], bool] = lambda value: True


class RecordCache:
    """Records of one identity under `root` (`root=None`: kept in memory only, nothing written)."""

    def __init__(self, root: str | os.PathLike[str] | None, identity: Mapping[str, Any], fmt: RecordFormat) -> None:
        self.identity = dict(identity)
        self.fmt = fmt
        self.key = model_key(self.identity)
        self.dir = None if root is None else Path(root) / self.key
        self.stats = RecordStats()
        self.records: dict[str, Any] = {}
        self._mine: set[Path] = set()  # shards whose records this object holds (the only ones compact removes)
        meta = None if self.dir is None else self.dir / META
        if meta is not None and meta.exists():
            try:
                stored = json.loads(meta.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise TriadError(f"{meta}: unreadable {fmt.what} metadata ({exc}); delete the folder") from exc
            if stored.get("identity") != self.identity:
                raise TriadError(
                    f"{self.dir}: {fmt.what} written by another {fmt.owner} "
                    f"({stored.get('identity', {}).get('name')}); use another cache folder"
                )

    @staticmethod
    def key_of(identity: Mapping[str, Any]) -> str:
        return model_key(dict(identity))

    def _shards(self) -> list[Path]:
        folder = None if self.dir is None else self.dir / SHARDS
        return sorted(folder.glob("*.json")) if folder is not None and folder.exists() else []

    def _read(self, path: Path) -> dict[str, Any] | Literal[False] | None:
        """The shard's records; None when corrupted; False when it vanished (merged by a concurrent compaction)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return False
        try:
            obj = json.loads(data) if hashlib.sha256(data).hexdigest() == path.stem else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            obj = None
        if not isinstance(obj, dict):
            return None
        values = obj.get(self.fmt.values_field)
        if not isinstance(values, dict) or not all(self.fmt.valid(v) for v in values.values()):
            return None
        if obj.get(self.fmt.owner_field) != self.key:
            raise TriadError(f"{path}: {self.fmt.what} shard of another {self.fmt.owner}; use another cache folder")
        return values

    def load(self) -> int:
        """Read every shard (checksums verified; corrupted ones deleted and counted). Returns #records."""
        for path in self._shards():
            values = self._read(path)
            if values is False:
                continue
            if values is None:
                self.stats.corrupted_shards.append(path.name)
                path.unlink(missing_ok=True)
                continue
            self.records.update(values)
            self._mine.add(path)
        self.stats.loaded = len(self.records)
        return len(self.records)

    def put(self, records: Mapping[str, Any]) -> None:
        """Store one batch atomically as a new shard (in memory only when the cache has no folder)."""
        if not records:
            return
        if self.dir is not None:
            if not (self.dir / META).exists():
                (self.dir / SHARDS).mkdir(parents=True, exist_ok=True)
                meta = {self.fmt.owner_field: self.key, "identity": self.identity}
                atomic_write(self.dir / META, json.dumps(meta, indent=2).encode("utf-8"))
            self._mine.add(self._write_shard(dict(records)))
        self.records.update(records)
        self.stats.written += len(records)

    def _write_shard(self, records: dict[str, Any]) -> Path:
        if self.dir is None:
            raise RuntimeError("RecordCache without a folder has no shards")
        data = json.dumps(
            {self.fmt.owner_field: self.key, self.fmt.values_field: records}, ensure_ascii=False, sort_keys=True
        ).encode("utf-8")
        path = self.dir / SHARDS / f"{hashlib.sha256(data).hexdigest()}.json"
        atomic_write(path, data)
        return path

    def compact(self) -> None:
        """Merge many small shards into one (the new shard is written before the old ones are removed). Only
        shards this object read or wrote are removed: a concurrent run's new shards stay."""
        if self.dir is None or len(self._shards()) <= COMPACT_ABOVE:
            return
        merged = self._write_shard(dict(self.records))
        for path in self._mine - {merged}:
            path.unlink(missing_ok=True)
        self._mine = {merged}
