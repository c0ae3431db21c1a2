"""The overlapped input pipeline of `encode_items`: while the model runs one batch, a feeder thread reads
the next items (their image bytes from the parquet shards), orders them by token count (`schedule`) and hands each
batch to a pool of preparer threads (decode, resize, tokenize: `StagedEncoder.prepare`); vectors go to the cache
through a background writer. Bounded everywhere: at most `depth` prepared batches wait, at most `WRITES_PENDING`
writes.

Threads, not processes: PIL decoding and resizing, numpy and the Rust tokenizers release the GIL, and nothing has to
be pickled. Tokenizers are not shared between threads (a fast tokenizer raises "Already borrowed" when two threads
use it at once): each preparer thread gets its own copy (`families.common.PerThread`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

from model_adapters.protocol import ModelInput
from model_adapters.vectors import schedule

WRITES_PENDING: Final = 8
_DONE: Final = object()


@dataclass
class Batch:
    """One batch as the feeder cut it: keys, inputs, token counts, and the preparation under way (None: not
    staged, or prepared by the caller)."""

    role: str
    keys: list[str]
    inputs: list[ModelInput]
    lengths: list[int]
    prepared: Future | None = None


@dataclass
class _Failure:
    exc: BaseException


@dataclass
class Feed:
    """What the feeder needs to know about the items: how to read one, its role, its ordering group (role and
    whether it has an image: images are sorted within windows only), and the encoder's token count."""

    read: Callable[[str], ModelInput]
    group_of: Callable[[str], tuple[str, bool]]
    lengths: Callable[[Sequence[ModelInput], str], list[int]]
    size: Callable[[], int]  # the batch size now (it shrinks on out-of-memory, grows where allowed)
    prepare: Callable[[Sequence[ModelInput], str], Any] | None = None
    workers: int = 1
    depth: int = 4


@dataclass
class Feeder:
    """Iterates the batches of `ordered` (grouped by `Feed.group_of`), prepared ahead in the background."""

    ordered: Sequence[str]
    feed: Feed
    _queue: queue.Queue = field(init=False)
    _stop: threading.Event = field(init=False, default_factory=threading.Event)
    _pool: ThreadPoolExecutor | None = field(init=False, default=None)
    _thread: threading.Thread | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._queue = queue.Queue(maxsize=max(1, self.feed.depth))
        if self.feed.prepare is not None:
            self._pool = ThreadPoolExecutor(max_workers=max(1, self.feed.workers), thread_name_prefix="prepare")

    def __enter__(self) -> Feeder:
        self._thread = threading.Thread(target=self._run, name="feeder", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[Batch]:
        while True:
            got = self._queue.get()
            if got is _DONE:
                return
            if isinstance(got, _Failure):
                raise got.exc
            yield got

    def _put(self, value: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _batches(self) -> Iterator[Batch]:
        feed = self.feed
        for run in schedule.groups(self.ordered, feed.group_of):
            role, has_image = feed.group_of(run[0])
            # items with images: windows read in storage order; without: windows of their text-length order
            span = (schedule.WINDOW_BATCHES if has_image else schedule.TEXT_WINDOW_BATCHES) * feed.size()
            carry: list[tuple[str, ModelInput, int]] = []  # a window's last, short batch joins the next window
            windows = list(schedule.windows(run, span))
            for w, window in enumerate(windows):
                inputs = [feed.read(k) for k in window]
                rows = carry + list(zip(window, inputs, feed.lengths(inputs, role), strict=True))
                rows.sort(key=lambda r: (r[2], r[0]))
                carry = []
                start = 0
                while start < len(rows):
                    chunk = rows[start : start + max(1, feed.size())]
                    if len(chunk) < feed.size() and w + 1 < len(windows):
                        carry = chunk
                        break
                    start += len(chunk)
                    yield Batch(role, [r[0] for r in chunk], [r[1] for r in chunk], [r[2] for r in chunk])

    def _run(self) -> None:
        try:
            for batch in self._batches():
                if self._stop.is_set():
                    return
                if self._pool is not None and self.feed.prepare is not None:
                    batch.prepared = self._pool.submit(self.feed.prepare, batch.inputs, batch.role)
                if not self._put(batch):
                    return
            self._put(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(_Failure(exc))

    def close(self) -> None:
        self._stop.set()
        while True:  # unblock the feeder; drop what it prepared
            try:
                got = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(got, Batch) and got.prepared is not None:
                got.prepared.cancel()
        if self._thread is not None:
            self._thread.join()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


class Writer:
    """Cache writes on a background thread, in order, each one a shard written atomically (`EmbeddingCache.put`).
    `close` waits for every write handed to it; a failed write is raised by the next `put` or by `close`."""

    def __init__(self, put: Callable[[Sequence[str], Any], None]) -> None:
        self._put = put
        self._queue: queue.Queue = queue.Queue(maxsize=WRITES_PENDING)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="cache-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            got = self._queue.get()
            if got is _DONE:
                return
            if self._error is None:
                try:
                    self._put(*got)
                except BaseException as exc:
                    self._error = exc

    def put(self, keys: Sequence[str], vectors: Any) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put((list(keys), vectors))

    def close(self) -> None:
        self._queue.put(_DONE)
        self._thread.join()
        if self._error is not None:
            raise self._error
