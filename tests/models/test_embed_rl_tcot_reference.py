"""Embed-RL + T-CoT (model_adapters/families/embed_rl_tcot.py) against the authors' code.

tests/fixtures/embed_rl_tcot/official.json was made by ZoengHN/Embed-RL's own functions (NOTE.md beside it):
(a) the T-CoT requests of data_pipe/eval_cot_generate/image_cot_generate.py — which prompt each query and candidate
gets, filled in, and whether its image goes with it; (b) the embedding input of eval/mmeb_eval/.../processor.py
`Qwen3_VL_process_fn` + `process_cot_with_visual_content` (crops included) and `MMEBModel.encode_input`, on the tiny
Embed-RL checkpoint, for fixed T-CoT texts (boxes kept, dropped by the 10 px / aspect 50 limits, clamped, too short;
malformed JSON; no thinking block; no JSON; empty; an input without text or image). Required: identical prompts,
identical token ids and image grids, cosine >= 0.9999. A flat one-box `bbox_2d` (the prompt's own format) makes the
authors' loop raise; ours must equal their result for the nested form. Mutations (crops left out, the T-CoT after the
summarize line) are caught.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.families import embed_rl_tcot, qwen_chat, reasoning
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.models.resolve import _repo_files
from model_adapters.protocol import Generation, ModelInput
from tests import reasoning_inputs, reference_inputs
from tests.doubles import tiny

FIXTURE = Path(__file__).parents[1] / "fixtures" / "embed_rl_tcot" / "official.json"
MIN_COSINE = 0.9999


@pytest.fixture(scope="module")
def official() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def enc(tmp_path_factory) -> embed_rl_tcot.EmbedRLTCoT:
    """The registry's embed-rl-2b-tcot recipe on the tiny Embed-RL folder (the reasoner: the tiny one; not used)."""
    folder = tiny.save_tiny_chat_checkpoint("embed-rl", str(tmp_path_factory.mktemp("ckpt") / "tiny-embed-rl"))
    base = get_entry("embed-rl-2b-tcot")
    entry = dataclasses.replace(
        base, own_options={**base.own_options, "generator": "tiny:qwen3-vl", "generator_revision": "seed1"}
    )
    out = load_encoder(reasoning.resolved(entry, folder, _repo_files), model_path=folder, dtype="float32")
    assert isinstance(out, embed_rl_tcot.EmbedRLTCoT)
    return out


def item(text: str, kind: str | None, instruction: str | None) -> ModelInput:
    return ModelInput(text, reference_inputs.image(kind) if kind else None, instruction)


def reasoned(cases) -> list[embed_rl_tcot.ReasonedInput]:
    return [
        embed_rl_tcot.ReasonedInput(
            text,
            reference_inputs.image(kind) if kind else None,
            instruction,
            embed_rl_tcot.parse_tcot(tcot, reference_inputs.image(kind) if kind else None),
        )
        for _, text, kind, instruction, tcot in cases
    ]


def images_of(case) -> int:
    """How many images a case's embedding input holds: its own and its crops."""
    _, _, kind, _, tcot = case
    return 0 if not kind else 1 + len(embed_rl_tcot.parse_tcot(tcot, reference_inputs.image(kind)).crops)


def attended(inputs: dict) -> list[list[int]]:
    return [
        [int(t) for t, m in zip(r, a, strict=True) if m]
        for r, a in zip(inputs["input_ids"], inputs["attention_mask"], strict=True)
    ]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_the_prompts_are_the_authors_verbatim(official):
    assert {
        n: hashlib.sha256(embed_rl_tcot.prompts()[n].encode()).hexdigest() for n in embed_rl_tcot.PROMPT_NAMES
    } == official["prompt_sha256"]


def test_requests_are_the_authors(official):
    for (role, text, kind, instruction), ref in zip(reasoning_inputs.REQUEST_CASES, official["requests"], strict=True):
        ours = embed_rl_tcot.request(item(text, kind, instruction), role)
        if ref["prompt"] is None:
            assert ours is None, (role, text)
            continue
        assert ours is not None and ours.prompt == ref["prompt"].replace("{IMAGE_PATH}", embed_rl_tcot.IMAGE_PATH), (
            role,
            text,
        )
        assert ours.with_image == ref["with_image"] and ref["image_is_the_input"] in (None, True)


def test_tiny_checkpoint_is_the_fixtures(enc, official):
    total = float(sum(p.detach().double().sum() for p in enc.embedder.model.parameters()))
    assert total == pytest.approx(official["weights_sum"], rel=1e-9, abs=1e-9)


