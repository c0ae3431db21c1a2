"""Encode the missing items in batches: ordered by token count, prepared ahead of the model on background threads
(`model_adapters.vectors.pipeline`, `schedule`), cache writes per batch on a background writer, a progress bar, and
the bad-input rules (undecodable images, invalid vectors: `model_adapters.vectors.checks`, out-of-memory → halve the
batch and retry, an `--offline` API model's missing responses → counted over every batch, then one line)."""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np

from model_adapters.planning import inputs
from model_adapters.planning.plan import Item
from model_adapters.protocol import ModelInput, OfflineMiss, StagedEncoder
from model_adapters.vectors import checks, pipeline, schedule
from model_adapters.vectors.cache import EmbeddingCache
from model_adapters.vectors.workers import WorkerPool, processes_for
from triad_dataset.contract.errors import TriadError

GROW_AFTER: Final = 4  # batches that ran at one size before it doubles (where growing is allowed)
GROW_LIMIT: Final = 16  # growing stops at this many times the starting batch size
HOST_EVERY: Final = 8  # on CUDA, vectors move to the host every this many batches (one sync, not one per batch)
FAILED_BATCH: Final = "triad_failed_batch"  # what an encoder's exception carries: (role, batch number, its keys)


@dataclass
class EncodeStats:
    encoded: int = 0
    images_skipped: list[str] = field(default_factory=list)
    batch_halvings: int = 0
    batches: int = 0
    batch_size: dict[str, Any] = field(default_factory=dict)  # start, final, largest, grew
    padding: schedule.Padding = field(default_factory=schedule.Padding)
    order: str = "text length"
    prepared_ahead: int = 0  # preparer threads (0: the encoder is called as one step, or in worker processes)
    processes: int = 1  # processes that run the model (more than 1: single-threaded workers, `vectors.workers`)

    def summary(self) -> dict[str, Any]:
        """What results.json records of the encoding ("encoding"): order, batches, sizes, padding."""
        return {
            "order": self.order,
            "batches": self.batches,
            "batch_size": dict(self.batch_size),
            "prepared_ahead": self.prepared_ahead,
            "processes": self.processes,
            "batch_halvings": self.batch_halvings,
            **self.padding.as_dict(),
        }


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
    from model_adapters.families.common import decode_image

    bad = []
    for i, item in enumerate(batch):
        if item.model_input.image is not None:
            try:
                decode_image(item.model_input.image)
            except ValueError:
                bad.append(i)
    return bad


