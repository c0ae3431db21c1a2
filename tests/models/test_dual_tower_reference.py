"""CLIP and SigLIP 2 adapters against transformers' documented usage, big_vision's SigLIP 2 text preprocessing and
the paper's fusion rule (B.2.1).

tests/fixtures/dual_tower/reference.json was written by benchmarks/reference/run_dual_tower_reference.py (see the
NOTE.md beside it), which shares no code with our adapter: CLIP as the CLIPModel docs, SigLIP 2's text as
big_vision feeds it (A-Z lower-cased, Gemma tokens + EOS, cut to 63 + EOS, padded at the end to 64, the tower
called on the ids alone), on tiny models whose weight matrices have std 0.2. Required: identical token ids,
1 - cos <= 1e-6 per fused vector (an input with neither text nor image: both zero); each mutated rule must miss.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from model_adapters.families.common import features
from model_adapters.families.dual_tower import DualTowerEncoder
from model_adapters.models import detect
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.doubles import tiny
from tests.fixture_mutations import MAX_ONE_MINUS_COS, one_minus_cos
from triad_dataset.contract.errors import TriadError

FIXTURE = Path(__file__).parents[1] / "fixtures" / "dual_tower" / "reference.json"
MAX_DEVIATION = 1e-6  # 1 - cos per vector, CLIP and SigLIP 2: float32 on one CPU
BUILDERS = {
    "clip": tiny.tiny_clip,
    "siglip": tiny.tiny_siglip,
    "siglip2": tiny.tiny_siglip2,
    "siglip2-naflex": tiny.tiny_siglip2_naflex,
}


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> dict[str, DualTowerEncoder]:
    """CLIP: the tiny entry with the clip-vit-b32 entry's text settings. SigLIP 2 (FixRes, NaFlex): the `siglip2`
    entry's own loader on a folder that detection gives the siglip2 recipe (by its tokenizer / model_type)."""
    clip = load_encoder(get_entry("tiny-random-clip"))
    opts = get_entry("clip-vit-b32").options
    clip.max_length, clip.padding = int(opts["max_length"]), opts.get("padding", True)
    siglip = load_encoder(get_entry("tiny-random-siglip"))  # SigLIP 1: the siglip recipe's options (its entry's)
    out = {"clip": clip, "siglip": siglip}
    for name in ("siglip2", "siglip2-naflex"):
        folder = tiny.save_tiny_siglip2(str(tmp_path_factory.mktemp(name) / name), naflex=name.endswith("naflex"))
        reader = lambda f, d=folder: str(Path(d) / f) if (Path(d) / f).is_file() else None  # noqa: E731
        recipe, options, _ = detect.detect(reader, where=folder)
        assert recipe.name == "siglip2" and options == {**recipe.options, "max_length": 64}
        out[name] = load_encoder(get_entry("siglip2"), model_path=folder, dtype="float32")
    return out


def batch_of(items: list) -> list[ModelInput]:
    return [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in items]


def record_text_ids(enc, monkeypatch) -> list[list[int]]:
    """The token ids the encoder's text tower receives, appended to the returned list as it runs (the tower is
    restored when the test ends: the tiny models are shared)."""
    fed: list[list[int]] = []
    text_tower = enc.model.get_text_features

    def recording(**kwargs):
        fed.extend(kwargs["input_ids"].tolist())
        return text_tower(**kwargs)

    monkeypatch.setattr(enc.model, "get_text_features", recording)
    return fed


def deviations(out: np.ndarray, expected: np.ndarray) -> list[float]:
    """1 - cos per row; a zero row must meet a zero row (0.0), else it counts as 1.0."""
    devs = []
    for vec, exp in zip(out, expected, strict=True):
        if not np.linalg.norm(exp) or not np.linalg.norm(vec):
            devs.append(0.0 if not np.linalg.norm(exp) and not np.linalg.norm(vec) else 1.0)
            continue
        devs.append(float(1 - vec @ exp / np.linalg.norm(vec) / np.linalg.norm(exp)))
    return devs


def encode_each(enc: DualTowerEncoder, items: list) -> np.ndarray:
    return np.concatenate([enc.encode_queries([item]) for item in batch_of(items)])  # one at a time: no batch padding


