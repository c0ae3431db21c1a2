"""Pairwise rerankers (Qwen3-VL-Reranker style) for the two-stage reference (docs/protocol.md §4, paper D.2).

One ChatML prompt per (query, candidate) pair; the score is logit("yes") − logit("no") at the answer position:

    system: Judge whether the Document meets the requirements based on the Query and the Instruct provided.
            Note that the answer can only be "yes" or "no".
    user:   <Instruct>: {instruction or "Represent the user's input."}
            <Query>: {query image}{query text}
            <Document>: {candidate image}{candidate text}
    assistant: (answer)

The reranker sees the same task fields and serialization as the first stage (paper D.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from model_adapters.families._common import hub_kwargs, torch_dtype
from model_adapters.families.vlm import IMAGE_SLOT, QwenStyleInputs, chat_prompt
from model_adapters.protocol import ModelInput
from triad_dataset.names import VLM_OUTER_INSTRUCTION

JUDGE_SYSTEM: Final = ('Judge whether the Document meets the requirements based on the Query and the Instruct '
                       'provided. Note that the answer can only be "yes" or "no".')


def _content(item: ModelInput) -> str:
    return (IMAGE_SLOT if item.image is not None else "") + item.text


def pair_prompt(query: ModelInput, candidate: ModelInput) -> str:
    """The prompt of one pair.

    >>> "<Query>: red shoes" in pair_prompt(ModelInput("red shoes"), ModelInput("Product info: x"))
    True
    """
    user = (f"<Instruct>: {query.instruction or VLM_OUTER_INSTRUCTION}\n<Query>: {_content(query)}\n"
            f"<Document>: {_content(candidate)}")
    return chat_prompt(JUDGE_SYSTEM, user)


class YesNoReranker:
    """Scores pairs with a causal VLM's yes/no logits (`lm_head` over the last hidden state)."""

    def __init__(self, model: Any, tokenizer: Any, image_processor: Any, *, device: str = "cpu") -> None:
        self.model = model.to(device).eval()
        self.inputs = QwenStyleInputs(tokenizer, image_processor, self.model, device)
        self.yes_id = tokenizer.convert_tokens_to_ids("yes")
        self.no_id = tokenizer.convert_tokens_to_ids("no")

    def score_pairs(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray:
        import torch

        if len(queries) != len(candidates):
            raise ValueError(f"score_pairs: {len(queries)} queries but {len(candidates)} candidates")
        prompts = [pair_prompt(q, c) for q, c in zip(queries, candidates, strict=True)]
        images = [img for q, c in zip(queries, candidates, strict=True) for img in (q.image, c.image) if img is not None]
        inputs = self.inputs(prompts, images)
        with torch.inference_mode():
            logits = self.model(**inputs).logits[:, -1, :]
        return (logits[:, self.yes_id] - logits[:, self.no_id]).float().cpu().numpy().astype(np.float64)


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    raise ValueError(f"{entry.name} is a reranker; use it with --rerank, not --model")


def load_reranker(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> YesNoReranker:
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision, trust_remote_code=bool(entry.options.get("trust_remote_code", False)))
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    return YesNoReranker(model, tokenizer, image_processor, device=device)
