"""Encode the feeder's batches with single-threaded worker processes on the CPU (`encode_items`' `processes`, opt-in).

N processes with one intra-op thread each never wait at a barrier between threads, which spin or sleep while
another job holds a shared core; one process whose idle threads sleep does about as well, so workers are opt-in
(DEFAULT). The workers are forked once the model is loaded, so they share its weights and import nothing; each sets
torch's threads to one and calls the encoder's `single_threaded()` (an ONNX encoder opens its own one-thread session
there); only encoders that have it get workers. The batches are the feeder's, unchanged: the same inputs share a
batch as in one process, and the parent hands each batch's vectors to the cache writer in the feeder's order.

A batch whose worker fails (an image that does not decode, any error) is encoded again in the parent, whose rules
(skip or refuse, one line) apply as without workers.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

import numpy as np

from model_adapters.protocol import ModelInput, StagedEncoder

DEFAULT: Final = 1  # workers are opt-in: on 2 shared cores they cost 2-4 % more CPU than one process whose idle
# threads sleep (OMP_WAIT_POLICY=PASSIVE, ONNX Runtime without spinning); docs/benchmarks.md "Encoding on the CPU"
AHEAD: Final = 2  # batches handed to each worker before the parent waits for the oldest one
_ENCODER: list[Any] = []  # the encoder the forked workers inherit (set just before the fork)


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def processes_for(encoder: Any, device: str | None, requested: int | None) -> int:
    """Processes that run `encoder` on `device`: `requested` (default 1: the encode loop in this process, the faster
    choice measured, docs/benchmarks.md) on a CPU for a staged encoder that can run single-threaded
    (`single_threaded()`); 1 for any other encoder or device."""
    import multiprocessing

    cpu = not str(device or "cpu").startswith("cuda")
    fork = "fork" in multiprocessing.get_all_start_methods()
    able = isinstance(encoder, StagedEncoder) and callable(getattr(encoder, "single_threaded", None))
    return max(1, requested or DEFAULT) if cpu and fork and able else 1


def _single_threaded() -> None:
    """In a fresh worker: one intra-op thread for torch and for the encoder's own runtime."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    _ENCODER[0] = _ENCODER[0].single_threaded()


def _encode(job: tuple[str, list[ModelInput]]) -> np.ndarray | None:
    """One batch's float32 vectors in a worker, or None when it failed (the parent encodes it again)."""
    role, batch = job
    encoder = _ENCODER[0]
    try:
        out = encoder.forward(encoder.prepare(batch, role), role)
        if hasattr(out, "detach"):  # a torch tensor
            out = out.detach().float().cpu().numpy()
        return np.asarray(out, dtype=np.float32)
    except Exception:
        return None


class WorkerPool:
    """`processes` forked workers holding `encoder`; `map` encodes batches in order, AHEAD per worker in flight."""

    def __init__(self, encoder: Any, processes: int) -> None:
        import multiprocessing

        _ENCODER[:] = [encoder]
        self.size = processes
        self._pool = multiprocessing.get_context("fork").Pool(processes, initializer=_single_threaded)

    def map(self, batches: Iterable[Any], job: Callable[[Any], tuple[str, Sequence[ModelInput]]]) -> Iterator[Any]:
        """(batch, vectors or None) for each batch, in the order given."""
        pending: deque[tuple[Any, Any]] = deque()
        for batch in batches:
            pending.append((batch, self._pool.apply_async(_encode, (job(batch),))))
            if len(pending) >= AHEAD * self.size:
                batch, result = pending.popleft()
                yield batch, result.get()
        while pending:
            batch, result = pending.popleft()
            yield batch, result.get()

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()
        _ENCODER.clear()
