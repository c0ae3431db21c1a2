"""The one encoder interface every model family implements (mteb style: a `typing.Protocol`, no base class).

An encoder turns batches of model-visible inputs into vectors. The runner never looks inside a model: it builds
`ModelInput` values (docs/protocol.md §3 serialization, see `model_adapters.planning.inputs`), hands them to `encode_queries` or
`encode_candidates`, and checks what comes back (finite, right dimension).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

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
class Reranker(Protocol):
    """A pairwise scorer for the two-stage reference (docs/protocol.md §4): one float per (query, candidate) pair, higher is
    more relevant."""

    def score_pairs(self, queries: Sequence[ModelInput], candidates: Sequence[ModelInput]) -> np.ndarray: ...
