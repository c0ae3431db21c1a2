# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run LamRA-Ret's M-BEIR evaluation pipeline (Code-kunkun/LamRA @ 72863991) on the tiny Qwen2-VL; write the fixture.

Usage: python run_lamra_official.py TINY_FOLDER OUT.json LAMRA_CHECKOUT   (transformers 4.45.2 scratch venv)

The pieces of eval/eval_mbeir.py, in its order: `Qwen2VLRetForConditionalGeneration.from_pretrained`, the processor
of the (unchanged) base folder, `tokenizer.model_max_length = 1024` (its default), `add_embed_token` (nested in
`eval()`: taken from the file with `ast`, not copied), dataset/datasets_mbeir.py `format_string`,
`_prepare_data_dict` and `construct_messages` (query and candidate datasets), collators/mbeir_eval.py
`MbeirQueryDataCollator` / `MbeirCandidateDataCollator`, `model(**batch, inference=True)`, `F.normalize`. The
benchmark instruction is prepended as M-BEIR prepends its query prompt: `format_string(f"{prompt} {text}")`.
Substitutions (NOTE.md): float32 for bfloat16; torchvision stubbed (imported by the vendored qwen2_vision_process,
used for videos only); the folder copied into the 4.x layout (tiny_legacy.py)."""

import ast
import json
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
folder, out, checkout = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [here, checkout, os.path.dirname(os.path.dirname(here))]
import torch
import torch.nn.functional as F
import vlm2vec_stub_env  # noqa: F401  (torchvision & co. stubbed; transformers has already recorded their absence)
from collators.mbeir_eval import MbeirCandidateDataCollator, MbeirQueryDataCollator
from dataset.datasets_mbeir import CandidateDataset, QueryDataset, _prepare_data_dict, format_string
from driver_versions import versions
from models.qwen2_vl import Qwen2VLRetForConditionalGeneration
from tiny_legacy import legacy_qwen2_vl_folder
from transformers import AutoProcessor

from tests import reference_inputs as R


def nested_function(path, name):
    """A function defined anywhere in the authors' file, compiled from their source (not copied here)."""
    tree = ast.parse(open(path).read())
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    scope = {}
    exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), scope)
    return scope[name]


legacy = legacy_qwen2_vl_folder(folder, folder.rstrip("/") + "_4x")
model = Qwen2VLRetForConditionalGeneration.from_pretrained(legacy, torch_dtype=torch.float32, low_cpu_mem_usage=True)
processor = AutoProcessor.from_pretrained(legacy)
tokenizer = processor.tokenizer
tokenizer.model_max_length = 1024  # eval_mbeir.py --model_max_length default
weights_sum = float(sum(p.detach().double().sum() for n, p in model.named_parameters() if not n.startswith("lm_head")))
nested_function(os.path.join(checkout, "eval", "eval_mbeir.py"), "add_embed_token")(tokenizer, model)
model.eval()

tmp = tempfile.mkdtemp()


def data_dict(n, text, kind, instruction):
    txt = format_string(f"{instruction} {text}") if instruction else format_string(text)
    name = None
    if kind:
        name = f"{n}.png"
        open(os.path.join(tmp, name), "wb").write(R.image(kind))
    return _prepare_data_dict(txt, name, tmp)


def run(dataset, collator):
    messages = [(dataset.construct_messages(None, data_dict(n, *item)), n) for n, item in enumerate(R.EMBED_INPUTS)]
    batch = collator(messages)
    batch = {k: (v.to(model.dtype) if k == "pixel_values" else v) for k, v in batch.items()}
    with torch.no_grad():
        embed, *_ = model(**batch, inference=True)
    vectors = F.normalize(embed, dim=-1)
    ids = [[int(x) for x, m in zip(r, a) if m] for r, a in zip(batch["input_ids"], batch["attention_mask"])]
    return {
        "prompts": [R.collapse_image_pads(tokenizer.decode(r)) for r in ids],
        "input_ids": ids,
        "image_grid_thw": batch["image_grid_thw"].tolist(),
        "vectors": [[round(x, 7) for x in v] for v in vectors.tolist()],
    }


result = {
    "main": run(QueryDataset, MbeirQueryDataCollator(tokenizer=tokenizer, processor=processor)),
    "candidates": run(CandidateDataset, MbeirCandidateDataCollator(tokenizer=tokenizer, processor=processor)),
    "emb_token_ids": model.config.emb_token_ids,
    "padding_side": tokenizer.padding_side,
    "processor_pixels": [processor.image_processor.min_pixels, processor.image_processor.max_pixels],
    "weights_sum": weights_sum,
}  # of the folder's weights, before add_embed_token resizes the embeddings
result["versions"] = versions()
json.dump(result, open(out, "w"), separators=(",", ":"))
print(
    "ok",
    [len(i) for i in result["main"]["input_ids"]],
    result["emb_token_ids"],
    result["padding_side"],
    result["processor_pixels"],
)
