# ruff: noqa: E402  (imports follow the path setup)
"""CLIP / SigLIP(-2) reference vectors: transformers' documented usage, written independently of our adapter.

Per the CLIPModel / SiglipModel docs: `tokenizer(texts, padding=..., return_tensors="pt")` then
`model.get_text_features(**inputs)`; `image_processor(images=..., return_tensors="pt")` then
`model.get_image_features(**inputs)`. CLIP: padding=True, truncation at 77. SigLIP-2 (model card / docs):
lowercased text, padding="max_length", max_length=64, truncation; input_ids only (big_vision's text tower has no
mask). Paper rules on top: instruction prepended as "{instruction} {text}" (B.3); the unnormalized projected
text and image features added 1:1, then L2 (B.2.1); a missing side contributes nothing.
Usage: python run_dual_tower_reference.py OUT.json   (from the repository root)
MetaCLIP 2 (facebookresearch/MetaCLIP README "Huggingface" usage: AutoModel / AutoProcessor of the checkpoint; the
transformers MetaClip2Model docs for get_text_features / get_image_features), from a model folder:
       python run_dual_tower_reference.py --metaclip-2 FOLDER OUT.json
"""

import io
import json
import os
import sys

sys.path.insert(0, os.getcwd())
import torch
from PIL import Image

from model_adapters.mocks import tiny
from tests import reference_inputs as R

SETTINGS = {
    "clip": {"padding": True, "max_length": 77, "lower": False},
    "siglip": {"padding": "max_length", "max_length": 64, "lower": True},
}


def features(out):
    return out if torch.is_tensor(out) else out.pooler_output


def reference(arch: str) -> dict:
    model, tok, proc = (tiny.tiny_clip if arch == "clip" else tiny.tiny_siglip)(0)
    s = SETTINGS[arch]
    rows, ids = [], []
    for text, kind, instruction in R.EMBED_INPUTS + R.TRUNCATION_INPUTS:
        text = f"{instruction} {text}" if instruction and text else (instruction or text)
        total = torch.zeros(model.config.projection_dim if arch == "clip" else model.config.text_config.hidden_size)
        row_ids = []
        with torch.no_grad():
            if text:
                text = text.lower() if s["lower"] else text
                enc = tok(
                    [text], padding=s["padding"], truncation=True, max_length=s["max_length"], return_tensors="pt"
                )
                if arch == "siglip":
                    enc = {"input_ids": enc["input_ids"]}
                row_ids = enc["input_ids"][0].tolist()
                total += features(model.get_text_features(**enc))[0]
            if kind:
                pixels = proc(images=[Image.open(io.BytesIO(R.image(kind))).convert("RGB")], return_tensors="pt")
                total += features(model.get_image_features(pixel_values=pixels["pixel_values"]))[0]
        rows.append((total / total.norm()).tolist() if total.norm() > 0 else total.tolist())
        ids.append(row_ids)
    return {"input_ids": ids, "vectors": rows}


def metaclip_2(folder: str) -> dict:
    """Tokenizer (padding=True, truncation at the text config's 77 positions) and image processor of the folder."""
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    model, tok = AutoModel.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    proc = AutoImageProcessor.from_pretrained(folder)
    max_length = model.config.text_config.max_position_embeddings
    rows, ids = [], []
    for text, kind, instruction in R.EMBED_INPUTS + R.TRUNCATION_INPUTS:
        text = f"{instruction} {text}" if instruction and text else (instruction or text)
        total = torch.zeros(model.config.projection_dim)
        row_ids = []
        with torch.no_grad():
            if text:
                enc = tok([text], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
                row_ids = enc["input_ids"][0].tolist()
                total += features(model.get_text_features(**enc))[0]
            if kind:
                pixels = proc(images=[Image.open(io.BytesIO(R.image(kind))).convert("RGB")], return_tensors="pt")
                total += features(model.get_image_features(pixel_values=pixels["pixel_values"]))[0]
        rows.append((total / total.norm()).tolist() if total.norm() > 0 else total.tolist())
        ids.append(row_ids)
    import PIL
    import tokenizers
    import transformers

    weights = float(sum(p.detach().double().sum() for p in model.parameters()))
    versions = {"transformers": transformers.__version__, "torch": torch.__version__}
    versions.update(tokenizers=tokenizers.__version__, pillow=PIL.__version__)
    return {"input_ids": ids, "vectors": rows, "weights_sum": weights, "max_length": max_length, "versions": versions}


if __name__ == "__main__" and sys.argv[1] == "--metaclip-2":
    with open(sys.argv[3], "w") as handle:
        json.dump(metaclip_2(sys.argv[2]), handle)
elif __name__ == "__main__":
    out = {arch: reference(arch) for arch in SETTINGS}
    out["weights_sum"] = {
        arch: float(
            sum(
                p.detach().double().sum()
                for p in (tiny.tiny_clip if arch == "clip" else tiny.tiny_siglip)(0)[0].parameters()
            )
        )
        for arch in SETTINGS
    }
    with open(sys.argv[1], "w") as handle:
        json.dump(out, handle)
    print({a: [len(i) for i in out[a]["input_ids"]] for a in SETTINGS})