@pytest.mark.slow
@pytest.mark.parametrize("arch", sorted(BUILDERS))
def test_dual_tower_matches_the_reference(reference, encoders, arch, monkeypatch):
    ref, enc = reference[arch], encoders[arch]
    assert type(enc.model).__name__ == ref["class"]
    assert float(sum(p.detach().double().sum() for p in enc.model.parameters())) == pytest.approx(
        ref["weights_sum"], rel=1e-9
    )
    masks: list[bool] = []
    fed = record_text_ids(enc, monkeypatch)
    recording = enc.model.get_text_features

    def with_mask_check(**kwargs):
        masks.append("attention_mask" in kwargs)
        return recording(**kwargs)

    monkeypatch.setattr(enc.model, "get_text_features", with_mask_check)
    out = encode_each(enc, reference_inputs.EMBED_INPUTS + reference_inputs.TRUNCATION_INPUTS)
    assert fed == [ids for ids in ref["input_ids"] if ids]
    assert set(masks) == {arch == "clip"}  # SigLIP: the ids alone, as big_vision's text tower takes them
    devs = deviations(out, np.array(ref["vectors"]))
    assert max(devs) <= MAX_DEVIATION, devs


def normalized(tower: Any) -> Any:
    """A tower whose projection is L2-normalized before the fusion (the per-tower rule the paper does not use)."""

    def run(**kwargs):
        out = features(tower(**kwargs))
        return out / out.norm(dim=-1, keepdim=True)

    return run


def shifted_positions(tower: Any) -> Any:
    """CLIP's text tower with every position one further on."""
    import torch

    def run(**kwargs):
        length = kwargs["input_ids"].shape[1]
        return tower(**kwargs, position_ids=torch.arange(1, length + 1).unsqueeze(0))

    return run


MUTATIONS = {
    "clip": ("per-tower L2 before the sum", "positions shifted by one"),
    "siglip": ("attention mask added", "lower-cased", "padded at the start"),
    "siglip2": ("per-tower L2 before the sum", "attention mask added", "not lower-cased", "padded at the start"),
    "siglip2-naflex": ("attention mask added", "padded at the start"),
}


def mutate(enc: DualTowerEncoder, mutation: str, monkeypatch) -> None:
    """Change one rule of the encoder for the rest of the test."""
    if mutation == "per-tower L2 before the sum":
        monkeypatch.setattr(enc.model, "get_text_features", normalized(enc.model.get_text_features))
        monkeypatch.setattr(enc.model, "get_image_features", normalized(enc.model.get_image_features))
    if mutation == "positions shifted by one":
        monkeypatch.setattr(enc.model, "get_text_features", shifted_positions(enc.model.get_text_features))
    if mutation == "attention mask added":
        monkeypatch.setattr(enc, "text_inputs", lambda: ("input_ids", "attention_mask"))
    if mutation in ("not lower-cased", "lower-cased"):
        monkeypatch.setattr(enc, "lowercase", mutation == "lower-cased")
    if mutation == "padded at the start":
        monkeypatch.setattr(enc, "padding_side", "left")


@pytest.mark.slow
@pytest.mark.parametrize(("arch", "mutation"), [(a, m) for a, ms in MUTATIONS.items() for m in ms])
def test_a_mutated_rule_misses_the_reference(reference, encoders, arch, mutation, monkeypatch):
    """On std-0.2 weights each rule shows: the mutated encoder misses the fixture by far more than the bound."""
    enc = encoders[arch]
    mutate(enc, mutation, monkeypatch)
    out = encode_each(enc, reference_inputs.EMBED_INPUTS)
    devs = deviations(out, np.array(reference[arch]["vectors"][: len(reference_inputs.EMBED_INPUTS)]))
    assert max(devs) > 100 * MAX_DEVIATION, devs


METACLIP_2 = Path(__file__).parents[1] / "fixtures" / "metaclip-2" / "reference.json"


def metaclip_2_inputs() -> list[ModelInput]:
    return [
        ModelInput(t, reference_inputs.image(k) if k else None, i)
        for t, k, i in reference_inputs.EMBED_INPUTS + reference_inputs.TRUNCATION_INPUTS
    ]


