"""Text cross-encoder rerankers (bge-reranker-v2-m3) as FlagEmbedding's encoder-only `FlagReranker` runs them
(FlagOpen/FlagEmbedding `FlagEmbedding/inference/reranker/encoder_only/base.py` @ 7ed43d67, `compute_score`):

- the query is tokenized alone without special tokens and cut at `query_max_length` (default `max_length * 3 // 4`),
  the passage alone and cut at `max_length`; the pair is then joined with the tokenizer's pair template
  (XLM-R: `<s> q </s></s> p </s>`) and, if longer than `max_length`, the passage is cut further
  (`prepare_for_model(truncation="only_second")`);
- score = the model's single logit; `normalize` applies a sigmoid (the model card's `normalize=True`).

Text only (ARK's caption-then-embed track gives it captions for images, §4.1; images are never seen). The model
has no instruction field: a benchmark instruction is prepended to the query text (paper B.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from model_adapters.families.common import hub_kwargs, torch_dtype
from model_adapters.planning.inputs import join_instruction
from model_adapters.protocol import ModelInput

MAX_LENGTH: Final = 512  # FlagReranker's default max_length (the model card uses it)


class TextCrossEncoder:
    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: str = "cpu",
        max_length: int = MAX_LENGTH,
        query_max_length: int | None = None,
        normalize: bool = True,
    ) -> None:
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device
        self.max_length = max_length
        self.query_max_length = query_max_length or max_length * 3 // 4
        self.normalize = normalize

    def pair_ids(self, query: str, passage: str) -> list[int]:
        """The token ids of one (query, passage) pair, as `compute_score` builds them."""
        backend = self.tokenizer.backend_tokenizer
        q = backend.encode(query, add_special_tokens=False)
        q.truncate(self.query_max_length)
        p = backend.encode(passage, add_special_tokens=False)
        p.truncate(self.max_length)
        budget = self.max_length - len(q.ids) - backend.num_special_tokens_to_add(True)
        if len(p.ids) > budget:  # truncation="only_second": the passage's end is cut
            p.truncate(max(budget, 0))
        return list(backend.post_process(q, p).ids)

    def tokenize(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> dict[str, Any]:
        ids = [
            self.pair_ids(join_instruction(q.instruction, q.text), c.text)
            for q, c in zip(queries, candidates, strict=True)
        ]
        return dict(self.tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt"))

    def logits(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> Any:
        """The model's float32 logit per (query, candidate) pair, a tensor on the model's device."""
        import torch

        inputs = {k: v.to(self.device) for k, v in self.tokenize(queries, candidates).items()}
        with torch.inference_mode():
            return self.model(**inputs, return_dict=True).logits.view(-1).float()

    def score_pairs(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray:
        import torch

        if len(queries) != len(candidates):
            raise ValueError(f"score_pairs: {len(queries)} queries but {len(candidates)} candidates")
        logits = self.logits(queries, candidates)
        scores = torch.sigmoid(logits) if self.normalize else logits
        return scores.cpu().numpy().astype(np.float64)


def load_cross_encoder(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> TextCrossEncoder:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision)
    model = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    opts = entry.options
    return TextCrossEncoder(
        model,
        tokenizer,
        device=device,
        max_length=int(opts.get("max_length", MAX_LENGTH)),
        query_max_length=opts.get("query_max_length"),
        normalize=bool(opts.get("normalize", True)),
    )
