"""Embed-RL with T-CoT (TRIAD §5.4, B.2.1): an external reasoner writes a T-CoT for every query and candidate, and
the Embed-RL embedder reads the input with it, bounding boxes of the T-CoT cropped from the image as extra images.

Reference: ZoengHN/Embed-RL @ 87b52f735d75 (tests/fixtures/embed_rl_tcot/NOTE.md):

- the request, `data_pipe/eval_cot_generate/image_cot_generate.py`: queries `question = f"{qry_inst} {qry_text}"`
  with PROMPT_IMAGE_WITHOUT_ANSWER (with the image) or PROMPT_TEXT_WITHOUT_ANSWER (without); candidates
  (`generate_corpus_cot`): text -> PROMPT_POS_TEXT, image + text (its paired mode) -> PROMPT_IMAGE_WITHOUT_ANSWER,
  image alone -> PROMPT_POS_IMAGE with "Retrieve the corresponding image." and "Image path: ..."; one user turn
  [prompt text][image], `temperature` 1.0, `max_tokens` 4096 to an OpenAI-compatible server running the reasoner. The
  script formats four prompts it does not define; the repository defines them once, in the RL trainer's dataset
  (`train/.../vlm2vec_dataset.py`), stored verbatim in data/embed_rl_tcot_prompts.json;
- the reasoner: TRIAD substitutes Qwen3-VL-8B-Instruct for the unreleased trained one (B.2.1), run here through
  transformers with that request (the reasoner's own generation_config.json for what the request leaves unset, as
  a vLLM server with its default `--generation-config auto` does);
- the embedding input, `eval/mmeb_eval/vlm2vec/src/model/processor.py` `Qwen3_VL_process_fn` +
  `process_cot_with_visual_content` (`parse_tcot` below): [image][text][T-CoT parts]["Summarize the above content in
  one word:"], the `embed-rl` recipe otherwise (families/qwen_chat.py).

Our substitutions, each documented in docs/models.md: a candidate image alone is described as "Image path:
image.jpg" (`IMAGE_PATH`; the authors' absolute path on their machine is not part of a TRIAD input); a single box
written flat, `"bbox_2d": [x1, y1, x2, y2]` (the prompt's own format for one element), is cropped as one box where the
authors' loop raises TypeError (it iterates the four numbers); a box entry that is not four numbers is skipped where
their arithmetic raises.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from model_adapters.families import generating
from model_adapters.families import qwen_vl_inputs as qvi
from model_adapters.families.qwen_chat import IMAGE_PAD, QUERY, QwenChatEmbedder, conversation
from model_adapters.protocol import Generation, GenerationSpec, ModelInput
from triad_dataset.contract.errors import TriadError

PROMPT_NAMES: Final = (
    "PROMPT_IMAGE_WITHOUT_ANSWER",
    "PROMPT_TEXT_WITHOUT_ANSWER",
    "PROMPT_POS_TEXT",
    "PROMPT_POS_IMAGE",
)
POS_IMAGE_TASK: Final = "Retrieve the corresponding image."  # generate_corpus_cot: an image without instruction
IMAGE_PATH: Final = "image.jpg"  # our stand-in for the authors' absolute image path (module docstring)
# process_cot_with_visual_content's limits
MIN_CROP_SIZE: Final = 10
MAX_ASPECT_RATIO: Final = 50
BOX_SCALE: Final = 1000  # bbox_2d coordinates are per mille of the image's width and height
PNG_MODES: Final = ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16")  # PIL modes a PNG keeps as they are

# Why an input's T-CoT is not read as thinking + boxes (results.json "generation" "fallbacks").
NO_REQUEST: Final = "no T-CoT: nothing to reason about (the authors' script skips an input without text or image)"
EMPTY: Final = "empty T-CoT: nothing added"
NO_THINKING: Final = "T-CoT has no <thinking> block: added as plain text"
NO_JSON: Final = "T-CoT <thinking> holds no JSON object: added as plain text"
BAD_JSON: Final = "T-CoT <thinking> JSON does not parse: added as plain text"


@functools.cache
def prompts() -> dict[str, str]:
    """The four prompt templates, verbatim (data/embed_rl_tcot_prompts.json)."""
    path = os.path.join(os.path.dirname(__file__), "data", "embed_rl_tcot_prompts.json")
    with open(path, encoding="utf-8") as handle:
        return dict(json.load(handle)["prompts"])


# --- the request --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """One T-CoT request: the prompt text and whether the input's image goes with it."""

    prompt: str
    with_image: bool


