"""Dual-tower image–text encoders through transformers (CLIP, SigLIP / SigLIP-2, jina-clip-v2 style).

Fusion (paper B.2.1, following MMEB): the unnormalized projected text and image features are added 1:1 and the
sum is L2-normalized, for queries and candidates alike. These models have no instruction field, so the
instruction is prepended to the text (paper B.3, `model_adapters.planning.inputs.join_instruction`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from model_adapters.families.common import (
    PerThread,
    decode_image,
    features,
    hub_kwargs,
    l2_normalize_rows,
    pinned,
    to_device,
    torch_dtype,
)
from model_adapters.planning.inputs import ascii_lower, join_instruction
from model_adapters.planning.truncation import TextLimit
from model_adapters.protocol import ModelInput

IMAGE_INPUTS: Final = ("pixel_values", "pixel_attention_mask", "spatial_shapes")  # what an image tower may take


@dataclass(frozen=True)
class DualTowerOptions:
    """A dual-tower recipe's or entry's options (the names a table row may set)."""

    max_length: int | None = None  # text token limit (else the checkpoint's text positions)
    padding: str | None = None  # tokenizer padding (SigLIP: "max_length")
    lowercase: bool = False  # lowercase A-Z first (SigLIP 2's authors: big_vision's `lower` op)
    padding_side: str | None = None  # "right" pins it (SigLIP: big_vision pads at the end); else the tokenizer's
    trust_remote_code: bool = False  # load the checkpoint's remote code


def fuse(text: np.ndarray | None, image: np.ndarray | None) -> np.ndarray:
    """1:1 sum of unnormalized projections, then L2 (paper B.2.1); a missing side contributes nothing.

    >>> fuse(np.array([[3.0, 0.0]]), np.array([[0.0, 4.0]])).round(2).tolist()
    [[0.6, 0.8]]
    """
    if text is None and image is None:
        raise ValueError("fuse needs at least one of text and image features")
    total = (0 if text is None else text) + (0 if image is None else image)
    norms = np.linalg.norm(total, axis=1, keepdims=True)
    return total / np.where(norms == 0, 1.0, norms)


class DualTowerEncoder:
    """Encodes each input's text and image with separate towers and fuses them with `fuse`; in two steps for the
    runner's input pipeline (protocol.StagedEncoder): `prepare` tokenizes and decodes + processes the images on a
    thread's own tokenizer and image processor, `forward` runs both towers and fuses on the device (no host copy
    between the towers)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        image_processor: Any,
        *,
        device: str = "cpu",
        padding: str | bool = True,
        max_length: int = 77,
        lowercase: bool = False,
        padding_side: str | None = None,
    ) -> None:
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self._processors = PerThread((tokenizer, image_processor))
        self.device = device
        self.padding = padding
        self.max_length = max_length
        self.lowercase = lowercase
        self.padding_side = padding_side
        config = model.config
        self.dim = int(getattr(config, "projection_dim", 0) or getattr(config.text_config, "hidden_size", 0))

    def _texts(self, batch: Sequence[ModelInput]) -> list[str]:
        texts = [join_instruction(item.instruction, item.text) for item in batch]
        return [ascii_lower(t) for t in texts] if self.lowercase else texts

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Text tokens per input (cut at max_length); the image tower's input has one size for every image."""
        tokenizer, _ = self._processors.get()
        texts = self._texts(batch)
        ids = tokenizer([t for t in texts if t], truncation=True, max_length=self.max_length)["input_ids"]
        it = iter(ids)
        return [len(next(it)) if t else 0 for t in texts]

    def prepare(self, batch: Sequence[ModelInput], role: str) -> dict[str, Any]:
        tokenizer, image_processor = self._processors.get()
        texts = self._texts(batch)
        text_rows = [i for i, t in enumerate(texts) if t]
        image_rows = [i for i, item in enumerate(batch) if item.image is not None]
        out: dict[str, Any] = {"size": len(batch), "text_rows": text_rows, "image_rows": image_rows}
        if text_rows:
            side = {"padding_side": self.padding_side} if self.padding_side else {}
            enc = tokenizer(
                [texts[i] for i in text_rows],
                padding=self.padding,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
                **side,
            )
            out["text"] = pinned({k: enc[k] for k in self.text_inputs()}, self.device)
        if image_rows:
            images = [decode_image(item.image) for item in batch if item.image is not None]
            pixels = image_processor(images=images, return_tensors="pt")
            # NaFlex (Siglip2Model) images also carry their patch mask and grid shapes
            out["image"] = pinned({k: pixels[k] for k in IMAGE_INPUTS if k in pixels}, self.device)
        return out

    def text_inputs(self) -> tuple[str, ...]:
        """What the text tower receives: SigLIP's towers only the ids, no attention mask, as big_vision's text
        transformer (`models/proj/image_text/text_transformer.py`) is called and trained; other towers the mask too."""
        if getattr(self.model.config, "model_type", "") in ("siglip", "siglip2"):
            return ("input_ids",)
        return ("input_ids", "attention_mask")

    def forward(self, prepared: dict[str, Any], role: str) -> Any:
        import torch

        total = torch.zeros((prepared["size"], self.dim), dtype=torch.float32, device=self.device)
        with torch.inference_mode():
            if prepared["text_rows"]:
                text = features(self.model.get_text_features(**to_device(prepared["text"], self.device)))
                total[prepared["text_rows"]] += text.float()
            if prepared["image_rows"]:
                image = to_device(prepared["image"], self.device)
                image["pixel_values"] = image["pixel_values"].to(next(self.model.parameters()).dtype)
                total[prepared["image_rows"]] += features(self.model.get_image_features(**image)).float()
        return l2_normalize_rows(total)  # fuse: 1:1 sum, then L2 (paper B.2.1)

    def text_limit(self) -> TextLimit:
        """The limit `prepare` truncates texts at, counted with this encoder's tokenizer (runner reports)."""
        return TextLimit(self.max_length, self.tokenizer, self.lowercase)

    def encode(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, "query"), "query").cpu().numpy()

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)


def text_limit(entry: Any, path: str) -> TextLimit:
    """The entry's text limit with its tokenizer only (no weights), for counting truncated inputs at plan time."""
    from transformers import AutoTokenizer

    opts = entry.options
    kwargs = hub_kwargs(path, entry.revision, trust_remote_code=bool(opts.get("trust_remote_code", False)))
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    return TextLimit(int(opts.get("max_length", 77)), tokenizer, bool(opts.get("lowercase", False)))


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> DualTowerEncoder:
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    opts = entry.options
    kwargs = hub_kwargs(path, entry.revision, trust_remote_code=bool(opts.get("trust_remote_code", False)))
    model = AutoModel.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    return DualTowerEncoder(
        model,
        tokenizer,
        image_processor,
        device=device,
        padding=opts.get("padding", True),
        max_length=int(opts.get("max_length", 77)),
        lowercase=bool(opts.get("lowercase", False)),
        padding_side=opts.get("padding_side"),
    )
