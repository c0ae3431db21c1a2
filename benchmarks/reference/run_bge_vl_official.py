# ruff: noqa: E402  (driver for the authors' code in a scratch venv; imports follow the path setup)
"""Run BGE-VL-CLIP's own `CLIPModel.encode` (FlagOpen/FlagEmbedding research/BGE_VL/modeling_MMRet_CLIP.py, the
remote code of BAAI/BGE-VL-base / -large) on the tiny CLIP of tests.doubles.tiny (seed 0) over
EMBED_INPUTS; transformers 4.57.1 scratch venv (tests/fixtures/bge-vl/NOTE.md).
Usage: python run_bge_vl_official.py TINY_CLIP_FOLDER OUT.json DIR_WITH_modeling_MMRet_CLIP.py"""

import json
import os
import shutil
import sys
import tempfile

FOLDER, OUT, CODE = sys.argv[1:4]
sys.path[:0] = [CODE, os.getcwd()]
import torch
from modeling_MMRet_CLIP import CLIPModel
from transformers import AutoImageProcessor, AutoTokenizer, BatchFeature

from tests import reference_inputs as R

# The folder written by transformers 5.24, readable by 4.57: the tokenizer class and special-token key of 4.x.
conv = tempfile.mkdtemp()
for name in os.listdir(FOLDER):
    shutil.copy(os.path.join(FOLDER, name), conv)
conf = json.load(open(os.path.join(conv, "tokenizer_config.json")))
conf["tokenizer_class"] = "PreTrainedTokenizerFast"
conf["additional_special_tokens"] = conf.pop("extra_special_tokens", [])
conf["model_input_names"] = ["input_ids", "attention_mask"]  # as CLIPTokenizer: no token_type_ids
json.dump(conf, open(os.path.join(conv, "tokenizer_config.json"), "w"))

model = CLIPModel.from_pretrained(conv).eval()
tokenizer, image_processor = AutoTokenizer.from_pretrained(conv), AutoImageProcessor.from_pretrained(conv)


class Processor:
    """Substitution for `set_processor`'s CLIPProcessor (it type-checks for CLIPTokenizer, which the tiny byte-level
    tokenizer is not): the same two calls, `tokenizer(text, ...)` and `image_processor(images, ...)`."""

    def __call__(self, text=None, images=None, return_tensors="pt", padding=False):
        if text is not None:
            return tokenizer(text, return_tensors=return_tensors, padding=padding)
        return BatchFeature(image_processor(images=images, return_tensors=return_tensors))


model.processor = Processor()
rows, ids = [], []
with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    for n, (text, kind, instruction) in enumerate(R.EMBED_INPUTS):  # no cut in their code: TRUNCATION_INPUTS fail
        text = R.joined(text, instruction)  # paper B.3: no instruction field, prepended
        path = None
        if kind:
            path = os.path.join(tmp, f"{n}.png")
            open(path, "wb").write(R.image(kind))
        if not text and not path:
            rows.append([0.0] * model.config.projection_dim)
            ids.append([])
            continue
        vec = model.encode(images=[path] if path else None, text=[text] if text else None)[0]
        rows.append(vec.float().tolist())
        ids.append(tokenizer([text], padding=True)["input_ids"][0] if text else [])
weights = float(sum(p.detach().double().sum() for p in model.parameters()))
import PIL  # the versions the fixture holds for
import tokenizers
import transformers

versions = {m.__name__: m.__version__ for m in (transformers, torch, PIL, tokenizers)}
json.dump({"input_ids": ids, "vectors": rows, "weights_sum": weights, "versions": versions}, open(OUT, "w"))
print([len(i) for i in ids])
