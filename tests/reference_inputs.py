"""The fixed inputs on which the official implementations were run (tests/fixtures/*/NOTE.md) and our adapters are
compared with them. Plain data + deterministic images: imported both by the tests and by the scratch scripts that
ran the authors' code, so both sides see the same bytes.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from triad_dataset.contract import names

C2I = names.C2I_INSTRUCTION
I2C = names.I2C_INSTRUCTION
CONSTRAINT_QUERY = (
    "Reference product info: gender: Women, brand: Nike, year: 2019, season: Summer. "
    "User query: the same shoe but in blue with a lower heel"
)
STATE_QUERY = (
    "Reference product info: brand: Audi, year: 2012. User conversation: [Round 1] User: I want a "
    "red one [Round 2] User: actually make it a convertible [Round 3] User: and newer than 2015"
)
CANDIDATE = "Product info: gender: Women, brand: Nike, year: 2020, season: Summer"
LONG_TEXT = "Product info: " + ", ".join(f"attribute {i}: value {i * 7 % 13}" for i in range(40))


def image(kind: str) -> bytes:
    """PNG bytes of a deterministic test image: 'small' (20x30, below min_pixels), 'wide' (200x90), 'rgba'
    (48x40 with transparent pixels), 'large' (1500x1300, above Qwen3-VL's max_pixels)."""
    from PIL import Image

    sizes = {"small": (30, 20), "wide": (200, 90), "rgba": (48, 40), "large": (1500, 1300), "square": (64, 64)}
    width, height = sizes[kind]
    y, x = np.mgrid[0:height, 0:width]
    rgb = np.stack([(x * 7 + y * 3) % 256, (x * 2 + y * 11) % 256, (x * y) % 256], axis=-1).astype(np.uint8)
    if kind == "rgba":
        alpha = np.where((x + y) % 3 == 0, 0, 255).astype(np.uint8)[..., None]
        img = Image.fromarray(np.concatenate([rgb, alpha], axis=-1), "RGBA")
    else:
        img = Image.fromarray(rgb, "RGB")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


# (text, image kind or None, instruction or None): TRIAD's cases
EMBED_INPUTS: list[tuple[str, str | None, str | None]] = [
    ("leaf 17. a small perching bird", None, C2I),  # abstraction C2I query: text + instruction
    ("sparrow", "wide", I2C),  # abstraction I2C query: image + text + instruction
    ("", "small", None),  # image only (below min_pixels: upscaled)
    (CONSTRAINT_QUERY, "square", None),  # constraints query: no benchmark instruction, outer wrapper kept
    (STATE_QUERY, "wide", None),  # multi-turn state query
    (CANDIDATE, "rgba", None),  # candidate with a transparent image
    (CANDIDATE, None, None),  # text-only candidate
    ("sparrow", None, "Retrieve images of this concept"),  # instruction without final punctuation
    ("", None, None),  # nothing at all: the official code sends "NULL"
]
# With a small max_length (the official constructor's `max_length`), so that the texts get truncated.
TRUNCATION_MAX_LENGTH = 96
TRUNCATION_INPUTS: list[tuple[str, str | None, str | None]] = [
    (LONG_TEXT, None, None),
    (LONG_TEXT, "small", C2I),
]
RESIZE_IMAGES = ["small", "wide", "rgba", "large", "square"]

# Reranker: (query text, query image, instruction) x (candidate text, candidate image)
RERANK_QUERY: list[tuple[str, str | None, str | None]] = [
    (CONSTRAINT_QUERY, "square", None),
    ("leaf 17. a small perching bird", None, C2I),
    (STATE_QUERY, "wide", None),
]
RERANK_DOCS: list[tuple[str, str | None]] = [
    (CANDIDATE, "rgba"),
    ("sparrow. a small bird", None),
    ("", "small"),
]
RERANK_TRUNCATION_MAX_LENGTH = 120
RERANK_TRUNCATION_PAIR = ((LONG_TEXT, "small", None), (LONG_TEXT, "square"))


def as_embed_dict(item: tuple[str, str | None, str | None]) -> dict[str, Any]:
    """The official embedder's input dict for one item (PIL image, as its `process` accepts)."""
    from PIL import Image

    text, kind, instruction = item
    out: dict[str, Any] = {}
    if text:
        out["text"] = text
    if kind:
        out["image"] = Image.open(io.BytesIO(image(kind)))
    if instruction:
        out["instruction"] = instruction
    return out


def collapse_image_pads(text: str) -> str:
    """A decoded prompt with each run of image tokens written once with its count (fixtures stay readable).

    >>> collapse_image_pads("<|vision_start|><|image_pad|><|image_pad|><|vision_end|>a")
    '<|vision_start|><|image_pad|>x2<|vision_end|>a'
    """
    import re

    return re.sub(r"(?:<\|image_pad\|>)+", lambda m: f"<|image_pad|>x{m.group(0).count('<|image_pad|>')}", text)


# VLM2Vec's own code cannot encode an input with neither text nor image (zero tokens), so it is left out there.
VLM2VEC_INPUTS = [item for item in EMBED_INPUTS if item[0] or item[1]]

# --- text embedders and the text cross-encoder (ARK's caption-then-embed track, §4.1) --------------------------
CAPTION = (
    "A wiring diagram.\nR1 10k, R2 4.7k; V = 5 V"  # `textspace.join_caption(text, caption)`: text, newline, caption
)
ARK_QUERY = "Which gallery image shows the circuit whose output is high only when both inputs are high?"
# (text, instruction or None): queries of both benchmarks as a text model sees them
TEXT_QUERIES: list[tuple[str, str | None]] = [
    ("leaf 17. a small perching bird", C2I),  # abstraction C2I query: the benchmark instruction
    ("sparrow\nA small brown bird on a branch", I2C),  # I2C query in text space: its text and its image's caption
    (CONSTRAINT_QUERY, None),  # constraints: no benchmark instruction, the model's own query wrapper only
    (STATE_QUERY, None),
    (ARK_QUERY, None),  # ARK queries carry no instruction
    ("sparrow", "Retrieve images of this concept"),  # instruction without final punctuation
    ("Café au lait – 東京 2024", None),  # characters outside the tiny vocabularies
    ("", None),  # an empty query
]
TEXT_DOCS: list[str] = [
    CANDIDATE,
    "sparrow. a small bird",
    CAPTION,  # a captioned gallery item
    "October 2024",  # an image-only gallery item: its caption alone
    "two  spaces\tand a tab",
    "",  # an item whose image could not be captioned
]
TEXT_TRUNCATION_MAX_LENGTH = 96  # the encoders' max_length set this small so that LONG_TEXT is cut
TEXT_TRUNCATION_INPUTS: list[tuple[str, str | None]] = [(LONG_TEXT, None), (LONG_TEXT, C2I)]
# Cross-encoder pairs: each of these queries with each of these documents, plus one pair cut at a small max_length.
TEXT_RERANK_QUERIES = TEXT_QUERIES[:5]
TEXT_RERANK_DOCS = TEXT_DOCS[:4]
TEXT_RERANK_TRUNCATION_MAX_LENGTH = 120
TEXT_RERANK_TRUNCATION_PAIR = ((LONG_TEXT, None), LONG_TEXT)


def joined(text: str, instruction: str | None) -> str:
    """The paper's rule for a model without an instruction field (B.3): the instruction prepended with a space
    (written here independently of `model_adapters.planning.inputs.join_instruction`)."""
    if instruction and text:
        return f"{instruction} {text}"
    return instruction or text


# VLM2Vec-V1 resizes every image to 1344x1344 (980x980 after the processor: 4900 vision patches); batches of at most
# one image keep the vendored vision tower's attention within memory (indices into VLM2VEC_INPUTS, all covered).
VLM2VEC_V1_BATCHES = [[0, 1], [2, 6], [3, 7], [4], [5]]
