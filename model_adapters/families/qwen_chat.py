"""One configurable Qwen-VL chat embedder: the input recipes of RzenEmbed, LamRA-Ret, Embed-RL, UME-R1 (Disc),
Ops-MM-Embedding as data (`ChatOptions`), each proven equal to its authors' code by a fixture (docs/models.md).

A recipe's `options` (model_adapters/models/recipes.py) are parsed once into `ChatOptions` (the one place that
validates them). An input becomes model tokens in four small steps, each a function the reasoning recipes reuse:

1. `compose_text`   the benchmark instruction routed as the authors' interface takes it (system turn, plain prefix
                    "{instruction} {text}" — paper B.3 for models without an instruction field — or RzenEmbed's raw
                    concatenation), then the authors' text rule (Embed-RL: vision tokens stripped; LamRA: M-BEIR's
                    `format_string`);
2. `content_parts`  the user turn: [image][text][suffix] (suffix per modality, e.g. LamRA's "Summarize above image and
                    sentence in one word: "; `extra` parts go before the suffix — Embed-RL's T-CoT slot);
3. `prompt`         rendered by the checkpoint's own chat template (`render="template"`, with the assistant turn and
                    `add_generation_prompt` of the recipe) or written as the authors write ChatML by hand
                    (`render="chatml"`: RzenEmbed, Ops-MM);
4. `pool_positions` which hidden state is the embedding: the last attended token, the last occurrence of a token
                    (`<emb>`, `<disc_emb>`, with UME-R1's tail rule), or the first occurrence minus one (LamRA).

Images are resized as the authors' `fetch_image` does (`qwen_vl_inputs.fetch_image`: multiples of the pixel factor
within min/max pixels; RGBA on white as qwen-vl-utils 0.0.14, or PIL's `convert("RGB")` as the copies vendored by
RzenEmbed/LamRA/Ops-MM), then given to the checkpoint's image processor, which resizes again within its own bounds
where the authors' processor call does (`processor_resize`). Positions: the model's multimodal RoPE index, or plain
sequential positions where the authors call the language model without position ids (RzenEmbed, LamRA).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, Literal, get_args

import numpy as np

from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families.common import (
    PerThread,
    hub_kwargs,
    image_size,
    l2_normalize_rows,
    last_attended_positions,
    pinned,
    to_device,
    torch_dtype,
)
from model_adapters.planning.inputs import CANDIDATE, QUERY
from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError

VISION_START: Final = "<|vision_start|>"
VISION_END: Final = "<|vision_end|>"
IMAGE_PAD: Final = qvi.IMAGE_PAD
VIDEO_PAD: Final = "<|video_pad|>"
CHATML_IMAGE: Final = VISION_START + IMAGE_PAD + VISION_END

# The choices of each string option: a Literal type for the checker, and its values for `ChatOptions.validate`.
Backbone = Literal["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_5"]
Render = Literal["template", "chatml"]
TemplateSource = Literal["processor", "tokenizer"]
InstructionRoute = Literal["system", "prefix", "concat"]
TextRule = Literal["as_is", "strip_vision_tokens", "mbeir_format"]
EmptyRule = Literal["as_text", "bare"]
PartName = Literal["image", "text", "suffix"]
Pooling = Literal["last_attended", "last_token", "first_token_minus_one"]
PaddingSide = Literal["left", "right", "tokenizer"]
Positions = Literal["rope", "sequential"]
RgbaRule = Literal["white", "convert"]
Truncation = Literal["none", "all", "text_only", "candidates"]
Modality = Literal["image_text", "text", "image"]
BACKBONES: Final[tuple[Backbone, ...]] = get_args(Backbone)
RENDERS: Final[tuple[Render, ...]] = get_args(Render)
TEMPLATE_SOURCES: Final[tuple[TemplateSource, ...]] = get_args(TemplateSource)
INSTRUCTION_ROUTES: Final[tuple[InstructionRoute, ...]] = get_args(InstructionRoute)
TEXT_RULES: Final[tuple[TextRule, ...]] = get_args(TextRule)
EMPTY_RULES: Final[tuple[EmptyRule, ...]] = get_args(EmptyRule)
PART_NAMES: Final[tuple[PartName, ...]] = get_args(PartName)
POOLINGS: Final[tuple[Pooling, ...]] = get_args(Pooling)
PADDING_SIDES: Final[tuple[PaddingSide, ...]] = get_args(PaddingSide)
POSITIONS: Final[tuple[Positions, ...]] = get_args(Positions)
RGBA_RULES: Final[tuple[RgbaRule, ...]] = get_args(RgbaRule)
TRUNCATIONS: Final[tuple[Truncation, ...]] = get_args(Truncation)
MODALITIES: Final[tuple[Modality, ...]] = get_args(Modality)
NO_LIMIT: Final = int(1e20)  # transformers' LARGE_INTEGER: a model_max_length at or above it means "none"


@dataclass(frozen=True)
class ChatOptions:
    """A Qwen-VL chat embedding recipe (see the module docstring for what each step does).

    backbone              config.json model_type the recipe was written for (the checkpoint must have it)
    render                "template": the checkpoint's chat template renders the conversation; "chatml": the
                          authors' hand-written ChatML string (system, user, assistant prefix)
    template_source       whose chat template renders: the processor's (chat_template.json / .jinja) or the tokenizer's
    system                system-turn text (None: no system message, so a template may add its default)
    instruction           route of the benchmark instruction: "system" turn, "prefix" ("{instruction} {text}"),
                          "concat" (instruction + text, no separator: RzenEmbed's `get_fused_embeddings`)
    text_rule             "as_is", "strip_vision_tokens" (Embed-RL), "mbeir_format" (LamRA's M-BEIR `format_string`)
    suffix                text after the input, per modality (image_text / text / image); "" for none
    empty                 an input with neither text nor image: "as_text" (an empty text: suffix kept) or "bare"
                          (no user content at all: Embed-RL)
    content_order         the order of image, text and suffix in the user turn
    assistant             assistant turn text ("<emb>", "<emb>."; with render="chatml": the text after
                          "<|im_start|>assistant\\n", e.g. "<|endoftext|>"); None: no assistant turn
    add_generation_prompt whether the template appends "<|im_start|>assistant\\n" (render="template")
    add_tokens            tokens added to the tokenizer when missing (as `tokenizer.add_tokens` in the authors' code)
    pooling               "last_attended", "last_token" (last occurrence of pool_token), "first_token_minus_one"
    pool_token            the token of pooling="last_token" / "first_token_minus_one"
    pool_tail             pooling="last_token": a token among the last `pool_tail` positions counts as missing
                          (UME-R1's eval: 2); a missing token falls back to the last attended token
    padding_side          "left", "right" or the tokenizer's own ("tokenizer")
    positions             "rope" (the model's multimodal RoPE index) or "sequential" (0..L-1 on every axis)
    image_factor / min_pixels / max_pixels   the authors' fetch_image resize
    rgba                  "white" (qwen-vl-utils 0.0.14 pastes RGBA on white) or "convert" (PIL convert("RGB"))
    processor_resize      whether the image processor resizes again (within its own or the given bounds)
    processor_min_pixels / processor_max_pixels   bounds given to the processor (None: the checkpoint's own)
    placeholder_image     [width, height] of a white image added to text-only inputs (TRIAD B.2.1, UME-R1), or None
    max_length            token limit of `truncation` (None: the tokenizer's model_max_length)
    truncation            which inputs are cut at max_length: "none", "all", "text_only" (inputs without image),
                          "candidates" (LamRA's candidate collator)
    """

    backbone: Backbone
    render: Render = "template"
    template_source: TemplateSource = "processor"
    system: str | None = None
    instruction: InstructionRoute = "prefix"
    text_rule: TextRule = "as_is"
    suffix: tuple[tuple[Modality, str], ...] = (("image_text", ""), ("text", ""), ("image", ""))
    empty: EmptyRule = "as_text"
    content_order: tuple[PartName, ...] = PART_NAMES
    assistant: str | None = None
    add_generation_prompt: bool = True
    add_tokens: tuple[str, ...] = ()
    pooling: Pooling = "last_attended"
    pool_token: str | None = None
    pool_tail: int = 0
    padding_side: PaddingSide = "right"
    positions: Positions = "rope"
    image_factor: int = 28
    min_pixels: int = 4 * 28 * 28
    max_pixels: int = 16384 * 28 * 28
    rgba: RgbaRule = "white"
    processor_resize: bool = True
    processor_min_pixels: int | None = None
    processor_max_pixels: int | None = None
    placeholder_image: tuple[int, int] | None = None
    max_length: int | None = None
    truncation: Truncation = "none"

    @classmethod
    def parse(cls, options: Mapping[str, Any], where: str = "recipe") -> ChatOptions:
        """The typed options of a recipe (unknown keys of the family, e.g. "pipeline", are ignored); a wrong value is
        one line naming the option."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in options.items() if k in known}
        if "backbone" not in values:
            raise TriadError(f"{where}: option 'backbone' is required (one of {', '.join(BACKBONES)})")
        if isinstance(values.get("suffix"), str):
            values["suffix"] = {m: values["suffix"] for m in MODALITIES}
        if isinstance(values.get("suffix"), Mapping):
            unknown = set(values["suffix"]) - set(MODALITIES)
            if unknown:
                raise TriadError(f"{where}: option suffix: unknown modality {sorted(unknown)}; valid: {MODALITIES}")
            values["suffix"] = tuple((m, str(values["suffix"].get(m, ""))) for m in MODALITIES)
        for name in ("content_order", "add_tokens", "placeholder_image"):
            if isinstance(values.get(name), list):
                values[name] = tuple(values[name])
        opts = cls(**values)
        opts.validate(where)
        return opts

    @classmethod
    def table(cls, **values: Any) -> dict[str, Any]:
        """The option mapping of a recipe row, checked now: an unknown option or a wrong value fails at import.

        The mapping is returned as given (results.json and the cache key record exactly the options a row sets).

        >>> ChatOptions.table(backbone="qwen2_vl", pooling="last_attended")
        {'backbone': 'qwen2_vl', 'pooling': 'last_attended'}
        >>> ChatOptions.table(backbone="qwen2_vl", poling="last_attended")
        Traceback (most recent call last):
        ...
        TypeError: recipe options: unknown option(s) poling
        """
        unknown = sorted(set(values) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"recipe options: unknown option(s) {', '.join(unknown)}")
        cls.parse(values, "recipe options")
        return dict(values)

    def validate(self, where: str) -> None:
        choices = {
            "backbone": BACKBONES,
            "render": RENDERS,
            "template_source": TEMPLATE_SOURCES,
            "instruction": INSTRUCTION_ROUTES,
            "text_rule": TEXT_RULES,
            "empty": EMPTY_RULES,
            "pooling": POOLINGS,
            "padding_side": PADDING_SIDES,
            "positions": POSITIONS,
            "rgba": RGBA_RULES,
            "truncation": TRUNCATIONS,
        }
        for name, valid in choices.items():
            if getattr(self, name) not in valid:
                raise TriadError(f"{where}: option {name}={getattr(self, name)!r} is not one of {', '.join(valid)}")
        if sorted(self.content_order) != sorted(PART_NAMES):
            raise TriadError(f"{where}: option content_order must order {', '.join(PART_NAMES)}")
        if self.pooling != "last_attended" and not self.pool_token:
            raise TriadError(f"{where}: option pooling={self.pooling!r} needs pool_token")
        if self.render == "chatml" and self.instruction == "system" and self.system is None:
            raise TriadError(f"{where}: render='chatml' with instruction='system' needs a default system text")
        if self.placeholder_image is not None and (len(self.placeholder_image) != 2 or min(self.placeholder_image) < 1):
            raise TriadError(f"{where}: option placeholder_image must be [width, height]")
        if min(self.image_factor, self.min_pixels, self.max_pixels) < 1 or self.min_pixels > self.max_pixels:
            raise TriadError(f"{where}: image_factor/min_pixels/max_pixels must be positive with min <= max")
        if self.pool_tail < 0 or (self.max_length is not None and self.max_length < 1):
            raise TriadError(f"{where}: pool_tail must be >= 0 and max_length >= 1")

    def suffix_for(self, has_text: bool, has_image: bool) -> str:
        modality: Modality = "image_text" if has_text and has_image else "image" if has_image else "text"
        return dict(self.suffix)[modality]


# --- 1. text -----------------------------------------------------------------------------------------------------
def mbeir_format(s: str) -> str:
    """M-BEIR's `format_string` as LamRA's eval applies it to every query and candidate text: strip, drop carriage
    returns and surrounding double quotes, capitalize the first character, end with a period.

    >>> mbeir_format(' a red car ')
    'A red car.'
    >>> mbeir_format('Why?')
    'Why?'
    >>> mbeir_format('')
    ''
    """
    s = (s or "").replace("\r", "").strip().strip('"')
    if s:
        s = s[0].upper() + s[1:]
        s = s + "." if s[-1] not in (".", "?", "!") else s
    return s


def compose_text(opts: ChatOptions, text: str, instruction: str | None) -> str:
    """The user text of one input: the instruction routed into it (unless it goes to the system turn), then the
    recipe's text rule.

    >>> o = ChatOptions(backbone="qwen2_vl")
    >>> compose_text(o, "a dog", "Find it.")
    'Find it. a dog'
    >>> compose_text(ChatOptions(backbone="qwen2_vl", instruction="concat"), "a dog", "Find it.")
    'Find it.a dog'
    """
    if instruction and opts.instruction == "prefix":
        text = f"{instruction} {text}" if text else instruction
    elif instruction and opts.instruction == "concat":
        text = instruction + text
    if opts.text_rule == "strip_vision_tokens":
        text = text.replace(IMAGE_PAD, "").replace(VIDEO_PAD, "").strip()
    elif opts.text_rule == "mbeir_format":
        text = mbeir_format(text)
    return text


def system_text(opts: ChatOptions, instruction: str | None) -> str | None:
    """The system turn: the instruction where the recipe routes it there, else the recipe's system text."""
    if instruction and opts.instruction == "system":
        return instruction
    return opts.system


# --- 2. user turn ------------------------------------------------------------------------------------------------
def content_parts(
    opts: ChatOptions, text: str, has_image: bool, extra: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The user turn's content list ({"type": "image"} / {"type": "text", "text": ...}); `extra` parts (e.g. a
    reasoning text and its image crops) go right before the suffix.

    >>> o = ChatOptions.parse({"backbone": "qwen3_vl", "suffix": "Summarize:"})
    >>> content_parts(o, "a dog", True)
    [{'type': 'image'}, {'type': 'text', 'text': 'a dog'}, {'type': 'text', 'text': 'Summarize:'}]
    """
    if not text and not has_image and opts.empty == "bare":
        return []
    suffix = opts.suffix_for(bool(text), has_image)
    parts: dict[str, list[dict[str, Any]]] = {
        "image": [{"type": "image"}] if has_image else [],
        "text": [{"type": "text", "text": text}] if text else [],
        "suffix": [*extra, *([{"type": "text", "text": suffix}] if suffix else [])],
    }
    return [part for name in opts.content_order for part in parts[name]]


def conversation(
    opts: ChatOptions, item: ModelInput, has_image: bool, extra: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The messages of one input for the chat template (system turn only when the recipe has one)."""
    messages: list[dict[str, Any]] = []
    system = system_text(opts, item.instruction)
    if system is not None:
        messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
    text = compose_text(opts, item.text, item.instruction)
    messages.append({"role": "user", "content": content_parts(opts, text, has_image, extra)})
    if opts.assistant is not None:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": opts.assistant}]})
    return messages


def chatml_prompt(opts: ChatOptions, item: ModelInput, has_image: bool) -> str:
    """The hand-written ChatML prompt of RzenEmbed / Ops-MM: system, user = [vision tokens][text], then the
    assistant prefix (their `embed`).

    >>> o = ChatOptions(backbone="qwen2_vl", render="chatml", system="S.", instruction="concat",
    ...                 assistant="<|endoftext|>")
    >>> chatml_prompt(o, ModelInput("a dog", None, "Find: "), False)
    '<|im_start|>system\\nS.<|im_end|>\\n<|im_start|>user\\nFind: a dog<|im_end|>\\n<|im_start|>assistant\\n<|endoftext|>'
    """
    user = (CHATML_IMAGE if has_image else "") + compose_text(opts, item.text, item.instruction)
    return (
        f"<|im_start|>system\n{system_text(opts, item.instruction)}<|im_end|>\n<|im_start|>user\n{user}"
        f"<|im_end|>\n<|im_start|>assistant\n{opts.assistant or ''}"
    )


# --- 4. pooling --------------------------------------------------------------------------------------------------
def last_token_positions(input_ids: Any, mask: Any, token_id: int, tail: int = 0) -> tuple[Any, int]:
    """Index of each row's last `token_id` (Embed-RL's `_get_embedding_reps`; UME-R1's `get_disc_embedding_idx` with
    tail=2: a token in the last `tail` positions of the row counts as missing); a missing token falls back to the
    last attended token. Returns (positions, number of fallbacks)."""
    import torch

    length = input_ids.shape[1]
    hits = input_ids == token_id
    last = length - 1 - hits.flip(dims=[1]).int().argmax(dim=1)
    found = hits.any(dim=1) & (last < length - tail)  # UME-R1: `j + 1 >= len(ids) - 1` -> -1, i.e. j >= len - 2
    fallback = last_attended_positions(mask)
    return torch.where(found, last, fallback), int((~found).sum())


def first_token_positions_minus_one(input_ids: Any, token_id: int) -> Any:
    """LamRA's `get_embed_feature`: the position before each row's first `token_id`; a row without it is refused
    (the authors' argmax would silently read the last position)."""
    hits = input_ids == token_id
    if not bool(hits.any(dim=1).all()):
        raise ValueError(
            f"an input lost its embedding token (id {token_id}) to truncation; it cannot be pooled as the authors pool"
        )
    return hits.int().argmax(dim=1) - 1


def pool_positions(opts: ChatOptions, input_ids: Any, mask: Any, token_id: int | None) -> Any:
    """The position of each row's embedding under the recipe's pooling rule."""
    if opts.pooling == "last_attended" or token_id is None:
        return last_attended_positions(mask)
    if opts.pooling == "last_token":
        return last_token_positions(input_ids, mask, token_id, opts.pool_tail)[0]
    return first_token_positions_minus_one(input_ids, token_id)


# --- images ------------------------------------------------------------------------------------------------------
@functools.cache
def placeholder_png(size: tuple[int, int]) -> bytes:
    """A white RGB image of `size` (TRIAD B.2.1: UME-R1's 28x28 placeholder on pure-text inputs), PNG-encoded."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (size[0], size[1]), (255, 255, 255)).save(buf, format="PNG")
    return buf.getvalue()


def prepare_image(opts: ChatOptions, data: bytes) -> Any:
    """The image as the authors' fetch_image leaves it."""
    return qvi.fetch_image(
        data, min_pixels=opts.min_pixels, max_pixels=opts.max_pixels, factor=opts.image_factor, rgba=opts.rgba
    )


class QwenChatEmbedder:
    """Embeddings of a Qwen-VL checkpoint fed by one `ChatOptions` recipe (module docstring)."""

    def __init__(self, model: Any, processor: qvi.QwenVLProcessor, opts: ChatOptions, *, device: str = "cpu") -> None:
        self.model = model.to(device).eval()
        self.processor = processor
        self._processors = PerThread(processor)  # prepare and input_lengths run on the runner's threads
        self.opts = opts
        self.device = device
        config = getattr(model.config, "text_config", model.config)
        self.dim = int(config.hidden_size)

    @property
    def pool_token_id(self) -> int | None:
        token = self.opts.pool_token
        return self.processor.tokenizer.convert_tokens_to_ids(token) if token else None

    @property
    def padding_side(self) -> str:
        side = self.opts.padding_side
        return str(self.processor.tokenizer.padding_side) if side == "tokenizer" else side

    def _image_of(self, item: ModelInput) -> bytes | None:
        if item.image is None and self.opts.placeholder_image and item.text:
            return placeholder_png(tuple(self.opts.placeholder_image))  # pure-text inputs only (TRIAD B.2.1)
        return item.image

    def prompts(
        self, batch: Sequence[ModelInput], processor: qvi.QwenVLProcessor | None = None
    ) -> tuple[list[str], list[bytes]]:
        """Rendered prompts (one <|image_pad|> per image) and the image bytes in prompt order."""
        processor = processor or self.processor
        images = [self._image_of(item) for item in batch]
        if self.opts.render == "chatml":
            texts = [chatml_prompt(self.opts, item, img is not None) for item, img in zip(batch, images, strict=True)]
        else:
            convs = [conversation(self.opts, item, img is not None) for item, img in zip(batch, images, strict=True)]
            texts = processor.render(
                convs,
                add_generation_prompt=self.opts.add_generation_prompt,
                use_tokenizer_template=self.opts.template_source == "tokenizer",
            )
        return texts, [img for img in images if img is not None]

    def _truncates(self, has_image: bool, side: str) -> bool:
        rule = self.opts.truncation
        return rule == "all" or (rule == "text_only" and not has_image) or (rule == "candidates" and side == CANDIDATE)

    def tokenize(
        self, batch: Sequence[ModelInput], side: str = QUERY, processor: qvi.QwenVLProcessor | None = None
    ) -> dict[str, Any]:
        """Model inputs of a batch, identical to the authors' (token ids, pixel values, grids, token types)."""
        processor = processor or self.processor
        texts, image_bytes = self.prompts(batch, processor)
        images = [prepare_image(self.opts, data) for data in image_bytes]
        size = None
        if self.opts.processor_resize and (self.opts.processor_min_pixels or self.opts.processor_max_pixels):
            own = processor.image_processor.size
            size = {
                "shortest_edge": self.opts.processor_min_pixels or own["shortest_edge"],
                "longest_edge": self.opts.processor_max_pixels or own["longest_edge"],
            }
        texts, vision = processor.expand(texts, images, do_resize=self.opts.processor_resize, size=size)
        tok = processor.tokenizer
        limit = self.opts.max_length or tok.model_max_length
        rows = []
        for text in texts:
            # a tokenizer without a length (model_max_length "infinite") truncates nothing, as transformers does
            cut = self._truncates(IMAGE_PAD in text, side) and limit < NO_LIMIT
            ids = tok(text, truncation=cut, max_length=limit if cut else None)["input_ids"]
            if IMAGE_PAD in text and ids.count(processor.image_token_id) != text.count(IMAGE_PAD):
                raise ValueError(
                    f"an input with an image is longer than {limit} tokens: truncation would cut its image tokens"
                )
            rows.append({"input_ids": ids})
        enc = tok.pad(rows, padding=True, padding_side=self.padding_side, return_tensors="pt")
        inputs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], **vision}
        inputs["mm_token_type_ids"] = processor.mm_token_type_ids(enc["input_ids"])
        return inputs

    def hidden_states(self, inputs: dict[str, Any]) -> Any:
        """Last-layer hidden states (after the final norm) of the model's forward over `inputs`."""
        import torch

        inputs = to_device(inputs, self.device)
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(next(self.model.parameters()).dtype)
        if self.opts.positions == "sequential":
            batch, length = inputs["input_ids"].shape
            inputs["position_ids"] = torch.arange(length, device=self.device).view(1, 1, -1).expand(3, batch, -1)
        with torch.inference_mode():
            return self.model(**inputs).last_hidden_state

    def input_lengths(self, batch: Sequence[ModelInput], role: str) -> list[int]:
        """Tokens per input for length bucketing: the rendered prompt's, each image counted as the vision tokens of
        its header size through the recipe's `smart_resize` (exact where the image processor does not resize
        again; an estimate, for ordering only, where it does), cut at the recipe's max_length."""
        processor = self._processors.get()
        texts, _ = self.prompts(batch, processor)
        ids = processor.tokenizer(texts)["input_ids"]
        limit = self.opts.max_length or NO_LIMIT
        out = []
        for item, row in zip(batch, ids, strict=True):
            n = len(row)
            data = self._image_of(item)
            if data is not None:
                n += (
                    qvi.image_tokens(
                        image_size(data), self.opts.image_factor, self.opts.min_pixels, self.opts.max_pixels
                    )
                    - 1
                )
            out.append(min(n, limit))
        return out

    def prepare(self, batch: Sequence[ModelInput], role: str) -> dict[str, Any]:
        return pinned(self.tokenize(batch, role, self._processors.get()), self.device)

    def forward(self, prepared: dict[str, Any], role: str) -> Any:
        import torch

        hidden = self.hidden_states(prepared)
        where = pool_positions(self.opts, prepared["input_ids"], prepared["attention_mask"], self.pool_token_id)
        return l2_normalize_rows(hidden[torch.arange(hidden.shape[0], device=hidden.device), where.to(hidden.device)])

    def encode(self, batch: Sequence[ModelInput], side: str = QUERY) -> np.ndarray:
        return self.forward(self.prepare(batch, side), side).cpu().numpy()

    def encode_queries(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch, QUERY)

    def encode_candidates(self, batch: Sequence[ModelInput]) -> np.ndarray:
        return self.encode(batch, CANDIDATE)


def add_recipe_tokens(tokenizer: Any, model: Any, opts: ChatOptions, where: str) -> None:
    """Add the recipe's tokens when the tokenizer lacks them (the authors' `add_tokens`); a token the model has no
    trained embedding row for is refused (its vector would be a fresh random row)."""
    missing = [t for t in opts.add_tokens if t not in tokenizer.get_vocab()]
    if missing:
        tokenizer.add_tokens(missing)
    rows = model.get_input_embeddings().weight.shape[0]
    for token in opts.add_tokens:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id >= rows:
            raise TriadError(
                f"{where}: token {token} (id {token_id}) has no embedding row in this checkpoint "
                f"({rows} rows): it is not a checkpoint of this recipe"
            )
    if opts.pool_token and opts.pool_token not in tokenizer.get_vocab():
        raise TriadError(f"{where}: the tokenizer has no {opts.pool_token} token, which this recipe pools at")
    declared = getattr(model.config, "emb_token_ids", None)
    if declared and opts.pool_token and tokenizer.convert_tokens_to_ids(opts.pool_token) != declared[0]:
        raise TriadError(f"{where}: config.json emb_token_ids {declared} is not the tokenizer's {opts.pool_token}")


def load(entry: Any, path: str, *, device: str = "cpu", dtype: str = "float32") -> QwenChatEmbedder:
    """The checkpoint (`AutoModel`: the backbone without LM head), its tokenizer, image processor and chat
    template, fed by the entry's recipe options."""
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoTokenizer

    where = f"model {entry.name}"
    opts = ChatOptions.parse(entry.options, where)
    kwargs = hub_kwargs(path, entry.revision)
    config = AutoConfig.from_pretrained(path, **kwargs)
    if config.model_type != opts.backbone:
        raise TriadError(
            f"{where}: recipe {entry.recipe.name} is for {opts.backbone} checkpoints; {path} is {config.model_type}"
        )
    model = AutoModel.from_pretrained(path, dtype=torch_dtype(dtype), **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    add_recipe_tokens(tokenizer, model, opts, where)
    image_processor = AutoImageProcessor.from_pretrained(path, **kwargs)
    template = ""
    if opts.render == "template" and opts.template_source == "processor":
        template = qvi.chat_template_of(tokenizer, path, kwargs.get("revision"))
    return QwenChatEmbedder(model, qvi.QwenVLProcessor(tokenizer, image_processor, template), opts, device=device)
