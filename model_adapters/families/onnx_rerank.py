"""The ONNX Runtime backend (CPU) for the text cross-encoder reranker (`--rerank-backend onnx`, bge-reranker-v2-m3).

The sequence-classification model (token ids + mask -> one logit) is traced once per reranker identity into
`rerank.onnx`; the pair ids stay the torch reranker's own `tokenize` (FlagReranker's truncation and pair template),
and the sigmoid is applied here in float32 as `TextCrossEncoder.score_pairs` applies it. Right after the export the
graph's logits are checked against the torch forward's on probe pairs of several lengths and batch sizes (at most
MAX_LOGIT_DIFF apart, else the graph is discarded and the run stops).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from model_adapters.atomic import replacing
from model_adapters.families import onnx_text
from model_adapters.families.cross_encoder import TextCrossEncoder
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

RECIPES: Final = ("bge-reranker-v2-m3",)  # each proven equal to torch (tests/models/test_onnx_backend.py)
FILE: Final = "rerank.onnx"
OUTPUT: Final = "logits"
NAMES: Final = ("input_ids", "attention_mask")
# Logits of the graph and of torch this far apart (absolute) at most: float32 noise of two summation orders.
MAX_LOGIT_DIFF: Final = 1e-4


def probes() -> list[tuple[list[ModelInput], list[ModelInput]]]:
    """Probe (queries, candidates) batches: short and long pairs (past the query and pair limits), sizes 1 and 3."""
    long = "a vintage sedan with leather seats and a chrome grille " * 60
    queries = [ModelInput("red shoe", None), ModelInput(long, None), ModelInput("a car", None, "Find the car.")]
    candidates = [ModelInput("a red leather shoe", None), ModelInput("blue", None), ModelInput(long, None)]
    return [(queries, candidates), (queries[:1], candidates[2:])]


class OnnxCrossEncoder:
    """The torch cross-encoder's `tokenize` and an ONNX Runtime session as its forward."""

    def __init__(self, base: TextCrossEncoder, session: Any, *, exported: bool) -> None:
        self.base, self.session = base, session
        self.exported = exported  # whether this load exported the graph (False: it came from the cache)
        self.folder: Any = None  # with --no-cache: the temporary folder of the graph, removed with this object

    def logits(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray:
        """One float32 logit per (query, candidate) pair."""
        inputs = self.base.tokenize(queries, candidates)
        return np.asarray(self.session.run([OUTPUT], {n: inputs[n].numpy() for n in NAMES})[0], np.float32).reshape(-1)

    def score_pairs(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray:
        """`TextCrossEncoder.score_pairs` on the session: the logit, through a float32 sigmoid when it normalizes."""
        if len(queries) != len(candidates):
            raise ValueError(f"score_pairs: {len(queries)} queries but {len(candidates)} candidates")
        logits = self.logits(queries, candidates)
        scores = np.float32(1) / (np.float32(1) + np.exp(-logits)) if self.base.normalize else logits
        return scores.astype(np.float64)


def refusal(recipe: str | None, dtype: str | None, label: str) -> str | None:
    """The one-line reason `--rerank-backend onnx` cannot run this reranker, or None when it can."""
    return onnx_text.refusal(
        recipe, dtype, label, recipes=RECIPES, flag="--rerank-backend", role="reranker", covered_by="the ONNX reranker"
    )


def check_equal(base: TextCrossEncoder, candidate: OnnxCrossEncoder, label: str) -> None:
    """Refuse a graph whose logits differ from the torch forward's by more than MAX_LOGIT_DIFF on the probes."""
    for queries, candidates in probes():
        want = base.logits(queries, candidates).cpu().numpy()
        diff = float(np.abs(candidate.logits(queries, candidates) - want).max())
        if not diff <= MAX_LOGIT_DIFF:
            raise TriadError(
                f"--rerank-backend onnx: reranker {label}'s exported graph gives other scores than torch (logits "
                f"{diff:.3g} apart > {MAX_LOGIT_DIFF}); run it with --rerank-backend torch"
            )


def _traced(model: Any) -> Any:
    """A torch module mapping (input_ids, attention_mask) to the model's logits."""
    import torch

    class Traced(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True).logits

    return Traced().eval()


def export(base: TextCrossEncoder, path: str, label: str) -> None:
    """Trace the model into `path` (written under a temporary name, checked, then moved into place)."""
    queries, candidates = probes()[0]
    inputs = base.tokenize(queries, candidates)
    with replacing(path) as tmp:
        onnx_text.trace(_traced(base.model), inputs, list(NAMES), str(tmp), output=OUTPUT)
        check_equal(base, OnnxCrossEncoder(base, onnx_text.session(str(tmp)), exported=True), label)


def wrap(base: Any, folder: str, label: str, *, log: bool = True) -> OnnxCrossEncoder:
    """The ONNX reranker of a loaded torch cross-encoder: its graph read from `folder`, exported there if absent."""
    if not isinstance(base, TextCrossEncoder):
        raise TriadError(
            f"--rerank-backend onnx: reranker {label} loads {type(base).__name__}, not the text cross-encoder the "
            "ONNX reranker covers; run it with --rerank-backend torch"
        )
    path = os.path.join(folder, FILE)
    exported = onnx_text.cached_graph(folder, [FILE], label, lambda: export(base, path, label), log=log)
    return OnnxCrossEncoder(base, onnx_text.session(path), exported=exported)
