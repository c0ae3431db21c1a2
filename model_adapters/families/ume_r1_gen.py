"""UME-R1 in Gen mode (TRIAD §5.4, B.2.1): the query side generates, the candidate side is Disc mode.

Reference: XMUDeepLIT/UME-R1 @ 55e551260dd7, README "Example of obtaining generative embeddings" (the input and the
prompt) and src/eval/VLM2Vec/eval_twomode.py (`encode_embeddings` mode "gen", `get_gen_embedding_idx`):

- input: the Disc recipe's user turn with the README's prompt after "\\n<disc_emb>\\n" (recipe option `gen_prompt`), the chat
  template's generation prompt, left padding; TRIAD's 28x28 white placeholder on pure-text inputs (B.2.1);
- generation: `model.generate` with the checkpoint's own generation_config.json (TRIAD B.2.1 keeps its sampling
  settings) and `max_new_tokens` 8192 (the README and its eval command; recipe option `decoding`);
- embedding: the eval reads `generate(..., output_hidden_states=True).hidden_states[idx][-1]`, the last layer at
  generation step idx = j + 1 after the last `<gen_emb>` at generated position j, or the last step (-1) when there
  is none or `j + 1 >= len(ids) - 1` (the end-of-output check). Step k >= 1 feeds generated token k - 1, so the
  embedding is the last-layer state at generated position idx - 1. We generate once, store the ids, and read that
  position from one teacher-forced forward over prompt + generated ids (`read_index`): equal in exact arithmetic
  because the model is causal (tests/models/test_ume_r1_gen_reference.py: cosine >= 0.9999 against the hidden states of
  `generate`, and against the eval's read-out run on the same tiny checkpoint).

Per row, "the last step" is the row's own (a batch of one: its generation ends at its first end token); in a batched
`generate` a row that ended early is fed padding until the longest row ends, and the eval's -1 then reads such a
padding step, which TRIAD's "last usable generation step" excludes. A row whose first generated token already ends
it has only step 0 (the prompt): its last position is read (the eval's indexing fails there: it takes every prompt
position).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from model_adapters.families import generating
from model_adapters.families.common import l2_normalize
from model_adapters.families.qwen_chat import (
    CANDIDATE,
    QUERY,
    VIDEO_PAD,
    VISION_END,
    VISION_START,
    ChatOptions,
    QwenChatEmbedder,
)
from model_adapters.protocol import Generation, GenerationSpec, ModelInput
from triad_dataset.contract.errors import TriadError

GEN_TOKEN: Final = "<gen_emb>"

# Why an input's embedding is read at the last generation step (results.json "generation" "fallbacks").
NO_MARKER: Final = "no <gen_emb> generated: the last generation step is read"
MARKER_LAST: Final = "<gen_emb> is the last generated token (the eval's end-of-output check): the last step is read"
MARKER_SECOND_LAST: Final = (
    "<gen_emb> is the second-to-last generated token (the eval's end-of-output check): the "
    "last step is read, which is the marker's own step"
)
NOTHING_GENERATED: Final = "nothing generated before the end token: the prompt's last position is read"


def gen_step(ids: Sequence[int], marker: int) -> tuple[int, str | None]:
    """eval_twomode.py `get_gen_embedding_idx` for one row: the generation step whose last-layer state is the
    embedding (-1: the last step), and why it falls back (None when it does not).

    >>> gen_step([5, 9, 7, 7, 2], 9)
    (2, None)
    >>> gen_step([5, 7, 9, 2], 9)[0], gen_step([5, 7, 2], 9)[0]
    (-1, -1)
    """
    for j in range(len(ids) - 1, -1, -1):
        if ids[j] == marker:
            if j + 1 >= len(ids) - 1:
                return -1, (MARKER_LAST if j == len(ids) - 1 else MARKER_SECOND_LAST)
            return j + 1, None
    return -1, (NO_MARKER if len(ids) > 1 else NOTHING_GENERATED)


def read_index(ids: Sequence[int], marker: int) -> tuple[int, str | None]:
    """The generated position whose state the step of `gen_step` holds (step k feeds generated token k - 1; the last
    step is step len - 1); -1 is the prompt's last position (step 0 of a generation that ended at once).

    >>> read_index([5, 9, 7, 7, 2], 9)
    (1, None)
    >>> read_index([5, 7, 2], 9)[0], read_index([2], 9)[0]
    (1, -1)
    """
    step, reason = gen_step(ids, marker)
    if step < 0:
        step = max(len(ids) - 1, 0)
    return step - 1, reason


def query_options(disc: ChatOptions, prompt: str) -> ChatOptions:
    """The Gen query recipe: the Disc recipe with the README's prompt after its "\\n<disc_emb>\\n" suffix."""
    import dataclasses

    suffix = tuple((m, s + prompt) for m, s in disc.suffix)
    return dataclasses.replace(disc, suffix=suffix)


