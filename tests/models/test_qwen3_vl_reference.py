"""Qwen3-VL-Embedding: our adapter against the official `Qwen3VLEmbedder` on a tiny random Qwen3-VL.

The fixture tests/fixtures/qwen3_vl_embedding/official.json was produced by the authors' code
(QwenLM/Qwen3-VL-Embedding src/models/qwen3_vl_embedding.py at commit 8ce3aab, see the NOTE.md beside it) on the
model `tiny.save_tiny_qwen3_vl` writes (weights of std 0.2) and the inputs of tests/reference_inputs.py. Required:
identical token ids, identical resized images, 1 - cos <= 1e-6 per vector (|Δscore| <= 1e-6 per reranked pair), and
the fixtures must fail when a position, mask or pooling rule is changed (tests/fixture_mutations.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny
from tests.fixture_mutations import (
    MAX_ONE_MINUS_COS,
    MAX_SCORE_DIFF,
    dropped_mask,
    mutation,
    one_minus_cos,
    score_diff,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "qwen3_vl_embedding" / "official.json"


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads(FIXTURE.read_text())


def model_inputs(items: list) -> list[ModelInput]:
    return [
        ModelInput(text, reference_inputs.image(kind) if kind else None, instruction)
        for text, kind, instruction in items
    ]


def embedder(max_length: int | None = None):
    enc = load_encoder(get_entry("tiny-random-vlm"))
    if max_length is not None:
        enc.max_length = max_length
    return enc


def test_tiny_model_is_the_one_the_fixture_was_made_with(official):
    model, _, _ = tiny.tiny_qwen3_vl(0)
    assert type(model).__name__ == "Qwen3VLForConditionalGeneration"  # the real checkpoints' architecture
    total = float(sum(p.double().sum() for p in model.model.parameters()))
    assert total == pytest.approx(official["weights_sum"], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kind", reference_inputs.RESIZE_IMAGES)
def test_images_are_resized_as_qwen_vl_utils_does(official, kind):
    img = qvi.fetch_image(reference_inputs.image(kind))
    expected = official["fetch_image"][kind]
    assert list(img.size) == expected["size"] and img.mode == expected["mode"]
    assert hashlib.sha256(np.asarray(img).tobytes()).hexdigest() == expected["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "items", "max_length"),
    [
        ("main", reference_inputs.EMBED_INPUTS, None),
        ("truncation", reference_inputs.TRUNCATION_INPUTS, reference_inputs.TRUNCATION_MAX_LENGTH),
    ],
)
def test_token_ids_and_vectors_match_the_official_embedder(official, case, items, max_length):
    enc = embedder(max_length)
    batch = model_inputs(items)
    inputs = enc.tokenize(batch)
    ids = [
        [int(t) for t, m in zip(row, mask, strict=True) if m]
        for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
    ]
    ref = official[case]
    assert ids == ref["input_ids"]
    assert inputs.get("image_grid_thw", np.zeros((0, 3))).tolist() == ref["image_grid_thw"]
    gap = one_minus_cos(enc.encode_queries(batch), ref["vectors"])
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["positions", "pooling"])
def test_embedding_fixture_fails_when_a_rule_changes(official, rule):
    """Multimodal RoPE positions one off after the first token, or the mean instead of the last token."""
    enc = embedder()
    with mutation(rule, decoder=enc.model.language_model, states=enc.model):
        gap = one_minus_cos(
            enc.encode_queries(model_inputs(reference_inputs.EMBED_INPUTS)), official["main"]["vectors"]
        )
    assert gap.max() > MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
def test_the_embedders_mask_is_unobservable(official):
    """Right padding, causal attention, the last attended token pooled: no attended token sees a padded one, so no
    mask rule can be told apart by the fixture (the mask mutation is not applicable to this recipe)."""
    enc = embedder()
    with dropped_mask(enc.model.language_model):
        gap = one_minus_cos(
            enc.encode_queries(model_inputs(reference_inputs.EMBED_INPUTS)), official["main"]["vectors"]
        )
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


def test_paper_protocol_instruction_field_and_outer_wrapper(official):
    """Paper B.3: the benchmark instruction goes into the system turn; without one (candidates, constraints and
    state queries) the model keeps its outer instruction "Represent the user's input."."""
    enc = embedder()
    tok = enc.processor.tokenizer
    with_instruction = tok.decode(official["main"]["input_ids"][0])
    assert with_instruction.startswith(
        f"<|im_start|>system\n{reference_inputs.C2I}<|im_end|>\n<|im_start|>user\nleaf 17"
    )
    candidate = tok.decode(official["main"]["input_ids"][6])
    assert candidate.startswith("<|im_start|>system\nRepresent the user's input.<|im_end|>\n")
    assert enc.conversation(ModelInput("x", None, "Find it"))[0]["content"][0]["text"] == "Find it."


# --- Qwen3-VL-Reranker ------------------------------------------------------------------------------------
RERANK_FIXTURE = Path(__file__).parents[1] / "fixtures" / "qwen3_vl_reranker" / "official.json"


@pytest.fixture(scope="module")
def official_rerank() -> dict:
    return json.loads(RERANK_FIXTURE.read_text())


def reranker(max_length: int | None = None):
    from model_adapters.models.registry import load_reranker

    rr = load_reranker(get_entry("tiny-random-reranker", kind="reranker"))
    if max_length is not None:
        rr.max_length = max_length
    return rr


def pairs(queries: list, docs: list) -> tuple[list[ModelInput], list[ModelInput]]:
    qs = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in queries for _ in docs]
    cs = [ModelInput(t, reference_inputs.image(k) if k else None) for _ in queries for t, k in docs]
    return qs, cs


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "queries", "docs", "max_length"),
    [
        ("main", reference_inputs.RERANK_QUERY, reference_inputs.RERANK_DOCS, None),
        (
            "truncation",
            [reference_inputs.RERANK_TRUNCATION_PAIR[0]],
            [reference_inputs.RERANK_TRUNCATION_PAIR[1]],
            reference_inputs.RERANK_TRUNCATION_MAX_LENGTH,
        ),
    ],
)
def test_reranker_ids_and_scores_match_the_official_reranker(official_rerank, case, queries, docs, max_length):
    rr = reranker(max_length)
    qs, cs = pairs(queries, docs)
    inputs = rr.tokenize(qs, cs)
    ids = [
        [int(t) for t, m in zip(row, mask, strict=True) if m]
        for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
    ]
    ref = official_rerank[case]
    assert ids == [row for q in ref for row in q["input_ids"]]
    scores = rr.score_pairs(qs, cs)  # one batch, left padded (the official code scores one pair at a time)
    diff = score_diff(scores, [s for q in ref for s in q["scores"]])
    assert diff.max() <= MAX_SCORE_DIFF, diff


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["positions", "mask", "pooling"])
def test_reranker_fixture_fails_when_a_rule_changes(official_rerank, rule):
    """Positions one off, the mask dropped (left padding), or the yes/no logits read from the mean state."""
    rr = reranker()
    qs, cs = pairs(reference_inputs.RERANK_QUERY, reference_inputs.RERANK_DOCS)
    with mutation(rule, decoder=rr.model.language_model, states=rr.model):
        scores = rr.score_pairs(qs, cs)
    diff = score_diff(scores, [s for q in official_rerank["main"] for s in q["scores"]])
    assert diff.max() > MAX_SCORE_DIFF, diff


def test_reranker_generic_wrapper_is_the_official_one(official_rerank):
    """Paper D.2: constraints/state pairs use the reranker's official generic wrapper; abstraction pairs keep their
    I2C/C2I instruction."""
    tok = reranker().processor.tokenizer
    constraint = tok.decode(official_rerank["main"][0]["input_ids"][0])
    assert "<Instruct>: Given a search query, retrieve relevant candidates that answer the query.<Query>:" in constraint
    abstraction = tok.decode(official_rerank["main"][1]["input_ids"][0])
    assert f"<Instruct>: {reference_inputs.C2I}<Query>:leaf 17" in abstraction
