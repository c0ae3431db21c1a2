"""Family detection: which model family (`model_adapters/families/`) can load a folder or Hub repository, read from
its configuration files only (no weights are loaded):

- `modules.json` (a sentence-transformers model)        -> `sentence_transformer` (text only)
- `config.json` `model_type` clip / siglip / siglip2     -> `dual_tower` (text + image towers, fused 1:1, paper B.2.1)
- `config.json` `model_type` qwen2_vl / qwen2_5_vl / qwen3_vl -> `vlm` (`--model`) or `reranker` (`--rerank`)

The family also fixes the loading options a registry entry would give (dual towers: the text limit from the text
config's position table, SigLIP's `padding="max_length"`). Anything else is refused with what was found and the
`--family` values, which override detection.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from model_adapters.models.registry import DUAL_TOWER, RERANKER, SENTENCE_TRANSFORMER, VLM
from triad_dataset.contract.errors import TriadError

ST_MODULES: Final = "modules.json"
CONFIG: Final = "config.json"
DUAL_TOWER_TYPES: Final = ("clip", "siglip", "siglip2")
VLM_TYPES: Final = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")
FAMILY_CHOICES: Final = {"embedder": (DUAL_TOWER, SENTENCE_TRANSFORMER, VLM), "reranker": (RERANKER,)}
DEFAULT_TEXT_LIMIT: Final = {"clip": 77, "siglip": 64, "siglip2": 64}

# A reader of one file of the model: the local path of that file, or None when the model has no such file.
FileReader = Callable[[str], "str | None"]


def _config(read: FileReader) -> dict[str, Any]:
    path = read(CONFIG)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise TriadError(f"{path}: unreadable model config ({exc})") from exc


def _dtype(config: dict[str, Any]) -> str:
    value = config.get("dtype") or config.get("torch_dtype")
    return value if value in ("float32", "float16", "bfloat16") else "float32"


def _options(family: str, config: dict[str, Any]) -> dict[str, Any]:
    model_type = config.get("model_type", "")
    if family != DUAL_TOWER or model_type not in DEFAULT_TEXT_LIMIT:
        return {}
    text = config.get("text_config") or {}
    options: dict[str, Any] = {"max_length": int(text.get("max_position_embeddings") or DEFAULT_TEXT_LIMIT[model_type])}
    if model_type.startswith("siglip"):
        options["padding"] = "max_length"  # SigLIP's text tower is trained on max-length padded text
    if model_type == "siglip2":
        options["lowercase"] = True  # as the registry's siglip2 entry (the model card lower-cases its texts)
    return options


def found(read: FileReader) -> str:
    """What the configuration files say, for error messages."""
    config = _config(read)
    if not config:
        parts = ["no config.json"]
    else:
        parts = [f"config.json model_type {config.get('model_type')!r}",
                 f"architectures {', '.join(config.get('architectures') or []) or 'none'}"]
    parts.append("modules.json" if read(ST_MODULES) else "no modules.json")
    return "; ".join(parts)


def detect(read: FileReader, *, where: str, kind: str = "embedder", family: str | None = None
           ) -> tuple[str, dict[str, Any], str]:
    """(family, loading options, dtype) for the model whose files `read` finds; `family` overrides detection."""
    choices = FAMILY_CHOICES[kind]
    config = _config(read)
    if family is not None:
        if family not in choices:
            raise TriadError(f"--family {family!r}: not one of the {kind} families ({', '.join(choices)})")
        return family, _options(family, config), _dtype(config)
    model_type = config.get("model_type", "")
    detected = None
    if kind == "embedder" and read(ST_MODULES):
        detected = SENTENCE_TRANSFORMER
    elif kind == "embedder" and model_type in DUAL_TOWER_TYPES:
        detected = DUAL_TOWER
    elif model_type in VLM_TYPES:
        detected = VLM if kind == "embedder" else RERANKER
    if detected is None:
        raise TriadError(f"{where}: no {kind} family can load this model (found: {found(read)}); pass --family "
                         f"({', '.join(choices)}) or wrap it in your own encoder (--encoder module:factory)")
    return detected, _options(detected, config), _dtype(config)
