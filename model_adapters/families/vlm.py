"""VLM embedders with an instruction field through transformers.

Qwen3-VL-Embedding (`Qwen3VLEmbedder`, entries with option pipeline="qwen3_vl") mirrors the official
`Qwen3VLEmbedder` (QwenLM/Qwen3-VL-Embedding `src/models/qwen3_vl_embedding.py`, commit 8ce3aab): one conversation
per input, system turn = the instruction (stripped, a period added unless it ends in punctuation) or "Represent the
user's input."; user turn = [image][text] ("NULL" when both are empty); rendered by the model's chat template with
the generation prompt; images resized by `qwen_vl_inputs.fetch_image` (min/max pixels); right padding, truncation
of the whole sequence at `max_length` (8192); embedding = final hidden state of the last attended token,
L2-normalized. The benchmark instruction goes into the system turn (paper B.3 "instruction field"); candidates have
none, so they keep the outer wrapper "Represent the user's input." (paper B.3, docs/protocol.md §3).

VLM2Vec-V2 (`VLM2VecEncoder`, option pipeline="vlm2vec") mirrors VLM2Vec's own encoding path (docs/models.md),
sequential 1-D positions included; VLM2Vec-V1 checkpoints take the same path with option
image_resolution=[1344, 1344] (their evaluation's `image_resolution`).
`VLMEncoder` is a generic ChatML pipeline (left padding, last position), reachable only as `--recipe generic`
(pipeline "generic"); it mirrors no authors' code, is used by no built-in entry, and every output of such a run says
"unverified input pipeline".
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families.common import (
    PerThread,
    decode_image,
    hub_kwargs,
    image_size,
    l2_normalize,
    l2_normalize_rows,
    last_attended_positions,
    pinned,
    to_device,
    torch_dtype,
)
from model_adapters.protocol import ModelInput
from triad_dataset.contract.names import VLM_OUTER_INSTRUCTION

IMAGE_PAD: Final = "<|image_pad|>"
VISION_START: Final = "<|vision_start|>"
VISION_END: Final = "<|vision_end|>"
IMAGE_SLOT: Final = "\x00IMAGE\x00"  # placeholder for one image inside a prompt before expansion


@dataclass(frozen=True)
class VlmOptions:
    """A VLM-embedder recipe's or entry's options (the names a table row may set)."""

    pipeline: str | None = None  # one of PIPELINES
    requires: list[str] | None = None  # modules that must be importable (e.g. peft)
    image_resolution: list[int] | None = None  # [width, height] every image is resized to first
    max_length: int | None = None  # token limit
    min_pixels: int | None = None  # image resize bounds
    max_pixels: int | None = None  # image resize bounds
    trust_remote_code: bool = False  # load the checkpoint's remote code


def chat_prompt(system: str, user: str, assistant_prefix: str = "") -> str:
    """The ChatML conversation a Qwen-family model receives (IMAGE_SLOT marks where each image goes).

    >>> chat_prompt("Represent the user's input.", "hi")
    "<|im_start|>system\\nRepresent the user's input.<|im_end|>\\n<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n"
    """
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
        f"<|im_start|>assistant\n{assistant_prefix}"
    )


def embedding_prompt(item: ModelInput) -> str:
    """The prompt of one embedding input (instruction field, else the outer wrapper; image before text)."""
    system = item.instruction or VLM_OUTER_INSTRUCTION
    return chat_prompt(system, (IMAGE_SLOT if item.image is not None else "") + item.text)


def last_attended_vectors(hidden: Any, mask: Any) -> Any:
    """Final hidden state of each row's last attended token, L2-normalized, as Qwen3-VL-Embedding and VLM2Vec-V2
    pool: a float32 tensor kept on the device (zero rows stay zero)."""
    import torch

    return l2_normalize_rows(hidden[torch.arange(hidden.shape[0], device=hidden.device), last_attended_positions(mask)])


def sequential_positions(mask: Any) -> Any:
    """Positions 0..n-1 over each row's attended tokens on all three M-RoPE axes, shape (3, batch, length): what
    VLM2Vec's vendored `Qwen2VLForConditionalGeneration.get_rope_index` gives a prompt without `<|vision_start|>`
    (it counts images by the token after each vision start, finds none, and numbers the attended tokens in order).

    >>> import torch
    >>> sequential_positions(torch.tensor([[1, 1, 1, 0]]))[:, 0].tolist()
    [[0, 1, 2, 2], [0, 1, 2, 2], [0, 1, 2, 2]]
    """
    positions = (mask.long().cumsum(-1) - 1).clamp(min=0)
    return positions.unsqueeze(0).expand(3, -1, -1)


class SymmetricEncoder:
    """An encoder that embeds queries and candidates alike, through its `encode`."""

    def encode(self, batch: Sequence[ModelInput]) -> np.ndarray:
        raise NotImplementedError

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch)


class LastAttendedEncoder(SymmetricEncoder):
    """A Qwen-VL embedder in two steps for the runner's input pipeline (protocol.StagedEncoder): `prepare` runs the
    subclass's `tokenize` on a thread's own copy of the processor, `forward` runs the model and pools the last
    attended token on the device (L2)."""

    def __init__(self, model: Any, processor: qvi.QwenVLProcessor, device: str) -> None:
        self.model = model.to(device).eval()
        self.processor = processor
        self._processors = PerThread(processor)
        self.device = device
        config = getattr(model.config, "text_config", model.config)
        self.dim = int(config.hidden_size)

    def tokenize(self, batch: Sequence[ModelInput], processor: qvi.QwenVLProcessor | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def prepare(self, batch: Sequence[ModelInput], role: str) -> dict[str, Any]:
        return pinned(self.tokenize(batch, self._processors.get()), self.device)

    def forward(self, prepared: dict[str, Any], role: str) -> Any:
        import torch

        inputs = to_device(prepared, self.device)
        with torch.inference_mode():
            hidden = self.model(**inputs).last_hidden_state
        return last_attended_vectors(hidden, inputs["attention_mask"])

    def encode(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.forward(self.prepare(batch, "query"), "query").cpu().numpy()


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


class VLMEncoder(SymmetricEncoder):
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


class Qwen3VLEmbedder(LastAttendedEncoder):
    """Qwen3-VL-Embedding as its authors run it (see the module docstring); `prepare` builds the official
    `_preprocess_inputs`."""

    def __init__(
        self,
        model: Any,
        processor: qvi.QwenVLProcessor,
        *,
        device: str = "cpu",
        max_length: int = qvi.MAX_LENGTH,
        min_pixels: int = qvi.MIN_PIXELS,
        max_pixels: int = qvi.MAX_PIXELS,
        default_instruction: str = VLM_OUTER_INSTRUCTION,
    ) -> None:
        super().__init__(model, processor, device)
        self.max_length = max_length
        self.min_pixels = min_pixels
        self.max_pixels = max_pixels
        self.default_instruction = default_instruction

    def conversation(self, item: ModelInput) -> list[dict[str, Any]]:
        """The official `format_model_input` for one input."""
        system = qvi.with_period(item.instruction) or self.default_instruction
        return [
            {"role": "system", "content": [{"type": "text", "text": system}]},
            {"role": "user", "content": qvi.content(item.text, item.image)},
        ]

    def tokenize(self, batch: Sequence[ModelInput], processor: qvi.QwenVLProcessor | None = None) -> dict[str, Any]:
        """Model inputs of a batch, identical to the official `_preprocess_inputs`."""
        processor = processor or self.processor
        texts = processor.render([self.conversation(item) for item in batch])
        images = [
            qvi.fetch_image(item.image, min_pixels=self.min_pixels, max_pixels=self.max_pixels)
            for item in batch
            if item.image is not None
        ]
        texts, vision = processor.expand(texts, images)
        enc = processor.tokenizer(
            texts, padding=True, padding_side="right", truncation=True, max_length=self.max_length, return_tensors="pt"
        )  # official: right padding
        batch_inputs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], **vision}
        batch_inputs["mm_token_type_ids"] = processor.mm_token_type_ids(enc["input_ids"])
        return batch_inputs

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Tokens per input: the rendered conversation's, each image's placeholder counted as its vision tokens
        (from the image's header size through `smart_resize`; no decoding), cut at max_length."""
        processor = self._processors.get()
        ids = processor.tokenizer(processor.render([self.conversation(item) for item in batch]))["input_ids"]
        out = []
        for item, row in zip(batch, ids, strict=True):
            n = len(row)
            if item.image is not None:
                n += qvi.image_tokens(image_size(item.image), qvi.FACTOR, self.min_pixels, self.max_pixels) - 1
            out.append(min(n, self.max_length))
        return out


