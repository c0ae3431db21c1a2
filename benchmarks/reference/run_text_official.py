# ruff: noqa: E402, B905  (driver for the authors' code in a scratch venv; imports follow the path setup)
"""Run the authors' code of ARK's text embedders and text cross-encoder on the tiny folders of
tests.doubles.tiny_text, on the fixed inputs of tests/reference_inputs.py (TEXT_*), and write what it
computed (token ids per input, vectors / scores, the weights' sum) as a fixture. Each system runs in its own scratch
venv with its authors' pinned versions (tests/fixtures/<recipe>/NOTE.md gives the venv, the command and every
substitution). Nothing of theirs is copied here: their code is imported from a checkout at the named commit.

Usage (from the repository root, with the venv's python):
    python benchmarks/reference/run_text_official.py SYSTEM TINY_FOLDER OUT.json CHECKOUT
SYSTEM: qwen3-embedding (QwenLM/Qwen3-Embedding evaluation/qwen3_embedding_model.py, TransformersTextEmbedder with
        evaluation/run_mteb.sh's settings), diver (AQ-MedAI/Diver README.md "Transformers Usage" block, executed),
        bge-m3 (FlagEmbedding BGEM3FlagModel), bge-reranker (FlagEmbedding FlagReranker), reasonir
        (facebookresearch/ReasonIR: README.md "Transformers" usage, AutoModel + trust_remote_code loading
        training/modeling_llama.py's ReasonIRModel, its `encode` with the instructions and max_length of
        evaluation/bright; CHECKOUT is the root of `git archive 0aac962 training evaluation/bright/configs`).
"""

import json
import os
import re
import sys

SYSTEM, FOLDER, OUT, CHECKOUT = sys.argv[1:5]
sys.path[:0] = [CHECKOUT, os.getcwd()]
import torch

from tests import reference_inputs as R


def weights_sum(model) -> float:
    return float(sum(p.detach().double().sum() for p in model.parameters()))


def ids_of(tokenizer, texts, max_length):
    return [tokenizer(t, truncation=True, max_length=max_length)["input_ids"] for t in texts]


# --- QwenLM/Qwen3-Embedding evaluation/qwen3_embedding_model.py ------------------------------------------------
def qwen3_embedding() -> dict:
    # Substitution: the module imports mteb only for its `Qwen3Embedding` MTEB wrapper (multi-GPU queues); the class
    # run here, `TransformersTextEmbedder`, uses torch and transformers only. mteb 1.38.9 (their pin) is installed.
    from qwen3_embedding_model import TransformersTextEmbedder

    # evaluation/run_mteb.sh: max_length 8192, attn_type causal, pooler_type last, do_norm true,
    # instruction_template "Instruct: {}\nQuery:"; documents of retrieval tasks get no instruction.
    template = "Instruct: {}\nQuery:"
    default_task = "Given a web search query, retrieve relevant passages that answer the query"  # README's task
    model = TransformersTextEmbedder(FOLDER, pooler_type="last", do_norm=True, attn_type="causal").eval()
    out = {"weights_sum": weights_sum(model.base_model)}

    def run(items, max_length):
        # each query with its instruction's prompt (the benchmark's, else the README's default task)
        prompts = [template.format(instruction or default_task) for _, instruction in items]
        texts = [p + t for p, (t, _) in zip(prompts, items, strict=True)]
        with torch.inference_mode():
            vecs = torch.cat([model.embed([t], max_length, None) for t in texts])  # one at a time: no padding
        return ids_of(model.tokenizer, texts, max_length), vecs.float().tolist()

    out["query_ids"], out["query_vectors"] = run(R.TEXT_QUERIES, 8192)
    with torch.inference_mode():
        docs = model.embed(R.TEXT_DOCS, 8192, None)  # one left-padded batch, no prompt
    out["doc_ids"], out["doc_vectors"] = ids_of(model.tokenizer, R.TEXT_DOCS, 8192), docs.float().tolist()
    out["truncated_ids"], out["truncated_vectors"] = run(R.TEXT_TRUNCATION_INPUTS, R.TEXT_TRUNCATION_MAX_LENGTH)
    with torch.inference_mode():  # the queries as one left-padded batch too (padding must not matter)
        texts = [template.format(i or default_task) + t for t, i in R.TEXT_QUERIES]
        out["query_batch_vectors"] = model.embed(texts, 8192, None).float().tolist()
    return out


