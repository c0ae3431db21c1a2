"""Holds every setting of one `triad run` in `RunConfig`, and the default cache folders it falls back on."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from model_adapters.planning import inputs
from model_adapters.vectors import checks
from triad_dataset.contract.errors import TriadError, output_folder


@dataclass
class RunConfig:
    """Every setting of one run, each named as the `triad run` option it comes from.

    `model` is a registry name, a Hub id ORG/NAME or a local folder. It is None when `encoder` gives your own model:
    an object satisfying the Encoder protocol, or a "module:factory" string. `name`, `revision` and `sees_images`
    describe your own model.
    """

    model: str | None
    data: str
    out: str
    configs: str | Sequence[str] = "all"
    benchmark: str | None = None  # "triad" or "ark", by default the folder's audit.json says
    variant: str = inputs.FULL
    rerank: str | None = None
    rerank_top: int | None = None  # by default 30 on TRIAD, 50 on ARK
    batch_size: int | None = None  # by default the registry entry's max batch
    limit: int | None = None  # first N queries per config
    cache_dir: str | None = None  # by default $TRIAD_CACHE or ~/.cache/triad/embeddings
    no_cache: bool = False
    model_path: str | None = None
    rerank_model_path: str | None = None
    device: str | None = None
    dtype: str | None = None
    backend: str = "torch"  # what runs the embedder's forward: "torch", or "onnx" on the CPU, families.onnx_text
    rerank_backend: str = "torch"  # the same for the reranker, with families.onnx_rerank
    validate: bool = True
    skip_bad_images: bool = False
    rewrites: str | None = None  # ARK: JSON Lines of rewritten queries
    captions: str | None = None  # ARK text-space run: a `triad caption` folder, read by planning.textspace
    seed: int = 0  # bootstrap seed
    quiet: bool = False
    encoder: Any = None  # your own Encoder object or "module:factory", with `model` None
    reranker: Any = None  # your own Reranker object or "module:factory", instead of `rerank`
    name: str | None = None  # the name results are shown under, by default the registry name, folder, Hub id or class
    revision: str | None = None  # the Hub commit to pin, or your own model's version, which caches its vectors
    recipe: str | None = None  # the input recipe of a folder or Hub id by name, by default detected
    rerank_recipe: str | None = None  # the same for the reranker
    sees_images: bool | None = None  # your own encoder: False leaves images out of its inputs, by default True
    cache_check: int = checks.SAMPLE_SIZE  # cached items re-encoded to detect a changed model, 0 for no check
    offline: bool = False  # API models read only their response cache, and a miss stops the run
    api_cache: str | None = None  # the API response cache, by default $TRIAD_API_CACHE or ~/.cache/triad/api

    def check_counts(self) -> None:
        """Refuse --limit, --batch-size or --rerank-top below 1, naming the flag."""
        for flag, value in (
            ("--limit", self.limit),
            ("--batch-size", self.batch_size),
            ("--rerank-top", self.rerank_top),
        ):
            if value is not None and value < 1:
                raise TriadError(f"{flag} must be at least 1, got {value}")

    def check_folders(self) -> None:
        """Refuse an `out`, cache folder or API cache that is a file, or lies under one, naming the option."""
        output_folder(self.out, "--out")
        if not self.no_cache:
            output_folder(self.cache_root, "--cache-dir" if self.cache_dir else "the embedding cache ($TRIAD_CACHE)")
        if self.api_cache:
            output_folder(self.api_cache, "--api-cache")

    @property
    def cache_root(self) -> str:
        """The embedding cache folder: `cache_dir`, else `default_cache_dir()`."""
        return self.cache_dir or default_cache_dir()


def default_cache_dir() -> str:
    """Return the embedding cache folder: $TRIAD_CACHE, else triad/embeddings under $XDG_CACHE_HOME or ~/.cache."""
    return os.environ.get("TRIAD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "embeddings"
    )


def default_api_cache() -> str:
    """Return the API response cache folder: $TRIAD_API_CACHE, else triad/api under $XDG_CACHE_HOME or ~/.cache."""
    return os.environ.get("TRIAD_API_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triad", "api"
    )
