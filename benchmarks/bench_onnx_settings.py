"""minilm's forward alone: torch against the exported ONNX graph under ONNX Runtime's settings and graph rewrites.

The texts are the runner's (the first `--texts` of a TRIAD mini edition's distinct texts), tokenized once in the
runner's order (token count) and batches of 64; every side runs the same tensors, `--passes` times, interleaved, in
this one process with `--threads` threads. Sides: torch; the graph as `--backend onnx` runs it (idle threads
sleeping); idle threads spinning; `session.dynamic_block_base=4`; graph optimization level "extended" and "basic"
(the shipped session uses "all"); ONNX Runtime's transformer optimizer (`optimize_model(model_type="bert")`) on the
shipped graph and on one exported with eager attention (the only form whose attention it fuses). Printed: CPU
seconds (`time.process_time`, every thread) min-max per side, the ratio of medians to torch, and the smallest cosine
to torch's vectors. docs/benchmarks.md quotes it.

    python benchmarks/bench_onnx_settings.py --data demo_output/triad [--texts 4000] [--passes 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
BATCH = 64
SLEEP = {"session.intra_op.allow_spinning": "0"}  # as the shipped session (families/onnx_text.session)


def session(path: str, threads: int, level: str = "all", **config: str) -> Any:
    """An ONNX Runtime CPU session on `path` with these settings."""
    import onnxruntime as ort

    levels = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads, options.log_severity_level = threads, 1, 3
    options.graph_optimization_level = levels[level]
    for key, value in config.items():
        options.add_session_config_entry(key, value)
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def fused(path: str, out: str) -> tuple[str, dict[str, int]]:
    """The graph rewritten by ONNX Runtime's transformer optimizer (BERT fusions), and what it fused."""
    from onnxruntime.transformers import optimizer

    model = optimizer.optimize_model(path, model_type="bert", num_heads=12, hidden_size=384, opt_level=0)
    model.save_model_to_file(out)
    return out, {k: v for k, v in model.get_fused_operator_statistics().items() if v}


def export(model: Any, out: str) -> str:
    """`model`'s modules after tokenization traced as `--backend onnx` traces them (families/onnx_text.export)."""
    from model_adapters.families import onnx_text

    onnx_text.export(model, out, "minilm")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="a TRIAD mini edition (make demo writes demo_output/triad)")
    ap.add_argument("--texts", type=int, default=4000)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    import torch
    from bench_encode import runner_texts
    from sentence_transformers import SentenceTransformer

    from model_adapters.models.registry import get_entry, resolve_path

    torch.set_num_threads(args.threads)
    texts = runner_texts(args.data)[0][: args.texts]
    path = resolve_path(get_entry("minilm"))
    model = SentenceTransformer(path, device="cpu")
    order = sorted(texts, key=lambda t: len(model.tokenizer(t)["input_ids"]))
    feats = [model.preprocess(order[i : i + BATCH]) for i in range(0, len(order), BATCH)]
    arrays = [{k: v.numpy() for k, v in f.items() if hasattr(v, "numpy")} for f in feats]

    def torch_side() -> np.ndarray:
        with torch.inference_mode():
            return np.concatenate([model(f)["sentence_embedding"].numpy() for f in feats])

    with tempfile.TemporaryDirectory() as tmp:
        graph = export(model, os.path.join(tmp, "model.onnx"))
        eager = SentenceTransformer(path, device="cpu", model_kwargs={"attn_implementation": "eager"})
        eager_graph = export(eager, os.path.join(tmp, "eager.onnx"))
        fused_graph, fusions = fused(graph, os.path.join(tmp, "fused.onnx"))
        eager_fused, eager_fusions = fused(eager_graph, os.path.join(tmp, "eager-fused.onnx"))
        print(f"fusions: shipped graph {fusions}; eager-attention graph {eager_fusions}")
        sessions = {
            "ONNX, as shipped (idle threads sleep)": session(graph, args.threads, **SLEEP),
            "ONNX, idle threads spin": session(graph, args.threads),
            "ONNX, dynamic_block_base=4": session(graph, args.threads, **SLEEP, **{"session.dynamic_block_base": "4"}),
            "ONNX, graph level extended": session(graph, args.threads, "extended", **SLEEP),
            "ONNX, graph level basic": session(graph, args.threads, "basic", **SLEEP),
            "ONNX, transformer optimizer": session(fused_graph, args.threads, **SLEEP),
            "ONNX, eager export + transformer optimizer": session(eager_fused, args.threads, **SLEEP),
        }
        sides: dict[str, Callable[[], np.ndarray]] = {"torch": torch_side}
        for name, sess in sessions.items():
            names = [i.name for i in sess.get_inputs()]
            sides[name] = lambda s=sess, n=names: np.concatenate(
                [s.run(["sentence_embedding"], {k: a[k] for k in n})[0] for a in arrays]
            )
        want = torch_side()
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        cosine: dict[str, float] = {}
        for _ in range(args.passes):
            for name, side in sides.items():
                start = time.process_time()
                got = side()
                cpu[name].append(time.process_time() - start)
                cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
                cosine[name] = min(cosine.get(name, 1.0), float(cos.min()))
    base = statistics.median(cpu["torch"])
    print(
        f"\nminilm forward, {len(texts)} texts, batch {BATCH}, {args.threads} threads, {args.passes} passes, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print("| side | CPU s min | max | × torch (medians) | min cosine to torch |\n|---|---:|---:|---:|---:|")
    for name, values in cpu.items():
        print(
            f"| {name} | {min(values):.2f} | {max(values):.2f} | {statistics.median(values) / base:.2f}× | "
            f"{cosine[name]:.8f} |"
        )


if __name__ == "__main__":
    main()