def request(item: ModelInput, role: str) -> Request | None:
    """The authors' request for one input (module docstring); None where their script generates nothing."""
    p = prompts()
    instruction, text = (item.instruction or "").strip(), item.text.strip()
    if role == QUERY:  # process_single_item_stream
        question = f"{instruction} {text}".strip()
        if not question:
            return None
        if item.image is not None:
            return Request(p["PROMPT_IMAGE_WITHOUT_ANSWER"].format(question=question), True)
        return Request(p["PROMPT_TEXT_WITHOUT_ANSWER"].format(question=question), False)
    if item.image is None:  # generate_corpus_cot, corpus_type "text" (empty texts are not collected)
        if not text:
            return None
        return Request(p["PROMPT_POS_TEXT"].format(pos_text=f"{instruction} {text}".strip()), False)
    if text:  # corpus_type "image" with its paired text
        return Request(p["PROMPT_IMAGE_WITHOUT_ANSWER"].format(question=f"{instruction} {text}".strip()), True)
    return Request(
        p["PROMPT_POS_IMAGE"].format(
            pos_text=instruction or POS_IMAGE_TASK, pos_image_description=f"Image path: {IMAGE_PATH}"
        ),
        True,
    )


# --- the T-CoT as embedding input (process_cot_with_visual_content) --------------------------------------------
@dataclass(frozen=True)
class TCoT:
    """A T-CoT as the embedder reads it: content parts (text, and {"type": "image", "crop": k}) and the crops."""

    parts: tuple[dict[str, Any], ...] = ()
    crops: tuple[bytes, ...] = ()
    note: str | None = None  # why it is not read as thinking + boxes (None: it is)


def _box(value: Any) -> tuple[float, float, float, float] | None:
    if (
        isinstance(value, (list, tuple))
        and len(value) >= 4
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value[:4])
    ):
        return float(value[0]), float(value[1]), float(value[2]), float(value[3])
    return None


def boxes_of(value: Any) -> list[tuple[float, float, float, float]]:
    """The boxes of a `bbox_2d` value: a list of [x1, y1, x2, y2] (the authors' loop), or one flat box.

    >>> boxes_of([[1, 2, 3, 4], [5, 6, 7]]), boxes_of([1, 2, 3, 4]), boxes_of("x")
    ([(1.0, 2.0, 3.0, 4.0)], [(1.0, 2.0, 3.0, 4.0)], [])
    """
    if not isinstance(value, (list, tuple)) or not value:
        return []
    flat = _box(value)
    if flat is not None and not isinstance(value[0], (list, tuple)):
        return [flat]
    return [b for b in (_box(v) for v in value) if b is not None]


def crop_box(box: tuple[float, float, float, float], width: int, height: int) -> tuple[int, int, int, int] | None:
    """The pixel box of a per-mille box, clamped to the image; None below 10 px or above aspect 50.

    >>> crop_box((100, 100, 500, 600), 200, 100)
    (20, 10, 100, 60)
    >>> crop_box((0, 0, 40, 1000), 200, 100) is None  # 8 px wide
    True
    """
    x1, y1 = int(box[0] * width / BOX_SCALE), int(box[1] * height / BOX_SCALE)
    x2, y2 = int(box[2] * width / BOX_SCALE), int(box[3] * height / BOX_SCALE)
    x1, x2 = max(0, min(x1, width)), max(0, min(x2, width))
    y1, y2 = max(0, min(y1, height)), max(0, min(y2, height))
    w, h = x2 - x1, y2 - y1
    if w < MIN_CROP_SIZE or h < MIN_CROP_SIZE or max(w, h) / min(w, h) > MAX_ASPECT_RATIO:
        return None
    return x1, y1, x2, y2


