"""The Qwen-VL chat recipes (model_adapters/families/qwen_chat.py) against their authors' code on tiny random models.

Each fixture tests/fixtures/<recipe>/official.json was produced by the authors' code (NOTE.md beside it: repository,
commit, command, substitutions) on the tiny checkpoint `tiny.save_tiny_chat_checkpoint(kind, folder)` writes, over
the fixed inputs of tests/reference_inputs.py (weights of std 0.2). Our side loads that folder through the recipe's
real registry entry and loader (`load_encoder(entry, model_path=folder)`). Required: identical attended token ids and
1 - cos <= 1e-6 per vector; a mutation of the recipe (wrong pooling, wrong positions, ...) and a changed position,
mask or pooling rule (tests/fixture_mutations.py) must fall outside that bound.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from model_adapters.families import qwen_chat
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny
from tests.fixture_mutations import MAX_ONE_MINUS_COS, RULES, mutation, one_minus_cos

FIXTURES = Path(__file__).parents[1] / "fixtures"


@dataclasses.dataclass(frozen=True)
class Check:
    """One fixture section: its inputs, the side they are encoded as, and options changed for it (e.g. a small
    max_length, as the authors' constructor takes it)."""

    key: str
    inputs: tuple[tuple[str, str | None, str | None], ...]
    side: str = qwen_chat.QUERY
    overrides: tuple[tuple[str, Any], ...] = ()


MAIN = Check("main", tuple(reference_inputs.EMBED_INPUTS))


@dataclasses.dataclass(frozen=True)
class Case:
    """One recipe: its registry entry, tiny checkpoint, fixture folder, checks, and a mutation of its options that
    the comparison must catch."""

    entry: str
    tiny: str
    fixture: str
    mutation: dict[str, Any]
    checks: tuple[Check, ...] = (MAIN,)


CASES = {
    "embed-rl": Case("embed-rl-2b", "embed-rl", "embed_rl", {"pooling": "last_attended"}),
    "ume-r1-disc": Case("ume-r1-2b-disc", "ume-r1", "ume_r1_disc", {"placeholder_image": None}),
    "rzenembed": Case(
        "rzenembed",
        "rzenembed",
        "rzenembed",
        {"positions": "rope"},
        (
            MAIN,
            Check(
                "truncation",
                tuple(reference_inputs.TRUNCATION_INPUTS[:1]),
                overrides=(("max_length", reference_inputs.TRUNCATION_MAX_LENGTH),),
            ),
        ),
    ),
    "ops-mm-embedding-v1": Case("ops-mm-embedding-v1-7b", "ops-mm", "ops_mm_embedding_v1", {"positions": "sequential"}),
    "lamra-ret": Case(
        "lamra-ret",
        "lamra",
        "lamra_ret",
        {"pooling": "last_token"},
        (MAIN, Check("candidates", tuple(reference_inputs.EMBED_INPUTS), side=qwen_chat.CANDIDATE)),
    ),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tiny-chat")
    kinds = {c.tiny for c in CASES.values()} | {"ume-r1"}
    return {kind: tiny.save_tiny_chat_checkpoint(kind, str(root / kind)) for kind in kinds}


def official(case: Case) -> dict:
    return json.loads((FIXTURES / case.fixture / "official.json").read_text())


def encoder(case: Case, folders: dict[str, str]) -> qwen_chat.QwenChatEmbedder:
    enc = load_encoder(get_entry(case.entry), model_path=folders[case.tiny], dtype="float32")
    assert isinstance(enc, qwen_chat.QwenChatEmbedder)
    return enc


def batch_of(check: Check) -> list[ModelInput]:
    return [
        ModelInput(text, reference_inputs.image(kind) if kind else None, instruction)
        for text, kind, instruction in check.inputs
    ]


def attended_ids(inputs: dict) -> list[list[int]]:
    return [
        [int(t) for t, m in zip(row, mask, strict=True) if m]
        for row, mask in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
    ]


def with_options(enc: qwen_chat.QwenChatEmbedder, changes: dict[str, Any]) -> qwen_chat.QwenChatEmbedder:
    enc.opts = dataclasses.replace(enc.opts, **changes)
    return enc


@pytest.mark.parametrize("name", sorted(CASES))
def test_tiny_checkpoint_is_the_one_the_fixture_was_made_with(name, folders):
    case = CASES[name]
    model = encoder(case, folders).model
    total = float(sum(p.detach().double().sum() for p in model.parameters()))
    assert total == pytest.approx(official(case)["weights_sum"], rel=1e-9, abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_token_ids_and_vectors_match_the_authors_code(name, folders):
    case, ref = CASES[name], official(CASES[name])
    for check in case.checks:
        enc = with_options(encoder(case, folders), dict(check.overrides))
        batch = batch_of(check)
        inputs = enc.tokenize(batch, check.side)
        assert attended_ids(inputs) == ref[check.key]["input_ids"], check.key
        if "image_grid_thw" in ref[check.key]:
            grid = inputs["image_grid_thw"].tolist() if "image_grid_thw" in inputs else []
            assert grid == ref[check.key]["image_grid_thw"], check.key
        gap = one_minus_cos(enc.encode(batch, check.side), ref[check.key]["vectors"])
        assert gap.max() <= MAX_ONE_MINUS_COS, (check.key, gap)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_mutated_recipe_is_caught(name, folders):
    """The comparison can fail: the recipe with one option changed gives vectors outside the bound."""
    case, ref = CASES[name], official(CASES[name])
    check = case.checks[0]
    enc = with_options(encoder(case, folders), {**dict(check.overrides), **case.mutation})
    gap = one_minus_cos(enc.encode(batch_of(check), check.side), ref[check.key]["vectors"])
    assert gap.max() > MAX_ONE_MINUS_COS, gap


# Recipes padded on the right: with causal attention and the pooled token at or before the last attended one, no
# attended token sees a padded one, so a changed mask cannot show (checked below).
RIGHT_PADDED = frozenset({"lamra-ret", "rzenembed"})


def mutated_gap(name: str, rule: str, folders: dict[str, str]) -> np.ndarray:
    """1 - cos to the fixture's first section with `rule` changed in the language model or its hidden states."""
    case, ref = CASES[name], official(CASES[name])
    check = case.checks[0]
    enc = with_options(encoder(case, folders), dict(check.overrides))
    with mutation(rule, decoder=enc.model.language_model, states=enc.model):
        return one_minus_cos(enc.encode(batch_of(check), check.side), ref[check.key]["vectors"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "rule"),
    [(n, r) for n in sorted(CASES) for r in RULES if not (r == "mask" and n in RIGHT_PADDED)],
)
def test_fixture_fails_when_a_position_mask_or_pooling_rule_changes(name, rule, folders):
    gap = mutated_gap(name, rule, folders)
    assert gap.max() > MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RIGHT_PADDED))
def test_the_mask_of_a_right_padded_recipe_is_unobservable(name, folders):
    assert encoder(CASES[name], folders).padding_side == "right"
    gap = mutated_gap(name, "mask", folders)
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


# --- the pieces each recipe is built from ------------------------------------------------------------------------
def test_embed_rl_prompt_is_the_authors(folders):
    enc = encoder(CASES["embed-rl"], folders)
    texts, _ = enc.prompts([ModelInput("sparrow", b"png", reference_inputs.I2C), ModelInput("", None, None)])
    assert texts[0] == (
        f"<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>{reference_inputs.I2C} sparrow"
        "Summarize the above content in one word:<|im_end|>\n<|im_start|>assistant\n<emb><|im_end|>\n"
    )
    assert (
        texts[1] == "<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n<emb><|im_end|>\n"
    )  # no suffix: as MMEB eval
    assert official(CASES["embed-rl"])["main"]["prompts"][7].startswith("<|im_start|>user\nRetrieve images of")


def test_options_are_validated_in_one_place():
    with pytest.raises(Exception, match="option pooling='mean' is not one of last_attended"):
        qwen_chat.ChatOptions.parse({"backbone": "qwen2_vl", "pooling": "mean"}, "recipe x")
    with pytest.raises(Exception, match="option 'backbone' is required"):
        qwen_chat.ChatOptions.parse({}, "recipe x")
    with pytest.raises(Exception, match="needs pool_token"):
        qwen_chat.ChatOptions.parse({"backbone": "qwen2_vl", "pooling": "last_token"}, "recipe x")
    opts = qwen_chat.ChatOptions.parse({"backbone": "qwen3_vl", "suffix": "S", "pipeline": "ignored"}, "recipe x")
    assert opts.suffix_for(True, True) == opts.suffix_for(False, True) == "S"


def test_pooling_rules():
    import torch

    ids = torch.tensor([[0, 0, 5, 7, 5, 9, 9], [0, 1, 2, 3, 4, 5, 7]])
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])
    assert qwen_chat.last_attended_positions(mask).tolist() == [6, 6]
    assert qwen_chat.last_token_positions(ids, mask, 5)[0].tolist() == [4, 5]
    # UME-R1's tail rule: a marker in the last two positions falls back to the last position
    positions, fallbacks = qwen_chat.last_token_positions(ids, mask, 5, tail=2)
    assert positions.tolist() == [4, 6] and fallbacks == 1
    assert qwen_chat.first_token_positions_minus_one(ids[:1], 5).tolist() == [1]
    with pytest.raises(ValueError, match="lost its embedding token"):
        qwen_chat.first_token_positions_minus_one(ids, 9)