def preparer_threads(device: str | None) -> int:
    """Preparer threads: every core but the one feeding the model (at least one); on one core, one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - (1 if str(device or "").startswith("cuda") else 0))


def _text_lengths(batch: Sequence[ModelInput], role: str) -> list[int]:
    return [len(item.text) for item in batch]


def _group_of(items: Mapping[str, Item]) -> Callable[[str], tuple[str, bool]]:
    has_image = getattr(items, "has_image", None)
    index = getattr(items, "index", None)
    role_of = getattr(items, "role", None)
    if has_image is not None and index is not None and callable(role_of):
        return lambda k: (role_of(k), bool(has_image[index[k]]))
    return lambda k: (items[k].role, False)


class _Sizes:
    """The batch size: halved on out-of-memory (then fixed), doubled every GROW_AFTER batches where allowed."""

    def __init__(self, start: int, grow: bool) -> None:
        self.start = self.now = self.largest = max(1, start)
        self.grow, self.grew, self._ran = grow, False, 0

    def __call__(self) -> int:
        return self.now

    def ran(self, n: int) -> None:
        if not self.grow or n < self.now:
            return
        self._ran += 1
        if self._ran >= GROW_AFTER and self.now * 2 <= self.start * GROW_LIMIT:
            self.now, self._ran, self.grew = self.now * 2, 0, True
            self.largest = max(self.largest, self.now)

    def halve(self) -> None:
        self.now, self.grow, self._ran = max(1, self.now // 2), False, 0

    def summary(self) -> dict[str, Any]:
        """The batch sizes results.json records: start, final, largest, and whether it grew."""
        return {"start": self.start, "final": self.now, "largest": self.largest, "grew": self.grew}


def encode_items(
    encoder: Any,
    keys: Sequence[str],
    items: Mapping[str, Item],
    *,
    model: str,
    batch_size: int,
    cache: EmbeddingCache | None,
    skip_bad_images: bool = False,
    show_progress: bool = True,
    log: Callable[[str], None] | None = None,
    grow: bool = False,
    device: str | None = None,
    workers: int | None = None,
    processes: int | None = None,
) -> tuple[dict[str, np.ndarray], EncodeStats]:
    """Vectors for `keys` (queries through encode_queries, candidates through encode_candidates; a `StagedEncoder`
    through prepare + forward, prepared ahead on `workers` threads, or in `processes` single-threaded worker
    processes (`workers.processes_for`; default one)). `grow`: double the batch size while it fits
    (until the first out-of-memory, then settle; the runner allows it on CUDA)."""
    from triad_dataset.contract.progress import progress

    log = log or (lambda msg: print(msg, file=sys.stderr))
    staged = isinstance(encoder, StagedEncoder)
    sizes = _Sizes(batch_size, grow)
    lengths = encoder.input_lengths if callable(getattr(encoder, "input_lengths", None)) else _text_lengths
    threads = min(workers or preparer_threads(device), getattr(encoder, "prepare_threads", None) or 1 << 10)
    procs = processes_for(encoder, device, processes) if not grow and len(keys) > batch_size else 1
    stats = EncodeStats(
        order="token count" if lengths is not _text_lengths else "text length",
        prepared_ahead=threads if staged and procs == 1 else 0,
        processes=procs,
    )
    out: dict[str, np.ndarray] = {}
    dim = checks.encoder_dim(encoder, model)
    # Group by role (and, for a plan's item table, with / without image: images stream from the parquet shards in
    # storage order, see model_adapters.planning.images); the feeder sorts by token count within each group.
    order_key = getattr(items, "encode_order_key", None) or (
        lambda k: (items[k].role, len(items[k].model_input.text), k)
    )
    ordered = sorted(keys, key=order_key)
    labels: dict[str, str] = {}

    def read(key: str) -> ModelInput:
        item = items[key]  # an item table reads its image now, once
        labels[key] = item.label
        return item.model_input

    feed = pipeline.Feed(
        read,
        _group_of(items),
        lengths,
        sizes,
        encoder.prepare if staged and procs == 1 else None,
        workers=stats.prepared_ahead or 1,
        depth=2 * max(1, stats.prepared_ahead) + 2,
    )
    pool = WorkerPool(encoder, procs) if procs > 1 else None  # forked before this call starts any thread
    bar = progress(total=len(ordered), desc="encode", unit="item", disable=not show_progress, dynamic_ncols=True)
    writer = pipeline.Writer(cache.put) if cache is not None else None
    host = _Host(device, dim, model, writer, out, stats, labels)
    batches = _Batches(encoder, staged, sizes, stats, host, labels, bar, skip_bad_images, model, log)
    try:
        with pipeline.Feeder(ordered, feed) as feeder:
            batches.run(feeder) if pool is None else batches.run_in(pool, feeder)
        host.flush()
    finally:
        bar.close()
        if pool is not None:
            pool.close()
        if writer is not None:
            writer.close()  # every batch encoded so far is on disk (an interrupted run resumes after it)
    stats.batch_size = sizes.summary()
    if batches.offline_missing:
        raise TriadError(
            f"model {model}: --offline, and {batches.offline_missing} of the {len(ordered)} inputs to encode are "
            f"not in its response cache ({batches.offline_where}); run without --offline to request them (or "
            "give --api-cache the folder that holds them)"
        )
    return out, stats


@dataclass
class _Batches:
    """Runs encode_items' batches: halves the batch size on out-of-memory, skips bad images, counts offline misses."""

    encoder: Any
    staged: bool
    sizes: _Sizes
    stats: EncodeStats
    host: _Host
    labels: dict[str, str]
    bar: Any
    skip_bad_images: bool
    model: str
    log: Callable[[str], None]
    offline_missing: int = 0
    offline_where: str = ""

    def run(self, feeder: Iterable[pipeline.Batch]) -> None:
        """Encode every fed batch, cut to the current batch size; on out-of-memory, halve it and retry."""
        for fed in feeder:
            todo = deque([fed])
            while todo:
                batch = todo.popleft()
                if len(batch.keys) > self.sizes():  # cut before the batch size shrank: split, prepare here
                    todo.extendleft(reversed(_split(batch, self.sizes())))
                    continue
                try:
                    self.one(batch)
                except Exception as exc:
                    if not _is_oom(exc):
                        number = self.stats.batches + len(self.host.pending) + 1
                        setattr(exc, FAILED_BATCH, (batch.role, number, list(batch.keys)))  # for the error line
                        raise
                    self._halve(batch, exc)
                    todo.extendleft(reversed(_split(batch, self.sizes())))

    def run_in(self, pool: WorkerPool, feeder: Iterable[pipeline.Batch]) -> None:
        """Encode every fed batch in the worker processes; a batch a worker failed is encoded here (`run`)."""
        for batch, vectors in pool.map(feeder, lambda b: (b.role, list(b.inputs))):
            if vectors is None:
                self.run([batch])
            else:
                self.done(batch, vectors, set())

    def _halve(self, batch: pipeline.Batch, exc: BaseException) -> None:
        if len(batch.keys) == 1:
            raise TriadError(
                f"model {self.model}: out of memory on a single input ({self.labels[batch.keys[0]]})"
            ) from exc
        self.host.flush()
        self.sizes.halve()
        self.stats.batch_halvings += 1
        self.log(f"out of memory on a batch of {len(batch.keys)}: retrying with batch size {self.sizes()}")
        _free_memory()

    def one(self, batch: pipeline.Batch) -> None:
        """Encode one batch and hand its vectors to the host; an image that does not decode refuses or is skipped."""
        model_inputs = list(batch.inputs)
        no_cache: set[int] = set()
        try:
            vectors = self._vectors(batch, model_inputs)
        except OfflineMiss as miss:  # nothing to encode this batch with: count it, look at the rest
            self.offline_missing, self.offline_where = self.offline_missing + miss.missing, miss.where
            self.bar.update(len(batch.keys))
            return
        except Exception as exc:
            if _is_oom(exc):
                raise
            bad = _bad_images(
                [Item(batch.role, m, self.labels[k]) for k, m in zip(batch.keys, model_inputs, strict=True)]
            )
            if not bad:
                raise
            no_cache = self._without_images(batch, model_inputs, bad, exc)
            vectors = self._unstaged(batch)(model_inputs)
        self.done(batch, vectors, no_cache)

    def done(self, batch: pipeline.Batch, vectors: Any, no_cache: set[int]) -> None:
        """Count one encoded batch and hand its vectors to the host (`no_cache`: rows not to cache)."""
        self.stats.padding.add(batch.lengths)
        self.host.add(batch, vectors, no_cache)
        self.sizes.ran(len(batch.keys))
        self.bar.update(len(batch.keys))

    def _unstaged(self, batch: pipeline.Batch) -> Callable[[list[ModelInput]], Any]:
        return self.encoder.encode_queries if batch.role == inputs.QUERY else self.encoder.encode_candidates

    def _vectors(self, batch: pipeline.Batch, model_inputs: list[ModelInput]) -> Any:
        if not self.staged:
            return self._unstaged(batch)(model_inputs)
        prepared = (
            batch.prepared.result() if batch.prepared is not None else self.encoder.prepare(model_inputs, batch.role)
        )
        return self.encoder.forward(prepared, batch.role)

    def _without_images(
        self, batch: pipeline.Batch, model_inputs: list[ModelInput], bad: list[int], exc: BaseException
    ) -> set[int]:
        """Drop the images at `bad` from `model_inputs` (in place) and return their positions, or refuse."""
        if not self.skip_bad_images:
            raise TriadError(
                f"{self.labels[batch.keys[bad[0]]]}: image does not decode; fix the data or pass "
                "--skip-bad-images to encode such items without their image"
            ) from exc
        for i in bad:
            self.stats.images_skipped.append(self.labels[batch.keys[i]])
            text = model_inputs[i].text or model_inputs[i].instruction or " "
            model_inputs[i] = replace(model_inputs[i], text=text, image=None)
        return set(bad)


