"""Run every family's tiny model on CUDA in float32 and bfloat16 and compare with the CPU reference fixtures.

No network needed: the tiny models are built from configs (tests.doubles.tiny) and the fixtures are in
tests/fixtures/. Tolerances (stated here, printed with every result):
- float32 on CUDA: cosine >= 0.9999 per vector, reranker |score difference| <= 1e-4 (as on CPU);
- bfloat16: cosine >= 0.99 per vector, reranker |score difference| <= 1e-2 (bf16 keeps 8 mantissa bits; the
  tiny random models' outputs are not calibrated, so these only catch gross errors: wrong dtype plumbing, NaN,
  a device-dependent input pipeline).
Usage: python benchmarks/gpu_check.py --device cuda:0 [--shard 0 --shards 1]; exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model_adapters.models.registry import get_entry, load_encoder, load_reranker  # noqa: E402
from model_adapters.protocol import ModelInput  # noqa: E402
from tests import reference_inputs as R  # noqa: E402
from tests.doubles.declare import declare  # noqa: E402

declare()  # the tiny-random-* entries are test doubles, declared by the tests (tests/doubles/)

FIXTURES = ROOT / "tests" / "fixtures"
TOLERANCE = {"float32": (0.9999, 1e-4), "bfloat16": (0.99, 1e-2)}


def items(rows: list) -> list[ModelInput]:
    return [ModelInput(t, R.image(k) if k else None, i) for t, k, i in rows]


def min_cosine(got: np.ndarray, ref: np.ndarray) -> float:
    keep = np.linalg.norm(ref, axis=1) > 0
    got, ref = got[keep], ref[keep]
    return float(((got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)).min())


def check_qwen3_vl_embedding(device: str, dtype: str) -> float:
    ref = json.loads((FIXTURES / "qwen3_vl_embedding" / "official.json").read_text())
    enc = load_encoder(get_entry("tiny-random-vlm"), device=device, dtype=dtype)
    worst = min_cosine(enc.encode_queries(items(R.EMBED_INPUTS)), np.array(ref["main"]["vectors"]))
    enc.max_length = R.TRUNCATION_MAX_LENGTH
    trunc = min_cosine(enc.encode_queries(items(R.TRUNCATION_INPUTS)), np.array(ref["truncation"]["vectors"]))
    return min(worst, trunc)


def check_dual_tower(name: str, arch: str, public: str, device: str, dtype: str) -> float:
    ref = json.loads((FIXTURES / "dual_tower" / "reference.json").read_text())[arch]
    enc = load_encoder(get_entry(name), device=device, dtype=dtype)
    opts = get_entry(public).options
    enc.max_length, enc.padding = int(opts["max_length"]), opts.get("padding", True)
    enc.lowercase = bool(opts.get("lowercase", False))
    batch = items(R.EMBED_INPUTS + R.TRUNCATION_INPUTS)
    got = np.concatenate([enc.encode_queries([b]) for b in batch])
    return min_cosine(got, np.array(ref["vectors"]))


def check_siglip2(device: str, dtype: str) -> float:
    """The siglip2 entry's loader on the tiny SigLIP 2 FixRes folder, against the dual-tower fixture."""
    import tempfile

    from tests.doubles import tiny

    ref = json.loads((FIXTURES / "dual_tower" / "reference.json").read_text())["siglip2"]
    folder = tiny.save_tiny_siglip2(tempfile.mkdtemp(prefix="gpu-check-siglip2-"))
    enc = load_encoder(get_entry("siglip2"), model_path=folder, device=device, dtype=dtype)
    got = np.concatenate([enc.encode_queries([b]) for b in items(R.EMBED_INPUTS + R.TRUNCATION_INPUTS)])
    return min_cosine(got, np.array(ref["vectors"]))


def check_vlm2vec(device: str, dtype: str) -> float:
    ref = json.loads((FIXTURES / "vlm2vec" / "official.json").read_text())
    enc = load_encoder(get_entry("tiny-random-vlm2vec"), device=device, dtype=dtype)
    return min_cosine(enc.encode_queries(items(R.VLM2VEC_INPUTS)), np.array(ref["vectors"]))


