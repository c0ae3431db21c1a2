"""Multi-process runs through accelerate (`accelerate launch --multi_gpu … -m triad_cli run …`), torchrun, mpirun.

Each process encodes a deterministic shard of the distinct items that are not cached (`shard`), the vectors are
gathered on rank 0, and only rank 0 ranks, scores and writes. On machines without CUDA the process group uses
gloo (`PartialState(cpu=True)`); the group is destroyed when the run ends. A launch that asked for several
processes but started only this one (`accelerate launch --cpu --num_processes 2`) is refused (`check_launch`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from triad_dataset.contract.errors import TriadError

T = TypeVar("T")

# where launchers put the number of processes: torchrun / accelerate, then MPI (accelerate's own list)
SIZE_VARS = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")

WORKING_FORMS = (
    "`accelerate launch --multi_gpu --num_processes N -m triad_cli run ...` (gloo on CPU without a GPU; "
    "--device cpu on a GPU machine) or `torchrun --standalone --nproc_per_node N -m triad_cli run ...`"
)


def launched_world() -> int:
    """The number of processes the launcher says it started (the first of `SIZE_VARS` set), 1 when none."""
    for name in SIZE_VARS:
        value = os.environ.get(name, "").strip()
        if value:
            if not value.isdigit():
                raise TriadError(f"${name} must be a number of processes, got {value!r}")
            return int(value)
    return 1


def launched_distributed() -> bool:
    """True when started by torchrun / accelerate launch / mpirun with more than one process."""
    return launched_world() > 1


def check_launch() -> None:
    """Refuse a run that a launcher asked to be several processes but started alone.

    accelerate's single-process launcher (`accelerate launch --cpu`, or without `--multi_gpu` on fewer than two
    GPUs) starts one process whatever `--num_processes` says; it sets MASTER_ADDR only when several were asked for.
    """
    if launched_distributed() or "ACCELERATE_USE_CPU" not in os.environ or "MASTER_ADDR" not in os.environ:
        return
    cpu = os.environ["ACCELERATE_USE_CPU"].strip().lower() in ("1", "true", "yes")
    form = "accelerate launch --cpu" if cpu else "accelerate launch without --multi_gpu"
    raise TriadError(
        f"several processes were asked for but this is the only one ({form} starts one process whatever "
        f"--num_processes says); for N processes use {WORKING_FORMS}"
    )


def shard(items: Sequence[T], rank: int, world: int) -> list[T]:
    """Round-robin shard of `items` for process `rank` of `world`.

    >>> shard(list("abcde"), 1, 2)
    ['b', 'd']
    """
    return list(items[rank::world])


def split(items: Sequence[T], rank: int, world: int) -> list[T]:
    """Contiguous slice of `items` for process `rank` of `world` (sizes differ by at most one).

    >>> split(list("abcde"), 0, 2), split(list("abcde"), 1, 2)
    (['a', 'b', 'c'], ['d', 'e'])
    """
    base, extra = divmod(len(items), world)
    start = rank * base + min(rank, extra)
    return list(items[start : start + base + (rank < extra)])


@dataclass
class Context:
    rank: int = 0
    world: int = 1
    requested_device: str | None = None  # None: CUDA when available, decided on first use of `device`
    state: Any = None

    @property
    def device(self) -> str:
        """The device to load models on; importing torch to ask for CUDA is deferred until a model is loaded
        (a cached re-run never imports torch)."""
        if self.requested_device is None:
            self.requested_device = default_device()
        return self.requested_device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.world > 1:
            import torch.distributed as dist

            dist.barrier()

    def gather(self, obj: Any) -> list[Any] | None:
        """Every process's `obj` on rank 0 (in rank order); None elsewhere."""
        if self.world == 1:
            return [obj]
        import torch.distributed as dist

        out: list[Any] | None = [None] * self.world if self.is_main else None
        dist.gather_object(obj, out, dst=0)
        return out

    def broadcast(self, obj: Any) -> Any:
        """Rank 0's `obj` on every process."""
        if self.world == 1:
            return obj
        import torch.distributed as dist

        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def close(self) -> None:
        if self.world > 1:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()


def init(device: str | None = None) -> Context:
    """One process (plain run) or the launched group: CUDA + NCCL when available, else CPU + gloo.

    Raises:
        TriadError: a launcher asked for several processes and started only this one (`check_launch`).
    """
    check_launch()
    if not launched_distributed():
        return Context(requested_device=device)
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available() or device == "cpu")
    return Context(rank=state.process_index, world=state.num_processes, requested_device=str(state.device), state=state)


def default_device() -> str:
    """ "cuda" where torch sees a GPU, else "cpu" (also when torch is not installed)."""
    try:
        import torch
    except ImportError:
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"
