"""VLM embedders with an instruction field (Qwen3-VL-Embedding / VLM2Vec style) through transformers.

Each input becomes one ChatML conversation (the Qwen chat format):

    <|im_start|>system\n{instruction or "Represent the user's input."}<|im_end|>\n
    <|im_start|>user\n{<|vision_start|><|image_pad|>…<|vision_end|> if image}{text}<|im_end|>\n<|im_start|>assistant\n

The benchmark instruction goes into the system turn (the model's instruction field, paper B.3); without one the
model keeps its own outer wrapper "Represent the user's input." (docs/protocol.md §3). The embedding is the last token's final
hidden state (left padding), L2-normalized. Image placeholders are expanded to the number of merged vision patches
(grid_t·grid_h·grid_w / merge²) exactly as the Qwen processors do.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from model_adapters.families._common import decode_image, hub_kwargs, l2_normalize, torch_dtype
from model_adapters.protocol import ModelInput
from triad_dataset.names import VLM_OUTER_INSTRUCTION

IMAGE_PAD: Final = "<|image_pad|>"
VISION_START: Final = "<|vision_start|>"
VISION_END: Final = "<|vision_end|>"
IMAGE_SLOT: Final = "\x00IMAGE\x00"  # placeholder for one image inside a prompt before expansion


def chat_prompt(system: str, user: str, assistant_prefix: str = "") -> str:
    """The ChatML conversation a Qwen-family model receives (IMAGE_SLOT marks where each image goes).

    >>> chat_prompt("Represent the user's input.", "hi")
    "<|im_start|>system\\nRepresent the user's input.<|im_end|>\\n<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n"
    """
    return (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            f"<|im_start|>assistant\n{assistant_prefix}")


def embedding_prompt(item: ModelInput) -> str:
    """The prompt of one embedding input (instruction field, else the outer wrapper; image before text)."""
    system = item.instruction or VLM_OUTER_INSTRUCTION
    return chat_prompt(system, (IMAGE_SLOT if item.image is not None else "") + item.text)


class QwenStyleInputs:
    """Tokenizer + image processor -> model inputs, expanding each image slot to its vision tokens."""

    def __init__(self, tokenizer: Any, image_processor: Any, model: Any, device: str) -> None:
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        self.image_processor = image_processor
        self.device = device
        self.merge = int(getattr(image_processor, "merge_size", 2))
        self.image_token_id = tokenizer.convert_tokens_to_ids(IMAGE_PAD)
        params = inspect.signature(model.forward).parameters
        self.wants_mm_types = "mm_token_type_ids" in params
        self.dtype = next(model.parameters()).dtype

    def __call__(self, prompts: Sequence[str], images: Sequence[bytes]) -> dict[str, Any]:
        import torch

        texts = list(prompts)
        batch: dict[str, Any] = {}
        if images:
            pixels = self.image_processor(images=[decode_image(b) for b in images], return_tensors="pt")
            counts = [int(g.prod()) // self.merge**2 for g in pixels["image_grid_thw"]]
            it = iter(counts)
            texts = []
            for prompt in prompts:
                pieces = prompt.split(IMAGE_SLOT)
                out = pieces[0]
                for piece in pieces[1:]:
                    out += VISION_START + IMAGE_PAD * next(it) + VISION_END + piece
                texts.append(out)
            batch["pixel_values"] = pixels["pixel_values"].to(self.device, dtype=self.dtype)
            batch["image_grid_thw"] = pixels["image_grid_thw"].to(self.device)
        enc = self.tokenizer(texts, padding=True, return_tensors="pt")
        batch["input_ids"] = enc["input_ids"].to(self.device)
        batch["attention_mask"] = enc["attention_mask"].to(self.device)
        if self.wants_mm_types:
            batch["mm_token_type_ids"] = (batch["input_ids"] == self.image_token_id).to(torch.long)
        return batch


class VLMEncoder:
    """Last-token embeddings of a Qwen-style VLM (`AutoModel`, returns `last_hidden_state`)."""

    def __init__(self, model: Any, tokenizer: Any, image_processor: Any, *, device: str = "cpu") -> None:
        self.model = model.to(device).eval()
        self.inputs = QwenStyleInputs(tokenizer, image_processor, self.model, device)
        config = getattr(model.config, "text_config", model.config)
        self.dim = int(config.hidden_size)

    def encode(self, batch: Sequence[ModelInput]) -> np.ndarray:
        import torch

        prompts = [embedding_prompt(item) for item in batch]
        images = [item.image for item in batch if item.image is not None]
        inputs = self.inputs(prompts, images)
        with torch.inference_mode():
            hidden = self.model(**inputs).last_hidden_state
        last = hidden[:, -1, :]  # left padding: the last position is every row's final token
        return l2_normalize(last.float().cpu().numpy()).astype(np.float32)

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> VLMEncoder:
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision, trust_remote_code=bool(entry.options.get("trust_remote_code", False)))
    model = AutoModel.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    return VLMEncoder(model, tokenizer, image_processor, device=device)
