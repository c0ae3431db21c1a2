# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run the official Qwen3VLEmbedder on the tiny Qwen3-VL and the fixed inputs; write the fixture JSON."""

import json
import sys

sys.path[:0] = [__import__("os").path.dirname(__file__), sys.argv[3], __import__("os").getcwd()]
import hashlib
import io

import numpy as np
import qwen3_vl_official_env  # noqa: F401  (see its docstring)
import torch
from driver_versions import versions
from PIL import Image
from qwen3_vl_embedding import Qwen3VLEmbedder
from qwen_vl_utils.vision_process import fetch_image

from tests import reference_inputs as R

folder = sys.argv[1]
out = sys.argv[2]


def run(items, **kw):
    emb = Qwen3VLEmbedder(folder, dtype=torch.float32, **kw)
    dicts = [R.as_embed_dict(i) for i in items]
    convs = [
        emb.format_model_input(text=d.get("text"), image=d.get("image"), instruction=d.get("instruction"))
        for d in dicts
    ]
    proc = emb._preprocess_inputs(convs)
    vec = emb.process(dicts)
    ids = [[int(t) for t, m in zip(row, mask) if m] for row, mask in zip(proc["input_ids"], proc["attention_mask"])]
    return {
        "input_ids": ids,
        "vectors": vec.tolist(),
        "image_grid_thw": proc["image_grid_thw"].tolist() if "image_grid_thw" in proc else [],
        "pixel_values_sum": float(proc["pixel_values"].double().sum()) if "pixel_values" in proc else 0.0,
    }


result = {"main": run(R.EMBED_INPUTS), "truncation": run(R.TRUNCATION_INPUTS, max_length=R.TRUNCATION_MAX_LENGTH)}
resized = {}
for kind in R.RESIZE_IMAGES:
    img = fetch_image(
        {"image": Image.open(io.BytesIO(R.image(kind))), "min_pixels": 4 * 32 * 32, "max_pixels": 1800 * 32 * 32},
        image_patch_size=16,
    )
    arr = np.asarray(img)
    resized[kind] = {"size": list(img.size), "mode": img.mode, "sha256": hashlib.sha256(arr.tobytes()).hexdigest()}
result["fetch_image"] = resized
result["weights_sum"] = float(
    sum(p.double().sum() for p in Qwen3VLEmbedder(folder, dtype=torch.float32).model.parameters())
)
result["versions"] = versions()
json.dump(result, open(out, "w"))
print("ok", [len(i) for i in result["main"]["input_ids"]], [len(i) for i in result["truncation"]["input_ids"]])