@pytest.mark.slow
def test_metaclip_2_matches_the_documented_usage(tmp_path, monkeypatch):
    """MetaCLIP 2 through the recipe's own loader (AutoModel / AutoTokenizer / AutoImageProcessor of the folder)
    against tests/fixtures/metaclip-2/reference.json (run_dual_tower_reference.py --metaclip-2, NOTE.md there):
    identical ids, 1 - cos <= 1e-6 per fused vector."""
    from model_adapters.models import detect
    from model_adapters.models.resolve import from_name
    from tests.doubles import tiny_text

    ref = json.loads(METACLIP_2.read_text())
    folder = tiny_text.save_metaclip_2(str(tmp_path / "metaclip2"))
    reader = lambda name: str(Path(folder) / name) if (Path(folder) / name).is_file() else None  # noqa: E731
    recipe, options, _ = detect.detect(reader, where=folder)
    assert recipe.name == "metaclip-2" and options == {"max_length": ref["max_length"]}  # by its model_type
    assert from_name(folder).identity.recipe == "metaclip-2"
    enc = load_encoder(get_entry("metaclip-2-worldwide-huge"), model_path=folder, dtype="float32")
    assert type(enc.model).__name__ == "MetaClip2Model"
    assert float(sum(p.detach().double().sum() for p in enc.model.parameters())) == pytest.approx(
        ref["weights_sum"], rel=1e-9
    )
    fed = record_text_ids(enc, monkeypatch)
    out = np.concatenate([enc.encode_queries([item]) for item in metaclip_2_inputs()])
    assert fed == [ids for ids in ref["input_ids"] if ids]
    gap = one_minus_cos(out, ref["vectors"])  # an input with neither text nor image: zero on both sides
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["positions", "pooling"])
def test_metaclip_2_fixture_fails_when_a_rule_changes(tmp_path, rule):
    """Text positions one off after the first token, or the mean of the text states instead of the first `</s>`.
    No mask rule applies: the text tower is causal and pools at its first `</s>`, which no padding precedes."""
    from tests.doubles import tiny_text
    from tests.fixture_mutations import mutation, sequential

    folder = tiny_text.save_metaclip_2(str(tmp_path / "metaclip2"))
    enc = load_encoder(get_entry("metaclip-2-worldwide-huge"), model_path=folder, dtype="float32")
    text = enc.model.text_model
    with mutation(rule, decoder=text, states=text, default=sequential, field="pooler_output"):
        out = np.concatenate([enc.encode_queries([item]) for item in metaclip_2_inputs()])
    gap = one_minus_cos(out, json.loads(METACLIP_2.read_text())["vectors"])
    assert gap.max() > MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
def test_metaclip_2_mask_is_unobservable(tmp_path):
    """All inputs in one right-padded batch with the text mask dropped still give the fixture's vectors: causal
    attention and pooling at the first `</s>` keep every padded position out of the embedding."""
    from tests.doubles import tiny_text
    from tests.fixture_mutations import dropped_mask

    folder = tiny_text.save_metaclip_2(str(tmp_path / "metaclip2"))
    enc = load_encoder(get_entry("metaclip-2-worldwide-huge"), model_path=folder, dtype="float32")
    with dropped_mask(enc.model.text_model):
        out = enc.encode_queries(metaclip_2_inputs())
    gap = one_minus_cos(out, json.loads(METACLIP_2.read_text())["vectors"])
    assert gap.max() <= MAX_ONE_MINUS_COS, gap


@pytest.mark.slow
def test_bge_vl_clip_matches_its_remote_encode(tmp_path, monkeypatch):
    """BGE-VL-CLIP's remote `encode` (tests/fixtures/bge-vl/reference.json, NOTE.md there) equals the clip dual tower
    on the same CLIPModel weights; its config (model_type clip + auto_map) is chosen by Hub id, not taken for EVA-CLIP."""

    ref = json.loads((Path(__file__).parents[1] / "fixtures" / "bge-vl" / "reference.json").read_text())
    model, tok, proc = tiny.tiny_clip(0)
    for part in (model, tok, proc):
        part.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "modeling_MMRet_CLIP.CLIPModel"}  # as the Hub repositories' config.json
    (tmp_path / "config.json").write_text(json.dumps(config))
    reader = lambda name: str(tmp_path / name) if (tmp_path / name).is_file() else None  # noqa: E731
    assert detect.detect(reader, where="m", hub_id="BAAI/BGE-VL-base")[0].name == "bge-vl-clip"
    with pytest.raises(TriadError, match=r"recipe bge-vl-clip-folder .*: a folder whose config.json auto_map loads"):
        detect.detect(reader, where="m")  # a local copy: refused with BGE-VL's own reason, not EVA-CLIP's
    enc = load_encoder(get_entry("bge-vl-base"), model_path=str(tmp_path), dtype="float32")
    assert float(sum(p.detach().double().sum() for p in enc.model.parameters())) == pytest.approx(
        ref["weights_sum"], rel=1e-9
    )
    enc.max_length = 256  # the tiny CLIP's positions: their encode() never cuts (TRUNCATION_INPUTS fail there)
    fed = record_text_ids(enc, monkeypatch)
    out = encode_each(enc, reference_inputs.EMBED_INPUTS)
    assert fed == [ids for ids in ref["input_ids"] if ids]
    devs = deviations(out, np.array(ref["vectors"]))
    assert max(devs) <= MAX_DEVIATION, devs
    mutate(enc, "per-tower L2 before the sum", monkeypatch)  # their encode_multimodal sums unnormalized projections
    assert max(deviations(encode_each(enc, reference_inputs.EMBED_INPUTS), np.array(ref["vectors"]))) > 1e-2
