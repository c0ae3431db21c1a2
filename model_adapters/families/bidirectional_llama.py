"""A Llama run as a bidirectional encoder with GritLM-style mean pooling: ReasonIR-8B (ARK §4.1 text embedder).

ReasonIR's remote code (`ReasonIRModel` of facebookresearch/ReasonIR training/modeling_llama.py @ 0aac962, a
LlamaModel subclass written against transformers 4.47) encodes as follows, and so does this module:
- text = `instruction + text` (`embed_eos` is ""), tokenized with the model's tokenizer (`<|begin_of_text|>`
  prepended), right padding, truncated at `max_length` tokens;
- the Llama stack with **bidirectional** attention (`is_causal=False`: only padding is masked);
- mean of the last hidden states over the attended tokens **minus the first len(tokenize(instruction)) positions**
  (the instruction, BOS included, takes part in attention but not in the mean), in float32; then L2.
In transformers 5.24 the attention is made bidirectional the supported way: `config.is_causal = False` (transformers
PR #43705, "Allow bi-directional attention for all models": `create_causal_mask` then builds a padding-only mask and
every attention module gets `is_causal=False`) on the native `LlamaModel`, with the checkpoint's own weights; no
remote code is run.

The instruction strings are the recipe's (the authors' BRIGHT evaluation configs): a query with a benchmark
instruction gets `query_instruction_template` (`<|user|>\\n{instruction}\\n<|embed|>\\n`), one without gets
`query_instruction_default`, documents `document_instruction` (both `<|embed|>\\n`). An input with no token left for
the mean (e.g. an empty text: only the instruction) is refused — the authors' code divides by zero there (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from model_adapters.families.common import PerThread
from model_adapters.planning.inputs import join_instruction
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

MODEL_TYPE = "llama"


@dataclass(frozen=True)
class BidirectionalLlamaOptions:
    """A bidirectional-Llama recipe's options (the names a table row may set)."""

    query_instruction_template: str | None = None  # a query's instruction text around the benchmark instruction
    query_instruction_default: str | None = None  # the instruction text of a query without one
    document_instruction: str | None = None  # the instruction text of every document
    max_length: int | None = None  # token limit


@dataclass(frozen=True)
class Instructions:
    """The instruction (prefix) each side gets, as ReasonIR's `encode(..., instruction=...)` takes it."""

    query_template: str  # with "{instruction}": a query that carries a benchmark instruction
    query_default: str  # a query without one
    document: str

    def of_query(self, item: ModelInput) -> str:
        return self.query_template.format(instruction=item.instruction) if item.instruction else self.query_default


@dataclass(frozen=True)
class PrefixedTextLimit(TextLimit):
    """The text limit counted on the exact text the encoder tokenizes (instruction + text). Items carry no role here:
    an item without an instruction is counted with `query_default`, the same string as `document` in the recipe."""

    instructions: Instructions | None = None

    def model_text(self, item: ModelInput) -> str:
        if not item.text or self.instructions is None:
            return item.text
        return self.instructions.of_query(item) + item.text


def pooled_mask(attention_mask: Any, instruction_lengths: Sequence[int]) -> Any:
    """The attention mask with each row's first `instruction_lengths[i]` positions zeroed (right padding), as
    ReasonIRModel.encode masks the instruction before its mean pooling.

    >>> import torch
    >>> pooled_mask(torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]), [2, 1]).tolist()
    [[0, 0, 1, 1], [0, 1, 1, 0]]
    """
    mask = attention_mask.clone()
    for row, n in enumerate(instruction_lengths):
        mask[row, :n] = 0
    return mask


def mean_pool(hidden: Any, mask: Any) -> Any:
    """Mean of the hidden states over `mask` in float32 (ReasonIRModel.pooling, "mean"), then L2."""
    import torch

    summed = (hidden.float() * mask.unsqueeze(-1).float()).sum(dim=1)
    mean = summed / mask.sum(dim=1, keepdim=True).float()
    return torch.nn.functional.normalize(mean, dim=-1)


