# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run UME-R1's discriminative embedding code on a tiny Qwen2-VL with <disc_emb>/<gen_emb>; write the fixture JSON.

Usage: python run_ume_r1_official.py TINY_FOLDER OUT.json EXCERPT_DIR
(transformers 5.24 + qwen-vl-utils 0.0.14 scratch venv). EXCERPT_DIR holds `ume_r1_eval_excerpt.py`: the functions
`get_disc_embedding_idx`, `normalize_reps` and the "disc" branch of `encode_embeddings` copied verbatim from
src/eval/VLM2Vec/eval_twomode.py @ 55e55126 (the repository could not be fetched, only read file by file).
Inputs are built as the README's discriminative example builds them: user turn [image][text + "\\n<disc_emb>\\n"],
`processor.apply_chat_template(..., add_generation_prompt=True)`, `process_vision_info`, `processor(...)`, with the
eval's left padding; TRIAD's adaptations (paper B.2.1, B.3): a 28x28 white placeholder image on pure-text inputs and
the instruction as a plain-text prefix. Substitutions (NOTE.md): sdpa + float32 for flash_attention_2 + bfloat16;
Qwen2VLProcessor without video processor (qwen3_vl_official_env.py)."""

import io
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
folder, out, excerpt = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [here, excerpt, os.path.dirname(os.path.dirname(here))]
import qwen3_vl_official_env  # noqa: F401  (torchvision stub for qwen_vl_utils; Qwen2VLProcessor without video processor)
import torch
from driver_versions import versions
from PIL import Image
from qwen_vl_utils import process_vision_info
from transformers import AutoProcessor, Qwen2VLForConditionalGeneration
from ume_r1_eval_excerpt import encode_disc

from tests import reference_inputs as R

PLACEHOLDER = (28, 28)  # TRIAD B.2.1: "a 28x28 white placeholder image on pure-text abstraction-track inputs"


def message(text, kind, instruction):
    text = f"{instruction} {text}" if instruction and text else (instruction or text)  # TRIAD B.3: plain-text prefix
    content = []
    if kind:
        content.append({"type": "image", "image": Image.open(io.BytesIO(R.image(kind)))})
    elif text:
        content.append({"type": "image", "image": Image.new("RGB", PLACEHOLDER, (255, 255, 255))})
    content.append({"type": "text", "text": text + "\n<disc_emb>\n"})  # the README's discriminative prompt
    return [{"role": "user", "content": content}]


model = Qwen2VLForConditionalGeneration.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
processor = AutoProcessor.from_pretrained(folder)
processor.tokenizer.padding_side = "left"  # eval_twomode.py main()
messages = [message(*item) for item in R.EMBED_INPUTS]
texts = [processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in messages]
image_inputs, video_inputs = process_vision_info(messages)
inputs = processor(text=texts, images=image_inputs, videos=video_inputs, padding=True, return_tensors="pt")
with torch.no_grad():
    vectors = encode_disc(model, inputs, processor)
ids = [[int(x) for x, m in zip(r, a) if m] for r, a in zip(inputs["input_ids"], inputs["attention_mask"])]
main = {
    "prompts": [R.collapse_image_pads(processor.tokenizer.decode(r)) for r in ids],
    "input_ids": ids,
    "image_grid_thw": inputs["image_grid_thw"].tolist(),
    "vectors": [[round(x, 7) for x in v] for v in vectors.tolist()],
}
result = {
    "main": main,
    "disc_emb_id": processor.tokenizer.convert_tokens_to_ids("<disc_emb>"),
    "padding_side": processor.tokenizer.padding_side,
    "weights_sum": float(sum(p.detach().double().sum() for p in model.model.parameters())),
}
result["versions"] = versions()
json.dump(result, open(out, "w"), separators=(",", ":"))
print("ok", [len(i) for i in ids])
