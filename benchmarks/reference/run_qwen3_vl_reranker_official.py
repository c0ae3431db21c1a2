# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run the official Qwen3VLReranker on the tiny Qwen3-VL and the fixed pairs; write the fixture JSON."""

import json
import sys

sys.path[:0] = [__import__("os").path.dirname(__file__), sys.argv[3], __import__("os").getcwd()]
import io

import qwen3_vl_official_env  # noqa: F401  (see its docstring)
import torch
from driver_versions import versions
from PIL import Image
from qwen3_vl_reranker import Qwen3VLReranker

from tests import reference_inputs as R

# Substitution for transformers 5.24 (the official code targets 4.57 with torchvision's fast image processor):
# the fast processor returns torch tensors for pixel_values/image_grid_thw, and 4.57's Qwen3-VL computed M-RoPE
# from the final input_ids; 5.24 needs mm_token_type_ids, which the official code leaves unpadded. After the
# official tokenize(): pixel arrays -> tensors, mm_token_type_ids recomputed from the final (truncated, padded) ids.
_tokenize = Qwen3VLReranker.tokenize


def _tokenize_fixed(self, pairs, **kw):
    inputs = _tokenize(self, pairs, **kw)
    for key in ("pixel_values", "image_grid_thw"):
        if key in inputs and not torch.is_tensor(inputs[key]):
            inputs[key] = torch.as_tensor(inputs[key])
    image_id = self.processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    inputs["mm_token_type_ids"] = (inputs["input_ids"] == image_id).long()
    return inputs


Qwen3VLReranker.tokenize = _tokenize_fixed

folder = sys.argv[1]
out = sys.argv[2]


def pil(kind):
    return Image.open(io.BytesIO(R.image(kind))) if kind else None


def run(queries, docs, **kw):
    rr = Qwen3VLReranker(folder, dtype=torch.float32, **kw)
    rows = []
    for qtext, qimg, instr in queries:
        query = {k: v for k, v in {"text": qtext or None, "image": pil(qimg)}.items() if v is not None}
        documents = [{k: v for k, v in {"text": t or None, "image": pil(i)}.items() if v is not None} for t, i in docs]
        inp = {"query": query, "documents": documents}
        if instr:
            inp["instruction"] = instr
        scores = rr.process(inp)
        ids = []
        for d in documents:
            pair = rr.format_mm_instruction(
                query.get("text"),
                query.get("image"),
                None,
                d.get("text"),
                d.get("image"),
                None,
                instruction=instr or rr.default_instruction,
            )
            t = rr.tokenize([pair])
            ids.append([int(x) for x in t["input_ids"][0]])
        rows.append({"scores": scores, "input_ids": ids})
    return rows


result = {
    "main": run(R.RERANK_QUERY, R.RERANK_DOCS),
    "truncation": run(
        [R.RERANK_TRUNCATION_PAIR[0]], [R.RERANK_TRUNCATION_PAIR[1]], max_length=R.RERANK_TRUNCATION_MAX_LENGTH
    ),
}
result["versions"] = versions()
json.dump(result, open(out, "w"))
print(
    "ok",
    result["main"][0]["scores"],
    [len(i) for r in result["main"] for i in r["input_ids"]],
    len(result["truncation"][0]["input_ids"][0]),
)