class UmeR1Gen:
    """A `protocol.ReasoningEncoder`: queries generate (Gen mode), candidates are Disc mode. `lm` is the
    Qwen2VLForConditionalGeneration; both sides share its backbone."""

    def __init__(
        self,
        lm: Any,
        processor: Any,
        disc: ChatOptions,
        spec: GenerationSpec,
        *,
        prompt: str,
        device: str = "cpu",
        label: str = "ume-r1-gen",
    ) -> None:
        from transformers import GenerationConfig

        self.lm = lm.to(device).eval()
        self.generation = spec
        self.label = label
        self.query = QwenChatEmbedder(self.lm.model, processor, query_options(disc, prompt), device=device)
        self.candidate = QwenChatEmbedder(self.lm.model, processor, disc, device=device)
        self.dim = self.query.dim
        self.config = GenerationConfig.from_dict(dict(spec.decoding))
        tok = processor.tokenizer
        self.marker = tok.convert_tokens_to_ids(GEN_TOKEN)
        if GEN_TOKEN not in tok.get_vocab():
            raise TriadError(f"model {label}: the tokenizer has no {GEN_TOKEN} token (not a UME-R1 checkpoint)")
        self.vision_ids = {tok.convert_tokens_to_ids(t) for t in (VISION_START, VISION_END, VIDEO_PAD)} | {
            processor.image_token_id
        }

    # --- generation (query side only) -------------------------------------------------------------------------
    def generate(self, batch: Sequence[ModelInput], role: str) -> list[Generation]:
        if role != QUERY:
            raise TriadError(f"model {self.label}: only queries generate (candidates are Disc mode)")
        inputs = self.query.tokenize(batch, QUERY)
        seed = (
            None
            if self.generation.seed is None
            else generating.batch_seed(self.generation.seed, [_bytes(item) for item in batch])
        )
        rows = generating.generate_new_ids(self.lm, inputs, seed=seed, generation_config=self.config)
        texts = generating.decode(self.query.processor.tokenizer, rows, skip_special_tokens=False)
        return [
            Generation(text, tuple(ids), read_index(ids, self.marker)[1]) for text, ids in zip(texts, rows, strict=True)
        ]

    # --- embedding ----------------------------------------------------------------------------------------------
    def encode(self, batch: Sequence[ModelInput], generations: Sequence[Generation] | None, role: str) -> np.ndarray:
        if role == CANDIDATE or generations is None:
            return self.candidate.encode(batch, CANDIDATE)
        return self.read_generated(batch, generations)

    def teacher_forced(
        self, batch: Sequence[ModelInput], generations: Sequence[Generation]
    ) -> tuple[dict[str, Any], list[int]]:
        """The forward inputs over prompt + generated ids (left padded) and each row's read position."""
        inputs = self.query.tokenize(batch, QUERY)
        tok = self.query.processor.tokenizer
        rows, reads = [], []
        for i, gen in enumerate(generations):
            if gen.token_ids is None:
                raise TriadError(
                    f"model {self.label}: a stored generation has no token ids; UME-R1 Gen reads its "
                    "embedding at a generated position"
                )
            if self.vision_ids & set(gen.token_ids):
                raise TriadError(
                    f"model {self.label}: a generated sequence contains a vision token; a teacher-forced "
                    "forward would read it as an image slot, so its embedding cannot be read"
                )
            prompt = [int(t) for t, m in zip(inputs["input_ids"][i], inputs["attention_mask"][i], strict=True) if m]
            rows.append({"input_ids": prompt + list(gen.token_ids)})
            reads.append(read_index(gen.token_ids, self.marker)[0] - len(gen.token_ids))  # from the row's end
        enc = tok.pad(rows, padding=True, padding_side="left", return_tensors="pt")
        forward = {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask", "mm_token_type_ids")}
        forward.update(
            input_ids=enc["input_ids"],
            attention_mask=enc["attention_mask"],
            mm_token_type_ids=self.query.processor.mm_token_type_ids(enc["input_ids"]),
        )
        width = int(enc["input_ids"].shape[1])
        return forward, [width + r for r in reads]

    def read_generated(self, batch: Sequence[ModelInput], generations: Sequence[Generation]) -> np.ndarray:
        import torch

        forward, positions = self.teacher_forced(batch, generations)
        hidden = self.query.hidden_states(forward)
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        pooled = hidden[rows, torch.tensor(positions, device=hidden.device)]
        return l2_normalize(pooled.float().cpu().numpy()).astype(np.float32)


def _bytes(item: ModelInput) -> bytes:
    return b"\0".join([item.text.encode(), item.image or b"", (item.instruction or "").encode()])
