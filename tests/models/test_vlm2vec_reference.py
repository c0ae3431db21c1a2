"""VLM2Vec-V2: our adapter against VLM2Vec's own encoding path on a tiny random Qwen2-VL.

tests/fixtures/vlm2vec/official.json was produced by the authors' code (TIGER-AI-Lab/VLM2Vec @ 6e1e1d4:
`process_input_text`, `Qwen2_VL_process_fn`, `MMEBModel` pooling="last", normalize=True, their vendored Qwen2-VL
with its own RoPE index; NOTE.md beside it) on the model `tiny.save_tiny_qwen2_vl` writes (weights of std 0.2, so a
wrong position, mask or pooling rule shows). Required: identical token ids, 1 - cos <= 1e-6 per vector; each
mutation of a position, mask or pooling rule must fail that bound.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families.common import l2_normalize_rows, to_device
from model_adapters.families.vlm import VLM2VecEncoder, last_attended_vectors, vlm2vec_text
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny

FIXTURE = Path(__file__).parents[1] / "fixtures" / "vlm2vec" / "official.json"
MAX_DEVIATION = 1e-6  # 1 - cos per vector: float32 on one CPU (the measured figures are in docs/models.md)


def deviation(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """1 - cos per row."""
    return 1 - (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)


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
    assert inputs["image_grid_thw"].tolist() == official["image_grid_thw"]
    dev = deviation(enc.encode_queries(batch), np.array(official["vectors"]))
    assert dev.max() <= MAX_DEVIATION, dev


def mutated_vectors(enc: VLM2VecEncoder, inputs: dict, mutation: str) -> np.ndarray:
    """The vectors of `inputs` with one rule of the recipe changed."""
    import torch

    inputs = dict(inputs)
    if mutation == "multimodal RoPE positions":  # the image tokens on their 2-D grid, as transformers 5 numbers them
        del inputs["position_ids"]
        inputs["mm_token_type_ids"] = enc.processor.mm_token_type_ids(inputs["input_ids"])
    if mutation == "attention mask dropped":
        inputs["attention_mask"] = torch.ones_like(inputs["attention_mask"])
    inputs = to_device(inputs, enc.device)
    with torch.inference_mode():
        hidden = enc.model(**inputs).last_hidden_state
    if mutation == "mean pooling":
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return l2_normalize_rows((hidden * mask).sum(1) / mask.sum(1)).numpy()
    return last_attended_vectors(hidden, inputs["attention_mask"]).numpy()


@pytest.mark.parametrize("mutation", ["multimodal RoPE positions", "attention mask dropped", "mean pooling"])
def test_a_mutated_rule_fails_the_fixture(official, mutation):
    """The fixture's weights (std 0.2) tell each rule apart: a changed position, mask or pooling rule misses the
    authors' vectors by far more than the bound (positions: on the image inputs only, the rest are text)."""
    enc = encoder()
    batch = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in reference_inputs.VLM2VEC_INPUTS]
    inputs = enc.tokenize(batch)
    assert deviation(mutated_vectors(enc, inputs, "none"), np.array(official["vectors"])).max() <= MAX_DEVIATION
    dev = deviation(mutated_vectors(enc, inputs, mutation), np.array(official["vectors"]))
    assert dev.max() > 100 * MAX_DEVIATION, dev


@pytest.mark.slow
def test_a_lora_adapter_folder_loads_as_the_authors_merge_it(tmp_path, official):
    """A VLM2Vec checkpoint is a LoRA adapter on Qwen2-VL: the entry's loader (transformers' PEFT integration, peft
    from the models extra) gives the vectors of the authors' `MMEBModel.load` (`PeftModel.from_pretrained`, then
    `merge_and_unload`) on the same adapter."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForImageTextToText

    base = tiny.save_tiny_qwen2_vl(str(tmp_path / "base"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
        get_peft_model(AutoModelForImageTextToText.from_pretrained(base), lora).save_pretrained(tmp_path / "adapter")
    for part in tiny.tiny_qwen2_vl(0)[1:]:  # the repository's processor files, as the Hub's (their demo loads them)
        part.save_pretrained(tmp_path / "adapter")
    config = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    (tmp_path / "adapter" / "adapter_config.json").write_text(json.dumps({**config, "base_model_name_or_path": base}))
    ours = load_encoder(get_entry("vlm2vec-v2"), model_path=str(tmp_path / "adapter"), dtype="float32")
    merged = PeftModel.from_pretrained(AutoModelForImageTextToText.from_pretrained(base), str(tmp_path / "adapter"))
    theirs = VLM2VecEncoder(merged.merge_and_unload().model, ours.processor)
    batch = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in reference_inputs.VLM2VEC_INPUTS]
    assert deviation(ours.encode_queries(batch), theirs.encode_queries(batch)).max() <= MAX_DEVIATION
    plain = deviation(ours.encode_queries(batch), np.array(official["vectors"]))  # the adapter moves the vectors
    assert plain.max() > 100 * MAX_DEVIATION


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="neither text nor image"):
        encoder().encode_queries([ModelInput("", None, None)])


# --- VLM2Vec-V1 (TIGER-Lab/VLM2Vec-Qwen2VL-2B / -7B) --------------------------------------------------------------
V1_FIXTURE = Path(__file__).parents[1] / "fixtures" / "vlm2vec_v1" / "official.json"


@pytest.fixture(scope="module")
def v1_official() -> dict:
    return json.loads(V1_FIXTURE.read_text())


@pytest.fixture(scope="module")
def v1_encoder(tmp_path_factory) -> VLM2VecEncoder:
    """The vlm2vec-v1-2b entry's own loader on the tiny Qwen2-VL folder (no LoRA adapter: the weights themselves)."""
    folder = tiny.save_tiny_qwen2_vl(str(tmp_path_factory.mktemp("v1") / "tiny-qwen2-vl"))
    enc = load_encoder(get_entry("vlm2vec-v1-2b"), model_path=folder, dtype="float32")
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
    dev = deviation(np.concatenate(vectors), np.array(v1_official["vectors"]))
    assert dev.max() <= MAX_DEVIATION, dev


@pytest.mark.slow
def test_v1_with_multimodal_rope_positions_is_caught(v1_official, v1_encoder):
    """The V1 fixture's image inputs, with the image tokens on their M-RoPE grid instead of the authors' sequential
    positions, miss its vectors (the first batch: a text and an image + text input)."""
    inputs = v1_encoder.tokenize(v1_batches(v1_official)[0])
    dev = deviation(
        mutated_vectors(v1_encoder, inputs, "multimodal RoPE positions"), np.array(v1_official["vectors"][:2])
    )
    assert dev.max() > 100 * MAX_DEVIATION, dev


@pytest.mark.slow
def test_v1_without_its_resolution_rule_is_caught(v1_official, v1_encoder):
    """The V2 image handling (no 1344x1344 resize) on a V1 checkpoint gives other image grids."""
    v1_encoder.image_resolution = None
    try:
        inputs = v1_encoder.tokenize(v1_batches(v1_official)[0])
    finally:
        v1_encoder.image_resolution = (1344, 1344)
    assert inputs["image_grid_thw"].tolist() != v1_official["image_grid_thw"][:1]
