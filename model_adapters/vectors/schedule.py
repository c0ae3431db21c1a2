"""Which items go into which batch, in which order: length bucketing by token count, and the padding it saves.

A batch pads every input to its longest one, so the work of a batch is `len(batch) * max(lengths)` tokens. Sorting
the inputs by their token count (not their character count, which often disagrees with it) makes neighbours alike.
Items with images stream their images from the parquet shards in storage order (`model_adapters.planning.images`),
so they are sorted within windows of a few batches read in that order, never across the whole file; items without
images, already in text-length order, are sorted by tokens within windows of 64 batches (so the model starts after
the first window's token counts, not all of them). The batches' order changes only which inputs share a batch:
vectors are the same up to float noise (tests/models/test_encode_pipeline.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

WINDOW_BATCHES: Final = 16  # items with images: sort within windows of this many batches, read in storage order
TEXT_WINDOW_BATCHES: Final = 64  # items without: windows of this many batches of the text-length order (the first
# batch starts after 64 batches' token counts, not all of them; the windows are nearly sorted already)


@dataclass
class Padding:
    """Token counts of the encoded batches: `tokens` the inputs' own, `padded` what the batches computed."""

    tokens: int = 0
    padded: int = 0
    items: int = 0

    def add(self, lengths: Sequence[int]) -> None:
        if lengths:
            self.tokens += int(sum(lengths))
            self.padded += int(max(lengths)) * len(lengths)
            self.items += len(lengths)

    def as_dict(self) -> dict[str, float | int]:
        per_item = round(self.padded / self.items, 2) if self.items else 0.0
        return {"tokens": self.tokens, "padded_tokens": self.padded, "padded_tokens_per_item": per_item}


def padded_tokens(lengths: Sequence[int], batch_size: int) -> int:
    """Tokens computed when `lengths`, in this order, are cut into batches of `batch_size`.

    >>> padded_tokens([1, 9, 1, 9], 2), padded_tokens([1, 1, 9, 9], 2)
    (36, 20)
    """
    return sum(
        max(lengths[i : i + batch_size]) * len(lengths[i : i + batch_size]) for i in range(0, len(lengths), batch_size)
    )


def windows(keys: Sequence[str], size: int) -> Iterator[list[str]]:
    """Consecutive windows of `size` keys (the last one shorter).

    >>> list(windows(["a", "b", "c"], 2))
    [['a', 'b'], ['c']]
    """
    for start in range(0, len(keys), max(1, size)):
        yield list(keys[start : start + max(1, size)])


def groups(ordered: Sequence[str], group_of: Callable[[str], object]) -> Iterator[list[str]]:
    """Runs of consecutive keys with the same group (role, with/without image).

    >>> [g for g in groups(["q1", "q2", "c1"], lambda k: k[0])]
    [['q1', 'q2'], ['c1']]
    """
    run: list[str] = []
    current: object = None
    for key in ordered:
        g = group_of(key)
        if run and g != current:
            yield run
            run = []
        current = g
        run.append(key)
    if run:
        yield run