# --- AQ-MedAI/Diver README.md, "2. Transformers Usage" ---------------------------------------------------------
def diver() -> dict:
    readme = open(os.path.join(CHECKOUT, "README.md"), encoding="utf-8").read()
    start = readme.index("2. Transformers Usage")
    block = re.search(r"```bash\n(.*?)```", readme[start:], re.S).group(1)
    # Substitutions: the Hub id -> the tiny folder; the example queries/documents -> the fixture inputs (queries
    # formatted by the block's own get_detailed_instruct with the benchmark instruction, else the block's task).
    block = block.replace("'AQ-MedAI/Diver-Retriever-4B'", repr(FOLDER))
    block = block.replace(
        "input_texts = queries + documents",
        "input_texts = [get_detailed_instruct(i or task, q) for q, i in FIXTURE_QUERIES] + FIXTURE_DOCS",
    )
    block = block.replace("max_length = 8192", "max_length = FIXTURE_MAX_LENGTH")
    out = {}

    def run(queries, docs, max_length):
        scope = {"FIXTURE_QUERIES": queries, "FIXTURE_DOCS": docs, "FIXTURE_MAX_LENGTH": max_length}
        with torch.inference_mode():
            exec(compile(block, "Diver README.md (Transformers Usage)", "exec"), scope)
        ids = [
            [t for t, m in zip(row, mask) if m]
            for row, mask in zip(
                scope["batch_dict"]["input_ids"].tolist(), scope["batch_dict"]["attention_mask"].tolist()
            )
        ]
        out["weights_sum"] = weights_sum(scope["model"])
        return ids, scope["embeddings"].float().tolist()

    ids, vecs = run(R.TEXT_QUERIES, R.TEXT_DOCS, 8192)
    n = len(R.TEXT_QUERIES)
    out["query_ids"], out["doc_ids"] = ids[:n], ids[n:]
    out["query_vectors"], out["doc_vectors"] = vecs[:n], vecs[n:]
    out["truncated_ids"], out["truncated_vectors"] = run(R.TEXT_TRUNCATION_INPUTS, [], R.TEXT_TRUNCATION_MAX_LENGTH)
    return out


# --- FlagOpen/FlagEmbedding BGEM3FlagModel (inference/embedder/encoder_only/m3.py) ------------------------------
def bge_m3() -> dict:
    from FlagEmbedding import BGEM3FlagModel

    # Model card: BGEM3FlagModel('BAAI/bge-m3', use_fp16=True); encode(sentences, batch_size=12, max_length=8192)
    # ['dense_vecs']. Substitution: use_fp16=False (CPU; the class casts to float32 on CPU anyway), devices="cpu".
    model = BGEM3FlagModel(FOLDER, use_fp16=False, devices="cpu")
    # Queries: no instruction field (query_instruction_for_retrieval None), so the paper's rule prepends it (B.3).
    queries = [R.joined(t, i) for t, i in R.TEXT_QUERIES]
    out = {"weights_sum": weights_sum(model.model.model)}
    tok = model.tokenizer
    out["query_ids"] = ids_of(tok, queries, 8192)
    out["query_vectors"] = model.encode(queries, batch_size=12, max_length=8192)["dense_vecs"].tolist()
    out["doc_ids"] = ids_of(tok, R.TEXT_DOCS, 8192)
    out["doc_vectors"] = model.encode(R.TEXT_DOCS, batch_size=12, max_length=8192)["dense_vecs"].tolist()
    cut = [R.joined(t, i) for t, i in R.TEXT_TRUNCATION_INPUTS]
    out["truncated_ids"] = ids_of(tok, cut, R.TEXT_TRUNCATION_MAX_LENGTH)
    out["truncated_vectors"] = model.encode(cut, max_length=R.TEXT_TRUNCATION_MAX_LENGTH)["dense_vecs"].tolist()
    return out


# --- FlagOpen/FlagEmbedding FlagReranker (inference/reranker/encoder_only/base.py) ------------------------------
def bge_reranker() -> dict:
    from FlagEmbedding import FlagReranker

    # Model card: FlagReranker('BAAI/bge-reranker-v2-m3', use_fp16=True); compute_score([[q, p], ...],
    # normalize=True). Substitution: use_fp16=False, devices="cpu". Queries: the instruction prepended (B.3).
    pairs = [[R.joined(q, i), d] for q, i in R.TEXT_RERANK_QUERIES for d in R.TEXT_RERANK_DOCS]
    out = {"pairs": pairs}
    captured: list[list[int]] = []
    model = FlagReranker(FOLDER, use_fp16=False, devices="cpu")
    out["weights_sum"] = weights_sum(model.model)
    forward = model.model.forward

    def recording(*args, **kwargs):
        for row, mask in zip(kwargs["input_ids"].tolist(), kwargs["attention_mask"].tolist()):
            captured.append([t for t, m in zip(row, mask) if m])
        return forward(*args, **kwargs)

    model.model.forward = recording
    out["scores"] = [float(s) for s in model.compute_score(pairs, normalize=True)]  # one sorted, padded batch
    out["logits"] = [float(s) for s in model.compute_score(pairs, normalize=False)]
    out["pair_ids"] = []
    for pair in pairs:  # the ids of each pair, recorded from a call with that pair alone (no padding); compute_score
        model.compute_score([pair], normalize=True)  # runs a trial batch first, so the last row is the real one
        out["pair_ids"].append(captured[-1])
    (q, i), d = R.TEXT_RERANK_TRUNCATION_PAIR
    out["truncated_pair"] = [R.joined(q, i), d]
    out["truncated_score"] = float(
        model.compute_score([out["truncated_pair"]], normalize=True, max_length=R.TEXT_RERANK_TRUNCATION_MAX_LENGTH)[0]
    )
    out["truncated_ids"] = captured[-1]
    return out


