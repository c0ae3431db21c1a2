"""The one encoder interface every model family implements (mteb style: a `typing.Protocol`, no base class).

An encoder turns batches of model-visible inputs into vectors. The runner never looks inside a model: it builds
`ModelInput` values (docs/protocol.md §3 serialization, see `model_adapters.planning.inputs`), hands them to `encode_queries` or
`encode_candidates`, and checks what comes back (finite, right dimension). A reasoning embedder (`ReasoningEncoder`)
generates text first: the runner caches each generation under its `GenerationSpec` and hands it to `encode`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class ModelInput:
    """What a model sees for one query or candidate.

    `text` is the serialized text (docs/protocol.md §3), `image` the encoded image bytes (PNG/JPEG, or None), `instruction` the
    benchmark's task instruction (docs/protocol.md §3: given through a model's instruction field where it has one, else
    prepended to the text by the adapter; candidates never carry one).
    """

    text: str = ""
    image: bytes | None = None
    instruction: str | None = None


@runtime_checkable
class Encoder(Protocol):
    """An embedding model. Vectors are float32 rows, one per input, in input order (normalization is optional:
    the runner L2-normalizes before scoring, docs/protocol.md §3)."""

    dim: int

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray: ...

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray: ...


@runtime_checkable
class StagedEncoder(Protocol):
    """An `Encoder` that also exposes its two steps, so the runner can prepare upcoming batches while the model runs
    the current one (model_adapters.vectors.pipeline; optional: an encoder without these methods is called through
    `encode_queries` / `encode_candidates`). `role` is "query" or "candidate".

    - `input_lengths`: each input's token count as the model will see it (image tokens included), for length
      bucketing; cheap (no image decoding where the size can be read from the header);
    - `prepare`: everything before the model (decode, resize, tokenize) on the CPU, returning what `forward` takes;
      called from background threads, several at once, while `forward` runs: it must not touch the model, and
      must not share a tokenizer between threads (`families.common.PerThread`); an encoder whose `prepare`
      cannot run on several threads at once says so with a `prepare_threads` attribute (e.g. 1);
    - `forward`: the model on prepared inputs, returning one vector per input (a torch tensor, which may stay on
      the device, or an array); `forward(prepare(batch, role), role)` is exactly `encode_queries` /
      `encode_candidates`.
    """

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]: ...

    def prepare(self, batch: Sequence[ModelInput], role: str) -> Any: ...

    def forward(self, prepared: Any, role: str) -> Any: ...


@runtime_checkable
class Reranker(Protocol):
    """A pairwise scorer for the two-stage reference (docs/protocol.md §4): one float per (query, candidate) pair, higher is
    more relevant."""

    def score_pairs(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray: ...


# --- reasoning embedders: generate, then embed --------------------------------------------------------------------
@dataclass(frozen=True)
class Generation:
    """What a generator wrote for one input: the text, the generated token ids where the embedding reads them (e.g.
    UME-R1 reads a hidden state at a position of the generated ids), and `fallback`, the reason the embedding of this
    input cannot be read as the recipe intends (e.g. "no <gen_emb> in the generated ids"; None when it can). Stored in
    the generation cache and reused: a cached generation is never generated again."""

    text: str
    token_ids: tuple[int, ...] | None = None
    fallback: str | None = None


@dataclass(frozen=True)
class GenerationSpec:
    """Everything that decides a generated text (the generation stage's identity and cache key).

    `generator`: the generating model (Hub id, folder or API model); `revision`: its commit / version; `prompts`: every
    prompt the generator uses, by name (e.g. {"query": ..., "candidate": ...}; hashed into the key); `decoding`: every
    decoding setting (do_sample, temperature, top_p, top_k, max_new_tokens, ...); `seed`: the sampling seed (None for
    greedy decoding); `roles`: the sides that generate ("query", "candidate"); the other side is encoded without
    generated text. `version`: bump when `generate` changes in a way the fields above do not show.
    """

    generator: str
    revision: str | None
    prompts: Mapping[str, str]
    decoding: Mapping[str, Any]
    seed: int | None = None
    roles: tuple[str, ...] = ("query", "candidate")
    version: str = "1"


@runtime_checkable
class ReasoningEncoder(Protocol):
    """An embedder that first generates text for an input, then embeds the input together with that text (UME-R1 in
    Gen mode, Embed-RL with T-CoT). The runner calls `generate` only for inputs whose generation is not cached (key:
    `generation` + the input's role, text, image bytes and instruction), stores the result, and calls `encode` with
    the stored generations; a cached generation is reused, never regenerated. `role` is "query" or "candidate";
    for a role not in `generation.roles`, `encode` gets `generations=None`. Vectors as for `Encoder`."""

    dim: int
    generation: GenerationSpec

    def generate(self, batch: Sequence[ModelInput], role: str) -> Sequence[str | Generation]: ...

    def encode(
        self, batch: Sequence[ModelInput], generations: Sequence[Generation] | None, role: str
    ) -> np.ndarray: ...


class OfflineMiss(Exception):  # noqa: N818 (a signal, not an error: the runner counts these over the whole run)
    """Raised by a model that may only read stored responses (`--offline`) for a batch of which `missing` inputs
    are not stored (`where`: the response cache). The runner counts them over the run and stops with one line."""

    def __init__(self, missing: int, where: str) -> None:
        super().__init__(f"{missing} input(s) not in the response cache {where}")
        self.missing = missing
        self.where = where
