"""`RunConfig`: every setting of one `triad run`, and the default cache folders it falls back on."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from model_adapters.planning import inputs
from model_adapters.vectors import checks
from triad_dataset.contract.errors import TriadError


@dataclass
class RunConfig:
    """Every setting of one run.

    `model`: a registry name, Hub id ORG/NAME or local folder; or None with `encoder` given (an object satisfying
    the Encoder protocol, or "module:factory"). `name`, `revision`, `sees_images` describe your own model."""

    model: str | None
    data: str
    out: str
    configs: str | Sequence[str] = "all"
    benchmark: str | None = None  # "triad" | "ark"; default: from the folder's audit.json
    variant: str = inputs.FULL
    rerank: str | None = None
    rerank_top: int | None = None  # default 30 (TRIAD) / 50 (ARK)
    batch_size: int | None = None  # default: the registry entry's max batch
    limit: int | None = None  # first N queries per config
    cache_dir: str | None = None  # default $TRIAD_CACHE or ~/.cache/triad/embeddings
    no_cache: bool = False
    model_path: str | None = None
    rerank_model_path: str | None = None
    device: str | None = None
    dtype: str | None = None
    backend: str = (
        "torch"  # what runs the embedder's forward: "torch", or "onnx" (ONNX Runtime, CPU; families.onnx_text)
    )
    rerank_backend: str = "torch"  # the same for the reranker ("onnx": families.onnx_rerank)
    validate: bool = True
    skip_bad_images: bool = False
    rewrites: str | None = None  # ARK: JSON Lines of rewritten queries
    captions: str | None = None  # ARK text-space run: a `triad caption` folder (planning.textspace)
    seed: int = 0  # bootstrap seed
    quiet: bool = False
    encoder: Any = None  # your own Encoder object or "module:factory" (then `model` is None)
    reranker: Any = None  # your own Reranker object or "module:factory" (instead of `rerank`)
    name: str | None = None  # the name results are shown under (default: registry name / folder / Hub id / your class)
    revision: str | None = None  # Hub commit to pin; your own model's version (caches a Python encoder's vectors)
    recipe: str | None = None  # the input recipe of a folder / Hub id, by name (default: detected; recipes.py)
    rerank_recipe: str | None = None  # the same for the reranker
    sees_images: bool | None = None  # Python encoders: False leaves images out of their inputs (default True)
    cache_check: int = checks.SAMPLE_SIZE  # cached items re-encoded to detect a changed model (0: no check)
    offline: bool = False  # API models read only their response cache (a miss stops the run, naming how many)
    api_cache: str | None = None  # API response cache (default $TRIAD_API_CACHE or ~/.cache/triad/api)

    def check_counts(self) -> None:
        """Refuse --limit, --batch-size or --rerank-top below 1, naming the flag."""
        for flag, value in (
            ("--limit", self.limit),
            ("--batch-size", self.batch_size),
            ("--rerank-top", self.rerank_top),
        ):
            if value is not None and value < 1:
                raise TriadError(f"{flag} must be at least 1, got {value}")

    @property
    def cache_root(self) -> str:
        """The embedding cache folder: `cache_dir`, else `default_cache_dir()`."""
        return self.cache_dir or default_cache_dir()


def default_cache_dir() -> str:
    """The embedding cache: $TRIAD_CACHE, else $XDG_CACHE_HOME (or ~/.cache) / triad / embeddings."""
    return os.environ.get("TRIAD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "embeddings"
    )


def default_api_cache() -> str:
    """The API response cache: $TRIAD_API_CACHE, else $XDG_CACHE_HOME (or ~/.cache) / triad / api."""
    return os.environ.get("TRIAD_API_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "api"
    )
