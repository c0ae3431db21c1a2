"""From dataset rows to model inputs: the query-side input variants and the exact bytes that identify an input.

Everything a model sees is built here, once:
- queries come straight from the rows (`query_text` is already serialized per docs/protocol.md §3; `query_image`; `instruction`);
- candidates are corpus rows (`text` + `image`), never given an instruction (paper B.3);
- models without an instruction field receive `join_instruction(instruction, text)` = "{instruction} {text}";
- the input variants of the paper's ablations (D.1) change the query side only.

Input variants (query side only; candidates are unchanged, paper D.1):

| variant | text | image | benchmark instruction |
|---|---|---|---|
| `full` | `query_text` | `query_image` | kept |
| `text_only` | `query_text` without the reference product part: constraints/state/same queries keep only what follows `"Reference product info: {ref}. "` (i.e. `"User query: ..."` / `"User conversation: ..."`); other queries keep their text | dropped | kept |
| `text_refmeta` | `query_text` (reference product text restored) | dropped | kept |
| `image_only` | `""` | `query_image` (configs whose queries have no image are refused) | dropped |
| `last_turn_only` | state configs only: `"Reference product info: {ref}. User conversation: [Round 1] User: {last turn}"` | kept | kept |

>>> join_instruction("Retrieve images.", "dog. a domestic animal")
'Retrieve images. dog. a domestic animal'
>>> join_instruction(None, "text")
'text'
>>> strip_reference("Reference product info: brand: Audi, year: 2012. User query: make it red")
'User query: make it red'
>>> last_turn_text("Reference product info: brand: Audi. User conversation: [Round 1] User: red [Round 2] User: blue", ["red", "blue"])
'Reference product info: brand: Audi. User conversation: [Round 1] User: blue'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from model_adapters.protocol import ModelInput
from triad_dataset.contract.errors import TriadError
from triad_dataset.contract.names import STATE_CONFIGS, STATE_QUERY_PREFIX, STATE_TURN_TEMPLATE

FULL: Final = "full"
TEXT_ONLY: Final = "text_only"
TEXT_REFMETA: Final = "text_refmeta"
IMAGE_ONLY: Final = "image_only"
LAST_TURN_ONLY: Final = "last_turn_only"
VARIANTS: Final = (FULL, TEXT_ONLY, TEXT_REFMETA, IMAGE_ONLY, LAST_TURN_ONLY)
# Variants that make sense for ARK queries (no reference metadata, no dialogue).
ARK_VARIANTS: Final = (FULL, TEXT_ONLY, IMAGE_ONLY)

# How an instruction reaches a model without an instruction field (paper B.3: "prepend ... as a plain-text prefix").
INSTRUCTION_JOIN: Final = "{instruction} {text}"
# The reference part of a constraints/state/same query ends where the user's part begins (docs/protocol.md §3 templates).
REFERENCE_PREFIX: Final = STATE_QUERY_PREFIX.split("{reference_attributes}")[0]  # "Reference product info: "
_USER_MARKERS: Final = (". User query: ", ". User conversation: ")

QUERY: Final = "query"
CANDIDATE: Final = "candidate"


def join_instruction(instruction: str | None, text: str) -> str:
    """The text a model without an instruction field receives (paper B.3)."""
    if not instruction:
        return text
    if not text:
        return instruction
    return INSTRUCTION_JOIN.format(instruction=instruction, text=text)


ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """The text with A-Z lower-cased and every other character kept, as big_vision's `lower` op does (TensorFlow's
    `tf.strings.lower` with its default encoding '', i.e. ASCII), the one SigLIP 2's authors apply.

    >>> ascii_lower("Éclair IN Paris")
    'Éclair in paris'
    """
    return text.translate(ASCII_LOWER)


def _split_reference(text: str) -> tuple[str, str] | None:
    """(reference attributes, user part starting at "User ...") or None when the text has no reference part."""
    if not text.startswith(REFERENCE_PREFIX):
        return None
    cut = min((text.find(m) for m in _USER_MARKERS if m in text), default=-1)
    if cut < 0:
        return None
    return text[len(REFERENCE_PREFIX) : cut], text[cut + 2 :]


def strip_reference(text: str) -> str:
    """`query_text` without its "Reference product info: ... . " prefix (the text_only variant)."""
    parts = _split_reference(text)
    return text if parts is None else parts[1]


def last_turn_text(text: str, turns: list[str]) -> str:
    """The state query with its history replaced by the final turn, as a one-round conversation (paper D.1.1)."""
    parts = _split_reference(text)
    if parts is None or not turns:
        raise ValueError("last_turn_only needs a state query with a reference part and turns")
    prefix = STATE_QUERY_PREFIX.format(reference_attributes=parts[0])
    return prefix + STATE_TURN_TEMPLATE.format(index=1, turn=turns[-1])


def image_bytes(value: Any) -> bytes | None:
    """The bytes of a datasets `Image()` value ({"bytes", "path"}), or None."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, Mapping):
        data = value.get("bytes")
        if data is None and value.get("path"):
            with open(value["path"], "rb") as handle:
                return handle.read()
        return None if data is None else bytes(data)
    raise ValueError(f"unsupported image value of type {type(value).__name__}")


