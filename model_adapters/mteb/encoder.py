"""Your `model_adapters.protocol.Encoder` as an mteb encoder, so `mteb.evaluate` runs it on any mteb task.

mteb hands each batch as columns: "text" (strings) and, for image tasks, "image" (PIL images). An image reaches the
encoder as the PNG bytes of its decoded pixels (lossless), a query through `encode_queries` and a document
through `encode_candidates`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from model_adapters.protocol import Encoder, ModelInput


def _png(image: Any) -> bytes | None:
    if image is None:
        return None
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def model_inputs(batch: Mapping[str, Any]) -> list[ModelInput]:
    """One batch of mteb's dataloader as model inputs (text, image bytes; no instruction: tasks render it)."""
    texts = list(batch.get("text") or [])
    images = list(batch.get("image") or [])
    size = max(len(texts), len(images))
    texts = texts or [""] * size
    images = images or [None] * size
    return [ModelInput(text=t or "", image=_png(i)) for t, i in zip(texts, images, strict=True)]


def _meta(encoder: Encoder, name: str, revision: str | None) -> Any:
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    sees_images = bool(getattr(encoder, "sees_images", True))
    return ModelMeta.create_empty(
        {
            "name": name,
            "revision": revision,
            "embed_dim": int(encoder.dim),
            "similarity_fn_name": ScoringFunction.COSINE,  # the runner L2-normalizes and ranks by cosine (docs/protocol.md §3)
            "modalities": ["text", "image"] if sees_images else ["text"],
            "framework": ["PyTorch"],
        }
    )


def as_mteb_encoder(encoder: Encoder, *, name: str, revision: str | None = None) -> Any:
    """An mteb encoder running `encoder`; `name` ("org/model") and `revision` label its mteb results.

    Args:
        encoder: an object satisfying `model_adapters.protocol.Encoder`.
        name: the model name mteb records, "org/model".
        revision: your encoder's version.
    """
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.types import PromptType

    class ProtocolEncoder(AbsEncoder):
        """`encode` feeds mteb's batches to the wrapped encoder's query or candidate side."""

        def __init__(self) -> None:
            self.model = encoder
            self.mteb_model_meta = _meta(encoder, name, revision)

        def encode(self, inputs: Iterable[Mapping[str, Any]], *, prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
            side = encoder.encode_queries if prompt_type == PromptType.query else encoder.encode_candidates
            parts = [np.asarray(side(model_inputs(batch)), dtype=np.float32) for batch in inputs]
            return np.concatenate(parts) if parts else np.zeros((0, encoder.dim), np.float32)

    return ProtocolEncoder()