def qwen3_vl_options(options: dict[str, Any]) -> dict[str, Any]:
    """The embedder's settings from an entry's options (official defaults where absent)."""
    return {
        "max_length": int(options.get("max_length", qvi.MAX_LENGTH)),
        "min_pixels": int(options.get("min_pixels", qvi.MIN_PIXELS)),
        "max_pixels": int(options.get("max_pixels", qvi.MAX_PIXELS)),
    }


def load_qwen3_vl(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Qwen3VLEmbedder:
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision)
    model = AutoModel.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)  # Qwen3VLModel
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    template = qvi.chat_template_of(tokenizer, path, kwargs.get("revision"))
    processor = qvi.QwenVLProcessor(tokenizer, image_processor, template)
    return Qwen3VLEmbedder(model, processor, device=device, **qwen3_vl_options(entry.options))


VLM2VEC_MIN_PIXELS: Final = 28 * 28 * 4  # VLM2Vec DataArguments.resize_min_pixels
VLM2VEC_MAX_PIXELS: Final = 28 * 28 * 1280  # VLM2Vec DataArguments.resize_max_pixels
VLM2VEC_MIN_SIDE: Final = 28  # Qwen2_VL_process_fn: an image with a side below 28 px is resized to 56x56


def vlm2vec_text(item: ModelInput) -> str:
    """VLM2Vec's `process_input_text(instruction, "qwen2_vl", text, add_image_token=...)`, character for character:
    "{instruction} {text}", the image token and a space in front; no instruction is the empty string (so a text
    without instruction starts with a space, as in the authors' function).

    >>> vlm2vec_text(ModelInput("a dog", b"png", "Find it."))
    '<|image_pad|> Find it. a dog'
    >>> vlm2vec_text(ModelInput("a dog"))
    ' a dog'
    """
    prompt = item.instruction or ""
    if item.text:
        prompt += " " + item.text
    return f"{IMAGE_PAD} {prompt}" if item.image is not None else prompt


