"""On-disk embedding cache: vectors keyed by the exact serialized input, per model identity, with checksums.

Layout:

    <root>/<model_key>/meta.json                 the model identity (`ModelIdentity.cache_fields`: name, source,
                                                 revision, dtype, options, library versions ...) and the dimension
    <root>/<model_key>/shards/<sha256>.npz       keys (sha256 of each input, `inputs.input_key`), vectors (float32),
                                                 model_key; the file name is the sha256 of the file's bytes

`model_key` = first 20 hex of sha256 over the identity (`ModelIdentity.cache_key`), so another model, source,
revision, dtype, option, library version or adapter version never reads these vectors. Shards are written atomically (temp file + rename) after every encoded batch, so an
interrupted run resumes where it stopped. A shard whose bytes do not match its name is corrupted: it is deleted,
counted, and its items are re-encoded. A folder written for another model is refused with a clear message.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from model_adapters.atomic import atomic_write
from triad_dataset.contract.errors import TriadError

FORMAT_VERSION: Final = 1
META: Final = "meta.json"
SHARDS: Final = "shards"
COMPACT_ABOVE: Final = 32  # merge shards into one when a run leaves more than this many


def model_key(identity: Mapping[str, Any]) -> str:
    """Stable key of a model identity (a dict, `ModelIdentity.cache_fields`).

    >>> model_key({"a": 1}) == model_key({"a": 1}) != model_key({"a": 2})
    True
    """
    blob = json.dumps(dict(identity), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


def _describe(meta: Mapping[str, Any]) -> str:
    ident = meta.get("identity", {})
    return ", ".join(f"{k}={ident.get(k)}" for k in ("name", "source_kind", "source", "revision", "dtype"))


@dataclass
class CacheStats:
    loaded: int = 0
    hits: int = 0
    written: int = 0
    corrupted_shards: list[str] = field(default_factory=list)


class EmbeddingCache:
    """Vectors of one model identity under `root`. `dim` is checked against every stored vector."""

    def __init__(self, root: str | os.PathLike[str], identity: Mapping[str, Any]) -> None:
        self.identity = dict(identity)
        self.key = model_key(self.identity)
        root = Path(root)
        if (root / META).exists():  # the user pointed at one model's folder directly
            self.dir = root
        else:
            self.dir = root / self.key
        self.stats = CacheStats()
        self._vectors: dict[str, np.ndarray] = {}
        self._dim: int | None = None
        self._check_meta()

    # --- identity ------------------------------------------------------------------------------------------
    def _check_meta(self) -> None:
        path = self.dir / META
        if not path.exists():
            return
        try:
            meta = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise TriadError(f"{path}: unreadable cache metadata ({exc}); delete the folder to rebuild it") from exc
        if meta.get("model_key") != self.key or meta.get("identity") != self.identity:
            raise TriadError(
                f"{self.dir}: this embedding cache was written by another model ({_describe(meta)}); this run is "
                f"{_describe({'identity': self.identity})}. Use a different --cache-dir (or its parent folder)"
            )
        self._dim = meta.get("dim")

    def _write_meta(self, dim: int) -> None:
        (self.dir / SHARDS).mkdir(parents=True, exist_ok=True)
        meta = {"format": FORMAT_VERSION, "model_key": self.key, "identity": self.identity, "dim": dim}
        atomic_write(self.dir / META, json.dumps(meta, indent=2).encode("utf-8"))
        self._dim = dim

    # --- reading -------------------------------------------------------------------------------------------
    def _shard_paths(self) -> list[Path]:
        folder = self.dir / SHARDS
        return sorted(folder.glob("*.npz")) if folder.exists() else []

    def _read_shard(self, path: Path) -> tuple[np.ndarray, np.ndarray] | Literal[False] | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # merged away by a concurrent run's compaction: its vectors are in the new shard
            return False
        if hashlib.sha256(data).hexdigest() != path.stem:
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                keys, vectors, owner = npz["keys"], npz["vectors"], str(npz["model_key"])
        except Exception:  # a shard that matches its checksum but is not an npz: treat as corrupted
            return None
        if owner != self.key:
            raise TriadError(
                f"{path}: cache shard written by another model (key {owner}, this run {self.key}); "
                "use a different --cache-dir"
            )
        if vectors.ndim != 2 or len(keys) != len(vectors) or (self._dim is not None and vectors.shape[1] != self._dim):
            return None
        return keys, vectors

    def load(self) -> int:
        """Read every shard (checksums verified); corrupted shards are deleted and counted. Returns #vectors."""
        for path in self._shard_paths():
            shard = self._read_shard(path)
            if shard is False:
                continue
            if shard is None:
                self.stats.corrupted_shards.append(path.name)
                path.unlink(missing_ok=True)
                continue
            keys, vectors = shard
            for k, v in zip(keys.tolist(), vectors, strict=True):
                self._vectors[k.decode("ascii") if isinstance(k, bytes) else str(k)] = v
        self.stats.loaded = len(self._vectors)
        return len(self._vectors)

    def lookup(self, keys: Iterable[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """(found vectors, missing keys in input order)."""
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        for k in keys:
            v = self._vectors.get(k)
            if v is None:
                missing.append(k)
            else:
                found[k] = v
        self.stats.hits += len(found)
        return found, missing

    def clear(self) -> None:
        """Forget every stored vector of this identity (shards and metadata removed): the model changed."""
        for path in self._shard_paths():
            path.unlink(missing_ok=True)
        (self.dir / META).unlink(missing_ok=True)
        self._vectors.clear()
        self._dim = None

    # --- writing -------------------------------------------------------------------------------------------
    def put(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store one batch atomically as a new shard."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(keys) != len(vectors) or len(keys) == 0:
            raise ValueError(f"cache.put: {len(keys)} keys for {len(vectors)} vectors")
        if self._dim is None:
            self._write_meta(int(vectors.shape[1]))
        elif vectors.shape[1] != self._dim:
            raise ValueError(f"cache.put: vectors of dimension {vectors.shape[1]}, cache holds {self._dim}")
        self._write_shard(list(keys), vectors)
        for k, v in zip(keys, vectors, strict=True):
            self._vectors[k] = v
        self.stats.written += len(keys)

    def remember(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Add vectors another process already stored in its own shards (nothing is written)."""
        self._vectors.update(vectors)

    def _write_shard(self, keys: list[str], vectors: np.ndarray) -> Path:
        buf = io.BytesIO()
        np.savez(buf, keys=np.asarray(keys, dtype="S64"), vectors=vectors, model_key=np.asarray(self.key))
        data = buf.getvalue()
        path = self.dir / SHARDS / f"{hashlib.sha256(data).hexdigest()}.npz"
        atomic_write(path, data)
        return path

    def compact(self) -> None:
        """Merge many small shards into one (new shard written before the old ones are removed)."""
        paths = self._shard_paths()
        if len(paths) <= COMPACT_ABOVE or not self._vectors:
            return
        keys = sorted(self._vectors)
        merged = self._write_shard(keys, np.stack([self._vectors[k] for k in keys]))
        for path in paths:
            if path != merged:
                path.unlink(missing_ok=True)