def _crops(image: bytes, boxes: list[tuple[float, float, float, float]]) -> list[bytes]:
    from PIL import Image

    with Image.open(io.BytesIO(image)) as img:
        img.load()
        out = []
        for box in boxes:
            pixels = crop_box(box, *img.size)
            if pixels is not None:
                crop = img.crop(pixels)
                if crop.mode not in PNG_MODES:  # e.g. CMYK: fetch_image would convert it to RGB all the same
                    crop = crop.convert("RGB")
                buf = io.BytesIO()
                crop.save(buf, format="PNG")  # lossless: the crop reaches fetch_image as the authors' crop does
                out.append(buf.getvalue())
    return out


def parse_tcot(text: str | None, image: bytes | None) -> TCoT:
    """`process_cot_with_visual_content`: the <thinking> block (kept as "<thinking>...</thinking>\\n"), a crop per
    `bbox_2d` box of the first flat JSON object in it (when the input has an image), then the text after the block;
    the whole text when there is no block or no parsable JSON; nothing for an empty T-CoT (text before the block is
    dropped, as theirs drops it)."""
    if text is None or not text.strip():
        return TCoT(note=EMPTY)
    thinking = re.search(r"<thinking>(.*?)</thinking>", text, re.DOTALL)
    if not thinking:
        return TCoT(({"type": "text", "text": text},), note=NO_THINKING)
    content = thinking.group(1)
    found = re.search(r"\{[^{}]*\}", content, re.DOTALL)
    if not found:
        return TCoT(({"type": "text", "text": text},), note=NO_JSON)
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError:
        return TCoT(({"type": "text", "text": text},), note=BAD_JSON)
    crops = _crops(image, boxes_of(data.get("bbox_2d"))) if "bbox_2d" in data and image is not None else []
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"<thinking>{content}</thinking>\n"}]
    parts += [{"type": "image", "crop": k} for k in range(len(crops))]
    rest = text[thinking.end() :].strip()
    if rest:
        parts.append({"type": "text", "text": rest})
    return TCoT(tuple(parts), tuple(crops))


@dataclass(frozen=True)
class ReasonedInput(ModelInput):
    """A model input with its T-CoT as the embedder reads it."""

    tcot: TCoT = field(default_factory=TCoT)


class TCoTEmbedder(QwenChatEmbedder):
    """The Embed-RL recipe with each input's T-CoT parts before the summarize line and its crops as extra images."""

    def prompts(
        self, batch: Sequence[ModelInput], processor: qvi.QwenVLProcessor | None = None
    ) -> tuple[list[str], list[bytes]]:
        processor = processor or self.processor
        if self.opts.render != "template":
            raise ValueError("the T-CoT embedder renders through the chat template only")
        convs: list[list[dict[str, Any]]] = []
        images: list[bytes] = []
        for item in batch:
            tcot = getattr(item, "tcot", TCoT())
            image = self._image_of(item)
            conv = conversation(self.opts, item, image is not None, tcot.parts)
            for part in conv[-1 if self.opts.assistant is None else -2]["content"]:
                if part.get("type") != "image":
                    continue
                picture = tcot.crops[part["crop"]] if "crop" in part else image
                if picture is not None:
                    images.append(picture)
            convs.append(conv)
        texts = processor.render(
            convs,
            add_generation_prompt=self.opts.add_generation_prompt,
            use_tokenizer_template=self.opts.template_source == "tokenizer",
        )
        if sum(t.count(IMAGE_PAD) for t in texts) != len(images):
            raise ValueError("the rendered prompts do not hold one image slot per image")
        return texts, images