def check_reranker(device: str, dtype: str) -> float:
    ref = json.loads((FIXTURES / "qwen3_vl_reranker" / "official.json").read_text())["main"]
    rr = load_reranker(get_entry("tiny-random-reranker", kind="reranker"), device=device, dtype=dtype)
    qs = [q for q in items(R.RERANK_QUERY) for _ in R.RERANK_DOCS]
    cs = [ModelInput(t, R.image(k) if k else None) for _ in R.RERANK_QUERY for t, k in R.RERANK_DOCS]
    expected = np.array([s for q in ref for s in q["scores"]])
    return float(np.abs(rr.score_pairs(qs, cs) - expected).max())


def check_chat(name: str, device: str, dtype: str) -> float:
    """A Qwen-VL chat recipe (tests/models/test_qwen_chat_reference.py CASES): its registry entry on its tiny folder."""
    import dataclasses
    import tempfile

    from tests.doubles import tiny
    from tests.models.test_qwen_chat_reference import CASES

    case = CASES[name]
    ref = json.loads((FIXTURES / case.fixture / "official.json").read_text())
    folder = tiny.save_tiny_chat_checkpoint(case.tiny, tempfile.mkdtemp(prefix=f"gpu-check-{name}-"))
    worst = 1.0
    for check in case.checks:
        enc = load_encoder(get_entry(case.entry), model_path=folder, device=device, dtype=dtype)
        enc.opts = dataclasses.replace(enc.opts, **dict(check.overrides))
        got = enc.encode(items(list(check.inputs)), check.side)
        worst = min(worst, min_cosine(got, np.array(ref[check.key]["vectors"])))
    return worst


def check_vlm2vec_v1(device: str, dtype: str) -> float:
    import tempfile

    from tests.doubles import tiny

    ref = json.loads((FIXTURES / "vlm2vec_v1" / "official.json").read_text())
    folder = tiny.save_tiny_qwen2_vl(tempfile.mkdtemp(prefix="gpu-check-vlm2vec-v1-"))
    enc = load_encoder(get_entry("vlm2vec-v1-2b"), model_path=folder, device=device, dtype=dtype)
    rows = items(R.VLM2VEC_INPUTS)
    got = np.concatenate([enc.encode_queries([rows[n] for n in batch]) for batch in R.VLM2VEC_V1_BATCHES])
    return min_cosine(got, np.array(ref["vectors"]))


CHAT_RECIPES = ("embed-rl", "ume-r1-disc", "rzenembed", "lamra-ret", "ops-mm-embedding-v1")


def check_reasonir(device: str, dtype: str) -> float:
    import tempfile

    from tests.doubles.tiny_text import save_reasonir

    ref = json.loads((FIXTURES / "reasonir" / "official.json").read_text())
    with tempfile.TemporaryDirectory() as folder:
        enc = load_encoder(get_entry("reasonir-8b"), model_path=save_reasonir(folder), device=device, dtype=dtype)
        queries = enc.encode_queries([ModelInput(t, None, i) for t, i in ref["query_inputs"]])  # right-padded
        docs = enc.encode_candidates([ModelInput(t) for t, _ in ref["doc_inputs"]])
    return min(min_cosine(queries, np.array(ref["query_vectors"])), min_cosine(docs, np.array(ref["doc_vectors"])))


CHECKS = [
    ("qwen3-vl-embedding", "cosine", check_qwen3_vl_embedding),
    ("clip", "cosine", lambda d, t: check_dual_tower("tiny-random-clip", "clip", "clip-vit-b32", d, t)),
    ("siglip2", "cosine", check_siglip2),
    ("vlm2vec-v2", "cosine", check_vlm2vec),
    ("qwen3-vl-reranker", "max |score diff|", check_reranker),
    ("vlm2vec-v1", "cosine", check_vlm2vec_v1),
    *[(name, "cosine", lambda d, t, name=name: check_chat(name, d, t)) for name in CHAT_RECIPES],
    ("reasonir", "cosine", check_reasonir),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--shards", type=int, default=1)
    args = parser.parse_args()
    jobs = [(c, dt) for c in CHECKS for dt in TOLERANCE][args.shard :: args.shards]
    failed = 0
    for (family, measure, check), dtype in jobs:
        value = check(args.device, dtype)
        min_cos, max_diff = TOLERANCE[dtype]
        ok = value >= min_cos if measure == "cosine" else value <= max_diff
        bound = f">= {min_cos}" if measure == "cosine" else f"<= {max_diff}"
        print(
            f"{args.device} {family:20s} {dtype:8s} {measure} = {value:.6f} (required {bound}) "
            f"{'ok' if ok else 'FAIL'}",
            flush=True,
        )
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
