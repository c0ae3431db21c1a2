"""CLIP and SigLIP-2 adapters against transformers' documented usage + the paper's fusion rule (B.2.1).

tests/fixtures/dual_tower/reference.json was written by benchmarks/reference/run_dual_tower_reference.py (see the
NOTE.md beside it), which follows the CLIPModel/SiglipModel docs directly and shares no code with our adapter.
Required: identical token ids, cosine >= 0.9999 per fused vector (an input with neither text nor image: both zero).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model_adapters.mocks import tiny
from model_adapters.models.registry import get_entry, load_encoder
from model_adapters.protocol import ModelInput
from tests import reference_inputs
from tests.fixture_mutations import MAX_ONE_MINUS_COS, one_minus_cos

FIXTURE = Path(__file__).parent / "fixtures" / "dual_tower" / "reference.json"
MIN_COSINE = 0.9999
# The public entries' text settings, applied to the tiny models of the same classes.
CASES = {
    "clip": ("clip-vit-b32", "tiny-random-clip", tiny.tiny_clip),
    "siglip": ("siglip2", "tiny-random-siglip", tiny.tiny_siglip),
}


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(FIXTURE.read_text())


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


@pytest.mark.slow
@pytest.mark.parametrize("arch", sorted(CASES))
def test_dual_tower_matches_the_documented_usage(reference, arch, monkeypatch):
    public, tiny_name, builder = CASES[arch]
    model = builder(0)[0]
    assert float(sum(p.detach().double().sum() for p in model.parameters())) == pytest.approx(
        reference["weights_sum"][arch], rel=1e-9
    )
    enc = load_encoder(get_entry(tiny_name))
    opts = get_entry(public).options
    enc.max_length = int(opts["max_length"])  # the public entry's truncation length
    enc.padding = opts.get("padding", True)
    enc.lowercase = bool(opts.get("lowercase", False))
    items = reference_inputs.EMBED_INPUTS + reference_inputs.TRUNCATION_INPUTS
    batch = [ModelInput(t, reference_inputs.image(k) if k else None, i) for t, k, i in items]
    ref = reference[arch]
    fed: list[list[int]] = []  # the token ids the adapter actually gives the text tower
    text_tower = enc.model.get_text_features

    def recording(**kwargs):
        fed.extend(kwargs["input_ids"].tolist())
        assert arch != "siglip" or "attention_mask" not in kwargs  # SigLIP: no mask, as trained
        return text_tower(**kwargs)

    monkeypatch.setattr(enc.model, "get_text_features", recording)  # restored at the end: the tiny model is shared
    out = np.concatenate([enc.encode_queries([item]) for item in batch])  # one at a time: no batch padding
    assert fed == [ids for ids in ref["input_ids"] if ids]
    expected = np.array(ref["vectors"])
    for row, (vec, exp) in enumerate(zip(out, expected, strict=True)):
        if not np.linalg.norm(exp):
            assert not np.linalg.norm(vec), row
            continue
        cos = float(vec @ exp / np.linalg.norm(vec) / np.linalg.norm(exp))
        assert cos >= MIN_COSINE, (row, cos)


METACLIP_2 = Path(__file__).parent / "fixtures" / "metaclip-2" / "reference.json"


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
    from model_adapters.mocks import tiny_text
    from model_adapters.models import detect
    from model_adapters.models.resolve import from_name

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
    from model_adapters.mocks import tiny_text
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
    from model_adapters.mocks import tiny_text
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
    from model_adapters.models import detect

    ref = json.loads((Path(__file__).parent / "fixtures" / "bge-vl" / "reference.json").read_text())
    model, tok, proc = tiny.tiny_clip(0)
    for part in (model, tok, proc):
        part.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "modeling_MMRet_CLIP.CLIPModel"}  # as the Hub repositories' config.json
    (tmp_path / "config.json").write_text(json.dumps(config))
    reader = lambda name: str(tmp_path / name) if (tmp_path / name).is_file() else None  # noqa: E731
    assert detect.detect(reader, where="m", hub_id="BAAI/BGE-VL-base")[0].name == "bge-vl-clip"
    enc = load_encoder(get_entry("bge-vl-base"), model_path=str(tmp_path), dtype="float32")
    assert float(sum(p.detach().double().sum() for p in enc.model.parameters())) == pytest.approx(
        ref["weights_sum"], rel=1e-9
    )
    enc.max_length = 256  # the tiny CLIP's positions: their encode() never cuts (TRUNCATION_INPUTS fail there)
    fed = record_text_ids(enc, monkeypatch)
    out = np.concatenate(
        [
            enc.encode_queries([ModelInput(t, reference_inputs.image(k) if k else None, i)])
            for t, k, i in reference_inputs.EMBED_INPUTS
        ]
    )
    assert fed == [ids for ids in ref["input_ids"] if ids]
    for row, (vec, exp) in enumerate(zip(out, np.array(ref["vectors"]), strict=True)):
        if not np.linalg.norm(exp):
            assert not np.linalg.norm(vec), row
            continue
        assert float(vec @ exp / np.linalg.norm(vec) / np.linalg.norm(exp)) >= MIN_COSINE, row
