# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run Embed-RL's own encoding code on a tiny Qwen3-VL with <emb> and write the fixture JSON.

Usage: python run_embed_rl_official.py TINY_FOLDER OUT.json EMBED_RL_CHECKOUT
(transformers 5.24 + qwen-vl-utils 0.0.14 scratch venv; the checkout is `git archive 87b52f73 eval`).

Runs (a) the MMEB evaluation interface, eval/mmeb_eval/vlm2vec/src/model/processor.py `Qwen3_VL_process_fn` +
model.py `MMEBModel.encode_input`, on all inputs as one batch, and (b) the toy evaluation,
eval/toy_eval/image_eval.py `get_embedding`, one input at a time. Substitutions (NOTE.md): the vendored
`vlm_backbone/qwen3_vl/qwen2_vision_process.py` and `src.utils.basic_utils` / `src.arguments` are not in the
repository; MMEBModel.load's flash_attention_2 + bfloat16 -> sdpa + float32 (its non-LoRA branch, built directly);
mm_token_type_ids added from the ids where `encode_input` drops it (transformers 5.24 requires it)."""

import dataclasses
import importlib.machinery
import importlib.util
import io
import json
import os
import sys
import tempfile
import types

here = os.path.dirname(os.path.abspath(__file__))
folder, out, checkout = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [
    here,
    os.path.join(checkout, "eval", "mmeb_eval", "vlm2vec"),
    os.path.join(checkout, "eval", "toy_eval"),
    os.path.dirname(os.path.dirname(here)),
]
import qwen3_vl_official_env  # noqa: F401  (torchvision stub for qwen_vl_utils; Qwen3VLProcessor without video processor)
import qwen_vl_utils.vision_process as qvp
import torch
from PIL import Image

# --- substitutions for modules the repository does not contain ---------------------------------------------
basic = types.ModuleType("src.utils.basic_utils")
basic.print_master = print
sys.modules["src.utils.basic_utils"] = basic
args = types.ModuleType("src.arguments")
args.ModelArguments = dataclasses.make_dataclass(
    "ModelArguments", [("model_name", str, None), ("checkpoint_path", str, None)]
)
args.TrainingArguments = dataclasses.make_dataclass("TrainingArguments", [])
sys.modules["src.arguments"] = args
# vlm_backbone/qwen3_vl/qwen2_vision_process.py: qwen_vl_utils 0.0.14 (the API the eval calls: image_patch_size,
# return_video_kwargs, return_video_metadata) with the constants of the repository's other copy,
# train/contrastive_learning/dataset/qwen2_vision_process.py (= the toy eval's 128*32*32 ... 768*32*32).
shim = types.ModuleType("qwen2_vision_process_custom")
shim.__dict__.update(vars(qvp))
shim.__dict__.update(
    IMAGE_FACTOR=32,
    MIN_PIXELS=128 * 32 * 32,
    MAX_PIXELS=768 * 32 * 32,
    VIDEO_MIN_PIXELS=128 * 32 * 32,
    VIDEO_MAX_PIXELS=300 * 32 * 32,
    VIDEO_TOTAL_PIXELS=300 * 32 * 32 * 8,
    FPS=2.0,
    FPS_MIN_FRAMES=8,
    FPS_MAX_FRAMES=8,
)


class _ShimLoader(importlib.machinery.SourceFileLoader):
    def create_module(self, spec):
        return shim

    def exec_module(self, module):
        pass


_spec_from_file = importlib.util.spec_from_file_location


def _spec(name, path, *a, **k):
    if str(path).endswith(os.path.join("qwen3_vl", "qwen2_vision_process.py")) and not os.path.exists(path):
        return importlib.machinery.ModuleSpec(name, _ShimLoader(name, str(path)))
    return _spec_from_file(name, path, *a, **k)


importlib.util.spec_from_file_location = _spec
import src.model.processor as P

importlib.util.spec_from_file_location = _spec_from_file
from image_eval import get_embedding
from src.model.model import MMEBModel
from transformers import Qwen3VLForConditionalGeneration
from transformers.models.qwen3_vl import modeling_qwen3_vl as M

_forward = M.Qwen3VLModel.forward


def _with_token_types(self, input_ids=None, *a, mm_token_type_ids=None, **kw):
    if mm_token_type_ids is None and input_ids is not None:  # substitution: what the processor returns
        mm_token_type_ids = (input_ids == self.config.image_token_id).long()
    return _forward(self, input_ids, *a, mm_token_type_ids=mm_token_type_ids, **kw)


M.Qwen3VLModel.forward = _with_token_types

from tests import reference_inputs as R


def text_of(text, instruction):  # paper B.3: the instruction as a plain-text prefix (Embed-RL has no instruction field)
    return f"{instruction} {text}" if instruction and text else (instruction or text)


lm = Qwen3VLForConditionalGeneration.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
model = MMEBModel(encoder=lm, pooling="last", normalize=True).eval()
processor = P.load_processor(args.ModelArguments(model_name=folder))
items = R.EMBED_INPUTS
texts = [text_of(t, i) for t, _, i in items]
images = [Image.open(io.BytesIO(R.image(k))) if k else None for _, k, _ in items]
inputs = P.Qwen3_VL_process_fn({"text": texts, "images": images}, processor)
with torch.no_grad():
    vectors = model.encode_input(inputs)
ids = [[int(x) for x, m in zip(r, a) if m] for r, a in zip(inputs["input_ids"], inputs["attention_mask"])]
emb_id = processor.tokenizer.convert_tokens_to_ids("<emb>")
# (b) the toy evaluation, one input at a time (images written to files: it takes paths)
tmp = tempfile.mkdtemp()
toy = []
for n, ((_, k, _), text) in enumerate(zip(items, texts)):
    path = None
    if k:
        path = os.path.join(tmp, f"{n}.png")
        open(path, "wb").write(R.image(k))
    with torch.no_grad():
        toy.append(get_embedding(lm, processor, emb_id, "cpu", text=text, image_path=path).tolist())
toy_cos = [float(torch.dot(torch.tensor(a), b)) for a, b in zip(toy, vectors)]
main = {
    "prompts": [R.collapse_image_pads(processor.tokenizer.decode(r)) for r in ids],
    "input_ids": ids,
    "image_grid_thw": inputs["image_grid_thw"].tolist() if inputs["image_grid_thw"] is not None else [],
    "vectors": [[round(x, 7) for x in v] for v in vectors.tolist()],
    "toy_eval_cosine_to_mmeb": toy_cos,
}
result = {
    "main": main,
    "emb_token_id": emb_id,
    "padding_side": processor.tokenizer.padding_side,
    "weights_sum": float(sum(p.double().sum() for p in lm.model.parameters())),
}
json.dump(result, open(out, "w"), separators=(",", ":"))
print("ok", [len(i) for i in ids], "toy cos", [round(c, 6) for c in toy_cos])