def check_variant(variant: str, config: str, *, benchmark: str = "triad", has_images: bool = True) -> None:
    """Refuse a variant that does not apply to a config, naming the valid choices."""
    valid = VARIANTS if benchmark == "triad" else ARK_VARIANTS
    if variant not in valid:
        raise TriadError(f"unknown input variant {variant!r} for {benchmark}; valid: {', '.join(valid)}")
    if variant == LAST_TURN_ONLY and config not in STATE_CONFIGS:
        raise TriadError(f"{config}: variant last_turn_only applies to state configs only ({', '.join(STATE_CONFIGS)})")
    if variant == IMAGE_ONLY and not has_images:
        raise TriadError(f"{config}: variant image_only needs query images, and this config's queries have none")


def query_input(row: Mapping[str, Any], variant: str = FULL, *, text: str | None = None) -> ModelInput:
    """The model input of one query row under an input variant (`text` overrides `query_text`, e.g. a rewrite)."""
    qtext = (row.get("query_text") or "") if text is None else text
    image = image_bytes(row.get("query_image"))
    instruction = row.get("instruction") or None
    if variant == FULL:
        return ModelInput(qtext, image, instruction)
    if variant == TEXT_ONLY:
        return ModelInput(strip_reference(qtext), None, instruction)
    if variant == TEXT_REFMETA:
        return ModelInput(qtext, None, instruction)
    if variant == IMAGE_ONLY:
        if image is None:
            raise TriadError(f"query {row.get('query_id')}: variant image_only but the query has no image")
        return ModelInput("", image, None)
    if variant == LAST_TURN_ONLY:
        return ModelInput(last_turn_text(qtext, list(row.get("turns") or [])), image, instruction)
    raise TriadError(f"unknown input variant {variant!r}; valid: {', '.join(VARIANTS)}")


def candidate_input(row: Mapping[str, Any]) -> ModelInput:
    """The model input of one corpus row: its serialized `text` and its `image` (paper B.3), no instruction."""
    return ModelInput(row.get("text") or "", image_bytes(row.get("image")), None)


def input_key(role: str, item: ModelInput) -> str:
    """sha256 hex of the exact serialized input (role, text, image bytes, instruction): the cache key of an item.

    >>> input_key("query", ModelInput("a")) == input_key("query", ModelInput("a"))
    True
    >>> input_key("query", ModelInput("a")) == input_key("candidate", ModelInput("a"))
    False
    """
    image_hash = hashlib.sha256(item.image).hexdigest() if item.image is not None else None
    return key_from_parts(role, item.text, image_hash, item.instruction)


# json.dumps(..., ensure_ascii=False, separators=(",", ":")) without building an encoder per call
_KEY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def key_from_parts(role: str, text: str, image_hash: str | None, instruction: str | None) -> str:
    """`input_key` from the image's sha256 hex instead of its bytes (the plan hashes images while streaming them).

    >>> key_from_parts("query", "a", None, None) == input_key("query", ModelInput("a"))
    True
    """
    payload = _KEY_JSON.encode([role, text, image_hash, instruction])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
