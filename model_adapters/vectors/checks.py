"""Checks on what an encoder gives back, and the re-encoded sample that guards a reused cache.

Every failure is one `TriadError` line naming the model identity and the batch: a missing or invalid `dim`, a
result that is not one row per input, a wrong dimension, NaN/inf values, all-zero rows (cosine is undefined).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from triad_dataset.contract.errors import TriadError

SAMPLE_SIZE: Final = 8  # cached items re-encoded when a cache is reused
MIN_COSINE: Final = 0.999  # a re-encoded sample item below this differs from its cached vector: the model changed


def encoder_dim(encoder: Any, model: str) -> int:
    """The encoder's declared vector size (`Encoder.dim`, a positive int)."""
    dim = getattr(encoder, "dim", None)
    if isinstance(dim, (bool, float)) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise TriadError(
            f"model {model}: the encoder's `dim` is {dim!r}; it must declare its vector size as a "
            "positive int attribute (model_adapters/protocol.py)"
        )
    return int(dim)


def check_batch(vectors: Any, labels: Sequence[str], *, model: str, dim: int, batch: str) -> np.ndarray:
    """`vectors` as a float32 (len(labels), dim) array; `labels` name the inputs, `batch` the batch."""
    where = f"model {model}: {batch} (first input: {labels[0]})"
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise TriadError(f"{where}: the encoder returned {type(vectors).__name__}, not an array of vectors") from exc
    if arr.ndim != 2 or arr.shape[0] != len(labels):
        raise TriadError(
            f"{where}: returned shape {tuple(arr.shape)} for {len(labels)} inputs (one row per input expected)"
        )
    if arr.shape[1] != dim:
        raise TriadError(f"{where}: returned {arr.shape[1]}-dimensional vectors, expected {dim} (the encoder's dim)")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise TriadError(
            f"{where}: returned NaN/inf vectors for {int(bad.sum())} inputs (e.g. "
            f"{_names(labels, bad)}); nothing was written"
        )
    zero = ~arr.any(axis=1)
    if zero.any():
        raise TriadError(
            f"{where}: returned all-zero vectors for {int(zero.sum())} inputs (e.g. "
            f"{_names(labels, zero)}); a zero vector has no direction to rank by"
        )
    return arr


def _names(labels: Sequence[str], mask: npt.ArrayLike) -> str:
    return ", ".join(labels[i] for i in np.flatnonzero(mask)[:3])


def sample(keys: Sequence[str], roles: Mapping[str, str], n: int = SAMPLE_SIZE) -> list[str]:
    """A fixed sample of cached keys: the smallest keys (sha256 hex, so spread over the data) of each role, half and
    half where both roles are present.

    >>> sample(["b", "a", "d", "c"], {"a": "q", "b": "c", "c": "q", "d": "c"}, n=2)
    ['b', 'a']
    """
    by_role: dict[str, list[str]] = {}
    for key in sorted(keys):
        by_role.setdefault(roles[key], []).append(key)
    out: list[str] = []
    groups = sorted(by_role.values(), key=len)
    for i, group in enumerate(groups):
        share = (n - len(out)) // (len(groups) - i)
        out.extend(group[:share])
    return sorted(out, key=lambda k: (roles[k], k))


def min_cosine(fresh: np.ndarray, cached: np.ndarray) -> float:
    """The smallest row-wise cosine between two equally shaped (nonzero) matrices."""
    a = fresh / np.linalg.norm(fresh, axis=1, keepdims=True)
    b = cached / np.linalg.norm(cached, axis=1, keepdims=True)
    return float(np.min(np.sum(a * b, axis=1)))
