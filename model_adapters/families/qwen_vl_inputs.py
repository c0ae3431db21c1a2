"""Inputs of the Qwen3-VL embedder and reranker, built as the official code builds them.

Reference: `src/models/qwen3_vl_embedding.py` and `src/models/qwen3_vl_reranker.py` of QwenLM/Qwen3-VL-Embedding
(commit 8ce3aab1fbcc7b7143b094f0b2005dd89e7246b9), which call `qwen_vl_utils.process_vision_info` (qwen-vl-utils
0.0.14) and `Qwen3VLProcessor`. Each image is resized by `fetch_image` (below: `smart_resize` to multiples of 32
between min/max pixels, RGBA pasted on white, PIL's default bicubic resize), then given to the image processor with
`do_resize=False`; the conversation is rendered by the model's chat template; every `<|image_pad|>` is expanded to
grid_t·grid_h·grid_w / merge² copies exactly as `Qwen3VLProcessor.replace_image_token` does.

We build the processor's output from its tokenizer and image processor because `Qwen3VLProcessor` cannot be
constructed without torchvision (its video processor); `tests/models/test_qwen3_vl_reference.py` proves the token ids and
vectors identical to the official code's on a tiny Qwen3-VL.
"""

from __future__ import annotations

import io
import math
import unicodedata
from collections.abc import Sequence
from typing import Any, Final

IMAGE_PAD: Final = "<|image_pad|>"
PATCH_SIZE: Final = 16  # Qwen3-VL vision patch (official: image_patch_size=16)
MERGE_SIZE: Final = 2
FACTOR: Final = PATCH_SIZE * MERGE_SIZE  # 32
MIN_PIXELS: Final = 4 * FACTOR * FACTOR  # official MIN_PIXELS
MAX_PIXELS: Final = 1800 * FACTOR * FACTOR  # official MAX_PIXELS
MAX_RATIO: Final = 200  # qwen_vl_utils.vision_process.MAX_RATIO
MAX_LENGTH: Final = 8192  # official embedder MAX_LENGTH (the reranker's is 10240)
EMPTY_CONTENT: Final = "NULL"  # what the official code sends for an input with neither text nor image


def with_period(instruction: str | None) -> str | None:
    """The official instruction rule: strip it, and add a period unless it ends in punctuation.

    >>> with_period("Retrieve images")
    'Retrieve images.'
    >>> with_period(" Find it? ")
    'Find it?'
    >>> with_period("") is None
    True
    """
    if not instruction or not instruction.strip():
        return None
    instruction = instruction.strip()
    if not unicodedata.category(instruction[-1]).startswith("P"):
        instruction += "."
    return instruction


