# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run RzenEmbed's own `RzenEmbed` class (rzen_embed_inference.py @ b07eb547) on the tiny Qwen2-VL; write the fixture.

Usage: python run_rzenembed_official.py TINY_FOLDER OUT.json RZENEMBED_CHECKOUT
(transformers 4.51.3 scratch venv: the repository pins none; its code needs `Qwen2VLForConditionalGeneration.model`
to be the text decoder with `embed_tokens`, which transformers 4.52 changed.) Inputs are grouped by instruction and
each group goes through `get_fused_embeddings(texts, images, instruction=...)` as one batch (TRIAD B.3: RzenEmbed's
instruction field); the truncation case uses `RzenEmbed(max_length=96)`. Substitutions (NOTE.md): bfloat16 ->
float32 (`from_pretrained` hard-codes it), attn_implementation="sdpa" (a constructor argument), the folder copied into
the 4.x layout (tiny_legacy.py)."""

import io
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
folder, out, checkout = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [here, checkout, os.path.dirname(os.path.dirname(here))]
import rzen_embed_inference as RZ
import torch
from driver_versions import versions
from PIL import Image
from tiny_legacy import legacy_qwen2_vl_folder

from tests import reference_inputs as R

_fp = RZ.Qwen2VLForConditionalGeneration.from_pretrained.__func__


def _float32(cls, name, **kw):  # substitution: CPU float32 instead of the hard-coded bfloat16
    kw["torch_dtype"] = torch.float32
    return _fp(cls, name, **kw)


RZ.Qwen2VLForConditionalGeneration.from_pretrained = classmethod(_float32)

legacy = legacy_qwen2_vl_folder(folder, folder.rstrip("/") + "_4x")
captured = {}  # the batch the authors' embed() builds with its processor, kept for its token ids


def spy_on(processor):
    call = processor.__class__.__call__

    def spy(self, *a, **k):
        result = call(self, *a, **k)
        captured["enc"] = result
        return result

    processor.__class__.__call__ = spy


def run(items, **kw):
    rzen = RZ.RzenEmbed(model_path=legacy, device="cpu", attn_implementation="sdpa", **kw)
    if not hasattr(rzen.processor.__class__.__call__, "__wrapped_by_driver__"):
        spy_on(rzen.processor)
        rzen.processor.__class__.__call__.__wrapped_by_driver__ = True
    vectors, ids, prompts = [None] * len(items), [None] * len(items), [None] * len(items)
    groups = {}
    for n, (_, _, instruction) in enumerate(items):
        groups.setdefault(instruction, []).append(n)
    for instruction, members in groups.items():
        texts = [items[n][0] for n in members]
        images = [Image.open(io.BytesIO(R.image(items[n][1]))) if items[n][1] else None for n in members]
        vec = rzen.get_fused_embeddings(texts=texts, images=images, instruction=instruction, batch_size=len(members))
        enc = captured["enc"]
        for row, n in enumerate(members):
            vectors[n] = [round(x, 7) for x in vec[row].tolist()]
            ids[n] = [int(x) for x, m in zip(enc["input_ids"][row], enc["attention_mask"][row]) if m]
            prompts[n] = R.collapse_image_pads(rzen.processor.tokenizer.decode(ids[n]))
    return {
        "prompts": prompts,
        "input_ids": ids,
        "vectors": vectors,
        "padding_side": rzen.processor.tokenizer.padding_side,
        "processor_pixels": [rzen.processor.image_processor.min_pixels, rzen.processor.image_processor.max_pixels],
    }, rzen


main, rzen = run(R.EMBED_INPUTS)
truncation, _ = run(R.TRUNCATION_INPUTS[:1], max_length=R.TRUNCATION_MAX_LENGTH)
result = {
    "main": main,
    "truncation": truncation,
    "weights_sum": float(
        sum(p.detach().double().sum() for p in rzen.base.parameters())
        - sum(p.detach().double().sum() for p in rzen.base.lm_head.parameters())
    ),
}
result["versions"] = versions()
json.dump(result, open(out, "w"), separators=(",", ":"))
print("ok", [len(i) for i in main["input_ids"]], [len(i) for i in truncation["input_ids"]], main["processor_pixels"])
