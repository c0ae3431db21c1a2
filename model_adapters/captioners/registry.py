"""Lists the captioners and rewriters, one declarative entry each in the model registry's style, loaded lazily.

The ARK paper captions gallery images for its text retrievers with Qwen3-VL-8B-Instruct: paper §4.1, the prompt in
its Table 26. It checks robustness with Kimi-VL-A3B-Instruct and GLM-4.6V-Flash, H.1. It rewrites queries with
GPT-5.2, §4.3, the prompt in its Table 27. Our copy of the paper gives the titles of Tables 26 and 27 but not their
text, so the prompts below are ours, written from the paper's description and documented in docs/ark.md.
- Kimi-VL needs the Hub's remote code, since transformers has no Kimi-VL class, so it has no entry.
- GPT-5.2 is API-only: `gpt-5.2` sends the rewrite prompt to OpenAI's chat completions API through
  captioners/api.py, and `api:MODEL` any other model of an OpenAI-compatible endpoint. `qwen3-8b` is an open
  stand-in through transformers.
- `ocr` is the offline captioner that runs on any CPU: rapidocr's ONNX weights ship inside its wheel.
Installed packages add entries and families through the `triad.models` entry points.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final, Literal

from model_adapters.models import plugins
from triad_dataset.contract.errors import TriadError

# Bump when a captioner/rewriter changes what it feeds a model or how it turns the output into text.
CAPTIONER_VERSION: Final = "1"

CAPTIONER: Final = "captioner"
REWRITER: Final = "rewriter"
OCR: Final = "ocr"
VLM: Final = "vlm"
LLM: Final = "llm"
API: Final = "api"  # an OpenAI-compatible chat completions API (captioners/api.py)
GeneratorKind = Literal["captioner", "rewriter"]


@dataclass(frozen=True)
class GeneratorFamily:
    """One family of captioners and rewriters.

    Args:
        name: what entries call the family.
        module: the module whose `load(entry, path, *, device, **runtime)` builds the family's models.
    """

    name: str
    module: str


# The built-in families. Installed packages add more through `models.plugins`.
FAMILIES: Final[dict[str, GeneratorFamily]] = {
    f.name: f
    for f in (
        GeneratorFamily(OCR, "model_adapters.captioners.ocr"),
        GeneratorFamily(VLM, "model_adapters.captioners.generation"),
        GeneratorFamily(LLM, "model_adapters.captioners.generation"),
        GeneratorFamily(API, "model_adapters.captioners.api"),
    )
}
API_PREFIX: Final = "api:"  # `--rewriter api:MODEL`: MODEL through the OpenAI-compatible API (captioners/api.py)

# Our caption prompt: paper Table 26's text is not in our copy, as the module docstring says.
CAPTION_PROMPT: Final = (
    "Describe this image in detail so that it can be found by a text search. Transcribe all visible text, numbers, "
    "labels and symbols exactly, then describe the objects, diagrams, charts, layout and the relations between "
    "elements. Output only the description."
)
# Our rewrite prompt, from paper §4.3: "a semantically equivalent but more explicit form that highlights reasoning
# cues" (paper Table 27's text is not in our copy).
REWRITE_PROMPT: Final = (
    "Rewrite the following retrieval query into a semantically equivalent but more explicit form that highlights "
    "the reasoning cues needed to find the target: state implicit rules, constraints and background knowledge "
    "explicitly, keep every condition, and do not answer the query. Output only the rewritten query.\n\n"
    "Query: {query}"
)

# rapidocr settings:
# - "Det.limit_type": "max" keeps small images at their size. The default "min" upscales every image to a 736-pixel
#   short side, which is slow and no better on rendered text.
# - "Global.use_cls": False skips the text-orientation classifier. ARK's rendered text is upright, and on the mini
#   calendar pages the classifier turned "Tu" into "n".
# - "normalize": "NFKC" turns the full-width digits that the recogniser sometimes returns, such as "１", into ASCII.
#   They were seen on 260 of the 520 mini electronics images.
# - The other values are rapidocr's defaults, written out so that they are part of the identity.
OCR_OPTIONS: Final = {
    "Det.limit_type": "max",
    "Det.limit_side_len": 736,
    "Global.text_score": 0.5,
    "Global.use_cls": False,
    "joiner": " ",
    "normalize": "NFKC",
}


@dataclass(frozen=True)
class GeneratorEntry:
    """One captioner or rewriter. `hub_id` is a Hub repo id or a local directory, and `revision` pins it."""

    name: str
    kind: GeneratorKind
    family: str
    hub_id: str
    revision: str = "main"
    dtype: str = "float32"
    prompt: str = ""
    max_new_tokens: int = 512
    max_batch: int = 8
    options: dict[str, Any] = field(default_factory=dict)
    random_init: bool = False
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


ENTRIES: Final[tuple[GeneratorEntry, ...]] = (
    GeneratorEntry(
        "ocr",
        CAPTIONER,
        OCR,
        "package:rapidocr",
        revision="installed",
        max_batch=8,
        options=dict(OCR_OPTIONS),
        description="rapidocr PP-OCR detection + recognition on onnxruntime (CPU, offline): the "
        "recognised lines joined in reading order; text only, no description of the picture",
    ),
    GeneratorEntry(
        "qwen3-vl-8b-instruct",
        CAPTIONER,
        VLM,
        "Qwen/Qwen3-VL-8B-Instruct",
        dtype="bfloat16",
        prompt=CAPTION_PROMPT,
        max_batch=4,
        description="the paper's captioner (§4.1), greedy decoding",
    ),
    GeneratorEntry(
        "glm-4.6v-flash",
        CAPTIONER,
        VLM,
        "zai-org/GLM-4.6V-Flash",
        dtype="bfloat16",
        prompt=CAPTION_PROMPT,
        max_batch=4,
        description="the paper's H.1 non-Qwen captioner, greedy",
    ),
    GeneratorEntry(
        "qwen3-8b",
        REWRITER,
        LLM,
        "Qwen/Qwen3-8B",
        dtype="bfloat16",
        prompt=REWRITE_PROMPT,
        max_new_tokens=256,
        max_batch=8,
        options={"enable_thinking": False},
        description="open stand-in for the paper's GPT-5.2 rewriter (§4.3), greedy, thinking off",
    ),
    GeneratorEntry(
        "gpt-5.2",
        REWRITER,
        API,
        "https://api.openai.com/v1",
        revision="gpt-5.2",
        prompt=REWRITE_PROMPT,
        max_new_tokens=0,
        max_batch=16,
        options={"provider": "openai", "model": "gpt-5.2"},
        description="the paper's rewriter (§4.3), OpenAI chat completions API ($OPENAI_API_KEY); the API's "
        "default decoding (none given in the paper); not reproducible without provider access",
    ),
)
REGISTRY: Final[dict[str, GeneratorEntry]] = {e.name: e for e in ENTRIES}


def plugin_rows() -> tuple[dict[str, GeneratorEntry], dict[str, GeneratorFamily]]:
    """Return the captioners, rewriters and families that the `triad.models` entry points add, each by name.

    A name already taken is refused.
    """
    entries: dict[str, GeneratorEntry] = {}
    families: dict[str, GeneratorFamily] = {}
    for row in plugins.rows():
        value = row.value
        if isinstance(value, (GeneratorEntry, GeneratorFamily)):
            table: dict[str, Any] = entries if isinstance(value, GeneratorEntry) else families
            if value.name in (REGISTRY if table is entries else FAMILIES) or value.name in table:
                raise TriadError(f"{row.where}: name {value.name!r} is already taken; choose another name")
            table[value.name] = value
    return entries, families


def _entries() -> dict[str, GeneratorEntry]:
    """Map the built-in entries and the installed ones by name."""
    return {**REGISTRY, **plugin_rows()[0]}


def get_entry(name: str, kind: GeneratorKind = CAPTIONER) -> GeneratorEntry:
    """Return the entry named `name` of `kind`. An unknown name lists the valid ones.

    >>> get_entry("ocr").options["Det.limit_type"]
    'max'
    """
    if kind == REWRITER and name.startswith(API_PREFIX) and len(name) > len(API_PREFIX):
        return _api_rewriter(name[len(API_PREFIX) :])
    entries = _entries()
    entry = entries.get(name)
    if entry is not None and entry.family == API:
        from model_adapters.captioners import api

        entry = api.resolved(entry)
    if entry is None or entry.kind != kind:
        valid = sorted(n for n, e in entries.items() if e.kind == kind) + (
            [API_PREFIX + "MODEL"] if kind == REWRITER else []
        )
        raise TriadError(f"unknown {kind} {name!r}; valid: {', '.join(valid)}")
    return entry


def _api_rewriter(model: str) -> GeneratorEntry:
    """Resolve `api:MODEL`: the registered API rewriter of that model, else MODEL through an OpenAI-compatible API.

    `api:gpt-5.2` is `gpt-5.2`. Another model goes to $OPENAI_BASE_URL, or OpenAI's endpoint, with the rewrite prompt
    and the API's defaults.
    """
    from model_adapters.captioners import api

    for entry in ENTRIES:
        if entry.family == API and entry.options.get("model") == model:
            return api.resolved(entry)
    return api.resolved(
        GeneratorEntry(
            API_PREFIX + model,
            REWRITER,
            API,
            "",
            revision=model,
            prompt=REWRITE_PROMPT,
            max_new_tokens=0,
            max_batch=16,
            options={"provider": "openai", "model": model},
            description=f"{model} through an OpenAI-compatible chat completions API",
        )
    )


def with_options(entry: GeneratorEntry, settings: list[str] | None) -> GeneratorEntry:
    """Return the entry with `KEY=VALUE` overrides, each value parsed as JSON when it parses, else kept as a string.

    `max_new_tokens`, `prompt` and `max_batch` override the fields of the same name. Other keys go into `options`.

    >>> with_options(get_entry("ocr"), ["Global.text_score=0.8"]).options["Global.text_score"]
    0.8
    """
    import json

    options = dict(entry.options)
    fields: dict[str, Any] = {}
    for setting in settings or []:
        key, sep, raw = setting.partition("=")
        if not sep or not key:
            raise TriadError(f"--set {setting!r}: expected KEY=VALUE")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if key in ("max_new_tokens", "prompt", "max_batch"):
            fields[key] = value
        else:
            options[key] = value
    return replace(entry, options=options, **fields)


def identity(entry: GeneratorEntry, model_path: str | None = None) -> dict[str, Any]:
    """Return everything that changes a caption or rewrite: a changed setting is another captioner and cache."""
    import os

    out = {
        "name": entry.name,
        "kind": entry.kind,
        "family": entry.family,
        "model_id": os.path.abspath(model_path) if model_path else entry.hub_id,
        "revision": entry.revision,
        "dtype": entry.dtype,
        "prompt": entry.prompt,
        "max_new_tokens": entry.max_new_tokens,
        "options": dict(sorted(entry.options.items())),
        "version": CAPTIONER_VERSION,
    }
    if entry.family == OCR:
        from importlib.metadata import version

        out["revision"] = f"rapidocr=={version('rapidocr')},onnxruntime=={version('onnxruntime')}"
        out["max_new_tokens"] = None
    return out


def load(entry: GeneratorEntry, *, model_path: str | None = None, device: str = "cpu", **runtime: Any) -> Any:
    """Load the entry's captioner, a `Captioner`, or its rewriter, a `Rewriter`.

    Args:
        entry: the captioner or rewriter.
        model_path: a local folder loaded instead of the entry's Hub id.
        device: where the weights go.
        runtime: an API entry's response store and `offline`, from `triad rewrite`.
    """
    family = FAMILIES.get(entry.family) or plugin_rows()[1].get(entry.family)
    if family is None:
        raise TriadError(f"{entry.name}: unknown captioner family {entry.family!r}; valid: {', '.join(FAMILIES)}")
    module = importlib.import_module(family.module)
    return module.load(entry, model_path or entry.hub_id, device=device, **runtime)
