"""Embedding cache: hit, miss on change, corruption detected and rebuilt, resume, another model refused."""

from __future__ import annotations

import numpy as np
import pytest

from model_adapters.planning import inputs
from model_adapters.planning.plan import Item
from model_adapters.protocol import ModelInput
from model_adapters.vectors.cache import EmbeddingCache, model_key
from model_adapters.vectors.encoding import encode_items
from triad_dataset.contract.errors import TriadError

IDENT = {"name": "fake", "model_id": "fake/fake", "revision": "r1", "dtype": "float32", "adapter_version": "1"}


class CountingEncoder:
    """Deterministic vectors from the input text; counts every input it sees; can fail after N batches."""

    def __init__(self, dim: int = 4, fail_after: int | None = None) -> None:
        self.dim, self.seen, self.calls, self.fail_after = dim, [], 0, fail_after

    def _vec(self, item: ModelInput) -> np.ndarray:
        rng = np.random.default_rng(abs(hash(item.text)) % 2**32)
        return rng.standard_normal(self.dim).astype(np.float32)

    def encode_queries(self, batch):
        return self.encode_candidates(batch)

    def encode_candidates(self, batch):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt
        self.calls += 1
        self.seen.extend(b.text for b in batch)
        return np.stack([self._vec(b) for b in batch])


def _items(texts):
    items = {}
    for t in texts:
        m = ModelInput(t)
        items[inputs.input_key(inputs.CANDIDATE, m)] = Item(inputs.CANDIDATE, m, f"item {t}")
    return items


def _encode(cache, items, enc, batch_size=2):
    found, missing = cache.lookup(items)
    vecs, _ = encode_items(enc, missing, items, model="fake", batch_size=batch_size, cache=cache, show_progress=False)
    return {**found, **vecs}, missing


def test_hit_and_miss_on_change(tmp_path):
    items = _items(["a", "b", "c"])
    enc = CountingEncoder()
    first, missing = _encode(EmbeddingCache(tmp_path, IDENT), items, enc)
    assert len(missing) == 3 and sorted(enc.seen) == ["a", "b", "c"]
    cache = EmbeddingCache(tmp_path, IDENT)
    assert cache.load() == 3
    enc2 = CountingEncoder()
    again, missing = _encode(cache, items, enc2)
    assert missing == [] and enc2.seen == []
    for k in items:
        np.testing.assert_array_equal(first[k], again[k])
    changed = _items(["a", "b", "c-changed"])
    enc3 = CountingEncoder()
    _, missing = _encode(cache, changed, enc3)
    assert enc3.seen == ["c-changed"] and len(missing) == 1


def test_corrupted_shard_is_detected_and_rebuilt(tmp_path):
    items = _items(["a", "b", "c", "d"])
    _encode(EmbeddingCache(tmp_path, IDENT), items, CountingEncoder(), batch_size=2)
    shards = sorted((tmp_path / model_key(IDENT) / "shards").glob("*.npz"))
    assert len(shards) == 2
    data = bytearray(shards[0].read_bytes())
    data[-10] ^= 0xFF  # flip one byte
    shards[0].write_bytes(bytes(data))
    cache = EmbeddingCache(tmp_path, IDENT)
    assert cache.load() == 2
    assert cache.stats.corrupted_shards == [shards[0].name] and not shards[0].exists()
    enc = CountingEncoder()
    _encode(cache, items, enc)
    assert len(enc.seen) == 2  # only the lost shard's items are re-encoded
    assert EmbeddingCache(tmp_path, IDENT).load() == 4


def test_interrupted_run_resumes(tmp_path):
    items = _items([f"t{i}" for i in range(10)])
    with pytest.raises(KeyboardInterrupt):
        _encode(EmbeddingCache(tmp_path, IDENT), items, CountingEncoder(fail_after=3), batch_size=2)
    cache = EmbeddingCache(tmp_path, IDENT)
    assert cache.load() == 6  # three finished batches of two were kept
    enc = CountingEncoder()
    _encode(cache, items, enc)
    assert len(enc.seen) == 4


def test_cache_of_another_model_is_refused(tmp_path):
    items = _items(["a"])
    _encode(EmbeddingCache(tmp_path, IDENT), items, CountingEncoder())
    other = {**IDENT, "revision": "r2"}
    assert model_key(other) != model_key(IDENT)
    fresh = EmbeddingCache(tmp_path, other)  # a different model gets its own folder under the same root
    assert fresh.load() == 0
    with pytest.raises(TriadError, match="written by another model"):
        EmbeddingCache(tmp_path / model_key(IDENT), other)  # pointing at the first model's folder directly


def test_wrong_dimension_is_not_mixed_in(tmp_path):
    cache = EmbeddingCache(tmp_path, IDENT)
    cache.put(["k" * 64], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="dimension 5"):
        cache.put(["j" * 64], np.ones((1, 5), dtype=np.float32))


def test_compaction_keeps_every_vector(tmp_path, monkeypatch):
    import model_adapters.vectors.cache as cache_mod

    monkeypatch.setattr(cache_mod, "COMPACT_ABOVE", 2)
    items = _items([f"t{i}" for i in range(8)])
    cache = EmbeddingCache(tmp_path, IDENT)
    vecs, _ = _encode(cache, items, CountingEncoder(), batch_size=2)
    cache.compact()
    shards = list((tmp_path / model_key(IDENT) / "shards").glob("*.npz"))
    assert len(shards) == 1
    again = EmbeddingCache(tmp_path, IDENT)
    assert again.load() == 8
    found, _ = again.lookup(items)
    for k in items:
        np.testing.assert_array_equal(found[k], vecs[k])


def test_registry_options_are_part_of_the_cache_identity():
    """Changing what a model sees through its entry options (e.g. max_length) must not reuse cached vectors."""
    from dataclasses import replace

    from model_adapters.models.registry import get_entry
    from model_adapters.models.resolve import from_name

    ident = from_name("clip-vit-b32").identity
    shorter = replace(ident, options={**ident.options, "max_length": 32})
    assert ident.options == get_entry("clip-vit-b32").options
    assert ident.cache_key() == model_key(ident.cache_fields()) != shorter.cache_key()