class BidirectionalLlamaEncoder:
    def __init__(
        self, model: Any, tokenizer: Any, instructions: Instructions, *, max_length: int, device: str = "cpu"
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.instructions = instructions
        self.max_length = max_length
        self.device = device
        self.dim = int(model.config.hidden_size)
        self._length_tokenizer = PerThread(tokenizer)

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Tokens of `instruction + text` per input (cut at max_length), for length bucketing."""
        if role == "query":
            texts = [self.instructions.of_query(item) + item.text for item in batch]
        else:
            texts = [self.instructions.document + join_instruction(item.instruction, item.text) for item in batch]
        ids = self._length_tokenizer.get()(texts, truncation=True, max_length=self.max_length)["input_ids"]
        return [len(row) for row in ids]

    def text_limit(self) -> TextLimit:
        return PrefixedTextLimit(self.max_length, self.tokenizer, instructions=self.instructions)

    def _instruction_length(self, instruction: str) -> int:
        """len(tokenize(instruction)) with special tokens, cut at max_length, as ReasonIRModel.encode counts it."""
        if not instruction:  # ReasonIRModel.encode masks nothing for an empty instruction
            return 0
        return len(self.tokenizer(instruction, padding=False, truncation=True, max_length=self.max_length)["input_ids"])

    def tokenize(self, texts: Sequence[str], instructions: Sequence[str]) -> tuple[Any, Any]:
        """(inputs, pooled mask) for `instruction + text` per row: one string, tokenized whole (never the two parts
        apart), right-padded; the pooled mask drops each row's first len(tokenize(instruction)) positions."""
        inputs = self.tokenizer(
            [i + t for i, t in zip(instructions, texts, strict=True)],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        lengths = {i: self._instruction_length(i) for i in set(instructions)}
        return inputs, pooled_mask(inputs["attention_mask"], [lengths[i] for i in instructions])

    def encode(self, texts: Sequence[str], instructions: Sequence[str]) -> np.ndarray:
        import torch

        inputs, pooled = self.tokenize(texts, instructions)
        empty = [i for i, n in enumerate(pooled.sum(dim=1).tolist()) if n == 0]
        if empty:  # a data problem (e.g. an image whose caption is empty), said in one line
            i = empty[0]
            raise TriadError(
                f"input {texts[i][:80]!r} (instruction {instructions[i]!r}): no token is left for "
                "ReasonIR's mean pooling once the instruction is excluded (its authors' code returns NaN "
                "there); give the item a non-empty text or caption"
            )
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        with torch.inference_mode():
            hidden = self.model(
                input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], use_cache=False
            ).last_hidden_state
        return mean_pool(hidden, pooled.to(hidden.device)).cpu().numpy().astype(np.float32)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode([item.text for item in batch], [self.instructions.of_query(item) for item in batch])

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        # candidates carry no benchmark instruction (B.3); one given anyway is prepended to the text
        texts = [join_instruction(item.instruction, item.text) for item in batch]
        return self.encode(texts, [self.instructions.document] * len(batch))


def instructions_of(entry: Any) -> Instructions:
    opts = entry.options
    return Instructions(
        opts["query_instruction_template"], opts["query_instruction_default"], opts["document_instruction"]
    )


def _tokenizer(entry: Any, path: str) -> Any:
    from transformers import AutoTokenizer

    from model_adapters.families.common import hub_kwargs

    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="right", **hub_kwargs(path, entry.revision))
    if tokenizer.pad_token is None:  # as GritLM's training sets it; padded positions are masked out everywhere
        tokenizer.pad_token = tokenizer.bos_token
    return tokenizer


def text_limit(entry: Any, path: str) -> TextLimit:
    """The text limit with the tokenizer only (no weights), for counting truncated inputs."""
    return PrefixedTextLimit(
        int(entry.options["max_length"]), _tokenizer(entry, path), instructions=instructions_of(entry)
    )


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "bfloat16") -> BidirectionalLlamaEncoder:
    import os

    if os.path.isdir(path):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import LlamaConfig, LlamaModel

    from model_adapters.families.common import hub_kwargs, torch_dtype

    kwargs = hub_kwargs(path, entry.revision)
    config = LlamaConfig.from_pretrained(path, **kwargs)
    if config.model_type != MODEL_TYPE:
        raise TriadError(
            f"model {entry.name}: config.json says model_type {config.model_type!r}; recipe "
            f"{entry.recipe.name} was proven on a {MODEL_TYPE!r} backbone (ReasonIRModel)"
        )
    config.is_causal = False  # bidirectional attention: ReasonIRModel.encode's `is_causal=False`
    model = LlamaModel.from_pretrained(path, config=config, dtype=torch_dtype(dtype), **kwargs).to(device).eval()  # type: ignore[arg-type]  # transformers' stubs hide `to`'s self behind a decorator
    return BidirectionalLlamaEncoder(
        model,
        _tokenizer(entry, path),
        instructions_of(entry),
        max_length=int(entry.options["max_length"]),
        device=device,
    )