@pytest.mark.slow
def test_tcot_input_ids_crops_and_vectors_match_the_authors_code(enc, official):
    ref = official["main"]
    batch = [item(text, kind, instruction) for _, text, kind, instruction, _ in reasoning_inputs.TCOT_CASES]
    gens = [Generation(tcot or "") for *_, tcot in reasoning_inputs.TCOT_CASES]
    inputs = enc.embedder.tokenize(reasoned(reasoning_inputs.TCOT_CASES), qwen_chat.QUERY)
    assert attended(inputs) == ref["input_ids"]
    assert inputs["image_grid_thw"].tolist() == ref["image_grid_thw"]  # the crops' grids included, in order
    cos = cosines(enc.encode(batch, gens, "query"), np.array(ref["vectors"]))
    assert cos.min() >= MIN_COSINE, dict(zip(ref["names"], cos.round(6), strict=True))


def test_a_flat_box_is_cropped_as_its_nested_form(enc, official):
    """The authors' loop raises on the prompt's own one-box format; we crop it as that one box: the crop and the
    image grids are those of the nested form, whose input is proven equal to the authors' above (the T-CoT text
    itself keeps its own brackets)."""
    assert official["flat_box_error"].startswith("TypeError")
    ref = official["main"]
    k = ref["names"].index("nested_single")
    nested, flat = reasoned([reasoning_inputs.TCOT_CASES[k], reasoning_inputs.FLAT_CASE])
    assert flat.tcot.crops == nested.tcot.crops and len(flat.tcot.crops) == 1
    grids = enc.embedder.tokenize([flat])["image_grid_thw"].tolist()
    first = sum(images_of(case) for case in reasoning_inputs.TCOT_CASES[:k])  # the grids of the cases before it
    assert grids == ref["image_grid_thw"][first : first + 2]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", ["no_crops", "after_summarize"])
def test_a_mutated_tcot_input_is_caught(enc, official, monkeypatch, mutation):
    parse = embed_rl_tcot.parse_tcot
    if mutation == "no_crops":
        monkeypatch.setattr(
            embed_rl_tcot,
            "parse_tcot",
            lambda text, image: dataclasses.replace(
                parse(text, image), parts=tuple(p for p in parse(text, image).parts if p["type"] == "text"), crops=()
            ),
        )
    else:
        monkeypatch.setattr(
            qwen_chat,
            "content_parts",
            lambda opts, text, has_image, extra=(): (
                [
                    *([{"type": "image"}] if has_image else []),
                    *([{"type": "text", "text": text}] if text else []),
                    {"type": "text", "text": opts.suffix_for(bool(text), has_image)},
                    *extra,
                ]
                if text or has_image
                else []
            ),
        )
    inputs = enc.embedder.tokenize(reasoned(reasoning_inputs.TCOT_CASES), qwen_chat.QUERY)
    assert attended(inputs) != official["main"]["input_ids"]


def test_parse_notes_and_limits():
    wide = reference_inputs.image("wide")  # 200 x 90
    names = {c[0]: c for c in reasoning_inputs.TCOT_CASES}
    boxes = embed_rl_tcot.parse_tcot(names["boxes"][4], wide)
    assert boxes.note is None and len(boxes.crops) == 2  # [0,0,30,50] is 6x4 px; [10,20,30] is not a box
    assert boxes.parts[0]["text"].startswith("<thinking>The car") and boxes.parts[-1]["text"].startswith("<rethink>")
    assert embed_rl_tcot.parse_tcot(names["malformed"][4], wide).note == embed_rl_tcot.BAD_JSON
    assert embed_rl_tcot.parse_tcot(names["no_thinking"][4], wide).note == embed_rl_tcot.NO_THINKING
    assert embed_rl_tcot.parse_tcot(names["thinking_no_json"][4], wide).note == embed_rl_tcot.NO_JSON
    assert embed_rl_tcot.parse_tcot("", wide) == embed_rl_tcot.TCoT(note=embed_rl_tcot.EMPTY)
    assert embed_rl_tcot.parse_tcot(names["text_with_box"][4], None).crops == ()  # no image: nothing to crop
    large = embed_rl_tcot.parse_tcot(names["large_aspect"][4], reference_inputs.image("large"))
    assert len(large.crops) == 1  # 1500 x 10 px: aspect 150 > 50
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("CMYK", (40, 40), (0, 255, 0, 0)).save(buf, format="JPEG")  # a mode PNG cannot hold
    (crop,) = embed_rl_tcot.parse_tcot('<thinking>{"bbox_2d": [[0, 0, 500, 500]]}</thinking>', buf.getvalue()).crops
    assert Image.open(io.BytesIO(crop)).size == (20, 20) and Image.open(io.BytesIO(crop)).mode == "RGB"
