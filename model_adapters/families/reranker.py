"""Pairwise rerankers for the two-stage reference (docs/protocol.md §4, paper D.2): Qwen3-VL-Reranker as its authors run it.

One conversation per (query, candidate) pair, rendered by the model's chat template:

    system: Judge whether the Document meets the requirements based on the Query and the Instruct provided.
            Note that the answer can only be "yes" or "no".
    user:   <Instruct>: {instruction or "Given a search query, retrieve relevant candidates that answer the query."}
            <Query>:{query image}{query text or NULL}\n<Document>:{candidate image}{candidate text or NULL}
    assistant: (answer)

Score = sigmoid(logit("yes") − logit("no")) at the last position. The reranker sees the same task fields and
serialization as the first stage (paper D.2); constraints/state pairs get the official generic wrapper above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families.common import hub_kwargs, torch_dtype
from model_adapters.protocol import ModelInput

JUDGE_SYSTEM: Final = (
    "Judge whether the Document meets the requirements based on the Query and the Instruct "
    'provided. Note that the answer can only be "yes" or "no".'
)


RERANK_DEFAULT_INSTRUCTION: Final = "Given a search query, retrieve relevant candidates that answer the query."
RERANK_MAX_LENGTH: Final = 10240  # official reranker MAX_LENGTH
ANSWER_TAIL: Final = 5  # "<|im_end|>", "\n", "<|im_start|>", "assistant", "\n": never truncated (official)


@dataclass(frozen=True)
class RerankerOptions:
    """A reranker recipe's or entry's options (the names a table row may set)."""

    pipeline: str | None = None  # "qwen3_vl" or "cross_encoder"
    max_length: int | None = None  # token limit
    normalize: bool = False  # cross-encoder: sigmoid of the logit
    min_pixels: int | None = None  # image resize bounds
    max_pixels: int | None = None  # image resize bounds


def judge_conversation(
    query: ModelInput, candidate: ModelInput, default_instruction: str = RERANK_DEFAULT_INSTRUCTION
) -> list[dict[str, Any]]:
    """The official `format_mm_instruction` for one pair (the instruction is used as given: no period added)."""
    instruct = query.instruction or default_instruction
    user = [
        {"type": "text", "text": "<Instruct>: " + instruct},
        {"type": "text", "text": "<Query>:"},
        *qvi.content(query.text, query.image),
        {"type": "text", "text": "\n<Document>:"},
        *qvi.content(candidate.text, candidate.image),
    ]
    return [{"role": "system", "content": [{"type": "text", "text": JUDGE_SYSTEM}]}, {"role": "user", "content": user}]


def truncate_keeping_specials(ids: list[int], max_length: int, special_ids: set[int]) -> list[int]:
    """The official `truncate_tokens_optimized`: keep every special token, drop the last ordinary ones.

    >>> truncate_keeping_specials([9, 1, 2, 9, 3, 4], 4, {9})
    [9, 1, 2, 9]
    """
    if len(ids) <= max_length:
        return ids
    budget = max_length - sum(1 for t in ids if t in special_ids)
    out: list[int] = []
    for token in ids:
        if token in special_ids:
            out.append(token)
        elif budget > 0:
            out.append(token)
            budget -= 1
    return out


class Qwen3VLReranker:
    """Qwen3-VL-Reranker as its authors run it (QwenLM/Qwen3-VL-Embedding `src/models/qwen3_vl_reranker.py`,
    commit 8ce3aab): the judge prompt per pair, images resized as the embedder's, each pair tokenized alone and
    truncated to `max_length` keeping special tokens and the 5-token answer prefix, left padding, score =
    sigmoid((w_yes − w_no) · h_last) from the LM head's yes/no rows."""

    def __init__(
        self,
        model: Any,
        lm_head_weight: Any,
        processor: qvi.QwenVLProcessor,
        *,
        device: str = "cpu",
        max_length: int = RERANK_MAX_LENGTH,
        min_pixels: int = qvi.MIN_PIXELS,
        max_pixels: int = qvi.MAX_PIXELS,
        default_instruction: str = RERANK_DEFAULT_INSTRUCTION,
    ) -> None:
        self.model = model.to(device).eval()
        vocab = processor.tokenizer.get_vocab()
        weight = lm_head_weight.detach()
        self.score_weight = (weight[vocab["yes"]] - weight[vocab["no"]]).to(device)
        self.processor = processor
        self.device = device
        self.max_length = max_length
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels
        self.default_instruction = default_instruction

    def tokenize(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> dict[str, Any]:
        pairs = list(zip(queries, candidates, strict=True))
        texts = self.processor.render([judge_conversation(q, c, self.default_instruction) for q, c in pairs])
        images = [
            qvi.fetch_image(img, min_pixels=self.min_pixels, max_pixels=self.max_pixels)
            for q, c in pairs
            for img in (q.image, c.image)
            if img is not None
        ]
        texts, vision = self.processor.expand(texts, images)
        tok = self.processor.tokenizer
        specials = set(tok.all_special_ids)
        ids = [
            truncate_keeping_specials(row[:-ANSWER_TAIL], self.max_length, specials) + row[-ANSWER_TAIL:]
            for row in tok(texts, padding=False, truncation=False)["input_ids"]
        ]
        enc = tok.pad({"input_ids": ids}, padding=True, padding_side="left", return_tensors="pt")  # official: left
        inputs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], **vision}
        inputs["mm_token_type_ids"] = self.processor.mm_token_type_ids(enc["input_ids"])
        return inputs

    def score_pairs(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray:
        import torch

        if len(queries) != len(candidates):
            raise ValueError(f"score_pairs: {len(queries)} queries but {len(candidates)} candidates")
        inputs = {k: v.to(self.device) for k, v in self.tokenize(queries, candidates).items()}
        with torch.inference_mode():
            last = self.model(**inputs).last_hidden_state[:, -1]
            scores = torch.sigmoid(last @ self.score_weight.to(last.dtype))
        return scores.float().cpu().numpy().astype(np.float64)


def reranker_options(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "max_length": int(options.get("max_length", RERANK_MAX_LENGTH)),
        "min_pixels": int(options.get("min_pixels", qvi.MIN_PIXELS)),
        "max_pixels": int(options.get("max_pixels", qvi.MAX_PIXELS)),
    }


def load_qwen3_vl_reranker(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Qwen3VLReranker:
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision)
    lm = AutoModelForImageTextToText.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    processor = qvi.QwenVLProcessor(
        tokenizer, image_processor, qvi.chat_template_of(tokenizer, path, kwargs.get("revision"))
    )
    return Qwen3VLReranker(lm.model, lm.lm_head.weight, processor, device=device, **reranker_options(entry.options))


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    raise ValueError(f"{entry.name} is a reranker; use it with --rerank, not --model")


def load_reranker(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    if entry.options.get("pipeline") == "cross_encoder":  # a text cross-encoder (bge-reranker-v2-m3)
        from model_adapters.families.cross_encoder import load_cross_encoder

        return load_cross_encoder(entry, path, device=device, dtype=dtype)
    return load_qwen3_vl_reranker(entry, path, device=device, dtype=dtype)
