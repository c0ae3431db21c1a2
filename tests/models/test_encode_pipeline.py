"""The overlapped encode pipeline: token-count bucketing, batches prepared ahead, vectors unchanged by
order and batching, the cache writer, out-of-memory and growth, failures in the background threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from model_adapters.families.common import PerThread
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.planning.plan import Item
from model_adapters.protocol import ModelInput, StagedEncoder
from model_adapters.vectors import schedule
from model_adapters.vectors.cache import EmbeddingCache
from model_adapters.vectors.encoding import encode_items
from tests.doubles.folders import png
from triad_dataset.contract.errors import TriadError

WORDS = (
    "red",
    "blue",
    "leather",
    "cotton",
    "sleeve",
    "collar",
    "wheel",
    "sedan",
    "coupe",
    "vintage",
    "modern",
    "small",
    "large",
)


def _inputs(n: int, images: bool) -> dict[str, Item]:
    out = {}
    for i in range(n):
        text = " ".join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(1 + (i * 7) % 11))
        image = png(((i * 40) % 256, (i * 90) % 256, (i * 20) % 256), 16 + 8 * (i % 3)) if images else None
        out[f"k{i:03d}"] = Item("candidate", ModelInput(text, image), f"item {i}")
    return out


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize(("name", "images"), [("minilm", False), ("tiny-random-clip", True), ("tiny-random-vlm", True)])
def test_bucketed_batches_give_the_vectors_of_each_input_alone_and_of_another_order(name, images):
    encoder = load_encoder(get_entry(name))
    assert isinstance(encoder, StagedEncoder)
    items = _inputs(13, images)
    keys = list(items)
    got, stats = encode_items(encoder, keys, items, model=name, batch_size=4, cache=None, show_progress=False)
    assert stats.order == "token count" and stats.prepared_ahead >= 1 and stats.encoded == 13
    reordered = keys[::-1]  # one batch, the reverse order
    other = encoder.encode_candidates([items[k].model_input for k in reordered])
    alone = np.stack([encoder.encode_candidates([items[k].model_input])[0] for k in keys])
    mine = np.stack([got[k] for k in keys])
    assert _cosines(mine, np.stack([other[reordered.index(k)] for k in keys])).min() >= 0.99999
    assert _cosines(mine, alone).min() >= 0.99999


def test_the_two_steps_are_what_sentence_transformers_encodes(tmp_path):
    """prepare + forward equal SentenceTransformer.encode_query / encode_document (prompts and task resolved as
    those methods resolve them), here on minilm with query and passage prompts added to its config."""
    import json
    import shutil

    from model_adapters.models.registry import resolve_path
    from model_adapters.models.resolve import from_name

    folder = tmp_path / "prompted"
    shutil.copytree(resolve_path(get_entry("minilm")), folder)
    conf_path = folder / "config_sentence_transformers.json"
    conf = json.loads(conf_path.read_text()) if conf_path.exists() else {}
    conf["prompts"] = {"query": "query: ", "passage": "passage: "}
    conf_path.write_text(json.dumps(conf))
    enc = from_name(str(folder)).load("cpu", "float32")
    batch = [ModelInput("a red leather jacket", None, "Find the product."), ModelInput("sedan " * 300)]
    texts = ["Find the product. a red leather jacket", "sedan " * 300]
    q_ref = enc.model.encode_query(texts, convert_to_numpy=True)
    # the config's "passage" prompt, given explicitly: sentence-transformers 6 adds an empty "document" prompt that
    # encode_document would pick first (families/sentence_transformer.document_prompt)
    d_ref = enc.model.encode_document(texts, prompt="passage: ", convert_to_numpy=True)
    assert np.abs(enc.encode_queries(batch) - q_ref).max() < 1e-6
    assert np.abs(enc.encode_candidates(batch) - d_ref).max() < 1e-6
    tok = enc.model.tokenizer
    assert enc.input_lengths(batch, "query") == [len(tok("query: " + texts[0])["input_ids"]), 256]


class Staged:
    """A staged fake: vectors from the text, token counts given, forward failures on demand."""

    dim = 4

    def __init__(
        self,
        lengths: dict[str, int] | None = None,
        fail_at: int | None = None,
        oom_above: int = 10**9,
        prepare_error: str | None = None,
    ) -> None:
        self.lengths, self.fail_at, self.oom_above = lengths or {}, fail_at, oom_above
        self.prepare_error = prepare_error
        self.forwards: list[int] = []
        self.prepare_threads: set[str] = set()

    def input_lengths(self, batch, role):
        return [self.lengths.get(m.text, len(m.text)) for m in batch]

    def prepare(self, batch, role):
        self.prepare_threads.add(threading.current_thread().name)
        if self.prepare_error and any(m.text == self.prepare_error for m in batch):
            raise RuntimeError("tokenizer exploded")
        return [m.text for m in batch]

    def forward(self, prepared, role):
        if len(prepared) > self.oom_above:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.forwards.append(len(prepared))
        if self.fail_at is not None and len(self.forwards) == self.fail_at:
            raise KeyError("boom")
        return np.array([[len(t), 1.0, 0.0, float(sum(map(ord, t)) % 7)] for t in prepared], dtype=np.float32)

    def encode_queries(self, batch):
        return self.forward(self.prepare(batch, "query"), "query")

    def encode_candidates(self, batch):
        return self.forward(self.prepare(batch, "candidate"), "candidate")


def _text_items(texts: list[str]) -> dict[str, Item]:
    return {f"k{i:02d}": Item("candidate", ModelInput(t), f"item {i}") for i, t in enumerate(texts)}


def test_batches_are_cut_by_token_count_and_the_padding_is_counted():
    # character length and token count disagree: by characters the batches would be [a, bb] [ccc, dddd]
    texts = ["a", "bb", "ccc", "dddd"]
    enc = Staged(lengths={"a": 9, "bb": 1, "ccc": 8, "dddd": 2})
    got, stats = encode_items(
        enc, list(_text_items(texts)), _text_items(texts), model="fake", batch_size=2, cache=None, show_progress=False
    )
    assert len(got) == 4 and stats.order == "token count"
    # by tokens: [bb(1), dddd(2)] [ccc(8), a(9)]: 2*2 + 2*9 = 22 padded tokens for 20 own ones
    assert stats.summary()["tokens"] == 20 and stats.summary()["padded_tokens"] == 22
    assert schedule.padded_tokens([9, 1, 8, 2], 2) == 34  # the character order's batches
    assert got["k00"][0] == 1.0 and got["k03"][0] == 4.0  # each vector under its own key


def test_an_interrupted_run_has_every_finished_batch_in_the_cache(tmp_path):
    texts = [f"text {i:02d}" for i in range(10)]
    items = _text_items(texts)
    cache = EmbeddingCache(tmp_path / "cache", {"name": "fake"})
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(KeyError, match="boom"):
        encode_items(
            Staged(fail_at=3), list(items), items, model="fake", batch_size=2, cache=cache, show_progress=False
        )
    reopened = EmbeddingCache(tmp_path / "cache", {"name": "fake"})
    reopened.load()
    found, missing = reopened.lookup(list(items))
    assert len(found) == 4 and len(missing) == 6  # batches 1 and 2 written; 3 failed; nothing after it
    assert {t.name for t in threading.enumerate()} <= before  # feeder, preparers and writer are gone


def test_out_of_memory_halves_and_growth_stops_there():
    items = _text_items([f"t{i:03d}" for i in range(200)])
    enc = Staged(oom_above=8)
    logs: list[str] = []
    got, stats = encode_items(
        enc, list(items), items, model="fake", batch_size=2, cache=None, show_progress=False, grow=True, log=logs.append
    )
    assert len(got) == 200 and stats.batch_halvings == 1
    # 2 → 4 → 8 (doubling after 4 batches at a size; the feeder cuts a few batches ahead at the size it saw),
    # then 16 does not fit → 8, and it stays there
    body = enc.forwards[:-1]  # the last batch holds what is left
    assert body[:4] == [2] * 4 and body == sorted(body) and max(enc.forwards) == 8 and sum(enc.forwards) == 200
    assert stats.batch_size == {"start": 2, "final": 8, "largest": 16, "grew": True}
    assert logs == ["out of memory on a batch of 16: retrying with batch size 8"]


def test_no_growth_without_permission_and_a_single_input_that_does_not_fit_is_named():
    items = _text_items([f"t{i}" for i in range(12)])
    enc = Staged()
    _, stats = encode_items(enc, list(items), items, model="fake", batch_size=3, cache=None, show_progress=False)
    assert set(enc.forwards) == {3} and stats.batch_size["grew"] is False
    with pytest.raises(TriadError, match=r"out of memory on a single input \(item"):
        encode_items(
            Staged(oom_above=0),
            list(items),
            items,
            model="fake",
            batch_size=2,
            cache=None,
            show_progress=False,
            log=lambda m: None,
        )


def test_a_failure_while_preparing_ahead_reaches_the_caller_and_stops_every_thread():
    items = _text_items([f"t{i:02d}" for i in range(40)])
    before = {t.name for t in threading.enumerate()}
    enc = Staged(prepare_error="t17")
    with pytest.raises(RuntimeError, match="tokenizer exploded"):
        encode_items(enc, list(items), items, model="fake", batch_size=4, cache=None, show_progress=False, workers=2)
    assert any(name.startswith("prepare") for name in enc.prepare_threads)  # prepared off the main thread
    assert {t.name for t in threading.enumerate()} <= before


def test_a_failure_while_reading_an_item_reaches_the_caller():
    class Broken(dict):
        def __getitem__(self, key):
            if key == "k05":
                raise TriadError("cars_items item car005: shard unreadable")
            return super().__getitem__(key)

    items = Broken(_text_items([f"t{i:02d}" for i in range(12)]))
    with pytest.raises(TriadError, match="car005: shard unreadable"):
        encode_items(Staged(), list(items), items, model="fake", batch_size=4, cache=None, show_progress=False)


def test_each_thread_gets_its_own_copy():
    shared = PerThread({"tokenizer": [1, 2]})
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(shared.get())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.get() is shared._obj and seen[0] is not seen[1] and seen[0] == shared._obj
    assert all(s is not shared._obj for s in seen)