def vlm2vec_v1_image(data: bytes, resolution: tuple[int, int]) -> Any:
    """An image as VLM2Vec's eval collator hands V1 checkpoints their images (`--image_resolution high
    --resize_use_processor false`, experiments/public/eval/eval_vlm2vecv1_8gpu.sh): opened, resized to `resolution`
    (1344x1344, aspect not kept) in its own mode, then made RGB (the image processor's `convert_rgb`)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            return img.resize((resolution[0], resolution[1])).convert("RGB")
    except Exception as exc:  # PIL raises many types (UnidentifiedImageError, OSError, SyntaxError...)
        raise ValueError(f"image does not decode ({type(exc).__name__}: {exc})") from exc


class VLM2VecEncoder(LastAttendedEncoder):
    """VLM2Vec-V2 as its authors encode (TIGER-AI-Lab/VLM2Vec @ 6e1e1d4: `process_input_text`,
    `Qwen2_VL_process_fn`, `MMEBModel._pooling` with pooling="last", normalize=True): no chat template, each input
    tokenized alone (image tokens expanded by the Qwen2-VL processor, images resized by it within 28²·4 … 28²·1280
    pixels, sides < 28 px first resized to 56x56), right padding, sequential positions (their prompt has no
    `<|vision_start|>`, so their model's RoPE index numbers every token in order), last attended token, L2. V1
    checkpoints (`image_resolution`): every image first resized to 1344x1344, as the authors evaluate them."""

    def __init__(
        self,
        model: Any,
        processor: qvi.QwenVLProcessor,
        *,
        device: str = "cpu",
        min_pixels: int = VLM2VEC_MIN_PIXELS,
        max_pixels: int = VLM2VEC_MAX_PIXELS,
        image_resolution: Sequence[int] | None = None,
    ) -> None:
        super().__init__(model, processor, device)
        self.size = {"shortest_edge": min_pixels, "longest_edge": max_pixels}
        self.image_resolution = (image_resolution[0], image_resolution[1]) if image_resolution else None

    def image(self, data: bytes) -> Any:
        img = vlm2vec_v1_image(data, self.image_resolution) if self.image_resolution else decode_image(data)
        return img.resize((56, 56)) if min(img.size) < VLM2VEC_MIN_SIDE else img

    def tokenize(self, batch: Sequence[ModelInput], processor: qvi.QwenVLProcessor | None = None) -> dict[str, Any]:
        processor = processor or self.processor
        texts = [vlm2vec_text(item) for item in batch]
        images = [self.image(item.image) for item in batch if item.image is not None]
        vision: dict[str, Any] = {}
        if images:
            pixels = processor.image_processor(images=images, size=self.size, return_tensors="pt")
            vision = {"pixel_values": pixels["pixel_values"], "image_grid_thw": pixels["image_grid_thw"]}
            counts = iter(int(g.prod()) // processor.merge**2 for g in pixels["image_grid_thw"])
            texts = [t.replace(IMAGE_PAD, IMAGE_PAD * next(counts), 1) if IMAGE_PAD in t else t for t in texts]
        tok = processor.tokenizer
        enc = tok(texts, padding=True, padding_side="right", return_tensors="pt")
        inputs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], **vision}
        inputs["position_ids"] = sequential_positions(enc["attention_mask"])  # no M-RoPE grid: no vision start
        return inputs

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Tokens per input for length bucketing: the text's, each image counted as the vision tokens of its header
        size (V1: the fixed resolution) through the processor's 28-px `smart_resize` bounds."""
        processor = self._processors.get()
        ids = processor.tokenizer([vlm2vec_text(item) for item in batch])["input_ids"]
        out = []
        for item, row in zip(batch, ids, strict=True):
            n = len(row)
            if item.image is not None:
                size = self.image_resolution or image_size(item.image)
                size = (56, 56) if 0 < min(size) < VLM2VEC_MIN_SIDE else size
                n += qvi.image_tokens(size, 28, self.size["shortest_edge"], self.size["longest_edge"]) - 1
            out.append(n)
        return out

    def prepare(self, batch: Sequence[ModelInput], role: str) -> dict[str, Any]:
        if any(not item.text and item.image is None for item in batch):
            raise ValueError("VLM2Vec cannot encode an input with neither text nor image (its prompt has no tokens)")
        return super().prepare(batch, role)


def pipeline_of(entry: Any) -> str:
    """The entry's `pipeline` option, set by its recipe (model_adapters.models.recipes); never guessed from the
    checkpoint (a Qwen-VL checkpoint of another model must not get Qwen3-VL-Embedding's prompt)."""
    pipeline = entry.options.get("pipeline")
    if pipeline not in PIPELINES:
        raise ValueError(
            f"{entry.name}: VLM pipeline {pipeline!r} is not one of {', '.join(PIPELINES)} (the entry's recipe sets it)"
        )
    return str(pipeline)


def load_vlm2vec(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> VLM2VecEncoder:
    """VLM2Vec-V2: a LoRA adapter on Qwen2-VL-2B-Instruct; transformers' PEFT integration loads base + adapter
    (the authors merge it; the outputs are the same up to rounding)."""
    from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision)
    lm = AutoModelForImageTextToText.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    return VLM2VecEncoder(
        lm.model,
        qvi.QwenVLProcessor(tokenizer, image_processor, ""),
        device=device,
        image_resolution=entry.options.get("image_resolution"),
    )


PIPELINES: Final = ("qwen3_vl", "vlm2vec", "generic")


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> Any:
    pipeline = pipeline_of(entry)
    if pipeline == "qwen3_vl":
        return load_qwen3_vl(entry, path, device=device, dtype=dtype)
    if pipeline == "vlm2vec":
        return load_vlm2vec(entry, path, device=device, dtype=dtype)
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    kwargs = hub_kwargs(path, entry.revision, trust_remote_code=bool(entry.options.get("trust_remote_code", False)))
    model = AutoModel.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    return VLMEncoder(model, tokenizer, image_processor, device=device)