# --- facebookresearch/ReasonIR: README.md "Transformers", training/modeling_llama.py ReasonIRModel.encode ----------
def reasonir() -> dict:
    import shutil
    import tempfile

    import numpy as np
    from transformers import AutoModel

    # Substitution: the Hub repository's remote code cannot be read here. Its auto_map is taken to load the class
    # the repository ships, ReasonIRModel of training/modeling_llama.py: copied beside a scratch copy of the tiny
    # folder, with config.json's auto_map pointing at it, so the README's AutoModel call runs it unchanged.
    folder = os.path.join(tempfile.mkdtemp(), "reasonir")
    shutil.copytree(FOLDER, folder)
    shutil.copy(os.path.join(CHECKOUT, "training", "modeling_llama.py"), folder)
    config_path = os.path.join(folder, "config.json")
    config = json.load(open(config_path))
    config["auto_map"] = {"AutoModel": "modeling_llama.ReasonIRModel"}
    json.dump(config, open(config_path, "w"))
    model = AutoModel.from_pretrained(folder, torch_dtype="auto", trust_remote_code=True)  # README.md
    model.eval()
    assert type(model).__name__ == "ReasonIRModel", type(model)

    # evaluation/bright: retrieval_reasonir gives queries instructions['query'].format(task=task) and documents
    # instructions['document'], max_length 32768 (its query_max_length / doc_max_length defaults), batch size 1.
    # The query wrapper is the configs' own string with their task sentence replaced by the benchmark instruction;
    # a query without one gets the documents' instruction (how their evaluation feeds a text with no task).
    bright = json.load(open(os.path.join(CHECKOUT, "evaluation/bright/configs/reasonir/biology.json")))
    bright = bright["instructions"]
    task = "Given a {task} post, retrieve relevant passages that help answer the post"
    assert task in bright["query"], bright

    def prefix(instruction):
        return bright["query"].replace(task, instruction) if instruction else bright["document"]

    fed, pooled = [], []
    model.register_forward_pre_hook(
        lambda _m, _a, kw: fed.extend(
            [[t for t, m in zip(r, k) if m] for r, k in zip(kw["input_ids"].tolist(), kw["attention_mask"].tolist())]
        ),
        with_kwargs=True,
    )
    pooling = model.pooling

    def recording_pooling(hidden, mask, recast=False):
        pooled.extend(mask.tolist())  # the mask ReasonIRModel.encode pools with (instruction positions zeroed)
        return pooling(hidden, mask, recast=recast)

    model.pooling = recording_pooling
    out = {
        "weights_sum": weights_sum(model),
        "class": type(model).__module__ + "." + type(model).__name__,
        "attn_implementation": model.config._attn_implementation,
        "dtype": str(model.dtype),
        "bright_instructions": bright,
    }

    def run(items, max_length, what):
        keep = [(t, i) for t, i in items if t]
        del fed[:], pooled[:]
        vecs = [model.encode(t, instruction=prefix(i), max_length=max_length, batch_size=1) for t, i in keep]
        out[f"{what}_inputs"] = [[t, i] for t, i in keep]
        out[f"{what}_instructions"] = [prefix(i) for _, i in keep]
        out[f"{what}_ids"], out[f"{what}_pooled"] = list(fed), list(pooled)
        out[f"{what}_vectors"] = [np.asarray(v, dtype=np.float64).tolist() for v in vecs]

    run(R.TEXT_QUERIES, 32768, "query")
    run([(d, None) for d in R.TEXT_DOCS], 32768, "doc")
    run(R.TEXT_TRUNCATION_INPUTS, R.TEXT_TRUNCATION_MAX_LENGTH, "truncated")
    # An empty text leaves nothing but the instruction, which the mean excludes: 0 / 0.
    out["empty_query_vector_is_nan"] = bool(np.isnan(model.encode("", instruction=prefix(None))).all())
    out["empty_query_with_instruction_is_nan"] = bool(np.isnan(model.encode("", instruction=prefix(R.C2I))).all())
    # The documents once more as one right-padded batch (BRIGHT encodes one at a time): padding must not matter.
    docs = [d for d in R.TEXT_DOCS if d]
    out["doc_batch_vectors"] = model.encode(docs, instruction=prefix(None), max_length=32768).tolist()
    return out


if __name__ == "__main__":
    table = {
        "qwen3-embedding": qwen3_embedding,
        "diver": diver,
        "bge-m3": bge_m3,
        "bge-reranker": bge_reranker,
        "reasonir": reasonir,
    }
    result = table[SYSTEM]()
    import PIL
    import tokenizers
    import transformers

    result["versions"] = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "pillow": PIL.__version__,
    }
    with open(OUT, "w") as handle:
        json.dump(result, handle)
    print(SYSTEM, {k: len(v) for k, v in result.items() if isinstance(v, list)})
