"""Encode the missing items in batches: progress bar, cache writes per batch, and the bad-input rules
(undecodable images, invalid vectors: `model_adapters.vectors.checks`, out-of-memory → halve the batch and retry,
an `--offline` API model's missing responses → counted over every batch, then one line)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from model_adapters.planning import inputs
from model_adapters.planning.plan import Item
from model_adapters.protocol import OfflineMiss
from model_adapters.vectors import checks
from model_adapters.vectors.cache import EmbeddingCache
from triad_dataset.contract.errors import TriadError


@dataclass
class EncodeStats:
    encoded: int = 0
    images_skipped: list[str] | None = None
    batch_halvings: int = 0
    batches: int = 0


def _is_oom(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name == "OutOfMemoryError" or (isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


def _free_memory() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def _bad_images(batch: Sequence[Item]) -> list[int]:
    from model_adapters.families._common import decode_image

    bad = []
    for i, item in enumerate(batch):
        if item.model_input.image is not None:
            try:
                decode_image(item.model_input.image)
            except ValueError:
                bad.append(i)
    return bad


def encode_items(encoder: Any, keys: Sequence[str], items: dict[str, Item], *, model: str, batch_size: int,
                 cache: EmbeddingCache | None, skip_bad_images: bool = False, show_progress: bool = True,
                 log: Callable[[str], None] | None = None) -> tuple[dict[str, np.ndarray], EncodeStats]:
    """Vectors for `keys` (queries through encode_queries, candidates through encode_candidates)."""
    from tqdm.auto import tqdm

    log = log or (lambda msg: print(msg, file=sys.stderr))
    stats = EncodeStats(images_skipped=[])
    out: dict[str, np.ndarray] = {}
    dim = checks.encoder_dim(encoder, model)
    # Group by role, then by text length so batches pad little; the order depends only on the inputs.
    # A plan's item table orders items with images by where they are stored (their images stream from the parquet
    # shards, see model_adapters.planning.images) without reading any image to sort.
    order_key = getattr(items, "encode_order_key", None) or (lambda k: (items[k].role, len(items[k].model_input.text), k))
    ordered = sorted(keys, key=order_key)
    role_of = getattr(items, "role", None) or (lambda k: items[k].role)
    bar = tqdm(total=len(ordered), desc="encode", unit="item", disable=not show_progress, dynamic_ncols=True)
    start, size = 0, max(1, batch_size)
    offline_missing, offline_where = 0, ""
    try:
        while start < len(ordered):
            role = role_of(ordered[start])
            chunk = [k for k in ordered[start:start + size] if role_of(k) == role]
            batch = [items[k] for k in chunk]  # an item table reads these images now, once
            model_inputs = [b.model_input for b in batch]
            no_cache: set[int] = set()
            fn = encoder.encode_queries if role == inputs.QUERY else encoder.encode_candidates
            try:
                vectors = fn(model_inputs)
            except OfflineMiss as miss:  # nothing to encode this batch with: count it, look at the rest
                offline_missing, offline_where = offline_missing + miss.missing, miss.where
                bar.update(len(chunk))
                start += len(chunk)
                continue
            except Exception as exc:
                if _is_oom(exc):
                    if size == 1:
                        raise TriadError(f"model {model}: out of memory on a single input ({batch[0].label})") from exc
                    size = max(1, size // 2)
                    stats.batch_halvings += 1
                    log(f"out of memory on a batch of {len(chunk)}: retrying with batch size {size}")
                    _free_memory()
                    continue
                bad = _bad_images(batch)
                if not bad:
                    raise
                if not skip_bad_images:
                    raise TriadError(f"{batch[bad[0]].label}: image does not decode; fix the data or pass "
                                     "--skip-bad-images to encode such items without their image") from exc
                for i in bad:
                    stats.images_skipped.append(batch[i].label)
                    no_cache.add(i)
                    text = model_inputs[i].text or model_inputs[i].instruction or " "
                    model_inputs[i] = replace(model_inputs[i], text=text, image=None)
                vectors = fn(model_inputs)
            arr = checks.check_batch(vectors, [b.label for b in batch], model=model, dim=dim,
                                     batch=f"{role} batch {stats.batches + 1} of {len(batch)} inputs")
            stats.batches += 1
            keep = [i for i in range(len(chunk)) if i not in no_cache]
            if cache is not None and keep:
                cache.put([chunk[i] for i in keep], arr[keep])
            for k, v in zip(chunk, arr, strict=True):
                out[k] = v
            stats.encoded += len(chunk)
            bar.update(len(chunk))
            start += len(chunk)
    finally:
        bar.close()
    if offline_missing:
        raise TriadError(f"model {model}: --offline, and {offline_missing} of the {len(ordered)} inputs to encode are "
                         f"not in its response cache ({offline_where}); run without --offline to request them (or "
                         "give --api-cache the folder that holds them)")
    return out, stats
