# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run UME-R1's discriminative pooling on tiny checkpoints whose templates put <disc_emb> in the last positions.

Usage: python run_ume_r1_tail_official.py ROOT OUT.json EXCERPT_DIR
(transformers 4.52.3 + qwen-vl-utils 0.0.14 scratch venv, no system site-packages). ROOT holds one folder per
section of tests/ume_r1_tail.py TAIL_TEMPLATES, written by the project's own environment with
`save_tail_checkpoint(section, ROOT/section)`. EXCERPT_DIR holds `ume_r1_eval_excerpt.py`: `get_disc_embedding_idx`,
`normalize_reps` and the "disc" branch of `encode_embeddings` copied verbatim from src/eval/VLM2Vec/eval_twomode.py
@ 55e55126 (the repository could not be fetched, only read file by file). Inputs are built as
run_ume_r1_official.py builds them (the README's discriminative example, the eval's left padding, TRIAD's 28x28
white placeholder on pure-text inputs and plain-text instruction prefix). Substitutions (NOTE.md): sdpa + float32
for flash_attention_2 + bfloat16; each folder copied into the transformers 4.x layout (tiny_legacy.py); the
processor built from its tokenizer, image processor and chat template without a video processor; a torchvision
stub while qwen_vl_utils is imported (it uses torchvision for videos only)."""

import importlib.metadata
import io
import json
import os
import sys
import types

here = os.path.dirname(os.path.abspath(__file__))
root, out, excerpt = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [here, excerpt, os.path.dirname(os.path.dirname(here))]
from transformers.utils import import_utils

assert not import_utils.is_torchvision_available()
tv = types.ModuleType("torchvision")
tv.__version__ = "0.0.0-stub"
tv.io = types.ModuleType("torchvision.io")
tv.transforms = types.ModuleType("torchvision.transforms")
tv.transforms.InterpolationMode = type("InterpolationMode", (), {"BICUBIC": 3})
sys.modules.update({"torchvision": tv, "torchvision.io": tv.io, "torchvision.transforms": tv.transforms})
from qwen_vl_utils import process_vision_info

for k in ("torchvision", "torchvision.io", "torchvision.transforms"):
    del sys.modules[k]
import PIL
import tokenizers
import torch
import transformers
from PIL import Image
from tiny_legacy import legacy_qwen2_vl_folder
from transformers import AutoImageProcessor, AutoTokenizer, Qwen2VLForConditionalGeneration
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import apply_rotary_pos_emb_flashatt  # noqa: F401 (eval's)
from transformers.models.qwen2_vl.processing_qwen2_vl import Qwen2VLProcessor
from transformers.processing_utils import ProcessorMixin
from ume_r1_eval_excerpt import encode_disc, get_disc_embedding_idx

from tests import reference_inputs as R

PLACEHOLDER = (28, 28)  # TRIAD B.2.1: "a 28x28 white placeholder image on pure-text abstraction-track inputs"
_module = ProcessorMixin.get_possibly_dynamic_module
ProcessorMixin.get_possibly_dynamic_module = staticmethod(  # the class check accepts video_processor=None
    lambda name: type(None) if "VideoProcessor" in str(name) else _module(name)
)


def message(text, kind, instruction):
    text = f"{instruction} {text}" if instruction and text else (instruction or text)  # TRIAD B.3: plain-text prefix
    content = []
    if kind:
        content.append({"type": "image", "image": Image.open(io.BytesIO(R.image(kind)))})
    elif text:
        content.append({"type": "image", "image": Image.new("RGB", PLACEHOLDER, (255, 255, 255))})
    content.append({"type": "text", "text": text + "\n<disc_emb>\n"})  # the README's discriminative prompt
    return [{"role": "user", "content": content}]


def processor_of(path):
    template = json.load(open(os.path.join(path, "chat_template.json")))["chat_template"]
    tok = AutoTokenizer.from_pretrained(path)
    return Qwen2VLProcessor(
        image_processor=AutoImageProcessor.from_pretrained(path),
        tokenizer=tok,
        video_processor=None,
        chat_template=template,
    ), template


def section(path):
    legacy = legacy_qwen2_vl_folder(path, path.rstrip("/") + "_4x")
    model = Qwen2VLForConditionalGeneration.from_pretrained(
        legacy, torch_dtype=torch.float32, attn_implementation="sdpa"
    ).eval()
    processor, template = processor_of(legacy)
    processor.tokenizer.padding_side = "left"  # eval_twomode.py main()
    messages = [message(*item) for item in R.EMBED_INPUTS]
    texts = [processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in messages]
    image_inputs, video_inputs = process_vision_info(messages)
    inputs = processor(text=texts, images=image_inputs, videos=video_inputs, padding=True, return_tensors="pt")
    with torch.no_grad():
        vectors = encode_disc(model, inputs, processor)
    disc = processor.tokenizer.get_vocab()["<disc_emb>"]
    ids = [[int(x) for x, m in zip(r, a) if m] for r, a in zip(inputs["input_ids"], inputs["attention_mask"])]
    weights = float(sum(p.detach().double().sum() for p in model.model.parameters()))
    return (
        {
            "template": template,
            "prompts": [R.collapse_image_pads(processor.tokenizer.decode(r)) for r in ids],
            "input_ids": ids,
            "padded_length": int(inputs["input_ids"].shape[1]),
            "image_grid_thw": inputs["image_grid_thw"].tolist(),
            "embedding_idx": get_disc_embedding_idx(inputs["input_ids"], disc),
            "vectors": [[round(x, 8) for x in v] for v in vectors.tolist()],
        },
        disc,
        weights,
    )


sections, sums, disc_ids = {}, set(), set()
for name in sorted(os.listdir(root)):
    if name.endswith("_4x") or not os.path.isdir(os.path.join(root, name)):
        continue
    sections[name], disc, weights = section(os.path.join(root, name))
    sums.add(weights)
    disc_ids.add(disc)
assert len(sums) == 1 and len(disc_ids) == 1, (sums, disc_ids)
result = {
    "sections": sections,
    "disc_emb_id": disc_ids.pop(),
    "padding_side": "left",
    "weights_sum": sums.pop(),
    "versions": {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "tokenizers": tokenizers.__version__,
        "Pillow": PIL.__version__,
        "qwen-vl-utils": importlib.metadata.version("qwen-vl-utils"),
    },
}
json.dump(result, open(out, "w"), separators=(",", ":"))
print("ok", {k: v["embedding_idx"] for k, v in sections.items()})
