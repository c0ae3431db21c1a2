"""Remembers in `RunMemo` what a re-run on an unchanged dataset folder need not compute again.

Three values are remembered:
- the folder's validation,
- the counts of truncated inputs, which would otherwise load the model's tokenizer,
- the scores of rankings identical to a previous run's, which would otherwise redo the bootstrap intervals.

They are small JSON files under `<cache root>/_runs/`. Each is keyed by the folder's stamp, the relative path, size
and modification time of every file of the folder. A rebuilt folder also changes its shard names, which carry their
content hash. The key also holds what else decides the value: the validator's source code, the model identity,
configs, variant and limit, and for the scores a digest of the rankings, the seed and the metrics code. A changed
folder, model, setting or ranking computes afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from model_adapters.atomic import atomic_write

RUNS_DIR: Final = "_runs"


def folder_stamp(data: str) -> str:
    """sha256 over the relative path, size and mtime of every file under the folder (no file is read)."""
    root = Path(data)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        st = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _source_digest(module_name: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(module_name)
    origin = spec.origin if spec is not None else None
    return hashlib.sha256(Path(origin).read_bytes()).hexdigest() if origin else "none"


def _plain(value: Any) -> Any:
    """Turn numpy scalars into Python numbers and refuse anything else that JSON cannot hold."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a run record")


def file_digest(path: str | None) -> str | None:
    """Return the sha256 of a file's bytes, or None when there is no file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None


def rankings_digest(plan: Any, final: Mapping[str, Any]) -> str:
    """sha256 over every config's ranked order, positive ranks and query ids (what the scores depend on)."""
    digest = hashlib.sha256()
    for cp in plan.configs:
        result = final[cp.config]
        digest.update(cp.config.encode() + result.order.astype(np.int64).tobytes())
        if result.positive_rank is not None:
            digest.update(result.positive_rank.astype(np.int64).tobytes())
        digest.update("\0".join(cp.query_ids).encode())
    return digest.hexdigest()


class RunMemo:
    """Small JSON records under `root/_runs/`, or nothing at all when `root` is None (`--no-cache`)."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.dir = Path(root) / RUNS_DIR if root is not None else None

    def _path(self, kind: str, key: Mapping[str, Any]) -> Path | None:
        if self.dir is None:
            return None
        blob = json.dumps({"kind": kind, **key}, sort_keys=True, default=str)
        return self.dir / f"{kind}-{hashlib.sha256(blob.encode()).hexdigest()[:32]}.json"

    def get(self, kind: str, key: Mapping[str, Any]) -> Any:
        """Return the value stored under `kind` and `key`, or None when there is none or it cannot be read."""
        path = self._path(kind, key)
        if path is None or not path.exists():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))["value"]
        except (OSError, ValueError, KeyError):
            return None

    def put(self, kind: str, key: Mapping[str, Any], value: Any) -> None:
        """Store `value` under `kind` and `key`. A cache that cannot be written is left as it is."""
        path = self._path(kind, key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps({"key": key, "value": value}, default=_plain)  # NaN kept, as a JSON extension
            atomic_write(path, text.encode("utf-8"))
        except (OSError, TypeError):
            pass  # a read-only cache, or a value JSON cannot hold, only costs the next run the time to recompute

    # --- the three memoised steps ------------------------------------------------------------------------------
    def validate(self, data: str, benchmark: str, validate: Callable[[str, str], list[str]]) -> list[str]:
        """Run `validate(data, benchmark)` unless this folder, with the same files, sizes and times, passed it."""
        key = self.validation_key(data, benchmark) if self.dir is not None else {}
        if self.get("validated", key):
            return []
        problems = validate(data, benchmark)
        if not problems:
            self.put("validated", key, True)
        return problems

    def truncation(self, key_of: Callable[[], Mapping[str, Any]], count: Callable[[], Any], reuse: bool = True) -> Any:
        """Return `count()`, or the counts a finished run stored under `key_of()`. A None count is not stored.

        With `reuse` False, for an encoder given as an object that may change, the counts are always made afresh.
        """
        if not reuse or self.dir is None:
            return count()
        key = key_of()
        known = self.get("truncation", key)
        if known is not None:  # the same inputs and model as a finished run: no tokenizer to load
            return known
        counts = count()
        if counts is not None:
            self.put("truncation", key, counts)
        return counts

    def scores(self, data: str, plan: Any, final: Mapping[str, Any], seed: int, score: Callable[[], Any]) -> Any:
        """`score()`, or the stored scores of identical rankings of the same folder (same seed and metrics code)."""
        if self.dir is None:
            return score()
        configs = [cp.config for cp in plan.configs]
        key = self.scores_key(data, configs, seed, rankings_digest(plan, final))
        known = self.get("scores", key)
        if known is not None:
            return known
        scored = score()
        self.put("scores", key, scored)
        return scored

    # --- the keys of the records -----------------------------------------------------------------------------------
    @staticmethod
    def validation_key(data: str, benchmark: str) -> dict[str, Any]:
        module = "ark_dataset.validate" if benchmark == "ark" else "triad_dataset.folder.validate"
        return {"folder": folder_stamp(data), "benchmark": benchmark, "validator": _source_digest(module)}

    @staticmethod
    def truncation_key(
        data: str, identity: Mapping[str, Any], configs: list[str], variant: str, limit: int | None, sees_images: bool
    ) -> dict[str, Any]:
        return {
            "folder": folder_stamp(data),
            "identity": dict(identity),
            "configs": list(configs),
            "variant": variant,
            "limit": limit,
            "sees_images": sees_images,
            "counter": _source_digest("model_adapters.planning.truncation"),
        }

    @staticmethod
    def scores_key(data: str, configs: list[str], seed: int, rankings_digest: str) -> dict[str, Any]:
        import metrics

        code = hashlib.sha256()
        for path in sorted(Path(metrics.__file__).parent.rglob("*.py")):
            code.update(path.read_bytes())
        return {
            "folder": folder_stamp(data),
            "configs": list(configs),
            "seed": seed,
            "rankings": rankings_digest,
            "metrics_code": code.hexdigest(),
        }
