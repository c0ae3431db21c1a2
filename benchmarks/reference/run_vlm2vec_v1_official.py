# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run VLM2Vec's evaluation of V1 checkpoints (experiments/public/eval/eval_vlm2vecv1_8gpu.sh @ 6e1e1d4:
--pooling eos --normalize true --image_resolution high --resize_use_processor false) on the tiny Qwen2-VL written by
tests.doubles.tiny.save_tiny_qwen2_vl; transformers 4.52.3 scratch venv.
Usage: python run_vlm2vec_v1_official.py TINY_FOLDER OUT.json VLM2VEC_CHECKOUT

Images go through the eval collator (`MultimodalEvalDataCollator._get_batch_inputs`: Image.open, then
`image.resize((1344, 1344))` — the eval datasets' `RESOLUTION_MAPPING["high"]`), then `Qwen2_VL_process_fn` with the
processor of `load_processor` (size 28²·4 … 28²·1280) and `MMEBModel` pooling. Batches of at most one image
(`reference_inputs.VLM2VEC_V1_BATCHES`): a 980x980 image is 4900 vision patches, and the vendored Qwen2-VL vision
tower's attention mask over several of them does not fit in this machine's memory. Substitutions as
run_vlm2vec_official.py (NOTE.md)."""

import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
folder, out, checkout = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [here, checkout, os.path.dirname(os.path.dirname(here))]
import torch
import vlm2vec_stub_env  # noqa: F401
from tiny_legacy import legacy_qwen2_vl_folder

legacy = legacy_qwen2_vl_folder(folder, folder.rstrip("/") + "_4x")

import src.model.model as M
import src.model.processor as P
from src.arguments import DataArguments, ModelArguments
from src.data.collator.eval_collator import MultimodalEvalDataCollator
from src.data.eval_dataset.base_eval_dataset import RESOLUTION_MAPPING
from src.model.model import MMEBModel
from src.model.processor import QWEN2_VL, load_processor, process_input_text

_fp = P.backbone2model[QWEN2_VL].from_pretrained.__func__


def _from_pretrained(cls, name, **kw):  # substitution: CPU run — flash_attention_2 -> sdpa, bfloat16 -> float32
    kw["config"]._attn_implementation = "sdpa"
    kw["config"].vision_config._attn_implementation = "sdpa"
    kw["torch_dtype"] = torch.float32
    return _fp(cls, name, **kw)


P.backbone2model[QWEN2_VL].from_pretrained = classmethod(_from_pretrained)
M.backbone2model[QWEN2_VL].from_pretrained = classmethod(_from_pretrained)

from tests import reference_inputs as R

model_args = ModelArguments(model_name=legacy, pooling="eos", normalize=True, model_backbone="qwen2_vl", lora=False)
data_args = DataArguments(image_resolution="high", resize_use_processor=False)
processor = load_processor(model_args, data_args)
model = MMEBModel.load(model_args, is_trainable=False).eval()
collator = MultimodalEvalDataCollator(processor, model_args, data_args, "qry")
resolution = RESOLUTION_MAPPING[data_args.image_resolution]
texts, ids, vectors, grids = [], [], [], []
for batch in R.VLM2VEC_V1_BATCHES:
    examples = []
    for text, kind, instruction in (R.VLM2VEC_INPUTS[n] for n in batch):
        texts.append(process_input_text(instruction or "", QWEN2_VL, text, add_image_token=kind is not None))
        image = {"bytes": [R.image(kind)], "paths": [None], "resolutions": [resolution]} if kind else None
        examples.append({"query_text": [texts[-1]], "query_image": [image], "dataset_infos": {}})
    inputs, _ = collator(examples)
    with torch.no_grad():
        reps = model(qry=inputs)["qry_reps"]
    ids += [[int(x) for x, m in zip(r, a) if m] for r, a in zip(inputs["input_ids"], inputs["attention_mask"])]
    vectors += [[round(x, 7) for x in v] for v in reps.tolist()]
    grids += [row for g in inputs["image_grid_thw"] if g is not None for row in g.tolist()]
import PIL  # the versions the fixture holds for
import tokenizers
import transformers

json.dump(
    {
        "versions": {m.__name__: m.__version__ for m in (transformers, torch, PIL, tokenizers)},
        "batches": R.VLM2VEC_V1_BATCHES,
        "texts": texts,
        "input_ids": ids,
        "image_grid_thw": grids,
        "vectors": vectors,
        "resolution": list(resolution),
        "padding_side": processor.tokenizer.padding_side,
    },
    open(out, "w"),
    separators=(",", ":"),
)
print("ok", [len(i) for i in ids], grids)
