# ruff: noqa: E702  (helper of the drivers that run authors' code pinned to transformers 4.x in scratch venvs)
"""Copy a tiny Qwen2-VL folder written by transformers 5.24 (tests.doubles.tiny) into the layout
transformers 4.45-4.52 read: config flattened (text_config at top level, rope_scaling {"type": "mrope"}), the
tokenizer config's `extra_special_tokens` renamed `additional_special_tokens` and its class Qwen2TokenizerFast, the
chat template also in tokenizer_config.json, min_pixels/max_pixels beside the image processor's `size`. The weights
file is the same (5.24 writes the legacy Qwen2-VL key layout)."""

import json
import os
import shutil


def legacy_qwen2_vl_folder(src: str, dst: str) -> str:
    os.makedirs(dst, exist_ok=True)
    for name in ("model.safetensors", "tokenizer.json", "chat_template.json"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), dst)
    c = json.load(open(os.path.join(src, "config.json")))
    flat = {k: v for k, v in c.items() if k != "text_config"}
    t = c["text_config"]
    flat.update({k: v for k, v in t.items() if k not in ("rope_parameters", "model_type", "layer_types")})
    rp = t["rope_parameters"]
    flat["rope_theta"] = rp["rope_theta"]
    flat["rope_scaling"] = {"type": "mrope", "mrope_section": rp["mrope_section"]}
    flat["torch_dtype"] = "float32"
    json.dump(flat, open(os.path.join(dst, "config.json"), "w"))
    tc = json.load(open(os.path.join(src, "tokenizer_config.json")))
    tc["additional_special_tokens"] = tc.pop("extra_special_tokens")
    tc["tokenizer_class"] = "Qwen2TokenizerFast"
    tc.pop("backend", None)
    template = os.path.join(src, "chat_template.jinja")
    if os.path.exists(template):
        tc["chat_template"] = open(template).read()
    json.dump(tc, open(os.path.join(dst, "tokenizer_config.json"), "w"))
    pc = json.load(open(os.path.join(src, "preprocessor_config.json")))
    pc["min_pixels"], pc["max_pixels"] = pc["size"]["shortest_edge"], pc["size"]["longest_edge"]
    json.dump(pc, open(os.path.join(dst, "preprocessor_config.json"), "w"))
    return dst
