"""UME-R1's tail rule against the authors' eval code: a `<disc_emb>` among the last two positions is not pooled.

tests/fixtures/ume_r1_tail/official.json was produced by the authors' `get_disc_embedding_idx` / "disc" branch of
`encode_embeddings` (NOTE.md beside it: repository, commit, command, substitutions) on the tiny UME-R1 checkpoint
with the chat templates of tests/ume_r1_tail.py, which put the marker last, second to last, third to last, or (in
one batch) second or third to last. Our side loads each folder through the real `ume-r1-2b-disc` entry. Required:
identical attended token ids and image grids, the same pooled positions, and 1 - cos <= 1e-6 per vector; a recipe
with another tail length must fall outside that bound.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families import qwen_chat
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.ume_r1_tail import TAIL_TEMPLATES, save_tail_checkpoint

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ume_r1_tail" / "official.json"
MAX_ONE_MINUS_COS = 1e-6
# section -> rows whose marker the eval pools (the rest fall back to the last position)
POOLED_ROWS = {
    "last": (),
    "second_to_last": (),
    "third_to_last": tuple(range(len(reference_inputs.EMBED_INPUTS))),
    "mixed": (
        len(reference_inputs.EMBED_INPUTS) - 1,
    ),  # the input with neither text nor image: no image, so "<|im_end|>" follows
}


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("ume-r1-tail")
    return {name: save_tail_checkpoint(name, str(root / name)) for name in TAIL_TEMPLATES}


def encoder(folder: str) -> qwen_chat.QwenChatEmbedder:
    enc = load_encoder(get_entry("ume-r1-2b-disc"), model_path=folder, dtype="float32")
    assert isinstance(enc, qwen_chat.QwenChatEmbedder)
    return enc


def batch() -> list[ModelInput]:
    return [
        ModelInput(text, reference_inputs.image(kind) if kind else None, instr)
        for text, kind, instr in reference_inputs.EMBED_INPUTS
    ]


def attended_ids(inputs: dict) -> list[list[int]]:
    return [
        [int(t) for t, m in zip(row, mask, strict=True) if m]
        for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
    ]


def one_minus_cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1 - (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_the_fixture_covers_the_sections_and_exercises_the_rule(official):
    assert set(official["sections"]) == set(TAIL_TEMPLATES) == set(POOLED_ROWS)
    for name, ref in official["sections"].items():
        assert ref["template"] == TAIL_TEMPLATES[name], name
        length = ref["padded_length"]
        for row, idx in enumerate(ref["embedding_idx"]):
            expected = length - 3 if row in POOLED_ROWS[name] else -1
            assert idx == expected, (name, row, idx)


def test_tiny_checkpoint_is_the_one_the_fixture_was_made_with(official, folders):
    model = encoder(folders["last"]).model  # the backbone (the eval's `model.model`), LM head excluded
    total = float(sum(p.detach().double().sum() for p in model.parameters()))
    assert total == pytest.approx(official["weights_sum"], rel=1e-9, abs=1e-9)
    assert encoder(folders["last"]).pool_token_id == official["disc_emb_id"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TAIL_TEMPLATES))
def test_token_ids_positions_and_vectors_match_the_authors_code(name, official, folders):
    ref, enc = official["sections"][name], encoder(folders[name])
    inputs = enc.tokenize(batch())
    assert attended_ids(inputs) == ref["input_ids"]
    assert inputs["input_ids"].shape[1] == ref["padded_length"]
    assert inputs["image_grid_thw"].tolist() == ref["image_grid_thw"]
    where = qwen_chat.pool_positions(enc.opts, inputs["input_ids"], inputs["attention_mask"], enc.pool_token_id)
    assert where.tolist() == [i if i >= 0 else ref["padded_length"] - 1 for i in ref["embedding_idx"]]
    gap = one_minus_cos(enc.encode(batch()), np.array(ref["vectors"]))
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
@pytest.mark.parametrize(("name", "tail"), [("second_to_last", 0), ("mixed", 0), ("third_to_last", 3)])
def test_another_tail_length_is_caught(name, tail, official, folders):
    """The comparison can fail: pooling the marker wherever it is (tail 0), or also when third to last (tail 3)."""
    enc = encoder(folders[name])
    enc.opts = dataclasses.replace(enc.opts, pool_tail=tail)
    gap = one_minus_cos(enc.encode(batch()), np.array(official["sections"][name]["vectors"]))
    assert gap.max() > MAX_ONE_MINUS_COS, gap
