"""Vectors of every distinct item of a plan: cache lookup, the cache drift check, encoding split over processes,
and the gather on rank 0.

    vectors, report = encode_plan(plan, source, ctx, cache, settings)

`source` is the run's `EncoderSource`: it loads the model at most once and knows whatever wraps it (a generation
stage, an API response store). This module never looks inside a model.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from model_adapters.planning import inputs
from model_adapters.planning.plan import Plan
from model_adapters.vectors import checks, distributed
from model_adapters.vectors.cache import EmbeddingCache
from model_adapters.vectors.encoding import encode_items


class EncoderSource(Protocol):
    """What `encode_plan` needs from the run's model."""

    def encoder(self) -> Any:
        """The `Encoder` the encode loop calls (loaded on first use)."""

    def check_encoder(self) -> tuple[Any, Callable[[str, str], bool] | None]:
        """The encoder the cache check re-encodes with, and which cached (key, role) it may check (None: all)."""

    def process_counters(self) -> dict[str, Any]:
        """This process's counters, gathered on rank 0."""

    def absorb(self, others: list[dict[str, Any]]) -> None:
        """On rank 0: take in the counters of the other processes (`process_counters` of each)."""


@dataclass(frozen=True)
class EncodeSettings:
    """How `encode_plan` encodes: the model's label, batch size and cache check."""

    label: str
    batch_size: int
    cache_check: int = checks.SAMPLE_SIZE  # cached items re-encoded to detect a changed model (0: no check)
    may_change: bool = True  # False: the model cannot change under the same identity (no check needed)
    skip_bad_images: bool = False
    grow: bool = True  # the batch may grow on CUDA (False: the user chose a batch size)
    quiet: bool = False


def verify_cache(
    encoder: Any,
    label: str,
    plan: Plan,
    found: Mapping[str, np.ndarray],
    sample_size: int,
    keep: Callable[[str, str], bool] | None = None,
) -> float | None:
    """The smallest cosine between cached vectors and a fixed re-encoded sample of them; None when none is checked.

    Args:
        encoder: what re-encodes the sample (for a reasoning embedder: from its stored generations only).
        label: the model's label, for the messages of `checks.check_batch`.
        plan: the plan the cached keys belong to.
        found: the cached vectors by key.
        sample_size: how many items to re-encode (`checks.sample`).
        keep: which (key, role) may be checked; None: every cached item.

    A different dimension returns -1.0: certainly another model.
    """
    if keep is not None:
        found = {k: v for k, v in found.items() if keep(k, plan.items[k].role)}
    keys = checks.sample(list(found), {k: plan.items[k].role for k in found}, sample_size)
    if not keys:
        return None
    dim = checks.encoder_dim(encoder, label)
    worst = 1.0
    for role in (inputs.QUERY, inputs.CANDIDATE):
        part = [k for k in keys if plan.items[k].role == role]
        if not part:
            continue
        fn = encoder.encode_queries if role == inputs.QUERY else encoder.encode_candidates
        fresh = checks.check_batch(
            fn([plan.items[k].model_input for k in part]),
            [plan.items[k].label for k in part],
            model=label,
            dim=dim,
            batch=f"cache check ({role} sample)",
        )
        if fresh.shape[1] != found[part[0]].shape[0]:
            return -1.0
        worst = min(worst, checks.min_cosine(fresh, np.stack([found[k] for k in part])))
    return worst