def _split(batch: pipeline.Batch, size: int) -> list[pipeline.Batch]:
    """`batch` in pieces of at most `size`, to be prepared by the caller."""
    return [
        pipeline.Batch(batch.role, batch.keys[i : i + size], batch.inputs[i : i + size], batch.lengths[i : i + size])
        for i in range(0, len(batch.keys), max(1, size))
    ]


class _Host:
    """Vectors to the host, checked, handed to the cache writer: on CUDA every HOST_EVERY batches in one copy."""

    def __init__(
        self,
        device: str | None,
        dim: int,
        model: str,
        writer: pipeline.Writer | None,
        out: dict[str, np.ndarray],
        stats: EncodeStats,
        labels: dict[str, str],
    ) -> None:
        self.every = HOST_EVERY if str(device or "").startswith("cuda") else 1
        self.dim, self.model, self.writer, self.out, self.stats = dim, model, writer, out, stats
        self.labels = labels
        self.pending: list[tuple[pipeline.Batch, Any, set[int]]] = []

    def add(self, batch: pipeline.Batch, vectors: Any, no_cache: set[int]) -> None:
        self.pending.append((batch, vectors, no_cache))
        if len(self.pending) >= self.every:
            self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        for batch, vectors, no_cache in pending:
            if hasattr(vectors, "detach"):  # a torch tensor, possibly on the device
                vectors = vectors.detach().float().cpu().numpy()
            self.stats.batches += 1
            arr = checks.check_batch(
                vectors,
                [self.labels[k] for k in batch.keys],
                model=self.model,
                dim=self.dim,
                batch=f"{batch.role} batch {self.stats.batches} of {len(batch.keys)} inputs",
            )
            keep = [i for i in range(len(batch.keys)) if i not in no_cache]
            if self.writer is not None and keep:
                self.writer.put([batch.keys[i] for i in keep], arr[keep])
            for k, v in zip(batch.keys, arr, strict=True):
                self.out[k] = v
            self.stats.encoded += len(batch.keys)
