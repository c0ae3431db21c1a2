# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run Ops-MM-embedding-v1's `OpsMMEmbeddingV1` (the Hub remote file ops_mm_embedding_v1.py, as vendored verbatim by
ssu-humane/VILLAIN src/models/ops_mm_embedding_v1.py @ 40f1d38a) on the tiny Qwen2-VL; write the fixture JSON.

Usage: python run_ops_mm_official.py TINY_FOLDER OUT.json DIR_WITH_ops_mm_embedding_v1.py
(transformers 5.24 scratch venv: the file pins nothing and uses AutoModelForImageTextToText.) The inputs go through
`embed(texts, images, instruction=[...])` with per-input instructions (None -> its default system text), one batch of
the inputs with an image and one of those without (its processor call cannot take a batch that mixes both).
Substitutions (NOTE.md): float32 for bfloat16; attn_implementation="sdpa"; Qwen2VLProcessor without video processor
(qwen3_vl_official_env.py)."""

import io
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
folder, out, code = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [here, code, os.path.dirname(os.path.dirname(here))]
import ops_mm_embedding_v1 as OPS
import qwen3_vl_official_env  # noqa: F401  (Qwen2VLProcessor without video processor)
import torch
from driver_versions import versions
from PIL import Image

from tests import reference_inputs as R

_fp = OPS.AutoModelForImageTextToText.from_pretrained


def _float32(name, **kw):  # substitution: CPU float32 instead of the hard-coded bfloat16
    kw["torch_dtype"] = torch.float32
    return _fp(name, **kw)


OPS.AutoModelForImageTextToText.from_pretrained = _float32

model = OPS.OpsMMEmbeddingV1(folder, device="cpu", attn_implementation="sdpa")
captured = {}
call = model.processor.__class__.__call__


def spy(self, *a, **k):  # keeps the batch embed() builds, for its token ids
    result = call(self, *a, **k)
    captured["enc"] = result
    return result


model.processor.__class__.__call__ = spy
items = R.EMBED_INPUTS
ids, vectors, grids = [None] * len(items), [None] * len(items), []
for with_image in (True, False):
    members = [n for n, (_, k, _) in enumerate(items) if bool(k) == with_image]
    texts = [items[n][0] for n in members]
    images = [[Image.open(io.BytesIO(R.image(items[n][1])))] for n in members] if with_image else None
    instructions = [items[n][2] or model.default_instruction for n in members]
    vec = model.embed(texts=texts, images=images, instruction=instructions)
    enc = captured["enc"]
    for row, n in enumerate(members):
        ids[n] = [int(x) for x, m in zip(enc["input_ids"][row], enc["attention_mask"][row]) if m]
        vectors[n] = [round(x, 7) for x in vec[row].tolist()]
    grids += enc["image_grid_thw"].tolist() if with_image else []
main = {
    "prompts": [R.collapse_image_pads(model.processor.tokenizer.decode(r)) for r in ids],
    "input_ids": ids,
    "image_grid_thw": grids,
    "vectors": vectors,
}
ip = model.processor.image_processor
result = {
    "main": main,
    "padding_side": model.processor.tokenizer.padding_side,
    "processor_pixels": [ip.size["shortest_edge"], ip.size["longest_edge"]],
    "weights_sum": float(sum(p.detach().double().sum() for p in model.base_model.model.parameters())),
}
result["versions"] = versions()
json.dump(result, open(out, "w"), separators=(",", ":"))
print("ok", [len(i) for i in ids], result["processor_pixels"])