def encode_plan(
    plan: Plan,
    source: EncoderSource,
    ctx: distributed.Context,
    cache: EmbeddingCache | None,
    settings: EncodeSettings,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The vectors of every distinct item and the encoding report, on rank 0; `({}, report)` on the other ranks.

    Rank 0 looks the items up in `cache`, checks a sample of the hits against the model, and decides what is
    missing; every process encodes its contiguous slice of the misses (in storage order, so it reads the images
    of its own items only); rank 0 gathers the vectors and counters. The report's "counters" holds each
    process's `source.process_counters()`, rank 0's first.
    """
    keys = list(plan.items)
    found, missing = cache.lookup(keys) if cache is not None else ({}, keys)
    check = _check_cache(plan, source, ctx, cache, settings, found) if cache is not None and found else None
    if check is not None and check["changed"]:
        found, missing = {}, keys
    missing = ctx.broadcast(missing)  # rank 0 decides what is missing, whatever each node's disk holds
    vectors, stats = _encode_share(plan, source, ctx, cache, settings, missing)
    gathered = ctx.gather(
        (
            vectors,
            stats.images_skipped if stats else [],
            stats.batch_halvings if stats else 0,
            {**source.process_counters(), "encoding": stats.summary() if stats else None},
        )
    )
    report: dict[str, Any] = {
        "cache_hits": len(found),
        "encoded": len(missing),
        "corrupted_cache_shards": cache.stats.corrupted_shards if cache else [],
        "cache_dir": str(cache.dir) if cache else None,
        "cache_check": check,
        "images_skipped": [],
        "batch_halvings": 0,
    }
    if not ctx.is_main or gathered is None:
        return {}, report
    for part, skipped, halvings, _ in gathered:
        found.update(part)
        report["images_skipped"] += skipped
        report["batch_halvings"] += halvings
    report["counters"] = [counters for *_, counters in gathered]
    encodings = [counters.pop("encoding") for counters in report["counters"]]  # order, batch sizes, padding
    report["encoding"] = None if not any(encodings) else encodings[0] if len(encodings) == 1 else encodings
    if cache is not None:
        for part, *_ in gathered[1:]:
            cache.remember(part)  # other ranks wrote their shards; keep rank 0's view complete
        cache.compact()
    source.absorb(report["counters"][1:])
    return found, report


def _check_cache(
    plan: Plan,
    source: EncoderSource,
    ctx: distributed.Context,
    cache: EmbeddingCache,
    settings: EncodeSettings,
    found: Mapping[str, np.ndarray],
) -> dict[str, Any] | None:
    """On rank 0: re-encode a sample of the cache hits; a changed model clears the cache (said even with --quiet)."""
    if settings.cache_check <= 0 or not settings.may_change or not ctx.is_main:
        return None
    encoder, keep = source.check_encoder()
    worst = verify_cache(encoder, settings.label, plan, found, settings.cache_check, keep)
    check = {"items": min(settings.cache_check, len(found)), "min_cosine": worst, "changed": False}
    if worst is not None and worst < checks.MIN_COSINE:
        print(
            f"warning: {settings.label} changed since its vectors were cached (re-encoded sample "
            f"cosine {worst:.4f} < {checks.MIN_COSINE}): discarding {len(found)} cached vectors and encoding "
            "everything again",
            file=sys.stderr,
        )
        cache.clear()
        check["changed"] = True
    return check


def _encode_share(
    plan: Plan,
    source: EncoderSource,
    ctx: distributed.Context,
    cache: EmbeddingCache | None,
    settings: EncodeSettings,
    missing: list[str],
) -> tuple[dict[str, np.ndarray], Any]:
    """This process's slice of the missing items, encoded (and written to the cache); ({}, None) for none."""
    mine = distributed.split(plan.items.storage_order(missing), ctx.rank, ctx.world)
    vectors: dict[str, np.ndarray] = {}
    stats = None
    if mine:
        device = encode_device(ctx)
        show = not settings.quiet and ctx.is_main
        vectors, stats = encode_items(
            source.encoder(),
            mine,
            plan.items,
            model=settings.label,
            batch_size=settings.batch_size,
            cache=cache,
            skip_bad_images=settings.skip_bad_images,
            show_progress=show,
            log=lambda m: print(m, file=sys.stderr) if show else None,
            grow=device.startswith("cuda") and settings.grow,
            device=device,
        )
    plan.items.close_images()
    return vectors, stats


def encode_device(ctx: distributed.Context) -> str:
    """The device encoding runs on (torch is not imported for it: an encoder given as an object may not use it)."""
    if ctx.requested_device is not None or "torch" in sys.modules:
        return str(ctx.device)
    return "cpu"
