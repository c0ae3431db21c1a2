"""VLM2Vec-V2: our adapter against VLM2Vec's own encoding path on a tiny random Qwen2-VL.

tests/fixtures/vlm2vec/official.json was produced by the authors' code (TIGER-AI-Lab/VLM2Vec @ 6e1e1d4:
`process_input_text`, `Qwen2_VL_process_fn`, `MMEBModel` pooling="last", normalize=True; NOTE.md beside it) on the
model `tiny.save_tiny_qwen2_vl` writes. Required: identical token ids, cosine >= 0.9999 per vector.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families.vlm import VLM2VecEncoder, vlm2vec_text
from model_adapters.mocks import tiny
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs

FIXTURE = Path(__file__).parent / "fixtures" / "vlm2vec" / "official.json"


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads(FIXTURE.read_text())


def encoder() -> VLM2VecEncoder:
    assert type(tiny.tiny_qwen2_vl(0)[0]).__name__ == "Qwen2VLForConditionalGeneration"  # VLM2Vec-V2's backbone
    enc = load_encoder(get_entry("tiny-random-vlm2vec"))
    assert isinstance(enc, VLM2VecEncoder)
    return enc


def test_prompt_text_is_the_authors(official):
    batch = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in reference_inputs.VLM2VEC_INPUTS]
    assert [vlm2vec_text(item) for item in batch] == official["texts"]


@pytest.mark.slow
def test_token_ids_and_vectors_match_vlm2vec(official):
    enc = encoder()
    batch = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in reference_inputs.VLM2VEC_INPUTS]
    inputs = enc.tokenize(batch)
    ids = [
        [int(t) for t, m in zip(row, mask, strict=True) if m]
        for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
    ]
    assert ids == official["input_ids"]
    got = enc.encode_queries(batch)
    ref = np.array(official["vectors"])
    cos = (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.9999, cos


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="neither text nor image"):
        encoder().encode_queries([ModelInput("", None, None)])


# --- VLM2Vec-V1 (TIGER-Lab/VLM2Vec-Qwen2VL-2B / -7B) --------------------------------------------------------------
V1_FIXTURE = Path(__file__).parent / "fixtures" / "vlm2vec_v1" / "official.json"


@pytest.fixture(scope="module")
def v1_official() -> dict:
    return json.loads(V1_FIXTURE.read_text())


@pytest.fixture(scope="module")
def v1_encoder(tmp_path_factory) -> VLM2VecEncoder:
    """The vlm2vec-v1-2b entry's own loader on the tiny Qwen2-VL folder. Its option requires=["peft"] is dropped:
    the tiny folder has no LoRA adapter, and peft is not installed on the build machine."""
    from dataclasses import replace

    folder = tiny.save_tiny_qwen2_vl(str(tmp_path_factory.mktemp("v1") / "tiny-qwen2-vl"))
    entry = get_entry("vlm2vec-v1-2b")
    entry = replace(
        entry, recipe=replace(entry.recipe, options={k: v for k, v in entry.options.items() if k != "requires"})
    )
    enc = load_encoder(entry, model_path=folder, dtype="float32")
    assert isinstance(enc, VLM2VecEncoder) and enc.image_resolution == (1344, 1344)
    return enc


def v1_batches(v1_official: dict) -> list[list[ModelInput]]:
    assert v1_official["batches"] == reference_inputs.VLM2VEC_V1_BATCHES
    items = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in reference_inputs.VLM2VEC_INPUTS]
    return [[items[n] for n in batch] for batch in reference_inputs.VLM2VEC_V1_BATCHES]


@pytest.mark.slow
def test_v1_token_ids_grids_and_vectors_match_vlm2vec(v1_official, v1_encoder):
    ids, grids, vectors = [], [], []
    for batch in v1_batches(v1_official):
        inputs = v1_encoder.tokenize(batch)
        ids += [
            [int(t) for t, m in zip(row, mask, strict=True) if m]
            for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
        ]
        grids += inputs["image_grid_thw"].tolist() if "image_grid_thw" in inputs else []
        vectors.append(v1_encoder.encode_queries(batch))
    assert ids == v1_official["input_ids"]
    assert grids == v1_official["image_grid_thw"] == [[1, 70, 70]] * 5  # 1344x1344 -> 980x980 within 28²·1280
    got, ref = np.concatenate(vectors), np.array(v1_official["vectors"])
    cos = (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.9999, cos


@pytest.mark.slow
def test_v1_without_its_resolution_rule_is_caught(v1_official, v1_encoder):
    """The V2 image handling (no 1344x1344 resize) on a V1 checkpoint gives other image grids."""
    v1_encoder.image_resolution = None
    try:
        inputs = v1_encoder.tokenize(v1_batches(v1_official)[0])
    finally:
        v1_encoder.image_resolution = (1344, 1344)
    assert inputs["image_grid_thw"].tolist() != v1_official["image_grid_thw"][:1]
