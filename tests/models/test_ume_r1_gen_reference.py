"""UME-R1 Gen (model_adapters/families/ume_r1_gen.py) against the hidden states of `generate` and against the authors'
eval read-out on a tiny random Qwen2-VL with <disc_emb>/<gen_emb>.

Our adapter generates once, stores the ids, and reads the embedding from one teacher-forced forward over prompt +
generated ids at the position the eval's `get_gen_embedding_idx` step holds. Two proofs:

1. it equals reading the last-layer hidden state during generation (`generate(..., output_hidden_states=True)`),
   for a left-padded batch whose rows end at different steps (1 - cos <= 1e-6, no authors' code needed);
2. tests/fixtures/ume_r1_gen/official.json was made by the authors' code (README generative example +
   eval_twomode.py's "gen" read-out, NOTE.md) on the same tiny checkpoint under its own sampling generation config
   and the seed our adapter uses: identical prompt ids and generated ids, the same step index, 1 - cos <= 1e-6;
   and the eval's `get_gen_embedding_idx` on hand-made id lists is `gen_step`'s.
A read one position later (the state of the token after <gen_emb>, the natural off-by-one) is caught, and so are
positions one off, a dropped mask and mean pooling in the teacher-forced forward (tests/fixture_mutations.py).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families import reasoning, ume_r1_gen
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.models.resolve import _repo_files
from model_adapters.protocol import Generation, ModelInput
from tests import reference_inputs
from tests.doubles import tiny_reasoning
from tests.fixture_mutations import MAX_ONE_MINUS_COS, RULES, mutation, one_minus_cos

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ume_r1_gen" / "official.json"
DISC_FIXTURE = Path(__file__).parents[1] / "fixtures" / "ume_r1_disc" / "official.json"


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    return tiny_reasoning.save_tiny_ume_r1_gen(str(tmp_path_factory.mktemp("ckpt") / "tiny-ume-r1-gen"))


def encoder(folder: str, seed: int, max_new_tokens: int) -> ume_r1_gen.UmeR1Gen:
    """The registry's ume-r1-2b-gen recipe loaded from the tiny folder, with the fixture's seed and length."""
    base = get_entry("ume-r1-2b-gen")
    entry = dataclasses.replace(
        base, own_options={**base.own_options, "seed": seed, "decoding": {"max_new_tokens": max_new_tokens}}
    )
    entry = reasoning.resolved(entry, folder, _repo_files)
    enc = load_encoder(entry, model_path=folder, dtype="float32")
    assert isinstance(enc, ume_r1_gen.UmeR1Gen)
    return enc


def inputs() -> list[ModelInput]:
    return [
        ModelInput(text, reference_inputs.image(kind) if kind else None, instruction)
        for text, kind, instruction in reference_inputs.EMBED_INPUTS
    ]


def test_tiny_checkpoint_and_generation_config_are_the_fixtures(folder, official):
    enc = encoder(folder, 0, 4)
    total = float(sum(p.detach().double().sum() for p in enc.lm.model.parameters()))
    assert total == pytest.approx(official["weights_sum"], rel=1e-9, abs=1e-9)
    stored = {k: v for k, v in official["generation_config"].items() if k != "transformers_version"}
    assert {k: v for k, v in enc.generation.decoding.items() if k != "max_new_tokens"} == stored
    assert enc.marker == official["gen_emb_id"]


def test_read_out_rule_is_the_evals(official):
    rule = official["rule"]
    assert [ume_r1_gen.gen_step(ids, official["gen_emb_id"])[0] for ids in rule["cases"]] == rule["embedding_idx"]


@pytest.mark.slow
def test_teacher_forced_read_equals_the_hidden_state_during_generation(folder):
    """A left-padded batch generated at once with output_hidden_states: for each row the eval's step (its own
    steps: a row that ended is fed padding afterwards) vs our read from the stored ids."""
    import torch

    enc = encoder(folder, 3, 16)
    batch = inputs()
    prompt = enc.query.tokenize(batch)
    torch.manual_seed(11)
    with torch.inference_mode():
        out = enc.lm.generate(
            **prompt, generation_config=enc.config, output_hidden_states=True, return_dict_in_generate=True
        )
    width = prompt["input_ids"].shape[1]
    ends = {int(e) for e in enc.config.eos_token_id}
    rows = [ume_r1_gen.generating.cut_at_end(r, ends) for r in out.sequences[:, width:].tolist()]
    assert len({len(r) for r in rows}) > 1  # rows end at different steps
    expected = []
    for i, ids in enumerate(rows):
        step, _ = ume_r1_gen.gen_step(ids, enc.marker)
        step = step if step >= 0 else len(ids) - 1
        state = out.hidden_states[step][-1][i]
        expected.append((state[-1] if step == 0 else state[0]).float().numpy())
    ours = enc.encode(batch, [Generation("", tuple(r)) for r in rows], "query")
    gap = one_minus_cos(ours, np.stack(expected))
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
@pytest.mark.parametrize("section", ["seed2", "seed3", "seed9"])
def test_prompt_and_generated_ids_and_vectors_match_the_authors_code(folder, official, section):
    ref = official["sections"][section]
    enc = encoder(folder, int(section[4:]), official["max_new_tokens"])
    batch = inputs()
    generations = []
    for i, item in enumerate(batch):
        assert [int(t) for t in enc.query.tokenize([item])["input_ids"][0]] == ref["input_ids"][i], i
        gen = enc.generate([item], "query")[0]  # a batch of one, as the fixture's calls
        assert list(gen.token_ids) == ref["generated_ids"][i], i
        assert (gen.fallback is None) == (ref["embedding_idx"][i] >= 0), (i, gen.fallback)
        generations.append(gen)
    # the stored ids read in one left-padded batch (rows of different lengths) give the authors' vectors
    gap = one_minus_cos(enc.encode(batch, generations, "query"), ref["vectors"])
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
def test_a_read_one_position_late_is_caught(folder, official, monkeypatch):
    ref = official["sections"]["seed3"]
    enc = encoder(folder, 3, official["max_new_tokens"])
    late = ume_r1_gen.read_index
    monkeypatch.setattr(
        ume_r1_gen,
        "read_index",
        lambda ids, marker: (late(ids, marker)[0] + 1, None) if late(ids, marker)[1] is None else late(ids, marker),
    )
    gens = [Generation("", tuple(ids)) for ids in ref["generated_ids"]]
    gap = one_minus_cos(enc.encode(inputs(), gens, "query"), ref["vectors"])
    found = [i for i, idx in enumerate(ref["embedding_idx"]) if idx >= 0]
    assert found and gap[found].min() > MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES)
def test_fixture_fails_when_a_position_mask_or_pooling_rule_changes(folder, official, rule):
    """The teacher-forced forward (one left-padded batch) with positions one off, the mask dropped, or the mean
    instead of the read position."""
    ref = official["sections"]["seed3"]
    enc = encoder(folder, 3, official["max_new_tokens"])
    gens = [Generation("", tuple(ids)) for ids in ref["generated_ids"]]
    backbone = enc.lm.model
    with mutation(rule, decoder=backbone.language_model, states=backbone):
        gap = one_minus_cos(enc.encode(inputs(), gens, "query"), ref["vectors"])
    assert gap.max() > MAX_ONE_MINUS_COS, gap


def test_candidates_are_disc_mode(folder):
    """The Gen entry's candidate side is the ume-r1-disc recipe: the Disc fixture (same tiny weights) holds."""
    ref = json.loads(DISC_FIXTURE.read_text())["main"]
    enc = encoder(folder, 0, 4)
    gap = one_minus_cos(enc.encode(inputs(), None, "candidate"), ref["vectors"])
    assert gap.max() <= MAX_ONE_MINUS_COS, gap
