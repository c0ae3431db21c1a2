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

from model_adapters.families import tiny
from model_adapters.families.vlm import VLM2VecEncoder, vlm2vec_text
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs as R

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
    batch = [ModelInput(t, R.image(k) if k else None, i) for t, k, i in R.VLM2VEC_INPUTS]
    assert [vlm2vec_text(item) for item in batch] == official["texts"]


@pytest.mark.slow
def test_token_ids_and_vectors_match_vlm2vec(official):
    enc = encoder()
    batch = [ModelInput(t, R.image(k) if k else None, i) for t, k, i in R.VLM2VEC_INPUTS]
    inputs = enc.tokenize(batch)
    ids = [[int(t) for t, m in zip(row, mask, strict=True) if m]
           for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)]
    assert ids == official["input_ids"]
    got = enc.encode_queries(batch)
    ref = np.array(official["vectors"])
    cos = (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.9999, cos


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="neither text nor image"):
        encoder().encode_queries([ModelInput("", None, None)])