def test_ume_r1_checkpoint_is_detected_by_its_tokens_and_a_plain_qwen2_vl_is_not(folders, tmp_path):
    """UME-R1's README reads <disc_emb> and <gen_emb> from the tokenizer without adding them, so its checkpoints
    certainly have both: that signature (qwen2_vl, Qwen2VLForConditionalGeneration, no remote code, both tokens)
    chooses ume-r1-disc; the same architecture without them matches no recipe."""
    from model_adapters.models.resolve import from_name
    from triad_dataset.contract.errors import TriadError

    assert from_name(folders["ume-r1"]).identity.recipe == "ume-r1-disc"
    plain = tiny.save_tiny_chat_checkpoint("rzenembed", str(tmp_path / "plain-qwen2-vl"))
    with pytest.raises(TriadError, match="no verified embedder recipe matches this checkpoint"):
        from_name(plain)


def test_ume_r1_placeholder_only_on_pure_text_inputs(folders):
    enc = encoder(CASES["ume-r1-disc"], folders)
    texts, images = enc.prompts(
        [
            ModelInput("a concept", None, None),
            ModelInput("", None, None),
            ModelInput("x", reference_inputs.image("small"), None),
        ]
    )
    assert [t.count("<|image_pad|>") for t in texts] == [1, 0, 1] and len(images) == 2
    assert images[0] == qwen_chat.placeholder_png((28, 28))
    assert texts[0].endswith("a concept\n<disc_emb>\n<|im_end|>\n<|im_start|>assistant\n")


def test_a_recipe_chosen_by_hand_refuses_a_checkpoint_of_another_backbone(folders):
    from model_adapters.models.resolve import from_name
    from triad_dataset.contract.errors import TriadError

    resolved = from_name(folders["ume-r1"], recipe="embed-rl")  # a Qwen2-VL folder, a Qwen3-VL recipe
    with pytest.raises(TriadError, match=r"recipe embed-rl is for qwen3_vl checkpoints; .* is qwen2_vl"):
        resolved.load("cpu", "float32")


def test_an_added_token_without_a_trained_embedding_row_is_refused(tmp_path):
    """LamRA's eval adds <emb> to the tokenizer; a checkpoint with no embedding row beyond its tokenizer was not
    trained with it (its vector would be a fresh random row)."""
    from triad_dataset.contract.errors import TriadError

    folder = tiny.save_tiny_chat_checkpoint("rzenembed", str(tmp_path / "no-spare-rows"))
    with pytest.raises(TriadError, match=r"token <emb> \(id \d+\) has no embedding row in this checkpoint"):
        load_encoder(get_entry("lamra-ret"), model_path=folder, dtype="float32")
