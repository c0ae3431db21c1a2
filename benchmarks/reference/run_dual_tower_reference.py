# ruff: noqa: E402  (imports follow the path setup)
"""CLIP / SigLIP / SigLIP 2 reference vectors: transformers' documented usage and, for SigLIP's text, big_vision's
own preprocessing written out; independent of our adapter.

CLIP (CLIPModel docs): `tokenizer(texts, padding=True, truncation=True, max_length=77)`, `get_text_features(**enc)`
(ids and mask); `image_processor(images=...)`, `get_image_features(**pixels)`.
SigLIP 2 text, as google-research/big_vision @ 0127fb6 feeds it: `SigLIP2_demo.ipynb`'s
`lower(key="text")|tok(length=64, model="gemma", bos="no", eos="sticky", key="text")` — `tf.strings.lower` (ASCII),
the Gemma tokens with no BOS and EOS appended (`pp/proj/paligemma/ops.py` `get_tokenize`), cut to 63 + EOS when
longer, padded with the pad id at the end (`get_tolen`) — then the text tower called on the ids alone
(`models/proj/image_text/text_transformer.py`: no mask argument, pooled at the last position). Here the tiny
checkpoint's own tokenizer gives the tokens (`add_special_tokens=False`) and the rest is done by hand. SigLIP 2
images: the checkpoint's image processor (FixRes `SiglipImageProcessor`; NaFlex `Siglip2ImageProcessor`, whose
patch mask and grid shapes go to the image tower), as transformers' SigLIP 2 docs use it.
SigLIP 1 text, as big_vision's `SigLIP_demo.ipynb` feeds it: `tokenize(max_len=64, eos="sticky", pad_value=1,
inkey="text")` (`pp/ops_text.py` `get_pp_tokenize`): no lower-casing, padded with T5's EOS (id 1; the tiny
tokenizer's EOS here).
Paper rules on top: instruction prepended as "{instruction} {text}" (B.3); the unnormalized projected text and
image features added 1:1, then L2 (B.2.1); a missing side contributes nothing.
Usage (from the repository root): python run_dual_tower_reference.py OUT.json
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

from tests import reference_inputs as R
from tests.doubles import tiny

SIGLIP2_LENGTH = 64  # big_vision SigLIP2_demo.ipynb SEQLEN


def features(out):
    return out if torch.is_tensor(out) else out.pooler_output


def bv_lower(text: str) -> str:
    """big_vision's `lower` op: `tf.strings.lower` with its default encoding '', which lower-cases ASCII only."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def bv_tokens(tok, text: str, pad: int) -> list[int]:
    """big_vision's `tok(length=64, bos="no", eos="sticky")` / `tokenize(max_len=64, eos="sticky", pad_value=...)`:
    tokens + EOS, cut to 63 + EOS, padded with `pad` at the end."""
    ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    if len(ids) > SIGLIP2_LENGTH:
        return ids[: SIGLIP2_LENGTH - 1] + [ids[-1]]
    return ids + [pad] * (SIGLIP2_LENGTH - len(ids))


def text_features(arch: str, model, tok, text: str):
    """(ids, projected features) of one text."""
    if arch == "clip":
        enc = tok([text], padding=True, truncation=True, max_length=77, return_tensors="pt")
        return enc["input_ids"][0].tolist(), features(model.get_text_features(**enc))[0]
    if arch == "siglip":  # SigLIP_demo.ipynb: no lower-casing, padded with T5's EOS (pad_value=1)
        ids = bv_tokens(tok, text, tok.eos_token_id)
    else:  # SigLIP2_demo.ipynb: lower, Gemma's pad
        ids = bv_tokens(tok, bv_lower(text), tok.pad_token_id)
    return ids, features(model.get_text_features(input_ids=torch.tensor([ids])))[0]


def reference(arch: str) -> dict:
    model, tok, proc = BUILDERS[arch](0)
    rows, ids = [], []
    for text, kind, instruction in R.EMBED_INPUTS + R.TRUNCATION_INPUTS:
        text = f"{instruction} {text}" if instruction and text else (instruction or text)
        total = torch.zeros(model.config.projection_dim if arch == "clip" else model.config.text_config.hidden_size)
        row_ids = []
        with torch.no_grad():
            if text:
                row_ids, vec = text_features(arch, model, tok, text)
                total += vec
            if kind:
                pixels = proc(images=[Image.open(io.BytesIO(R.image(kind))).convert("RGB")], return_tensors="pt")
                total += features(model.get_image_features(**pixels))[0]
        rows.append((total / total.norm()).tolist() if total.norm() > 0 else total.tolist())
        ids.append(row_ids)
    weights = float(sum(p.detach().double().sum() for p in model.parameters()))
    return {"input_ids": ids, "vectors": rows, "weights_sum": weights, "class": type(model).__name__}


BUILDERS = {
    "clip": tiny.tiny_clip,
    "siglip": tiny.tiny_siglip,
    "siglip2": tiny.tiny_siglip2,
    "siglip2-naflex": tiny.tiny_siglip2_naflex,
}


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
    import PIL
    import tokenizers
    import transformers

    out = {arch: reference(arch) for arch in BUILDERS}
    out["versions"] = {m.__name__: m.__version__ for m in (transformers, torch, PIL, tokenizers)}
    with open(sys.argv[1], "w") as handle:
        json.dump(out, handle)
    print({a: [len(i) for i in out[a]["input_ids"]] for a in BUILDERS})