def smart_resize(
    height: int, width: int, factor: int = FACTOR, min_pixels: int = MIN_PIXELS, max_pixels: int = MAX_PIXELS
) -> tuple[int, int]:
    """(height, width) multiples of `factor` with min_pixels ≤ h·w ≤ max_pixels, aspect kept (qwen_vl_utils).

    >>> smart_resize(20, 30)
    (64, 96)
    >>> smart_resize(1300, 1500)
    (1248, 1440)
    """
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(f"image aspect ratio {max(height, width) / min(height, width):.0f} exceeds {MAX_RATIO}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def image_tokens(size: tuple[int, int], factor: int, min_pixels: int, max_pixels: int) -> int:
    """Vision tokens of an image of `size` (width, height) once `smart_resize`d to multiples of `factor` (one token
    per factor x factor cell); 0 for an unreadable size or an aspect `smart_resize` refuses (the encode step names
    such an image). For length bucketing (model_adapters.vectors.schedule).

    >>> image_tokens((800, 600), 32, MIN_PIXELS, MAX_PIXELS), image_tokens((0, 0), 32, MIN_PIXELS, MAX_PIXELS)
    (475, 0)
    """
    width, height = size
    if not width or not height or max(width, height) / min(width, height) > MAX_RATIO:
        return 0
    h, w = smart_resize(height, width, factor, min_pixels, max_pixels)
    return h * w // factor**2


def fetch_image(
    data: bytes,
    *,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
    factor: int = FACTOR,
    rgba: str = "white",
) -> Any:
    """Decode, convert to RGB and resize an image as `qwen_vl_utils.fetch_image` does: RGBA pasted on white
    (qwen-vl-utils 0.0.14, rgba="white") or PIL's plain `convert("RGB")` (the copies vendored by RzenEmbed, LamRA
    and Ops-MM, rgba="convert"); `smart_resize` to multiples of `factor`; PIL's default bicubic resize."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            if img.mode == "RGBA" and rgba == "white":
                rgb = Image.new("RGB", img.size, (255, 255, 255))
                rgb.paste(img, mask=img.split()[3])
            else:
                rgb = img.convert("RGB")
    except Exception as exc:  # PIL raises many types (UnidentifiedImageError, OSError, SyntaxError...)
        raise ValueError(f"image does not decode ({type(exc).__name__}: {exc})") from exc
    width, height = rgb.size
    new_height, new_width = smart_resize(height, width, factor, min_pixels, max_pixels)
    return rgb.resize((new_width, new_height))


def content(text: str, image: bytes | None) -> list[dict[str, Any]]:
    """One input's content list (official order: image before text; neither becomes the text "NULL")."""
    if not text and image is None:
        return [{"type": "text", "text": EMPTY_CONTENT}]
    parts: list[dict[str, Any]] = [{"type": "image"}] if image is not None else []
    if text:
        parts.append({"type": "text", "text": text})
    return parts


def chat_template_of(tokenizer: Any, path: str, revision: str | None) -> str:
    """The processor's chat template (chat_template.jinja / chat_template.json, as `Qwen3VLProcessor` loads it),
    else the tokenizer's."""
    import json
    import os

    for name in ("chat_template.jinja", "chat_template.json"):
        file: str | None
        if os.path.isdir(path):
            file = os.path.join(path, name)
            file = file if os.path.exists(file) else None
        else:
            from huggingface_hub import hf_hub_download
            from huggingface_hub.errors import EntryNotFoundError

            try:
                file = hf_hub_download(path, name, revision=revision or None)
            except EntryNotFoundError:
                file = None
        if file:
            with open(file, encoding="utf-8") as handle:
                text = handle.read()
            return json.loads(text)["chat_template"] if name.endswith(".json") else text
    if tokenizer.chat_template:
        return tokenizer.chat_template
    raise ValueError(f"{path}: no chat template (chat_template.jinja/.json or tokenizer_config.json)")


class QwenVLProcessor:
    """`Qwen3VLProcessor(text=..., images=..., do_resize=False)` from its tokenizer + image processor."""

    def __init__(self, tokenizer: Any, image_processor: Any, chat_template: str) -> None:
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.chat_template = chat_template
        self.merge = int(getattr(image_processor, "merge_size", MERGE_SIZE))
        self.image_token_id = tokenizer.convert_tokens_to_ids(IMAGE_PAD)

    def render(
        self,
        conversations: Sequence[list[dict[str, Any]]],
        *,
        add_generation_prompt: bool = True,
        use_tokenizer_template: bool = False,
    ) -> list[str]:
        """Each conversation rendered by the processor's chat template (or the tokenizer's own)."""
        template = None if use_tokenizer_template else self.chat_template
        return [
            self.tokenizer.apply_chat_template(
                c, chat_template=template, tokenize=False, add_generation_prompt=add_generation_prompt
            )
            for c in conversations
        ]

    def expand(
        self,
        texts: Sequence[str],
        images: Sequence[Any],
        *,
        do_resize: bool = False,
        size: dict[str, int] | None = None,
    ) -> tuple[list[str], dict[str, Any]]:
        """Texts with each image placeholder expanded to its vision tokens, and the pixel tensors (the image
        processor resizes again within its own bounds, or `size`, when `do_resize`)."""
        if not images:
            return list(texts), {}
        extra = {"size": size} if size else {}
        pixels = self.image_processor(images=list(images), do_resize=do_resize, return_tensors="pt", **extra)
        counts = iter(int(g.prod()) // self.merge**2 for g in pixels["image_grid_thw"])
        out = []
        for text in texts:
            pieces = text.split(IMAGE_PAD)
            out.append(pieces[0] + "".join(IMAGE_PAD * next(counts) + piece for piece in pieces[1:]))
        return out, {"pixel_values": pixels["pixel_values"], "image_grid_thw": pixels["image_grid_thw"]}

    def mm_token_type_ids(self, input_ids: Any) -> Any:
        """1 at image tokens, 0 elsewhere (what `Qwen3VLProcessor` returns as `mm_token_type_ids`)."""
        import torch

        return (input_ids == self.image_token_id).to(torch.long)
