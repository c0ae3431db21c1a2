# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run VLM2Vec's own encoding path (process_input_text, Qwen2_VL_process_fn, MMEBModel pooling) on the tiny
Qwen2-VL written by tests.doubles.tiny.save_tiny_qwen2_vl; transformers 4.52.3 scratch venv.
Usage: python run_vlm2vec_official.py TINY_FOLDER OUT.json REPO_ROOT VLM2VEC_CHECKOUT"""

import io
import json
import os
import shutil
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), sys.argv[4], sys.argv[3]]  # here, VLM2Vec checkout, repo
import torch
import vlm2vec_stub_env  # noqa: F401
from PIL import Image

src, out = sys.argv[1], sys.argv[2]
conv = src + "_452"
os.makedirs(conv, exist_ok=True)
for f in ("model.safetensors", "tokenizer.json", "preprocessor_config.json"):
    shutil.copy(os.path.join(src, f), conv)
c = json.load(open(os.path.join(src, "config.json")))
flat = {k: v for k, v in c.items() if k != "text_config"}
t = c["text_config"]
flat.update({k: v for k, v in t.items() if k not in ("rope_parameters", "model_type", "layer_types")})
rp = t["rope_parameters"]
flat["rope_theta"] = rp["rope_theta"]
flat["rope_scaling"] = {"type": "mrope", "mrope_section": rp["mrope_section"]}
flat["torch_dtype"] = "float32"
json.dump(flat, open(os.path.join(conv, "config.json"), "w"))
tc = json.load(open(os.path.join(src, "tokenizer_config.json")))
tc["additional_special_tokens"] = tc.pop("extra_special_tokens")
tc["tokenizer_class"] = "Qwen2TokenizerFast"
tc.pop("backend", None)
json.dump(tc, open(os.path.join(conv, "tokenizer_config.json"), "w"))

import src.model.processor as P
from src.arguments import DataArguments, ModelArguments
from src.model.model import MMEBModel
from src.model.processor import QWEN2_VL, Qwen2_VL_process_fn, load_processor, process_input_text

# Substitution: CPU run — flash_attention_2 -> sdpa, bfloat16 -> float32 (MMEBModel.load hard-codes both).
_fp = P.backbone2model[QWEN2_VL].from_pretrained.__func__


def _from_pretrained(cls, name, **kw):
    kw["config"]._attn_implementation = "sdpa"
    kw["config"].vision_config._attn_implementation = "sdpa"
    kw["torch_dtype"] = torch.float32
    return _fp(cls, name, **kw)


P.backbone2model[QWEN2_VL].from_pretrained = classmethod(_from_pretrained)
import src.model.model as M

M.backbone2model[QWEN2_VL].from_pretrained = classmethod(_from_pretrained)

from tests import reference_inputs as R

model_args = ModelArguments(model_name=conv, pooling="last", normalize=True, model_backbone="qwen2_vl", lora=False)
data_args = DataArguments()
processor = load_processor(model_args, data_args)
model = MMEBModel.load(model_args, is_trainable=False).eval()
texts, images = [], []
for text, kind, instruction in R.VLM2VEC_INPUTS:
    img = Image.open(io.BytesIO(R.image(kind))).convert("RGB") if kind else None
    texts.append(process_input_text(instruction or "", QWEN2_VL, text, add_image_token=img is not None))
    images.append(img)
inputs = Qwen2_VL_process_fn({"text": texts, "images": images}, processor)
with torch.no_grad():
    reps = model(qry=inputs)["qry_reps"]
ids = [[int(x) for x, m in zip(r, a) if m] for r, a in zip(inputs["input_ids"], inputs["attention_mask"])]
import PIL  # the versions the fixture holds for
import tokenizers
import transformers

versions = {m.__name__: m.__version__ for m in (transformers, torch, PIL, tokenizers)}
json.dump(
    {
        "texts": texts,
        "input_ids": ids,
        "image_grid_thw": [g.tolist()[0] for g in inputs["image_grid_thw"] if g is not None],
        "vectors": reps.tolist(),
        "padding_side": processor.tokenizer.padding_side,
        "versions": versions,
    },
    open(out, "w"),
)
print("ok", [len(i) for i in ids], processor.tokenizer.padding_side)
