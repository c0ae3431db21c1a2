"""Single-threaded worker processes (`vectors.workers`): the vectors of the one-process loop, batch for batch; a
batch a worker fails is encoded in the parent; encoders without `single_threaded()` stay in one process."""

from __future__ import annotations

import os

import numpy as np
import pytest

from model_adapters.planning.plan import Item
from model_adapters.protocol import ModelInput
from model_adapters.vectors import workers
from model_adapters.vectors.encoding import encode_items

WORDS = ["red", "leather", "jacket", "vintage", "sedan", "cotton", "sleeve", "small", "wheel", "modern", "blue"]


def items(n: int) -> dict[str, Item]:
    """`n` candidate texts of 1 to 40 words (so the batches differ in length)."""
    texts = [" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(1 + i % 40)) for i in range(n)]
    return {f"k{i:04d}": Item("candidate", ModelInput(t, None), f"item {i}") for i, t in enumerate(texts)}


class HashEncoder:
    """A staged encoder whose vector depends on the text only; in a worker it fails every batch holding `fail_on`."""

    dim = 8
    prepare_threads = 1

    def __init__(self, fail_on: str = "", parent: int = 0) -> None:
        self.fail_on, self.parent, self.threads = fail_on, parent, 2

    def single_threaded(self) -> HashEncoder:
        self.threads = 1
        return self

    def input_lengths(self, batch, role):
        return [len(m.text.split()) for m in batch]

    def prepare(self, batch, role):
        if os.getpid() != self.parent and any(m.text == self.fail_on for m in batch):
            raise ValueError("fails in a worker")
        return [m.text for m in batch]

    def forward(self, prepared, role):
        rows = [np.random.default_rng(sum(t.encode())).standard_normal(self.dim) for t in prepared]
        return np.asarray(rows, dtype=np.float32)

    def encode_queries(self, batch):
        return self.forward(self.prepare(batch, "query"), "query")

    encode_candidates = encode_queries


def encode(encoder, table, processes):
    return encode_items(
        encoder, list(table), table, model="m", batch_size=8, cache=None, show_progress=False, processes=processes
    )


def test_workers_give_the_one_process_vectors_and_a_failed_batch_is_encoded_here():
    table = items(100)
    want, one = encode(HashEncoder(), table, 1)
    encoder = HashEncoder(fail_on=table["k0042"].model_input.text, parent=os.getpid())
    got, two = encode(encoder, table, 2)
    assert (one.processes, two.processes) == (1, 2) and one.batches == two.batches == 13
    assert two.padding.as_dict() == one.padding.as_dict()
    assert all(np.array_equal(got[k], want[k]) for k in table)
    assert encoder.threads == 2  # the parent's encoder was never switched to one thread


def test_an_encoder_without_single_threaded_runs_in_one_process():
    class Plain(HashEncoder):
        single_threaded = None  # type: ignore[assignment]

    assert workers.processes_for(Plain(), "cpu", 2) == 1
    assert workers.processes_for(HashEncoder(), "cpu", 2) == 2
    assert workers.processes_for(HashEncoder(), "cuda", 2) == 1
    assert workers.processes_for(HashEncoder(), "cpu", None) == workers.DEFAULT == 1
    assert encode(Plain(), items(20), 2)[1].processes == 1


@pytest.mark.slow
def test_minilm_in_single_threaded_workers_gives_the_vectors_of_one_process_with_threads():
    from model_adapters.models.registry import get_entry, load_encoder

    minilm = load_encoder(get_entry("minilm"), dtype="float32")
    table = items(160)
    want, _ = encode(minilm, table, 1)
    got, stats = encode(minilm, table, 2)
    a, b = (np.stack([v[k] for k in table]).astype(np.float64) for v in (want, got))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert stats.processes == 2 and float((1 - cos).max()) <= 1e-6