# --- the reasoner -------------------------------------------------------------------------------------------------
def _rgb(data: bytes) -> Any:
    """The image as the reasoner's server decodes it (RGBA pasted on white)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        img.load()
        if img.mode == "RGBA":
            rgb = Image.new("RGB", img.size, (255, 255, 255))
            rgb.paste(img, mask=img.split()[3])
            return rgb
        return img.convert("RGB")


class TCoTGenerator:
    """The reasoner: one user turn [prompt][image] through its chat template and its own image processor, left
    padded, sampled under `generation_config`; the new tokens decoded without special tokens (a server's reply)."""

    def __init__(self, model: Any, processor: qvi.QwenVLProcessor, generation_config: Any, seed: int | None) -> None:
        self.model = model.eval()
        self.processor = processor
        self.config = generation_config
        self.seed = seed

    def generate(self, requests: Sequence[Request], images: Sequence[bytes | None]) -> list[str]:
        tok = self.processor.tokenizer
        convs = [
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": r.prompt}, *([{"type": "image"}] if r.with_image else [])],
                }
            ]
            for r in requests
        ]
        texts = self.processor.render(convs, add_generation_prompt=True)
        pictures = [_rgb(img) for r, img in zip(requests, images, strict=True) if r.with_image and img is not None]
        texts, vision = self.processor.expand(texts, pictures, do_resize=True)
        enc = tok.pad(
            [{"input_ids": tok(t, add_special_tokens=False)["input_ids"]} for t in texts],
            padding=True,
            padding_side="left",
            return_tensors="pt",
        )
        inputs = {
            "input_ids": enc["input_ids"],
            "attention_mask": enc["attention_mask"],
            **vision,
            "mm_token_type_ids": self.processor.mm_token_type_ids(enc["input_ids"]),
        }
        seed = (
            None
            if self.seed is None
            else generating.batch_seed(
                self.seed, [r.prompt.encode() + b"\0" + (img or b"") for r, img in zip(requests, images, strict=True)]
            )
        )
        rows = generating.generate_new_ids(self.model, inputs, seed=seed, generation_config=self.config)
        return generating.decode(tok, rows, skip_special_tokens=True)


class EmbedRLTCoT:
    """A `protocol.ReasoningEncoder`: T-CoT from the reasoner on both sides, embedded by the Embed-RL recipe. The
    reasoner is loaded on the first `generate` only (a run whose T-CoTs are all stored never loads it)."""

    def __init__(
        self,
        embedder: TCoTEmbedder,
        make_generator: Callable[[], TCoTGenerator],
        spec: GenerationSpec,
        *,
        label: str = "embed-rl-tcot",
    ) -> None:
        self.embedder = embedder
        self.make_generator = make_generator
        self.generation = spec
        self.label = label
        self.dim = embedder.dim
        self._generator: TCoTGenerator | None = None

    def generate(self, batch: Sequence[ModelInput], role: str) -> list[Generation]:
        requests = [request(item, role) for item in batch]
        todo = [i for i, r in enumerate(requests) if r is not None]
        texts: dict[int, str] = {}
        if todo:
            if self._generator is None:
                self._generator = self.make_generator()
            wanted = [r for r in requests if r is not None]
            out = self._generator.generate(wanted, [batch[i].image for i in todo])
            texts = dict(zip(todo, out, strict=True))
        result = []
        for i, item in enumerate(batch):
            if i not in texts:
                result.append(Generation("", None, NO_REQUEST))
                continue
            result.append(Generation(texts[i], None, parse_tcot(texts[i], item.image).note))
        return result

    def encode(self, batch: Sequence[ModelInput], generations: Sequence[Generation] | None, role: str) -> np.ndarray:
        if generations is None:
            raise TriadError(f"model {self.label}: T-CoT is generated on both sides; no generations for {role}s")
        items = [
            ReasonedInput(item.text, item.image, item.instruction, parse_tcot(g.text, item.image))
            for item, g in zip(batch, generations, strict=True)
        ]
        return self.embedder.encode(items, role)
