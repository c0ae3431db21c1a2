# ruff: noqa: E401, E402, E702, B905  (driver for the authors' code in a scratch venv; imports must follow the path setup)
"""Run Embed-RL's T-CoT code on fixed inputs and a tiny Qwen3-VL with <emb>; write the fixture JSON.

Usage: python run_embed_rl_tcot_official.py TINY_FOLDER OUT.json EMBED_RL_CHECKOUT
(transformers 5.24 + qwen-vl-utils 0.0.14 scratch venv; the checkout is `git archive 87b52f73 data_pipe eval
train/reinforcement_learning/verl/verl/utils/dataset/vlm2vec_dataset.py`; TINY_FOLDER from
`tiny.save_tiny_chat_checkpoint("embed-rl")`).

(a) Requests: data_pipe/eval_cot_generate/image_cot_generate.py — `process_single_item_stream` for queries, and
`collect_corpus_from_dataset` + `generate_corpus_cot` for candidates (dataset name "OVEN", one of its paired-mode
datasets) — with `call_model_single` replaced by a recorder (no server). The script formats PROMPT_* names it does
not define; they are set in its module from their only definitions in the repository,
train/reinforcement_learning/verl/verl/utils/dataset/vlm2vec_dataset.py (read as string constants, not imported).
(b) Embedding input: eval/mmeb_eval/vlm2vec/src/model/processor.py `Qwen3_VL_process_fn` (which calls
`process_cot_with_visual_content`) with fixed T-CoT texts, then model.py `MMEBModel.encode_input`, as one batch;
the flat-box case alone (it raises). Substitutions as tests/fixtures/embed_rl/NOTE.md (embed_rl_official_env.py)."""

import ast
import io
import json
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
folder, out, checkout = sys.argv[1], sys.argv[2], sys.argv[3]
root = os.path.dirname(os.path.dirname(here))
sys.path[:0] = [here, root, os.path.join(checkout, "data_pipe", "eval_cot_generate")]
import embed_rl_official_env

P, MMEBModel = embed_rl_official_env.load(checkout)
import torch
from PIL import Image
from transformers import Qwen3VLForConditionalGeneration

from tests import reasoning_inputs as T
from tests import reference_inputs as R

NAMES = ("PROMPT_IMAGE_WITHOUT_ANSWER", "PROMPT_TEXT_WITHOUT_ANSWER", "PROMPT_POS_TEXT", "PROMPT_POS_IMAGE")
DATASET = (
    "OVEN"  # generate_corpus_cot's paired mode (image + text candidates) is for OVEN, WebQA, EDIS, RefCOCO-Matching
)

# --- (a) requests ---------------------------------------------------------------------------------------------
work = tempfile.mkdtemp()
os.chdir(work)  # the script logs to a file in the working directory
import image_cot_generate as G

tree = ast.parse(
    open(os.path.join(checkout, "train/reinforcement_learning/verl/verl/utils/dataset/vlm2vec_dataset.py")).read()
)
constants = {
    n.targets[0].id: n.value.value
    for n in tree.body
    if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
}
for name in NAMES:
    setattr(G, name, constants[name])
G.IMAGE_ROOT = os.path.join(work, "images")
os.makedirs(os.path.join(G.IMAGE_ROOT, DATASET))
calls = []
G.call_model_single = lambda prompt, image_path=None, dataset_name="", item_idx=0: (
    calls.append((prompt, image_path)) or "T-CoT"
)


def image_file(kind):
    path = os.path.join(G.IMAGE_ROOT, DATASET, f"{kind}.png")
    open(path, "wb").write(R.image(kind))
    return f"{kind}.png"


requests = []
for role, text, kind, instruction in T.REQUEST_CASES:
    calls.clear()
    name = image_file(kind) if kind else ""
    if role == "query":
        G.process_single_item_stream(
            {"qry_inst": instruction or "", "qry_text": text, "qry_img_path": name},
            0,
            DATASET,
            os.path.join(work, "stream.tmp"),
        )
    else:
        row = {
            "tgt_inst": instruction or "",
            "tgt_text": [text] if text else [],
            "tgt_img_path": [name] if name else [],
        }
        corpus = G.collect_corpus_from_dataset([row], DATASET)
        for corpus_type in ("text", "image"):
            for key, item in corpus[corpus_type].items():
                G.generate_corpus_cot(key, item, corpus_type, DATASET)
    assert len(calls) <= 1, calls
    prompt, path = calls[0] if calls else (None, None)
    full = os.path.join(G.IMAGE_ROOT, DATASET, name) if name else None
    requests.append(
        {
            "prompt": prompt.replace(full, "{IMAGE_PATH}") if prompt and full else prompt,
            "with_image": path is not None,
            "image_is_the_input": path == full if path else None,
        }
    )


# --- (b) the embedding input ------------------------------------------------------------------------------------
def text_of(text, instruction):  # paper B.3: the instruction as a plain-text prefix (Embed-RL has no instruction field)
    return f"{instruction} {text}" if instruction and text else (instruction or text)


lm = Qwen3VLForConditionalGeneration.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa").eval()
model = MMEBModel(encoder=lm, pooling="last", normalize=True).eval()
processor = P.load_processor(embed_rl_official_env.sys.modules["src.arguments"].ModelArguments(model_name=folder))


def run(cases):
    texts = [text_of(t, i) for _, t, _, i, _ in cases]
    images = [Image.open(io.BytesIO(R.image(k))) if k else None for _, _, k, _, _ in cases]
    inputs = P.Qwen3_VL_process_fn({"text": texts, "images": images, "cot": [c for *_, c in cases]}, processor)
    with torch.no_grad():
        vectors = model.encode_input(inputs)
    ids = [[int(x) for x, m in zip(r, a) if m] for r, a in zip(inputs["input_ids"], inputs["attention_mask"])]
    return {
        "names": [c[0] for c in cases],
        "prompts": [R.collapse_image_pads(processor.tokenizer.decode(r)) for r in ids],
        "input_ids": ids,
        "image_grid_thw": inputs["image_grid_thw"].tolist() if inputs["image_grid_thw"] is not None else [],
        "vectors": [[round(x, 7) for x in v] for v in vectors.tolist()],
    }


main = run(T.TCOT_CASES)
try:
    run([T.FLAT_CASE])
    flat = "no error"
except Exception as exc:  # what the authors' code does with the prompt's own one-box format
    flat = f"{type(exc).__name__}: {exc}"
result = {
    "requests": requests,
    "prompt_sha256": {n: __import__("hashlib").sha256(constants[n].encode()).hexdigest() for n in NAMES},
    "main": main,
    "flat_box_error": flat,
    "emb_token_id": processor.tokenizer.convert_tokens_to_ids("<emb>"),
    "weights_sum": float(sum(p.double().sum() for p in lm.model.parameters())),
}
json.dump(result, open(out, "w"), separators=(",", ":"))
print("ok", [r["with_image"] for r in requests], [len(i) for i in main["input_ids"]], main["image_grid_thw"], flat)
